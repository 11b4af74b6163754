"""A fast runner for untrusted ARC programs (``def transform(grid)``).

One long-lived worker runs inside bubblewrap (same containment as
:func:`~atlas_actors.sandbox.run_in_bubblewrap`: no network, read-only system, pids cgroup,
rlimits) and forks a fresh child per job, so a job costs a fork rather than a sandbox
start. See ``_runner_worker.py`` for what happens inside.

Example::

    with ProgramRunner(timeout_s=2.0) as runner:
        [res] = runner.run_sync("def transform(g):\\n    return g[::-1]\\n", [[[1, 2]]])
        assert res.ok and res.output == [[1, 2]]
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from atlas_actors.errors import ConfigError, SandboxError
from atlas_actors.sandbox import _bwrap

__all__ = ["ProgramRunner", "RunResult"]

_HDR = struct.Struct(">I")
_WORKER = Path(__file__).with_name("_runner_worker.py")
_MAX_REPLY = 64 * 1024 * 1024
_START_TIMEOUT_S = 30.0


class RunResult(BaseModel):
    """The result of applying one program to one grid."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    """True when ``transform`` returned a valid grid."""
    output: list[list[int]] | None = None
    """The returned grid (ints 0-9, 1x1 to 30x30), or None."""
    error: str = ""
    """Why it failed, readable by a person or an LLM: ``"timeout"``, the exception's last
    traceback line with the program line (``"IndexError: list index out of range (line 3)"``),
    ``"not a grid: ..."``, ``"memory limit exceeded (...)"``, ``"crashed: killed by SIGSEGV"``."""


def _grid_error(value: Any) -> str:
    if not isinstance(value, list) or not 1 <= len(value) <= 30:
        return "not a grid: expected 1-30 rows"
    width = len(value[0]) if isinstance(value[0], list) else -1
    if not 1 <= width <= 30:
        return "not a grid: expected 1-30 columns"
    for row in value:
        if not isinstance(row, list) or len(row) != width:
            return "not a grid: ragged rows"
        for cell in row:
            if type(cell) is not int or not 0 <= cell <= 9:
                return "not a grid: cells must be ints 0-9"
    return ""


def _to_result(raw: Any) -> RunResult:
    """Validate one result from the (untrusted) worker."""
    if not isinstance(raw, dict):
        return RunResult(ok=False, error="sandbox protocol error")
    error = str(raw.get("error", ""))[:2000]
    if raw.get("ok") is True:
        output = raw.get("output")
        bad = _grid_error(output)
        if bad:
            return RunResult(ok=False, error=bad)
        return RunResult(ok=True, output=output, error="")
    return RunResult(ok=False, output=None, error=error or "failed")


def _plain_grid(grid: Any, index: int) -> list[list[int]]:
    if hasattr(grid, "tolist"):
        grid = grid.tolist()
    try:
        return [[int(c) for c in row] for row in grid]
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"grids[{index}] is not a 2-D grid of ints: {exc}") from exc


class _Worker:
    """One sandboxed worker process and its pipes (caller side)."""

    def __init__(self, python_bin: str, max_processes: int, memory_mb: int) -> None:
        bwrap = _bwrap.find_bwrap()
        py = _bwrap.python_mounts(python_bin)
        env = _bwrap.sandbox_env(py.inside_exe, None)
        argv = _bwrap.bwrap_argv(
            bwrap,
            python=py,
            env=env,
            command=[py.inside_exe, "-I", "/run/atlas/worker.py", "--in-bwrap-pid-namespace"],
            work_dir=None,
            tmpfs_mb=64,
            extra_ro=[(str(_WORKER), "/run/atlas/worker.py")],
        )
        limits = _bwrap.rlimits(
            # Whole-sandbox ceiling; each job's child lowers RLIMIT_AS to memory_mb.
            memory_mb=max(memory_mb, 256) + 1024,
            cpu_time_s=None,
            max_processes=max_processes,
            max_file_bytes=8 * 1024 * 1024,
        )
        self.cgroup = _bwrap.PidsCgroup(max_processes)
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        try:
            self.proc = subprocess.Popen(
                _bwrap.launcher_argv(bwrap, argv, limits, self.cgroup),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                start_new_session=True,
            )
        except OSError as exc:
            self.cgroup.remove()
            raise SandboxError(f"could not start the sandbox worker: {exc}") from exc
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.w = self.proc.stdin.fileno()
        self.r = self.proc.stdout.fileno()
        hello = self.recv(time.monotonic() + _START_TIMEOUT_S)
        if not isinstance(hello, dict) or hello.get("ready") is not True:
            detail = self.stderr_tail()
            self.kill()
            raise SandboxError(f"the sandbox worker did not start: {detail or hello!r}")
        self.numpy = bool(hello.get("numpy"))

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - 2000))
            return self.stderr.read().decode("utf-8", "replace").strip()
        return ""

    def send(self, obj: Any) -> None:
        data = json.dumps(obj, separators=(",", ":")).encode()
        view = memoryview(_HDR.pack(len(data)) + data)
        while view:
            n = os.write(self.w, view)
            view = view[n:]

    def _read(self, n: int, deadline: float) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.r, min(n - len(buf), 1 << 20))
            if not chunk:
                raise EOFError
            buf += chunk
        return bytes(buf)

    def recv(self, deadline: float) -> Any:
        """A frame, None on timeout; EOFError if the worker is gone."""
        head = self._read(4, deadline)
        if head is None:
            return None
        (n,) = _HDR.unpack(head)
        if n > _MAX_REPLY:
            raise EOFError("oversized frame")
        body = self._read(n, deadline)
        if body is None:
            return None
        try:
            return json.loads(body)
        except ValueError:
            return {"protocol_error": True}

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, 9)
        self.cgroup.kill_all()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)
        for f in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(Exception):
                if f is not None:
                    f.close()
        self.stderr.close()
        self.cgroup.remove()


class ProgramRunner:
    """Runs LLM-written ``transform(grid)`` programs in one long-lived bubblewrap worker.

    ``timeout_s`` is **per grid**: each grid gets ``timeout_s`` seconds of wall-clock time;
    a grid that times out or crashes is reported and the job continues with the next grid
    in a fresh child. ``memory_mb`` is the address-space limit of each job's process
    (the worker with numpy loaded already uses ~150 MB of it).

    Thread-safe (jobs are serialised on the one worker); :meth:`run` is the async form and
    does not block the event loop. A worker that dies is restarted on the next job.
    """

    def __init__(
        self, *, timeout_s: float = 2.0, memory_mb: int = 512, python_bin: str | None = None
    ) -> None:
        if not timeout_s > 0:
            raise ConfigError(f"timeout_s must be > 0, got {timeout_s!r}")
        if memory_mb < 256:
            raise ConfigError(
                f"memory_mb must be >= 256 (the worker with numpy already maps ~150 MB), "
                f"got {memory_mb!r}"
            )
        self.timeout_s = float(timeout_s)
        self.memory_mb = int(memory_mb)
        self.python_bin = python_bin or _bwrap.default_python()
        _bwrap.python_mounts(self.python_bin)  # fail fast on a bad interpreter
        _bwrap.find_bwrap()
        self.max_processes = 64
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self._closed = False
        self.restarts = 0
        """How many times a dead or stuck worker was replaced."""

    # ------------------------------------------------------------------ sync API
    def run_sync(self, source: str, grids: Sequence[Any]) -> list[RunResult]:
        """Apply ``source``'s ``transform`` to every grid; one :class:`RunResult` per grid."""
        if not isinstance(source, str):
            raise ConfigError(f"source must be a str, got {type(source).__name__}")
        plain = [_plain_grid(g, i) for i, g in enumerate(grids)]
        if not plain:
            return []
        job = {
            "source": source,
            "grids": plain,
            "timeout_s": self.timeout_s,
            "memory_mb": self.memory_mb,
        }
        with self._lock:
            if self._closed:
                raise SandboxError("ProgramRunner is closed")
            for attempt in range(2):
                worker = self._ensure_worker()
                try:
                    worker.send(job)
                except OSError:  # worker died before taking the job: restart, resend
                    self._drop_worker()
                    if attempt == 0:
                        continue
                    raise SandboxError("the sandbox worker keeps dying") from None
                deadline = time.monotonic() + len(plain) * (self.timeout_s + 1.0) + 10.0
                try:
                    reply = worker.recv(deadline)
                except EOFError:
                    reply = None
                    err = "crashed: the program killed the sandbox worker"
                else:
                    err = "timeout (the sandbox worker stopped answering)"
                if not isinstance(reply, dict) or not isinstance(reply.get("results"), list):
                    self._drop_worker()
                    return [RunResult(ok=False, error=err) for _ in plain]
                raw = reply["results"]
                if len(raw) != len(plain):
                    self._drop_worker()
                    return [RunResult(ok=False, error="sandbox protocol error") for _ in plain]
                return [_to_result(r) for r in raw]
        raise AssertionError("unreachable")

    def _ensure_worker(self) -> _Worker:
        if self._worker is not None and not self._worker.alive():
            self._drop_worker()
        if self._worker is None:
            self._worker = _Worker(self.python_bin, self.max_processes, self.memory_mb)
        return self._worker

    def _drop_worker(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None
            self.restarts += 1

    def start(self) -> None:
        """Start the worker now instead of on the first job."""
        with self._lock:
            self._ensure_worker()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._worker is not None:
                self._worker.kill()
                self._worker = None

    def __enter__(self) -> ProgramRunner:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ async API
    async def run(self, source: str, grids: Sequence[Any]) -> list[RunResult]:
        """Async :meth:`run_sync` (in a worker thread; the event loop keeps running)."""
        return await anyio.to_thread.run_sync(self.run_sync, source, grids)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.close)

    async def __aenter__(self) -> ProgramRunner:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
