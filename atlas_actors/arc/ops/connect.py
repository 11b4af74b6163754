"""Ops that join cells or objects with lines: in rows and columns, L-shaped paths, layered
crossings, bridges between facing objects, meeting in the middle, filling gaps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import Grid, components
from atlas_actors.arc.infer import Args, Ctx, color_change, fits, g_connect
from atlas_actors.arc.registry import Case, K, OneOf, W, op


@op(
    params=(K.COLOR_OR_NONE, K.COLOR_OR_NONE, K.COLOR),
    generator=g_connect,
    when=W.SAME_SHAPE,
    cases=[Case((1, 7, 0), "1001 0000", "1771 0000"), Case((-1, -1, 0), "101 202", "111 222")],
)
def connect(g: Grid, c: int, line: int, bg: int) -> Grid:
    """Join pairs of ``c`` cells in the same row or column with a line of colour ``line``
    (over background cells only). ``c`` -1: every colour; ``line`` -1: the pair's colour."""
    o = g.copy()
    colours = [c] if c >= 0 else [int(v) for v in np.unique(g) if v != bg]
    for col in colours:
        m = g == col
        paint = col if line < 0 else line
        for y in range(g.shape[0]):
            xs = np.nonzero(m[y])[0]
            if xs.size >= 2:
                seg = o[y, xs.min() : xs.max() + 1]
                seg[g[y, xs.min() : xs.max() + 1] == bg] = paint
        for x in range(g.shape[1]):
            ys = np.nonzero(m[:, x])[0]
            if ys.size >= 2:
                seg = o[ys.min() : ys.max() + 1, x]
                seg[g[ys.min() : ys.max() + 1, x] == bg] = paint
    return o


def _gaps(g: Grid, c: int, axis: str, bg: int) -> list[tuple[Grid, Grid, int]]:
    """Runs of background between two consecutive non-background cells of one colour
    (``c``, or any if -1) along rows (``axis`` h), columns (v) or both (hv): index
    arrays and the pair's colour."""
    out: list[tuple[Grid, Grid, int]] = []
    h, w = g.shape
    if "h" in axis:
        for y in range(h):
            xs = np.nonzero(g[y] != bg)[0]
            for a, b in zip(xs[:-1].tolist(), xs[1:].tolist(), strict=True):
                col = int(g[y, a])
                if b - a > 1 and col == g[y, b] and (c < 0 or col == c):
                    out.append((np.full(b - a - 1, y), np.arange(a + 1, b), col))
    if "v" in axis:
        for x in range(w):
            ys = np.nonzero(g[:, x] != bg)[0]
            for a, b in zip(ys[:-1].tolist(), ys[1:].tolist(), strict=True):
                col = int(g[a, x])
                if b - a > 1 and col == g[b, x] and (c < 0 or col == c):
                    out.append((np.arange(a + 1, b), np.full(b - a - 1, x), col))
    return out


def g_fill_gaps(ctx: Ctx) -> Iterator[Args]:
    """Infer which gaps are filled: the pairs' colour or one fill colour, along which
    axis, and the longest gap filled (every longer gap must stay open)."""
    pairs = ctx.pairs
    painted: list[Grid] = []
    for s, t in pairs:
        d = s != t
        if (s[d] != ctx.bg).any():
            return
        painted.append(d)
    fills = {int(v) for (_, t), d in zip(pairs, painted, strict=True) for v in np.unique(t[d])}
    cands = [c for c in ctx.state_colors[:4]]
    found = 0
    for axis in ("h", "v", "hv"):
        for c in (-1, *cands):
            for fill in sorted(fills) if len(fills) == 1 else [-1]:
                longest, shortest_open, ok = 0, 99, True
                for (s, t), d in zip(pairs, painted, strict=True):
                    cover = np.zeros(s.shape, dtype=bool)
                    for ys, xs, col in _gaps(s, c, axis, ctx.bg):
                        want = col if fill < 0 else fill
                        got = t[ys, xs]
                        if (got == want).all():
                            cover[ys, xs] = True
                            longest = max(longest, int(ys.size))
                        elif (got == ctx.bg).all():
                            shortest_open = min(shortest_open, int(ys.size))
                        else:
                            ok = False
                            break
                    if not ok or (d & ~cover).any():
                        ok = False
                        break
                if ok and 0 < longest < shortest_open:
                    yield (c, fill, axis, longest, ctx.bg)
                    found += 1
                    if found >= 3:
                        return


@op(
    params=(K.COLOR_OR_NONE, K.COLOR_OR_NONE, OneOf("h", "v", "hv"), K.COUNT, K.COLOR),
    generator=g_fill_gaps,
    when=W.GROWS | W.SHALLOW,
    cases=[
        # gaps of one cell between equal colours get 2; the wider gap stays open
        Case((-1, 2, "h", 1, 0), "101001 303040", "121001 323040"),
        Case((3, -1, "v", 5, 0), "31 00 31", "31 30 31"),
    ],
)
def fill_gaps(g: Grid, c: int, fill: int, axis: str, maxgap: int, bg: int) -> Grid:
    """Fill each background gap of at most ``maxgap`` cells between two consecutive
    cells of the same colour (``c``, or any if -1) in a row (``axis`` h), column (v) or
    both (hv) with ``fill`` (-1: the pair's colour)."""
    o = g.copy()
    for ys, xs, col in _gaps(g, c, axis, bg):
        if ys.size <= maxgap:
            o[ys, xs] = col if fill < 0 else fill
    return o


@op(
    params=(OneOf("h", "v"), K.COLOR),
    generator=lambda ctx: ((a, ctx.bg) for a in ("h", "v")),
    when=W.GROWS | W.SHALLOW,
    cases=[
        # columns drawn over rows, or rows over columns
        Case(("v", 0), "020 303 020", "020 323 020"),
        Case(("h", 0), "020 303 020", "020 333 020"),
    ],
)
def connect_layered(g: Grid, top: str, bg: int) -> Grid:
    """Join pairs of same-colour cells in a row or column with lines of their colour
    (over background); where lines cross, the ``top`` ones (h rows, v columns) win."""
    o = g.copy()
    for axis in ("h", "v") if top == "v" else ("v", "h"):
        a = g if axis == "h" else g.T
        b = o if axis == "h" else o.T
        for i in range(a.shape[0]):
            line = a[i]
            for col in np.unique(line).tolist():
                if col == bg:
                    continue
                idx = np.nonzero(line == col)[0]
                if idx.size >= 2:
                    seg = slice(int(idx.min()), int(idx.max()) + 1)
                    b[i, seg][line[seg] == bg] = col
    return o


def g_connect_l(ctx: Ctx) -> Iterator[Args]:
    """Two colours with one cell each in every state; the path colour is the one
    colour painted."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1 or set(ch[0]) != {ctx.bg}:
        return
    singles = [c for c in ctx.state_colors[:6] if all(int((s == c).sum()) == 1 for s in ctx.states)]
    for a in singles:
        for b in singles:
            for first in ("v", "h"):
                if a != b and fits(ctx, connect_l, a, b, first, ch[1][0], ctx.bg):
                    yield (a, b, first, ch[1][0], ctx.bg)


@op(
    params=(K.COLOR, K.COLOR, OneOf("h", "v"), K.COLOR, K.COLOR),
    generator=g_connect_l,
    when=W.GROWS | W.SHALLOW,
    cases=[
        # from the 8 down its column to the 2's row, then across to the 2
        Case((8, 2, "v", 4, 0), "800 000 002", "800 400 442"),
        Case((8, 2, "h", 4, 0), "800 000 002", "844 004 002"),
    ],
)
def connect_l(g: Grid, a: int, b: int, first: str, c: int, bg: int) -> Grid:
    """Join the one cell of colour ``a`` to the one cell of colour ``b`` with an
    L-shaped path of colour ``c`` (over background) that leaves ``a`` along its column
    (``first`` v) or its row (h), then turns toward ``b``."""
    pa, pb = np.argwhere(g == a), np.argwhere(g == b)
    if len(pa) != 1 or len(pb) != 1:
        raise ValueError("needs exactly one cell of each colour")
    (ay, ax), (by, bx) = pa[0].tolist(), pb[0].tolist()
    cy, cx = (by, ax) if first == "v" else (ay, bx)
    o = g.copy()
    for (y0, x0), (y1, x1) in (((ay, ax), (cy, cx)), ((cy, cx), (by, bx))):
        ys = np.arange(min(y0, y1), max(y0, y1) + 1)
        xs = np.arange(min(x0, x1), max(x0, x1) + 1)
        seg = o[np.ix_(ys, xs)]
        seg[seg == bg] = c
        o[np.ix_(ys, xs)] = seg
    return np.where(g != bg, g, o)


def g_bridge(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour: try both insets."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for inset in (0, 1):
        if fits(ctx, bridge, ch[1][0], inset, ctx.bg):
            yield (ch[1][0], inset, ctx.bg)


@op(
    params=(K.COLOR, K.FLAG, K.COLOR),
    generator=g_bridge,
    when=W.PAINTED | W.SHALLOW,
    # the 2 block and the 7 block face each other: a band of 8, one cell in from each side
    cases=[Case((8, 1, 0), "2220 0000 0000 7777", "2220 0800 0800 7777")],
)
def bridge(g: Grid, c: int, inset: int, bg: int) -> Grid:
    """Join every two objects (one colour, 4-connected) that face each other across
    background with a band of ``c``: the band spans the rows (or columns) both objects
    share, less ``inset`` cells on each side, and fills the gap between them."""
    objs = components(g, 4, 1, bg)
    if len(objs) < 2 or len(objs) > 10:
        raise ValueError("needs two to ten objects")
    boxes = [(int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())) for ys, xs in objs]
    o = g.copy()
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            for ax in (0, 1):
                p, q = (a, b) if ax == 0 else ((a[2], a[3], a[0], a[1]), (b[2], b[3], b[0], b[1]))
                lo, hi = max(p[0], q[0]) + inset, min(p[1], q[1]) - inset
                if p[3] < q[2]:
                    g0, g1 = p[3] + 1, q[2] - 1
                elif q[3] < p[2]:
                    g0, g1 = q[3] + 1, p[2] - 1
                else:
                    continue
                if lo > hi or g0 > g1:
                    continue
                win = (slice(lo, hi + 1), slice(g0, g1 + 1))
                if ax == 1:
                    win = (win[1], win[0])
                if (g[win] == bg).all():
                    o[win] = c
    return o


def g_meet_middle(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: the middle colour is a target colour that no
    state has (or the background when nothing needs it)."""
    pairs = ctx.pairs
    new = set(np.unique(np.concatenate([t[s != t] for s, t in pairs])).tolist())
    for c in [*sorted(new), ctx.bg]:
        for axis in ("h", "v", "hv"):
            if fits(ctx, meet_middle, c, axis, ctx.bg):
                yield (c, axis, ctx.bg)
                return


@op(
    params=(K.COLOR, OneOf("h", "v", "hv"), K.COLOR),
    generator=g_meet_middle,
    when=W.PAINTED | W.SHALLOW,
    # 1 and 2 grow toward each other and meet at a 5
    cases=[Case((5, "h", 0), "1000002 0000000", "1115222 0000000")],
)
def meet_middle(g: Grid, c: int, axis: str, bg: int) -> Grid:
    """Two single cells facing each other across background in a row (``axis`` h), a
    column (v) or either (hv) grow toward each other, each with its own colour, and
    meet halfway; an odd middle cell gets ``c``."""
    cells = [(int(ys[0]), int(xs[0])) for ys, xs in components(g, 8, 0, bg) if ys.size == 1]
    if len(cells) < 2 or len(cells) > 20:
        raise ValueError("needs two to twenty single cells")
    o = g.copy()
    done = 0
    for i, (y, x) in enumerate(cells):
        for v, u in cells[i + 1 :]:
            seg: tuple[Any, Any]
            if y == v and "h" in axis:
                seg = (y, slice(x + 1, u)) if x < u else (y, slice(u + 1, x))
            elif x == u and "v" in axis:
                seg = (slice(y + 1, v), x) if y < v else (slice(v + 1, y), x)
            else:
                continue
            run = g[seg]
            n = run.size
            if n == 0 or (run != bg).any():
                continue
            a, b = (int(g[y, x]), int(g[v, u])) if (y, x) < (v, u) else (int(g[v, u]), int(g[y, x]))
            line = np.full(n, b)
            line[: n // 2] = a
            if n % 2:
                line[n // 2] = c
            o[seg] = line
            done += 1
    if not done:
        raise ValueError("no facing pair")
    return o
