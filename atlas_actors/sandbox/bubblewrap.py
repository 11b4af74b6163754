"""Run one Python script in a bubblewrap sandbox (no network, capped resources).

:func:`run_in_bubblewrap` is async (anyio subprocess, never blocks the event loop);
:func:`run_in_bubblewrap_sync` is the same for synchronous callers. See
:mod:`atlas_actors.sandbox._bwrap` for the containment recipe.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream
from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.errors import ConfigError, SandboxError
from atlas_actors.sandbox import _bwrap

__all__ = ["SandboxResult", "run_in_bubblewrap", "run_in_bubblewrap_sync"]

TRUNCATION_MARKER = "...(truncated {n} bytes)...\n"
_CHUNK = 65536


class SandboxResult(BaseModel):
    """Outcome of one sandboxed run. Also readable like the seed's dict: ``result["ok"]``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    """True when the script exited with code 0 before its timeout."""
    exit_code: int | None
    """The exit code; negative for a signal (-9 for SIGKILL); None if it was killed on timeout."""
    timed_out: bool
    """True when the wall-clock timeout killed the sandbox."""
    stdout: str
    """The tail of stdout (at most ``stdout_limit_bytes``), after a truncation marker if cut."""
    stderr: str
    """The tail of stderr, capped the same way."""
    cmd: list[str] = Field(default_factory=list)
    """The bwrap command line that ran."""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    elapsed_s: float = 0.0

    def __getitem__(self, key: str) -> Any:
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in type(self).model_fields else default

    def __contains__(self, key: object) -> bool:
        return key in type(self).model_fields

    def keys(self) -> list[str]:
        return list(type(self).model_fields)


class _Tail:
    """Keeps the last ``limit`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self.buf = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self.buf += data
        if len(self.buf) > 2 * self.limit + _CHUNK:
            del self.buf[: len(self.buf) - self.limit]

    def text(self) -> tuple[str, bool]:
        data = bytes(self.buf[-self.limit :]) if self.limit else b""
        cut = self.total - len(data)
        body = data.decode("utf-8", errors="replace")
        if cut > 0:
            return TRUNCATION_MARKER.format(n=cut) + body, True
        return body, False


def _prepare(
    attempt_dir: str | os.PathLike[str],
    script_path: str | os.PathLike[str],
    python_bin: str | None,
    args: Sequence[str],
    extra_env: Mapping[str, str] | None,
    memory_mb: int | None,
    cpu_time_s: float | None,
    max_processes: int,
    max_file_bytes: int | None,
    tmpfs_mb: int,
    bwrap_path: str | None,
    timeout_s: float,
) -> tuple[list[str], list[str], _bwrap.PidsCgroup]:
    if timeout_s <= 0:
        raise ConfigError(f"timeout_s must be > 0, got {timeout_s!r}")
    if max_processes < 1:
        raise ConfigError(f"max_processes must be >= 1, got {max_processes!r}")
    bwrap = _bwrap.find_bwrap(bwrap_path)
    work = Path(attempt_dir).resolve()
    if not work.is_dir():
        raise FileNotFoundError(f"attempt_dir {str(attempt_dir)!r} is not a directory")
    script = Path(script_path)
    if not script.is_absolute():
        script = work / script
    script = script.resolve()
    if not script.is_relative_to(work):
        raise ConfigError(
            f"script_path {str(script_path)!r} resolves to {script}, outside attempt_dir "
            f"{work}; only scripts inside attempt_dir can run in the sandbox"
        )
    if not script.is_file():
        raise FileNotFoundError(f"script_path {str(script_path)!r} does not exist")
    py = _bwrap.python_mounts(python_bin or _bwrap.default_python())
    env = _bwrap.sandbox_env(py.inside_exe, dict(extra_env or {}))
    inside_script = "/work/" + script.relative_to(work).as_posix()
    argv = _bwrap.bwrap_argv(
        bwrap,
        python=py,
        env=env,
        command=[py.inside_exe, inside_script, *map(str, args)],
        work_dir=str(work),
        tmpfs_mb=tmpfs_mb,
    )
    limits = _bwrap.rlimits(
        memory_mb=memory_mb,
        cpu_time_s=cpu_time_s,
        max_processes=max_processes,
        max_file_bytes=max_file_bytes,
    )
    cgroup = _bwrap.PidsCgroup(max_processes)
    return argv, _bwrap.launcher_argv(bwrap, argv, limits, cgroup), cgroup


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


async def run_in_bubblewrap(
    attempt_dir: str | os.PathLike[str],
    script_path: str | os.PathLike[str],
    python_bin: str | None = None,
    args: Sequence[str] = (),
    timeout_s: float = 30.0,
    stdout_limit_bytes: int = 1_000_000,
    stderr_limit_bytes: int = 1_000_000,
    extra_env: Mapping[str, str] | None = None,
    *,
    memory_mb: int | None = 2048,
    cpu_time_s: float | None = None,
    max_processes: int = 64,
    max_file_bytes: int | None = 256 * 1024 * 1024,
    tmpfs_mb: int = 256,
    bwrap_path: str | None = None,
) -> SandboxResult:
    """Run ``python_bin script_path *args`` in bubblewrap with ``attempt_dir`` as ``/work``.

    Args:
        attempt_dir: host directory mounted read-write at ``/work`` (the working directory).
        script_path: the script, inside ``attempt_dir`` (absolute or relative to it).
        python_bin: interpreter (default: this process's ``sys.executable``, which has numpy;
            ``/usr/bin/python3`` works too). Its install is mounted read-only.
        args: arguments for the script.
        timeout_s: wall-clock limit; on expiry the whole sandbox is SIGKILLed.
        stdout_limit_bytes / stderr_limit_bytes: only the tail is kept, after a marker.
        extra_env: variables added to the cleared environment.
        memory_mb: address-space limit per process (RLIMIT_AS); None for none.
        cpu_time_s: CPU-time limit per process (default: ``timeout_s``).
        max_processes: pids cgroup cap (and RLIMIT_NPROC for non-root callers).
        max_file_bytes: largest file any process may write (RLIMIT_FSIZE).
        tmpfs_mb: size of the sandbox's ``/tmp``.
        bwrap_path: explicit bwrap executable (default: ``bwrap`` on PATH).

    Returns a :class:`SandboxResult`; a script that fails, crashes or times out is a result
    with ``ok=False``, not an exception.

    Raises:
        BubblewrapNotFound: bwrap is not installed.
        ConfigError: the script is outside ``attempt_dir``, or a bad option.
        FileNotFoundError: ``attempt_dir`` or the script does not exist.
        SandboxError: bwrap could not be started.
    """
    argv, launch, cgroup = _prepare(
        attempt_dir, script_path, python_bin, args, extra_env, memory_mb,
        cpu_time_s if cpu_time_s is not None else timeout_s,
        max_processes, max_file_bytes, tmpfs_mb, bwrap_path, timeout_s,
    )  # fmt: skip
    out, err = _Tail(stdout_limit_bytes), _Tail(stderr_limit_bytes)
    start = time.monotonic()
    timed_out = False
    try:
        try:
            proc = await anyio.open_process(
                launch,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise SandboxError(f"could not start bwrap: {exc}") from exc
        try:

            async def pump(stream: ByteReceiveStream | None, tail: _Tail) -> None:
                if stream is None:
                    return
                with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                    while True:
                        tail.feed(await stream.receive(_CHUNK))

            with anyio.move_on_after(timeout_s) as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(pump, proc.stdout, out)
                    tg.start_soon(pump, proc.stderr, err)
                    await proc.wait()
            if scope.cancelled_caught:
                timed_out = True
            _kill_group(proc.pid)
            cgroup.kill_all()
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await proc.wait()
        finally:
            if proc.returncode is None:
                _kill_group(proc.pid)
                with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                    await proc.wait()
            with anyio.CancelScope(shield=True):
                await proc.aclose()
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(cgroup.remove)
    return _result(argv, proc.returncode, timed_out, out, err, time.monotonic() - start)


def _result(
    argv: list[str],
    returncode: int | None,
    timed_out: bool,
    out: _Tail,
    err: _Tail,
    elapsed: float,
) -> SandboxResult:
    stdout, so_cut = out.text()
    stderr, se_cut = err.text()
    code = None if timed_out else returncode
    if code is not None and code > 128 and code - 128 < 65:
        # bwrap reports a signal-killed child as 128 + signo; normalise to -signo
        code = -(code - 128)
    return SandboxResult(
        ok=(not timed_out and code == 0),
        exit_code=code,
        timed_out=timed_out,
        stdout=stdout,
        stderr=stderr,
        cmd=argv,
        stdout_truncated=so_cut,
        stderr_truncated=se_cut,
        elapsed_s=round(elapsed, 4),
    )


def run_in_bubblewrap_sync(
    attempt_dir: str | os.PathLike[str],
    script_path: str | os.PathLike[str],
    python_bin: str | None = None,
    args: Sequence[str] = (),
    timeout_s: float = 30.0,
    stdout_limit_bytes: int = 1_000_000,
    stderr_limit_bytes: int = 1_000_000,
    extra_env: Mapping[str, str] | None = None,
    *,
    memory_mb: int | None = 2048,
    cpu_time_s: float | None = None,
    max_processes: int = 64,
    max_file_bytes: int | None = 256 * 1024 * 1024,
    tmpfs_mb: int = 256,
    bwrap_path: str | None = None,
) -> SandboxResult:
    """Blocking :func:`run_in_bubblewrap`: runs it on an event loop of its own (for threads
    and scripts, not for code already inside an event loop)."""
    return anyio.run(
        functools.partial(
            run_in_bubblewrap,
            attempt_dir,
            script_path,
            python_bin,
            args,
            timeout_s,
            stdout_limit_bytes,
            stderr_limit_bytes,
            extra_env,
            memory_mb=memory_mb,
            cpu_time_s=cpu_time_s,
            max_processes=max_processes,
            max_file_bytes=max_file_bytes,
            tmpfs_mb=tmpfs_mb,
            bwrap_path=bwrap_path,
        )
    )
