"""The watcher of a local Ray session: it finds the session's processes by its folder
(command line or open files), kills them when its driver dies unannounced, and leaves
everything alone after a clean end. Real processes (``sleep``) stand in for Ray's."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from atlas_actors.watchdog import end_session, session_processes, start_watcher, stop_watcher


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "session_2026_1234"
    (folder / "logs").mkdir(parents=True)
    return folder


@pytest.fixture
def sleepers(session: Path, tmp_path: Path) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """A process holding a log file of the session open, one naming the session on its
    command line, one in a sibling folder whose name starts the same, one unrelated."""
    sibling = tmp_path / "session_2026_12345"
    sibling.mkdir()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    with open(session / "logs" / "worker.out", "wb") as log, open(sibling / "x", "wb") as other:
        procs["log"] = subprocess.Popen(["sleep", "60"], stdout=log)
        procs["sibling"] = subprocess.Popen(["sleep", "60"], stdout=other)
    procs["cmdline"] = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", f"--log-dir={session}/logs"]
    )
    procs["other"] = subprocess.Popen(["sleep", "60"])
    yield procs
    for p in procs.values():
        p.kill()
        p.wait()


def test_the_sessions_processes_are_found_by_its_folder(
    session: Path, sleepers: dict[str, subprocess.Popen[bytes]]
) -> None:
    found = set(session_processes(str(session)))
    assert {sleepers["log"].pid, sleepers["cmdline"].pid} <= found
    assert sleepers["sibling"].pid not in found and sleepers["other"].pid not in found


def test_ending_a_session_kills_its_processes_only(
    session: Path, sleepers: dict[str, subprocess.Popen[bytes]]
) -> None:
    assert end_session(str(session), quiet_s=0.5) >= 2
    for name in ("log", "cmdline"):
        assert sleepers[name].wait(timeout=10) == -9, name
    for name in ("sibling", "other"):
        assert sleepers[name].poll() is None, name


def test_the_watcher_kills_the_session_when_its_driver_dies_unannounced(
    session: Path, sleepers: dict[str, subprocess.Popen[bytes]]
) -> None:
    watcher = start_watcher(str(session))
    assert watcher.stdin is not None
    watcher.stdin.close()  # what the driver's death does to the pipe
    assert watcher.wait(timeout=30) == 0
    assert sleepers["log"].wait(timeout=10) == -9
    assert sleepers["other"].poll() is None
    log = (session / "logs" / "atlas_watchdog.log").read_text()
    assert "the driver died: killed" in log


def test_after_a_clean_end_the_watcher_touches_nothing(
    session: Path, sleepers: dict[str, subprocess.Popen[bytes]]
) -> None:
    watcher = start_watcher(str(session))
    stop_watcher(watcher)
    assert watcher.returncode == 0
    assert all(p.poll() is None for p in sleepers.values())
