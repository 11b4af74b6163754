"""Ops that mark places relative to objects: their corners, contact points, crossings of
full lines, the border, midpoints, diagonal neighbours."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import HV4, HV4D, Grid, components, dots_and_rest
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    color_change,
    fits,
    one_new_color,
    painted_cells,
)
from atlas_actors.arc.registry import BG, Case, K, OneOf, W, op


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(
        (s[s != t] != ctx.bg).all() and (t[s != t] != ctx.bg).all() for s, t in ctx.pairs
    ),
    when=W.CHANGED,
    # the 6 marks the block cell it faces; the 9 faces nothing
    cases=[Case((0,), "0000 6088 0088 9000", "0000 6068 0088 9000")],
)
def mark_contact(g: Grid, bg: int) -> Grid:
    """Every single cell looks along its row and column: the first cell of a bigger
    object (4-connected, one colour) it sees takes the single cell's colour."""
    h, w = g.shape
    dots, big = dots_and_rest(g, bg)
    o = g.copy()
    for ys, xs in dots:
        y, x = int(ys[0]), int(xs[0])
        for dy, dx in HV4:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w and g[ny, nx] == bg:
                ny, nx = ny + dy, nx + dx
            if 0 <= ny < h and 0 <= nx < w and big[ny, nx]:
                o[ny, nx] = g[y, x]
    return o


def g_corner_marks(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: read the four corner colours off the first
    pair's first object (or take the opposite cells) and keep what fits."""
    s, t = ctx.pairs[0]
    objs = components(s, 8, 0, ctx.bg)
    if not objs or len(objs) > 30:
        return
    ys, xs = objs[0]
    y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
    h, w = s.shape
    spots = ((y0 - 1, x0 - 1), (y0 - 1, x1 + 1), (y1 + 1, x0 - 1), (y1 + 1, x1 + 1))
    if all(0 <= y < h and 0 <= x < w for y, x in spots):
        cols = [int(t[y, x]) for y, x in spots]
        if ctx.bg not in cols and fits(ctx, corner_marks, "dot", "fixed", cols, ctx.bg):
            yield ("dot", "fixed", cols, ctx.bg)
    for size in ("dot", "same"):
        if fits(ctx, corner_marks, size, "opp", [0], ctx.bg):
            yield (size, "opp", [0], ctx.bg)


@op(
    params=(OneOf("dot", "same"), OneOf("fixed", "opp"), K.COLORS, K.COLOR),
    generator=g_corner_marks,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # each object gets its four outer diagonal corners marked
        Case(("dot", "fixed", [1, 2, 3, 4], 0), "0000 0550 0000", "1002 0550 3004"),
        Case(("same", "opp", [0], 0), "0000 0120 0340 0000", "4003 0120 0340 2001"),
    ],
)
def corner_marks(g: Grid, size: str, cmode: str, cols: list[int], bg: int) -> Grid:
    """Decorate each object (8-connected, any colours) at its four outer diagonal
    corners with a square of one cell (``size`` dot) or of the object's smaller side
    (same). Colours: ``cmode`` fixed takes ``cols`` (up-left, up-right, down-left,
    down-right); opp takes the object's cell in the opposite corner of its box. Only
    background cells are painted."""
    objs = components(g, 8, 0, bg)
    if not objs or len(objs) > 30 or (cmode == "fixed" and len(cols) != 4):
        raise ValueError("no objects, too many, or not four colours")
    h, w = g.shape
    o = g.copy()
    for ys, xs in objs:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        k = 1 if size == "dot" else min(y1 - y0, x1 - x0) + 1
        corners = [(y0 - k, x0 - k, y1, x1), (y0 - k, x1 + 1, y1, x0)]
        corners += [(y1 + 1, x0 - k, y0, x1), (y1 + 1, x1 + 1, y0, x0)]
        for i, (ty, tx, oy, ox) in enumerate(corners):
            col = cols[i] if cmode == "fixed" else int(g[oy, ox])
            for y in range(max(ty, 0), min(ty + k, h)):
                for x in range(max(tx, 0), min(tx + k, w)):
                    if g[y, x] == bg:
                        o[y, x] = col
    return o


def g_midpoint_mark(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour: try a dot and a plus."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for shape in ("dot", "plus"):
        if fits(ctx, midpoint_mark, shape, ch[1][0], ctx.bg):
            yield (shape, ch[1][0], ctx.bg)


@op(
    params=(OneOf("dot", "plus"), K.COLOR, K.COLOR),
    generator=g_midpoint_mark,
    when=W.PAINTED | W.SHALLOW,
    # a plus of 3 halfway between the two 1s in a row
    cases=[Case(("plus", 3, 0), "00000 10001 00000", "00300 13331 00300")],
)
def midpoint_mark(g: Grid, shape: str, c: int, bg: int) -> Grid:
    """Mark with ``c`` the midpoint of every two same-coloured single cells that share
    a row or column an even distance apart: the cell (``shape`` dot) or a plus around
    it (plus). Only background cells are painted."""
    h, w = g.shape
    cells = [(int(ys[0]), int(xs[0])) for ys, xs in components(g, 8, 1, bg) if ys.size == 1]
    if len(cells) < 2 or len(cells) > 20:
        raise ValueError("needs two to twenty single cells")
    o = g.copy()
    arm = ((0, 0),) if shape == "dot" else ((0, 0), *HV4)
    for i, (y, x) in enumerate(cells):
        for v, u in cells[i + 1 :]:
            if g[y, x] != g[v, u] or (y != v and x != u) or (v - y + u - x) % 2:
                continue
            my, mx = (y + v) // 2, (x + u) // 2
            for dy, dx in arm:
                if 0 <= my + dy < h and 0 <= mx + dx < w and g[my + dy, mx + dx] == bg:
                    o[my + dy, mx + dx] = c
    return o


def g_border_marks(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, with one colour, all on one border line."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for side in HV4D:
        if fits(ctx, border_marks, side, ch[1][0], ctx.bg):
            yield (side, ch[1][0], ctx.bg)
            return


@op(
    params=(OneOf(*HV4D), K.COLOR, K.COLOR),
    generator=g_border_marks,
    when=W.PAINTED | W.SHALLOW,
    # each cup drops a 4 onto the bottom row below its centre; the 2-wide bar has none
    cases=[Case(("down", 4, 0), "666033 606000 000000", "666033 606000 040000")],
)
def border_marks(g: Grid, side: str, c: int, bg: int) -> Grid:
    """Drop a mark of colour ``c`` from every object (8-connected, one colour) onto the
    grid's border on ``side`` (down, up, left, right), at the object's centre column
    (or row); objects with no centre cell (an even span) are skipped."""
    h, w = g.shape
    objs = components(g, 8, 1, bg)
    if not objs or len(objs) > 30:
        raise ValueError("no objects or too many")
    o = g.copy()
    done = 0
    for ys, xs in objs:
        span = xs if side in ("down", "up") else ys
        lo, hi = int(span.min()), int(span.max())
        if (lo + hi) % 2:
            continue
        mid = (lo + hi) // 2
        y, x = {"down": (h - 1, mid), "up": (0, mid), "left": (mid, 0), "right": (mid, w - 1)}[side]
        o[y, x] = c
        done += 1
    if not done:
        raise ValueError("no object with a centre")
    return o


def g_mark_crossings(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; the changed cells got one colour and lie around full lines."""
    c = one_new_color(ctx)
    if c is not None and fits(ctx, mark_crossings, c, ctx.bg):
        yield (c, ctx.bg)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_mark_crossings,
    when=W.SAME_SHAPE | W.SHALLOW,
    # a full row of 2 crosses a full column of 3: a ring of 4 around the crossing
    cases=[Case((4, 0), "0300 2222 0300 0300", "4440 4242 4440 0300")],
)
def mark_crossings(g: Grid, c: int, bg: int) -> Grid:
    """Where a full row and a full column of non-background cells cross, paint the 8
    cells around the crossing with ``c``."""
    fg = g != bg
    rows = np.nonzero(fg.all(axis=1))[0].tolist()
    cols = np.nonzero(fg.all(axis=0))[0].tolist()
    if not rows or not cols or len(rows) * len(cols) > 20:
        raise ValueError("no crossing or too many")
    o = g.copy()
    for y in rows:
        for x in cols:
            keep = int(g[y, x])
            o[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2] = c
            o[y, x] = keep
    return o


def g_diag_marks(ctx: Ctx) -> Iterator[Args]:
    """A new colour painted only on background cells diagonally next to others."""
    for c in ctx.new_colors[:2]:
        got = painted_cells(ctx, c)
        if got is None:
            continue
        if all((diag_marks(s, 10, ctx.bg) == 10)[diff].all() for s, diff in got):
            yield (c, ctx.bg)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_diag_marks,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case((8, 0), "000 010 000", "808 010 808")],
)
def diag_marks(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` on the background cells diagonally next to a non-background cell."""
    h, w = g.shape
    p = np.pad(g != bg, 1)
    near = np.zeros((h, w), dtype=bool)
    for dy in (-1, 1):
        for dx in (-1, 1):
            near |= p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    return np.where(near & (g == bg), c, g)
