"""Test runs through the in-container runtime's zygote ("warm"): what verify, fault
localisation and the fast screen share.

Each of them runs the instance's eval-script set-up in bash first (it activates the
instance's environment and applies the test patch). :func:`capture_lines` is appended to
that set-up: it records, as bash sees them at the point the tests would run, the words of
the test command, the interpreter it resolves to, the environment and the working
directory. :func:`read_capture` turns them into a :class:`TestCommand` when the command is
a plain pytest invocation (``pytest ...``, ``py.test ...``, ``python -m pytest ...``),
and :func:`run_warm` runs it in a child of the zygote for that interpreter and
environment: the same pytest, options, environment, working directory and first path
entry, without starting an interpreter and importing pytest each time.

Anything else (another test runner, shell syntax on the test line, an interpreter the
zygote cannot start in) runs the slow way, as it always did: ``None`` from these helpers
means "take the cold path".
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_actors.swe.workspace import IO_DIR

_SHELL = re.compile(r"[;|&<>`$(){}\n\\]")
"""Characters that make a test line more than a command with words (run it cold)."""
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_SCRIPTS = ("pytest", "py.test")


def warmable(line: str) -> bool:
    """Whether a test line is a plain pytest invocation the zygote can run."""
    if _SHELL.search(line):
        return False
    try:
        words = shlex.split(line)
    except ValueError:
        return False
    if not words or "=" in words[0]:
        return False
    head = os.path.basename(words[0])
    if head in _SCRIPTS:
        return True
    return bool(_PYTHON.match(head)) and words[1:3] == ["-m", "pytest"]


def capture_lines(nonce: str, line: str) -> str:
    """Bash recording what running ``line`` here would run (see the module doc): its
    words as bash expands them, what the first resolves to, the exported environment and
    the working directory (builtins only, no process started but a subshell)."""
    io = f"{IO_DIR}/atlas-{nonce}"
    return f"""{{ atlas_words=({line})
printf '%s\\0' "${{atlas_words[@]}}" > {io}.argv
command -v -- "${{atlas_words[0]}}" > {io}.exe
for atlas_n in $(compgen -e); do printf '%s=%s\\0' "$atlas_n" "${{!atlas_n}}"; done > {io}.env
pwd > {io}.cwd; }} 2>/dev/null"""


def capture_paths(nonce: str) -> list[str]:
    io = f"{IO_DIR}/atlas-{nonce}"
    return [f"{io}.{ext}" for ext in ("argv", "exe", "env", "cwd")]


async def captured_command(ws: Any, nonce: str) -> TestCommand | None:
    """What :func:`capture_lines` recorded, as a :class:`TestCommand` (None: not a pytest
    command the zygote can run, or the workspace has no runtime); the files removed."""
    paths = capture_paths(nonce)
    found = await ws.read_files(paths)
    await ws.remove_files(paths)
    if not found:
        return None
    exe = (found.get(paths[1]) or b"").decode("utf-8", "surrogateescape").strip()
    words = _split0(found.get(paths[0]))
    head: tuple[bytes | None, str] | None = None
    if exe and words and os.path.basename(words[0]) in _SCRIPTS:
        head = await ws.read_head(exe, 512)
    return parse_capture(found, nonce, head)


@dataclass
class TestCommand:
    """A pytest invocation as the zygote runs it."""

    __test__ = False

    python: str
    """The interpreter (a path, or a name looked up on the environment's PATH)."""
    argv: list[str]
    """``sys.argv`` of the run: the program, then pytest's arguments."""
    sys_path0: str
    """The interpreter's first path entry (the working directory for ``-m``, the
    script's folder for a script)."""
    env: dict[str, str]
    cwd: str
    notes: list[str] = field(default_factory=list)

    @property
    def args(self) -> list[str]:
        return self.argv[1:]


def _split0(data: bytes | None) -> list[str]:
    if not data:
        return []
    return [w.decode("utf-8", "surrogateescape") for w in data.split(b"\0")[:-1]]


def parse_capture(
    found: Mapping[str, bytes | None], nonce: str, head: tuple[bytes | None, str] | None
) -> TestCommand | None:
    """The :class:`TestCommand` the captured files describe (``head``: the first bytes of
    the program when it is a script, and its resolved path), or None (run it cold)."""
    argv_p, exe_p, env_p, cwd_p = capture_paths(nonce)
    words = _split0(found.get(argv_p))
    exe = (found.get(exe_p) or b"").decode("utf-8", "surrogateescape").strip()
    env_words = _split0(found.get(env_p))
    cwd = (found.get(cwd_p) or b"").decode("utf-8", "surrogateescape").strip()
    if not words or not exe or not env_words or not cwd:
        return None
    env = dict(w.split("=", 1) for w in env_words if "=" in w)
    program = os.path.basename(words[0])
    if program in _SCRIPTS:
        if head is None or head[0] is None:
            return None
        first = head[0].split(b"\n", 1)[0].decode("utf-8", "replace")
        if not first.startswith("#!"):
            return None
        parts = first[2:].split()
        if not parts:
            return None
        python = parts[0]
        if os.path.basename(python) == "env":
            if len(parts) != 2:
                return None
            python = parts[1]
        elif len(parts) > 1:
            return None  # interpreter options on the shebang
        if not _PYTHON.match(os.path.basename(python)):
            return None
        return TestCommand(
            python=python,
            argv=[exe, *words[1:]],
            sys_path0=os.path.dirname(head[1]),
            env=env,
            cwd=cwd,
        )
    if _PYTHON.match(program) and words[1:3] == ["-m", "pytest"]:
        return TestCommand(python=exe, argv=[exe, *words[3:]], sys_path0=cwd, env=env, cwd=cwd)
    return None


@dataclass
class WarmRun:
    """What a run in the zygote did."""

    exit_code: int | None
    output: str
    timed_out: bool = False
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    output_bytes: int = 0
    truncated: bool = False
    failure: str = ""
    """Why the run was cut short beyond a timeout: its process died of a signal, it wrote
    more than the output cap, the zygote or the runtime died (then ``exit_code`` is None
    and the run counts as failed)."""
    fresh_zygote: bool = False
    """A zygote was started for this run."""


def warm_answer(answer: Mapping[str, Any], data: bytes) -> WarmRun:
    """A zygote's answer to a ``pytest`` request as a :class:`WarmRun`."""
    failure = ""
    if answer.get("runtime_died"):
        failure = f"the test run killed the in-container runtime: {answer['runtime_died']}"
    elif answer.get("zygote_died"):
        failure = f"the test zygote was lost during the run ({answer['zygote_died']})"
    elif answer.get("output_exceeded"):
        failure = f"the tests wrote more than {answer.get('output_bytes', 0)} bytes (killed)"
    elif answer.get("died"):
        failure = str(answer["died"])
    return WarmRun(
        exit_code=answer.get("exit_code"),
        output=data.decode("utf-8", errors="replace"),
        timed_out=bool(answer.get("timed_out")),
        seconds=float(answer.get("seconds") or 0.0),
        cpu_seconds=float(answer.get("cpu") or 0.0),
        output_bytes=int(answer.get("output_bytes") or 0),
        truncated=bool(answer.get("truncated")),
        failure=failure,
        fresh_zygote=bool((answer.get("zygote") or {}).get("fresh")),
    )


async def run_warm(
    ws: Any,
    cmd: TestCommand,
    *,
    timeout_s: float,
    output_limit_bytes: int,
    env: Mapping[str, str] | None = None,
    argv: list[str] | None = None,
    output_cap_bytes: int | None = None,
    file_limit_bytes: int = 0,
    path: list[str] | None = None,
    prepare: bool = False,
) -> WarmRun | None:
    """Run ``cmd`` (with ``env`` on top of its environment, ``argv`` instead of its own,
    ``path`` on ``sys.path`` after its first entry, as ``PYTHONPATH`` would put it) in
    the zygote; None when the workspace has no runtime or no zygote can start for it.
    ``prepare``: fork the run from a process that keeps the command's pytest
    configuration prepared (``atlas_zygote.Prepared``), for a command run again and again
    on the same tree (verify)."""
    run_env = {**cmd.env, **(env or {})}
    request = {
        "op": "pytest",
        "argv": argv or cmd.argv,
        "env": run_env,
        "cwd": cmd.cwd,
        "sys_path0": cmd.sys_path0,
        "limit": output_limit_bytes,
        "cap": output_cap_bytes,
        "file_limit_bytes": file_limit_bytes,
        "path": list(path or []),
        "prepare": prepare,
    }
    got = await ws.tests(
        python=cmd.python, env=cmd.env, cwd=cmd.cwd, request=request, timeout_s=timeout_s
    )
    if got is None:
        return None
    answer, data = got
    if answer.get("unavailable"):
        return None
    return warm_answer(answer, data)
