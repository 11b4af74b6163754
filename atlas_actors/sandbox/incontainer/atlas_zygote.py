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
import hashlib
import importlib
import json
import os
import re
import resource
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

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


def reap(keep: Tuple[int, ...] = ()) -> None:
    """Reap dead children (all of them, or those not in ``keep``)."""
    if not keep:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
    for kid in children(os.getpid()):
        if kid not in keep:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(kid, os.WNOHANG)


def sweep(keep: Tuple[int, ...] = ()) -> None:
    """Kill and reap every process left below this one (orphans come to a subreaper),
    but the children in ``keep`` (and what is below them)."""
    me = os.getpid()
    for _ in range(500):
        kids = [k for k in children(me) if k not in keep]
        if not kids:
            break
        for kid in kids:
            with contextlib.suppress(OSError):
                os.kill(kid, signal.SIGKILL)
        reap(keep)
        if [k for k in children(me) if k not in keep]:
            time.sleep(0.002)
    reap(keep)


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


def enter(req: Dict[str, Any]) -> None:
    """In a run's process: the first path entry, ``PYTHONPATH``-like entries and
    ``sys.argv`` as the command would have them."""
    first = req.get("sys_path0") or os.getcwd()
    if sys.path and sys.path[0] == _HERE:
        sys.path[0] = first
    elif not sys.path or sys.path[0] != first:
        sys.path.insert(0, first)
    for entry in reversed(req.get("path") or []):
        sys.path.insert(1, entry)
    sys.argv = list(req["argv"])


def run_and_leave(main: Callable[[], Any]) -> None:
    """End a forked run's process with ``main()``'s exit status (a SystemExit's; 1 after
    any other exception, whose traceback goes to the run's output): it never returns, so
    no run goes on as a copy of its parent."""
    code = 1
    try:
        code = int(main())
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        leave(code)


def leave(code: int) -> None:
    """End a run's process with ``code``, its output flushed."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def repository_modules(root: str) -> Dict[str, Any]:
    """The modules of the repository at ``root`` now imported, by name (not those of a
    virtual environment inside it)."""
    prefix = os.path.realpath(root).rstrip("/") + "/"
    out = {}
    for name, module in list(sys.modules.items()):
        where = [getattr(module, "__file__", None) or ""]
        where += [p for p in (getattr(module, "__path__", None) or []) if isinstance(p, str)]
        for path in where:
            real = os.path.realpath(path) if path else ""
            if real.startswith(prefix) and "site-packages" not in real.split("/"):
                out[name] = module
                break
    return out


_INI = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_JUNIT = re.compile(r"--junit-?xml[= ](\S+)")


def _fingerprint(path: str, known: Optional[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    """(exists, size, mtime, inode, digest) of ``path``: the digest only when the first
    four differ from ``known``'s (a rewrite with the same content is the same file)."""
    try:
        st = os.stat(path)
    except OSError:
        return (False,)
    quick = (True, st.st_size, st.st_mtime_ns, st.st_ino)
    if known is not None and known[:4] == quick:
        return known
    try:
        with open(path, "rb") as f:
            digest = hashlib.sha1(f.read()).hexdigest()
    except OSError:
        digest = ""
    return (*quick, digest)


class Prepared:
    """A process forked from the zygote that has prepared one pytest command's
    configuration (options parsed, plugins and the initial conftests loaded, the
    repository's modules they import included) and forks each run from there: the run
    configures the session, collects and runs, as ``pytest`` would. Before each run it
    checks that every file it read (those modules, the conftests and configuration files
    that apply) is as it was; if not, it stops, and the run is made plainly."""

    def __init__(self, zygote: "Zygote", req: Dict[str, Any]) -> None:
        self.key_ = self.key(req)
        self.ok = False
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        pid = zygote.fork(req.get("env"), req.get("cwd"))
        if pid == 0:  # ---- the prepared process
            try:
                os.close(to_w)
                os.close(from_r)
                os.setpgid(0, 0)
                prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
                prctl(_PR_SET_CHILD_SUBREAPER, 1)
                self.serve(zygote, req, zygote.runtime.Channel(to_r, from_w))
            finally:
                os._exit(0)
        os.close(to_r)
        os.close(from_w)
        self.pid = pid
        self.zygote = zygote
        self.channel = zygote.runtime.Channel(from_r, to_w)
        try:
            hello, _ = self.channel.read(time.monotonic() + 120)
            self.ok = bool(hello.get("ok"))
        except (EOFError, OSError, ValueError, TimeoutError):
            self.ok = False
        if not self.ok:
            self.kill()

    @staticmethod
    def key(req: Dict[str, Any]) -> str:
        env = dict(req.get("env") or {})
        env["PYTEST_ADDOPTS"] = _JUNIT.sub("", env.get("PYTEST_ADDOPTS", ""))
        for name in ("_", "SHLVL", "OLDPWD"):
            env.pop(name, None)
        fields = [req.get(k) for k in ("argv", "cwd", "sys_path0", "path")]
        return json.dumps([fields, sorted(env.items())])

    def run(self, req: Dict[str, Any]) -> Optional[Frame]:
        """The run's answer, or None when the files changed (or the process is gone)."""
        deadline = time.monotonic() + float(req.get("timeout") or 60.0) + 30.0
        try:
            self.channel.write(req)
            answer, data = self.channel.read(deadline)
        except (EOFError, OSError, ValueError, TimeoutError):
            return None
        if answer.get("stale"):
            return None
        return answer, data

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.pid, 0)
        for fd in (getattr(self, "channel", None) and (self.channel.rfd, self.channel.wfd)) or ():
            with contextlib.suppress(OSError):
                os.close(fd)

    # ---- in the prepared process
    def serve(self, zygote: "Zygote", req: Dict[str, Any], channel: Any) -> None:
        for fd in zygote.private:
            with contextlib.suppress(OSError):
                os.close(fd)
        zygote.private = (channel.rfd, channel.wfd)
        enter(req)
        try:
            from _pytest.config import _prepareconfig

            args = list(req["argv"][1:])
            config = _prepareconfig(args, [])
        except BaseException as e:
            channel.write({"ok": False, "error": f"{type(e).__name__}: {e}"})
            return
        cwd = os.getcwd()
        files: Dict[str, Tuple[Any, ...]] = {}
        watched = [getattr(m, "__file__", "") or "" for m in repository_modules(cwd).values()]
        for arg in args:
            here = os.path.abspath(arg.split("::", 1)[0])
            if not os.path.exists(here) or arg.startswith("-"):
                continue
            here = here if os.path.isdir(here) else os.path.dirname(here)
            while True:
                watched.append(os.path.join(here, "conftest.py"))
                up = os.path.dirname(here)
                if up == here:
                    break
                here = up
        here = cwd
        while True:
            watched.extend(os.path.join(here, name) for name in _INI)
            up = os.path.dirname(here)
            if up == here:
                break
            here = up
        for path in watched:
            if path:
                files[path] = _fingerprint(path, None)
        channel.write({"ok": True, "files": len(files)})
        while True:
            try:
                run, _ = channel.read()
            except EOFError:
                return
            changed = [p for p, known in files.items() if _fingerprint(p, known) != known]
            if changed:
                channel.write({"stale": changed[:5]})
                sys.stderr.write(f"atlas_zygote: prepared state stale: {changed[:5]}\n")
                return
            answer, data = self.run_prepared(zygote, config, run)
            channel.write(answer, data)

    def run_prepared(self, zygote: "Zygote", config: Any, req: Dict[str, Any]) -> Frame:
        r, w = os.pipe()
        pid = zygote.fork(req.get("env"), req.get("cwd"))
        if pid == 0:  # ---- the run

            def run() -> Any:
                os.close(r)
                child_setup(req.get("file_limit_bytes") or 0, req.get("memory_bytes") or 0, w)
                sys.argv = list(req["argv"])
                # pytest's global capture restores its saved copies of fds 1 and 2 when it
                # suspends: point those at this run's output too
                capman = config.pluginmanager.getplugin("capturemanager")
                glob = getattr(capman, "_global_capturing", None)
                for name in ("out", "err"):
                    saved = getattr(getattr(glob, name, None), "targetfd_save", None)
                    if isinstance(saved, int):
                        os.dup2(w, saved)
                os.close(w)
                junit = _JUNIT.search(os.environ.get("PYTEST_ADDOPTS", ""))
                if junit and hasattr(config.option, "xmlpath"):
                    config.option.xmlpath = junit.group(1)
                return config.hook.pytest_cmdline_main(config=config)

            run_and_leave(run)
        os.close(w)
        answer, data = zygote.collect_run(pid, r, req)
        answer["prepared"] = True
        return answer, data


class Zygote:
    def __init__(self, rfd: int, wfd: int) -> None:
        # the runtime's framing, shipped beside this file
        sys.path.insert(0, _HERE)
        self.runtime: Any = importlib.import_module("atlas_runtime")
        del sys.path[0]
        self.channel: atlas_runtime.Channel = self.runtime.Channel(rfd, wfd)
        self.private = (rfd, wfd)
        self.prepared: Optional[Prepared] = None
        self.stale: Dict[str, int] = {}

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
            sweep((self.prepared.pid,) if self.prepared is not None else ())
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
        if req.get("prepare"):
            got = self.prepared_run(req)
            if got is not None:
                return got
        r, w = os.pipe()
        pid = self.fork(req.get("env"), req.get("cwd"))
        if pid == 0:  # ---- child

            def run() -> Any:
                os.close(r)
                child_setup(req.get("file_limit_bytes") or 0, req.get("memory_bytes") or 0, w)
                os.close(w)
                enter(req)
                import pytest

                return (getattr(pytest, "console_main", None) or pytest.main)()

            run_and_leave(run)
        os.close(w)
        return self.collect_run(pid, r, req)

    def collect_run(self, pid: int, fd: int, req: Dict[str, Any]) -> Frame:
        """:meth:`collect` with a ``pytest`` request's limits."""
        limit = int(req.get("limit") or 1 << 20)
        return self.collect(pid, fd, req.get("timeout") or 60.0, limit, req.get("cap"))

    def prepared_run(self, req: Dict[str, Any]) -> Optional[Frame]:
        """The run forked from a process holding the command's prepared configuration
        (:class:`Prepared`, made on first use); None when there is none to use (it could
        not be prepared, or the files it read have changed: then the caller runs it
        plainly, and a command found stale twice in a row is not prepared again)."""
        key = Prepared.key(req)
        if self.stale.get(key, 0) >= 2:
            return None
        p = self.prepared if self.prepared is not None and self.prepared.key_ == key else None
        if p is None:
            if self.prepared is not None:
                self.prepared.kill()
            self.prepared = None
            p = Prepared(self, req)
            if not p.ok:
                self.stale[key] = 2
                return None
            self.prepared = p
        got = p.run(req)
        if got is None:
            p.kill()
            self.prepared = None
            self.stale[key] = self.stale.get(key, 0) + 1
            return None
        self.stale[key] = 0
        return got

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
