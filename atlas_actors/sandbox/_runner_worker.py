"""The long-lived worker of :class:`ProgramRunner`; runs INSIDE the bubblewrap sandbox.

Standalone on purpose (only the standard library and, if present, numpy): it is
mounted read-only into the sandbox and started as ``python -I worker.py``.

Protocol (caller <-> worker, on the worker's stdin/stdout, which it moves to private fds
and replaces by /dev/null before any user code can run): frames of a 4-byte big-endian
length followed by UTF-8 JSON.

* worker -> caller, once: ``{"ready": true, "numpy": bool}``
* caller -> worker: ``{"source": str, "grids": [grid, ...], "timeout_s": float,
  "memory_mb": int}``
* worker -> caller: ``{"results": [{"ok": bool, "output": grid|null, "error": str}, ...]}``

Per job the worker forks a child (numpy already imported, so the fork is cheap). The child
closes the protocol fds, sends its stdout/stderr to /dev/null, lowers its rlimits (address
space, CPU time, file size, no core dumps), compiles nothing itself (the worker hands it
the code object compiled once and cached by source hash), and reports one JSON frame per
grid on a private pipe. The worker enforces a wall-clock timeout *per grid*; a grid that
hangs or crashes the child is reported, the child and everything it spawned is killed,
and a fresh child continues with the next grid. The worker is a child subreaper and
sweeps the sandbox with ``kill(-1, SIGKILL)`` after every job, so nothing a job starts
outlives it. The worker is not dumpable (a job cannot ptrace it or read its memory).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import json
import os
import resource
import select
import shutil
import signal
import struct
import sys
import time
import traceback
from typing import Any

MAX_FRAME = 64 * 1024 * 1024
MAX_CHILD_FRAME = 256 * 1024
MAX_ERROR = 1000
MAX_SOURCE = 1_000_000
CACHE_SIZE = 256
_HDR = struct.Struct(">I")

try:
    import numpy as np

    HAVE_NUMPY = True
except Exception:  # pragma: no cover - depends on the interpreter
    np = None  # type: ignore[assignment]
    HAVE_NUMPY = False


try:
    _LIBC: Any = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover
    _LIBC = None


def _prctl(option: int, arg: int) -> None:
    if _LIBC is not None:
        _LIBC.prctl(option, arg, 0, 0, 0)


def read_exact(fd: int, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def write_frame(fd: int, obj: Any) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    data = _HDR.pack(len(data)) + data
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def read_frame(fd: int, limit: int = MAX_FRAME) -> Any:
    (n,) = _HDR.unpack(read_exact(fd, 4))
    if n > limit:
        raise ValueError(f"frame of {n} bytes")
    return json.loads(read_exact(fd, n))


# ----------------------------------------------------------------------------- child side


def _to_grid(value: Any) -> tuple[list[list[int]] | None, str]:
    """Validate a transform's return value; (grid, "") or (None, reason)."""
    if HAVE_NUMPY and isinstance(value, np.ndarray):
        if value.ndim != 2:
            return None, f"not a grid: a {value.ndim}-D array of shape {value.shape}"
        if value.dtype.kind not in "biuf":
            return None, f"not a grid: an array of dtype {value.dtype}"
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return None, f"not a grid: expected a list of rows, got {type(value).__name__}"
    if not 1 <= len(value) <= 30:
        return None, f"not a grid: {len(value)} rows (allowed 1-30)"
    rows: list[list[int]] = []
    width = -1
    for r, row in enumerate(value):
        if HAVE_NUMPY and isinstance(row, np.ndarray):
            row = row.tolist()
        if not isinstance(row, (list, tuple)):
            return None, f"not a grid: row {r} is {type(row).__name__}, not a list"
        if width < 0:
            width = len(row)
            if not 1 <= width <= 30:
                return None, f"not a grid: {width} columns (allowed 1-30)"
        elif len(row) != width:
            return None, f"not a grid: ragged rows ({width} and {len(row)} cells)"
        out = []
        for c, cell in enumerate(row):
            if isinstance(cell, bool) or not isinstance(cell, (int, float)):
                if HAVE_NUMPY and isinstance(cell, np.integer | np.floating):
                    cell = cell.item()
                else:
                    return None, f"not a grid: cell ({r},{c}) is {type(cell).__name__}"
            if isinstance(cell, float):
                if not cell.is_integer():
                    return None, f"not a grid: cell ({r},{c}) is {cell!r}, not an integer"
                cell = int(cell)
            if not 0 <= cell <= 9:
                return None, f"not a grid: cell ({r},{c}) is {cell} (colours are 0-9)"
            out.append(cell)
        rows.append(out)
    return rows, ""


def _describe(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    msg = text[-1] if text else type(exc).__name__
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<program>":
            line = frame.lineno
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        line = exc.lineno
    if isinstance(exc, MemoryError):
        msg = f"memory limit exceeded ({msg})"
    if line is not None:
        msg = f"{msg} (line {line})"
    return msg[:MAX_ERROR]


def child_main(code: Any, grids: list[Any], start: int, out_fd: int, job: dict[str, Any]) -> None:
    gc.disable()  # short-lived: no GC passes copying the parent's pages
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    mem = int(job["memory_mb"]) * 1024 * 1024
    cpu = int(job["timeout_s"] * (len(grids) - start)) + 2
    for res, value in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, 8 * 1024 * 1024),
        (resource.RLIMIT_CORE, 0),
    ):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(res, (value, value))
    sys.setrecursionlimit(3000)
    me = os.getpid()
    namespace: dict[str, Any] = {"__name__": "__program__", "__builtins__": __builtins__}
    try:
        exec(code, namespace)
        fn = namespace.get("transform")
        setup_error = "" if callable(fn) else "the program defines no callable transform(grid)"
    except BaseException as exc:
        fn, setup_error = None, _describe(exc)
    msg: dict[str, Any]
    for i in range(start, len(grids)):
        if fn is None:
            msg = {"i": i, "ok": False, "output": None, "error": setup_error}
        else:
            try:
                grid = [list(row) for row in grids[i]]
                value = fn(grid)
                output, err = _to_grid(value)
                msg = {"i": i, "ok": output is not None, "output": output, "error": err}
            except BaseException as exc:
                msg = {"i": i, "ok": False, "output": None, "error": _describe(exc)}
        if os.getpid() != me:  # a process the program forked: it must not report
            os._exit(0)
        try:
            write_frame(out_fd, msg)
        except BaseException:
            os._exit(3)
    os._exit(0)


# ----------------------------------------------------------------------------- worker side


_IN_OWN_PID_NS = False  # set by main() after checking; kill(-1) is only safe inside one


def _check_own_pid_namespace() -> bool:
    """True only when we are PID 2 under bwrap's PID 1, i.e. in the sandbox's PID namespace.

    ``kill(-1)`` outside a private PID namespace would signal every process of the host
    user (as root: the whole machine), so the worker refuses to run anywhere else.
    """
    if os.getpid() != 2:
        return False
    try:
        with open("/proc/1/cmdline", "rb") as f:
            argv0 = f.read().split(b"\0", 1)[0]
    except OSError:
        return False
    return os.path.basename(argv0) == b"bwrap"


def _sweep() -> None:
    """SIGKILL every other process in the sandbox and reap them (we are the subreaper)."""
    if not _IN_OWN_PID_NS:
        raise RuntimeError("refusing kill(-1) outside the sandbox's PID namespace")
    for _ in range(1000):
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        del pid


def _death_reason(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "timeout (CPU time limit)"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"crashed: killed by {name}"
    if os.WIFEXITED(status):
        return f"the program exited the process (exit code {os.WEXITSTATUS(status)})"
    return "crashed"


class Worker:
    def __init__(self, in_fd: int, out_fd: int) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        self.cache: dict[str, tuple[Any, str]] = {}
        self.pending: list[int] = []

    def cleanup(self) -> None:
        """Kill and reap the last job's child and anything it left behind."""
        for pid in self.pending:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.pending.clear()
        _sweep()
        for scratch in ("/tmp", "/dev/shm"):  # files a job left do not reach the next job
            try:
                entries = list(os.scandir(scratch))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        os.unlink(entry.path)
                except OSError:
                    pass

    def compile(self, source: str) -> tuple[Any, str]:
        key = hashlib.sha1(source.encode("utf-8", "surrogatepass")).hexdigest()
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if len(source) > MAX_SOURCE:
            entry: tuple[Any, str] = (None, f"source too long ({len(source)} characters)")
        else:
            try:
                entry = (compile(source, "<program>", "exec"), "")
            except BaseException as exc:  # SyntaxError, RecursionError, MemoryError, ...
                entry = (None, _describe(exc))
        if len(self.cache) >= CACHE_SIZE:
            self.cache.pop(next(iter(self.cache)))
        self.cache[key] = entry
        return entry

    def run_job(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        grids = job["grids"]
        code, error = self.compile(job["source"])
        if code is None:
            return [{"ok": False, "output": None, "error": error} for _ in grids]
        results: list[dict[str, Any] | None] = [None] * len(grids)
        timeout = float(job["timeout_s"])
        nxt = 0
        while nxt < len(grids):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # child
                try:
                    os.close(r)
                    os.close(self.in_fd)
                    os.close(self.out_fd)
                    child_main(code, grids, nxt, w, job)
                finally:
                    os._exit(4)
            os.close(w)
            status_reason = ""
            try:
                while nxt < len(grids):
                    deadline = time.monotonic() + timeout
                    frame = self._read_child(r, deadline)
                    if frame is None:  # timeout
                        results[nxt] = {"ok": False, "output": None, "error": "timeout"}
                        break
                    if isinstance(frame, str):  # child died or misbehaved
                        status_reason = frame
                        break
                    results[nxt] = frame
                    nxt += 1
            finally:
                os.close(r)
                status = 0
                if nxt >= len(grids) and not status_reason:
                    # Done: reap after the reply is sent (off the caller's critical path).
                    self.pending.append(pid)
                else:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    with contextlib.suppress(ChildProcessError):
                        _, status = os.waitpid(pid, 0)
                    _sweep()
            if status_reason == "eof":
                status_reason = _death_reason(status)
                if "SIGKILL" in status_reason:
                    status_reason = "crashed: killed (memory or resource limit exceeded?)"
            if nxt < len(grids):
                if status_reason:
                    results[nxt] = {"ok": False, "output": None, "error": status_reason}
                elif results[nxt] is None:
                    results[nxt] = {"ok": False, "output": None, "error": "crashed"}
                nxt += 1
        return [
            r if r is not None else {"ok": False, "output": None, "error": "not run"}
            for r in results
        ]

    def _read_child(self, fd: int, deadline: float) -> dict[str, Any] | str | None:
        buf = bytearray()
        need = 4
        header_done = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, need - len(buf))
            if not chunk:
                return "eof"
            buf += chunk
            if len(buf) < need:
                continue
            if not header_done:
                (n,) = _HDR.unpack(buf)
                if n > MAX_CHILD_FRAME:
                    return "output too large"
                need, buf, header_done = n, bytearray(), True
                if n == 0:
                    return "protocol error"
                continue
            try:
                msg = json.loads(bytes(buf))
                return {
                    "ok": bool(msg["ok"]),
                    "output": msg["output"],
                    "error": str(msg["error"])[:MAX_ERROR],
                }
            except Exception:
                return "protocol error"

    def serve(self) -> None:
        write_frame(self.out_fd, {"ready": True, "numpy": HAVE_NUMPY})
        while True:
            try:
                job = read_frame(self.in_fd)
            except EOFError:
                return
            try:
                results = self.run_job(job)
            except Exception as exc:  # a bug here must not kill the worker silently
                err = f"sandbox worker error: {type(exc).__name__}: {exc}"[:MAX_ERROR]
                results = [{"ok": False, "output": None, "error": err} for _ in job["grids"]]
            write_frame(self.out_fd, {"results": results})
            self.cleanup()


def main() -> None:
    global _IN_OWN_PID_NS
    if "--in-bwrap-pid-namespace" not in sys.argv[1:] or not _check_own_pid_namespace():
        sys.stderr.write(
            "atlas sandbox worker: refusing to run outside a bubblewrap PID namespace "
            "(it SIGKILLs every other process in its namespace after each job)\n"
        )
        sys.exit(2)
    _IN_OWN_PID_NS = True
    gc.collect()
    gc.freeze()  # forked children then do not touch (copy) the worker's objects in GC passes
    in_fd, out_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    os.set_inheritable(in_fd, False)
    os.set_inheritable(out_fd, False)
    _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    _prctl(4, 0)  # PR_SET_DUMPABLE = 0: jobs cannot ptrace the worker
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    Worker(in_fd, out_fd).serve()


if __name__ == "__main__":
    main()
