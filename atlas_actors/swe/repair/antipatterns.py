"""Anti-patterns: edits that can make the tests pass for the wrong reason, refused before
the screen.

Search-based repair finds patches that pass every test and are still wrong (Qi et al.
2015; Ye et al. 2021 found 53% of the test-passing patches of such tools overfit). Tan
et al. (FSE 2016, "Anti-patterns in search-based program repair") list kinds of edit
that rarely fix anything and often only get past the tests; the ones that fit
single-edit repair of Python are refused here, each with its reason:

``unused_binding``
    The edit leaves a name the function binds (a parameter, an assigned or loop
    variable, a comprehension's variable) read nowhere, where it was read before: the
    code now ignores an input it used (``[f(x) for x in xs]`` -> ``[f(y) for x in
    xs]``; deleting the only use of a parameter). Names starting with ``_`` are
    exempt (unused by convention).
``early_exit``
    The edit adds a ``return``, ``raise``, ``break`` or ``continue`` that cuts off code
    a failing test runs: statements after it in its block become unreachable, or, put
    directly in a loop's body (not under an ``if``), it ends the loop after its first
    pass (Tan et al.'s "early exit" and "loop" anti-patterns).
``constant_condition``
    The edit turns a decision into a constant: an ``if``/``while``/ternary/
    comprehension/``assert`` test, an operand of ``and``/``or``, or a returned
    comparison or boolean expression that read the program's state now reads none
    (``if x > limit`` -> ``if True``; ``return a < b`` -> ``return False``): the tests
    see one branch, so they pass (Tan et al.'s "trivial condition").
``checks_not_calls``
    The edit is inside a method an assertion checks values through (``__eq__``,
    ``__ne__``, ``__hash__``, ``__repr__``, ``__str__``, ``__format__``) while every
    failing test fails by an assertion: it changes how the test's check sees the
    result, not the code the test calls to compute it.

:func:`refusal` reads the edit and the text it was made on (the enclosing function,
parsed with ``ast``) and, for ``early_exit``, which lines a failing test runs (fault
localisation's coverage). It never runs code. What each one turns away on the
development set is measured by ``scripts/bench_repair_greens.py``.
"""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["ANTI_PATTERNS", "DEFAULT_ANTI_PATTERNS", "Edit", "Evidence", "refusal"]

ANTI_PATTERNS = ("unused_binding", "early_exit", "constant_condition", "checks_not_calls")
"""The anti-patterns :func:`refusal` can check, in the order it checks them."""
DEFAULT_ANTI_PATTERNS = ("unused_binding", "early_exit", "constant_condition")
"""Those the repair proposer refuses unless told otherwise. ``checks_not_calls`` is
left out: on the development set it refused no edit at all, and it would refuse the fix
of a bug that is in an ``__eq__`` or ``__repr__`` itself."""

CHECKING_METHODS = frozenset({"__eq__", "__ne__", "__hash__", "__repr__", "__str__", "__format__"})
"""Methods an assertion checks values through (``assert a == b`` compares, a failing
assertion prints ``repr``), as opposed to the code the test calls."""

_FLOW = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BODIES = ("body", "orelse", "finalbody")


class Edit(Protocol):
    """What the checks read of an edit (a :class:`~atlas_actors.swe.repair.patch.
    CandidateEdit` or a sibling edit)."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def new_text(self) -> str: ...
    @property
    def original(self) -> str: ...
    @property
    def hunk(self) -> tuple[int, int, int]: ...


@dataclass(frozen=True)
class Evidence:
    """What the checks know about the task beyond the edit."""

    covered: Mapping[str, Collection[int]] = field(default_factory=dict)
    """Per path, the lines (of the text the edits are made on) some failing test runs."""
    assertion_failures: bool = False
    """Every failing test fails by an assertion (none by an exception of the code)."""


def refusal(
    edit: Edit,
    evidence: Evidence,
    checks: Iterable[str] = DEFAULT_ANTI_PATTERNS,
) -> tuple[str, str] | None:
    """``(anti-pattern, reason)`` when ``edit`` is one of the ``checks``, else None.

    The edit must change one function (the innermost ``def`` around its line); edits
    outside any function, and texts that do not parse, are never refused."""
    want = set(checks)
    unknown = want - set(ANTI_PATTERNS)
    if unknown:
        raise ValueError(
            f"checks: unknown {', '.join(sorted(unknown))}; allowed: {', '.join(ANTI_PATTERNS)}"
        )
    pair = _functions(edit)
    if pair is None:
        return None
    old, new, shift = pair
    checks_run: dict[str, Callable[[], str | None]] = {
        "unused_binding": lambda: _unused_binding(old, new),
        "early_exit": lambda: _early_exit(old, new, shift, edit, evidence),
        "constant_condition": lambda: _constant_condition(old, new),
        "checks_not_calls": lambda: _checks_not_calls(old, evidence),
    }
    for name in ANTI_PATTERNS:
        if name in want and (reason := checks_run[name]()) is not None:
            return name, reason
    return None


# -- the function an edit changes, before and after ---------------------------------


@dataclass(frozen=True)
class _Shift:
    """How lines move: the edit replaces old lines ``[first, first + removed)`` by
    ``added`` lines; old line ``n`` after them is new line ``n + added - removed``."""

    first: int
    removed: int
    added: int

    def old_line(self, new: int) -> int | None:
        """The old line a new line was (None for a line the edit wrote)."""
        if new < self.first:
            return new
        if new >= self.first + self.added:
            return new - self.added + self.removed
        return None


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_TREES: dict[int, tuple[str, ast.Module | None]] = {}
"""The last few originals parsed, by identity (the candidates of one call share it)."""


def _tree_of(text: str) -> ast.Module | None:
    hit = _TREES.get(id(text))
    if hit is not None and hit[0] is text:
        return hit[1]
    if len(_TREES) > 8:
        _TREES.clear()
    tree = _parse(text)
    _TREES[id(text)] = (text, tree)
    return tree


def _innermost_function(tree: ast.AST, line: int) -> _Function | None:
    best: _Function | None = None
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (best is None or node.lineno >= best.lineno):
                best = node
    return best


_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(edit: Edit) -> tuple[_Function, _Function, _Shift] | None:
    """The innermost function around the edit in the original and in the edited text
    (each parsed on its own), and how the edit moved lines."""
    first, removed, added = edit.hunk
    shift = _Shift(first, removed, added)
    tree = _tree_of(edit.original)
    if tree is None:
        return None
    old = _innermost_function(tree, edit.line)
    if old is None or old.lineno >= first:
        return None
    old_end = old.end_lineno or old.lineno
    if first + removed - 1 > old_end:
        return None
    new_end = old_end + added - removed
    lines = edit.new_text.splitlines(keepends=True)[old.lineno - 1 : new_end]
    head = lines[0] if lines else ""
    indent = head[: len(head) - len(head.lstrip())]
    module = _parse(textwrap.dedent("".join(lines)) if indent else "".join(lines))
    if module is None or len(module.body) != 1 or not isinstance(module.body[0], _FUNCTIONS):
        return None
    new = module.body[0]
    ast.increment_lineno(new, old.lineno - 1)
    return old, new, shift


# -- unused_binding -----------------------------------------------------------------


def _bound_and_read(fn: _Function) -> tuple[set[str], Counter[str], set[str]]:
    """Names the function binds, how often each name is read, and its parameters."""
    args = fn.args
    params = {
        a.arg
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if a is not None
    }
    bound = set(params)
    reads: Counter[str] = Counter()
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads[node.id] += 1
            else:
                bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, reads, params


def _unused_binding(old: _Function, new: _Function) -> str | None:
    bound_old, reads_old, params = _bound_and_read(old)
    bound_new, reads_new, _ = _bound_and_read(new)
    for name in sorted(bound_old & bound_new):
        if name.startswith("_") or reads_old[name] == 0 or reads_new[name] > 0:
            continue
        if name in params:
            return f"deletes the only use of parameter `{name}`"
        return f"makes `{name}` unused"
    return None


# -- early_exit -----------------------------------------------------------------------


def _blocks(node: ast.AST) -> Iterable[tuple[ast.AST, list[ast.stmt]]]:
    """Every statement block under ``node`` (not inside nested functions or classes),
    with the statement that owns it."""
    for child in ast.walk(node):
        if child is not node and isinstance(child, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        for name in _BODIES:
            block = getattr(child, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield child, block
        if isinstance(child, ast.Try | ast.TryStar):
            for handler in child.handlers:
                yield handler, handler.body
        if isinstance(child, ast.Match):
            for case in child.cases:
                yield case, case.body


def _work_lines(stmts: Iterable[ast.stmt]) -> set[int]:
    """Lines of the statements that do something: not ``pass``, ``break`` or
    ``continue``, nor a ``return``/``raise`` of a constant (cutting one of those off
    replaces an exit, it skips no work)."""
    out: set[int] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.stmt) or isinstance(
                node, ast.Pass | ast.Break | ast.Continue
            ):
                continue
            if isinstance(node, ast.Return | ast.Raise):
                value = node.value if isinstance(node, ast.Return) else node.exc
                if value is None or not _reads_state(value):
                    continue
            out.add(node.lineno)
    return out


def _exits(fn: _Function) -> set[tuple[int, str]]:
    """Flow statements that cut code off: (line, what), for those followed by dead
    statements in their block and those directly in a loop's body."""
    out: set[tuple[int, str]] = set()
    for owner, block in _blocks(fn):
        for k, stmt in enumerate(block):
            if not isinstance(stmt, _FLOW):
                continue
            word = type(stmt).__name__.lower()
            if k + 1 < len(block):
                out.add((stmt.lineno, f"dead:{word}"))
            elif isinstance(owner, _LOOPS) and block is owner.body and word != "continue":
                out.add((stmt.lineno, f"loop:{word}"))
    return out


def _early_exit(
    old: _Function,
    new: _Function,
    shift: _Shift,
    edit: Edit,
    evidence: Evidence,
) -> str | None:
    before = {(line, what) for line, what in _exits(old)}
    covered = set(evidence.covered.get(edit.path, ()))
    for owner, block in _blocks(new):
        for k, stmt in enumerate(block):
            if not isinstance(stmt, _FLOW):
                continue
            was = shift.old_line(stmt.lineno)
            word = type(stmt).__name__.lower()
            if k + 1 < len(block) and (was, f"dead:{word}") not in before:
                dead = {shift.old_line(n) for n in _work_lines(block[k + 1 :])}
                hit = sorted(n for n in dead if n is not None and n in covered)
                if hit:
                    return f"`{word}` cuts off line {hit[0]}, which a failing test runs"
            elif (
                k + 1 == len(block)
                and isinstance(owner, _LOOPS)
                and block is owner.body
                and word != "continue"
                and (was, f"loop:{word}") not in before
            ):
                return f"`{word}` ends the loop at line {owner.lineno} after its first pass"
    return None


# -- constant_condition ---------------------------------------------------------------


def _reads_state(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Name | ast.Attribute | ast.Call | ast.Subscript | ast.Await)
        for n in ast.walk(node)
    )


def _decisions(fn: _Function) -> list[tuple[int, str, ast.AST]]:
    """(line, kind, expression) of every decision: tests, ``and``/``or`` operands and
    returned comparisons or boolean expressions."""
    out: list[tuple[int, str, ast.AST]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            out.append((node.test.lineno, "condition", node.test))
        elif isinstance(node, ast.comprehension):
            out.extend((cond.lineno, "condition", cond) for cond in node.ifs)
        elif isinstance(node, ast.BoolOp):
            out.extend((value.lineno, "operand", value) for value in node.values)
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            negation = isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
            flag = isinstance(value, ast.Constant) and isinstance(value.value, bool)
            if isinstance(value, ast.Compare | ast.BoolOp) or negation or flag:
                out.append((node.lineno, "returned test", value))
    return out


def _constant_condition(old: _Function, new: _Function) -> str | None:
    def constants(fn: _Function) -> Counter[str]:
        return Counter(kind for _, kind, expr in _decisions(fn) if not _reads_state(expr))

    def live(fn: _Function) -> Counter[str]:
        return Counter(kind for _, kind, expr in _decisions(fn) if _reads_state(expr))

    more = constants(new) - constants(old)
    if not more:
        return None
    lost = live(old) - live(new)
    kind = next((k for k in more if lost[k] > 0), None)
    if kind is None:
        return None
    for line, what, expr in _decisions(new):
        if what == kind and not _reads_state(expr):
            return f"makes a {kind} constant (`{ast.unparse(expr)}` at line {line})"
    return None


# -- checks_not_calls -----------------------------------------------------------------


def _checks_not_calls(old: _Function, evidence: Evidence) -> str | None:
    if evidence.assertion_failures and old.name in CHECKING_METHODS:
        return f"edits `{old.name}`, which the failing assertions check results through"
    return None
