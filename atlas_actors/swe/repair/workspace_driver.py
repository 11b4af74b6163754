"""What fault localisation and the batch loop share: the files shipped into the workspace,
the driver script around them (clean tree, the eval script's set-up that applies the
test patch, the work, the eval script's clean-up, clean tree), run as one script or, with
the in-container runtime, as its two halves around a warm test run (:func:`warm_setup`),
and the SWEEnvironment / Workspace target handling."""

from __future__ import annotations

import base64
import gzip
import re
import shlex
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol, runtime_checkable

from atlas_actors.errors import ConfigError, InvalidTaskError, SandboxError
from atlas_actors.sandbox.docker import ExecResult
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.testrun import TestCommand, capture_lines, captured_command
from atlas_actors.swe.workspace import (
    IO_DIR,
    RESET_FUNCTION,
    TESTBED,
    Workspace,
    shipped_programs,
)

PYCACHE_DIR = f"{IO_DIR}/pycache"
"""Where the batch worker caches compiled modules (``sys.pycache_prefix``): outside the
repository, kept for the workspace's life."""


@runtime_checkable
class LendsWorkspace(Protocol):
    """An environment that lends its workspace to a tool (the SWEEnvironment, which runs
    these tools and so is not imported here)."""

    @property
    def instance(self) -> SWEInstance: ...

    def exclusive(self) -> AbstractAsyncContextManager[Workspace]: ...


Target = LendsWorkspace | Workspace


def shipped() -> dict[str, bytes]:
    """The in-container scripts as ``{path inside: content}`` (for a workspace without
    the runtime, which ships them when it starts)."""
    return shipped_programs()


def check_tests(tests: Sequence[str], field: str) -> list[str]:
    """Pytest node ids (``path.py::name``); ConfigError naming ``field`` otherwise."""
    out = []
    for t in tests:
        if not isinstance(t, str) or not t.strip():
            raise ConfigError(f"{field}: test names must be non-empty strings, got {t!r}")
        head = t.split("::", 1)[0]
        if not head.endswith(".py") or head.startswith("/") or ".." in head.split("/"):
            raise ConfigError(
                f"{field}: {t!r} is not a pytest node id relative to the repository "
                "(path/to/test_file.py::test_name); only pytest-style instances are supported"
            )
        out.append(t)
    return out


def eval_parts(instance: SWEInstance) -> tuple[str, str]:
    """The eval script's lines before its test command (set-up: applies the test patch)
    and after it (clean-up), without the shebang."""
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT

    lines = instance.eval_script.splitlines()
    start = next((i for i, x in enumerate(lines) if START_TEST_OUTPUT in x), None)
    end = next((i for i, x in enumerate(lines) if END_TEST_OUTPUT in x), None)
    if start is None or end is None or end < start:
        raise InvalidTaskError(
            f"instance {instance.instance_id}: eval_script lacks the test output markers"
        )
    prefix = [x for x in lines[:start] if not x.startswith("#!")]
    return "\n".join(prefix), "\n".join(lines[end + 1 :])


def marker(nonce: str) -> str:
    return f"@@atlas:{nonce}:"


def driver_parts(instance: SWEInstance, nonce: str) -> tuple[str, str]:
    """The two halves of a bash driver: clean tree at the base commit and the eval
    script's set-up (``$PY``, the interpreter, is set at its end), then the eval script's
    clean-up, clean tree again, and the CPU time of everything the shell ran."""
    base = shlex.quote(instance.base_commit)
    setup, cleanup = eval_parts(instance)
    mark = marker(nonce)
    head = f"""#!/bin/bash
rm -f "$0"
cd {TESTBED} || {{ echo "{mark}error cannot enter {TESTBED}"; exit 0; }}
{RESET_FUNCTION}
if ! atlas_reset {base} >/dev/null 2>&1; then
  echo "{mark}error cannot reset the repository to {base}"; exit 0
fi
{{
{setup}
}} >{IO_DIR}/atlas-{nonce}-setup.log 2>&1
set +eux +o pipefail
PY="$(command -v python3 || command -v python)"
"""
    tail = f"""#!/bin/bash
rm -f "$0"
{RESET_FUNCTION}
{{
{cleanup}
}} >/dev/null 2>&1
cd {TESTBED} && atlas_reset {base} >/dev/null 2>&1
times >{IO_DIR}/atlas-{nonce}-times 2>&1  # this shell's children: every process above
echo "{mark}times $(tr '\\n' ' ' <{IO_DIR}/atlas-{nonce}-times)"
rm -f {IO_DIR}/atlas-{nonce}-* {IO_DIR}/atlas-{nonce}.*
"""
    return head, tail


def driver(instance: SWEInstance, nonce: str, body: str) -> str:
    """One bash script: :func:`driver_parts` around ``body``, which finds ``$PY`` (the
    interpreter) and the shipped scripts on ``PYTHONPATH``."""
    head, tail = driver_parts(instance, nonce)
    return head + body + "\n" + tail.split("\n", 2)[2]


def has_runtime(ws: Any) -> bool:
    """Whether ``ws`` runs its tests through the in-container runtime."""
    return getattr(ws, "runtime", None) is not None


async def warm_setup(
    ws: Any, instance: SWEInstance, nonce: str, timeout_s: float
) -> tuple[ExecResult, TestCommand | None]:
    """The first half of the driver, run through the runtime, with what ``"$PY" -m pytest``
    would run captured; the command is None when it cannot run in the zygote.
    SandboxError when the driver could not reset the repository."""
    head, _ = driver_parts(instance, nonce)
    script = head + capture_lines(nonce, '"$PY" -m pytest') + "\n"
    io = f"{IO_DIR}/atlas-{nonce}"
    result: ExecResult = await ws.run_with_files(
        {f"{io}.sh": script.encode()}, f"bash {io}.sh", timeout_s=timeout_s
    )
    err = re.search(re.escape(marker(nonce)) + r"error (.*)", result.output)
    if err:
        raise SandboxError(f"{instance.instance_id}: {err.group(1)}")
    return result, await captured_command(ws, nonce)


async def warm_cleanup(ws: Any, instance: SWEInstance, nonce: str) -> ExecResult:
    """The second half of the driver (after :func:`warm_setup` and the tests)."""
    _, tail = driver_parts(instance, nonce)
    io = f"{IO_DIR}/atlas-{nonce}"
    result: ExecResult = await ws.run_with_files(
        {f"{io}-tail.sh": tail.encode()}, f"bash {io}-tail.sh", timeout_s=300
    )
    return result


def emit_file(nonce: str, tag: str, path: str, limit: int | None = None) -> str:
    """Shell lines printing ``path`` gzipped and base64-encoded after a marker."""
    head = f"tail -c {limit} {path}" if limit else f"cat {path}"
    return (
        f'if [ -f {path} ]; then echo "{marker(nonce)}{tag} $({head} | gzip -c | base64 -w0)"; '
        f'else echo "{marker(nonce)}{tag} -"; fi'
    )


def exec_cpu_seconds(output: str, nonce: str) -> float | None:
    """CPU seconds of a driver run (the shell and every process it waited for), from the
    ``times`` line :func:`driver` prints last."""
    m = re.search(re.escape(marker(nonce)) + r"times (.*)", output)
    if m is None:
        return None
    parts = re.findall(r"(\d+)m([\d.]+)s", m.group(1))
    return sum(int(a) * 60 + float(b) for a, b in parts) if parts else None


def read_emitted(output: str, nonce: str, tag: str) -> str | None:
    """What :func:`emit_file` printed for ``tag`` (None: absent)."""
    m = re.search(re.escape(marker(nonce) + tag) + r" ([A-Za-z0-9+/=-]*)", output)
    if m is None or m.group(1) in ("", "-"):
        return None
    try:
        return gzip.decompress(base64.b64decode(m.group(1))).decode("utf-8", "replace")
    except (ValueError, OSError, EOFError):
        return None


def resolve_instance(target: Target, instance: SWEInstance | None) -> SWEInstance:
    if instance is not None:
        return instance
    if isinstance(target, LendsWorkspace):
        return target.instance
    raise ConfigError("instance: required when the target is a Workspace (not an environment)")


@asynccontextmanager
async def workspace_of(target: Target) -> AsyncIterator[Workspace]:
    """The workspace to run in. For an environment, its workspace held alone
    (:meth:`SWEEnvironment.exclusive`: no verify or agent action runs meanwhile; the agent's
    state is put back before its next action)."""
    if not isinstance(target, LendsWorkspace):
        yield target
        return
    async with target.exclusive() as ws:
        yield ws
