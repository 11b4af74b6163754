"""Sandbox pieces that need no bubblewrap: output capping, results, mounts, limits."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from atlas_actors.errors import BubblewrapNotFound, ConfigError
from atlas_actors.sandbox import RunResult, SandboxResult, _bwrap
from atlas_actors.sandbox.bubblewrap import _Tail
from atlas_actors.sandbox.runner import _plain_grid, _to_result


def test_tail_keeps_only_the_end_with_a_marker() -> None:
    tail = _Tail(10)
    for _ in range(10_000):
        tail.feed(b"a" * 100)
    tail.feed(b"0123456789")
    text, cut = tail.text()
    assert cut and text == "...(truncated 1000000 bytes)...\n0123456789"
    assert len(tail.buf) <= 2 * 10 + 65536 + 100  # bounded, not 1 MB
    small = _Tail(100)
    small.feed(b"hello")
    assert small.text() == ("hello", False)


def test_sandbox_result_reads_like_the_seed_dict() -> None:
    r = SandboxResult(ok=True, exit_code=0, timed_out=False, stdout="x", stderr="", cmd=["bwrap"])
    assert r["ok"] is True and r["stdout"] == "x" and r.get("nope", 5) == 5
    assert "timed_out" in r and "timed_out" in r.keys() and "x" not in r  # noqa: SIM118
    with pytest.raises(KeyError):
        r["nope"]


def test_results_from_the_worker_are_revalidated() -> None:
    assert _to_result({"ok": True, "output": [[1, 2]], "error": ""}) == RunResult(
        ok=True, output=[[1, 2]]
    )
    forged = _to_result({"ok": True, "output": [[1, 99]], "error": ""})
    assert not forged.ok and forged.error.startswith("not a grid")
    assert not _to_result("garbage").ok
    assert _to_result({"ok": False, "error": "timeout"}).error == "timeout"


def test_plain_grid_accepts_numpy_and_rejects_junk() -> None:
    np = pytest.importorskip("numpy")
    assert _plain_grid(np.array([[1, 2]]), 0) == [[1, 2]]
    with pytest.raises(ConfigError, match=r"grids\[3\]"):
        _plain_grid([["x"]], 3)


def test_python_mounts_relocate_a_venv_under_work(tmp_path: Path) -> None:
    mounts = _bwrap.python_mounts(sys.executable)
    assert os.path.isabs(mounts.inside_exe)
    if sys.prefix.startswith("/work/"):
        assert mounts.inside_exe.startswith("/run/atlas/venv/")
    with pytest.raises(ConfigError, match="python_bin"):
        _bwrap.python_mounts(str(tmp_path / "python"))


def test_rlimits_and_env() -> None:
    limits = _bwrap.rlimits(memory_mb=100, cpu_time_s=1.2, max_processes=8, max_file_bytes=5)
    assert limits["RLIMIT_AS"] == 100 * 1024 * 1024 and limits["RLIMIT_CPU"] == 2
    assert limits["RLIMIT_FSIZE"] == 5 and limits["RLIMIT_CORE"] == 0
    env = _bwrap.sandbox_env("/usr/bin/python3", {"A": "1"})
    assert env["A"] == "1" and env["HOME"] == "/tmp" and "PATH" in env
    with pytest.raises(ConfigError, match="extra_env"):
        _bwrap.sandbox_env("/usr/bin/python3", {"A=B": "1"})


def test_find_bwrap_names_the_install(tmp_path: Path) -> None:
    with pytest.raises(BubblewrapNotFound, match="apt-get install bubblewrap"):
        _bwrap.find_bwrap(str(tmp_path / "bwrap"))
