"""Ops that slide cells or objects until they hit something: gravity toward a side or a
wall, stacking, sliding into contact, attraction, alignment, snapping to lines."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import (
    DIRS,
    GRAVITY,
    HV4,
    KERNELS,
    SELECTORS,
    Grid,
    compiled,
    components,
    dots_and_rest,
    rigid_transform,
    select_object,
)
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    colors_vary,
    fits,
    moved_colors,
    same_counts,
)
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, W, op


@op(
    params=(OneOf(*GRAVITY), K.COLOR),
    generator=lambda ctx: ((d, ctx.bg) for d in GRAVITY),
    when=W.SAME_SHAPE,
    cases=[Case(("down", 0), "10 00 02", "00 00 12"), Case(("left", 0), "0102", "1200")],
)
def gravity(g: Grid, d: str, bg: int) -> Grid:
    """Let every non-background cell fall toward side ``d`` (down/up/left/right)."""
    fwd, back = {"down": (0, 0), "up": (5, 5), "left": (3, 1), "right": (1, 3)}[d]
    # turn the grid so that side d is at the bottom, compact columns, turn back
    a = rigid_transform(g, fwd)
    o = np.full_like(a, bg)
    for x in range(a.shape[1]):
        col = a[:, x]
        fg = col[col != bg]
        if fg.size:
            o[a.shape[0] - fg.size :, x] = fg
    return rigid_transform(o, back)


@op(
    params=(OneOf(*GRAVITY), K.CONN, K.COLOR),
    generator=lambda ctx: (
        (d, conn, ctx.bg) for d in GRAVITY for conn, _ in ctx.conns(((8, 0), (4, 0)))
    ),
    when=W.SAME_SHAPE,
    cases=[Case(("down", 8, 0), "110 010 000 002", "000 000 110 012")],
)
def object_gravity(g: Grid, d: str, conn: int, bg: int) -> Grid:
    """Move every object (as a rigid body) toward side ``d`` until it hits the edge or
    another cell; objects nearest the side move first."""
    fwd, back = {"down": (0, 0), "up": (5, 5), "left": (3, 1), "right": (1, 3)}[d]
    a = rigid_transform(g, fwd).copy()
    _fall(a, conn, bg)
    return rigid_transform(a, back)


def _fall(a: Grid, conn: int, bg: int) -> None:
    """:func:`object_gravity` toward the bottom, in place on ``a``."""
    h = a.shape[0]
    objs = components(a, conn, 0, bg)
    if len(objs) > 60:
        raise ValueError("too many objects")
    objs = sorted(objs, key=lambda o: -int(o[0].max()))
    rows = np.arange(h)[:, None]
    for ys, xs in objs:
        vals = a[ys, xs].copy()
        a[ys, xs] = bg
        # the fall is the shortest free run below any of the object's cells: row index
        # of the first non-background cell at or below each row (h when none)
        first = np.minimum.accumulate(np.where(a != bg, rows, h)[::-1], axis=0)[::-1]
        below = np.vstack([first[1:], np.full((1, a.shape[1]), h)])
        step = int((below[ys, xs] - ys - 1).min())
        a[ys + step, xs] = vals


def _fall_compiled(a: Grid, conn: int, bg: int) -> None:
    if a.dtype != np.int64 or not a.flags.c_contiguous:
        _fall_pure(a, conn, bg)
        return
    h, w = a.shape
    if KERNELS.fall(a, h, w, conn, bg, 60) > 60:
        raise ValueError("too many objects")


_fall_pure = _fall
_fall = compiled(_fall_pure, _fall_compiled)


def g_move_to_contact(ctx: Ctx) -> Iterator[Args]:
    sels = ("smallest", "largest", "unique_color", "common_color", "top", "bottom")
    for by_color in (1, 0):
        for sel in ctx.selections(sels, 8, by_color):
            yield (sel, 8, by_color, ctx.bg)


@op(
    params=(OneOf(*SELECTORS), K.CONN, K.FLAG, K.COLOR),
    generator=g_move_to_contact,
    when=W.SAME_SHAPE,
    cases=[Case(("smallest", 8, 1, 0), "200033", "000233")],
)
def move_to_contact(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """Slide the object chosen by ``sel`` in a straight line (the direction where it
    gets there soonest) until it touches the other non-background cells."""
    h, w = g.shape
    objs = components(g, conn, by_color, bg)
    ys, xs = select_object(g, objs, sel, bg)
    vals = g[ys, xs]
    rest = g.copy()
    rest[ys, xs] = bg
    others = rest != bg
    if not others.any():
        raise ValueError("nothing to move to")
    best = None
    for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        for k in range(1, max(h, w) + 1):
            ny, nx = ys + dy * k, xs + dx * k
            if ny.min() < 0 or nx.min() < 0 or ny.max() >= h or nx.max() >= w:
                break
            if others[ny, nx].any():
                if k > 1 and (best is None or k - 1 < best[0]):
                    best = (k - 1, dy, dx)
                break
    if best is None:
        raise ValueError("no contact direction")
    k, dy, dx = best
    rest[ys + dy * k, xs + dx * k] = vals
    return rest


def g_attract(ctx: Ctx) -> Iterator[Args]:
    """Colours whose cells are not where they were in some pair (they moved, or moved
    and were recoloured)."""
    for c in ctx.state_colors[:5]:
        if any(((s == c) != (t == c)).any() for s, t in ctx.pairs):
            yield (c, 0, ctx.bg)
            yield (c, 1, ctx.bg)
    if colors_vary(ctx):
        for r in (10, 12):
            yield (r, 0, ctx.bg)
            yield (r, 1, ctx.bg)


@op(
    params=(K.COLOR, K.FLAG, K.COLOR),
    generator=g_attract,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        Case((2, 0, 0), "2000 0000 2005 0000", "2000 0000 0025 0000"),
        Case((2, 1, 0), "2000 0000 0000 0005", "0000 0000 0020 0005"),
    ],
)
def attract(g: Grid, c: int, diag: int, bg: int) -> Grid:
    """Slide each object of colour ``c`` (8-connected) in a straight line, in the
    direction (4 ways, 8 if ``diag``) where it touches another colour soonest, until it
    does; nearest objects move first and then block the others (they pile up); objects
    that never would touch stay put."""
    h, w = g.shape
    objs = components(np.where(g == c, c, bg), 8, 1, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    static = (g != bg) & (g != c)
    if not static.any():
        raise ValueError("nothing to move to")
    o = np.where(g == c, bg, g)
    dirs = DIRS["all"] if diag else DIRS["hv"]

    def best_move(ys: Grid, xs: Grid) -> tuple[int, int, int] | None:
        best = None
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        for dy, dx in dirs:
            # steps before leaving the grid, and before reaching the nearest best
            room = min(
                h - 1 - y1 if dy > 0 else y0 if dy < 0 else h + w,
                w - 1 - x1 if dx > 0 else x0 if dx < 0 else h + w,
            )
            if best is not None:
                room = min(room, best[0])
            for k in range(room):
                if static[ys + dy * (k + 1), xs + dx * (k + 1)].any():
                    best = (k, dy, dx)
                    break
        return best

    first = [best_move(ys, xs) for ys, xs in objs]
    order = sorted(range(len(objs)), key=lambda i: (first[i] is None, (first[i] or (0,))[0], i))
    for i in order:
        ys, xs = objs[i]
        mv = best_move(ys, xs) if first[i] is not None else None
        if mv is not None:
            k, dy, dx = mv
            ys, xs = ys + dy * k, xs + dx * k
        o[ys, xs] = c
        static[ys, xs] = True
    return o


ALIGN_SIDES = ("top", "bottom", "left", "right")


@op(
    params=(K.COLOR, OneOf(*ALIGN_SIDES), K.COLOR),
    generator=lambda ctx: (
        (c, side, ctx.bg)
        for c in ctx.state_colors[:5]
        for side in ("top", "bottom", "left", "right")
    ),
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case((1, "top", 0), "0100 0100 0003 2003", "2103 0103 0000 0000")],
)
def align(g: Grid, c: int, side: str, bg: int) -> Grid:
    """Move every object (8-connected, one colour) not of colour ``c`` straight up/down
    (``side`` top/bottom) or left/right (left/right) so its ``side`` edge lines up with
    that of the cells of colour ``c``, which stay put."""
    ref = g == c
    if not ref.any():
        raise ValueError("no reference")
    ys, xs = np.nonzero(ref)
    rest = np.where(ref, bg, g)
    objs = components(rest, 8, 1, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    o = np.where(ref, c, bg)
    h, w = g.shape
    for oy, ox in objs:
        if side == "top":
            dy, dx = int(ys.min() - oy.min()), 0
        elif side == "bottom":
            dy, dx = int(ys.max() - oy.max()), 0
        elif side == "left":
            dy, dx = 0, int(xs.min() - ox.min())
        else:
            dy, dx = 0, int(xs.max() - ox.max())
        ny, nx = oy + dy, ox + dx
        if ny.min() < 0 or nx.min() < 0 or ny.max() >= h or nx.max() >= w:
            raise ValueError("object leaves the grid")
        o[ny, nx] = g[oy, ox]
    return o


@op(
    params=(K.FLAG, K.COLOR),
    generator=lambda ctx: ((k, ctx.bg) for k in (0, 1)),
    only_if=lambda ctx: all(
        int((t != ctx.bg).sum()) <= int((s != ctx.bg).sum()) for s, t in ctx.pairs
    ),
    when=W.CHANGED,
    cases=[
        # the 2 dot moves left to touch the 2 wall; the 5 dot has no 5 line and goes
        Case((0, 0), "20000 20020 20500", "20000 22000 20000"),
        Case((1, 0), "20000 20020 20500", "20000 22000 20500"),
    ],
)
def snap_to_line(g: Grid, keep: int, bg: int) -> Grid:
    """Move every single cell straight toward the nearest bigger object (a line or wall)
    of its own colour in its row or column, until it touches it. Single cells with no
    such object in line are erased (``keep`` 0) or stay put (``keep`` 1)."""
    h, w = g.shape
    dots, static = dots_and_rest(g, bg)
    o = g.copy()
    for ys, _xs in dots:
        o[ys, _xs] = bg
    for ys, xs in dots:
        y, x = int(ys[0]), int(xs[0])
        c = int(g[y, x])
        best: tuple[int, int, int] | None = None
        for dy, dx in HV4:
            ny, nx, k = y + dy, x + dx, 1
            while 0 <= ny < h and 0 <= nx < w:
                if static[ny, nx] and g[ny, nx] == c:
                    if best is None or k < best[0]:
                        best = (k, ny - dy, nx - dx)
                    break
                ny, nx, k = ny + dy, nx + dx, k + 1
        if best is not None:
            o[best[1], best[2]] = c
        elif keep:
            o[y, x] = c
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(
        int((t != ctx.bg).sum()) <= int((s != ctx.bg).sum()) for s, t in ctx.pairs
    ),
    when=W.CHANGED,
    cases=[
        # single cells move to the 5 wall and turn 5; two in one column pile up
        Case((0,), "3000 0000 5555 0000 0004", "0000 5000 5555 0005 0000"),
        Case((0,), "30 20 00 55", "00 50 50 55"),
    ],
)
def snap_to_wall(g: Grid, bg: int) -> Grid:
    """Move every single cell (a one-cell object of its colour) straight toward the
    nearest bigger object of any colour in its row or column until it touches it (or
    a cell already moved there: they pile up), taking that object's colour. Single
    cells with no such object in line are erased."""
    h, w = g.shape
    dots, static = dots_and_rest(g, bg)
    o = g.copy()
    moves: list[tuple[int, int, int, int, int, int]] = []
    for ys, xs in dots:
        y, x = int(ys[0]), int(xs[0])
        o[y, x] = bg
        best: tuple[int, int, int, int, int, int] | None = None
        for dy, dx in HV4:
            ny, nx, k = y + dy, x + dx, 1
            while 0 <= ny < h and 0 <= nx < w:
                if static[ny, nx]:
                    if best is None or k < best[0]:
                        best = (k, y, x, dy, dx, int(g[ny, nx]))
                    break
                ny, nx, k = ny + dy, nx + dx, k + 1
        if best is not None:
            moves.append(best)
    for _k, y, x, dy, dx, c in sorted(moves):
        while not static[y + dy, x + dx]:
            y, x = y + dy, x + dx
        static[y, x] = True
        o[y, x] = c
    return o


def g_attract_to(ctx: Ctx) -> Iterator[Args]:
    """A colour whose cells moved towards a colour that stayed put in every pair, with
    at least three non-background colours in some state (else ``attract`` says it)."""
    pairs = ctx.pairs
    moved = [c for c in ctx.state_colors[:5] if any(((s == c) != (t == c)).any() for s, t in pairs)]
    still = [
        c
        for c in ctx.state_colors[:6]
        if c not in moved and all(((s == c) == (t == c)).all() for s, t in pairs)
    ]
    for c in moved:
        for t in still[:3]:
            yield (c, t, 0, ctx.bg)
            yield (c, t, 1, ctx.bg)


@op(
    params=(K.COLOR, K.COLOR, K.FLAG, K.COLOR),
    generator=g_attract_to,
    only_if=lambda ctx: max(len(set(np.unique(s).tolist()) - {ctx.bg}) for s in ctx.train) >= 3,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case((3, 2, 0, 0), "3002 0000 7000 0000", "0032 0000 7000 0000")],
)
def attract_to(g: Grid, c: int, t: int, diag: int, bg: int) -> Grid:
    """Like ``attract``, but objects of colour ``c`` slide only towards cells of colour
    ``t`` (other colours neither attract nor block them)."""
    if c == t or not (g == t).any():
        raise ValueError("no target colour")
    masked = np.where((g == c) | (g == t), g, bg)
    moved = attract(masked, c, diag, bg)
    return np.where(moved == c, c, np.where(g == c, bg, g))


def g_center_in(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, colour counts kept, and the cells of colour ``c`` stay put while
    others move."""
    for c in moved_colors(ctx) or []:
        yield (c, ctx.bg)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_center_in,
    when=W.SHALLOW,
    # the 2 shape moves to the centre of the box of the 3 markers
    cases=[Case((3, 0), "32003 02000 02000 00000 30003", "30003 00200 00200 00200 30003")],
)
def center_in(g: Grid, c: int, bg: int) -> Grid:
    """Move everything that is neither background nor colour ``c`` (as one rigid
    block) so that its bounding box is centred in the bounding box of the cells of
    colour ``c`` (markers or a frame). Cells moved off the grid are lost; colour ``c``
    stays on top. Raises when the centring needs a half-cell shift."""
    mark = g == c
    rest = (g != bg) & ~mark
    if mark.sum() < 2 or not rest.any():
        raise ValueError("needs markers and something to move")
    my, mx = np.nonzero(mark)
    ry, rx = np.nonzero(rest)
    dy2 = int(my.min() + my.max()) - int(ry.min() + ry.max())
    dx2 = int(mx.min() + mx.max()) - int(rx.min() + rx.max())
    if dy2 % 2 or dx2 % 2:
        raise ValueError("no exact centre")
    dy, dx = dy2 // 2, dx2 // 2
    h, w = g.shape
    o = np.where(rest, bg, g)
    ny, nx = ry + dy, rx + dx
    ok = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
    o[ny[ok], nx[ok]] = g[ry[ok], rx[ok]]
    o[mark] = c
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(
        0 < int((t != ctx.bg).sum()) < int((s != ctx.bg).sum()) for s, t in ctx.pairs
    ),
    when=W.SAME_SHAPE | W.SHALLOW,
    # each dot lands on the nearest cell of the 8 block, the rest of the block goes
    cases=[
        Case((0,), "10000 00000 00880 00880 00000 00002", "00000 00000 00100 00020 00000 00000")
    ],
)
def gather_dots(g: Grid, bg: int) -> Grid:
    """The single cells (one-cell objects, 8-connected, any colour) jump onto the
    cells of the one bigger object (the anchor), each to the anchor cell nearest to
    it; the rest of the anchor is erased. Raises on ties or when two dots want one
    cell."""
    objs = components(g, 8, 0, bg)
    dots = [ob for ob in objs if ob[0].size == 1]
    big = [ob for ob in objs if ob[0].size > 1]
    if len(big) != 1 or not dots or len(dots) > 20:
        raise ValueError("needs one anchor and some single cells")
    ay, ax = big[0]
    o = np.full_like(g, bg)
    taken: set[int] = set()
    for ys, xs in dots:
        d = (ay - ys[0]) ** 2 + (ax - xs[0]) ** 2
        k = int(np.argmin(d))
        if int((d == d[k]).sum()) > 1 or k in taken:
            raise ValueError("ambiguous target")
        taken.add(k)
        o[ay[k], ax[k]] = g[ys[0], xs[0]]
    return o


def g_sort_stack(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, colour counts kept, and every target's cells reach side ``d`` and
    one end of the perpendicular side."""
    bg = ctx.bg
    for d in ("down", "up", "left", "right"):
        for align in ("start", "end"):
            ok = True
            for _s, t in ctx.pairs:
                m = t != bg
                rows, cols = m.any(axis=1), m.any(axis=0)
                if d in ("left", "right"):
                    rows, cols = cols, rows
                edge = rows[-1] if d in ("down", "right") else rows[0]
                end = cols[0] if align == "start" else cols[-1]
                if not (edge and end):
                    ok = False
                    break
            if ok:
                yield (d, align, bg)


@op(
    params=(OneOf("down", "up", "left", "right"), OneOf("start", "end"), K.COLOR),
    generator=g_sort_stack,
    only_if=lambda ctx: moved_colors(ctx) is not None,
    when=W.SHALLOW,
    cases=[
        # bars sorted by size, stacked at the bottom, right-aligned
        Case(("down", "end", 0), "0220 0000 3000 4440", "0000 0003 0022 0444"),
        # columns sorted by size, stacked at the left, top-aligned
        Case(("left", "start", 0), "005 105 005", "510 500 500"),
    ],
)
def sort_stack(g: Grid, d: str, align: str, bg: int) -> Grid:
    """Take the objects (8-connected, one colour) and stack them against side ``d``
    (down/up/left/right), biggest first (ties: reading order), each flush with the
    start (top/left, ``align`` start) or end (bottom/right) of the perpendicular
    side. Raises when they do not fit."""
    objs = components(g, 8, 1, bg)
    if not 2 <= len(objs) <= 30:
        raise ValueError("needs 2 to 30 objects")
    # a sorted copy: the list components() returns is memoised for later callers
    objs = sorted(objs, key=lambda o: -int(o[0].size))
    t = g
    if d in ("left", "right"):
        t = g.T
    h, w = t.shape
    o = np.full_like(t, bg)
    level = 0
    for ys, xs in objs:
        if d in ("left", "right"):
            ys, xs = xs, ys
        oh = int(ys.max() - ys.min()) + 1
        ow = int(xs.max() - xs.min()) + 1
        if level + oh > h or ow > w:
            raise ValueError("does not fit")
        top = h - level - oh if d in ("down", "right") else level
        left = 0 if align == "start" else w - ow
        o[ys - ys.min() + top, xs - xs.min() + left] = t[ys, xs]
        level += oh
    return o.T.copy() if d in ("left", "right") else o


def _border_line(g: Grid, side: str) -> Grid:
    """The row or column of ``g`` on ``side`` (a view)."""
    line: Grid = {"up": g[0], "down": g[-1], "left": g[:, 0], "right": g[:, -1]}[side]
    return line


_WALLS_IN = "100002 100102 120032 101102"
_WALLS_OUT = "100002 110002 100232 111002"


@op(
    params=(K.CONN, K.COLOR),
    generator=Fitting(fits, lambda ctx: ((conn, ctx.bg) for conn in (8, 4)), first=True),
    only_if=lambda ctx: same_counts(ctx),
    when=W.CHANGED,
    cases=[
        # 1s slide to the left wall, 2s to the right, nearest first; the 2 stops at the 3,
        # which has no wall and stays
        Case((8, 0), _WALLS_IN, _WALLS_OUT),
        # a wall on the bottom row: the lower 4 lands first and the upper one on it; the 5
        # (no wall) stays
        Case((4, 0), "400 000 405 000 444", "000 000 405 400 444"),
    ],
)
def wall_gravity(g: Grid, conn: int, bg: int) -> Grid:
    """Walls are the grid's border rows and columns filled with one non-background
    colour. Every other object (``conn``-connected, one colour) whose colour has exactly
    one wall slides as a rigid body toward it until the next step would leave the grid
    or meet a non-background cell; objects nearest their wall move first, so they pile
    up. Objects of other colours stay."""
    h, w = g.shape
    sides = {side: _border_line(g, side) for side in ("up", "down", "left", "right")}
    walls: dict[int, list[str]] = {}
    inner = g.copy()
    for side, line in sides.items():
        c = int(line[0])
        if c != bg and (line == c).all():
            walls.setdefault(c, []).append(side)
            _border_line(inner, side)[:] = bg
    if not walls:
        raise ValueError("no wall")
    moving = []
    for ys, xs in components(inner, conn, 1, bg):
        c = int(g[ys[0], xs[0]])
        if len(walls.get(c, ())) != 1:
            continue
        side = walls[c][0]
        dist = {
            "up": ys.min(),
            "down": h - 1 - ys.max(),
            "left": xs.min(),
            "right": w - 1 - xs.max(),
        }[side]
        moving.append((int(dist), c, ys, xs, DIRS[side][0]))
    if not moving or len(moving) > 40:
        raise ValueError("needs 1 to 40 objects of a wall's colour")
    o = g.copy()
    for _, c, ys, xs, (dy, dx) in sorted(moving, key=lambda m: m[0]):
        o[ys, xs] = bg
        k = 0
        while True:
            ny, nx = ys + dy * (k + 1), xs + dx * (k + 1)
            if ny.min() < 0 or nx.min() < 0 or ny.max() >= h or nx.max() >= w:
                break
            if (o[ny, nx] != bg).any():
                break
            k += 1
        o[ys + dy * k, xs + dx * k] = c
    return o
