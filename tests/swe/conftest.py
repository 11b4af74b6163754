"""Set-up for the SWE tests: a real dockerd (scripts/docker-up), the offline base image
(scripts/build-base-image) and the example instance images, once per session; for the
image tests, a private registry on 127.0.0.1 (Debian's docker-registry, started here;
see tests/swe/registry.py) holding an example image the engine does not have.

Skipped (with the reason) only when not running as root or when Docker cannot be
installed; under CI=true a missing engine fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from atlas_actors.swe.instances import SWEInstance, load_example_instances
from tests.swe.registry import LocalRegistry, free_port, push_unique_image, remove_local

ROOT = Path(__file__).resolve().parents[2]
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _unavailable(reason: str) -> None:
    if CI:
        pytest.fail(f"Docker set-up failed under CI: {reason}")
    pytest.skip(reason)


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.fixture(scope="session")
def docker_host() -> Iterator[str]:
    """DOCKER_HOST of a running engine with the base and example images built."""
    if os.geteuid() != 0:
        _unavailable("the SWE Docker tests start dockerd and need root")
    up = _run([str(ROOT / "scripts" / "docker-up")], timeout=900)
    if up.returncode != 0:
        if shutil.which("dockerd") is None:
            _unavailable(f"docker.io could not be installed: {up.stderr[-2000:]}")
        pytest.fail(f"scripts/docker-up failed:\n{up.stderr[-4000:]}")
    host = up.stdout.strip().splitlines()[-1]
    os.environ["DOCKER_HOST"] = host
    base = _run([str(ROOT / "scripts" / "build-base-image")], timeout=1800)
    if base.returncode != 0:
        pytest.fail(f"scripts/build-base-image failed:\n{base.stderr[-4000:]}")
    ex = _run(
        [sys.executable, "-m", "atlas_actors.swe.build", "build-examples"],
        timeout=900,
    )
    if ex.returncode != 0:
        pytest.fail(f"building the example images failed:\n{ex.stderr[-4000:]}")
    yield host


@pytest.fixture(scope="session")
def registry(docker_host: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    """A docker-registry on 127.0.0.1 (a free port), started for the session."""
    if shutil.which("docker-registry") is None and not Path("/usr/bin/docker-registry").exists():
        _unavailable(
            "docker-registry is not installed (ATLAS_WITH_DOCKER=1 scripts/setup installs "
            "Debian's docker-registry package)"
        )
    reg = LocalRegistry(free_port(), tmp_path_factory.mktemp("registry"))
    try:
        reg.start()
    except RuntimeError as e:
        pytest.fail(str(e))
    yield reg
    reg.stop()


TEST_IMAGE_BASE = "atlas-swe-eval/atlas-examples__textkit-1"
"""The example image the pushed test image is built on (one extra random layer)."""


@pytest.fixture(scope="session")
async def pushed_image(registry: LocalRegistry) -> AsyncIterator[str]:
    """``127.0.0.1:<port>/atlas/textkit:<nonce>`` in the registry, not on the engine."""
    name = f"{registry.host}/atlas/textkit:{os.urandom(4).hex()}"
    await push_unique_image(TEST_IMAGE_BASE, name, blob_mb=4)
    yield name
    await remove_local(name)  # whatever a test left pulled


@pytest.fixture(scope="session")
def examples() -> dict[str, SWEInstance]:
    """The example instances by short name (textkit, intervals, exprcalc, datecalc)."""
    return {i.repo.split("/")[-1]: i for i in load_example_instances()}


RUNTIME_DATA = ROOT / "tests" / "data" / "runtime"
"""Test instances beyond the examples (stored in their format): ``measures``, whose image's
install step leaves ignored build outputs (an ``*.egg-info`` and a generated
``_version.py``) and whose ``conftest.py`` imports the package."""


@pytest.fixture(scope="session")
def test_instances() -> dict[str, SWEInstance]:
    """The instances under ``tests/data/runtime`` by short name (no image needed)."""
    return {i.repo.split("/")[-1]: i for i in load_example_instances(root=RUNTIME_DATA)}


@pytest.fixture(scope="session")
def test_instance_images(docker_host: str, test_instances: dict[str, SWEInstance]) -> str:
    """Their images, built once (cached by tag on the engine)."""
    built = _run(
        [
            sys.executable,
            "-m",
            "atlas_actors.swe.build",
            "build-examples",
            "--root",
            str(RUNTIME_DATA),
        ],
        timeout=900,
    )
    if built.returncode != 0:
        pytest.fail(f"building the test instances' images failed:\n{built.stderr[-4000:]}")
    return docker_host


@pytest.fixture(scope="session")
def make_patch() -> Callable[[SWEInstance, dict[str, list[tuple[str, str]]]], str]:
    """``make_patch(instance, {path: [(old, new), ...]})`` -> a git diff (see below)."""
    return _make_patch


def _make_patch(instance: SWEInstance, edits: dict[str, list[tuple[str, str]]]) -> str:
    """A git diff against the instance's base commit: per file, (old, new) replacements;
    a file absent at base is created with the ``new`` of an ``("", new)`` edit."""
    assert instance.local_repo
    with tempfile.TemporaryDirectory() as td:
        repo = Path(td) / "repo"
        subprocess.run(
            ["git", "clone", "-q", instance.local_repo, str(repo)], check=True, timeout=60
        )
        for rel, changes in edits.items():
            path = repo / rel
            text = path.read_text() if path.exists() else ""
            for old, new in changes:
                if old == "":
                    text = text + new
                else:
                    assert old in text, (rel, old)
                    text = text.replace(old, new, 1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, timeout=60)
        out = subprocess.run(
            ["git", "-C", str(repo), "diff", "--cached", instance.base_commit],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
    return out.stdout
