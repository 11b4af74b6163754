"""The in-container runtime: one long-lived process per workspace that serves the host over
its standard input and output. Standard library only, Python 3.6 and up (it runs on
whatever ``python3`` the image carries, not necessarily the instance's environment).

    python3 atlas_runtime.py [--log FILE]

Framing, both ways: a JSON object on one line, then ``n`` raw bytes (``"n"`` in the object,
0 when absent). The runtime speaks first (``{"op": "hello", ...}``), then answers each
request in order: ``{"id": <the request's>, "ok": true, ...}`` or ``"ok": false`` with
``"error"``.

Requests (``op``):

* ``run``: a command (``argv``, or ``cmd`` for ``bash -c``) in ``cwd`` with ``env`` on top
  of the runtime's own environment, after writing ``files`` (``[[path, size, mode], ...]``,
  contents in the payload). Its own session and process group; output (stdout and stderr
  together) keeps the last ``limit`` bytes; at ``timeout`` seconds the group is killed and
  every process below the runtime but its zygotes too. ``sweep`` first kills every
  process left from earlier requests. Answer: ``exit_code`` (None when timed out),
  ``timed_out``, ``output_bytes``, ``truncated``, ``seconds``, ``cpu`` (CPU seconds of its
  processes), the output tail as payload.
* ``read``: ``paths`` -> ``files`` (``[{"path", "size", "real"}]``: size None when missing,
  with an ``error``; ``real`` the path with symbolic links resolved), contents in the
  payload; a file over ``limit`` bytes is an error, or cut to its first ``limit`` bytes
  with ``head``. ``write``: ``files`` as for ``run``, then the paths in ``remove`` deleted.
* ``zygote``: forwards ``request`` to the test zygote for ``python`` and ``env`` (started on
  first use in ``cwd``: ``atlas_zygote.py``, a process that has imported pytest and forks
  one child per test run), with a deadline of ``request["timeout"]`` plus a grace; a zygote
  that dies or misses its deadline is killed with everything it started (the answer says
  ``zygote_died``). ``unavailable`` when it cannot start (no such interpreter, no pytest).
* ``sweep``: kill every process the runtime's requests left (all below it but its
  zygotes).
* ``ping``.

The runtime is a child subreaper: whatever a command leaves behind becomes its child, so a
timed-out command leaves nothing in the container.
"""

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from typing import IO, Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

Frame = Tuple[Dict[str, Any], bytes]
PROTOCOL = 1
_HERE = os.path.dirname(os.path.abspath(__file__))
_ZYGOTE = os.path.join(_HERE, "atlas_zygote.py")
_PR_SET_CHILD_SUBREAPER = 36
_ZYGOTE_GRACE_S = 30.0
"""Beyond a zygote request's own timeout (the zygote enforces that one itself)."""
_ZYGOTE_START_S = 120.0
_MAX_ZYGOTES = 4
_DRAIN_AFTER_EXIT_S = 0.5
"""How long output is still read after a command exited while something it started
keeps the output pipe open."""
_VOLATILE = ("PYTEST_ADDOPTS", "_", "SHLVL", "PWD", "OLDPWD")
"""Environment variables that do not decide which zygote serves a request (read per run)."""


def _log(msg: str) -> None:
    sys.stderr.write(f"atlas_runtime[{os.getpid()}] {time.time():.3f} {msg}\n")
    sys.stderr.flush()


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class Channel:
    """Frames over a pair of file descriptors (see the module doc)."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd = rfd
        self.wfd = wfd
        self.buf = bytearray()

    def _fill(self, deadline: Optional[float] = None) -> None:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer in time")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                raise TimeoutError("no answer in time")
        data = os.read(self.rfd, 1 << 20)
        if not data:
            raise EOFError("channel closed")
        self.buf += data

    def read(self, deadline: Optional[float] = None) -> Frame:
        """The next ``(header, payload)``; EOFError when the other side is gone."""
        while b"\n" not in self.buf:
            self._fill(deadline)
        line, _, rest = bytes(self.buf).partition(b"\n")
        header: Dict[str, Any] = json.loads(line.decode("utf-8"))
        n = int(header.get("n") or 0)
        self.buf = bytearray(rest)
        while len(self.buf) < n:
            self._fill(deadline)
        payload = bytes(self.buf[:n])
        del self.buf[:n]
        return header, payload

    def write(self, header: Dict[str, Any], payload: bytes = b"") -> None:
        header = dict(header)
        header["n"] = len(payload)
        line = json.dumps(header, separators=(",", ":")).encode("utf-8") + b"\n"
        write_all(self.wfd, line + payload if len(payload) < 65536 else line)
        if len(payload) >= 65536:
            write_all(self.wfd, payload)


class Tail:
    """The last ``limit`` bytes written to it, and how many there were."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, int(limit))
        self.buf = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.buf += data
        if len(self.buf) > self.limit:
            del self.buf[: len(self.buf) - self.limit]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.buf)

    def text(self) -> str:
        return self.buf.decode("utf-8", errors="replace")


def pump(
    fd: int, tail: Tail, deadline: float, exited: Callable[[], bool], cap: Optional[int] = None
) -> str:
    """Read ``fd`` into ``tail`` until it closes (``"eof"``), until a moment after
    ``exited()`` turned true while something the process started holds it open
    (``"exited"``), until ``deadline`` (``"timeout"``) or past ``cap`` bytes (``"cap"``)."""
    exited_at = None
    while True:
        now = time.monotonic()
        if exited_at is None and exited():
            exited_at = now
        if exited_at is not None and now - exited_at > _DRAIN_AFTER_EXIT_S:
            return "exited"
        if now >= deadline:
            return "timeout"
        wait = min(deadline - now, 0.05 if exited_at is None else _DRAIN_AFTER_EXIT_S)
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            continue
        data = os.read(fd, 1 << 20)
        if not data:
            return "eof"
        tail.add(data)
        if cap and tail.total > cap:
            return "cap"


# ----------------------------------------------------------------- processes


def pids() -> List[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def stat_of(pid: int) -> Optional[Tuple[str, int]]:
    """(state, ppid) of ``pid``; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def reap_orphans(owned: Iterable[int]) -> None:
    """Reap dead children that are not ours to wait for (orphans reparented to us)."""
    me = os.getpid()
    for pid in pids():
        if pid in owned:
            continue
        st = stat_of(pid)
        if st is not None and st[1] == me and st[0] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def descendants(root: int, prune: Iterable[int] = ()) -> List[int]:
    """Every live process below ``root`` (zombies left out), not looking below the
    processes in ``prune`` (nor listing them)."""
    prune = set(prune)
    kids: Dict[int, List[int]] = {}
    alive: Set[int] = set()
    for pid in pids():
        st = stat_of(pid)
        if st is not None:
            kids.setdefault(st[1], []).append(pid)
            if st[0] != "Z":
                alive.add(pid)
    out: List[int] = []
    todo = list(kids.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in prune:
            continue
        if pid in alive:
            out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def kill_descendants(keep: Iterable[int]) -> None:
    """SIGKILL every process below this one except ``keep`` (its zygotes, which look
    after their own children), until none is left (a fork bomb keeps forking for a
    while); then reap what became ours."""
    keep = set(keep)
    me = os.getpid()
    for _ in range(500):
        victims = descendants(me, keep)
        if not victims:
            break
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap_orphans(keep)
        time.sleep(0.002)
    reap_orphans(keep)


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# ------------------------------------------------------------------- zygotes


class Zygote:
    """A test zygote for one interpreter and environment."""

    def __init__(self, python: str, env: Dict[str, str], cwd: Optional[str], log_fd: int) -> None:
        self.python = python
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [python, _ZYGOTE],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_fd,
            start_new_session=True,
            close_fds=True,
        )
        self.pid = self.proc.pid
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.channel = Channel(self.proc.stdout.fileno(), self.proc.stdin.fileno())
        try:
            hello, _ = self.channel.read(time.monotonic() + _ZYGOTE_START_S)
        except (EOFError, TimeoutError, ValueError) as e:
            self.kill()
            raise RuntimeError(f"the zygote did not start: {e}") from e
        if not hello.get("ok"):
            self.kill()
            raise RuntimeError(str(hello.get("error") or "the zygote did not start"))
        self.info = hello
        self.start_seconds = time.monotonic() - started
        self.used = time.monotonic()

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        streams: List[Optional[IO[bytes]]] = [self.proc.stdin, self.proc.stdout]
        for stream in streams:
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)


# -------------------------------------------------------------------- server


class Server:
    def __init__(self, channel: Channel, log_fd: int) -> None:
        self.channel = channel
        self.log_fd = log_fd
        self.zygotes: Dict[str, Zygote] = {}
        self.failed: Dict[str, str] = {}
        self.base_env = dict(os.environ)

    def owned(self) -> Set[int]:
        return {z.pid for z in self.zygotes.values()}

    def sweep(self) -> None:
        kill_descendants(self.owned())

    # --- requests
    def handle(self, req: Dict[str, Any], payload: bytes) -> Frame:
        op = req.get("op")
        if op == "run":
            return self.run(req, payload)
        if op == "read":
            return self.read(req)
        if op == "write":
            self.write_files(req.get("files") or [], payload)
            for path in req.get("remove") or []:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            return {}, b""
        if op == "zygote":
            return self.zygote(req, payload)
        if op == "sweep":
            self.sweep()
            return {}, b""
        if op == "ping":
            return {"zygotes": len(self.zygotes)}, b""
        raise ValueError(f"unknown op {op!r}")

    def write_files(self, files: List[List[Any]], payload: bytes) -> None:
        offset = 0
        for path, size, mode in files:
            data = payload[offset : offset + size]
            offset += size
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
            if mode is not None:
                os.chmod(path, mode)

    def read(self, req: Dict[str, Any]) -> Frame:
        out = []
        chunks = []
        limit = int(req.get("limit") or (1 << 30))
        head = bool(req.get("head"))
        for path in req.get("paths") or []:
            try:
                with open(path, "rb") as f:
                    data = f.read(limit + 1)
            except OSError as e:
                out.append({"path": path, "size": None, "error": e.strerror or str(e)})
                continue
            if len(data) > limit:
                if not head:
                    out.append({"path": path, "size": None, "error": f"over {limit} bytes"})
                    continue
                data = data[:limit]
            out.append({"path": path, "size": len(data), "real": os.path.realpath(path)})
            chunks.append(data)
        return {"files": out}, b"".join(chunks)

    def run(self, req: Dict[str, Any], payload: bytes) -> Frame:
        self.write_files(req.get("files") or [], payload)
        if req.get("sweep"):
            self.sweep()
        env = dict(self.base_env)
        env.update(req.get("env") or {})
        argv = req.get("argv") or ["bash", "-c", req["cmd"]]
        timeout = float(req.get("timeout") or 60.0)
        tail = Tail(req.get("limit") or 1000000)
        started = time.monotonic()
        cpu0 = children_cpu()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=req.get("cwd") or None,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as e:
            msg = (f"cannot run {argv[0]}: {e}\n").encode()
            return {"exit_code": 127, "timed_out": False, "output_bytes": len(msg)}, msg
        assert proc.stdout is not None
        deadline = started + timeout
        timed_out = False
        try:
            ended = pump(proc.stdout.fileno(), tail, deadline, lambda: proc.poll() is not None)
            timed_out = ended == "timeout" and proc.poll() is None
            if not timed_out:
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
        finally:
            if timed_out:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                self.sweep()
            proc.stdout.close()
            proc.wait()
        return (
            {
                "exit_code": None if timed_out else proc.returncode,
                "timed_out": timed_out,
                "output_bytes": tail.total,
                "truncated": tail.truncated,
                "seconds": time.monotonic() - started,
                "cpu": children_cpu() - cpu0,
            },
            bytes(tail.buf),
        )

    def zygote(self, req: Dict[str, Any], payload: bytes) -> Frame:
        python = req["python"]
        env = dict(req.get("env") or self.base_env)
        key = json.dumps([python, sorted((k, v) for k, v in env.items() if k not in _VOLATILE)])
        if key in self.failed:
            return {"unavailable": self.failed[key]}, b""
        z = self.zygotes.get(key)
        fresh = z is None
        if z is None:
            while len(self.zygotes) >= _MAX_ZYGOTES:
                old = min(self.zygotes, key=lambda k: self.zygotes[k].used)
                self.zygotes.pop(old).kill()
            try:
                z = Zygote(python, env, req.get("cwd") or None, self.log_fd)
            except (OSError, RuntimeError) as e:
                self.failed[key] = str(e)
                _log(f"zygote for {python} unavailable: {e}")
                return {"unavailable": str(e)}, b""
            self.zygotes[key] = z
            _log(f"zygote {z.pid} started for {python} ({z.start_seconds:.2f}s)")
        z.used = time.monotonic()
        request = dict(req["request"])
        deadline = time.monotonic() + float(request.get("timeout") or 60.0) + _ZYGOTE_GRACE_S
        meta: Dict[str, Any] = {"zygote": {"pid": z.pid, "fresh": fresh, "info": z.info}}
        if fresh:
            meta["zygote"]["start_seconds"] = z.start_seconds
        try:
            z.channel.write(request, payload)
            answer, data = z.channel.read(deadline)
        except (EOFError, TimeoutError, OSError, ValueError) as e:
            self.zygotes.pop(key, None)
            status = z.proc.poll()
            z.kill()
            self.sweep()
            why = "no answer in time" if isinstance(e, TimeoutError) else "it died"
            if status is not None and status < 0:
                why += f" (signal {-status})"
            _log(f"zygote {z.pid} lost: {why}")
            meta.update(zygote_died=why)
            return meta, b""
        answer.pop("n", None)
        meta.update(answer)
        return meta, data

    def serve(self) -> None:
        self.channel.write(
            {
                "op": "hello",
                "protocol": PROTOCOL,
                "pid": os.getpid(),
                "python": sys.version.split()[0],
                "executable": sys.executable,
            }
        )
        while True:
            try:
                req, payload = self.channel.read()
            except EOFError:
                return
            rid = req.get("id")
            try:
                answer, data = self.handle(req, payload)
                answer = dict(answer)
                answer.update(id=rid, ok=True)
            except Exception as e:  # a bad request is answered, never fatal
                answer, data = {"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}"}, b""
            self.channel.write(answer, data)
            reap_orphans(self.owned())

    def close(self) -> None:
        for z in list(self.zygotes.values()):
            z.kill()
        self.zygotes.clear()


def main(argv: List[str]) -> int:
    log = argv[argv.index("--log") + 1] if "--log" in argv else os.devnull
    rfd, wfd = os.dup(0), os.dup(1)  # the channel: never inherited by what runs
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(devnull)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    server = Server(Channel(rfd, wfd), log_fd)
    _log(f"started on Python {sys.version.split()[0]}")
    try:
        server.serve()
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
