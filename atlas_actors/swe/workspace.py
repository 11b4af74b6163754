"""Where a SWE instance's repository lives while it is worked on and tested.

Two backends with one interface (:class:`Workspace`): shell commands run in the repository
at ``/testbed`` with a timeout and a capped output, files are read and written by their
path inside, and :meth:`Workspace.restart` gives a fresh one.

* :class:`DockerWorkspace`: a container from the instance image (no network, memory,
  pids and CPU limits, labelled per run), removed on close even when cancelled.
  Commands, file reads and writes and test runs go to the in-container runtime
  (:mod:`atlas_actors.sandbox.runtime`), started once with the container; where it cannot
  start (no Python in the image), each goes through its own ``docker exec`` instead
  (said once in the log).
* :class:`BubblewrapWorkspace`: a copy of a local checkout bound at ``/testbed`` inside a
  bubblewrap sandbox (every namespace unshared, no network, read-only system, rlimits and a
  pids cgroup), for machines without Docker. The host needs the tools the eval script
  uses (bash, git, patch; python3 with pytest: this process's interpreter is used).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import anyio

from atlas_actors.errors import DockerError, RuntimeDied, RuntimeUnavailable, SandboxError
from atlas_actors.sandbox.docker import Container, ContainerLimits, DockerClient, ExecResult
from atlas_actors.sandbox.runtime import (
    Channel,
    ExecChannel,
    RuntimeClient,
    RuntimeSession,
    runtime_sources,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

IO_DIR = "/atlas_io"
"""A directory outside the repository for the patch, the eval script and reports."""
TESTBED = "/testbed"
KEEP_FILE = f"{IO_DIR}/keep-ignored"
"""The ignored paths the repository held when the workspace started (an editable install's
``*.egg-info``, extensions compiled in place, generated version files), one ``git clean
-e`` pattern per line: a reset keeps them."""

PREPARE = (
    f"mkdir -p {IO_DIR} && cd {TESTBED} && "
    "git ls-files -z --others --ignored --exclude-standard --directory | tr '\\0' '\\n' | "
    "sed -e 's/[][*?\\\\]/\\\\&/g' -e 's|^|/|' "
    f"> {KEEP_FILE}"
)
"""Bash run once when a workspace starts, before anything touches the tree: the IO folder,
and the ignored paths present (the image's state) as anchored, escaped patterns."""

RESET_FUNCTION = f"""atlas_reset() {{
  local keep=() p
  if [ -f {KEEP_FILE} ]; then
    while IFS= read -r p; do keep+=(-e "$p"); done < {KEEP_FILE}
  fi
  git reset -q --hard "$1" && git clean -fdxq ${{keep[@]+"${{keep[@]}}"}}
}}"""
"""Bash defining ``atlas_reset COMMIT``: the repository back to the state the image had at
``COMMIT``: tracked files reset, every untracked file removed except the ignored paths
that were there when the workspace started (:data:`KEEP_FILE`). Every reset goes
through it."""


SHIP_DIR = f"{IO_DIR}/atlas"
"""Where the in-container programs go: the runtime, its test zygote, and the repair tools'
scripts (on ``PYTHONPATH`` for their test runs)."""
RUNTIME_LOG = f"{IO_DIR}/runtime.log"
_REPAIR_SCRIPTS = Path(__file__).with_name("repair") / "incontainer"


def shipped_programs() -> dict[str, bytes]:
    """Every in-container program by its path inside: the runtime and its zygote, and
    the fast screen's worker and the localisation plugin (the zygote runs them)."""
    files = {f"{SHIP_DIR}/{name}": data for name, data in runtime_sources().items()}
    for name in ("atlas_batch.py", "atlas_trace.py"):
        files[f"{SHIP_DIR}/{name}"] = (_REPAIR_SCRIPTS / name).read_bytes()
    return files


def boot_command(prepare: bool) -> str:
    """Bash that starts the runtime (after :data:`PREPARE` on a new workspace)."""
    run = (
        'exec "$(command -v python3 || command -v python || echo python3)" '
        f"{SHIP_DIR}/atlas_runtime.py --log {RUNTIME_LOG}"
    )
    return f"{PREPARE} && {run}" if prepare else run


_FELL_BACK: set[str] = set()


def _fall_back(where: str, why: object) -> None:
    """Say once per image (or checkout) that its workspaces run without the runtime."""
    if where not in _FELL_BACK:
        _FELL_BACK.add(where)
        log.warning(
            "%s: the in-container runtime cannot run here (%s); commands and test runs "
            "go through one exec each instead",
            where,
            why,
        )


class RuntimeBacked:
    """What both workspaces share about their runtime (:attr:`runtime`, None when it could
    not start): calls through it, restarted and retried once when it dies, and the slow
    path taken for good when it can no longer start."""

    runtime: RuntimeSession | None = None
    where = "workspace"

    async def _via_runtime(self, fn: Callable[[RuntimeClient], Awaitable[T]]) -> T | None:
        """``fn`` through the runtime; None when there is none (the caller takes the slow
        path). RuntimeDied when it died twice during the call."""
        if self.runtime is None:
            return None
        try:
            return await self.runtime.call(fn)
        except RuntimeUnavailable as e:
            _fall_back(self.where, e)
            session, self.runtime = self.runtime, None
            await session.aclose()
            return None

    async def _run_via_runtime(
        self,
        cmd: str,
        files: Mapping[str, bytes],
        timeout_s: float,
        env: Mapping[str, str] | None,
        output_limit_bytes: int,
    ) -> ExecResult | None:
        try:
            return await self._via_runtime(
                lambda rt: rt.run(
                    cmd,
                    timeout_s=timeout_s,
                    env=env,
                    cwd=TESTBED,
                    output_limit_bytes=output_limit_bytes,
                    files=files,
                )
            )
        except RuntimeDied as e:
            return ExecResult(exit_code=None, output=str(e), killed=str(e))

    async def read_files(self, paths: list[str]) -> dict[str, bytes | None] | None:
        """Several files in one request (None for one that cannot be read); None when
        this workspace has no runtime."""
        try:
            return await self._via_runtime(lambda rt: rt.read(paths))
        except RuntimeDied:
            return None

    async def read_head(self, path: str, limit_bytes: int) -> tuple[bytes | None, str] | None:
        """The first ``limit_bytes`` of ``path`` and its path with links resolved; None
        when this workspace has no runtime."""
        try:
            return await self._via_runtime(lambda rt: rt.head(path, limit_bytes))
        except RuntimeDied:
            return None

    async def remove_files(self, paths: list[str]) -> None:
        """Delete ``paths`` (those that exist), through the runtime when there is one."""
        try:
            done = await self._via_runtime(lambda rt: rt.write({}, remove=paths))
        except RuntimeDied:
            done = None
        if done is None:
            rm = f"rm -f {' '.join(shlex.quote(p) for p in paths)}"
            await cast("Workspace", self).run(rm, timeout_s=60)

    async def sweep(self) -> None:
        """Kill every process a command left behind (the runtime and its zygotes stay)."""
        await self._via_runtime(lambda rt: rt.request({"op": "sweep"}, timeout_s=60))

    async def tests(
        self,
        *,
        python: str,
        env: Mapping[str, str],
        cwd: str,
        request: Mapping[str, Any],
        timeout_s: float,
    ) -> tuple[dict[str, Any], bytes] | None:
        """A test run by the runtime's zygote for ``python`` and ``env`` (``request``: a
        ``pytest`` or ``batch`` request, see ``atlas_zygote.py``); None when this
        workspace has no runtime. A runtime that died twice on it answers
        ``{"runtime_died": why}``."""
        try:
            return await self._via_runtime(
                lambda rt: rt.zygote(python, env, cwd, request, timeout_s=timeout_s)
            )
        except RuntimeDied as e:
            return {"runtime_died": str(e)}, b""


def reset_command(base_commit: str) -> str:
    """Bash that resets the repository to ``base_commit`` as the image had it (exit status
    non-zero when it failed)."""
    return f"{RESET_FUNCTION}\natlas_reset {shlex.quote(base_commit)}"


class Workspace(Protocol):
    """A repository at ``/testbed`` where commands run (in a container or a sandbox)."""

    async def start(self) -> None:
        """Make the workspace ready (start the container / copy the checkout)."""
        ...

    async def run(
        self,
        cmd: str,
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 1_000_000,
    ) -> ExecResult:
        """Run ``cmd`` with bash in ``/testbed``; a timeout kills everything it started."""
        ...

    async def write_file(self, path: str, data: bytes) -> None:
        """Write a file at ``path`` (under ``/testbed`` or ``/atlas_io``)."""
        ...

    async def run_with_files(
        self,
        files: Mapping[str, bytes],
        cmd: str,
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 1_000_000,
    ) -> ExecResult:
        """Write ``files`` (absolute path -> content), then :meth:`run` ``cmd``."""
        ...

    async def read_file(self, path: str) -> bytes:
        """Read the file at ``path`` (under ``/testbed`` or ``/atlas_io``)."""
        ...

    async def restart(self) -> None:
        """Throw the workspace away and start a fresh one."""
        ...

    async def close(self) -> None:
        """Release everything (shielded from cancellation)."""
        ...


_ARG_CHUNK = 100_000  # under Linux's 128 KiB limit for one argument
_INLINE_LIMIT = 1_000_000  # well under ARG_MAX (2 MiB with the default stack limit)
# bash -c _UNPACK unpack CMD [PATH NCHUNKS CHUNK...]...: write the files, then run CMD.
_UNPACK = r"""
cmd=$1; shift
while [ $# -gt 0 ]; do
  p=$1; n=$2; shift 2; s=
  for ((i = 0; i < n; i++)); do s+=$1; shift; done
  mkdir -p "$(dirname "$p")" && printf %s "$s" | base64 -d > "$p" || exit 97
done
unset s p n
exec bash -c "$cmd"
"""


class DockerWorkspace(RuntimeBacked):
    """A container from the instance image; the repository is at ``/testbed``.

    ``runtime=False`` runs every command with its own ``docker exec`` (the fallback)."""

    def __init__(
        self,
        client: DockerClient,
        image: str,
        *,
        run: str,
        limits: ContainerLimits,
        start_timeout_s: float = 60.0,
        labels: Mapping[str, str] | None = None,
        runtime: bool = True,
    ) -> None:
        self.client = client
        self.image = image
        self.where = image
        self.labels = dict(labels or {})
        self.run_label = run
        self.limits = limits
        self.start_timeout_s = start_timeout_s
        self.use_runtime = runtime
        self.container: Container | None = None
        self.starts = 0
        """Containers started so far (for tests and benchmarks)."""
        self._fresh = False

    async def start(self) -> None:
        if self.container is not None:
            return
        c = Container(
            self.client,
            self.image,
            run=self.run_label,
            limits=self.limits,
            workdir=TESTBED,
            labels=self.labels,
        )
        await c.start(timeout_s=self.start_timeout_s)
        self.container = c
        self.starts += 1
        if self.use_runtime and self.image not in _FELL_BACK:
            self._fresh = True
            session = RuntimeSession(
                self._boot, c.kill_processes, name=self.image, start_timeout_s=120
            )
            try:
                await session.start()
                self.runtime = session
                return
            except RuntimeUnavailable as e:
                _fall_back(self.image, e)
                await session.aclose()
        result = await c.exec(["bash", "-c", PREPARE], timeout_s=60)
        if not result.ok:
            await self.close()
            raise DockerError(f"cannot prepare container from {self.image}: {result.output}")

    async def _boot(self) -> Channel:
        """Start the runtime in the container (the repository's state recorded first when
        the container is new); its channel."""
        prepare, self._fresh = self._fresh, False
        args: list[str] = []
        for path, data in shipped_programs().items():
            args += [path, *_chunks(data)]
        stream = await self._c().attach(
            ["bash", "-c", _UNPACK, "unpack", boot_command(prepare), *args],
            workdir=TESTBED,
            timeout_s=self.start_timeout_s,
        )
        return ExecChannel(stream)

    def _c(self) -> Container:
        if self.container is None:
            raise DockerError("workspace container is not running")
        return self.container

    async def run(
        self,
        cmd: str,
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 1_000_000,
    ) -> ExecResult:
        fast = await self._run_via_runtime(cmd, {}, timeout_s, env, output_limit_bytes)
        if fast is not None:
            return fast
        return await self._c().exec(
            ["bash", "-c", cmd],
            timeout_s=timeout_s,
            output_limit_bytes=output_limit_bytes,
            workdir=TESTBED,
            env=env,
        )

    async def write_file(self, path: str, data: bytes) -> None:
        if await self._via_runtime(lambda rt: rt.write({path: data})) is not None:
            return
        parent, name = os.path.split(path)
        await self._c().put_files(parent or "/", {name: data})

    async def run_with_files(
        self,
        files: Mapping[str, bytes],
        cmd: str,
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 1_000_000,
    ) -> ExecResult:
        """One request to the runtime; without it, one exec: small files travel
        base64-encoded in its arguments (Docker's archive upload re-executes a helper
        process per call); large ones by tar."""
        fast = await self._run_via_runtime(cmd, files, timeout_s, env, output_limit_bytes)
        if fast is not None:
            return fast
        args: list[str] = []
        size = 0
        for path, data in files.items():
            args += [path, *_chunks(data)]
            size += (len(data) + 2) // 3 * 4 + len(path) + 16
        if size > _INLINE_LIMIT:
            for path, data in files.items():
                await self.write_file(path, data)
            return await self.run(
                cmd, timeout_s=timeout_s, env=env, output_limit_bytes=output_limit_bytes
            )
        return await self._c().exec(
            ["bash", "-c", _UNPACK, "unpack", cmd, *args],
            timeout_s=timeout_s,
            output_limit_bytes=output_limit_bytes,
            workdir=TESTBED,
            env=env,
        )

    async def read_file(self, path: str) -> bytes:
        found = await self._via_runtime(lambda rt: rt.read([path]))
        if found is None:
            return await self._c().read_file(path)
        data = found.get(path)
        if data is None:
            raise DockerError(f"{path} is not a regular file in the container")
        return data

    async def restart(self) -> None:
        await self.close()
        await self.start()

    async def close(self) -> None:
        session, self.runtime = self.runtime, None
        if session is not None:
            await session.aclose()
        c, self.container = self.container, None
        if c is not None:
            await c.remove()


def _chunks(data: bytes) -> list[str]:
    """``data`` as _UNPACK's arguments: the number of chunks, then the base64 chunks."""
    b64 = base64.b64encode(data).decode()
    chunks = [b64[i : i + _ARG_CHUNK] for i in range(0, len(b64), _ARG_CHUNK)] or [""]
    return [str(len(chunks)), *chunks]


class BubblewrapWorkspace:
    """A copy of a local checkout, bound at ``/testbed`` inside a bubblewrap sandbox."""

    def __init__(
        self,
        local_repo: str,
        base_commit: str,
        *,
        memory_mb: int = 2048,
        pids: int = 512,
        max_file_mb: int = 512,
        python_bin: str | None = None,
        bwrap_path: str | None = None,
    ) -> None:
        self.local_repo = local_repo
        self.base_commit = base_commit
        self.memory_mb = memory_mb
        self.pids = pids
        self.max_file_mb = max_file_mb
        self.python_bin = python_bin
        self.bwrap_path = bwrap_path
        self.root: Path | None = None
        self.starts = 0

    async def start(self) -> None:
        if self.root is not None:
            return
        from atlas_actors.sandbox import _bwrap

        _bwrap.find_bwrap(self.bwrap_path)  # BubblewrapNotFound early, with the install hint
        root = Path(tempfile.mkdtemp(prefix="atlas-swe-"))
        try:
            await anyio.to_thread.run_sync(self._prepare, root)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        self.root = root
        self.starts += 1
        result = await self.run(PREPARE, timeout_s=60)
        if not result.ok:
            await self.close()
            raise SandboxError(f"cannot prepare the workspace: {result.output[-2000:]}")

    def _prepare(self, root: Path) -> None:
        if not Path(self.local_repo, ".git").exists():
            raise SandboxError(
                f"local_repo={self.local_repo!r} is not a git checkout (needed by the "
                "bubblewrap backend)"
            )
        (root / "io").mkdir()
        testbed = root / "testbed"
        proc = subprocess.run(
            ["git", "clone", "-q", "--no-hardlinks", self.local_repo, str(testbed)],
            capture_output=True,
            timeout=300,
        )
        if proc.returncode != 0:
            raise SandboxError(f"cannot copy {self.local_repo}: {proc.stderr.decode()}")
        proc = subprocess.run(
            ["git", "-C", str(testbed), "-c", "advice.detachedHead=false", "checkout", "-q",
             self.base_commit],
            capture_output=True,
            timeout=300,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SandboxError(
                f"base commit {self.base_commit} not found in {self.local_repo}: "
                f"{proc.stderr.decode()}"
            )

    def _root(self) -> Path:
        if self.root is None:
            raise SandboxError("workspace is not started")
        return self.root

    def host_path(self, path: str) -> Path:
        """The host path of ``path`` inside the sandbox (``/testbed/...``, ``/atlas_io/...``)."""
        root = self._root()
        p = os.path.normpath(path)
        for inside, outside in ((TESTBED, root / "testbed"), (IO_DIR, root / "io")):
            if p == inside or p.startswith(inside + "/"):
                host = outside / os.path.relpath(p, inside)
                real = Path(os.path.realpath(host))
                if real != outside and not str(real).startswith(str(outside) + "/"):
                    raise SandboxError(f"{path} points outside the workspace")
                return host
        raise SandboxError(f"{path}: only paths under {TESTBED} or {IO_DIR} are reachable")

    async def run(
        self,
        cmd: str,
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 1_000_000,
    ) -> ExecResult:
        from atlas_actors.sandbox import _bwrap
        from atlas_actors.sandbox.incontainer.atlas_runtime import Tail

        root = self._root()
        bwrap = _bwrap.find_bwrap(self.bwrap_path)
        python = _bwrap.python_mounts(self.python_bin or _bwrap.default_python())
        sb_env = _bwrap.sandbox_env(python.inside_exe, dict(env or {}))
        sb_env["GIT_CONFIG_NOSYSTEM"] = "1"
        # The host interpreter's pytest plugins are not the repository's: keep them out
        # (the instance images have none either), unless the caller asks otherwise.
        sb_env.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        argv = [
            bwrap,
            "--unshare-all", "--unshare-user", "--disable-userns",
            "--uid", str(_bwrap.SANDBOX_UID), "--gid", str(_bwrap.SANDBOX_UID),
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--hostname", "sandbox",
            *_bwrap.system_mounts(),
            *python.args,
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(256 * 1024 * 1024), "--tmpfs", "/tmp",
            "--bind", str(root / "testbed"), TESTBED,
            "--bind", str(root / "io"), IO_DIR,
            "--chdir", TESTBED,
            "--clearenv",
        ]  # fmt: skip
        for key, value in sb_env.items():
            argv += ["--setenv", key, value]
        argv += ["--", "bash", "-c", cmd]
        cgroup = _bwrap.PidsCgroup(self.pids)
        limits = _bwrap.rlimits(
            memory_mb=self.memory_mb,
            cpu_time_s=timeout_s + 5,
            max_processes=self.pids,
            max_file_bytes=self.max_file_mb * 1024 * 1024,
        )
        tail = Tail(output_limit_bytes)
        started = time.monotonic()
        timed_out = False
        exit_code: int | None = None
        try:
            process = await anyio.open_process(
                _bwrap.launcher_argv(bwrap, argv, limits, cgroup),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as e:
            cgroup.remove()
            raise SandboxError(f"cannot start bwrap: {e}") from e
        try:
            with anyio.move_on_after(timeout_s) as scope:
                assert process.stdout is not None
                async for chunk in process.stdout:
                    tail.add(chunk)
                exit_code = await process.wait()
            if scope.cancelled_caught:
                timed_out = True
                exit_code = None
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    with contextlib.suppress(OSError):
                        os.killpg(process.pid, signal.SIGKILL)
                    await anyio.to_thread.run_sync(cgroup.kill_all)
                    with anyio.move_on_after(10):
                        await process.wait()
                await anyio.to_thread.run_sync(cgroup.remove)
                await process.aclose()
        return ExecResult(
            exit_code=exit_code,
            output=tail.text(),
            timed_out=timed_out,
            truncated=tail.truncated,
            output_bytes=tail.total,
            seconds=time.monotonic() - started,
        )

    async def write_file(self, path: str, data: bytes) -> None:
        host = self.host_path(path)

        def write() -> None:
            host.parent.mkdir(parents=True, exist_ok=True)
            host.write_bytes(data)

        await anyio.to_thread.run_sync(write)

    async def run_with_files(
        self,
        files: Mapping[str, bytes],
        cmd: str,
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 1_000_000,
    ) -> ExecResult:
        for path, data in files.items():
            await self.write_file(path, data)
        return await self.run(
            cmd, timeout_s=timeout_s, env=env, output_limit_bytes=output_limit_bytes
        )

    async def read_file(self, path: str) -> bytes:
        host = self.host_path(path)
        try:
            return await anyio.to_thread.run_sync(host.read_bytes)
        except OSError as e:
            raise SandboxError(f"cannot read {path}: {e.strerror}") from e

    async def restart(self) -> None:
        await self.close()
        await self.start()

    async def close(self) -> None:
        root, self.root = self.root, None
        if root is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(lambda: shutil.rmtree(root, ignore_errors=True))


def new_run_label() -> str:
    """A fresh label value for one environment's containers."""
    return "swe-" + uuid.uuid4().hex[:12]
