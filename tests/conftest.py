"""Shared fixtures: one local Ray instance for the whole test session (under
pytest-xdist, as ``scripts/test`` runs the suite, one per worker process)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own user cache folder: the experience memory the CLI opens by
    default (and other caches) never carries over between tests or from the machine."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    """A local Ray instance shared by every test of this process that needs one (started
    lazily)."""
    import ray

    if not ray.is_initialized():
        ray.init(
            num_cpus=max(2, os.cpu_count() or 2),
            include_dashboard=False,
            log_to_driver=False,
            ignore_reinit_error=True,
            runtime_env={"env_vars": {"PYTHONUNBUFFERED": "1"}},
        )
    yield ray
    # Left running until the interpreter exits: other session fixtures may still use it.


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``scripts/test``), the files holding ``slow`` or ``docker`` tests
    first (otherwise in their order): the workers take tests in this order as they free
    up, so the long ones start early instead of running alone at the end."""
    if not hasattr(config, "workerinput"):
        return
    heavy = {
        item.path
        for item in items
        if item.get_closest_marker("slow") or item.get_closest_marker("docker")
    }
    items.sort(key=lambda item: item.path not in heavy)
