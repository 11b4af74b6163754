"""Ops that draw nested rings, layers and spirals: concentric colours, staircases of rows,
ring outlines, L-shaped layers, permuted ring colours."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import CORNERS, Grid, role_color
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    bg_readings,
    fits,
    fits_bg,
    pair_cmaps,
    resolved_pairs,
)
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, OnSelf, W, op


def nest_shapes(shapes: list[tuple[int, Grid]], bg: int, dtype: Any) -> Grid:
    """Masks ``(colour, mask)`` nested concentrically: the output is as big as the
    biggest mask, each mask centred in it in its colour, bigger ones painted first.
    Raises when a mask cannot be centred exactly."""
    if len(shapes) < 2:
        raise ValueError("needs two colours")
    hh = max(m.shape[0] for _c, m in shapes)
    ww = max(m.shape[1] for _c, m in shapes)
    o = np.full((hh, ww), bg, dtype=dtype)
    for c, m in sorted(shapes, key=lambda v: -v[1].size):
        h, w = m.shape
        if (hh - h) % 2 or (ww - w) % 2:
            raise ValueError("no exact centre")
        dy, dx = (hh - h) // 2, (ww - w) // 2
        o[dy : dy + h, dx : dx + w][m] = c
    return o


def color_mask(g: Grid, c: int) -> Grid:
    """The cells of colour ``c`` as a mask the size of their bounding box."""
    ys, xs = np.nonzero(g == c)
    m = np.zeros((int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1), dtype=bool)
    m[ys - ys.min(), xs - xs.min()] = True
    return m


@op(
    params=(K.COLOR,),
    generator=lambda ctx: ((c,) for c in ctx.new_colors[:1]),
    only_if=lambda ctx: all((s == s.flat[0]).all() for s in ctx.states),
    when=W.SAME_SHAPE,
    cases=[Case((3,), "00000 00000 00000 00000 00000", "33333 00003 33303 30003 33333")],
)
def spiral(g: Grid, c: int) -> Grid:
    """A square spiral of colour ``c`` drawn over the grid from the top-left corner,
    clockwise, one background cell between its turns."""
    h, w = g.shape
    o = g.copy()
    path = np.zeros((h, w), dtype=bool)
    y, x, dy, dx = 0, 0, 0, 1
    path[0, 0] = True
    for _ in range(h * w):
        moved = False
        for _turn in range(2):
            ny, nx = y + dy, x + dx
            ay, ax = ny + dy, nx + dx  # the cell after next must not be on the path
            ok = 0 <= ny < h and 0 <= nx < w and not path[ny, nx]
            if ok and 0 <= ay < h and 0 <= ax < w and path[ay, ax]:
                ok = False
            if ok:
                y, x = ny, nx
                path[y, x] = True
                moved = True
                break
            dy, dx = dx, -dy  # turn clockwise
        if not moved:
            break
    o[path] = c
    return o


@op(
    params=(OneOf("rev", "out", "in"),),
    generator=lambda ctx: ((m,) for m in ("rev", "out", "in")),
    only_if=lambda ctx: pair_cmaps(ctx) is not None,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        Case(("rev",), "111 121 111", "222 212 222"),
        # colours from the outside in: 8 0 5 -> each takes the one before (5 8 0)
        Case(("out",), "88888 80008 80508 80008 88888", "55555 58885 58085 58885 55555"),
        Case(("in",), "888 808 888", "000 080 000"),
    ],
)
def ring_colors(g: Grid, mode: str) -> Grid:
    """Permute the colours of concentric rings (the cells at one distance from the
    grid's edge, each ring one colour). Taking the colours in order from the outside
    in, they are reversed (``mode`` rev), or each takes the colour of the one before
    it, the first that of the last (out), or of the one after it (in)."""
    h, w = g.shape
    yy, xx = np.mgrid[0:h, 0:w]
    layer = np.minimum(np.minimum(yy, xx), np.minimum(h - 1 - yy, w - 1 - xx))
    cols = []
    for k in range(int(layer.max()) + 1):
        u = np.unique(g[layer == k])
        if u.size != 1:
            raise ValueError("a ring is not one colour")
        cols.append(int(u[0]))
    order = list(dict.fromkeys(cols))
    n = len(order)
    if n < 2:
        raise ValueError("one colour")
    if mode == "rev":
        new = order[::-1]
    elif mode == "out":
        new = [order[(i - 1) % n] for i in range(n)]
    else:
        new = [order[(i + 1) % n] for i in range(n)]
    lut = np.arange(10)
    lut[order] = new
    return lut[g]


_R0, _R1 = [5] * 9, [5, 0, 0, 0, 0, 0, 0, 0, 5]
_R2, _R3 = [5, 0, 5, 5, 5, 5, 5, 0, 5], [5, 0, 5, 0, 0, 0, 5, 0, 5]
_RINGS = [_R0, _R1, _R2, _R3, [5, 0, 5, 0, 5, 0, 5, 0, 5], _R3, _R2, _R1, _R0]


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=(lambda ctx: all(int((s != ctx.bg).sum()) == 3 for s in ctx.states), OnSelf(fits)),
    when=W.PAINTED | W.SHALLOW,
    # three 5s two apart on a diagonal: rings every 2 cells around the middle one
    cases=[
        Case(
            (0,),
            [[5 if y == x and y in (2, 4, 6) else 0 for x in range(9)] for y in range(9)],
            _RINGS,
        )
    ],
)
def extend_rings(g: Grid, bg: int) -> Grid:
    """Three cells of one colour on a diagonal, evenly spaced: square ring outlines
    centred on the middle one, every spacing apart (the outer two cells are corners
    of the first ring), drawn out to the grid's edge."""
    ys, xs = np.nonzero(g != bg)
    if ys.size != 3 or np.unique(g[ys, xs]).size != 1:
        raise ValueError("not three cells of one colour")
    order = np.argsort(ys, kind="stable")
    ys, xs = ys[order], xs[order]
    d = int(ys[1] - ys[0])
    if d < 1 or int(ys[2] - ys[1]) != d or abs(int(xs[1] - xs[0])) != d:
        raise ValueError("not evenly spaced on a diagonal")
    if int(xs[2] - xs[1]) != int(xs[1] - xs[0]):
        raise ValueError("not on one line")
    h, w = g.shape
    cy, cx, c = int(ys[1]), int(xs[1]), int(g[ys[1], xs[1]])
    o = g.copy()
    for k in range(1, 31):
        r = k * d
        y0, y1, x0, x1 = cy - r, cy + r, cx - r, cx + r
        if y0 < 0 and x0 < 0 and y1 >= h and x1 >= w:
            break
        for y in (y0, y1):
            if 0 <= y < h:
                o[y, max(x0, 0) : min(x1, w - 1) + 1] = c
        for x in (x0, x1):
            if 0 <= x < w:
                o[max(y0, 0) : min(y1, h - 1) + 1, x] = c
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.FIRST,
    only_if=lambda ctx: all(
        s.shape[0] == 1 and t.shape == (s.shape[1] // 2, s.shape[1]) for s, t in ctx.pairs
    ),
    cases=[Case((0,), "120000", "120000 122000 122200")],
)
def grow_rows(g: Grid, bg: int) -> Grid:
    """A one-row grid grown into a staircase of ``w // 2`` rows: row i has its
    coloured run (from the left) extended by i cells in the run's last colour."""
    h, w = g.shape
    if h != 1 or w < 2:
        raise ValueError("not a single row")
    on = np.nonzero(g[0] != bg)[0]
    if on.size == 0 or on[0] != 0 or on.size != on[-1] + 1:
        raise ValueError("no run from the left edge")
    n, c = int(on.size), int(g[0, on[-1]])
    o = np.repeat(g, w // 2, axis=0)
    for i in range(w // 2):
        o[i, n : n + i] = c
    return o


def g_nest_colors(ctx: Ctx) -> Iterator[Args]:
    """Every target is as big as the largest bounding box of one colour of its state
    (with the background the task's or each state's commonest colour)."""
    for bg in (ctx.bg, 13):
        ok = True
        for s, t in ctx.pairs:
            b = role_color(s, bg)
            hw = [(0, 0)]
            for c in np.unique(s).tolist():
                if c != b:
                    ys, xs = np.nonzero(s == c)
                    hw.append((int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1))
            if t.shape != (max(h for h, _ in hw), max(w for _, w in hw)):
                ok = False
                break
        if ok:
            yield (bg,)
            return


@op(
    params=(K.COLOR,),
    generator=g_nest_colors,
    when=W.SMALLER | W.SHALLOW,
    # the 2 ring and the 5 dot nest concentrically
    cases=[Case((0,), "22200 20205 22200", "222 252 222")],
)
def nest_colors(g: Grid, bg: int) -> Grid:
    """Nest the colours concentrically: the output is as big as the largest bounding
    box of one colour's cells; every colour's cells keep their layout and are centred
    in it, bigger boxes painted first. Raises when a box cannot be centred exactly."""
    cols = [c for c in np.unique(g).tolist() if c != bg]
    return nest_shapes([(c, color_mask(g, c)) for c in cols], bg, g.dtype)


def _layers_tl(g: Grid, k: int, bg: int) -> Grid:
    """``extend_layers`` from the top-left corner."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0 or ys.min() or xs.min():
        raise ValueError("no corner pattern")
    p = int(max(ys.max(), xs.max())) + 1
    pat = g[:p, :p]
    if pat.shape != (p, p) or p < 2:
        raise ValueError("pattern not square")
    layer = np.maximum.outer(np.arange(p), np.arange(p))
    diag = np.diagonal(pat)
    if not np.array_equal(pat, diag[layer]):
        raise ValueError("not nested layers")
    if not (2 <= k <= 4 and h * k <= 30 and w * k <= 30):
        raise ValueError("bad factor")
    big = np.maximum.outer(np.arange(h * k), np.arange(w * k)) % p
    out: Grid = diag[big].astype(g.dtype)
    return out


def g_extend_layers(ctx: Ctx) -> Iterator[Args]:
    """Every target the same whole multiple (2 to 4) of its state in both directions."""
    ks = set()
    for s, t in ctx.pairs:
        (h, w), (th, tw) = s.shape, t.shape
        if th % h or th // h != tw // w or tw % w:
            return
        ks.add(th // h)
    if len(ks) != 1 or not 2 <= (k := ks.pop()) <= 4:
        return
    for corner in CORNERS:
        if fits(ctx, extend_layers, k, corner, ctx.bg):
            yield (k, corner, ctx.bg)


@op(
    params=(K.COUNT, OneOf(*CORNERS), K.COLOR),
    generator=g_extend_layers,
    when=W.RESHAPED | W.SHALLOW,
    cases=[
        # nested L layers 1, 2 continued on a grid twice as big
        Case((2, "tl", 0), "120 220 000", "121212 221212 111212 222212 111112 222222"),
        # the same about the bottom-right corner: the layers grow up and left
        Case((2, "br", 0), "000 022 021", "222222 211111 212222 212111 212122 212121"),
    ],
)
def extend_layers(g: Grid, k: int, corner: str, bg: int) -> Grid:
    """The grid's pattern at corner ``corner`` is nested L-shaped layers around that
    corner (every cell has the colour of the diagonal cell of its layer); continue the
    layers periodically on a grid ``k`` times as big, from the same corner. The pattern
    is the bounding box of the non-background cells when it starts at the corner, else
    the whole grid."""
    fy, fx = corner[0] == "b", corner[1] == "r"
    g = g[::-1] if fy else g
    g = g[:, ::-1] if fx else g
    out = _layers_tl(g, k, bg)
    out = out[::-1] if fy else out
    return out[:, ::-1] if fx else out


def _complete_mirror(g: Grid, c: int, n: int) -> Grid | None:
    """The cells of colour ``c`` as an ``n`` x ``n`` mask symmetric about both middle
    lines, where the grid's edge may cut the shape: the one placement of the box over
    the visible cells whose mirrored cells inside the grid all have colour ``c`` and
    span the box (None when no placement or several do)."""
    ys, xs = np.nonzero(g == c)
    y0, x0 = int(ys.min()), int(xs.min())
    h, w = int(ys.max()) - y0 + 1, int(xs.max()) - x0 + 1
    gh, gw = g.shape
    found: Grid | None = None
    for oy in range(n - h + 1):
        for ox in range(n - w + 1):
            top, left = y0 - oy, x0 - ox
            if h < n and top >= 0 and top + n <= gh:  # a cut needs an edge
                continue
            if w < n and left >= 0 and left + n <= gw:
                continue
            m = np.zeros((n, n), dtype=bool)
            m[ys - top, xs - left] = True
            m = m | m[::-1] | m[:, ::-1] | m[::-1, ::-1]
            if not (m[0].any() and m[:, 0].any()):  # the shape spans its box
                continue
            my, mx = np.nonzero(m)
            gy, gx = my + top, mx + left
            inside = (gy >= 0) & (gy < gh) & (gx >= 0) & (gx < gw)
            if (g[gy[inside], gx[inside]] != c).any():
                continue
            if found is not None:
                return None
            found = m
    return found


_NESTED = "33033 30003 00100 30003 33033"
_CUT = "0000000 3000300 3303300 0000000 0000001"


@op(
    params=(K.COLOR,),
    generator=Fitting(fits, lambda ctx: ((bg,) for bg in (ctx.bg, 13)), first=True),
    only_if=lambda ctx: all(
        t.shape[0] == t.shape[1] and set(np.unique(s).tolist()) == set(np.unique(t).tolist())
        for s, t in ctx.pairs
    ),
    when=W.SMALLER | W.SHALLOW,
    # the 3 frame is cut by the top edge: completed by mirroring, the 1 nested inside
    cases=[Case((0,), _CUT, _NESTED)],
)
def nest_complete(g: Grid, bg: int) -> Grid:
    """Nest the colours concentrically, like ``nest_colors``, when some shapes are cut
    by the grid's edge: each colour's cells form one shape, symmetric about both its
    middle lines; one that is not (as seen) is completed as the smallest square such
    shape that the grid's edge cuts and that agrees with the grid (see
    ``_complete_mirror``). The output is as big as the biggest shape, and each shape is
    centred in it, bigger ones painted first."""
    b = role_color(g, bg)
    shapes: list[tuple[int, Grid]] = []
    for c in np.unique(g).tolist():
        if c == b:
            continue
        seen = color_mask(g, c)
        m: Grid | None = seen
        if not (np.array_equal(seen, seen[::-1]) and np.array_equal(seen, seen[:, ::-1])):
            lo = max(seen.shape)
            for n in range(lo, min(30, 2 * lo + 1) + 1):
                m = _complete_mirror(g, c, n)
                if m is not None:
                    break
        if m is None:
            raise ValueError("no single completion")
        shapes.append((c, m))
    return nest_shapes(shapes, b, g.dtype)


def g_nest_by_count(ctx: Ctx) -> Iterator[Args]:
    """Square targets of odd side 2n-1 for states with n colours besides the
    background."""
    for bg in bg_readings(ctx):
        sides = [2 * int((np.unique(s) != b).sum()) - 1 for (s, _), b in resolved_pairs(ctx, bg)]
        shaped = all(t.shape == (n, n) for (_, t), n in zip(ctx.pairs, sides, strict=True))
        if shaped and fits_bg(ctx, nest_by_count, bg):
            yield (bg,)


_NEST_IN = "111 220 300"
_NEST_OUT = "11111 12221 12321 12221 11111"


@op(
    params=(K.COLOR,),
    generator=g_nest_by_count,
    when=W.SHALLOW,
    # three 1s, two 2s, one 3: 1 outermost
    cases=[Case((0,), _NEST_IN, _NEST_OUT)],
)
def nest_by_count(g: Grid, bg: int) -> Grid:
    """The colours other than ``bg`` as concentric square rings one cell thick, the
    colour with most cells outermost: a (2n-1) x (2n-1) grid for n colours. Equal
    counts raise."""
    vals, cnt = np.unique(g[g != bg], return_counts=True)
    if not 1 <= vals.size <= 15 or np.unique(cnt).size != cnt.size:
        raise ValueError("needs 1 to 15 colours with distinct counts")
    order = vals[np.argsort(-cnt, kind="stable")]
    n = 2 * vals.size - 1
    o = np.empty((n, n), dtype=g.dtype)
    for k, col in enumerate(order.tolist()):
        o[k : n - k, k : n - k] = col
    return o
