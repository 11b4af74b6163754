"""Programs as data over the ops of :mod:`atlas_actors.arc.ops`.

A program is an expression tree. Its JSON form is ``"x"`` (the input grid) or a list
``[op, arg, ...]`` whose arguments follow the op's signature in :data:`OPS`: grid
arguments are sub-expressions, ``fn`` arguments are sub-programs applied to a part of
the grid (``"x"`` inside them is that part), the rest are literal parameters (ints,
strings, lists of ints). Example::

    ["recolor", ["crop_object", "x", "largest", 4, 0, 0, 1], [[1, 2]]]

:class:`Program` is immutable and hashable; :func:`compile_program` turns one (or its
JSON form) into a callable on numpy grids, cached by canonical JSON.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
import types
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from atlas_actors.arc import grids
from atlas_actors.arc.ops import FAMILIES, OPS
from atlas_actors.arc.registry import SUB_KINDS, K, OneOf, OpSpec, ParamKind
from atlas_actors.errors import InvalidSolutionError

__all__ = ["OPS", "Expr", "OpSpec", "Program", "compile_program", "expr_size", "program_of"]

Grid = np.ndarray[Any, Any]
Expr = Any  # "x" or a tuple (op, *args)


# ---------------------------------------------------------------- validation


def _bad(path: str, msg: str) -> InvalidSolutionError:
    return InvalidSolutionError(f"invalid ARC program at {path}: {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_param(kind: ParamKind, v: Any, path: str) -> Any:
    """Validate one literal parameter; return it in hashable (tuple) form."""

    def ints(lo: int, hi: int) -> int:
        if not _is_int(v) or not lo <= v <= hi:
            raise _bad(path, f"expected an integer in {lo}..{hi}, got {v!r}")
        return int(v)

    def int_list(lo: int, hi: int, pairs: bool, lo2: int = 0, hi2: int = 9) -> tuple[Any, ...]:
        if not isinstance(v, list | tuple) or len(v) > 64:
            raise _bad(path, f"expected a list (at most 64 items), got {v!r}")
        out: list[Any] = []
        for item in v:
            if pairs:
                ok = (
                    isinstance(item, list | tuple)
                    and len(item) == 2
                    and _is_int(item[0])
                    and _is_int(item[1])
                    and lo <= item[0] <= hi
                    and lo2 <= item[1] <= hi2
                )
                if not ok:
                    raise _bad(path, f"expected [int, colour] pairs, got item {item!r}")
                out.append((int(item[0]), int(item[1])))
            else:
                if not _is_int(item) or not lo <= item <= hi:
                    raise _bad(path, f"expected integers in {lo}..{hi}, got item {item!r}")
                out.append(int(item))
        return tuple(out)

    if isinstance(kind, OneOf):
        if v not in kind.values:
            raise _bad(path, f"expected one of {', '.join(kind.values)}, got {v!r}")
        return v
    if kind is K.COLOR:
        return ints(0, 13)
    if kind is K.COLOR_OR_NONE:
        return ints(-1, 9)
    if kind is K.FLAG:
        return ints(0, 1)
    if kind is K.NEIGHBOURHOOD:
        return ints(0, 2)
    if kind is K.CONN:
        if v not in (4, 8) or not _is_int(v):
            raise _bad(path, f"expected connectivity 4 or 8, got {v!r}")
        return int(v)
    if kind is K.COUNT:
        return ints(1, 30)
    if kind is K.RIGID:
        return ints(0, 7)
    if kind is K.OFFSET:
        return ints(-30, 30)
    if kind is K.COLOR_MAP:
        return int_list(0, 9, True)
    if kind is K.TABLE:
        return int_list(-(10**12), 10**12, True)
    if kind is K.RIGIDS:
        return int_list(0, 7, False)
    if kind is K.COLORS:
        r = int_list(0, 9, False)
        if not r:
            raise _bad(path, "expected a non-empty colour list")
        return r
    if kind is K.INTS:
        return int_list(-(10**7), 10**7, False)
    raise AssertionError(kind)


def _norm(obj: Any, path: str = "program", depth: int = 0) -> Expr:
    """Validate a JSON program and return its hashable tuple form."""
    if depth > 40:
        raise _bad(path, "nested too deeply (more than 40 levels)")
    if obj == "x":
        return "x"
    if not isinstance(obj, list | tuple) or not obj or not isinstance(obj[0], str):
        raise _bad(path, f'expected "x" or [op, args...], got {obj!r:.80}')
    name = obj[0]
    spec = OPS.get(name)
    if spec is None:
        raise _bad(path, f"unknown op {name!r}; known ops: {', '.join(sorted(OPS))}")
    args = obj[1:]
    if len(args) != len(spec.kinds):
        raise _bad(path, f"op {name!r} takes {len(spec.kinds)} arguments, got {len(args)}")
    out: list[Any] = [name]
    for i, (kind, a) in enumerate(zip(spec.kinds, args, strict=True)):
        p = f"{path}/{name}[{i + 1}]"
        if kind in SUB_KINDS:
            out.append(_norm(a, p, depth + 1))
        else:
            out.append(_check_param(kind, a, p))
    return tuple(out)


def _to_json(e: Any) -> Any:
    if isinstance(e, tuple):
        return [_to_json(a) for a in e]
    return e


def _to_call(e: Any) -> Any:
    """Parameters as the primitives take them (lists, not tuples)."""
    if isinstance(e, tuple):
        return [_to_call(a) for a in e]
    return e


# ---------------------------------------------------------------- Program


class Program:
    """An immutable, hashable DSL program (an expression tree over the input ``x``)."""

    __slots__ = ("_fn", "_hash", "_key", "expr")

    expr: Expr
    _key: str
    _hash: int
    _fn: Callable[[Grid], Grid] | None

    def __init__(self, expr: Expr) -> None:
        e = _norm(expr)
        object.__setattr__(self, "expr", e)
        object.__setattr__(self, "_key", json.dumps(_to_json(e), separators=(",", ":")))
        object.__setattr__(self, "_hash", hash(self._key))
        object.__setattr__(self, "_fn", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Program is immutable")

    @classmethod
    def from_json(cls, obj: Any) -> Program:
        """Parse (and validate) the JSON form; raises InvalidSolutionError."""
        if isinstance(obj, Program):
            return obj
        if isinstance(obj, str) and obj != "x":
            try:
                obj = json.loads(obj)
            except json.JSONDecodeError as exc:
                raise _bad("program", f"not JSON: {exc}") from None
        return cls(obj)

    def to_json(self) -> Any:
        """Nested lists / str / int."""
        return _to_json(self.expr)

    def canonical(self) -> str:
        """Canonical JSON text (the cache key)."""
        return self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Program) and other._key == self._key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Program({self._key})"

    def __str__(self) -> str:
        return _expr_src(self.expr, "x")

    def size(self) -> int:
        """Number of op nodes."""
        return expr_size(self.expr)

    def __call__(self, grid: Grid) -> Grid:
        fn = self._fn
        if fn is None:
            fn = _compile_expr(self.expr)
            object.__setattr__(self, "_fn", fn)
        return _finish(fn(np.asarray(grid)))

    def to_python(self) -> str:
        """Standalone Python source (numpy only) defining ``transform(grid)``."""
        return to_python(self.expr)


def expr_size(e: Expr) -> int:
    if not isinstance(e, tuple):
        return 0
    spec = OPS[e[0]]
    return 1 + sum(expr_size(a) for k, a in zip(spec.kinds, e[1:], strict=True) if k in SUB_KINDS)


def _finish(r: Any) -> Grid:
    a = np.asarray(r)
    if a.ndim != 2:
        raise ValueError(f"program produced a {a.ndim}-D array")
    return np.ascontiguousarray(a, dtype=np.int64)


def _compile_expr(e: Expr) -> Callable[[Grid], Grid]:
    if e == "x":
        return lambda g: g
    spec = OPS[e[0]]
    parts: list[tuple[int, Any]] = []
    for k, a in zip(spec.kinds, e[1:], strict=True):
        if k is K.GRID:
            parts.append((0, _compile_expr(a)))
        elif k is K.PROGRAM:
            parts.append((1, _compile_expr(a)))
        else:
            parts.append((1, _to_call(a)))
    fn = spec.fn
    dyn = [
        i
        for i, (k, a) in enumerate(zip(spec.kinds, e[1:], strict=True))
        if k is K.COLOR and isinstance(a, int) and a >= 10
    ]
    if dyn:

        def run_roles(g: Grid) -> Grid:
            args = [v(g) if t == 0 else v for t, v in parts]
            for i in dyn:
                args[i] = grids.role_color(args[0], args[i])
            return fn(*args)  # type: ignore[no-any-return]

        return run_roles
    if len(parts) == 1:
        child = parts[0][1]
        return lambda g: fn(child(g))
    if len(parts) >= 2 and parts[0][0] == 0 and all(t == 1 for t, _ in parts[1:]):
        child0 = parts[0][1]
        rest = [v for _, v in parts[1:]]
        return lambda g: fn(child0(g), *rest)

    def run(g: Grid) -> Grid:
        args = [v(g) if t == 0 else v for t, v in parts]
        return fn(*args)  # type: ignore[no-any-return]

    return run


@lru_cache(maxsize=1 << 16)
def program_of(expr: Expr) -> Program:
    """The :class:`Program` of a hashable expression, built once: a search asks for the
    same ones over and over (to key states, to pass sub-programs to ops). Raises like
    the constructor (exceptions are not cached) and TypeError for an unhashable one."""
    return Program(expr)


@lru_cache(maxsize=8192)
def _compile_cached(key: str) -> Callable[[Grid], Grid]:
    return Program(json.loads(key))


def compile_program(obj: Any) -> Callable[[Grid], Grid]:
    """A callable for a Program or its JSON form (cached by canonical JSON).

    Invalid JSON raises :class:`~atlas_actors.errors.InvalidSolutionError`; calling the
    result on a grid may raise any exception (a failed pair).
    """
    if isinstance(obj, Program):
        return _compile_cached(obj.canonical())
    try:
        key = json.dumps(obj, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise _bad("program", f"not JSON-serialisable: {exc}") from None
    try:
        return _compile_cached(key)
    except InvalidSolutionError:
        raise
    except RecursionError:
        raise _bad("program", "nested too deeply") from None


# ---------------------------------------------------------------- Python source


def _expr_src(e: Expr, var: str) -> str:
    if e == "x":
        return var
    spec = OPS[e[0]]
    args: list[str] = []
    for k, a in zip(spec.kinds, e[1:], strict=True):
        if k is K.GRID:
            args.append(_expr_src(a, var))
        elif k is K.PROGRAM:
            inner = "x" if var != "x" else "o"
            args.append(f"lambda {inner}: {_expr_src(a, inner)}")
        elif k is K.COLOR and isinstance(a, int) and a >= 10:
            args.append(f"role_color({args[0]}, {a})")
        else:
            args.append(repr(_to_call(a)))
    return f"{e[0]}({', '.join(args)})"


def _used_ops(e: Expr, acc: set[str]) -> None:
    if isinstance(e, tuple):
        acc.add(e[0])
        for k, a in zip(OPS[e[0]].kinds, e[1:], strict=True):
            if k in SUB_KINDS:
                _used_ops(a, acc)


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _source_modules() -> list[types.ModuleType]:
    """Modules whose functions programs may use: :mod:`grids`, then the op families."""
    return [grids, *FAMILIES]


def _deps(fns: list[Callable[..., Any]]) -> list[tuple[str, Any]]:
    """Module-level names (and their objects) that the primitives ``fns`` need, in
    source order (:mod:`grids` first, then the op families).

    Each function's names are looked up where that function is defined, so a helper of
    a family module is found there; two different objects under one name would
    clash in a standalone script and raise ``ValueError``. A compiled kernel
    (:mod:`grids`' ``COMPILED``) is replaced by the pure function it stands for."""
    mods = _source_modules()
    index = {m.__name__: i for i, m in enumerate(mods)}
    found: dict[str, tuple[int, int, Any]] = {}
    todo: list[tuple[str, dict[str, Any]]] = [(f.__name__, f.__globals__) for f in fns]
    while todo:
        n, scope = todo.pop()
        if n not in scope or isinstance(scope[n], types.ModuleType):
            continue
        obj = getattr(scope[n], "__pure__", scope[n])  # a compiled kernel: its pure version
        if n in found:
            prev = found[n][2]
            if prev is not obj and n != "Grid" and repr(prev) != repr(obj):
                raise ValueError(f"two primitives' helpers are both named {n!r}")
            continue
        where = obj.__globals__ if isinstance(obj, types.FunctionType) else scope
        mi = index.get(where.get("__name__", ""), 0)
        order = list(vars(mods[mi]))
        found[n] = (mi, order.index(n) if n in order else 0, obj)
        if isinstance(obj, types.FunctionType):
            todo.extend((c, obj.__globals__) for c in _code_names(obj.__code__))
    return [(n, v[2]) for n, v in sorted(found.items(), key=lambda kv: kv[1][:2])]


def _function_source(fn: types.FunctionType) -> str:
    """``fn``'s source without its decorators (an op's declaration stays behind)."""
    src = textwrap.dedent(inspect.getsource(fn))
    node = ast.parse(src).body[0]
    if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
        return src
    return "\n".join(src.splitlines()[node.lineno - 1 :]) + "\n"


def to_python(e: Expr) -> str:
    """Standalone source: the primitives the program uses, then ``transform(grid)``."""
    ops: set[str] = set()
    _used_ops(e, ops)
    fns = [OPS[o].fn for o in sorted(ops)] + [grids.role_color]
    lines = [
        '"""ARC program found by atlas_actors (standalone: needs only numpy)."""',
        "",
        "from __future__ import annotations",
        "",
        "import zlib",
        "from typing import Any",
        "",
        "import numpy as np",
        "",
        "Grid = np.ndarray[Any, Any]",
        "",
    ]
    for n, obj in _deps(fns):
        if isinstance(obj, types.FunctionType):
            lines.append(_function_source(obj).rstrip() + "\n\n")
        elif n.startswith("_CACHE"):
            lines.append(f"{n}: dict[Any, Any] = {{}}\n")
        elif n != "Grid":
            lines.append(f"{n} = {obj!r}\n")
    lines.append("def transform(grid: Any) -> Grid:")
    lines.append("    x = np.asarray(grid, dtype=np.int64)")
    lines.append(f"    return np.asarray({_expr_src(e, 'x')})")
    return "\n".join(lines) + "\n"


def readable(solution: Any) -> str | None:
    """A solution as text a person can read (DSL programs as standalone Python)."""
    if solution is None:
        return None
    if isinstance(solution, str):
        return solution
    try:
        return str(Program.from_json(solution).to_python())
    except Exception:  # not a DSL program: show the data
        return json.dumps(solution)
