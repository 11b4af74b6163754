"""Turned twins of the ops that work in one orientation only.

An op written for one layout (lines that leave the top or bottom edge, a run grown
from the left, bars laid out as columns, copies mirrored left-right, a main
diagonal, a palette in the first row, a grid in the top-left corner of a larger
canvas, cells taken in reading order) misses the same task turned on its side or
mirrored. Each twin here takes a rigid transform ``k`` (1-7, see
:func:`atlas_actors.arc.ops.geometry.rigid`) and runs its op on the grid turned by
``k``, then turns the result back: ``op_r(g, k, ...) = unrigid(op(rigid_transform(g, k), ...), k)``.
The twins are declared from one table, :data:`TWINS`: its parameters are ``k`` and
then its op's; its generator is the op's own generator run on the whole context turned
by ``k`` (:meth:`atlas_actors.arc.infer.Ctx.turned`), so it infers the same parameters
the op would on the turned task; its condition is its op's; its cases are one case of
its op under each transform it tries. The functions themselves are written out, so
that a found program's standalone Python holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import Grid, rigid_transform
from atlas_actors.arc.infer import Args, Ctx
from atlas_actors.arc.ops.cells import panel_colors, panel_key, panel_transforms
from atlas_actors.arc.ops.counting import count_diag, largest_bars
from atlas_actors.arc.ops.diagonals import bounce
from atlas_actors.arc.ops.periodic import palette_stripes, stripes
from atlas_actors.arc.ops.regions import fill_squares
from atlas_actors.arc.ops.rings import grow_rows
from atlas_actors.arc.ops.scale import canvas
from atlas_actors.arc.ops.shapes import alternate_cells
from atlas_actors.arc.ops.templates import anchor_copy
from atlas_actors.arc.registry import Case, Generator, K, Rows, grid_of, op, spec_of

ALL = (1, 2, 3, 4, 5, 6, 7)
"""Every transform but the identity."""

INVERSE = (0, 3, 2, 1, 4, 5, 6, 7)
"""``INVERSE[k]`` undoes ``rigid_transform(g, k)``: the quarter turns 1 and 3 undo each other,
every other transform undoes itself."""


def unrigid(g: Grid, k: int) -> Grid:
    """The inverse of ``rigid_transform(g, k)``."""
    return rigid_transform(g, INVERSE[k])


def turned_generator(base: Callable[..., Grid], ks: tuple[int, ...]) -> Generator:
    """The generator of ``base``'s turned twin: ``base``'s own generator on the context
    turned by each of ``ks``."""
    gen = spec_of(base).generator
    assert gen is not None, f"{base.__name__} has no generator to turn"

    def twin(ctx: Ctx) -> Iterator[Args]:
        for k in ks:
            for args in gen(ctx.turned(k)):
                yield (k, *args)

    return twin


def turned_cases(
    ks: tuple[int, ...], args: tuple[Any, ...], grid: Rows | str, want: Rows | str
) -> list[Case]:
    """A case of the base op (``args`` on ``grid`` gives ``want``) under every transform
    ``j``: the twin with ``k`` the inverse of ``j``, for each ``k`` in ``ks``, on the
    turned grid gives the turned answer."""
    g, w = np.asarray(grid_of(grid)), np.asarray(grid_of(want))
    return [
        Case((INVERSE[j], *args), rigid_transform(g, j).tolist(), rigid_transform(w, j).tolist())
        for j in ALL
        if INVERSE[j] in ks
    ]


def bounce_r(g: Grid, k: int, bg: int) -> Grid:
    """``bounce`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(bounce(rigid_transform(g, k), bg), k)


def anchor_copy_r(g: Grid, k: int, flip_c: int, bg: int) -> Grid:
    """``anchor_copy`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(anchor_copy(rigid_transform(g, k), flip_c, bg), k)


def largest_bars_r(g: Grid, k: int, conn: int, bg: int) -> Grid:
    """``largest_bars`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(largest_bars(rigid_transform(g, k), conn, bg), k)


def grow_rows_r(g: Grid, k: int, bg: int) -> Grid:
    """``grow_rows`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(grow_rows(rigid_transform(g, k), bg), k)


def count_diag_r(g: Grid, k: int, c: int, conn: int, bg: int) -> Grid:
    """``count_diag`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(count_diag(rigid_transform(g, k), c, conn, bg), k)


def palette_stripes_r(g: Grid, k: int, axis: str, bg: int) -> Grid:
    """``palette_stripes`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(palette_stripes(rigid_transform(g, k), axis, bg), k)


def canvas_r(g: Grid, k: int, ky: int, kx: int, bg: int) -> Grid:
    """``canvas`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(canvas(rigid_transform(g, k), ky, kx, bg), k)


def stripes_r(g: Grid, k: int, bg: int) -> Grid:
    """``stripes`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(stripes(rigid_transform(g, k), bg), k)


def fill_squares_r(g: Grid, k: int, kh: int, kw: int, e: int, c: int) -> Grid:
    """``fill_squares`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(fill_squares(rigid_transform(g, k), kh, kw, e, c), k)


def alternate_cells_r(g: Grid, k: int, a: int, c: int, bg: int) -> Grid:
    """``alternate_cells`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(alternate_cells(rigid_transform(g, k), a, c, bg), k)


def panel_transforms_r(g: Grid, k: int, ts: list[int], bg: int) -> Grid:
    """``panel_transforms`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(panel_transforms(rigid_transform(g, k), ts, bg), k)


def _panel_table() -> list[list[int]]:
    """The key table of the panel case: two 2x2 panels (one of 1s, one of 2s, each
    missing its bottom-right cell) named 4 and 6."""
    a = panel_key(np.array([[1, 1], [1, 0]]))
    b = panel_key(np.array([[2, 2], [2, 0]]))
    return sorted([[a, 4], [b, 6]])


def panel_colors_r(g: Grid, k: int, table: list[list[int]], layout: str, n: int, bg: int) -> Grid:
    """``panel_colors`` on the grid turned by rigid transform ``k``, turned back."""
    return unrigid(panel_colors(rigid_transform(g, k), table, layout, n, bg), k)


Twin = tuple[Callable[..., Grid], Callable[..., Grid], tuple[int, ...], Args, str, str]

TWINS: tuple[Twin, ...] = (
    (bounce_r, bounce, ALL, (0,), "000 000 000 000 000 100", "010 100 010 001 010 100"),
    (anchor_copy_r, anchor_copy, ALL, (3, 0), "43000 40000 00030 00000", "43000 40000 00034 00004"),
    (largest_bars_r, largest_bars, ALL, (8, 0), "40906 40906 40006", "46 46 46"),
    (grow_rows_r, grow_rows, ALL, (0,), "120000", "120000 122000 122200"),
    (count_diag_r, count_diag, ALL, (8, 8, 0), "100 002 000 330", "800 080 008"),
    (
        palette_stripes_r,
        palette_stripes,
        ALL,
        ("h", 0),
        "214 555 000 000 000 000",
        "214 555 222 111 444 222",
    ),
    # the grid in another corner of the canvas (the transposing transforms give the same
    # corners as these, with the factors swapped)
    (canvas_r, canvas, (2, 4, 5), (2, 2, 0), "12", "1200 0000"),
    # stripes already run across the shorter side: only the mirrors add anything
    (stripes_r, stripes, (2, 4, 5), (0,), "01020000", "01020102"),
    # greedy in reading order / counted from the first cell in reading order
    (fill_squares_r, fill_squares, ALL, (2, 2, 0, 3), "000 000 500", "330 330 500"),
    (alternate_cells_r, alternate_cells, ALL, (1, 2, 0), "110 000", "120 000"),
    # panels in reading order: the first panel is another one when mirrored or turned
    (
        panel_transforms_r,
        panel_transforms,
        ALL,
        ([0, 4, 2], 0),
        "12500500 30500500",
        "12521503 30503521",
    ),
    (panel_colors_r, panel_colors, ALL, (_panel_table(), "rows", 3, 0), "11022 10020", "444 666"),
)
"""Each twin, its op, the transforms it tries, and one case of its op (arguments, grid,
answer): the twin's parameters are ``k`` and then its op's, its generator and
condition are its op's on the turned task, its cases that case under each transform."""

for twin, base, ks, args, grid, want in TWINS:
    op(
        params=(K.RIGID, *spec_of(base).kinds[1:]),
        generator=turned_generator(base, ks),
        when=spec_of(base).when,
        cases=turned_cases(ks, args, grid, want),
    )(twin)
