"""Statement-level operator families: delete, insert, replace, swap and guard a statement.

They work on whole lines, at the indentation of the statement they anchor on; inserted
and substituted statements are donors (simple statements of the same function first,
nearest first, then of the file) or a few synthesised ones where the context admits them
(``break``/``continue`` in a loop, ``return`` in a function, ``n += 1``/``n -= 1`` for a
variable of an enclosing ``while`` test).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from atlas_actors.swe.repair.analysis.file_facts import Donor
from atlas_actors.swe.repair.analysis.statement_map import StmtInfo
from atlas_actors.swe.repair.families.statement_view import Unit, short

__all__ = ["STATEMENT_FAMILIES"]

MAX_DONORS = 10
MAX_GUARDS = 5


def _is_docstring(info: StmtInfo) -> bool:
    head = info.asts[0]
    return (
        len(info.asts) == 1
        and isinstance(head, ast.Expr)
        and isinstance(head.value, ast.Constant)
        and isinstance(head.value.value, str)
    )


def _movable(info: StmtInfo) -> bool:
    return (
        info.siblings is not None
        and not isinstance(info.asts[0], ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not _is_docstring(info)
    )


def _lines(u: Unit, info: StmtInfo) -> tuple[int, int]:
    return u.src.line_start(info.first), u.src.line_end(info.last)


def _rewrite(u: Unit, family: str, text: str, what: str) -> None:
    """Replace the whole statement (its lines) by ``text``."""
    info = u.info
    start, end = _lines(u, info)
    u.statements(family, start, end, text, what, i=info.start, j=info.stop, line=info.first)


def _block_parts(u: Unit) -> tuple[str, str]:
    """One indentation step of the file, and the statement's text from its first token
    (for nesting it one level deeper)."""
    info = u.info
    step = "\t" if info.indent.startswith("\t") else "    "
    start, end = _lines(u, info)
    return step, u.src.text[start + len(info.indent) : end]


def _donors(u: Unit) -> list[str]:
    """Statements to insert or substitute at ``u``, most plausible first."""
    info = u.info
    own = " ".join(u.src.lines(info.first, info.last).split())
    out: dict[str, None] = {}
    if info.in_loop:
        out["break"] = None
        out["continue"] = None
    for name in info.loop_names:
        out[f"{name} += 1"] = None
        out[f"{name} -= 1"] = None
    if info.in_function:
        out["return"] = None

    def nearest(donors: list[Donor]) -> list[Donor]:
        return sorted(
            (d for d in donors if not (info.first <= d.line <= info.last)),
            key=lambda d: (abs(d.line - info.first), d.line),
        )

    pools = [nearest(u.scope.donors)] if u.scope.kind == "function" else []
    pools.append(nearest(u.facts.donors))
    for pool in pools:
        for donor in pool:
            if len(out) >= MAX_DONORS:
                break
            if " ".join(donor.text.split()) != own:
                out.setdefault(donor.text)
    return list(out)[:MAX_DONORS]


def stmt_delete(u: Unit) -> None:
    """Delete the statement (``pass`` in its place if its block would be empty)."""
    info = u.info
    if not _movable(info) or (len(info.asts) == 1 and isinstance(info.asts[0], ast.Pass)):
        return
    assert info.siblings is not None
    text = f"{info.indent}pass{u.src.newline}" if len(info.siblings) == 1 else ""
    first = u.src.line_text(info.first).strip()
    _rewrite(u, "stmt_delete", text, f"delete `{short(first)}`")


def stmt_insert(u: Unit) -> None:
    """Insert a donor statement before or after the statement."""
    info = u.info
    if not _movable(info):
        return
    for donor in _donors(u):
        u.insert_around("stmt_insert", donor)


def stmt_replace(u: Unit) -> None:
    """Replace a simple statement by a donor statement."""
    info = u.info
    if not _movable(info) or info.compound or len(info.asts) != 1:
        return
    start, end = _lines(u, info)
    ending = u.src.newline if u.src.text[end - 1 : end] == "\n" else ""
    for donor in _donors(u):
        u.statements(
            "stmt_replace",
            start,
            end,
            f"{info.indent}{donor}{ending}",
            f"replace line {info.first} by `{short(donor)}`",
            i=info.start,
            j=info.stop,
            line=info.first,
        )


def stmt_swap(u: Unit) -> None:
    """Swap the statement with the one after it, or before it."""
    info = u.info
    if not _movable(info):
        return
    siblings = info.siblings
    assert siblings is not None
    for other_index in (info.index + 1, info.index - 1):
        if not 0 <= other_index < len(siblings):
            continue
        other = siblings[other_index]
        if not _movable(other):
            continue
        a, b = (info, other) if other_index > info.index else (other, info)
        start, a_end = _lines(u, a)
        b_start, end = _lines(u, b)
        text = u.src.text
        if text[end - 1 : end] != "\n":
            continue
        new = text[b_start:end] + text[a_end:b_start] + text[start:a_end]
        u.statements(
            "stmt_swap",
            start,
            end,
            new,
            f"swap lines {a.first} and {b.first}",
            i=a.start,
            j=b.stop,
            line=info.first,
        )


def _one_line_simple(info: StmtInfo) -> bool:
    """A movable simple statement on one line (one that can be nested in a new block)."""
    return _movable(info) and not info.compound and len(info.asts) == 1 and info.first == info.last


def guard_insert(u: Unit) -> None:
    """Wrap a one-line statement in ``if <condition>:``: a condition of the function, a
    ``None`` check of an object it uses, or a range check of an index it uses."""
    info = u.info
    if not _one_line_simple(info):
        return
    line = info.first
    conditions: dict[str, None] = {}
    for text, cline in sorted(u.scope.conditions, key=lambda c: (abs(c[1] - line), c[1])):
        if cline != line and "\n" not in text and len(conditions) < 2:
            conditions.setdefault(text)
    checks = 0
    for site in u.sites:
        node = site.node
        if checks >= 3:
            break
        if (
            site.role in ("base", "receiver")
            and isinstance(node, cst.Name)
            and u.scope.kind_of(node.value) == "var"
            and node.value != u.scope.self_name
            and f"{node.value} is not None" not in conditions
        ):
            conditions[f"{node.value} is not None"] = None
            checks += 1
        elif (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Name)
        ):
            index = node.slice[0].slice.value.value
            check = f"{index} < len({node.value.value})"
            if check not in conditions:
                conditions[check] = None
                checks += 1
    step, body = _block_parts(u)
    for cond in list(conditions)[:MAX_GUARDS]:
        text = f"{info.indent}if {cond}:{u.src.newline}{info.indent}{step}{body}"
        _rewrite(u, "guard_insert", text, f"guard line {line} by `if {short(cond)}`")


MAX_TRANSLATIONS = 6


def _quoted(text: str) -> str:
    """A string literal of ``text``, in double quotes where that needs no escape."""
    if '"' in text or "\\" in text or not text.isprintable():
        return repr(text)
    return f'"{text}"'


def exception_translate(u: Unit) -> None:
    """Wrap a one-line statement in ``try``/``except E as exc: raise C(message) from exc``:
    ``E`` a builtin exception a failing test fails with, ``C`` a class the file raises
    (its own exceptions first), the message a string the issue quotes or ``str(exc)``.
    Needs hints: without failing tests' exceptions it proposes nothing."""
    info = u.info
    caught = u.hints.exceptions
    if (
        not caught
        or not info.in_function
        or not _one_line_simple(info)
        or isinstance(info.asts[0], ast.Raise | ast.Break | ast.Continue | ast.Pass)
    ):
        return
    defined = [n for n in u.facts.raised if u.scope.kind_of(n) in ("class", "import")]
    classes = defined + [n for n in u.facts.raised if n not in defined]
    if not classes:
        return
    nl = u.src.newline
    step, body = _block_parts(u)
    if not body.endswith(("\n", "\r")):
        body += nl
    inner = info.indent + step
    name = "exc" if "exc" not in u.scope.variables() else "exc_"
    messages = [_quoted(m) for m in u.hints.strings] + [f"str({name})"]
    made = 0
    for exc in caught:
        for cls in classes[:2]:
            if cls == exc:
                continue
            for message in messages:
                if made >= MAX_TRANSLATIONS:
                    return
                text = (
                    f"{info.indent}try:{nl}{inner}{body}"
                    f"{info.indent}except {exc} as {name}:{nl}"
                    f"{inner}raise {cls}({message}) from {name}{nl}"
                )
                what = f"{exc} at line {info.first} raises {cls}({short(message, 24)})"
                _rewrite(u, "exception_translate", text, what)
                made += 1


MAX_WIDENINGS = 12
_BROAD = frozenset({"Exception", "BaseException"})


def _caught_names(u: Unit, handler: ast.ExceptHandler) -> list[str] | None:
    """The source text of each type an ``except`` clause names; None for a bare clause,
    one that catches everything already, or a type that is not a (dotted) name."""
    kind = handler.type
    if kind is None:
        return None
    elts = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    if not all(isinstance(e, ast.Name | ast.Attribute) for e in elts):
        return None
    names = [u.src.segment(e) for e in elts]
    return None if _BROAD & set(names) else names


def handler_widen(u: Unit) -> None:
    """An ``except`` clause of a ``try`` statement gains a builtin exception a failing test
    fails with: each missing one alone, then all of them; and every clause of the
    statement (nested ones included) that catches the same types gains it together.
    Needs hints: without failing tests' exceptions it proposes nothing."""
    info = u.info
    stmt = info.asts[0]
    caught = u.hints.exceptions
    if not caught or not isinstance(stmt, ast.Try):
        return
    # each clause that names its types: (its line, the offsets of its types, their names)
    clauses: list[tuple[int, tuple[int, int], list[str]]] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            names = _caught_names(u, node)
            if names is not None:
                clauses.append((node.lineno, u.src.span(node.type), names))
    start, end = _lines(u, info)
    whole = u.src.text[start:end]

    def widened(chosen: list[tuple[int, tuple[int, int], list[str]]], add: list[str]) -> str:
        text = whole
        for _, (a, b), names in sorted(chosen, key=lambda c: -c[1][0]):  # last first
            new = "(" + ", ".join([*names, *(e for e in add if e not in names)]) + ")"
            text = text[: a - start] + new + text[b - start :]
        return text

    seen: set[str] = set()
    made = 0
    for clause in clauses:
        lineno, _, names = clause
        missing = [e for e in caught if e not in names]
        if not missing:
            continue
        same = [c for c in clauses if set(c[2]) == set(names)]
        groups = ([same] if len(same) > 1 else []) + [[clause]]
        adds = [[e] for e in missing] + ([missing] if len(missing) > 1 else [])
        for group in groups:
            for add in adds:
                if made >= MAX_WIDENINGS:
                    return
                text = widened(group, add)
                if text in seen:
                    continue
                seen.add(text)
                where = f"line {lineno}" if len(group) == 1 else f"{len(group)} clauses"
                what = (
                    f"except {short(', '.join(names), 24)} catches {', '.join(add)} too ({where})"
                )
                u.statements(
                    "handler_widen",
                    start,
                    end,
                    text,
                    what,
                    i=info.start,
                    j=info.stop,
                    line=group[0][0],
                )
                made += 1


STATEMENT_FAMILIES: dict[str, Callable[[Unit], None]] = {
    "stmt_delete": stmt_delete,
    "stmt_insert": stmt_insert,
    "stmt_replace": stmt_replace,
    "stmt_swap": stmt_swap,
    "guard_insert": guard_insert,
    "exception_translate": exception_translate,
    "handler_widen": handler_widen,
}
"""Statement-level families by name."""
