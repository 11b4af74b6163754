"""Fixtures for the offline-repair tests: both workspace backends and helpers to write
candidates. The real Docker engine and the example images come from the SWE tests'
session fixtures (``tests/swe/conftest.py``).

Docker-backed tests are marked ``docker``; without root or Docker they skip (under
CI=true they fail), as in ``tests/swe``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import SWEInstance

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
