"""More DSL ops (see ops_objects.py for the conventions): staircases of shrinking
parallel copies grown from straight lines, the grid moved by a tally of marker cells,
and the closed rectangular rooms of a line drawing filled.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import _fits, _painted_only
from atlas_actors.arc.prims import _DIRS, components

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]


def _misc_lines(g: Grid, bg: int) -> list[tuple[int, int, int, int, str]]:
    """Straight one-colour lines (4-connected objects one cell thick, at least two
    long): ``(colour, y0, x0, length, axis)`` with ``axis`` "v" or "h"."""
    out = []
    for ys, xs in components(g, 4, 1, bg):
        if ys.size < 2:
            continue
        if (xs == xs[0]).all():
            out.append((int(g[ys[0], xs[0]]), int(ys.min()), int(xs[0]), int(ys.size), "v"))
        elif (ys == ys[0]).all():
            out.append((int(g[ys[0], xs[0]]), int(ys[0]), int(xs.min()), int(xs.size), "h"))
        else:
            return []
    return out


def line_staircase(g: Grid, b: int, bg: int) -> Grid:
    """Grow a staircase from every straight line: parallel copies at distance ``d`` on
    both sides, each ``d`` cells shorter, kept flush with the line's end on the grid
    border (else its first end), coloured alternately ``b`` (odd ``d``) and the line's
    own colour (even ``d``); only background cells are painted."""
    lines = _misc_lines(g, bg)
    if not lines or len(lines) > 4:
        raise ValueError("needs one to four straight lines")
    t = g.T if lines[0][4] == "h" else g
    if any(ln[4] != lines[0][4] for ln in lines):
        raise ValueError("lines must be parallel")
    o = t.copy()
    h, w = t.shape
    for a, y0, x0, n, axis in lines:
        y, x = (x0, y0) if axis == "h" else (y0, x0)
        top = y + n >= h and y > 0  # flush with the far border: grow from the far end
        for d in range(1, n):
            col = a if d % 2 == 0 else b
            ys = range(y + d, y + n) if top else range(y, y + n - d)
            for cx in (x - d, x + d):
                if 0 <= cx < w:
                    for cy in ys:
                        if o[cy, cx] == bg:
                            o[cy, cx] = col
    return o.T if lines[0][4] == "h" else o


_STEPS8 = ("up", "down", "left", "right", "ul", "ur", "dl", "dr")
"""The one-step directions of :data:`prims._DIRS`."""


def shift_by_count(g: Grid, m: int, d: str, bg: int) -> Grid:
    """Count the cells of colour ``m`` (a tally), erase them, and move the rest of the
    grid that many steps in direction ``d``; cells moved in from outside copy the
    grid's edge (so lines running across the grid stay whole)."""
    ((dy, dx),) = _DIRS[d]
    n = int((g == m).sum())
    a = np.where(g == m, bg, g)
    h, w = g.shape
    ys = np.clip(np.arange(h) - dy * n, 0, h - 1)
    xs = np.clip(np.arange(w) - dx * n, 0, w - 1)
    return a[np.ix_(ys, xs)].copy()


def fill_rooms(g: Grid, e: int, c: int) -> Grid:
    """Paint ``c`` inside the rectangular rooms of a line drawing: 4-connected regions
    of colour ``e`` that are solid rectangles walled in on every side inside the grid
    (their 8-neighbour ring) by one other colour whose walls stop at the room's corners
    (lines may meet a wall mid-side, not continue one); a room may lean on one grid
    side."""
    h, w = g.shape
    regs = components(np.where(g == e, 1, 0), 4, 1, 0)
    if len(regs) > 200:
        raise ValueError("too many regions")
    o = g.copy()
    hit = False
    for ys, xs in regs:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        if ys.size != (y1 - y0 + 1) * (x1 - x0 + 1):
            continue
        if (y0 == 0) + (y1 == h - 1) + (x0 == 0) + (x1 == w - 1) > 1:
            continue
        ring = g[max(y0 - 1, 0) : y1 + 2, max(x0 - 1, 0) : x1 + 2].copy()
        oy, ox = y0 - max(y0 - 1, 0), x0 - max(x0 - 1, 0)
        ring[oy : oy + y1 - y0 + 1, ox : ox + x1 - x0 + 1] = -1
        vals = np.unique(ring[ring >= 0])
        if vals.size != 1 or int(vals[0]) == e:
            continue
        wall = int(vals[0])
        ok = True
        for cy, sy in ((y0 - 1, -1), (y1 + 1, 1)):
            for cx, sx in ((x0 - 1, -1), (x1 + 1, 1)):
                if not (0 <= cy < h and 0 <= cx < w):
                    continue
                for py, px in ((cy + sy, cx), (cy, cx + sx)):
                    if 0 <= py < h and 0 <= px < w and g[py, px] == wall:
                        ok = False
        if ok:
            o[ys, xs] = c
            hit = True
    if not hit:
        raise ValueError("no rooms")
    return o


def g_line_staircase(ctx: Ctx) -> Iterator[Args]:
    """Every input holds a few straight lines and gains cells (nothing else changes)
    in the lines' colour and one other colour: grow staircases in that colour."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    from atlas_actors.arc.infer import _specs

    bs = []
    for s, t in ctx.pairs:
        d = s != t
        if not d.any() or (s[d] != ctx.bg).any():
            return
        lines = _misc_lines(s, ctx.bg)
        if not lines or len(lines) > 4:
            return
        new = set(np.unique(t[d]).tolist()) - {ln[0] for ln in lines}
        if len(new) != 1:
            return
        bs.append(new.pop())
    for b in _specs(ctx.train, bs)[:2]:
        yield (b, ctx.bg)


def g_shift_by_count(ctx: Ctx) -> Iterator[Args]:
    """A colour present in some inputs vanishes from every target, and its number of
    cells varies: the tally of a move."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for m in range(10):
        if m == ctx.bg or any((t == m).any() for t in ctx.targets):
            continue
        counts = {int((s == m).sum()) for s in ctx.train}
        if len(counts) < 2:
            continue
        for d in _STEPS8:
            if all(np.array_equal(shift_by_count(s, m, d, ctx.bg), t) for s, t in ctx.pairs):
                yield (m, d, ctx.bg)


def g_fill_rooms(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour turn into one other colour (the same in every pair)."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    e = c = -1
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return
        a, b = np.unique(s[d]), np.unique(t[d])
        if a.size != 1 or b.size != 1 or e not in (-1, int(a[0])) or c not in (-1, int(b[0])):
            return
        e, c = int(a[0]), int(b[0])
    try:
        if all(np.array_equal(fill_rooms(s, e, c), t) for s, t in ctx.pairs):
            yield (e, c)
    except ValueError:
        return


def complete_by_analogy(g: Grid, axis: str, bg: int) -> Grid:
    """Finish partly drawn lines (rows for ``axis`` "h", columns for "v") after a
    complete one: each line with background gaps takes the nearest earlier complete
    line (no background) whose colours map one way onto its drawn cells, and its gaps
    get the mapped colours of that template (so "23......" under "14144141" becomes
    "23233232")."""
    t = g if axis == "h" else g.T
    o = t.copy()
    full = [y for y in range(t.shape[0]) if (t[y] != bg).all()]
    hit = False
    for y in range(t.shape[0]):
        row = t[y]
        gaps = row == bg
        if not gaps.any() or gaps.all():
            continue
        for ty in sorted(full, key=lambda f: (f > y, abs(f - y))):
            cmap: dict[int, int] = {}
            tmpl = t[ty]
            if all(
                cmap.setdefault(int(a), int(b)) == int(b)
                for a, b in zip(tmpl[~gaps], row[~gaps], strict=True)
            ) and all(int(a) in cmap for a in np.unique(tmpl[gaps])):
                o[y, gaps] = [cmap[int(a)] for a in tmpl[gaps]]
                hit = True
                break
    if not hit:
        raise ValueError("no line completes a template")
    return o if axis == "h" else o.T


def g_complete_by_analogy(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, in grids that hold a complete row or column."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    for axis in ("h", "v"):
        if _fits(ctx, complete_by_analogy, axis, ctx.bg):
            yield (axis, ctx.bg)


OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = [
    ("line_staircase", line_staircase, ("g", "c", "c")),
    ("shift_by_count", shift_by_count, ("g", "c", _STEPS8, "c")),
    ("fill_rooms", fill_rooms, ("g", "c", "c")),
    ("complete_by_analogy", complete_by_analogy, ("g", ("h", "v"), "c")),
]
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {
    "line_staircase": g_line_staircase,
    "shift_by_count": g_shift_by_count,
    "fill_rooms": g_fill_rooms,
    "complete_by_analogy": g_complete_by_analogy,
}
"""Parameter generators, by op name."""
