"""Programs as data over the primitives in :mod:`atlas_actors.arc.prims`.

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

import inspect
import json
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from atlas_actors.arc import prims
from atlas_actors.arc.prims import GRID_FEATURES as GRID_FEATURES
from atlas_actors.arc.prims import SELECTORS as SELECTORS
from atlas_actors.errors import InvalidSolutionError

Grid = np.ndarray[Any, Any]
Expr = Any  # "x" or a tuple (op, *args)

FEATURES = (
    "size", "height", "width", "area", "top", "left", "bottom", "right", "ncolors", "color",
    "is_rect", "density", "touches_border", "holes", "nholes", "shape", "symmetric",
)  # fmt: skip
SPLIT_MODES = ("h2", "h3", "v2", "v3", "sep")
COMBINE_OPS = ("and", "or", "xor", "nor", "anb", "bna")
PICK_SELS = (
    "unique",
    "most",
    "least",
    "most_colors",
    "least_colors",
    "sym",
    "asym",
    *tuple(f"i{i}" for i in range(9)),
)
GRAVITY = ("down", "up", "left", "right")
RAY_DIRS = tuple(prims._DIRS)
SYM_KINDS = ("h", "v", "hv", "rot", "diag")
COUNT_WHAT = ("objects", "cells")
ALIGN_SIDES = ("top", "bottom", "left", "right")
NEIGHBOURHOODS = ("n4", "n8", "n4count", "n8count", "rays4", "rays4any", "nsets")


@dataclass(frozen=True)
class OpSpec:
    """Signature of one DSL op: the primitive and the kinds of its arguments."""

    name: str
    fn: Callable[..., Any]
    kinds: tuple[Any, ...]
    """``g`` grid, ``f`` sub-program, ``c`` colour (0-9, or a role 10-13 resolved on the
    first grid argument by ``prims.role_color``), ``cd`` colour or -1, ``b`` 0/1,
    ``nb`` neighbourhood (0 the 4 side cells, 1 all 8, 2 the 4 diagonal ones), ``conn``
    4/8, ``k`` 1..30, ``r`` rigid code 0..7, ``d`` -30..30, ``cmap`` colour pairs,
    ``table`` [int, colour] pairs, ``ts`` rigid codes, ``cl`` colours, ``il`` ints, or a
    tuple of allowed strings."""


def _ops() -> dict[str, OpSpec]:
    P = prims
    C4 = ("conn", "b", "c")  # conn, by_color, bg
    table: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
        ("rot90", P.rot90, ("g",)),
        ("rot180", P.rot180, ("g",)),
        ("rot270", P.rot270, ("g",)),
        ("flip_h", P.flip_h, ("g",)),
        ("flip_v", P.flip_v, ("g",)),
        ("transpose", P.transpose, ("g",)),
        ("antitranspose", P.antitranspose, ("g",)),
        ("rigid", P.rigid, ("g", "r")),
        ("shift", P.shift, ("g", "d", "d", "c")),
        ("recolor", P.recolor, ("g", "cmap")),
        ("replace_color", P.replace_color, ("g", "c", "c")),
        ("keep_color", P.keep_color, ("g", "c", "c")),
        ("erase_color", P.erase_color, ("g", "c", "c")),
        ("swap_colors", P.swap_colors, ("g", "c", "c")),
        ("majority_recolor", P.majority_recolor, ("g", "c")),
        ("minority_recolor", P.minority_recolor, ("g", "c")),
        ("crop_object", P.crop_object, ("g", SELECTORS, *C4, "b")),
        ("crop_nonbg", P.crop_nonbg, ("g", "c")),
        ("crop_color", P.crop_color, ("g", "c")),
        ("crop_inside", P.crop_inside, ("g", "c")),
        ("drop_bg_lines", P.drop_bg_lines, ("g", "c")),
        ("dedup_lines", P.dedup_lines, ("g",)),
        ("map_objects", P.map_objects, ("g", "f", *C4)),
        ("recolor_by", P.recolor_by, ("g", FEATURES, "table", "cd", *C4)),
        ("recolor_rank", P.recolor_rank, ("g", FEATURES, "cl", *C4)),
        ("filter_objects", P.filter_objects, ("g", FEATURES, "il", "b", *C4)),
        ("keep_extreme", P.keep_extreme, ("g", SELECTORS, *C4)),
        ("remove_extreme", P.remove_extreme, ("g", SELECTORS, *C4)),
        ("upscale", P.upscale, ("g", "k", "k")),
        ("downscale", P.downscale, ("g", "k", "k")),
        ("tile", P.tile, ("g", "k", "k")),
        ("tile_t", P.tile_t, ("g", "k", "k", "ts")),
        ("kron_self", P.kron_self, ("g", "c", "b")),
        ("hcat", P.hcat, ("g", "g")),
        ("vcat", P.vcat, ("g", "g")),
        ("layer", P.layer, ("g", "g", "c")),
        ("split_combine", P.split_combine, ("g", SPLIT_MODES, COMBINE_OPS, "c", "c")),
        ("split_overlay", P.split_overlay, ("g", SPLIT_MODES, "b", "c")),
        ("split_pick", P.split_pick, ("g", SPLIT_MODES, PICK_SELS, "c")),
        ("gravity", P.gravity, ("g", GRAVITY, "c")),
        ("fill_enclosed", P.fill_enclosed, ("g", "c", "c")),
        ("fill_bbox", P.fill_bbox, ("g", "c", *C4)),
        ("halo", P.halo, ("g", "c", "nb", "c")),
        ("interior", P.interior, ("g", "c", "c")),
        ("border", P.border, ("g", "c")),
        ("rays", P.rays, ("g", "c", RAY_DIRS, "b", "c")),
        ("connect", P.connect, ("g", "cd", "cd", "c")),
        ("symmetrize", P.symmetrize, ("g", SYM_KINDS, "c")),
        ("sym_repair", P.sym_repair, ("g", "c")),
        ("symmetrize_bbox", P.symmetrize_bbox, ("g", SYM_KINDS, "c")),
        ("crop_noise_repair", P.crop_noise_repair, ("g", "c")),
        ("count_row", P.count_row, ("g", COUNT_WHAT, "c", "conn", "c")),
        ("most_common_color_cell", P.most_common_color_cell, ("g", "c")),
        ("local_rule", P.local_rule, ("g", NEIGHBOURHOODS, "table", "c")),
        ("period_repair", P.period_repair, ("g", "c")),
        ("crop_period", P.crop_period, ("g",)),
        ("cells_to_pixels", P.cells_to_pixels, ("g", "c")),
        ("upscale_by", P.upscale_by, ("g", ("ncolors", "ncells"), "c")),
        ("object_gravity", P.object_gravity, ("g", GRAVITY, "conn", "c")),
        ("move_to_contact", P.move_to_contact, ("g", SELECTORS, *C4)),
        ("trim", P.trim, ("g",)),
        ("classify", P.classify, ("g", GRID_FEATURES, "table", "k", "k", "c")),
        ("extend_period", P.extend_period, ("g", "k", "k")),
        ("crop_at", P.crop_at, ("g", "d", "d", "k", "k")),
        ("const_grid", P.const_grid, ("g", "k", "k", "c")),
        ("connect_diag", P.connect_diag, ("g", "cd", "cd", "c")),
        ("lattice_fill", P.lattice_fill, ("g", "c", "b")),
        ("stamp", P.stamp, ("g", "table", "c")),
        ("rays_all", P.rays_all, ("g", RAY_DIRS, "b", "c")),
        ("attract", P.attract, ("g", "c", "b", "c")),
        ("symmetrize_about", P.symmetrize_about, ("g", "c", ("h", "v", "hv", "rot"), "c")),
        ("stripes", P.stripes, ("g", "c")),
        ("color_list", P.color_list, ("g", ("desc", "asc", "desc1"), ("v", "h"), "c")),
        ("fold", P.fold, ("g", ("h", "v"), "c")),
        ("line_majority", P.line_majority, ("g", ("rows", "cols", "auto"))),
        ("continue_period", P.continue_period, ("g", GRAVITY, "c")),
        ("flood_from", P.flood_from, ("g", "c", "c")),
        ("canvas", P.canvas, ("g", "k", "k", "c")),
        ("repeat_bbox", P.repeat_bbox, ("g", ("v", "h", "hv"), "c")),
        ("fill_regions", P.fill_regions, ("g", ("largest", "smallest"), "c", "c")),
        ("cells_map", P.cells_map, ("g", GRID_FEATURES, "table", "c")),
        ("fill_color_bbox", P.fill_color_bbox, ("g", "c")),
        ("spiral", P.spiral, ("g", "c")),
        ("count_fill", P.count_fill, ("g", ("objects", "big", "cells"), "c", "k", "k", "c")),
        ("align", P.align, ("g", "c", ALIGN_SIDES, "c")),
        ("project", P.project, ("g", "c", "c")),
        ("paint_template", P.paint_template, ("g", ("shape", "cell"), "b", "conn", "c")),
    ]
    for mod in extension_modules():
        table += mod.OP_TABLE
    return {n: OpSpec(n, f, k) for n, f, k in table}


def extension_modules() -> list[types.ModuleType]:
    """The modules that add ops (``OP_TABLE``) and generators (``GENERATORS``) to the
    core DSL; imported lazily, since they import :mod:`prims` and :mod:`infer`."""
    from atlas_actors.arc import (
        ops_cells,
        ops_crops,
        ops_lines,
        ops_misc,
        ops_moves,
        ops_objects,
        ops_regions,
        ops_shape,
        ops_stamps,
        ops_turned,
    )

    return [
        ops_cells,
        ops_shape,
        ops_objects,
        ops_regions,
        ops_stamps,
        ops_moves,
        ops_crops,
        ops_lines,
        ops_misc,
        ops_turned,
    ]


OPS: dict[str, OpSpec] = _ops()
"""Every op of the DSL by name."""


# ---------------------------------------------------------------- validation


def _bad(path: str, msg: str) -> InvalidSolutionError:
    return InvalidSolutionError(f"invalid ARC program at {path}: {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_param(kind: Any, v: Any, path: str) -> Any:
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

    if isinstance(kind, tuple):
        if v not in kind:
            raise _bad(path, f"expected one of {', '.join(kind)}, got {v!r}")
        return v
    if kind == "c":
        return ints(0, 13)
    if kind == "cd":
        return ints(-1, 9)
    if kind == "b":
        return ints(0, 1)
    if kind == "nb":
        return ints(0, 2)
    if kind == "conn":
        if v not in (4, 8) or not _is_int(v):
            raise _bad(path, f"expected connectivity 4 or 8, got {v!r}")
        return int(v)
    if kind == "k":
        return ints(1, 30)
    if kind == "r":
        return ints(0, 7)
    if kind == "d":
        return ints(-30, 30)
    if kind == "cmap":
        return int_list(0, 9, True)
    if kind == "table":
        return int_list(-(10**12), 10**12, True)
    if kind == "ts":
        return int_list(0, 7, False)
    if kind == "cl":
        r = int_list(0, 9, False)
        if not r:
            raise _bad(path, "expected a non-empty colour list")
        return r
    if kind == "il":
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
        if kind in ("g", "f"):
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
    return 1 + sum(expr_size(a) for k, a in zip(spec.kinds, e[1:], strict=True) if k in ("g", "f"))


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
        if k == "g":
            parts.append((0, _compile_expr(a)))
        elif k == "f":
            parts.append((1, _compile_expr(a)))
        else:
            parts.append((1, _to_call(a)))
    fn = spec.fn
    dyn = [
        i
        for i, (k, a) in enumerate(zip(spec.kinds, e[1:], strict=True))
        if k == "c" and isinstance(a, int) and a >= 10
    ]
    if dyn:

        def run_roles(g: Grid) -> Grid:
            args = [v(g) if t == 0 else v for t, v in parts]
            for i in dyn:
                args[i] = prims.role_color(args[0], args[i])
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
        if k == "g":
            args.append(_expr_src(a, var))
        elif k == "f":
            inner = "x" if var != "x" else "o"
            args.append(f"lambda {inner}: {_expr_src(a, inner)}")
        elif k == "c" and isinstance(a, int) and a >= 10:
            args.append(f"role_color({args[0]}, {a})")
        else:
            args.append(repr(_to_call(a)))
    return f"{e[0]}({', '.join(args)})"


def _used_ops(e: Expr, acc: set[str]) -> None:
    if isinstance(e, tuple):
        acc.add(e[0])
        for k, a in zip(OPS[e[0]].kinds, e[1:], strict=True):
            if k in ("g", "f"):
                _used_ops(a, acc)


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _source_modules() -> list[types.ModuleType]:
    """Modules whose functions programs may use: :mod:`prims`, then the extensions."""
    return [prims, *extension_modules()]


def _deps(names: set[str]) -> list[tuple[str, Any]]:
    """Module-level names (and their objects) that the primitives ``names`` need, in
    source order (:mod:`prims` first, then the extension modules).

    Each function's names are looked up where that function is defined, so a helper of
    an extension module is found there; two different objects under one name would
    clash in a standalone script and raise ``ValueError``."""
    mods = _source_modules()
    index = {m.__name__: i for i, m in enumerate(mods)}
    found: dict[str, tuple[int, int, Any]] = {}
    # each op's primitive, in the module that has it
    todo: list[tuple[str, dict[str, Any]]] = [
        (n, vars(next((m for m in mods if n in vars(m)), prims))) for n in names
    ]
    while todo:
        n, scope = todo.pop()
        if n not in scope or isinstance(scope[n], types.ModuleType):
            continue
        obj = scope[n]
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


def to_python(e: Expr) -> str:
    """Standalone source: the primitives the program uses, then ``transform(grid)``."""
    ops: set[str] = set()
    _used_ops(e, ops)
    fnames = {OPS[o].fn.__name__ for o in ops} | {"role_color"}
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
    for n, obj in _deps(fnames):
        if isinstance(obj, types.FunctionType):
            lines.append(inspect.getsource(obj).rstrip() + "\n\n")
        elif n.startswith("_CACHE"):
            lines.append(f"{n}: dict[Any, Any] = {{}}\n")
        elif n != "Grid":
            lines.append(f"{n} = {obj!r}\n")
    lines.append("def transform(grid: Any) -> Grid:")
    lines.append("    x = np.asarray(grid, dtype=np.int64)")
    lines.append(f"    return np.asarray({_expr_src(e, 'x')})")
    return "\n".join(lines) + "\n"
