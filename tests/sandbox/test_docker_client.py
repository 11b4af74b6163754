"""The Docker runtime's pure parts, and its errors when no engine answers."""

from __future__ import annotations

import io
import tarfile
import time

import pytest

from atlas_actors.errors import DockerError
from atlas_actors.sandbox.docker import DockerClient, resolve_docker_host, tar_files
from atlas_actors.sandbox.incontainer.atlas_runtime import Tail


def test_tail_keeps_the_end() -> None:
    t = Tail(5)
    for chunk in (b"abc", b"defg", b"hi"):
        t.add(chunk)
    assert t.text() == "efghi" and t.truncated and t.total == 9


def test_host_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_docker_host("/run/x.sock") == "unix:///run/x.sock"
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
    assert resolve_docker_host() == "tcp://127.0.0.1:2375"


def test_tar_files_round_trip() -> None:
    data = tar_files({"a/b.txt": "hello", "c.bin": b"\x00\x01"})
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
        f = tar.extractfile("a/b.txt")
        assert f is not None and f.read() == b"hello"
    assert names == ["a/b.txt", "c.bin"]


async def test_unreachable_engine_is_a_docker_error(tmp_path: object) -> None:
    started = time.monotonic()
    with pytest.raises(DockerError, match="ping"):
        async with DockerClient(f"unix://{tmp_path}/missing.sock"):
            pass
    assert time.monotonic() - started < 15
