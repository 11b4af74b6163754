"""Fixtures for the offline-repair tests: the real Docker engine and example images (the
SWE integration tests' own session fixtures, loaded from their conftest so both suites set
Docker up the same way), the bubblewrap backend, and helpers to write candidates.

Docker-backed tests are marked ``docker``; without root or Docker they skip (under
CI=true they fail), as in ``tests/integration/swe``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType

import pytest

from atlas_actors.environments.swe import SWEEnvironment
from atlas_actors.environments.swe_instances import SWEInstance


def _load_swe_conftest() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "integration" / "swe" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_atlas_swe_integration_conftest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_swe = _load_swe_conftest()
docker_host = _swe.docker_host
examples = _swe.examples
make_patch = _swe.make_patch

EXAMPLES = ("datecalc", "exprcalc", "intervals", "textkit")


@pytest.fixture(params=["docker", "bubblewrap"])
def backend(request: pytest.FixtureRequest) -> str:
    """Both workspace backends (docker sets the engine up; bubblewrap needs a pids cgroup
    to contain fork bombs, so without one it skips)."""
    if request.param == "docker":
        request.getfixturevalue("docker_host")
    else:
        from atlas_actors.sandbox import _bwrap

        if _bwrap._pids_cgroup_base() is None:
            pytest.skip("no writable pids cgroup: bubblewrap cannot cap processes as root")
    return str(request.param)


@pytest.fixture
def env_factory(
    examples: dict[str, SWEInstance],
) -> Callable[[str, str], AsyncIterator[SWEEnvironment]]:
    """``async with env_factory(name, backend) as env``: an environment reset to example
    ``name``, closed afterwards."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def make(name: str, backend: str) -> AsyncIterator[SWEEnvironment]:
        async with SWEEnvironment(backend=backend, eval_timeout_s=120) as env:  # type: ignore[arg-type]
            await env.reset(examples[name].to_task())
            yield env

    return make  # type: ignore[return-value]
