"""Missing statements synthesised from the code's own shapes.

The statement families insert donors, statements the file already holds; a fix that is
a statement nowhere in the file is out of their reach. Three shapes of such fixes are
common enough to build from what the function itself reads and returns (TBar's FP4,
"insert missed statement", names the kind; Le Goues et al.'s and Xiong et al.'s
statement synthesis build them from the context):

``collection_update``
    The function tests membership in a collection (``v in x``, ``x.get(v)``) but
    never adds to it: insert ``x.add(v)`` (a set), ``x.append(v)`` (a list) or
    ``x[v] = w`` (a dict; ``w`` a name bound near the statement), with ``x`` and ``v``
    as the function reads them, before or after a suspicious statement where ``v`` is
    bound. The kind of ``x`` is read from where the file initialises it (``set()``,
    ``[]``, ``{}``, an annotation); when nothing says, both ``add`` and ``append`` are
    tried.
``base_case``
    A recursive function gets ``if p == c: return r`` (or ``p <= c``) before one of its
    top-level statements: ``p`` a parameter the function compares with or computes
    from numbers, ``c`` a constant it compares ``p`` with (then 0 and 1), ``r`` a
    literal it returns elsewhere, then the numbers of the issue and of the failing
    tests (:class:`~atlas_actors.swe.repair.hints.RepairHints`), then 0 and 1.
``return_computed``
    In a function that returns values, an assignment ``name = ...`` at a suspicious
    line is followed by ``return name``: a branch that computes its result and falls
    through to code meant for the other case.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from atlas_actors.swe.repair.analysis.file_facts import Facts
from atlas_actors.swe.repair.analysis.statement_map import StmtInfo
from atlas_actors.swe.repair.families.statement_view import Unit

__all__ = ["MISSING_FAMILIES"]

MAX_UPDATES = 6
"""Collection updates per statement at most."""
MAX_BASE_CASES = 16
"""Base cases per position at most."""
MAX_CONSTANTS = 3
MAX_VALUES = 4

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_SET_CALLS = frozenset({"set", "frozenset"})
_LIST_CALLS = frozenset({"list", "deque"})
_DICT_CALLS = frozenset({"dict", "defaultdict", "OrderedDict", "Counter"})


@dataclass(slots=True)
class _FileShapes:
    """What these families read of a whole file, once per file."""

    functions: list[_Function]
    collections: dict[str, str]


_SHAPES: weakref.WeakKeyDictionary[Facts, _FileShapes] = weakref.WeakKeyDictionary()


def _shapes(u: Unit) -> _FileShapes:
    found = _SHAPES.get(u.facts)
    if found is None:
        tree = u.facts.tree
        functions = [n for n in ast.walk(tree) if isinstance(n, _Function)]
        found = _FileShapes(functions, _collection_kinds(tree))
        _SHAPES[u.facts] = found
    return found


def _function_of(u: Unit) -> _Function | None:
    """The innermost function around the statement (``None`` outside any)."""
    line = u.info.first
    best: _Function | None = None
    for node in _shapes(u).functions:
        if node.lineno < line <= (node.end_lineno or 0) and (
            best is None or node.lineno > best.lineno
        ):
            best = node
    return best


def _insertable(info: StmtInfo) -> bool:
    """A statement of a block (not a def, class or docstring) next to which a new
    statement may go."""
    head = info.asts[0]
    docstring = (
        len(info.asts) == 1
        and isinstance(head, ast.Expr)
        and isinstance(head.value, ast.Constant)
        and isinstance(head.value.value, str)
    )
    return (
        info.siblings is not None
        and info.in_function
        and not isinstance(head, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not docstring
    )


def _bound_before(fn: _Function, line: int) -> set[str]:
    """Names the function has bound on or before ``line`` (its parameters included)."""
    args = fn.args
    out = {
        a.arg
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if a is not None
    }
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Name)
            and not isinstance(node.ctx, ast.Load)
            and node.lineno <= line
        ):
            out.add(node.id)
    return out


# -- collection_update ----------------------------------------------------------------


def _collection_kinds(tree: ast.Module) -> dict[str, str]:
    """``x`` (or ``self.x``) -> ``set``, ``list`` or ``dict``, from how the file
    initialises or annotates it."""
    out: dict[str, str] = {}

    def kind_of(value: ast.expr | None, annotation: ast.expr | None) -> str | None:
        for node in (value, annotation):
            if node is None:
                continue
            if isinstance(node, ast.Set | ast.SetComp):
                return "set"
            if isinstance(node, ast.List | ast.ListComp):
                return "list"
            if isinstance(node, ast.Dict | ast.DictComp):
                return "dict"
            head = node.value if isinstance(node, ast.Subscript) else node
            if isinstance(head, ast.Call):
                head = head.func
            name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
            if name in _SET_CALLS or name.lower() in ("set", "frozenset"):
                return "set"
            if name in _LIST_CALLS or name.lower() == "list":
                return "list"
            if name in _DICT_CALLS or name.lower() == "dict":
                return "dict"
        return None

    for node in ast.walk(tree):
        targets: list[ast.expr]
        value: ast.expr | None
        annotation: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value, annotation = node.targets, node.value, None
        elif isinstance(node, ast.AnnAssign):
            targets, value, annotation = [node.target], node.value, node.annotation
        else:
            continue
        kind = kind_of(value, annotation)
        if kind is None:
            continue
        for target in targets:
            if isinstance(target, ast.Name | ast.Attribute):
                out.setdefault(ast.unparse(target), kind)
    return out


def _reads(fn: _Function) -> list[tuple[str, str, int]]:
    """(collection, key, line) of the function's membership tests and ``.get`` calls on
    a name or attribute chain, with a name as the key."""
    out: list[tuple[str, str, int]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name):
            for op, right in zip(node.ops, node.comparators, strict=False):
                if isinstance(op, ast.In | ast.NotIn) and isinstance(
                    right, ast.Name | ast.Attribute
                ):
                    out.append((ast.unparse(right), node.left.id, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name | ast.Attribute)
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            out.append((ast.unparse(node.func.value), node.args[0].id, node.lineno))
    return out


def _updated(fn: _Function) -> set[str]:
    """Collections the function already adds to (``x.add``/``append``/``x[k] =``)."""
    out: set[str] = set()
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("add", "append", "update", "extend", "setdefault", "insert")
        ):
            out.add(ast.unparse(node.func.value))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            out.add(ast.unparse(node.value))
    return out


def collection_update(u: Unit) -> None:
    """Add to a collection the function reads but never updates (see the module)."""
    info = u.info
    if not _insertable(info):
        return
    fn = _function_of(u)
    if fn is None:
        return
    bound = _bound_before(fn, info.last)
    updated = _updated(fn)
    kinds = _shapes(u).collections
    reads = sorted(_reads(fn), key=lambda r: (abs(r[2] - info.first), r[2]))
    made: dict[str, None] = {}
    for collection, key, _ in reads:
        if collection in updated or key not in bound or collection.split(".")[-1].isupper():
            continue  # constants (upper-case names) are tables, not state
        kind = kinds.get(collection)
        if kind == "dict":
            values = [n for n in _nearby_names(fn, info.last) if n not in (key, collection)]
            for value in values[:2]:
                made.setdefault(f"{collection}[{key}] = {value}")
        else:
            if kind in ("set", None):
                made.setdefault(f"{collection}.add({key})")
            if kind in ("list", None):
                made.setdefault(f"{collection}.append({key})")
    own = " ".join(u.src.lines(info.first, info.last).split())
    for statement in list(made)[:MAX_UPDATES]:
        if statement not in own:
            u.insert_around("collection_update", statement, "an update the code never makes")


def _nearby_names(fn: _Function, line: int) -> list[str]:
    """Names the function assigns on or before ``line``, the nearest first."""
    found: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.lineno <= line:
            found[node.id] = max(found.get(node.id, 0), node.lineno)
    return sorted(found, key=lambda n: (line - found[n], n))


# -- base_case ------------------------------------------------------------------------


def _recursive(fn: _Function) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == fn.name) or (
                isinstance(f, ast.Attribute) and f.attr == fn.name
            ):
                return True
    return False


def _int_of(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _numeric_params(fn: _Function) -> dict[str, list[int]]:
    """Parameters the function compares with integers or computes with, each with the
    integers it is compared with (in source order)."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    found: dict[str, list[int]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            names = [s.id for s in sides if isinstance(s, ast.Name) and s.id in params]
            numbers = [v for s in sides if (v := _int_of(s)) is not None]
            for name in names:
                if numbers:
                    found.setdefault(name, []).extend(numbers)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            for side in (node.left, node.right):
                if isinstance(side, ast.Name) and side.id in params:
                    found.setdefault(side.id, [])
    return {p: found[p] for p in params if p in found}


def _returned_literals(fn: _Function) -> list[str]:
    out: dict[str, None] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if _int_of(value) is not None or (
                isinstance(value, ast.Constant) and value.value in (None, True, False, "")
            ):
                out.setdefault(ast.unparse(value))
    return list(out)


def _first(items: Iterable[str], limit: int) -> list[str]:
    return list(dict.fromkeys(items))[:limit]


def base_case(u: Unit) -> None:
    """``if p == c: return r`` before a top-level statement of a recursive function."""
    info = u.info
    if not _insertable(info):
        return
    fn = _function_of(u)
    if fn is None or info.siblings is None or info.asts[0] not in fn.body or not _recursive(fn):
        return
    params = _numeric_params(fn)
    if not params:
        return
    hints = u.hints
    values = _first(
        [
            *_returned_literals(fn),
            *(str(n) for n in hints.numbers),
            *(str(n) for n in hints.test_numbers),
            "0",
            "1",
        ],
        MAX_VALUES,
    )
    nl = u.src.newline
    step = "\t" if info.indent.startswith("\t") else "    "
    start = u.src.line_start(info.first)
    made = 0
    for param, compared in params.items():
        constants = _first([*(str(c) for c in compared), "0", "1"], MAX_CONSTANTS)
        for constant in constants:
            for op in ("==", "<="):
                for value in values:
                    if made >= MAX_BASE_CASES:
                        return
                    cond = f"{param} {op} {constant}"
                    text = f"{info.indent}if {cond}:{nl}{info.indent}{step}return {value}{nl}"
                    u.statements(
                        "base_case",
                        start,
                        start,
                        text,
                        f"insert base case `if {cond}: return {value}` before line {info.first}",
                        i=info.start,
                        j=info.start,
                        line=info.first,
                    )
                    made += 1


# -- return_computed ------------------------------------------------------------------


def _returns_values(fn: _Function) -> bool:
    return any(isinstance(node, ast.Return) and node.value is not None for node in ast.walk(fn))


def return_computed(u: Unit) -> None:
    """``name = ...`` followed by ``return name`` (see the module)."""
    info = u.info
    if not _insertable(info) or info.compound or len(info.asts) != 1:
        return
    stmt = info.asts[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target: ast.expr = stmt.targets[0]
    elif isinstance(stmt, ast.AugAssign | ast.AnnAssign) and stmt.value is not None:
        target = stmt.target
    else:
        return
    if not isinstance(target, ast.Name):
        return
    fn = _function_of(u)
    if fn is None or not _returns_values(fn):
        return
    u.insert_around(
        "return_computed",
        f"return {target.id}",
        "return what the branch computes",
        before=False,
    )


MISSING_FAMILIES: dict[str, Callable[[Unit], None]] = {
    "collection_update": collection_update,
    "base_case": base_case,
    "return_computed": return_computed,
}
"""The missing-statement families by name."""
