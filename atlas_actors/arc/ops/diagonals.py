"""Ops that draw along diagonals: bouncing lines, rays from corners and objects, joining
cells or objects diagonally, filling periodic diagonals."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, components
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    color_change,
    fits,
    g_connect,
    painted_fits,
    paints_in,
)
from atlas_actors.arc.registry import BG, Case, K, OneOf, W, op


def _diag_ray(o: Grid, g: Grid, y: int, x: int, dy: int, dx: int, c: int, bg: int) -> None:
    """Paint ``c`` over the background from (y+dy, x+dx) on to the border."""
    h, w = g.shape
    y, x = y + dy, x + dx
    while 0 <= y < h and 0 <= x < w:
        if g[y, x] == bg:
            o[y, x] = c
        y, x = y + dy, x + dx


@op(
    params=(K.COLOR_OR_NONE, K.COLOR_OR_NONE, K.COLOR),
    generator=g_connect,
    when=W.SAME_SHAPE,
    cases=[Case((1, 6, 0), "100 000 001", "100 060 001")],
)
def connect_diag(g: Grid, c: int, line: int, bg: int) -> Grid:
    """Join pairs of ``c`` cells on the same diagonal with ``line`` (over background).
    ``c`` -1: every colour; ``line`` -1: the pair's colour."""
    o = g.copy()
    colours = [c] if c >= 0 else [int(v) for v in np.unique(g) if v != bg]
    for col in colours:
        ys, xs = np.nonzero(g == col)
        if ys.size > 60:
            raise ValueError("too many cells")
        paint = col if line < 0 else line
        pts = list(zip(ys.tolist(), xs.tolist(), strict=True))
        for i, (y0, x0) in enumerate(pts):
            for y1, x1 in pts[i + 1 :]:
                if abs(y1 - y0) == abs(x1 - x0) and y1 != y0:
                    sy = 1 if y1 > y0 else -1
                    sx = 1 if x1 > x0 else -1
                    for k in range(1, abs(y1 - y0)):
                        y, x = y0 + sy * k, x0 + sx * k
                        if g[y, x] == bg:
                            o[y, x] = paint
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.GROWS,
    only_if=lambda ctx: all(1 <= int((s != ctx.bg).sum()) <= 4 for s in ctx.states),
    cases=[Case((0,), "000 000 000 000 000 100", "010 100 010 001 010 100")],
)
def bounce(g: Grid, bg: int) -> Grid:
    """From each non-background cell draw a diagonal line of its colour that leaves the
    nearer top/bottom edge, heads for the farther side and bounces off the left and
    right edges until it reaches the opposite top/bottom edge."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0 or ys.size > 4:
        raise ValueError("needs one to four seed cells")
    o = g.copy()
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        c = int(g[y, x])
        dy = -1 if 2 * y >= h - 1 else 1
        dx = 0 if w == 1 else (1 if 2 * x < w - 1 else -1)
        cy, cx = y, x
        while 0 <= cy + dy < h:
            nx = cx + dx
            if not 0 <= nx < w:
                dx = -dx
                nx = cx + dx
            cy, cx = cy + dy, nx
            o[cy, cx] = c
    return o


def g_corner_rays(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: try each corner choice and colour rule."""
    for which in ("empty", "full", "all"):
        for cmode in ("own", "inside"):
            if fits(ctx, corner_rays, which, cmode, ctx.bg):
                yield (which, cmode, ctx.bg)
                return


@op(
    params=(OneOf("empty", "full", "all"), OneOf("own", "inside"), K.COLOR),
    generator=g_corner_rays,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the L's empty bounding-box corner shoots a ray outward
        Case(("empty", "own", 0), "0000 0100 0110 0000", "0001 0100 0110 0000"),
        # the 5 container shoots rays of its content's colour (2) from its corners
        Case(("full", "inside", 0), "0000 0520 0550 0000", "2002 0520 0550 2002"),
    ],
)
def corner_rays(g: Grid, which: str, cmode: str, bg: int) -> Grid:
    """From the bounding-box corners of every object (8-connected, one colour) shoot a
    diagonal ray outward to the border, over the background. ``which``: ``empty``
    corners (not part of the object), ``full`` corners, or ``all``. ``cmode`` ``own``:
    rays of the object's colour; ``inside``: only objects whose bounding box holds
    other colours shoot, with the commonest of those colours (a container's content)."""
    objs = components(g, 8, 1, bg)
    if not objs or len(objs) > 30:
        raise ValueError("no objects")
    o = g.copy()
    for ys, xs in objs:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        c = int(g[ys[0], xs[0]])
        if cmode == "inside":
            box = g[y0 : y1 + 1, x0 : x1 + 1]
            inner = box[(box != bg) & (box != c)]
            if inner.size == 0:
                continue
            c = int(np.bincount(inner, minlength=10).argmax())
        for y, x, dy, dx in ((y0, x0, -1, -1), (y0, x1, -1, 1), (y1, x0, 1, -1), (y1, x1, 1, 1)):
            full = bool(g[y, x] != bg)
            if which == "all" or (which == "full") == full:
                _diag_ray(o, g, y, x, dy, dx, c, bg)
    return o


_DIAG4 = {"ul": (-1, -1), "ur": (-1, 1), "dl": (1, -1), "dr": (1, 1)}


def g_obj_diag_ray(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted; a colour and direction whose rays paint only
    cells the target gives that colour (in every pair, some of them)."""
    pairs = ctx.pairs
    for c in ctx.state_colors[:5]:
        if c == ctx.bg:
            continue
        for d in _DIAG4:
            if paints_in(pairs, c, obj_diag_ray, c, d, ctx.bg):
                yield (c, d, ctx.bg)


@op(
    params=(K.COLOR, OneOf(*_DIAG4), K.COLOR),
    generator=g_obj_diag_ray,
    when=W.PAINTED | W.SHALLOW,
    cases=[Case((3, "ul", 0), "0000 0000 0033 0033", "3000 0300 0033 0033")],
)
def obj_diag_ray(g: Grid, c: int, d: str, bg: int) -> Grid:
    """From every object of colour ``c`` (4-connected) shoot a diagonal ray of ``c``
    in direction ``d`` (ul/ur/dl/dr) from its bounding-box corner on that side to the
    border, over the background."""
    dy, dx = _DIAG4[d]
    objs = [ob for ob in components(g, 4, 1, bg) if g[ob[0][0], ob[1][0]] == c]
    if not objs:
        raise ValueError("no objects of that colour")
    o = g.copy()
    for ys, xs in objs:
        y = int(ys.min()) if dy < 0 else int(ys.max())
        x = int(xs.min()) if dx < 0 else int(xs.max())
        _diag_ray(o, g, y, x, dy, dx, c, bg)
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all((t != ctx.bg).all() for t in ctx.targets),
    when=W.PAINTED | W.SHALLOW,
    # colours repeat along anti-diagonals with period 3
    cases=[Case((0,), "100 200 300", "123 231 312")],
)
def diag_period_fill(g: Grid, bg: int) -> Grid:
    """Fill the background so that every diagonal (anti-diagonal first, then main) has
    one colour repeating with the smallest period ``k`` <= 6 that fits every
    non-background cell and has a colour for each residue."""
    h, w = g.shape
    yy, xx = np.indices((h, w))
    fg = g != bg
    if not fg.any():
        raise ValueError("empty grid")
    for key in (yy + xx, yy - xx + w):
        for k in range(2, 7):
            res = key % k
            lut = np.full(k, -1)
            ok = True
            for r in range(k):
                vals = np.unique(g[fg & (res == r)])
                if vals.size != 1:
                    ok = False
                    break
                lut[r] = vals[0]
            if ok:
                return np.where(fg, g, lut[res]).astype(g.dtype)
    raise ValueError("no diagonal period")


def g_diag_bounce(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: one new colour or the segments' own."""
    ch = color_change(ctx)
    cs = [ch[1][0]] if ch is not None and len(set(ch[1])) == 1 else []
    for c in [*cs, -1]:
        if fits(ctx, diag_bounce, c, ctx.bg):
            yield (c, ctx.bg)
            return


@op(
    params=(K.COLOR_OR_NONE, K.COLOR),
    generator=g_diag_bounce,
    when=W.PAINTED | W.SHALLOW,
    # the 8 segment continues up-right in 3, bounces off the 2 wall and goes up-left
    cases=[Case((3, 0), "0002 0002 0002 0802 8002", "3002 0302 0032 0802 8002")],
)
def diag_bounce(g: Grid, c: int, bg: int) -> Grid:
    """Continue every diagonal segment (an object of one colour, 8-connected, at least
    two cells on one diagonal) from both ends over the background with ``c`` (-1: its
    own colour), bouncing off other cells like a ball, until it leaves the grid."""
    h, w = g.shape
    o = g.copy()
    done = 0
    for ys, xs in components(g, 8, 1, bg):
        n = int(ys.size)
        if n < 2 or n > 30:
            continue
        order = np.argsort(ys * w + xs)
        ys, xs = ys[order], xs[order]
        dy0, dx0 = int(ys[1] - ys[0]), int(xs[1] - xs[0])
        if dy0 != 1 or abs(dx0) != 1:
            continue
        if not ((np.diff(ys) == dy0).all() and (np.diff(xs) == dx0).all()):
            continue
        col = c if c >= 0 else int(g[ys[0], xs[0]])
        done += 1
        for y, x, dy, dx in (
            (int(ys[-1]), int(xs[-1]), dy0, dx0),
            (int(ys[0]), int(xs[0]), -dy0, -dx0),
        ):
            for _ in range(4 * (h + w)):
                ny, nx = y + dy, x + dx
                if not (0 <= ny < h and 0 <= nx < w):
                    break
                if g[ny, nx] != bg:
                    fy = not (0 <= y + dy < h) or g[y + dy, x] != bg
                    fx = not (0 <= x + dx < w) or g[y, x + dx] != bg
                    if not fy and not fx:
                        fy = fx = True
                    dy, dx = (-dy if fy else dy), (-dx if fx else dx)
                    ny, nx = y + dy, x + dx
                    if not (0 <= ny < h and 0 <= nx < w) or g[ny, nx] != bg:
                        break
                o[ny, nx] = col
                y, x = ny, nx
    if not done:
        raise ValueError("no diagonal segment")
    return o


def _facing(lo1: int, hi1: int, lo2: int, hi2: int) -> tuple[int, int] | None:
    """The facing ends of two disjoint spans ``[lo1, hi1]`` and ``[lo2, hi2]`` (first
    span's end first), or None when they overlap."""
    if hi1 < lo2:
        return hi1, lo2
    if hi2 < lo1:
        return lo1, hi2
    return None


def g_connect_corners_diag(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own)."""
    yield from painted_fits(ctx, connect_corners_diag)


_DIAG_IN = "22000 22000 00000 00000 30002"
_DIAG_OUT = "22000 22000 00200 00020 30002"


@op(
    params=(K.COLOR,),
    generator=g_connect_corners_diag,
    # the 2 block and the 2 dot face each other on a diagonal; the 3 is another colour
    cases=[Case((0,), _DIAG_IN, _DIAG_OUT)],
)
def connect_corners_diag(g: Grid, bg: int) -> Grid:
    """Join every two objects (8-connected, one colour) of one colour whose bounding
    boxes share no row and no column and whose facing corners lie on one diagonal: a
    diagonal of their colour between the corners, over background."""
    objs = components(g, 8, 1, bg)
    if not 2 <= len(objs) <= 30:
        raise ValueError("needs 2 to 30 objects")
    boxes = [
        (int(g[ys[0], xs[0]]), int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max()))
        for ys, xs in objs
    ]
    o = g.copy()
    joined = 0
    for i, (c, t1, b1, l1, r1) in enumerate(boxes):
        for c2, t2, b2, l2, r2 in boxes[i + 1 :]:
            rows, cols = _facing(t1, b1, t2, b2), _facing(l1, r1, l2, r2)
            if c2 != c or rows is None or cols is None:
                continue
            (y1, y2), (x1, x2) = rows, cols
            n = abs(y2 - y1)
            if n != abs(x2 - x1) or n < 2:
                continue
            k = np.arange(1, n)
            ly, lx = y1 + np.sign(y2 - y1) * k, x1 + np.sign(x2 - x1) * k
            on = o[ly, lx] == bg
            o[ly[on], lx[on]] = c
            joined += 1
    if not joined:
        raise ValueError("no pair on a diagonal")
    return o
