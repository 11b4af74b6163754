"""A small async container runtime on aiodocker, with every Docker call bounded in time.

aiodocker's defaults wait forever; here each engine call runs under ``anyio.fail_after``
and its failures become :class:`~atlas_actors.errors.DockerError` /
:class:`~atlas_actors.errors.DockerTimeout`.

* :class:`DockerClient` connects by ``DOCKER_HOST`` (or an explicit host / socket path),
  builds images with no network, and reaps containers by label.
* :class:`Container` (``async with client.container(image, ...)``) is started with no
  network, memory / pids / CPU limits and a per-run label, and is always removed on exit,
  shielded from cancellation.
* :meth:`Container.exec` runs a command with a timeout and keeps only the tail of its
  output; files go in and out as tar archives.

Typical use::

    async with DockerClient() as docker, docker.container("atlas-swe-base:bookworm") as c:
        result = await c.exec(["python3", "-c", "print(1)"], timeout_s=10)
"""

from __future__ import annotations

import io
import json
import os
import socket
import tarfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiodocker
import aiohttp
import anyio

from atlas_actors.errors import DockerError, DockerTimeout
from atlas_actors.sandbox.incontainer.atlas_runtime import Tail

T = TypeVar("T")

LABEL_MANAGED = "org.atlas-actors.managed"
"""Label set on every container this module creates."""
LABEL_RUN = "org.atlas-actors.run"
"""Label naming the run a container belongs to (for :meth:`DockerClient.reap`)."""
LABEL_SESSION = "org.atlas-actors.session"
"""Label naming the command run (all its actors) a container belongs to (set by the CLI)."""
LABEL_OWNER = "org.atlas-actors.owner"
"""``host:pid:start-time`` of the process that created the container: when that process is
gone, the container is an orphan (:meth:`DockerClient.reap_orphans`)."""


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot), None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def owner_label(pid: int | None = None) -> str:
    """This process (or ``pid``) as a :data:`LABEL_OWNER` value."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or '?'}"


def owner_alive(label: str) -> bool | None:
    """True/False for an owner on this host; None when it is another host's (unknown)."""
    host, _, rest = label.rpartition(":")
    host, _, pid = host.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    return _start_time(int(pid)) == rest


_KEEPALIVE = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"
DEFAULT_SOCKET = "/run/atlas-docker.sock"
"""The socket ``scripts/docker-up`` starts dockerd on."""


def resolve_docker_host(host: str | None = None) -> str:
    """The Docker host URL to use: ``host``, else ``$DOCKER_HOST``, else our socket.

    A bare path (``/run/x.sock``) becomes ``unix:///run/x.sock``.
    """
    value = host or os.environ.get("DOCKER_HOST") or ""
    if not value:
        if os.path.exists(DEFAULT_SOCKET):
            value = DEFAULT_SOCKET
        elif os.path.exists("/var/run/docker.sock"):
            value = "/var/run/docker.sock"
        else:
            raise DockerError(
                "no Docker engine configured: set DOCKER_HOST (e.g. "
                f"'export DOCKER_HOST=$(scripts/docker-up)') or start one on {DEFAULT_SOCKET}"
            )
    if value.startswith("/"):
        value = "unix://" + value
    return value


@dataclass
class ExecResult:
    """What a command run in a container did."""

    exit_code: int | None
    """The exit status; None when it timed out (and was killed)."""
    output: str
    """Interleaved stdout and stderr, decoded; only the tail when it was too long."""
    timed_out: bool = False
    truncated: bool = False
    """True when the head of the output was dropped to respect the limit."""
    output_bytes: int = 0
    """Total bytes produced (before truncation)."""
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU time of the command's processes (when measured: by the in-container runtime)."""
    killed: str = ""
    """Why the command could not finish: the in-container runtime running it died, and
    again when the command was retried (empty otherwise)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.killed


@dataclass
class ContainerLimits:
    """Resource limits for a container."""

    memory_mb: int = 2048
    """Memory limit (swap disabled: memory+swap equals it)."""
    pids: int = 512
    """Maximum number of processes/threads in the container."""
    cpus: float = 1.0
    """CPU share (number of cores)."""
    nofile: int = 4096
    """Open files per process."""
    extra_host_config: dict[str, Any] = field(default_factory=dict)


def tar_files(files: Mapping[str, bytes | str], mode: int = 0o644) -> bytes:
    """A tar archive (bytes) holding ``files`` (relative path -> content)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name.lstrip("/"))
            info.size = len(data)
            info.mode = mode
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


class DockerClient:
    """A connection to a Docker engine; an async context manager.

    ``host`` is a URL (``unix:///run/atlas-docker.sock``, ``tcp://...``) or a socket
    path; default ``$DOCKER_HOST``. ``api_timeout_s`` bounds every engine call that is
    not given its own timeout.
    """

    def __init__(self, host: str | None = None, *, api_timeout_s: float = 60.0) -> None:
        self.host = resolve_docker_host(host)
        self.api_timeout_s = api_timeout_s
        self._docker: aiodocker.Docker | None = None

    async def __aenter__(self) -> DockerClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Open the connection and check the engine answers."""
        if self._docker is not None:
            return
        timeout = aiohttp.ClientTimeout(total=None, connect=10, sock_connect=10)
        try:
            self._docker = aiodocker.Docker(url=self.host, timeout=timeout)
        except (ValueError, OSError) as e:
            raise DockerError(f"cannot connect to Docker at {self.host}: {e}") from e
        try:
            await self.ping()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        docker, self._docker = self._docker, None
        if docker is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await docker.close()

    @property
    def api(self) -> aiodocker.Docker:
        """The underlying aiodocker client (connected)."""
        if self._docker is None:
            raise DockerError("Docker client is not connected: use 'async with DockerClient()'")
        return self._docker

    async def call(self, what: str, coro: Awaitable[T], timeout_s: float | None = None) -> T:
        """Await an engine call under a timeout, mapping failures to DockerError."""
        limit = self.api_timeout_s if timeout_s is None else timeout_s
        try:
            with anyio.fail_after(limit):
                return await coro
        except TimeoutError as e:
            raise DockerTimeout(f"Docker call '{what}' did not finish in {limit:.0f}s") from e
        except aiodocker.exceptions.DockerError as e:
            raise DockerError(f"Docker call '{what}' failed: {e.message} ({e.status})") from e
        except (aiohttp.ClientError, OSError) as e:
            raise DockerError(
                f"Docker call '{what}' failed: {e} (is dockerd running at {self.host}?)"
            ) from e

    async def ping(self) -> None:
        """Raise DockerError unless the engine answers."""
        await self.call("ping", self.api._query_json("_ping", versioned_api=False), 10)

    async def version(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("version", self.api.version())
        return result

    async def image_exists(self, tag: str) -> bool:
        try:
            await self.call("image inspect", self.api.images.inspect(tag))
        except DockerError as e:
            if _status(e) == 404:
                return False
            raise
        return True

    async def remove_image(self, tag: str) -> None:
        await self.call("image delete", self.api.images.delete(tag, force=True))

    async def build_image(
        self,
        context_tar: bytes,
        tag: str,
        *,
        timeout_s: float = 900.0,
        labels: Mapping[str, str] | None = None,
        network: str = "none",
        nocache: bool = False,
        on_line: Callable[[str], None] | None = None,
    ) -> list[str]:
        """``docker build`` from a tar build context, with ``network`` (default none).

        Returns the build log lines (each also given to ``on_line`` as it arrives);
        raises DockerError naming the failing step.
        """
        params: dict[str, Any] = {
            "t": tag,
            "rm": "1",
            "forcerm": "1",
            "networkmode": network,
            "nocache": "1" if nocache else "0",
        }
        if labels:
            params["labels"] = json.dumps(dict(labels))

        async def run() -> list[str]:
            lines: list[str] = []
            async with self.api._query(
                "build",
                method="POST",
                params=params,
                data=context_tar,
                headers={"content-type": "application/x-tar"},
                timeout=aiohttp.ClientTimeout(total=None),
            ) as resp:
                buf = b""
                async for chunk in resp.content.iter_any():
                    buf += chunk
                    while b"\n" in buf:
                        raw, buf = buf.split(b"\n", 1)
                        if raw.strip():
                            _build_line(json.loads(raw), lines, on_line)
                if buf.strip():
                    _build_line(json.loads(buf), lines, on_line)
            return lines

        return await self.call(f"build {tag}", run(), timeout_s)

    async def list_containers(
        self, run: str | None = None, *, session: str | None = None
    ) -> list[str]:
        """Ids of our containers (all, one run's, or one session's), running or not."""
        label = f"{LABEL_MANAGED}=1"
        if run:
            label = f"{LABEL_RUN}={run}"
        elif session:
            label = f"{LABEL_SESSION}={session}"
        filters = json.dumps({"label": [label]})
        found = await self.call(
            "container list", self.api.containers.list(all=True, filters=filters)
        )
        return [c.id for c in found]

    async def orphans(self) -> list[str]:
        """Our containers whose creating process (on this host) is gone."""
        filters = json.dumps({"label": [f"{LABEL_MANAGED}=1", LABEL_OWNER]})
        found = await self.call(
            "container list", self.api.containers.list(all=True, filters=filters)
        )
        out = []
        for c in found:
            owner = (c["Labels"] or {}).get(LABEL_OWNER, "")
            if owner_alive(owner) is False:
                out.append(c.id)
        return out

    async def reap_orphans(self) -> int:
        """Remove the containers of processes that died without cleaning up (a killed
        run); containers of live processes and of other hosts are left alone."""
        return await self._remove_containers(await self.orphans())

    async def reap(self, run: str | None = None, *, session: str | None = None) -> int:
        """Remove the leftover containers of ``run`` or ``session`` (default: all of ours);
        how many."""
        return await self._remove_containers(await self.list_containers(run, session=session))

    async def _remove_containers(self, ids: Sequence[str]) -> int:
        removed = 0
        for cid in ids:
            try:
                await self.call(
                    "container delete",
                    self.api.containers.container(cid).delete(force=True, v=True),
                )
                removed += 1
            except DockerError as e:
                if _status(e) not in (404, 409):
                    raise
        return removed

    @asynccontextmanager
    async def container(
        self,
        image: str,
        *,
        run: str | None = None,
        limits: ContainerLimits | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        start_timeout_s: float = 60.0,
    ) -> AsyncIterator[Container]:
        """A started container from ``image``, removed on exit (even on cancellation)."""
        c = Container(self, image, run=run, limits=limits, workdir=workdir, env=env, labels=labels)
        try:
            await c.start(timeout_s=start_timeout_s)
            yield c
        finally:
            await c.remove()


def _status(e: DockerError) -> int | None:
    cause = e.__cause__
    if isinstance(cause, aiodocker.exceptions.DockerError):
        return int(cause.status)
    return None


def _build_line(
    msg: dict[str, Any], lines: list[str], on_line: Callable[[str], None] | None = None
) -> None:
    if "error" in msg or "errorDetail" in msg:
        detail = msg.get("errorDetail", {}).get("message") or msg.get("error")
        if on_line is not None:
            on_line(f"error: {detail}\n")
        tail = "".join(lines[-20:])
        raise DockerError(f"image build failed: {detail}\n{tail}")
    text = msg.get("stream") or msg.get("status") or ""
    if text:
        lines.append(str(text))
        if on_line is not None:
            on_line(str(text))


class Container:
    """One container: created with no network and resource limits, labelled per run."""

    def __init__(
        self,
        client: DockerClient,
        image: str,
        *,
        run: str | None = None,
        limits: ContainerLimits | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.client = client
        self.image = image
        self.labels = dict(labels or {})
        """Extra labels (e.g. :data:`LABEL_SESSION`)."""
        self.run = run or uuid.uuid4().hex[:12]
        self.limits = limits or ContainerLimits()
        self.workdir = workdir
        self.env = dict(env or {})
        self._container: aiodocker.containers.DockerContainer | None = None

    @property
    def id(self) -> str:
        if self._container is None:
            raise DockerError("container not started")
        return str(self._container.id)

    async def start(self, timeout_s: float = 60.0) -> None:
        """Create and start the container; it idles until commands are exec'd."""
        lim = self.limits
        memory = lim.memory_mb * 1024 * 1024
        host_config: dict[str, Any] = {
            "NetworkMode": "none",
            "Memory": memory,
            "MemorySwap": memory,
            "PidsLimit": lim.pids,
            "NanoCpus": int(lim.cpus * 1e9),
            "SecurityOpt": ["no-new-privileges"],
            "Ulimits": [{"Name": "nofile", "Soft": lim.nofile, "Hard": lim.nofile}],
            **lim.extra_host_config,
        }
        config: dict[str, Any] = {
            "Image": self.image,
            # PID 1 is a bash loop: it reaps orphans and survives `kill -9 -1` (used to
            # clear stray processes between runs), restarting its sleep.
            "Cmd": ["bash", "-c", _KEEPALIVE],
            "Labels": {
                **self.labels,
                LABEL_MANAGED: "1",
                LABEL_RUN: self.run,
                LABEL_OWNER: owner_label(),
            },
            "NetworkDisabled": True,
            "Env": [f"{k}={v}" for k, v in self.env.items()],
            "HostConfig": host_config,
        }
        if self.workdir:
            config["WorkingDir"] = self.workdir
        api = self.client.api

        async def create_and_start() -> None:
            self._container = await api.containers.create(config)
            await self._container.start()

        try:
            await self.client.call(
                f"start container from {self.image}", create_and_start(), timeout_s
            )
        except BaseException:
            await self.remove()
            raise

    async def remove(self) -> None:
        """Force-remove the container; shielded from cancellation, never raises."""
        c, self._container = self._container, None
        if c is None:
            return
        with anyio.CancelScope(shield=True):
            # Gone already, or left for the label reaper: never mask the caller's error.
            with suppress(DockerError):
                await self.client.call("container delete", c.delete(force=True, v=True), 30)

    @property
    def _api_container(self) -> aiodocker.containers.DockerContainer:
        if self._container is None:
            raise DockerError("container not started (or already removed)")
        return self._container

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float = 60.0,
        output_limit_bytes: int = 1_000_000,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        user: str = "",
    ) -> ExecResult:
        """Run ``cmd`` (a string runs under ``bash -c``) with a timeout; keep the output tail.

        On timeout every process started in the container is killed (``kill -9 -1`` from a
        fresh exec; the idle init stays) and ``timed_out`` is set.
        """
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        container = self._api_container
        tail = Tail(output_limit_bytes)
        started = time.monotonic()
        exit_code: int | None = None
        timed_out = False
        wd = workdir or self.workdir

        async def run() -> int | None:
            ex = await container.exec(
                argv, workdir=wd, environment=dict(env) if env else None, user=user
            )
            async with ex.start(detach=False) as stream:
                while True:
                    msg = await stream.read_out()
                    if msg is None:
                        break
                    tail.add(msg.data)
            info = await ex.inspect()
            code = info.get("ExitCode")
            return int(code) if code is not None else None

        try:
            with anyio.fail_after(timeout_s):
                exit_code = await run()
        except TimeoutError:
            timed_out = True
        except aiodocker.exceptions.DockerError as e:
            raise DockerError(f"exec in container failed: {e.message} ({e.status})") from e
        except (aiohttp.ClientError, OSError) as e:
            raise DockerError(f"exec in container failed: {e}") from e
        if timed_out:
            await self.kill_processes()
        return ExecResult(
            exit_code=exit_code,
            output=tail.text(),
            timed_out=timed_out,
            truncated=tail.truncated,
            output_bytes=tail.total,
            seconds=time.monotonic() - started,
        )

    async def attach(
        self,
        cmd: Sequence[str],
        *,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float = 60.0,
    ) -> Any:
        """Start ``cmd`` with its standard input attached (a long-lived process the host
        talks to); the aiodocker stream (``write_in``, ``read_out``, ``close``)."""
        container = self._api_container

        async def start() -> Any:
            ex = await container.exec(
                list(cmd),
                stdin=True,
                workdir=workdir or self.workdir,
                environment=dict(env) if env else None,
            )
            stream = ex.start(detach=False)
            await stream._init()
            return stream

        return await self.client.call("exec (attached)", start(), timeout_s)

    async def kill_processes(self) -> None:
        """Kill every process in the container except its init (best effort, bounded)."""
        if self._container is None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(15), suppress(DockerError):
            await self.exec(["kill", "-9", "-1"], timeout_s=10)

    async def put_archive(self, dest_dir: str, tar_bytes: bytes, timeout_s: float = 60.0) -> None:
        """Extract a tar archive into ``dest_dir`` in the container."""
        await self.client.call(
            f"put archive into {dest_dir}",
            self._api_container.put_archive(dest_dir, tar_bytes),  # type: ignore[no-untyped-call]
            timeout_s,
        )

    async def put_files(
        self, dest_dir: str, files: Mapping[str, bytes | str], *, mode: int = 0o644
    ) -> None:
        """Write ``files`` (path relative to ``dest_dir`` -> content) into the container."""
        await self.put_archive(dest_dir, tar_files(files, mode=mode))

    async def read_file(self, path: str, *, limit_bytes: int = 50_000_000) -> bytes:
        """The content of one regular file in the container."""

        async def get() -> bytes:
            tar = await self._api_container.get_archive(path)
            with tar:
                # the archive of a file holds that file; of a directory, the directory
                # first and then its contents (which are not ``path``)
                member = next(iter(tar.getmembers()), None)
                if member is not None and member.isfile():
                    if member.size > limit_bytes:
                        raise DockerError(
                            f"{path} is {member.size} bytes, over the {limit_bytes} limit"
                        )
                    f = tar.extractfile(member)
                    return f.read() if f is not None else b""
            raise DockerError(f"{path} is not a regular file in the container")

        return await self.client.call(f"read {path}", get())


async def watch_session(
    session: str, host: str | None = None, *, grace_s: float = 60.0, quiet_s: float = 8.0
) -> int:
    """Wait for standard input to close; unless the last thing said on it was ``done``
    (a clean end), the process that started us died: remove ``session``'s containers
    until none has appeared for ``quiet_s`` seconds (environment actors may outlive
    their driver briefly), at most ``grace_s``; how many.

    The CLI starts this as a separate process in its own session (``watch`` below), with
    a pipe as its standard input: a run killed with SIGKILL leaves no containers behind.
    """
    said = await anyio.to_thread.run_sync(_drain_stdin, abandon_on_cancel=True)
    if said.strip() == b"done":
        return 0  # a clean end: the run removed its containers itself
    removed = 0
    deadline = time.monotonic() + grace_s
    quiet_since = time.monotonic()
    async with DockerClient(host) as client:
        while time.monotonic() < deadline:
            n = await client.reap(session=session)
            removed += n
            now = time.monotonic()
            if n:
                quiet_since = now
            elif now - quiet_since >= quiet_s:
                break
            await anyio.sleep(1.0)
    return removed


def _drain_stdin() -> bytes:
    """Everything on standard input until it closes (a few bytes at most)."""
    import sys

    said = b""
    while chunk := sys.stdin.buffer.read(65536):
        said = (said + chunk)[-64:]
    return said


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m atlas_actors.sandbox.docker {ping,list,reap,watch}``.

    ``reap`` removes all our containers, one ``--run``'s or ``--session``'s, or with
    ``--orphans`` those whose creating process on this host is gone (what a killed run
    leaves). ``watch --session S`` waits for its standard input to close, then removes
    the session's containers (the CLI's guard against SIGKILL).
    """
    import argparse

    ap = argparse.ArgumentParser(prog="python -m atlas_actors.sandbox.docker")
    ap.add_argument("command", choices=["ping", "list", "reap", "watch"])
    ap.add_argument("--run", default=None, help="only this run's containers (label value)")
    ap.add_argument("--session", default=None, help="only this session's containers")
    ap.add_argument(
        "--orphans",
        action="store_true",
        help="reap: only containers whose creating process on this host is gone",
    )
    ap.add_argument("--host", default=None, help="Docker host (default: $DOCKER_HOST)")
    args = ap.parse_args(argv)

    async def go() -> int:
        if args.command == "watch":
            if not args.session:
                ap.error("watch needs --session")
            n = await watch_session(args.session, args.host)
            if n:
                print(f"removed {n} container(s) of session {args.session}")
            return 0
        async with DockerClient(args.host) as client:
            if args.command == "ping":
                version = await client.version()
                print(f"{client.host}: Docker {version.get('Version', '?')}")
            elif args.command == "list":
                for cid in await client.list_containers(args.run, session=args.session):
                    print(cid)
            elif args.orphans:
                print(f"removed {await client.reap_orphans()} orphaned container(s)")
            else:
                print(f"removed {await client.reap(args.run, session=args.session)} container(s)")
        return 0

    try:
        return anyio.run(go)
    except DockerError as e:
        print(f"error: {e}")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
