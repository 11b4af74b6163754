"""Ops over regions of background and empty areas: recolouring regions by a feature,
rooms in line drawings, spilling containers, filling empty windows, squares and the
largest empty rectangle."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, components
from atlas_actors.arc.infer import Args, Ctx, color_change, fits
from atlas_actors.arc.registry import BG, Case, K, OneOf, OnSelf, W, op


def g_fill_squares(ctx: Ctx) -> Iterator[Args]:
    """Background windows of one size painted one colour: try small sizes."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1 or len(set(ch[0])) != 1:
        return
    e, c = ch[0][0], ch[1][0]
    s0, t0 = ctx.train[0], ctx.targets[0]
    painted = np.where(s0 != t0, 1, 0)
    sizes: set[tuple[int, int]] = set()
    for ys, xs in components(painted, 4, 1, 0)[:20]:
        bh, bw = int(ys.max() - ys.min() + 1), int(xs.max() - xs.min() + 1)
        for kh in {bh, min(bh, bw)}:
            for kw in {bw, min(bh, bw)}:
                if kh * kw >= 2 and kh <= 6 and kw <= 6:
                    sizes.add((kh, kw))
    for kh, kw in sorted(sizes)[:4]:
        if fits(ctx, fill_squares, kh, kw, e, c):
            yield (kh, kw, e, c)


@op(
    params=(K.COUNT, K.COUNT, K.COLOR, K.COLOR),
    generator=g_fill_squares,
    when=W.SAME_SHAPE | W.SHALLOW,
    # greedy 2x2 windows of 0 in reading order, never overlapping
    cases=[Case((2, 2, 0, 4), "0005 0005 5005", "4405 4405 5005")],
)
def fill_squares(g: Grid, kh: int, kw: int, e: int, c: int) -> Grid:
    """Paint with ``c`` the ``kh`` x ``kw`` windows made only of colour ``e``, taken
    greedily in reading order without overlapping one already painted."""
    h, w = g.shape
    if kh > h or kw > w or kh * kw < 2:
        raise ValueError("window too big or too small")
    free = g == e
    o = g.copy()
    for y in range(h - kh + 1):
        for x in range(w - kw + 1):
            if free[y : y + kh, x : x + kw].all():
                o[y : y + kh, x : x + kw] = c
                free[y : y + kh, x : x + kw] = False
    return o


def g_fill_largest_rect(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour become one colour, and they form one rectangle per pair."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[0])) != 1 or len(set(ch[1])) != 1:
        return
    for s, t in ctx.pairs:
        ys, xs = np.nonzero(s != t)
        if ys.size != (ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1):
            return
    for mn in (1, 2):
        if fits(ctx, fill_largest_rect, ch[0][0], ch[1][0], mn):
            yield (ch[0][0], ch[1][0], mn)
            return


@op(
    params=(K.COLOR, K.COLOR, K.COUNT),
    generator=g_fill_largest_rect,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the biggest all-0 rectangle at least 2 wide and 2 tall (a longer 1-row strip loses)
        Case((0, 6, 2), "00000 10011 10010", "06600 16611 16610"),
        Case((0, 6, 1), "0000000 1001111 1001011", "6666666 1001111 1001011"),
    ],
)
def fill_largest_rect(g: Grid, e: int, c: int, mn: int) -> Grid:
    """Paint with ``c`` the largest (by area; first in reading order on ties) rectangle
    made only of colour ``e`` whose sides are at least ``mn`` long."""
    h, w = g.shape
    free = (g == e).astype(np.int64)
    up = np.zeros(w, dtype=np.int64)
    best = (0, 0, 0, 0, 0)  # area, y0, x0, y1, x1 (inclusive bottom row y1)
    for y in range(h):
        up = np.where(free[y] > 0, up + 1, 0)
        for x0 in range(w):
            hmin = 10**9
            for x1 in range(x0, w):
                hmin = min(hmin, int(up[x1]))
                if hmin < mn:
                    break
                if x1 - x0 + 1 < mn:
                    continue
                area = hmin * (x1 - x0 + 1)
                key = (area, -(y - hmin + 1), -x0)
                if key > (best[0], -best[1], -best[2]):
                    best = (area, y - hmin + 1, x0, y, x1)
    if best[0] < 2:
        raise ValueError("no rectangle")
    o = g.copy()
    o[best[1] : best[3] + 1, best[2] : best[4] + 1] = c
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=OnSelf(fits),
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the cup open at the top fills with 2 and spills one row above it
        Case((0,), "00000 01010 01210 01110", "02220 01210 01210 01110"),
        # open on the right
        Case((0,), "1110 1300 1110", "1113 1333 1113"),
    ],
)
def spill_cups(g: Grid, bg: int) -> Grid:
    """Fill open containers with their contents' colour, spilling out of the opening:
    a container is an object (one colour, 8-connected) whose bounding box holds cells
    of exactly one other colour and whose box edge has gaps on exactly one side. The
    background in its box takes the other colour, and so does the line just outside
    that side, as long as the box."""
    h, w = g.shape
    o = g.copy()
    done = 0
    for ys, xs in components(g, 8, 1, bg):
        a = int(g[ys[0], xs[0]])
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        box = g[y0 : y1 + 1, x0 : x1 + 1]
        cols = np.unique(box[(box != bg) & (box != a)]).tolist()
        if len(cols) != 1 or ys.size < 5:
            continue
        c = int(cols[0])
        sides = {"up": box[0], "down": box[-1], "left": box[:, 0], "right": box[:, -1]}
        open_ = [k for k, v in sides.items() if (v == bg).any()]
        if len(open_) != 1 or y1 - y0 < 2 or x1 - x0 < 2:
            continue
        sub = o[y0 : y1 + 1, x0 : x1 + 1]
        sub[box == bg] = c
        side = open_[0]
        if side in ("up", "down"):
            y = y0 - 1 if side == "up" else y1 + 1
            if 0 <= y < h:
                row = o[y, x0 : x1 + 1]
                row[row == bg] = c
        else:
            x = x0 - 1 if side == "left" else x1 + 1
            if 0 <= x < w:
                col = o[y0 : y1 + 1, x]
                col[col == bg] = c
        done += 1
    if not done:
        raise ValueError("no open container")
    return o


REGION_FEATURES = (
    "rect",
    "square",
    "boxed",
    "enclosed",
    "enc_rect",
    "size_par",
    "width_par",
    "enc_wpar",
    "enc_spar",
    "size",
    "height",
    "width",
    "xrank_mod2",
    "xrank_mod3",
    "yrank_mod2",
    "yrank_mod3",
)


def bg_regions(g: Grid, bg: int) -> list[tuple[Grid, Grid]]:
    """The 4-connected regions of background cells (``(ys, xs)`` each)."""
    return components(np.where(g == bg, 1, 0), 4, 1, 0)


def region_feature(g: Grid, ys: Grid, xs: Grid, name: str) -> int:
    """A numeric property of one region of cells (``ys``, ``xs``) of grid ``g``:
    ``rect`` / ``square`` whether it is a solid rectangle / square, ``enclosed``
    whether it stays off the grid's edge, ``enc_rect`` both combined (2*enclosed +
    rect), ``boxed`` a solid rectangle whose ring (corners too) has none of its
    colour, ``size_par`` / ``width_par`` its cell count / width modulo 2, ``enc_wpar``
    / ``enc_spar`` 0 off enclosed, else 1 + that parity, ``size``, ``height``, ``width``."""
    h, w = g.shape
    hh = int(ys.max() - ys.min() + 1)
    ww = int(xs.max() - xs.min() + 1)
    solid = int(ys.size == hh * ww)
    enc = int(ys.min() > 0 and xs.min() > 0 and ys.max() < h - 1 and xs.max() < w - 1)
    y0, y1 = max(int(ys.min()) - 1, 0), min(int(ys.max()) + 2, h)
    x0, x1 = max(int(xs.min()) - 1, 0), min(int(xs.max()) + 2, w)
    # a solid rectangle whose one-cell ring (corners too, clipped to the grid) is
    # all of other cells than the region's own colour
    boxed = int(solid and int((g[y0:y1, x0:x1] == g[ys[0], xs[0]]).sum()) == ys.size)
    vals = {
        "rect": solid,
        "boxed": boxed,
        "square": int(solid and hh == ww),
        "enclosed": enc,
        "enc_rect": 2 * enc + solid,
        "size_par": int(ys.size % 2),
        "width_par": ww % 2,
        "enc_wpar": enc * (1 + ww % 2),
        "enc_spar": enc * (1 + int(ys.size % 2)),
        "size": int(ys.size),
        "height": hh,
        "width": ww,
    }
    if name not in vals:
        raise ValueError(f"unknown region feature {name!r}")
    return vals[name]


def region_values(g: Grid, regs: list[tuple[Grid, Grid]], name: str) -> list[int]:
    """``name`` for each region of ``regs``: a :func:`region_feature`, or
    ``xrank_modK`` / ``yrank_modK`` the region's rank from the left (by its leftmost
    column, then top row) / from the top, modulo K (every K-th region)."""
    if name[1:6] != "rank_":
        return [region_feature(g, ys, xs, name) for ys, xs in regs]
    k = int(name[-1])
    if name[0] == "x":
        keys = [(int(xs.min()), int(ys.min())) for ys, xs in regs]
    else:
        keys = [(int(ys.min()), int(xs.min())) for ys, xs in regs]
    order = sorted(range(len(regs)), key=lambda i: keys[i])
    out = [0] * len(regs)
    for r, i in enumerate(order):
        out[i] = r % k
    return out


def g_recolor_regions(ctx: Ctx) -> Iterator[Args]:
    """Background regions painted whole, one colour each: the first features (simple
    ones first) whose values map consistently to the painted colour, when the table
    covers the test inputs' regions too."""
    train: list[tuple[Grid, list[tuple[Grid, Grid]], list[int]]] = []
    for s, t in ctx.pairs:
        rs = bg_regions(s, ctx.bg)
        if len(rs) > 100:
            return
        cols = []
        for ys, xs in rs:
            u = np.unique(t[ys, xs])
            if u.size != 1:
                return
            cols.append(int(u[0]))
        train.append((s, rs, cols))
    tests = [(s, bg_regions(s, ctx.bg)) for s in ctx.states[ctx.n :]]
    if any(len(rs) > 100 for _, rs in tests):
        return
    found = 0
    for feat in REGION_FEATURES:
        lut: dict[int, int] = {}
        ok = True
        for s, rs, cols in train:
            for v, c in zip(region_values(s, rs, feat), cols, strict=True):
                if lut.setdefault(v, c) != c:
                    ok = False
                    break
            if not ok:
                break
        if not ok or all(c == ctx.bg for c in lut.values()):
            continue
        if any(v not in lut for s, rs in tests for v in region_values(s, rs, feat)):
            continue
        yield (feat, sorted([k, v] for k, v in lut.items()), ctx.bg)
        found += 1
        if found == 2:
            return


_BOX_RECT = "11111 14101 14100 11111"
_BOX = "11111 10101 10100 11111"


@op(
    params=(OneOf(*REGION_FEATURES), K.TABLE, K.COLOR),
    generator=g_recolor_regions,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the solid-rectangle hole becomes 4, the L-shaped one stays
        Case(("rect", [[0, 0], [1, 4]], 0), _BOX, _BOX_RECT),
        # the 2x1 hole is odd-sized, the L (3 cells) too: both 7
        Case(("size_par", [[0, 2], [1, 7]], 0), _BOX, "11111 12171 12177 11111"),
        # every other region from the left
        Case(("xrank_mod2", [[0, 3], [1, 0]], 0), "01010", "31013"),
    ],
)
def recolor_regions(g: Grid, feature: str, table: list[list[int]], bg: int) -> Grid:
    """Paint every 4-connected region of background cells with the colour that
    ``table`` (``[value, colour]`` rows) gives its ``feature`` (see
    :func:`region_values`); a colour equal to ``bg`` leaves the region alone. Raises
    when a region's value is not in the table."""
    regs = bg_regions(g, bg)
    if not regs or len(regs) > 100:
        raise ValueError("no regions or too many")
    lut = {int(k): int(v) for k, v in table}
    o = g.copy()
    for (ys, xs), v in zip(regs, region_values(g, regs, feature), strict=True):
        if v not in lut:
            raise ValueError("region value not in table")
        o[ys, xs] = lut[v]
    return o


def g_fill_windows(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour painted one colour, in blocks at least 2 wide and tall:
    the smallest painted run lengths across and down as the window."""
    e = c = -1
    kh = kw = 99
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return
        a, b = np.unique(s[d]), np.unique(t[d])
        if a.size != 1 or b.size != 1 or (e >= 0 and (a[0] != e or b[0] != c)):
            return
        e, c = int(a[0]), int(b[0])
        for m, across in ((d, True), (d.T, False)):
            for row in m:
                runs = np.diff(np.concatenate(([0], row.astype(np.int64), [0])))
                starts, ends = np.nonzero(runs == 1)[0], np.nonzero(runs == -1)[0]
                for n in (ends - starts).tolist():
                    if across:
                        kw = min(kw, n)
                    else:
                        kh = min(kh, n)
    if 2 <= kh <= 6 and 2 <= kw <= 6 and fits(ctx, fill_windows, kh, kw, e, c):
        yield (kh, kw, e, c)


_WIN_OUT = "2205 2250 5000"
_WIN = "0005 0050 5000"


@op(
    params=(K.COUNT, K.COUNT, K.COLOR, K.COLOR),
    generator=g_fill_windows,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # only the 2x2 block of 0s is big enough
        Case((2, 2, 0, 2), _WIN, _WIN_OUT),
        # overlapping windows: their union is painted
        Case((2, 2, 0, 2), "000 000", "222 222"),
    ],
)
def fill_windows(g: Grid, kh: int, kw: int, e: int, c: int) -> Grid:
    """Paint with ``c`` every cell covered by some ``kh`` x ``kw`` window made only
    of colour ``e`` (the empty areas at least that big, e.g. holes in noise)."""
    h, w = g.shape
    if kh > h or kw > w or kh * kw < 2:
        raise ValueError("window too big or too small")
    free = (g == e).astype(np.int64)
    s = np.zeros((h + 1, w + 1), dtype=np.int64)
    s[1:, 1:] = free.cumsum(0).cumsum(1)
    full = (s[kh:, kw:] - s[:-kh, kw:] - s[kh:, :-kw] + s[:-kh, :-kw]) == kh * kw
    hit = np.zeros((h, w), dtype=bool)
    for y, x in zip(*np.nonzero(full), strict=True):
        hit[y : y + kh, x : x + kw] = True
    if not hit.any():
        raise ValueError("no window")
    return np.where(hit, c, g)


def _opening(box: Grid, bg: int) -> tuple[int, int, int] | None:
    """The one side (0 top, 1 bottom, 2 left, 3 right) of a bounding box whose edge
    has background cells, as ``(side, first, last)`` of that one gap run; None when
    gaps are on several sides or not in one run."""
    edges = (box[0, :], box[-1, :], box[:, 0], box[:, -1])
    open_sides = [i for i, e in enumerate(edges) if (e == bg).any()]
    if len(open_sides) != 1:
        return None
    side = open_sides[0]
    idx = np.nonzero(edges[side] == bg)[0]
    if idx.size != int(idx[-1] - idx[0] + 1):
        return None
    return side, int(idx[0]), int(idx[-1])


def g_spill_beam(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all one colour: with or without diagonals."""
    cs = {int(v) for s, t in ctx.pairs for v in np.unique(t[s != t])}
    if len(cs) != 1:
        return
    c = cs.pop()
    for diag in (1, 0):
        if fits(ctx, spill_beam, c, diag, ctx.bg):
            yield (c, diag, ctx.bg)
            return


_CUP_OUT = "40404 04440 03430 03430 03330"
_CUP = "00000 00000 03030 03030 03330"


@op(
    params=(K.COLOR, K.FLAG, K.COLOR),
    generator=g_spill_beam,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the cup fills and shines up out of its opening, spreading diagonally
        Case((4, 1, 0), _CUP, _CUP_OUT),
        Case((4, 0, 0), _CUP, "00400 00400 03430 03430 03330"),
    ],
)
def spill_beam(g: Grid, c: int, diag: int, bg: int) -> Grid:
    """Containers open on one side (an object of one colour, 8-connected, whose
    bounding-box edge has one run of background on exactly one side) fill with
    ``c`` and shine it out of the opening: a beam as wide as the opening straight to
    the grid's edge, and (``diag``) two diagonal rays spreading from its ends. Only
    background cells are painted; a ray stops at the first non-background cell."""
    h, w = g.shape
    o = g.copy()
    done = 0
    for ys, xs in components(g, 8, 1, bg):
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        if y1 - y0 < 1 or x1 - x0 < 1:
            continue
        op = _opening(g[y0 : y1 + 1, x0 : x1 + 1], bg)
        if op is None:
            continue
        side, a, b = op
        done += 1
        box = o[y0 : y1 + 1, x0 : x1 + 1]
        box[g[y0 : y1 + 1, x0 : x1 + 1] == bg] = c
        # (start cell just outside the opening, outward step), in grid coordinates
        if side < 2:
            yy = y0 - 1 if side == 0 else y1 + 1
            dy = -1 if side == 0 else 1
            starts = [((yy, x0 + k), (dy, 0)) for k in range(a, b + 1)]
            if diag:
                starts += [((yy, x0 + a - 1), (dy, -1)), ((yy, x0 + b + 1), (dy, 1))]
        else:
            xx = x0 - 1 if side == 2 else x1 + 1
            dx = -1 if side == 2 else 1
            starts = [((y0 + k, xx), (0, dx)) for k in range(a, b + 1)]
            if diag:
                starts += [((y0 + a - 1, xx), (-1, dx)), ((y0 + b + 1, xx), (1, dx))]
        for (y, x), (sy, sx) in starts:
            while 0 <= y < h and 0 <= x < w and g[y, x] == bg:
                o[y, x] = c
                y, x = y + sy, x + sx
    if not done:
        raise ValueError("no container open on one side")
    return o


def g_fill_rooms(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour turn into one other colour (the same in every pair)."""
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


_ROOM = "055500 050555 055500 000000 555000"
_ROOM4 = "055500 054555 055500 000000 555000"


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_fill_rooms,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the boxed 0 (a line leaves its right wall mid-side) is a room; the 0s in the top
        # right corner lean on two grid sides, the rest is no rectangle
        Case((0, 4), _ROOM, _ROOM4),
        # a room on the grid's edge (walls on three sides)
        Case((0, 2), "055 050 055", "055 052 055"),
    ],
)
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
