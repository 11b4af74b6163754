"""Ops that draw straight rays from cells: in fixed directions, from every cell, dashed,
from walls, pointed by markers, detouring around obstacles, toward a colour."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import (
    DIRS,
    HEADINGS,
    HV4D,
    KERNELS,
    Grid,
    compiled,
    components,
    role_color,
    wall_lines,
)
from atlas_actors.arc.infer import Args, Ctx, fits, painted_cells, paints_in
from atlas_actors.arc.registry import BG, Case, K, OneOf, W, op


def _rays_down(src: Grid, free: Grid, stop: int) -> Grid:
    """Background cells a downward ray from a ``src`` cell reaches: with ``stop``, when
    the nearest non-background cell above is a source; without, when any source is."""
    h, w = src.shape
    out = np.zeros((h, w), dtype=bool)
    if h < 2:
        return out
    if stop:
        rows = np.arange(h)[:, None]
        last = np.maximum.accumulate(np.where(free, -1, rows), axis=0)[:-1]
        hit = src[np.maximum(last, 0), np.arange(w)[None, :]] & (last >= 0)
        out[1:] = hit & free[1:]
    else:
        out[1:] = np.logical_or.accumulate(src, axis=0)[:-1] & free[1:]
    return out


def _as_down(m: Grid, dy: int, dx: int, back: bool) -> Grid:
    """``m`` turned so that direction (dy, dx) runs down (``back``: turned back)."""
    if dy == 1:
        return m
    if dy == -1:
        return m[::-1]
    if dx == 1:
        return m.T
    return m[::-1].T if back else m.T[::-1]


def _ray_paint(src: Grid, free: Grid, dirs: list[tuple[int, int]], stop: int) -> Grid:
    """The ``free`` cells that rays from the ``src`` cells reach, in each direction of
    ``dirs``; ``stop`` ends a ray at the first non-free cell (see :func:`rays`)."""
    h, w = src.shape
    paint = np.zeros((h, w), dtype=bool)
    for dy, dx in dirs:
        if dx == 0 or dy == 0:  # along rows or columns: one scan, no stepping
            down = _rays_down(_as_down(src, dy, dx, False), _as_down(free, dy, dx, False), stop)
            paint |= _as_down(down, dy, dx, True)
            continue
        front = src
        for _ in range(max(h, w)):
            nxt = np.zeros((h, w), dtype=bool)
            ys, yd = (
                (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
            )
            xs, xd = (
                (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
            )
            nxt[yd, xd] = front[ys, xs]
            front = nxt & free if stop else nxt
            if not front.any():
                break
            paint |= front & free
    return paint


def _ray_paint_compiled(src: Grid, free: Grid, dirs: list[tuple[int, int]], stop: int) -> Grid:
    h, w = src.shape
    out = KERNELS.ray_paint(
        np.ascontiguousarray(src).view(np.uint8),
        np.ascontiguousarray(free).view(np.uint8),
        h,
        w,
        dirs,
        stop,
    )
    return np.frombuffer(out, dtype=np.bool_).reshape(h, w)


_ray_paint = compiled(_ray_paint, _ray_paint_compiled)


RAY_DIRS = tuple(DIRS)


def g_rays(ctx: Ctx) -> Iterator[Args]:
    # a ray has its source's colour and covers background: only colours some target
    # gains on background cells can be rays
    grown = ctx.grown_colors
    colors = [(c, ctx.bg) for c in ctx.state_colors if c in grown][:4]
    if ctx.depth >= 1 and ctx.bg_varies:
        # past the input (e.g. after a crop): background and ray colour as colour roles
        colors += [(r, 13) for r in (10, 11, 12)]
    for c, bg in colors:
        for d in ("h", "v", "hv", "diag", "all", "up", "down", "left", "right"):
            yield (c, d, 1, bg)
            yield (c, d, 0, bg)
        for d in ("ul", "ur", "dl", "dr"):
            yield (c, d, 1, bg)


@op(
    params=(K.COLOR, OneOf(*RAY_DIRS), K.FLAG, K.COLOR),
    generator=g_rays,
    when=W.SAME_SHAPE,
    cases=[
        Case((1, "right", 1, 0), "1020", "1120"),
        Case((1, "right", 0, 0), "1020", "1121"),
        Case((1, "dr", 1, 0), "100 000 000", "100 010 001"),
    ],
)
def rays(g: Grid, c: int, dirs: str, stop: int, bg: int) -> Grid:
    """From every cell of colour ``c`` draw rays of ``c`` over the background.

    ``stop`` 1 ends a ray at the first non-background cell, 0 passes over (without
    painting) non-background cells.
    """
    free = g == bg
    src = g == c
    if src.sum() > 40:
        raise ValueError("too many sources")
    paint = _ray_paint(src, free, DIRS[dirs], stop)
    return np.where(paint, c, g)


def g_rays_all(ctx: Ctx) -> Iterator[Args]:
    # past the input, the background as a colour role when it is not the same in
    # every state
    bgs = [ctx.bg] if ctx.grows else []
    if ctx.depth >= 1 and ctx.bg_varies:
        bgs.append(13)
    for bg in bgs:
        for d in ("h", "v", "hv", "diag", "all", "up", "down", "left", "right"):
            yield (d, 1, bg)
            yield (d, 0, bg)
        for d in ("ul", "ur", "dl", "dr"):
            yield (d, 1, bg)


@op(
    params=(OneOf(*RAY_DIRS), K.FLAG, K.COLOR),
    generator=g_rays_all,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case(("down", 1, 0), "102 000 300", "102 102 302")],
)
def rays_all(g: Grid, dirs: str, stop: int, bg: int) -> Grid:
    """``rays`` from every non-background cell, each in its own colour (cells nearer the
    top-left first, so later rays paint over earlier ones where they cross)."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg)
    if ys.size > 60:
        raise ValueError("too many sources")
    o = g.copy()
    free = g == bg
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        c = g[y, x]
        for dy, dx in DIRS[dirs]:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w:
                if free[ny, nx]:
                    o[ny, nx] = c
                elif stop:
                    break
                ny, nx = ny + dy, nx + dx
    return o


def g_project(ctx: Ctx) -> Iterator[Args]:
    for c in ctx.state_colors[:5]:
        yield (c, ctx.bg)
    if ctx.bg_varies:
        yield (10, 13)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_project,
    when=W.GROWS,
    cases=[Case((5, 0), "1005 0005 0200 0000", "1115 0005 0200 0000")],
)
def project(g: Grid, c: int, bg: int) -> Grid:
    """From every non-background cell not of colour ``c``, draw a line in its own colour
    toward colour ``c`` in each of the 4 directions where the first non-background cell
    it meets has colour ``c``."""
    h, w = g.shape
    ys, xs = np.nonzero((g != bg) & (g != c))
    if ys.size > 80 or not (g == c).any():
        raise ValueError("no target or too many sources")
    o = g.copy()
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        for dy, dx in DIRS["hv"]:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w and g[ny, nx] == bg:
                ny, nx = ny + dy, nx + dx
            if 0 <= ny < h and 0 <= nx < w and g[ny, nx] == c:
                py, px = y + dy, x + dx
                while (py, px) != (ny, nx):
                    o[py, px] = g[y, x]
                    py, px = py + dy, px + dx
    return o


def g_dashed_rays(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (at depth 0): a painted colour and a direction
    that fit every pair."""
    common: set[int] | None = None
    for s, t in ctx.pairs:
        cols = {int(v) for v in np.unique(t[s != t])}
        common = cols if common is None else common & cols
    for c2 in sorted(common or ())[:2]:
        for d in HV4D:
            if fits(ctx, dashed_rays, d, c2, ctx.bg):
                yield (d, c2, ctx.bg)
                return


@op(
    params=(OneOf(*HV4D), K.COLOR, K.COLOR),
    generator=g_dashed_rays,
    when=W.PAINTED | W.FIRST,
    cases=[Case(("right", 5, 0), "30000", "35353")],
)
def dashed_rays(g: Grid, d: str, c2: int, bg: int) -> Grid:
    """From every cell not of colour ``c2`` or the background (at most 40) draw a ray
    in direction ``d`` to the border over the background, alternating ``c2`` (first)
    with the cell's own colour."""
    dy, dx = HV4D[d]
    ys, xs = np.nonzero((g != bg) & (g != c2))
    if ys.size == 0 or ys.size > 40:
        raise ValueError("no sources or too many")
    h, w = g.shape
    o = g.copy()
    for y0, x0 in zip(ys.tolist(), xs.tolist(), strict=True):
        c, y, x, k = int(g[y0, x0]), y0 + dy, x0 + dx, 1
        while 0 <= y < h and 0 <= x < w:
            if g[y, x] == bg:
                o[y, x] = c2 if k % 2 else c
            y, x, k = y + dy, x + dx, k + 1
    return o


def g_wall_rays(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted; a colour and a side of the wall whose rays paint
    only cells the target gives that colour (in every pair, some of them)."""
    pairs = ctx.pairs
    for c in ctx.state_colors[:5]:
        if c == ctx.bg:
            continue
        for toward in (1, 0):
            if paints_in(pairs, c, wall_rays, c, toward, ctx.bg):
                yield (c, toward, ctx.bg)


@op(
    params=(K.COLOR, K.FLAG, K.COLOR),
    generator=g_wall_rays,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the 5 row is the wall: 2 cells reach it, 1 cells run away from it
        Case((2, 1, 0), "21 00 55 00 02", "21 20 55 02 02"),
        Case((1, 0, 0), "00510 00500", "00511 00500"),
    ],
)
def wall_rays(g: Grid, c: int, toward: int, bg: int) -> Grid:
    """A wall is a full row or column of one colour. From every cell of colour ``c``
    draw a ray of ``c`` at right angles to the wall (over the background): up to the
    wall (``toward`` 1) or away from it to the border (0)."""
    h, w = g.shape
    rows = [y for y in range(h) if g[y, 0] != bg and (g[y] == g[y, 0]).all()]
    cols = [x for x in range(w) if g[0, x] != bg and (g[:, x] == g[0, x]).all()]
    if len(rows) + len(cols) != 1:
        raise ValueError("not one wall")
    t = g.T if cols else g
    wall = (cols or rows)[0]
    o = t.copy()
    ys, xs = np.nonzero(t == c)
    if ys.size == 0 or ys.size > 60:
        raise ValueError("no cells of that colour")
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        if y == wall:
            continue
        step = 1 if y < wall else -1
        if not toward:
            step = -step
        end = wall if toward else (t.shape[0] if step > 0 else -1)
        col = o[:, x]
        for yy in range(y + step, end, step):
            if t[yy, x] == bg:
                col[yy] = c
    return o.T if cols else o


def _sign(v: float) -> int:
    return 0 if abs(v) < 1e-9 else (1 if v > 0 else -1)


def g_pointer_ray(ctx: Ctx) -> Iterator[Args]:
    """Background cells painted (and maybe marker cells recoloured): try the minority
    colour or a colour found in every state as the marker, each direction, paint mode
    and colour rule."""
    for s, _t in ctx.pairs:
        objs = components(s, 8, 0, ctx.bg)
        n2 = sum(1 for ys, xs in objs[:31] if np.unique(s[ys, xs]).size == 2)
        if not 1 <= n2 <= 6 or len(objs) > 30:
            return
    marks = [-1] + [c for c in ctx.state_colors[:4] if all((s == c).any() for s in ctx.states)]
    for m in marks:
        for d in ("away", "toward"):
            for paint in ("line", "sweep"):
                for col in ("marker", "main"):
                    if fits(ctx, pointer_ray, m, d, paint, col, ctx.bg):
                        yield (m, d, paint, col, ctx.bg)
                        return


@op(
    params=(
        K.COLOR_OR_NONE,
        OneOf("toward", "away"),
        OneOf("line", "sweep"),
        OneOf("marker", "main"),
        K.COLOR,
    ),
    generator=g_pointer_ray,
    when=W.GROWS | W.SHALLOW,
    cases=[
        # the odd cell (1) of the 2 shape points through it: a ray of 1 leaves the far side
        Case((-1, "away", "line", "marker", 0), "02000 12200 02000", "02000 12211 02000"),
        # the 2 corner of the block points up-right: the block sweeps that way in its colour
        Case((2, "toward", "sweep", "main", 0), "0000 0000 4200 4400", "0044 0444 4440 4400"),
        # a line stops at another object
        Case((-1, "toward", "line", "marker", 0), "3350070", "3355570"),
    ],
)
def pointer_ray(g: Grid, m: int, d: str, paint: str, col: str, bg: int) -> Grid:
    """Objects (8-connected, two colours) point with their marker cells (colour ``m``,
    or -1: the object's minority colour): each marker cell points from the object's
    centre toward itself (``d`` toward) or the opposite way (away). ``paint`` line: from
    the marker cell a ray runs that way over the background until it meets another
    object; sweep: the whole object is copied step by step that way to the border.
    ``col`` marker / main: the colour painted (with main the marker cells take the
    main colour too)."""
    h, w = g.shape
    objs = components(g, 8, 0, bg)
    if len(objs) > 30:
        raise ValueError("too many objects")
    o = g.copy()
    own = np.full(g.shape, -1)
    for i, (ys, xs) in enumerate(objs):
        own[ys, xs] = i
    done = 0
    for i, (ys, xs) in enumerate(objs):
        vals, cnt = np.unique(g[ys, xs], return_counts=True)
        if vals.size != 2 or (m < 0 and cnt[0] == cnt[1]) or (m >= 0 and m not in vals):
            continue
        mark = m if m >= 0 else int(vals[int(cnt[1] < cnt[0])])
        main = int(vals[0]) if int(vals[1]) == mark else int(vals[1])
        mk = g[ys, xs] == mark
        done += int(mk.sum())
        if done > 16:
            raise ValueError("too many marker cells")
        cy, cx = float(ys.mean()), float(xs.mean())
        c = mark if col == "marker" else main
        for y, x in zip(ys[mk].tolist(), xs[mk].tolist(), strict=True):
            dy, dx = _sign(y - cy), _sign(x - cx)
            if d == "away":
                dy, dx = -dy, -dx
            if dy == 0 and dx == 0:
                continue
            if paint == "line":
                ny, nx = y + dy, x + dx
                while 0 <= ny < h and 0 <= nx < w and own[ny, nx] in (-1, i):
                    if g[ny, nx] == bg:
                        o[ny, nx] = c
                    ny, nx = ny + dy, nx + dx
                continue
            for k in range(1, max(h, w) + 1):
                ty, tx = ys + k * dy, xs + k * dx
                inb = (ty >= 0) & (ty < h) & (tx >= 0) & (tx < w)
                if not inb.any():
                    break
                ty, tx = ty[inb], tx[inb]
                free = g[ty, tx] == bg
                o[ty[free], tx[free]] = c
        if col == "main":
            o[ys[mk], xs[mk]] = main
    if not done:
        raise ValueError("no pointing object")
    return o


def g_rays_paint(ctx: Ctx) -> Iterator[Args]:
    """A new colour painted only on rows/columns through cells of one state colour:
    the narrowest direction set (h, v, hv) that covers every painted cell."""
    for c in ctx.new_colors[:2]:
        got = painted_cells(ctx, c)
        if got is None:
            continue
        roles = len({frozenset(np.unique(s).tolist()) for s in ctx.train}) > 1
        for src in ctx.state_colors[:4] + ([10, 12] if roles else []):
            if src in (c, ctx.bg):
                continue
            ok = {"h": True, "v": True, "hv": True}
            for s, diff in got:
                try:
                    m = s == role_color(s, src)
                except ValueError:
                    ok = {}
                    break
                rows, cols = m.any(axis=1)[:, None], m.any(axis=0)[None, :]
                ok["h"] &= bool((~diff | rows).all())
                ok["v"] &= bool((~diff | cols).all())
                ok["hv"] &= bool((~diff | rows | cols).all())
            for d in ("h", "v", "hv"):
                if ok.get(d):
                    yield (src, c, d, 0, ctx.bg)
                    yield (src, c, d, 1, ctx.bg)
                    break


@op(
    params=(K.COLOR, K.COLOR, OneOf("h", "v", "hv"), K.FLAG, K.COLOR),
    generator=g_rays_paint,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        Case((2, 8, "v", 0, 0), "200 550 000", "200 550 800"),
        Case((2, 8, "h", 1, 0), "2050", "2850"),
    ],
)
def rays_paint(g: Grid, src: int, c: int, dirs: str, stop: int, bg: int) -> Grid:
    """From every cell of colour ``src`` draw rays (``dirs`` h, v or hv) in colour ``c``
    over the background; ``stop`` 1 ends a ray at the first non-background cell, 0
    passes over (without painting) non-background cells."""
    if not (g == src).any():
        raise ValueError("no source cells")
    return np.where(rays(g, src, dirs, stop, bg) != g, c, g)


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.GROWS | W.SHALLOW,
    # the 2 cell extends down to the 2 wall, the 1 cell left to the 1 wall; the 5
    # has no wall of its colour
    cases=[Case((0,), "10000 10200 10015 10000 22222", "10000 10200 11215 10200 22222")],
)
def ray_to_wall(g: Grid, bg: int) -> Grid:
    """Full lines (rows or columns that one non-background colour covers at least
    70%) are walls. Every other non-background cell draws a line of its colour over
    the background up to each nearest wall of its own colour straight above, below,
    left or right of it."""
    rows, cols = wall_lines(g, bg)
    if not rows and not cols:
        raise ValueError("no walls")
    o = g.copy()
    ys, xs = np.nonzero(g != bg)
    done = 0
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        if y in rows or x in cols:
            continue
        c = int(g[y, x])
        above = [r for r, k in rows.items() if k == c and r < y]
        below = [r for r, k in rows.items() if k == c and r > y]
        left = [q for q, k in cols.items() if k == c and q < x]
        right = [q for q, k in cols.items() if k == c and q > x]
        seg = o[:, x]
        if above:
            part = seg[max(above) + 1 : y]
            part[part == bg] = c
        if below:
            part = seg[y + 1 : min(below)]
            part[part == bg] = c
        seg = o[y, :]
        if left:
            part = seg[max(left) + 1 : x]
            part[part == bg] = c
        if right:
            part = seg[x + 1 : min(right)]
            part[part == bg] = c
        done += bool(above or below or left or right)
    if not done:
        raise ValueError("no cell faces a wall of its colour")
    return o


def _painted(ctx: Ctx) -> set[int] | None:
    """The colours painted over background cells (None unless only background cells
    change)."""
    out: set[int] = set()
    for s, t in ctx.pairs:
        ch = s != t
        if not ch.any() or (s[ch] != ctx.bg).any():
            return None
        out |= set(np.unique(t[ch]).tolist())
    return out


def g_ray_detour(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all in one state colour (else rays in their
    sources' colours): try each heading, then sidestep or turn (only where some ray
    meets an obstacle, else plain rays do)."""
    cols = _painted(ctx)
    if not cols or not cols <= set(ctx.state_colors):
        return
    c = next(iter(cols)) if len(cols) == 1 else -1
    for d in HEADINGS:
        if fits(ctx, ray_detour, c, d, 0, ctx.bg):
            continue  # plain rays do
        for side in (1, -1, 2, -2):
            if fits(ctx, ray_detour, c, d, side, ctx.bg):
                yield (c, d, side, ctx.bg)
                return


_DETOUR_IN = "0000 0500 0000 0202"


@op(
    params=(K.COLOR_OR_NONE, OneOf(*HEADINGS), K.OFFSET, K.COLOR),
    generator=g_ray_detour,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # rays go up; the left one meets the 5 and steps right, then goes on up
        Case((2, "up", 1, 0), _DETOUR_IN, "0022 0522 0222 0202"),
        # side -1: it steps left instead
        Case((2, "up", -1, 0), _DETOUR_IN, "2002 2502 2202 0202"),
        # side 0: plain rays that stop at the obstacle
        Case((2, "up", 0, 0), _DETOUR_IN, "0002 0502 0202 0202"),
        # a ray whose side cell is blocked too ends there; heading right, side 1 is down
        Case((3, "right", 1, 0), "3004 0040 3000", "3334 0040 3333"),
        # side 2: the ray turns right at the 5 and goes on to the edge
        Case((2, "up", 2, 0), "000 500 000 200", "000 500 222 200"),
        # -1: every cell shoots in its own colour (the 5, blocked by nothing, too)
        Case((-1, "up", -1, 0), "000 050 000 030", "350 350 330 030"),
    ],
)
def ray_detour(g: Grid, c: int, d: str, side: int, bg: int) -> Grid:
    """From every cell of colour ``c`` (-1: every non-background cell, each ray in
    its source's colour) whose next cell in direction ``d`` is background,
    draw a ray of ``c`` over the background to the grid's edge. A ray whose way is
    blocked (a non-background cell ahead) steps aside by one cell (``side`` 1: to the
    right of its heading, -1: to the left) and goes on in its heading from there, or
    turns (``side`` 2: right, -2: left) and goes on in the new heading (turning again
    the same way at the next obstacle); it ends where it cannot go on (``side`` 0:
    at the first obstacle). At most 40 sources."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg if c < 0 else g == c)
    if ys.size == 0 or ys.size > 40:
        raise ValueError("no sources or too many")
    o = g.copy()
    sgn = 1 if side > 0 else -1
    for y0, x0 in zip(ys.tolist(), xs.tolist(), strict=True):
        col = int(g[y0, x0])
        ((dy, dx),) = DIRS[d]
        ny, nx = y0 + dy, x0 + dx
        if not (0 <= ny < h and 0 <= nx < w) or g[ny, nx] != bg:
            continue
        y, x = y0, x0
        for _ in range(h * w):
            ny, nx = y + dy, x + dx
            if not (0 <= ny < h and 0 <= nx < w):
                break
            if g[ny, nx] != bg:
                if side == 0:
                    break
                sy, sx = dx * sgn, -dy * sgn  # right of (dy, dx) for sgn 1
                if abs(side) == 2:
                    dy, dx = sy, sx
                ny, nx = y + sy, x + sx
                if not (0 <= ny < h and 0 <= nx < w) or g[ny, nx] != bg:
                    break
            if o[ny, nx] == col and abs(side) == 2:
                break  # a turning ray back on its own path
            o[ny, nx] = col
            y, x = ny, nx
    return o
