"""Ops that paint regions: enclosed background, bounding boxes, halos, interiors, borders,
flood fills, holes, rectangles between corners, checkerboard floods, frames."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import DIRS, Grid, clusters, components, enclosed
from atlas_actors.arc.infer import Args, Ctx, color_change, fits, painted_fits
from atlas_actors.arc.registry import BG, Case, K, OneOf, W, op


def g_paint(ctx: Ctx) -> Iterator[Args]:
    """(colour, bg) for ops that paint a new colour onto background cells."""
    for c in ctx.paint_colors[:3] + ctx.paint_roles:
        yield (c, ctx.bg)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_paint,
    when=W.SAME_SHAPE,
    cases=[Case((4, 0), "1110 1010 1110", "1110 1410 1110")],
)
def fill_enclosed(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` on the background cells that are cut off from the border."""
    enc = enclosed(g == bg)
    return np.where(enc, c, g)


@op(
    params=(K.COLOR, K.CONN, K.FLAG, K.COLOR),
    generator=lambda ctx: (
        (c, conn, by_color, ctx.bg)
        for c in ctx.new_colors[:2] + ctx.paint_roles
        for conn, by_color in ctx.conns()
    ),
    when=W.SAME_SHAPE,
    cases=[Case((6, 8, 0, 0), "100 010", "160 610")],
)
def fill_bbox(g: Grid, c: int, conn: int, by_color: int, bg: int) -> Grid:
    """Paint ``c`` on the background cells inside each object's bounding box."""
    o = g.copy()
    for ys, xs in components(g, conn, by_color, bg):
        box = o[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        box[box == bg] = c
    return o


def g_halo(ctx: Ctx) -> Iterator[Args]:
    for c in ctx.paint_colors[:3] + ctx.paint_roles:
        yield (c, 1, ctx.bg)
        yield (c, 0, ctx.bg)
        yield (c, 2, ctx.bg)


@op(
    params=(K.COLOR, K.NEIGHBOURHOOD, K.COLOR),
    generator=g_halo,
    when=W.SAME_SHAPE,
    cases=[
        Case((2, 0, 0), "000 010", "020 212"),
        Case((2, 1, 0), "000 010", "222 212"),
        Case((2, 2, 0), "000 010", "202 010"),
    ],
)
def halo(g: Grid, c: int, diag: int, bg: int) -> Grid:
    """Paint ``c`` on background cells next to non-background ones: the 4 side
    neighbours (``diag`` 0), all 8 (1) or only the 4 diagonal ones (2)."""
    fg = g != bg
    p = np.pad(fg, 1)
    h, w = g.shape
    near = np.zeros_like(fg)
    for dy, dx in DIRS[("hv", "all", "diag")[diag]]:
        near |= p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    return np.where(near & ~fg, c, g)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_paint,
    when=W.SAME_SHAPE,
    cases=[Case((2, 0), "111 111 111", "111 121 111")],
)
def interior(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` on non-background cells whose 8 neighbours are all non-background."""
    fg = g != bg
    p = np.pad(fg, 1)
    h, w = g.shape
    inside = fg.copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            inside &= p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    return np.where(inside, c, g)


@op(
    params=(K.COLOR,),
    generator=lambda ctx: ((c,) for c in ctx.paint_colors[:3] + ctx.paint_roles),
    when=W.SAME_SHAPE,
    cases=[Case((3,), "000 000 000", "333 303 333")],
)
def border(g: Grid, c: int) -> Grid:
    """Paint the outermost ring of the grid with ``c``."""
    o = g.copy()
    o[0, :] = c
    o[-1, :] = c
    o[:, 0] = c
    o[:, -1] = c
    return o


@op(
    params=(K.COLOR, K.COLOR),
    generator=lambda ctx: ((c, ctx.bg) for c in ctx.state_colors[:6]),
    when=W.GROWS,
    cases=[Case((2, 0), "010 112 010", "012 112 012")],
)
def flood_from(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` over every 4-connected region of background cells that touches
    (4-neighbours) a cell of colour ``c``."""
    src = g == c
    if not src.any():
        raise ValueError("colour absent")
    regs = components(np.where(g == bg, 1, 0), 4, 1, 0)
    if len(regs) > 200:
        raise ValueError("too many regions")
    h, w = g.shape
    near = np.zeros((h, w), dtype=bool)
    near[1:, :] |= src[:-1, :]
    near[:-1, :] |= src[1:, :]
    near[:, 1:] |= src[:, :-1]
    near[:, :-1] |= src[:, 1:]
    o = g.copy()
    for r in regs:
        if near[r].any():
            o[r] = c
    return o


@op(
    params=(OneOf("largest", "smallest"), K.COLOR, K.COLOR),
    generator=lambda ctx: (
        (sel, c, ctx.bg) for c in ctx.paint_colors[:3] for sel in ("largest", "smallest")
    ),
    when=W.GROWS,
    cases=[
        Case(("smallest", 7, 0), "0100 1100 0000", "7100 1100 0000"),
        Case(("largest", 7, 0), "0100 1100 0000", "0177 1177 7777"),
    ],
)
def fill_regions(g: Grid, sel: str, c: int, bg: int) -> Grid:
    """Paint ``c`` on the 4-connected regions of background cells that are the
    ``largest`` or ``smallest`` (every region tying for it)."""
    inv = np.where(g == bg, 1, 0)
    regs = components(inv, 4, 1, 0)
    if not regs or len(regs) > 100:
        raise ValueError("no regions or too many")
    sizes = [r[0].size for r in regs]
    want = max(sizes) if sel == "largest" else min(sizes)
    o = g.copy()
    for r, n in zip(regs, sizes, strict=True):
        if n == want:
            o[r] = c
    return o


@op(params=(K.COLOR,), generator=BG, when=W.GROWS, cases=[Case((0,), "100 001 202", "111 111 222")])
def fill_color_bbox(g: Grid, bg: int) -> Grid:
    """Fill the background inside the bounding box of each colour with that colour
    (colours with more cells first, so smaller boxes paint last)."""
    o = g.copy()
    cols = [int(v) for v in np.unique(g) if v != bg]
    cols.sort(key=lambda c: -int((g == c).sum()))
    for c in cols:
        ys, xs = np.nonzero(g == c)
        box = o[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        box[g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] == bg] = c
    return o


def g_fill_holes(ctx: Ctx) -> Iterator[Args]:
    """Only enclosed background cells are painted."""
    cols: set[int] = set()
    for s, t in ctx.pairs:
        d = s != t
        if (d & ~enclosed(s == ctx.bg)).any():
            return
        cols |= set(np.unique(t[d]).tolist())
    for c in sorted(cols)[:2]:
        for kind in ("rect", "square", "even", "odd"):
            yield (kind, c, ctx.bg)


@op(
    params=(OneOf("rect", "square", "even", "odd"), K.COLOR, K.COLOR),
    generator=g_fill_holes,
    when=W.GROWS | W.SHALLOW,
    cases=[
        # the square hole is filled, the L-shaped one is not
        Case(
            ("square", 2, 0), "5555555 5050050 5550550 0055500", "5555555 5250050 5550550 0055500"
        ),
        Case(("even", 2, 0), "1111111 1001010 1111110", "1111111 1221010 1111110"),
    ],
)
def fill_holes(g: Grid, kind: str, c: int, bg: int) -> Grid:
    """Paint with ``c`` the enclosed background regions (4-connected, not reaching the
    edge) of one kind: ``rect`` solid rectangles, ``square`` solid squares, ``even`` /
    ``odd`` regions whose width is even / odd."""
    enc = enclosed(g == bg)
    if not enc.any():
        raise ValueError("no holes")
    o = g.copy()
    for ys, xs in components(enc.astype(np.int64), 4, 0, 0):
        hh = int(ys.max() - ys.min() + 1)
        ww = int(xs.max() - xs.min() + 1)
        solid = ys.size == hh * ww
        if kind == "rect":
            hit = solid
        elif kind == "square":
            hit = solid and hh == ww
        else:
            hit = (ww % 2 == 0) == (kind == "even")
        if hit:
            o[ys, xs] = c
    return o


def g_fill_corners(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour."""
    ch = color_change(ctx)
    if ch is not None and len(set(ch[1])) == 1:
        yield (ch[1][0], ctx.bg)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_fill_corners,
    when=W.PAINTED | W.SHALLOW,
    cases=[Case((2, 0), "4004 0000 4004 0300", "4004 0220 4004 0300")],
)
def fill_corners(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` over the background strictly inside every rectangle whose four
    corners are single cells of one colour (at most 40 cells of each colour)."""
    o = g.copy()
    found = False
    for k in np.unique(g[g != bg]).tolist():
        m = g == k
        ys, xs = np.nonzero(m)
        if ys.size < 4 or ys.size > 40:
            continue
        pts = list(zip(ys.tolist(), xs.tolist(), strict=True))
        for y0, x0 in pts:
            for y1, x1 in pts:
                if y1 > y0 + 1 and x1 > x0 + 1 and m[y0, x1] and m[y1, x0]:
                    box = o[y0 + 1 : y1, x0 + 1 : x1]
                    box[g[y0 + 1 : y1, x0 + 1 : x1] == bg] = c
                    found = True
    if not found:
        raise ValueError("no corner rectangles")
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(np.unique(t[s != t]).size == 2 for s, t in ctx.pairs),
    when=W.PAINTED | W.SHALLOW,
    # the 2/3 seeds flood their corridor (walled by 8) as a checkerboard
    cases=[Case((0,), "88888 23008 88888 00008", "88888 23238 88888 00008")],
)
def flood_alternate(g: Grid, bg: int) -> Grid:
    """Two seed colours sit on the two parities of a checkerboard ((row + column) % 2)
    next to each other; flood the background regions (4-connected) they touch with
    that checkerboard. Seeds: the non-background colours other than the commonest."""
    fg = g[g != bg]
    if fg.size == 0:
        raise ValueError("empty grid")
    wall = int(np.bincount(fg, minlength=10).argmax())
    seeds = [int(k) for k in np.unique(fg) if k != wall]
    if len(seeds) != 2:
        raise ValueError("not two seed colours")
    par = np.add.outer(np.arange(g.shape[0]), np.arange(g.shape[1])) % 2
    lut = {}
    for k in seeds:
        ps = np.unique(par[g == k])
        if ps.size != 1:
            raise ValueError("seed colour on both parities")
        lut[int(ps[0])] = k
    if len(lut) != 2:
        raise ValueError("seeds share a parity")
    regs = components(np.where(g == bg, 1, 0), 4, 1, 0)
    seed = np.isin(g, seeds)
    near = np.zeros(g.shape, dtype=bool)
    near[1:] |= seed[:-1]
    near[:-1] |= seed[1:]
    near[:, 1:] |= seed[:, :-1]
    near[:, :-1] |= seed[:, 1:]
    o = g.copy()
    for r in regs:
        if near[r].any():
            o[r] = np.where(par[r] == 0, lut[0], lut[1])
    return o


def g_frame_in_markers(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour: that colour or the other
    objects' colour."""
    ch = color_change(ctx)
    if ch is None:
        return
    if fits(ctx, frame_in_markers, -1, ctx.bg):
        yield (-1, ctx.bg)
    elif len(set(ch[1])) == 1 and fits(ctx, frame_in_markers, ch[1][0], ctx.bg):
        yield (ch[1][0], ctx.bg)


@op(
    params=(K.COLOR_OR_NONE, K.COLOR),
    generator=g_frame_in_markers,
    when=W.PAINTED | W.SHALLOW,
    # an outline of the object's colour one cell inside the four markers
    cases=[
        Case(
            (-1, 0),
            "005000 000000 500005 000000 000000 005033",
            "005000 033330 530035 030030 033330 005033",
        )
    ],
)
def frame_in_markers(g: Grid, c: int, bg: int) -> Grid:
    """Draw a rectangle outline one cell inside the box of the single cells (markers):
    in colour ``c``, or with -1 the colour of the other (bigger) objects. Only
    background cells are painted."""
    objs = components(g, 8, 0, bg)
    dots = [ob for ob in objs if ob[0].size == 1]
    if len(dots) < 2 or len(dots) > 8:
        raise ValueError("needs two to eight markers")
    if c < 0:
        rest = g != bg
        for ys, xs in dots:
            rest[ys, xs] = False
        cols = np.unique(g[rest])
        if cols.size != 1:
            raise ValueError("other objects not of one colour")
        c = int(cols[0])
    y0 = min(int(ys[0]) for ys, _ in dots) + 1
    y1 = max(int(ys[0]) for ys, _ in dots) - 1
    x0 = min(int(xs[0]) for _, xs in dots) + 1
    x1 = max(int(xs[0]) for _, xs in dots) - 1
    if y1 - y0 < 1 or x1 - x0 < 1:
        raise ValueError("markers too close")
    ring = np.zeros(g.shape, dtype=bool)
    ring[y0 : y1 + 1, x0 : x1 + 1] = True
    ring[y0 + 1 : y1, x0 + 1 : x1] = False
    o = g.copy()
    o[ring & (g == bg)] = c
    return o


def g_recolor_in_box(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour ``b`` (or of varying colours: -1) become one colour ``c`` in
    every pair: the box colour is another state colour whose groups' boxes explain the
    change."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    b, c = ch[0][0] if len(set(ch[0])) == 1 else -1, ch[1][0]
    if b >= 0 and not any(((s == b) & (t == b)).any() for s, t in ctx.pairs):
        return  # every b cell changes: a plain recolour, no box needed
    for a in ctx.state_colors[:6]:
        if a == c or a == ctx.bg or a in ch[0]:
            continue
        for reach in (1, 2, 3, 30):
            if fits(ctx, recolor_in_box, a, b, c, reach, ctx.bg):
                yield (a, b, c, reach, ctx.bg)
                return


@op(
    params=(K.COLOR, K.COLOR_OR_NONE, K.COLOR, K.COUNT, K.COLOR),
    generator=g_recolor_in_box,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the 1s inside the box of the 8s (one gap allowed) become 3; the 1 outside stays
        Case((8, 1, 3, 2, 0), "8181 1100 0801", "8381 3300 0801"),
        # without the gap the two 8 groups are boxed apart (one cell each): nothing changes
        Case((8, 1, 3, 1, 0), "818 111", "818 111"),
        # -1: every colour but the box colour and the background
        Case((2, -1, 4, 2, 0), "257 062 555", "244 042 555"),
    ],
)
def recolor_in_box(g: Grid, a: int, b: int, c: int, reach: int, bg: int) -> Grid:
    """Inside the bounding box of every group of colour ``a`` cells (8-connected with
    ``reach`` 1, or allowed to skip ``reach`` - 1 cells), the cells of colour ``b``
    (-1: every colour but ``a`` and the background) become ``c``."""
    if a in (b, bg) or not (g == a).any():
        raise ValueError("no box colour")
    o = g.copy()
    for ys, xs in clusters(g == a, reach):
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        box = o[y0:y1, x0:x1]
        src = g[y0:y1, x0:x1]
        box[(src == b) if b >= 0 else ((src != a) & (src != bg))] = c
    return o


def g_dot_to_corner(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own)."""
    yield from painted_fits(ctx, dot_to_corner)


_DOTS_IN = "00000 03000 00050 77000"
_DOTS_OUT = "33000 33000 00055 77055"


@op(
    params=(K.COLOR,),
    generator=g_dot_to_corner,
    # the 3 grows to the top-left corner, the 5 to the bottom-right; the 7 pair is no dot
    cases=[Case((0,), _DOTS_IN, _DOTS_OUT)],
)
def dot_to_corner(g: Grid, bg: int) -> Grid:
    """Every one-cell object (8-connected) grows into the rectangle from it to the
    nearest corner of the grid, in its colour; a cell as near two corners raises."""
    dots = [(int(ys[0]), int(xs[0])) for ys, xs in components(g, 8, 0, bg) if ys.size == 1]
    if not dots or len(dots) > 30:
        raise ValueError("needs 1 to 30 one-cell objects")
    h, w = g.shape
    o = g.copy()
    for y, x in dots:
        far = sorted(
            ((y - cy) ** 2 + (x - cx) ** 2, cy, cx) for cy in (0, h - 1) for cx in (0, w - 1)
        )
        if far[0][0] == far[1][0]:
            raise ValueError("as near two corners")
        _, cy, cx = far[0]
        o[min(y, cy) : max(y, cy) + 1, min(x, cx) : max(x, cx) + 1] = g[y, x]
    return o
