"""More DSL ops (see ops_objects.py for the conventions): a grid's one content block
grown in place into a fractal, a small output looked up by how many colours the grid
has (background included), and a solid occluding rectangle erased with the picture's
symmetry completed under it.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import _fit_symmetry
from atlas_actors.arc.ops_shape import table_grid

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]

OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = []
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {}
"""Parameter generators, by op name."""


def _isqrt_exact(n: int) -> int:
    r = int(n**0.5 + 0.5)
    return r if r * r == n else 0


def kron_fill(g: Grid, bg: int, invert: int) -> Grid:
    """In-place fractal: an ``n*n`` x ``m*m`` grid whose content sits inside one cell of
    its ``n`` x ``m`` block lattice becomes that block's self-``kron``: every
    non-background cell of the block (background if ``invert``) becomes a copy of it."""
    h, w = g.shape
    bh, bw = _isqrt_exact(h), _isqrt_exact(w)
    if bh < 2 or bw < 2:
        raise ValueError("sides are not squares")
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    by, bx = int(ys.min()) // bh, int(xs.min()) // bw
    if int(ys.max()) // bh != by or int(xs.max()) // bw != bx:
        raise ValueError("content spans several blocks")
    block = g[by * bh : (by + 1) * bh, bx * bw : (bx + 1) * bw]
    mask = (block != bg) if not invert else (block == bg)
    o = np.full_like(g, bg)
    for y in range(bh):
        for x in range(bw):
            if mask[y, x]:
                o[y * bh : (y + 1) * bh, x * bw : (x + 1) * bw] = block
    return o


def count_colors_grid(g: Grid, table: list[list[int]], h: int, w: int, bg: int) -> Grid:
    """The ``h`` x ``w`` grid that ``table`` stores for the number of distinct colours
    in the input, background included (entries ``[count * 1000 + cell index, colour]``;
    cells not listed are ``bg``): a pattern chosen by how many colours a grid has, also
    when the grid is filled and no colour is background."""
    return table_grid(int(np.unique(g).size), table, h, w, bg, g.dtype)


def _occluder(g: Grid, bg: int) -> Grid | None:
    """The mask of the one colour whose cells form one solid rectangle (at least 2 x 2),
    if exactly one colour does."""
    found = None
    for c in np.unique(g).tolist():
        if c == bg:
            continue
        m = g == c
        ys, xs = np.nonzero(m)
        hh, ww = int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1
        if hh >= 2 and ww >= 2 and hh * ww == ys.size:
            if found is not None:
                return None
            found = m
    return found


def unocclude(g: Grid, kind: str, bg: int) -> Grid:
    """Show what a solid rectangle hides: the one colour that forms a solid rectangle
    is an occluder; it is erased and the cells under it get what completing the
    symmetry ``kind`` (``h``, ``v``, ``hv``, ``rot``, ``diag``) of the rest shows,
    about the centre that fits the visible cells best (background where nothing
    mirrors)."""
    m = _occluder(g, bg)
    if m is None:
        raise ValueError("no single solid-rectangle occluder")
    a = np.where(m, bg, g)
    add = _fit_symmetry(a, kind, bg)
    o = a.copy()
    o[m] = add[m]
    return o


def _block_ok(s: Grid, bg: int) -> bool:
    h, w = s.shape
    bh, bw = _isqrt_exact(h), _isqrt_exact(w)
    if bh < 2 or bw < 2:
        return False
    ys, xs = np.nonzero(s != bg)
    return bool(
        ys.size
        and int(ys.min()) // bh == int(ys.max()) // bh
        and int(xs.min()) // bw == int(xs.max()) // bw
    )


def g_kron_fill(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape and ctx.grows and all(_block_ok(s, ctx.bg) for s in ctx.states):
        yield (ctx.bg, 0)
        yield (ctx.bg, 1)


def g_count_colors_grid(ctx: Ctx) -> Iterator[Args]:
    """Targets of one small shape, each a function of the input's colour count, with
    fewer counts than pairs (a rule, not a memorised answer per pair) and every test
    input's count seen in training."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or ctx.depth > 0:
        return
    h, w = shapes.pop()
    if h * w > 64:
        return
    grids: dict[int, Grid] = {}
    for s, t in ctx.pairs:
        n = int(np.unique(s).size)
        if n in grids and not np.array_equal(grids[n], t):
            return
        grids[n] = t
    if len(grids) < 2 or len(grids) == ctx.n:
        return
    if any(int(np.unique(x).size) not in grids for x in ctx.states[ctx.n :]):
        return
    # the targets' commonest colour fills the unlisted cells (a shorter table)
    fill = int(np.bincount(np.concatenate([t.ravel() for t in ctx.targets])).argmax())
    table = [
        [n * 1000 + i, int(c)]
        for n, t in sorted(grids.items())
        for i, c in enumerate(t.ravel().tolist())
        if c != fill
    ]
    if 0 < len(table) <= 64:
        yield (table, h, w, fill)


def g_unocclude(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; every state has one solid-rectangle colour and its target has
    none of it."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        m = _occluder(s, ctx.bg)
        if m is None or (t == s[m][0]).any():
            return
    if any(_occluder(x, ctx.bg) is None for x in ctx.states[ctx.n :]):
        return
    for k in ("h", "v", "hv", "rot", "diag"):
        yield (k, ctx.bg)


OP_TABLE.extend(
    [
        ("kron_fill", kron_fill, ("g", "c", "b")),
        ("unocclude", unocclude, ("g", ("h", "v", "hv", "rot", "diag"), "c")),
        ("count_colors_grid", count_colors_grid, ("g", "table", "k", "k", "c")),
    ]
)
GENERATORS.update(
    {
        "kron_fill": g_kron_fill,
        "unocclude": g_unocclude,
        "count_colors_grid": g_count_colors_grid,
    }
)
