"""A watcher that ends a local Ray when the process that started it dies unannounced.

When a driver is killed (``kill -9``, the OOM killer), Ray's own processes go with it
(they are tied to the thread that started them), but its DashboardAgent and
RuntimeEnvAgent wait for the dead control plane for a minute or more and ignore SIGTERM
meanwhile. So the engine starts, beside a local Ray, this watcher: a separate process in
its own session (Ctrl-C in the terminal does not reach it) whose standard input is a
pipe the driver holds. When the pipe closes the driver has ended; unless the last thing
it said was ``done`` (a clean end, after ``ray.shutdown``), the watcher kills every
process of that Ray session: those whose command line or open files are under the
session's folder (``/tmp/ray/session_*``), so no other Ray on the machine is touched.

Standard library only, and run by path (``python -P .../watchdog.py``), so the watcher
costs a bare interpreter, not this package's imports. Linux (it reads ``/proc``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

CLEAN_END = b"done"


def start_watcher(session_dir: str) -> subprocess.Popen[bytes]:
    """Start the watcher of the Ray session in ``session_dir`` (its log goes to the
    session's ``logs/atlas_watchdog.log``); keep the returned process and call
    :func:`stop_watcher` after shutting that Ray down."""
    log_dir = Path(session_dir) / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log_dir / "atlas_watchdog.log", "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-P", str(Path(__file__).resolve()), "--session-dir", session_dir],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def stop_watcher(proc: subprocess.Popen[bytes], timeout_s: float = 15.0) -> None:
    """A clean end: tell the watcher (it exits without touching anything)."""
    try:
        if proc.stdin is not None:
            proc.stdin.write(CLEAN_END + b"\n")
            proc.stdin.close()
    except OSError:
        pass  # it is gone already
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def ended_cleanly() -> bool:
    """Read standard input until it closes; whether the last thing said was ``done``."""
    said = b""
    while chunk := sys.stdin.buffer.read(65536):
        said = (said + chunk)[-64:]
    return said.strip() == CLEAN_END


def session_processes(session_dir: str, *, proc: Path = Path("/proc")) -> Iterator[int]:
    """Processes (other than this one) whose command line names ``session_dir`` or that
    hold a file under it open: the processes of that Ray session."""
    folder = os.fsencode(session_dir.rstrip("/"))
    me = os.getpid()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            if any(_under(arg.partition(b"=")[2] or arg, folder) for arg in args):
                yield int(entry.name)
                continue
            for fd in (entry / "fd").iterdir():
                if _under(os.fsencode(os.readlink(fd)), folder):
                    yield int(entry.name)
                    break
        except OSError:
            continue  # gone meanwhile, or not ours to read


def _under(path: bytes, folder: bytes) -> bool:
    return path == folder or path.startswith(folder + b"/")


def end_session(session_dir: str, *, grace_s: float = 60.0, quiet_s: float = 3.0) -> int:
    """SIGKILL the processes of the Ray session in ``session_dir`` until none has been
    seen for ``quiet_s`` seconds (a worker may still be starting), at most ``grace_s``;
    how many were killed."""
    killed: set[int] = set()
    deadline = time.monotonic() + grace_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        found = set(session_processes(session_dir))
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            killed.add(pid)
        now = time.monotonic()
        if found:
            quiet_since = now
        elif now - quiet_since >= quiet_s:
            break
        time.sleep(0.5)
    return len(killed)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -P watchdog.py --session-dir DIR`` (started by :func:`start_watcher`)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--session-dir", required=True, help="the Ray session's folder")
    args = ap.parse_args(argv)
    if ended_cleanly():
        return 0
    n = end_session(args.session_dir)
    print(f"the driver died: killed {n} process(es) of Ray session {args.session_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
