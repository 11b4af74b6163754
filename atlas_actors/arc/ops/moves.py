"""Ops that move objects by an amount read off the grid: their own size, a count, a colour's
offset, one step toward a marker, stretching to a dot, rolling by a key."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import DIRS, HEADINGS, STEPS8, Grid, components
from atlas_actors.arc.infer import Args, Ctx, bg_readings, fits, fits_bg
from atlas_actors.arc.ops.geometry import shift
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, OnSelf, W, op


@op(
    params=(OneOf("down", "up", "left", "right"), K.COLOR),
    generator=lambda ctx: ((d, ctx.bg) for d in ("down", "up", "left", "right")),
    only_if=lambda ctx: all(
        int((s != ctx.bg).sum()) == int((t != ctx.bg).sum()) for s, t in ctx.pairs
    ),
    when=W.CHANGED,
    cases=[Case(("up", 0), "000 000 000 100 102", "000 100 100 002 000")],
)
def move_by_size(g: Grid, d: str, bg: int) -> Grid:
    """Move every object (8-connected, one colour) in direction ``d`` by its own height
    (up/down) or width (left/right)."""
    h, w = g.shape
    objs = components(g, 8, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("needs 1 to 40 objects")
    o = np.full_like(g, bg)
    for ys, xs in objs:
        hh = int(ys.max() - ys.min() + 1)
        ww = int(xs.max() - xs.min() + 1)
        dy = -hh if d == "up" else hh if d == "down" else 0
        dx = -ww if d == "left" else ww if d == "right" else 0
        ny, nx = ys + dy, xs + dx
        if ny.min() < 0 or nx.min() < 0 or ny.max() >= h or nx.max() >= w:
            raise ValueError("object leaves the grid")
        o[ny, nx] = g[ys, xs]
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SHALLOW | W.GROWS,
    only_if=OnSelf(fits),
    # the box stretches down to the 8 marker, its middle row repeating
    cases=[Case((0,), "111 161 111 000 080", "111 161 161 161 111")],
)
def stretch_to_dot(g: Grid, bg: int) -> Grid:
    """Stretch the one bigger object toward the one single cell beside its box until
    its far edge reaches the cell: the edge line moves, the line before it repeats."""
    objs = components(g, 8, 0, bg)
    dots = [ob for ob in objs if ob[0].size == 1]
    big = [ob for ob in objs if ob[0].size > 1]
    if len(dots) != 1 or len(big) != 1:
        raise ValueError("needs one marker and one object")
    dy, dx = int(dots[0][0][0]), int(dots[0][1][0])
    ys, xs = big[0]
    y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
    box = g[y0 : y1 + 1, x0 : x1 + 1]
    o = g.copy()
    o[dy, dx] = bg
    if x0 <= dx <= x1 and (dy > y1 or dy < y0) and box.shape[0] > 1:
        rows = box if dy > y1 else box[::-1]
        n = abs(dy - (y0 if dy < y0 else y1)) + box.shape[0]
        new = np.concatenate([rows[:-1], np.repeat(rows[-2:-1], n - box.shape[0], 0), rows[-1:]])
        new = new if dy > y1 else new[::-1]
        top = y0 if dy > y1 else dy
        o[top : top + n, x0 : x1 + 1] = new
    elif y0 <= dy <= y1 and (dx > x1 or dx < x0) and box.shape[1] > 1:
        cols = box if dx > x1 else box[:, ::-1]
        n = abs(dx - (x0 if dx < x0 else x1)) + box.shape[1]
        new = np.concatenate(
            [cols[:, :-1], np.repeat(cols[:, -2:-1], n - box.shape[1], 1), cols[:, -1:]], 1
        )
        new = new if dx > x1 else new[:, ::-1]
        left = x0 if dx > x1 else dx
        o[y0 : y1 + 1, left : left + n] = new
    else:
        raise ValueError("marker not beside the object")
    return o


def g_step_toward(ctx: Ctx) -> Iterator[Args]:
    """Same shapes and colour counts, some cells move: a colour that changes place and
    another colour that does not."""
    pairs = ctx.pairs
    cols = [c for c in ctx.state_colors[:6] if c != ctx.bg]
    for a in cols:
        if not all(((s == a) != (t == a)).any() for s, t in pairs):
            continue
        for b in cols:
            if b != a and fits(ctx, step_toward, a, b, ctx.bg):
                yield (a, b, ctx.bg)
                return


@op(
    params=(K.COLOR, K.COLOR, K.COLOR),
    generator=g_step_toward,
    when=W.SHALLOW | W.SAME_SHAPE,
    # the 3 steps diagonally toward the 4
    cases=[Case((3, 4, 0), "300 000 004", "000 030 004")],
)
def step_toward(g: Grid, a: int, b: int, bg: int) -> Grid:
    """Move the cells of colour ``a`` one step (diagonal allowed) toward the centre of
    the cells of colour ``b``, stopping short of overlapping them."""
    ma, mb = g == a, g == b
    if not ma.any() or not mb.any() or a == b:
        raise ValueError("colour missing")
    ya, xa = np.nonzero(ma)
    yb, xb = np.nonzero(mb)
    dy = int(np.sign(yb.mean() - ya.mean()))
    dx = int(np.sign(xb.mean() - xa.mean()))
    ny, nx = ya + dy, xa + dx
    h, w = g.shape
    if (ny < 0).any() or (ny >= h).any() or (nx < 0).any() or (nx >= w).any():
        raise ValueError("step leaves the grid")
    if mb[ny, nx].any():
        return g.copy()
    o = g.copy()
    o[ma] = bg
    o[ny, nx] = a
    return o


def g_shift_by_count(ctx: Ctx) -> Iterator[Args]:
    """A colour present in some inputs vanishes from every target, and its number of
    cells varies: the tally of a move."""
    for m in range(10):
        if m == ctx.bg or any((t == m).any() for t in ctx.targets):
            continue
        counts = {int((s == m).sum()) for s in ctx.train}
        if len(counts) < 2:
            continue
        for d in STEPS8:
            if all(np.array_equal(shift_by_count(s, m, d, ctx.bg), t) for s, t in ctx.pairs):
                yield (m, d, ctx.bg)


@op(
    params=(K.COLOR, OneOf(*STEPS8), K.COLOR),
    generator=g_shift_by_count,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # two 5s: the rest moves two steps right, the 5s are gone
        Case((5, "right", 0), "0105 0105 0000", "0001 0001 0000"),
        # one 5: a cross moves down-left one step, its lines stay whole
        Case((5, "dl", 0), "0305 3333 0300 0300", "3000 3000 3333 3000"),
    ],
)
def shift_by_count(g: Grid, m: int, d: str, bg: int) -> Grid:
    """Count the cells of colour ``m`` (a tally), erase them, and move the rest of the
    grid that many steps in direction ``d``; cells moved in from outside copy the
    grid's edge (so lines running across the grid stay whole)."""
    ((dy, dx),) = DIRS[d]
    n = int((g == m).sum())
    a = np.where(g == m, bg, g)
    h, w = g.shape
    ys = np.clip(np.arange(h) - dy * n, 0, h - 1)
    xs = np.clip(np.arange(w) - dx * n, 0, w - 1)
    return a[np.ix_(ys, xs)].copy()


_FALL_IN = "110 002 000 000 333"
_FALL_OUT = "000 000 112 000 333"


@op(
    params=(OneOf(*HEADINGS), K.COLOR),
    generator=Fitting(fits, lambda ctx: ((d, ctx.bg) for d in HEADINGS)),
    only_if=lambda ctx: all(
        int((t != ctx.bg).sum()) <= int((s != ctx.bg).sum()) for s, t in ctx.pairs
    ),
    when=W.CHANGED,
    cases=[
        # each object falls by its cell count; the full-width floor stays
        Case(("down", 0), _FALL_IN, _FALL_OUT),
        # cells moved past the edge are lost: the 3-cell 4 rises 3, the 5 rises 1
        Case(("up", 0), "00 40 40 45", "40 00 05 00"),
    ],
)
def move_by_count(g: Grid, d: str, bg: int) -> Grid:
    """Move every object (8-connected, one colour) in direction ``d`` by its number of
    cells; cells moved past the edge are lost. Objects spanning the grid's full width
    or height (a floor, a wall) stay put and are painted last."""
    h, w = g.shape
    objs = components(g, 8, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("needs 1 to 40 objects")
    ((dy, dx),) = DIRS[d]
    o = np.full_like(g, bg)
    walls = []
    for ys, xs in objs:
        if int(ys.max() - ys.min()) + 1 == h or int(xs.max() - xs.min()) + 1 == w:
            walls.append((ys, xs))
            continue
        n = int(ys.size)
        ny, nx = ys + dy * n, xs + dx * n
        keep = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        o[ny[keep], nx[keep]] = g[ys[keep], xs[keep]]
    if len(walls) == len(objs):
        raise ValueError("nothing moves")
    for ys, xs in walls:
        o[ys, xs] = g[ys, xs]
    return o


def _offset_code(dy: int, dx: int) -> int:
    return (dy + 30) * 61 + dx + 30


def _colour_offsets(ctx: Ctx) -> dict[int, tuple[int, int]] | None:
    """For each state colour, the one offset that moves its cells onto the target's
    cells of that colour (read off the first pair where some of them remain)."""
    table: dict[int, tuple[int, int]] = {}
    for s, t in ctx.pairs:
        cols = set(np.unique(s).tolist()) - {ctx.bg}
        if set(np.unique(t).tolist()) - {ctx.bg} - cols:
            return None
        for c in cols - set(table):
            src, dst = s == c, t == c
            ty, tx = np.nonzero(dst)
            ys, xs = np.nonzero(src)
            if ty.size == 0:
                continue
            if ys.size > 60:
                return None
            for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
                dy, dx = int(ty[0]) - y, int(tx[0]) - x
                if np.array_equal(shift(src, dy, dx, 0), dst):
                    table[c] = (dy, dx)
                    break
            else:
                return None
    return table


def g_shift_by_color(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, each colour's cells moved by one offset (two different offsets at
    least: one offset for all is a plain shift)."""
    table = _colour_offsets(ctx)
    if table is None or len(set(table.values())) < 2:
        return
    args = [[_offset_code(dy, dx), c] for c, (dy, dx) in sorted(table.items())]
    if fits(ctx, shift_by_color, args, ctx.bg):
        yield (args, ctx.bg)


_SHIFT_IN = "010 000 200"
_SHIFT_OUT = "000 010 002"
_BY_COLOR = [[1921, 1], [1862, 2]]


@op(
    params=(K.TABLE, K.COLOR),
    generator=g_shift_by_color,
    when=W.CHANGED,
    cases=[
        Case((_BY_COLOR, 0), _SHIFT_IN, _SHIFT_OUT),
        # moved past the edge: lost
        Case((_BY_COLOR, 0), "002 001", "000 000"),
    ],
)
def shift_by_color(g: Grid, table: list[list[int]], bg: int) -> Grid:
    """Every cell moves by its colour's offset: ``table`` entries ``[(dy + 30) * 61 +
    dx + 30, c]``; cells moved past the edge are lost, cells left behind become
    background, where two colours land on one cell the higher colour wins, and a
    non-background colour missing from the table raises."""
    h, w = g.shape
    o = np.full_like(g, bg)
    moves = {int(c): divmod(int(code), 61) for code, c in table}
    for c in np.unique(g).tolist():
        if c == bg:
            continue
        if c not in moves:
            raise ValueError(f"no offset for colour {c}")
        dy, dx = moves[c][0] - 30, moves[c][1] - 30
        ys, xs = np.nonzero(g == c)
        ny, nx = ys + dy, xs + dx
        keep = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        o[ny[keep], nx[keep]] = c
    return o


def g_step_to_marker(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; the marker is the one colour in every state and in no target."""
    gone = set.intersection(
        *(set(np.unique(s).tolist()) - set(np.unique(t).tolist()) for s, t in ctx.pairs)
    )
    if len(gone) != 1:
        return
    (m,) = gone
    for bg in bg_readings(ctx):
        if fits_bg(ctx, step_to_marker, m, bg):
            yield (m, bg)


_STEP_IN = "00000 04400 04800 00000 00000"
_STEP_OUT = "00000 00000 00440 00440 00000"


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_step_to_marker,
    when=W.CHANGED,
    # the 8 in the 4s' bottom-right corner: the 4s, the 8 made a 4, step down-right
    cases=[Case((8, 0), _STEP_IN, _STEP_OUT)],
)
def step_to_marker(g: Grid, m: int, bg: int) -> Grid:
    """Markers of colour ``m`` sit in a corner of an object's bounding box (objects
    8-connected, one colour, the markers left out): each marker takes its object's
    colour and the two move one step diagonally toward the marker's corner. An object
    with two markers, or a marker in no object's corner, raises."""
    marks = set(zip(*(a.tolist() for a in np.nonzero(g == m)), strict=True))
    if not marks or m == bg:
        raise ValueError("no marker")
    sub = np.where(g == m, bg, g)
    h, w = g.shape
    moves = []
    used: set[tuple[int, int]] = set()
    for ys, xs in components(sub, 8, 1, bg):
        t, b, left, r = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        mk = [p for p in ((t, left), (t, r), (b, left), (b, r)) if p in marks]
        if len(set(mk)) > 1:
            raise ValueError("two markers on one object")
        if mk:
            (my, mx) = mk[0]
            used.add(mk[0])
            dy, dx = -1 if my == t else 1, -1 if mx == left else 1
            moves.append((np.append(ys, my), np.append(xs, mx), int(g[ys[0], xs[0]]), dy, dx))
    if not moves or used != marks:
        raise ValueError("a marker on no object's corner")
    o = g.copy()
    for ys, xs, _c, _dy, _dx in moves:
        o[ys, xs] = bg
    for ys, xs, c, dy, dx in moves:
        ny, nx = ys + dy, xs + dx
        inb = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        o[ny[inb], nx[inb]] = c
    return o


def g_roll_by_key(ctx: Ctx) -> Iterator[Args]:
    """Targets one column (or row) narrower than their states."""
    narrower = all(t.shape == (s.shape[0], s.shape[1] - 1) for s, t in ctx.pairs)
    shorter = all(t.shape == (s.shape[0] - 1, s.shape[1]) for s, t in ctx.pairs)
    if (narrower or shorter) and fits(ctx, roll_by_key):
        yield ()


_ROLL_IN = "512 534 967 580"
_ROLL_OUT = "67 80 12 34"


@op(
    generator=g_roll_by_key,
    when=W.SHALLOW,
    cases=[
        # the key column's odd cell is at index 2: the rest rolls down by 2
        Case((), _ROLL_IN, _ROLL_OUT),
        # a key row (the first column has no single odd cell): the rest rolls right by 1
        Case((), "464 123 789", "312 978"),
    ],
)
def roll_by_key(g: Grid) -> Grid:
    """The first column (else the first row) is a key: one colour with a single cell
    of another. The key is dropped and the rest rolled cyclically down (right) by the
    odd cell's index."""
    for a, t in ((g, False), (g.T, True)):
        key = a[:, 0]
        vals, cnt = np.unique(key, return_counts=True)
        if a.shape[1] > 1 and vals.size == 2 and cnt.min() == 1 and key.size > 2:
            i = int(np.nonzero(key == vals[int(np.argmin(cnt))])[0][0])
            rest = np.roll(a[:, 1:], i, axis=0)
            return rest.T if t else rest
    raise ValueError("no key line")
