"""The host side of the in-container runtime (``incontainer/atlas_runtime.py``).

A workspace starts the runtime once, as one long-lived process in its container (or
sandbox), and sends it every command, file read and write, and test run over that
process's standard input and output, instead of a ``docker exec`` (or a new sandbox)
each (what each costs: docs/benchmarks.md). Test runs go to a zygote that has imported
pytest once and forks a child per run (``incontainer/atlas_zygote.py``).

* :class:`RuntimeClient` speaks the framing over a :class:`Channel` (an attached Docker
  exec, :class:`ExecChannel`, or a subprocess's pipes, :class:`ProcessChannel`).
* :class:`RuntimeSession` keeps a runtime up: when it dies during a call (a test that
  kills every process, a fork bomb that leaves it nothing), it is started again and the
  call retried once; a second death is :class:`~atlas_actors.errors.RuntimeDied`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio
import anyio.abc

from atlas_actors.errors import RuntimeDied, RuntimeUnavailable
from atlas_actors.sandbox.docker import ExecResult

log = logging.getLogger(__name__)
T = TypeVar("T")

INCONTAINER = Path(__file__).with_name("incontainer")
RUNTIME_FILES = ("atlas_runtime.py", "atlas_zygote.py")
"""The runtime's programs (in ``incontainer/``), shipped side by side."""
GRACE_S = 30.0
"""How much longer than a request's own timeout the host waits for its answer."""


class Channel(Protocol):
    """A byte stream to the runtime process and back."""

    async def send(self, data: bytes) -> None: ...

    async def receive(self) -> bytes:
        """The next bytes from the runtime's standard output; ``b""`` at the end."""
        ...

    async def aclose(self) -> None: ...

    def diagnostics(self) -> str:
        """What the process said on its standard error (why it ended early)."""
        ...


class ExecChannel:
    """The attached standard input and output of one ``docker exec`` (an aiodocker
    stream): stdout frames are the channel, stderr frames are kept for diagnostics."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.stderr = b""

    async def send(self, data: bytes) -> None:
        await self.stream.write_in(data)

    async def receive(self) -> bytes:
        while True:
            msg = await self.stream.read_out()
            if msg is None:
                return b""
            if msg.stream == 2:
                self.stderr = (self.stderr + msg.data)[-4000:]
                continue
            if msg.data:
                return bytes(msg.data)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            await self.stream.close()

    def diagnostics(self) -> str:
        return self.stderr.decode("utf-8", "replace").strip()


class ProcessChannel:
    """The pipes of a local subprocess (the bubblewrap sandbox running the runtime)."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def receive(self) -> bytes:
        assert self.process.stdout is not None
        try:
            return await self.process.stdout.receive(1 << 20)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            if self.process.returncode is None:
                self.process.kill()
            with anyio.move_on_after(10):
                await self.process.wait()
            await self.process.aclose()

    def diagnostics(self) -> str:
        return ""


def _frame(header: Mapping[str, Any], payload: bytes) -> bytes:
    head = dict(header)
    head["n"] = len(payload)
    return json.dumps(head, separators=(",", ":")).encode() + b"\n" + payload


class RuntimeClient:
    """Requests to one running runtime (see ``atlas_runtime.py`` for the protocol)."""

    def __init__(self, channel: Channel, name: str = "runtime") -> None:
        self.channel = channel
        self.name = name
        self.hello: dict[str, Any] = {}
        self.dead = ""
        """Why the runtime ended ('' while it runs)."""
        self._buf = bytearray()
        self._lock = anyio.Lock()
        self._next_id = 0

    async def _fill(self) -> None:
        data = await self.channel.receive()
        if not data:
            why = self.channel.diagnostics()
            raise EOFError(f"the runtime ended{': ' + why[-1000:] if why else ''}")
        self._buf += data

    async def _next_frame(self) -> tuple[dict[str, Any], bytes]:
        """The next whole frame. Bytes leave the buffer only with a whole frame, so a
        read cancelled half way leaves the stream where it was."""
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                header: dict[str, Any] = json.loads(bytes(self._buf[:end]))
                n = int(header.get("n") or 0)
                if len(self._buf) >= end + 1 + n:
                    payload = bytes(self._buf[end + 1 : end + 1 + n])
                    del self._buf[: end + 1 + n]
                    return header, payload
            await self._fill()

    async def start(self, timeout_s: float) -> dict[str, Any]:
        """Wait for the runtime's greeting; RuntimeUnavailable when it does not come."""
        try:
            with anyio.fail_after(timeout_s):
                header, _ = await self._next_frame()
        except (EOFError, TimeoutError, ValueError) as e:
            raise RuntimeUnavailable(f"the {self.name} runtime did not start: {e}") from e
        if header.get("op") != "hello":
            raise RuntimeUnavailable(f"the {self.name} runtime said {header!r} first")
        self.hello = header
        return header

    async def request(
        self, header: Mapping[str, Any], payload: bytes = b"", *, timeout_s: float
    ) -> tuple[dict[str, Any], bytes]:
        """One request and its answer; RuntimeDied when the runtime ends or does not
        answer within ``timeout_s``; SandboxError when it reports a failure."""
        if self.dead:
            raise RuntimeDied(self.dead)
        async with self._lock:
            self._next_id += 1
            rid = self._next_id
            try:
                with anyio.fail_after(timeout_s):
                    # A request is sent whole or not at all; a caller cancelled while
                    # waiting leaves its answer to be skipped here by the next request
                    # (the runtime finishes what it was asked, as an exec would).
                    with anyio.CancelScope(shield=True):
                        await self.channel.send(_frame({**header, "id": rid}, payload))
                    while True:
                        answer, data = await self._next_frame()
                        if answer.get("id") == rid:
                            break
            except TimeoutError:
                self.dead = f"no answer from the runtime in {timeout_s:g}s"
                raise RuntimeDied(self.dead) from None
            except (EOFError, OSError, ValueError, anyio.BrokenResourceError) as e:
                self.dead = str(e) or type(e).__name__
                raise RuntimeDied(self.dead) from e
        if not answer.get("ok"):
            from atlas_actors.errors import SandboxError

            raise SandboxError(f"the runtime failed a {header.get('op')} request: {answer}")
        return answer, data

    async def run(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_limit_bytes: int = 1_000_000,
        files: Mapping[str, bytes] | None = None,
        sweep: bool = False,
    ) -> ExecResult:
        """Run ``cmd`` (a string: with ``bash -c``) after writing ``files``."""
        header: dict[str, Any] = {
            "op": "run",
            "timeout": timeout_s,
            "limit": output_limit_bytes,
            "env": dict(env or {}),
            "cwd": cwd,
            "sweep": sweep,
            "files": [[path, len(data), None] for path, data in (files or {}).items()],
        }
        if isinstance(cmd, str):
            header["cmd"] = cmd
        else:
            header["argv"] = list(cmd)
        started = time.monotonic()
        answer, out = await self.request(
            header, b"".join((files or {}).values()), timeout_s=timeout_s + GRACE_S
        )
        return ExecResult(
            exit_code=answer.get("exit_code"),
            output=out.decode("utf-8", errors="replace"),
            timed_out=bool(answer.get("timed_out")),
            truncated=bool(answer.get("truncated")),
            output_bytes=int(answer.get("output_bytes") or 0),
            seconds=time.monotonic() - started,
            cpu_seconds=float(answer.get("cpu") or 0.0),
        )

    async def read(
        self, paths: Sequence[str], *, limit_bytes: int = 50_000_000
    ) -> dict[str, bytes | None]:
        """The contents of ``paths`` (None for one that cannot be read)."""
        found = await self._read_files(paths, limit_bytes, False)
        return {path: data for path, (data, _) in found.items()}

    async def head(self, path: str, limit_bytes: int) -> tuple[bytes | None, str]:
        """The first ``limit_bytes`` of ``path`` and its path with links resolved."""
        return (await self._read_files([path], limit_bytes, True))[path]

    async def _read_files(
        self, paths: Sequence[str], limit_bytes: int, head: bool
    ) -> dict[str, tuple[bytes | None, str]]:
        header = {"op": "read", "paths": list(paths), "limit": limit_bytes, "head": head}
        answer, data = await self.request(header, timeout_s=GRACE_S * 2)
        out: dict[str, tuple[bytes | None, str]] = {}
        offset = 0
        for item in answer["files"]:
            path, size = item["path"], item.get("size")
            if size is None:
                out[path] = (None, path)
                continue
            out[path] = (data[offset : offset + size], item.get("real") or path)
            offset += size
        return out

    async def write(self, files: Mapping[str, bytes], remove: Sequence[str] = ()) -> int:
        """Write ``files`` (path -> content), then delete ``remove``; how many written."""
        header = {
            "op": "write",
            "files": [[p, len(d), None] for p, d in files.items()],
            "remove": list(remove),
        }
        await self.request(header, b"".join(files.values()), timeout_s=GRACE_S * 2)
        return len(files)

    async def zygote(
        self,
        python: str,
        env: Mapping[str, str],
        cwd: str,
        request: Mapping[str, Any],
        *,
        timeout_s: float,
    ) -> tuple[dict[str, Any], bytes]:
        """``request`` (a ``pytest`` or ``batch`` request, with its own ``timeout``) run
        by the zygote for ``python`` and ``env``; the answer says ``unavailable`` when
        no zygote can start there, ``zygote_died`` when it was lost mid-run."""
        header = {
            "op": "zygote",
            "python": python,
            "env": dict(env),
            "cwd": cwd,
            "request": {**request, "timeout": timeout_s},
        }
        return await self.request(header, timeout_s=timeout_s + 2 * GRACE_S + 120)

    async def aclose(self) -> None:
        self.dead = self.dead or "closed"
        await self.channel.aclose()


class RuntimeSession:
    """A runtime kept running: :meth:`call` restarts it when it has died and retries the
    call once when it dies during it.

    ``boot`` starts a runtime process and gives its channel; ``kill`` stops whatever is
    left of one that stopped answering (every process in the container but its init).
    """

    def __init__(
        self,
        boot: Callable[[], Awaitable[Channel]],
        kill: Callable[[], Awaitable[None]],
        *,
        name: str,
        start_timeout_s: float = 60.0,
    ) -> None:
        self._boot = boot
        self._kill = kill
        self.name = name
        self.start_timeout_s = start_timeout_s
        self.client: RuntimeClient | None = None
        self.starts = 0
        """Runtimes started so far (the first, then one per restart)."""
        self.deaths: list[str] = []
        """Why each runtime before the current one ended."""

    async def start(self) -> RuntimeClient:
        """A running runtime (started now if there is none); RuntimeUnavailable when it
        cannot start."""
        if self.client is not None and not self.client.dead:
            return self.client
        if self.client is not None:
            old, self.client = self.client, None
            await old.aclose()
            await self._kill()
        channel = await self._boot()
        client = RuntimeClient(channel, self.name)
        try:
            await client.start(self.start_timeout_s)
        except BaseException:
            await client.aclose()
            raise
        self.starts += 1
        self.client = client
        return client

    async def call(self, fn: Callable[[RuntimeClient], Awaitable[T]]) -> T:
        """``fn(client)``; when the runtime dies during it, start a new one and call
        again, once; RuntimeDied (with both reasons) when it dies again."""
        first = ""
        for attempt in (1, 2):
            client = await self.start()
            try:
                return await fn(client)
            except RuntimeDied as e:
                self.deaths.append(str(e))
                if attempt == 1:
                    first = str(e)
                    log.info("%s runtime died (%s): restarting it, retrying once", self.name, e)
                    continue
                raise RuntimeDied(
                    f"the runtime died twice on this call (restarted after each): first "
                    f"{first}; then {e}"
                ) from e
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()


def runtime_sources() -> dict[str, bytes]:
    """The runtime's programs by file name."""
    return {name: (INCONTAINER / name).read_bytes() for name in RUNTIME_FILES}
