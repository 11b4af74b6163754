"""The test zygote: a process on the instance's own Python that has imported pytest once
and forks one child per test run, so a run does not pay for a cold interpreter. Standard
library and pytest only; Python 3.6 and up. Started by the runtime (``atlas_runtime.py``)
with the environment the instance's eval script sets up (its venv or conda env), and
spoken to over its standard input and output in the runtime's framing.

Requests:

* ``pytest``: a child runs pytest as ``python -m pytest`` or the ``pytest`` script would:
  ``argv`` (``sys.argv``), ``env``, ``cwd``, ``sys_path0`` (the interpreter's first path
  entry: the working directory for ``-m``, the script's folder for a script), and ``path``
  (entries after it, as ``PYTHONPATH`` would put them). Its stdout
  and stderr go to a pipe; the answer keeps the last ``limit`` bytes as its payload and
  says ``exit_code`` (as a shell would see it: 128 + the signal for a killed run),
  ``timed_out``, ``output_bytes``, ``truncated``, ``seconds``, ``cpu``, and ``died`` /
  ``output_exceeded`` when the run was cut short. A run over ``timeout`` seconds or over
  ``cap`` bytes of output is killed with everything it started.
* ``batch``: the fast screen's job (``atlas_batch.run_job``) in a child, with ``env`` and
  ``cwd``; its result lines are the payload.

Children run in their own process group under rlimits (file size, no core dumps); the
zygote is a child subreaper, so what a test leaves behind is killed when its run ends.

The helpers here (:func:`child_setup`, :func:`sweep`, :func:`death`, :func:`cpu_seconds`,
:func:`import_pytest`) are what the batch worker forks its candidates with too.
"""

import contextlib
import ctypes
import importlib
import os
import resource
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

if TYPE_CHECKING:
    from atlas_actors.sandbox.incontainer import atlas_runtime

Frame = Tuple[Dict[str, Any], bytes]
_HERE = os.path.dirname(os.path.abspath(__file__))
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

try:
    _LIBC: Any = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - no libc
    _LIBC = None


def prctl(option: int, arg: int) -> None:
    if _LIBC is not None:
        _LIBC.prctl(option, arg, 0, 0, 0)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def child_setup(
    file_limit_bytes: int,
    memory_bytes: int = 0,
    out_fd: Optional[int] = None,
    tmp: Optional[str] = None,
) -> None:
    """In a forked child: own process group, killed with its parent, rlimits, standard
    input from /dev/null, output to ``out_fd`` (None: /dev/null), and a private TMPDIR
    when ``tmp`` is given."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    target = devnull if out_fd is None else out_fd
    os.dup2(target, 1)
    os.dup2(target, 2)
    os.close(devnull)
    limits = [(resource.RLIMIT_CORE, 0)]
    if file_limit_bytes:
        limits.append((resource.RLIMIT_FSIZE, int(file_limit_bytes)))
    if memory_bytes:
        limits.append((resource.RLIMIT_AS, int(memory_bytes)))
    for res, value in limits:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(res, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    if tmp:
        os.makedirs(tmp, exist_ok=True)
        for key in ("TMPDIR", "TMP", "TEMP"):
            os.environ[key] = tmp
        import tempfile

        tempfile.tempdir = None


def import_pytest(pycache: str = "") -> Any:
    """Import pytest and its built-in plugins (from the interpreter's own compiled files);
    then send every later import's compiled file to ``pycache`` (outside the repository;
    a prefix set earlier would recompile pytest itself on every first run)."""
    import importlib

    import pytest
    from _pytest.config import default_plugins

    for name in default_plugins:
        with contextlib.suppress(Exception):
            importlib.import_module("_pytest." + name)
    if pycache and hasattr(sys, "pycache_prefix"):
        sys.pycache_prefix = pycache  # novermin
    return pytest


def children(pid: int) -> List[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        pass
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    return out


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def sweep() -> None:
    """Kill and reap every process left below this one (orphans come to a subreaper)."""
    me = os.getpid()
    for _ in range(500):
        kids = children(me)
        if not kids:
            break
        for kid in kids:
            with contextlib.suppress(OSError):
                os.kill(kid, signal.SIGKILL)
        reap()
        if children(me):
            time.sleep(0.002)
    reap()


def death(status: int) -> str:
    """Why a child with wait status ``status`` ended, in words."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXFSZ:
            return "killed: file size limit exceeded (SIGXFSZ)"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if sig == signal.SIGKILL:
            return "killed (SIGKILL: memory limit?)"
        return "killed by " + name
    if os.WIFEXITED(status):
        return f"the test process exited (code {os.WEXITSTATUS(status)})"
    return "crashed"


def shell_status(status: int) -> int:
    """The exit status a shell would report for wait status ``status``."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 255


def cpu_seconds() -> float:
    """CPU time of this process and of every descendant reaped so far."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


class Zygote:
    def __init__(self, rfd: int, wfd: int) -> None:
        # the runtime's framing, shipped beside this file
        sys.path.insert(0, _HERE)
        self.runtime: Any = importlib.import_module("atlas_runtime")
        del sys.path[0]
        self.channel: atlas_runtime.Channel = self.runtime.Channel(rfd, wfd)
        self.private = (rfd, wfd)

    def fork(self, env: Optional[Dict[str, str]], cwd: Optional[str]) -> int:
        """Fork a child with ``env`` and ``cwd``; its pid (0 in the child)."""
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            for fd in self.private:
                with contextlib.suppress(OSError):
                    os.close(fd)
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            if cwd:
                os.chdir(cwd)
        return pid

    def collect(self, pid: int, fd: int, timeout: float, limit: int, cap: Optional[int]) -> Frame:
        """Read a child's output until it ends (or ``timeout`` / ``cap``); kill what is
        left; the answer's figures and the output tail."""
        started = time.monotonic()
        cpu0 = children_cpu()
        deadline = started + float(timeout)
        tail = self.runtime.Tail(limit)
        status: List[int] = []

        def exited() -> bool:
            if not status:
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status.append(st)
            return bool(status)

        try:
            ended = self.runtime.pump(fd, tail, deadline, exited, cap)
            if ended == "eof":  # output closed: wait for the process, within the deadline
                while not exited() and time.monotonic() < deadline:
                    time.sleep(0.002)
        finally:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            timed_out = not status and ended != "cap"
            if not status:
                with contextlib.suppress(ChildProcessError):
                    status.append(os.waitpid(pid, 0)[1])
            sweep()
        exceeded = ended == "cap"
        st = status[0] if status else 0
        answer: Dict[str, Any] = {
            "exit_code": None if (timed_out or exceeded) else shell_status(st),
            "timed_out": timed_out,
            "output_bytes": tail.total,
            "truncated": tail.truncated,
            "seconds": time.monotonic() - started,
            "cpu": children_cpu() - cpu0,
        }
        if exceeded:
            answer["output_exceeded"] = True
        elif not timed_out and os.WIFSIGNALED(st):
            answer["died"] = death(st)
        return answer, bytes(tail.buf)

    def pytest(self, req: Dict[str, Any]) -> Frame:
        r, w = os.pipe()
        pid = self.fork(req.get("env"), req.get("cwd"))
        if pid == 0:  # ---- child
            code = 1
            try:
                os.close(r)
                child_setup(req.get("file_limit_bytes") or 0, req.get("memory_bytes") or 0, w)
                os.close(w)
                if sys.path and sys.path[0] == _HERE:
                    sys.path[0] = req.get("sys_path0") or os.getcwd()
                else:
                    sys.path.insert(0, req.get("sys_path0") or os.getcwd())
                for entry in reversed(req.get("path") or []):  # as PYTHONPATH would
                    sys.path.insert(1, entry)
                sys.argv = list(req["argv"])
                import pytest

                main = getattr(pytest, "console_main", None)
                code = main() if main is not None else pytest.main()
                code = int(code)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        os.close(w)
        return self.collect(
            pid, r, req.get("timeout") or 60.0, int(req.get("limit") or 1 << 20), req.get("cap")
        )

    def batch(self, req: Dict[str, Any]) -> Frame:
        r, w = os.pipe()
        pid = self.fork(req.get("env"), req.get("cwd"))
        if pid == 0:  # ---- child: the screen's worker
            try:
                os.close(r)
                os.setpgid(0, 0)
                prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
                os.dup2(w, 1)  # its diagnostics go with its result lines
                os.dup2(w, 2)
                sys.path.insert(0, _HERE)
                atlas_batch = importlib.import_module("atlas_batch")

                while _HERE in sys.path:
                    sys.path.remove(_HERE)
                if sys.path and sys.path[0] == "":
                    del sys.path[0]
                atlas_batch.run_job(req["job"], w)
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(0)
        os.close(w)
        limit = int(req.get("limit") or 500000000)
        return self.collect(pid, r, req.get("timeout") or 600.0, limit, None)

    def serve(self) -> None:
        while True:
            try:
                req, _ = self.channel.read()
            except EOFError:
                return
            op = req.get("op")
            try:
                if op == "pytest":
                    answer, data = self.pytest(req)
                elif op == "batch":
                    answer, data = self.batch(req)
                else:
                    raise ValueError(f"unknown op {op!r}")
                answer["ok"] = True
            except Exception as e:
                answer, data = {"ok": False, "error": f"{type(e).__name__}: {e}"}, b""
            self.channel.write(answer, data)


def main() -> int:
    rfd, wfd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    zygote = Zygote(rfd, wfd)
    try:
        pytest = import_pytest()
    except BaseException as e:
        zygote.channel.write(
            {"ok": False, "error": f"cannot import pytest: {type(e).__name__}: {e}"}
        )
        return 1
    import gc

    gc.collect()
    if hasattr(gc, "freeze"):
        gc.freeze()  # novermin
    zygote.channel.write(
        {
            "ok": True,
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "pytest": str(getattr(pytest, "__version__", "?")),
        }
    )
    zygote.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
