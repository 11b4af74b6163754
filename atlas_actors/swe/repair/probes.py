"""Probes for green patches: the failing tests run again on inputs near the tested ones.

A patch that passes every test may still be wrong; one sign is that it breaks on inputs
the tests did not try. The probes vary the failing test's own inputs a little: each
integer or float literal the test function passes to the code (not those in its
``assert`` statements, which are expected results, nor a ``match=`` pattern) moves by
one (a float by a half), one literal at a time. The patched code and the base then run
each variant (through the fast screen, as candidates that also replace the test file);
the variant's assertions may well fail on both (the expected values no longer hold), so
only how a run *ends* is compared: a patch that raises an exception other than an
assertion (or hangs, or dies) on a variant where the base only failed an assertion or
passed is refused (:func:`broke`). Opad (Yang et al., FSE 2017) and PATCH-SIM (Xiong et
al., ICSE 2018) judge patches by generated test inputs in the same spirit; here the
inputs are the tests' own, nudged.

:func:`rebuilt_test_file` rebuilds a test file as the tests run it (the base file with the
task's test patch applied, by ``git apply`` in a scratch folder); :func:`variants` makes
the perturbed copies.
"""

from __future__ import annotations

import ast
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

__all__ = [
    "MAX_VARIANTS",
    "Variant",
    "broke",
    "ending",
    "numbers_in_test",
    "rebuilt_test_file",
    "split_test_id",
    "variants",
]

MAX_VARIANTS = 8
"""Variants per failing test at most (the first literals of the test, two moves each)."""

ASSERTION_TYPES = frozenset({"AssertionError", "Failed"})
"""Failure types that are the test's own checks (``assert``, ``pytest.fail``, ``pytest.
raises``' "DID NOT RAISE"), not the code raising."""

_BROKEN = frozenset({"timeout", "crashed"})
GIT_TIMEOUT_S = 60.0
"""Time allowed to ``git apply`` the test patch to one file."""


@dataclass(frozen=True)
class Variant:
    """A test file with one literal of one test function moved."""

    test: str
    """The test's node id (unchanged: the variant replaces the whole file)."""
    path: str
    """The test file."""
    source: str
    what: str
    """``"3 -> 4 at line 12"``."""


def split_test_id(test: str) -> tuple[str, list[str]]:
    """``path/to/test_x.py::Class::test_name[param]`` -> the path and ``[Class,
    test_name]`` (parameters dropped)."""
    path, _, rest = test.partition("::")
    names = [part.split("[", 1)[0] for part in rest.split("::") if part]
    return path, names


def _find(tree: ast.Module, names: list[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    scope: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for name in names:
        found = next(
            (
                node
                for node in scope
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == name
            ),
            None,
        )
        if found is None:
            return None
        scope = getattr(found, "body", [])
    return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _checked(fn: ast.AST) -> set[int]:
    """ids of the literals that are expected values: inside ``assert`` statements and
    ``match=``/``message=`` keywords."""
    out: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            out.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.keyword) and node.arg in ("match", "message"):
            out.update(id(n) for n in ast.walk(node.value))
    return out


def variants(source: str, test: str, limit: int = MAX_VARIANTS) -> list[Variant]:
    """Copies of ``source`` (the test file) in which one number the test function
    ``test`` passes to the code moves by one (floats by a half): first ``+``, then
    ``-``, literal by literal in source order, at most ``limit``."""
    path, names = split_test_id(test)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    fn = _find(tree, names) if names else None
    if fn is None:
        return []
    skip = _checked(fn)
    numbers = [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Constant)
        and type(node.value) in (int, float)
        and id(node) not in skip
        and node.end_lineno == node.lineno
    ]
    numbers.sort(key=lambda n: (n.lineno, n.col_offset))
    lines = source.splitlines(keepends=True)
    out: list[Variant] = []
    for node in numbers:
        value = node.value
        assert isinstance(value, int | float)
        step = 1 if isinstance(value, int) else 0.5
        for moved in (value + step, value - step):
            if len(out) >= limit:
                return out
            line = lines[node.lineno - 1]
            raw = line.encode()
            start = len(raw[: node.col_offset].decode(errors="replace"))
            end = len(raw[: node.end_col_offset or 0].decode(errors="replace"))
            text = repr(moved)
            if text.startswith("-") and start > 0 and line[start - 1] in "-+*/%":
                text = f"({text})"
            new_line = line[:start] + text + line[end:]
            new = "".join([*lines[: node.lineno - 1], new_line, *lines[node.lineno :]])
            out.append(Variant(test, path, new, f"{value!r} -> {moved!r} at line {node.lineno}"))
    return out


def numbers_in_test(source: str, test: str, limit: int) -> list[int]:
    """The integers in the test function ``test`` of ``source`` (asserted values too),
    in source order, each once, at most ``limit``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    fn = _find(tree, split_test_id(test)[1])
    if fn is None:
        return []
    found = sorted(
        (
            node
            for node in ast.walk(fn)
            if isinstance(node, ast.Constant) and type(node.value) is int
        ),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return list(dict.fromkeys(n.value for n in found if isinstance(n.value, int)))[:limit]


def ending(verdict: Any) -> str:
    """How a test run ended: ``passed``, ``assertion`` (the test's own check failed), or
    what broke it (the exception type, ``timeout``, ``crashed``, ...)."""
    outcome = str(getattr(verdict, "outcome", ""))
    if getattr(verdict, "passed", False):
        return "passed"
    if outcome in _BROKEN or outcome == "not_found":
        return outcome
    kind = str(getattr(verdict, "message", "") or "").split(":", 1)[0].strip()
    return "assertion" if kind in ASSERTION_TYPES or not kind else kind


def broke(base: str, patched: str) -> bool:
    """Whether the patched code breaks where the base did not: it raised (or hung or
    died) while the base passed or failed only an assertion."""
    calm = ("passed", "assertion")
    return base in calm and patched not in calm and patched != "not_found"


async def rebuilt_test_file(base_text: str | None, path: str, test_patch: str) -> str | None:
    """The test file ``path`` as the tests run it: ``base_text`` (None: not in the base)
    with the task's ``test_patch`` applied (``git apply`` in a scratch folder). None
    when it cannot be rebuilt."""
    if f"b/{path}" not in test_patch:
        return base_text
    with tempfile.TemporaryDirectory(prefix="atlas-probe-") as td:
        target = anyio.Path(td) / path
        await target.parent.mkdir(parents=True, exist_ok=True)
        if base_text is not None:
            await target.write_text(base_text)
        try:
            with anyio.fail_after(GIT_TIMEOUT_S):
                proc = await anyio.run_process(
                    ["git", "apply", f"--include={path}", "-"],
                    input=test_patch.encode(),
                    cwd=td,
                    check=False,
                )
        except (OSError, TimeoutError):
            return None
        if proc.returncode != 0 or not await target.exists():
            return None
        return await anyio.Path(Path(td) / path).read_text()
