"""A private Docker registry on loopback for the image tests: Debian's ``docker-registry``
(the distribution registry, 2.x) started on 127.0.0.1 with a config written here, a
throttling proxy in front of it (a slow registry, for killing a run mid-pull), a silent
port (a registry that never answers), and helpers to push an image there and count pulls.

Nothing here talks to an outside address: the registry, the proxy and the engine are all
on this machine, and Docker treats 127.0.0.0/8 registries as insecure (plain HTTP) by
default.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from atlas_actors.sandbox.docker import DockerClient, tar_files

REGISTRY_BIN = "docker-registry"


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@dataclass
class LocalRegistry:
    """A running ``docker-registry serve`` on ``127.0.0.1:port``."""

    port: int
    root: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.root / "registry.log"

    def start(self, wait_s: float = 30.0) -> None:
        binary = shutil.which(REGISTRY_BIN) or "/usr/bin/docker-registry"
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        config = self.root / "config.yml"
        config.write_text(
            "version: 0.1\n"
            "log:\n  level: info\n  accesslog:\n    disabled: false\n"
            "storage:\n"
            f"  filesystem:\n    rootdirectory: {self.root / 'data'}\n"
            "  delete:\n    enabled: true\n"
            f"http:\n  addr: 127.0.0.1:{self.port}\n  secret: atlas-test-secret\n"
        )
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [binary, "serve", str(config)],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"docker-registry exited: {self.log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://{self.host}/v2/", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"docker-registry did not answer on {self.host} in {wait_s}s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class ThrottledProxy:
    """A TCP proxy on 127.0.0.1 that forwards to ``target_port`` at ``rate`` bytes/s
    (registry to client); counts the bytes it forwarded."""

    def __init__(self, target_port: int, rate: int) -> None:
        self.target_port = target_port
        self.rate = rate
        self.port = free_port()
        self.forwarded = 0
        self._stop = threading.Event()
        self._srv = socket.socket()
        self._srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._srv.bind(("127.0.0.1", self.port))
        self._srv.listen(64)
        self._srv.settimeout(0.2)
        self._threads: list[threading.Thread] = []
        self._start(self._accept)

    def _start(self, fn: object, *args: object) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True)  # type: ignore[arg-type]
        t.start()
        self._threads.append(t)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._srv.accept()
            except OSError:
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            self._start(self._pipe, client, upstream, False)
            self._start(self._pipe, upstream, client, True)

    def _pipe(self, src: socket.socket, dst: socket.socket, throttle: bool) -> None:
        src.settimeout(0.5)
        chunk = max(1024, self.rate // 20) if throttle else 65536
        try:
            while not self._stop.is_set():
                try:
                    data = src.recv(chunk)
                except TimeoutError:
                    continue
                if not data:
                    break
                dst.sendall(data)
                if throttle:
                    self.forwarded += len(data)
                    time.sleep(len(data) / self.rate)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()

    def close(self) -> None:
        self._stop.set()
        self._srv.close()


@dataclass
class SilentPort:
    """A port on 127.0.0.1 that accepts connections and never answers."""

    port: int = field(default_factory=free_port)
    _held: list[socket.socket] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._srv = socket.socket()
        self._srv.bind(("127.0.0.1", self.port))
        self._srv.listen(64)
        self._srv.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._srv.accept()
                self._held.append(conn)
            except OSError:
                continue

    def close(self) -> None:
        self._stop.set()
        for c in self._held:
            c.close()
        self._srv.close()


async def push_unique_image(base: str, name: str, *, blob_mb: int = 4) -> None:
    """Build ``name`` on ``base`` with one layer of ``blob_mb`` random MB (a layer no
    other image has, so a pull really downloads it), push it, remove it locally."""
    dockerfile = (
        f"FROM {base}\n"
        f"RUN head -c {blob_mb * 1_000_000} /dev/urandom > /atlas-test-blob "
        f"&& echo {os.urandom(8).hex()} > /atlas-test-nonce\n"
    )
    async with DockerClient() as docker:
        await docker.build_image(tar_files({"Dockerfile": dockerfile}), name, timeout_s=300)
        async for msg in docker.api.images.push(name, stream=True):
            if "error" in msg:
                raise RuntimeError(f"push {name}: {msg['error']}")
        await docker.remove_image(name)


async def remove_local(name: str) -> None:
    """Remove ``name`` from the engine if it is there."""
    async with DockerClient() as docker:
        if await docker.image_exists(name):
            await docker.remove_image(name)


async def pull_events(name: str, since: float) -> int:
    """How many times the engine pulled ``name`` since ``since`` (its events log)."""
    async with DockerClient() as docker:
        params = {
            "since": f"{since - 2:.3f}",
            "until": f"{time.time():.3f}",
            "filters": json.dumps({"type": ["image"], "event": ["pull"]}),
        }
        async with docker.api._query("events", params=params) as resp:
            body = await resp.read()
    events = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
    return sum(
        1 for e in events if e.get("id") == name and int(e.get("timeNano", 0)) >= since * 1e9
    )


async def containers_from(image: str) -> list[str]:
    """Ids of our containers (any state) made from ``image`` (by the name they were
    created with: the image itself may be gone)."""
    async with DockerClient() as docker:
        filters = json.dumps({"label": ["org.atlas-actors.managed=1"]})
        found = await docker.call(
            "container list", docker.api.containers.list(all=True, filters=filters)
        )
        return [c.id for c in found if c["Image"] == image]
