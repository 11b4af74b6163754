"""Turned twins of the ops that work in one orientation only.

An op written for one layout (lines that leave the top or bottom edge, a run grown
from the left, bars laid out as columns, copies mirrored left-right, a main
diagonal, a palette in the first row, a grid in the top-left corner of a larger
canvas, cells taken in reading order) misses the same task turned on its side or
mirrored. Each twin here takes a rigid transform ``k`` (1-7, see
:func:`atlas_actors.arc.prims.rigid`) and runs its op on the grid turned by ``k``,
then turns the result back: ``op_r(g, k, ...) = unrigid(op(rigid(g, k), ...), k)``.
Its generator is the op's own generator run on the whole context turned by ``k``
(:meth:`atlas_actors.arc.infer.Ctx.turned`), so it infers the same parameters the op
would on the turned task.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import (
    alternate_cells,
    anchor_copy,
    bounce,
    fill_squares,
)
from atlas_actors.arc.ops_objects import (
    palette_stripes,
    panel_colors,
    panel_transforms,
)
from atlas_actors.arc.ops_shape import (
    count_diag,
    grow_rows,
    largest_bars,
)
from atlas_actors.arc.prims import canvas, rigid, stripes

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]
Gen = Callable[["Ctx"], Iterator[Args]]


def unrigid(g: Grid, k: int) -> Grid:
    """The inverse of ``rigid(g, k)`` (the quarter turns 1 and 3 undo each other;
    every other transform undoes itself)."""
    return rigid(g, 4 - k if k in (1, 3) else k)


def bounce_r(g: Grid, k: int, bg: int) -> Grid:
    return unrigid(bounce(rigid(g, k), bg), k)


def anchor_copy_r(g: Grid, k: int, flip_c: int, bg: int) -> Grid:
    return unrigid(anchor_copy(rigid(g, k), flip_c, bg), k)


def largest_bars_r(g: Grid, k: int, conn: int, bg: int) -> Grid:
    return unrigid(largest_bars(rigid(g, k), conn, bg), k)


def grow_rows_r(g: Grid, k: int, bg: int) -> Grid:
    return unrigid(grow_rows(rigid(g, k), bg), k)


def count_diag_r(g: Grid, k: int, c: int, conn: int, bg: int) -> Grid:
    return unrigid(count_diag(rigid(g, k), c, conn, bg), k)


def palette_stripes_r(g: Grid, k: int, axis: str, bg: int) -> Grid:
    return unrigid(palette_stripes(rigid(g, k), axis, bg), k)


def canvas_r(g: Grid, k: int, ky: int, kx: int, bg: int) -> Grid:
    return unrigid(canvas(rigid(g, k), ky, kx, bg), k)


def stripes_r(g: Grid, k: int, bg: int) -> Grid:
    return unrigid(stripes(rigid(g, k), bg), k)


def fill_squares_r(g: Grid, k: int, kh: int, kw: int, e: int, c: int) -> Grid:
    return unrigid(fill_squares(rigid(g, k), kh, kw, e, c), k)


def alternate_cells_r(g: Grid, k: int, a: int, c: int, bg: int) -> Grid:
    return unrigid(alternate_cells(rigid(g, k), a, c, bg), k)


def panel_transforms_r(g: Grid, k: int, ts: list[int], bg: int) -> Grid:
    return unrigid(panel_transforms(rigid(g, k), ts, bg), k)


def panel_colors_r(g: Grid, k: int, table: list[list[int]], layout: str, n: int, bg: int) -> Grid:
    return unrigid(panel_colors(rigid(g, k), table, layout, n, bg), k)


def _turned(base: str, ks: tuple[int, ...]) -> Gen:
    """The generator of ``base``'s turned twin: ``base``'s own generator on the context
    turned by each of ``ks``."""

    def twin(ctx: Ctx) -> Iterator[Args]:
        # looked up when called: infer builds GENERATORS from this module's table too
        from atlas_actors.arc.infer import GENERATORS

        gen = GENERATORS[base]
        for k in ks:
            for args in gen(ctx.turned(k)):
                yield (k, *args)

    return twin


_ALL = (1, 2, 3, 4, 5, 6, 7)

_TWINS: list[tuple[str, Callable[..., Grid], tuple[Any, ...], tuple[int, ...]]] = [
    ("bounce", bounce_r, ("c",), _ALL),
    ("anchor_copy", anchor_copy_r, ("cd", "c"), _ALL),
    ("largest_bars", largest_bars_r, ("conn", "c"), _ALL),
    ("grow_rows", grow_rows_r, ("c",), _ALL),
    ("count_diag", count_diag_r, ("c", "conn", "c"), _ALL),
    ("palette_stripes", palette_stripes_r, (("h", "v"), "c"), _ALL),
    # the grid in another corner of the canvas (the transposing transforms give the same
    # corners as these, with the factors swapped)
    ("canvas", canvas_r, ("k", "k", "c"), (2, 4, 5)),
    # stripes already run across the shorter side: only the mirrors add anything
    ("stripes", stripes_r, ("c",), (2, 4, 5)),
    # greedy in reading order / counted from the first cell in reading order
    ("fill_squares", fill_squares_r, ("k", "k", "c", "c"), _ALL),
    ("alternate_cells", alternate_cells_r, ("c", "c", "c"), _ALL),
    # panels in reading order: the first panel is another one when mirrored or turned
    ("panel_transforms", panel_transforms_r, ("ts", "c"), _ALL),
    (
        "panel_colors",
        panel_colors_r,
        ("table", ("rows", "cols"), "k", "c"),
        _ALL,
    ),
]
"""``(op, twin, op's argument kinds after the grid, transforms tried)``."""

OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = [
    (f"{base}_r", fn, ("g", "r", *kinds)) for base, fn, kinds, _ks in _TWINS
]
"""``(name, primitive, argument kinds)`` rows added to the DSL: each twin's kinds are
its op's with the transform ``k`` (kind ``r``) after the grid."""

GENERATORS: dict[str, Gen] = {f"{base}_r": _turned(base, ks) for base, _fn, _kinds, ks in _TWINS}
"""Parameter generators, by op name."""
