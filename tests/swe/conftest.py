"""Set-up for the SWE tests: a real dockerd (scripts/docker-up), the offline base image
(scripts/build-base-image) and the example instance images, once per session.

Skipped (with the reason) only when not running as root or when Docker cannot be
installed; under CI=true a missing engine fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from atlas_actors.swe.instances import SWEInstance, load_example_instances

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
def examples() -> dict[str, SWEInstance]:
    """The example instances by short name (textkit, intervals, exprcalc, datecalc)."""
    return {i.repo.split("/")[-1]: i for i in load_example_instances()}


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
