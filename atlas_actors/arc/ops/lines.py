"""Ops that draw or complete whole lines: extending ends and segments, centre lines,
staircases, runs, lines by position, filling empty lines, mending broken lines, lines
through holes and dots, toggling lines."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import DIRS, Grid, clusters, components
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    bg_readings,
    color_change,
    color_specs,
    fits,
    fits_bg,
)
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, W, op


def g_fill_empty_lines(ctx: Ctx) -> Iterator[Args]:
    ch = color_change(ctx)
    if ch is None or len(set(ch[0])) != 1 or len(set(ch[1])) != 1:
        return
    for mode in ("full", "inner"):
        if fits(ctx, fill_empty_lines, ch[0][0], ch[1][0], mode):
            yield (ch[0][0], ch[1][0], mode)


@op(
    params=(K.COLOR, K.COLOR, OneOf("full", "inner")),
    generator=g_fill_empty_lines,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        Case((0, 2, "full"), "101 000 100", "121 222 120"),
        Case((0, 3, "inner"), "8888 8002 8022", "8888 8332 8022"),
    ],
)
def fill_empty_lines(g: Grid, e: int, c: int, mode: str) -> Grid:
    """Rows and columns made only of colour ``e`` (``mode`` full), or whose cells
    between the two end cells are all ``e`` while the ends are not (inner), get their
    ``e`` cells painted ``c``."""
    o = g.copy()
    for t in (False, True):
        a = g.T if t else g
        b = o.T if t else o
        for i in range(a.shape[0]):
            line = a[i]
            if mode == "full":
                hit = bool((line == e).all())
            else:
                hit = (
                    line.size > 2
                    and bool((line[1:-1] == e).all())
                    and line[0] != e
                    and line[-1] != e
                )
            if hit:
                b[i][line == e] = c
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.GROWS | W.SHALLOW,
    # the diagonal tail of the square is continued to the edge
    cases=[Case((0,), "3300 3300 0030 0000", "3300 3300 0030 0003")],
)
def extend_ends(g: Grid, bg: int) -> Grid:
    """Continue lines: every non-background cell with exactly one non-background
    8-neighbour, of its own colour, gets a ray of its colour pointing away from that
    neighbour, over background, up to the first non-background cell."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg)
    if ys.size > 200:
        raise ValueError("too many cells")
    o = g.copy()
    nbs = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx]
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        c = int(g[y, x])
        found = [
            (dy, dx)
            for dy, dx in nbs
            if 0 <= y + dy < h and 0 <= x + dx < w and g[y + dy, x + dx] != bg
        ]
        if len(found) != 1 or g[y + found[0][0], x + found[0][1]] != c:
            continue
        dy, dx = -found[0][0], -found[0][1]
        ny, nx = y + dy, x + dx
        while 0 <= ny < h and 0 <= nx < w and g[ny, nx] == bg:
            o[ny, nx] = c
            ny, nx = ny + dy, nx + dx
    return o


def g_center_lines(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for axis in ("hv", "h", "v"):
        yield (ch[1][0], axis, ctx.bg)


@op(
    params=(K.COLOR, OneOf("h", "v", "hv"), K.COLOR),
    generator=g_center_lines,
    when=W.PAINTED | W.SHALLOW,
    cases=[Case((6, "hv", 0), "00000 01110 01010 01110 00000", "00600 01110 61616 01110 00600")],
)
def center_lines(g: Grid, c: int, axis: str, bg: int) -> Grid:
    """Draw lines of colour ``c`` across the whole grid, over the background, through
    the centre row (``axis`` h), column (v) or both (hv) of every object (8-connected,
    one colour) whose bounding box has a middle cell on that axis."""
    objs = components(g, 8, 1, bg)
    if not objs or len(objs) > 20:
        raise ValueError("no objects or too many")
    free = g == bg
    o = g.copy()
    for ys, xs in objs:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        if "h" in axis and (y0 + y1) % 2 == 0:
            row = (y0 + y1) // 2
            o[row, free[row]] = c
        if "v" in axis and (x0 + x1) % 2 == 0:
            col = (x0 + x1) // 2
            o[free[:, col], col] = c
    return o


@op(
    params=(OneOf("h", "v"), K.COLOR),
    generator=Fitting(fits, lambda ctx: ((a, ctx.bg) for a in ("v", "h"))),
    only_if=lambda ctx: all((t[s != t] == ctx.bg).all() for s, t in ctx.pairs),
    when=W.SHALLOW | W.SAME_SHAPE,
    cases=[Case(("v", 0), "123 456 789", "020 050 080")],
)
def keep_center_line(g: Grid, axis: str, bg: int) -> Grid:
    """Erase everything but the middle column (``axis`` v) or middle row (h) of an
    odd-sized grid."""
    h, w = g.shape
    n = w if axis == "v" else h
    if n % 2 == 0 or n < 3:
        raise ValueError("no single middle line")
    o = np.full_like(g, bg)
    if axis == "v":
        o[:, n // 2] = g[:, n // 2]
    else:
        o[n // 2] = g[n // 2]
    return o


def g_complete_lines(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, each in a row or column with at least two cells
    already: one new colour or the lines' own colours."""
    for s, t in ctx.pairs:
        fg = s != ctx.bg
        lined = (fg.sum(axis=1) >= 2)[:, None] | (fg.sum(axis=0) >= 2)[None, :]
        if ((s != t) & ~lined).any():
            return
    ch = color_change(ctx)
    cs = [ch[1][0]] if ch is not None and len(set(ch[1])) == 1 else []
    for c in [*cs, -1]:
        for reach in (1, 2, 4, 30):
            if fits(ctx, complete_lines, c, reach, ctx.bg):
                yield (c, reach, ctx.bg)
                return


@op(
    params=(K.COLOR_OR_NONE, K.COUNT, K.COLOR),
    generator=g_complete_lines,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the top row and both side columns are more than half filled: their gaps get 2;
        # the middle row (one cell of five) stays open
        Case((2, 2, 0), "10111 00001 10100 10001", "12111 20001 10102 10001"),
        Case((-1, 1, 0), "3303 0000 0000", "3303 0000 0000"),
    ],
)
def complete_lines(g: Grid, c: int, reach: int, bg: int) -> Grid:
    """Mend broken lines: in the bounding box of every group of non-background cells
    (joined across ``reach`` - 1 empty cells), each row and column that is more than
    half filled gets its background cells painted ``c`` (-1: the line's commonest
    colour)."""
    o = g.copy()
    groups = clusters(g != bg, reach)
    if len(groups) > 30:
        raise ValueError("too many groups")
    for ys, xs in groups:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1
        if y1 - y0 < 3 or x1 - x0 < 3:
            continue
        box, src = o[y0:y1, x0:x1], g[y0:y1, x0:x1]
        for line, out in [(src[i], box[i]) for i in range(y1 - y0)] + [
            (src[:, j], box[:, j]) for j in range(x1 - x0)
        ]:
            fg = line != bg
            if 2 * int(fg.sum()) <= line.size or fg.all():
                continue
            col = c if c >= 0 else int(np.bincount(line[fg]).argmax())
            out[(~fg) & (out == bg)] = col
    return o


def g_extend_runs(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, nothing lost and something painted, and some train state has a
    line whose non-background cells are one run of two colours."""
    for s in ctx.train:
        for a in (s, s.T):
            for r in a:
                xs = np.nonzero(r != ctx.bg)[0]
                if (
                    xs.size >= 2
                    and int(xs[-1] - xs[0]) + 1 == xs.size
                    and np.unique(r[xs]).size >= 2
                ):
                    yield ("hv", ctx.bg)
                    yield ("h", ctx.bg)
                    yield ("v", ctx.bg)
                    return


@op(
    params=(OneOf("h", "v", "hv"), K.COLOR),
    generator=g_extend_runs,
    when=W.GROWS | W.FIRST,
    cases=[
        # the 1 2 run in row 1 and the 3 1 run in column 1 repeated along their lines
        Case(("hv", 0), "03000 01200 00000 00000", "03000 21212 03000 01000"),
        Case(("h", 0), "03000 01200 00000", "03000 21212 00000"),
    ],
)
def extend_runs(g: Grid, axis: str, bg: int) -> Grid:
    """Every row (``axis`` h), column (v) or both (hv) whose non-background cells form
    one run of at least two cells and two colours has that run repeated periodically
    (period: the run's length) along the whole line, over the background."""
    o = g.copy()
    done = False
    for ax in axis:
        a, out = (g, o) if ax == "h" else (g.T, o.T)
        for i in range(a.shape[0]):
            xs = np.nonzero(a[i] != bg)[0]
            if xs.size < 2 or int(xs[-1] - xs[0]) + 1 != xs.size:
                continue
            run = a[i, xs[0] : xs[-1] + 1]
            if np.unique(run).size < 2:
                continue
            idx = (np.arange(a.shape[1]) - int(xs[0])) % run.size
            free = out[i] == bg
            out[i, free] = run[idx][free]
            done = True
    if not done:
        raise ValueError("no run to extend")
    return o


def g_lines_by_position(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; in every pair each line with one non-background cell becomes one
    colour (the others stay), a function of the cell's index that covers the test
    lines."""
    for axis in ("h", "v"):
        table: dict[int, int] = {}
        ok = True
        for s, t in ctx.pairs:
            a, b = (s, t) if axis == "h" else (s.T, t.T)
            for r, q in zip(a, b, strict=True):
                xs = np.nonzero(r != ctx.bg)[0]
                if xs.size != 1:
                    ok = ok and bool((r == q).all())
                elif (q != q[0]).any() or table.setdefault(int(xs[0]), int(q[0])) != int(q[0]):
                    ok = False
            if not ok:
                break
        if not ok or len(set(table.values())) < 2:
            continue
        for s in ctx.states[ctx.n :]:
            a = s if axis == "h" else s.T
            for r in a:
                xs = np.nonzero(r != ctx.bg)[0]
                if xs.size == 1 and int(xs[0]) not in table:
                    ok = False
        if ok:
            yield (sorted([k, v] for k, v in table.items()), axis, ctx.bg)


@op(
    params=(K.TABLE, OneOf("h", "v"), K.COLOR),
    generator=g_lines_by_position,
    when=W.SAME_SHAPE | W.FIRST,
    cases=[
        # each row's single 5 picks its row's colour by its column (0 -> 2, 2 -> 3); the
        # empty row stays
        Case(([[0, 2], [2, 3]], "h", 0), "500 005 000", "222 333 000"),
        Case(([[1, 4]], "v", 0), "00 10", "40 40"),
    ],
)
def lines_by_position(g: Grid, table: list[list[int]], axis: str, bg: int) -> Grid:
    """Every row (``axis`` h) or column (v) holding exactly one non-background cell is
    painted whole with the colour that ``table`` (``[index, colour]`` rows) gives the
    cell's index along the line: a marker's place picks its line's colour. Raises on
    an index missing from the table."""
    look = {int(k): int(v) for k, v in table}
    a = g if axis == "h" else g.T
    o = a.copy()
    done = False
    for i in range(a.shape[0]):
        xs = np.nonzero(a[i] != bg)[0]
        if xs.size != 1:
            continue
        k = int(xs[0])
        if k not in look:
            raise ValueError("index not in table")
        o[i, :] = look[k]
        done = True
    if not done:
        raise ValueError("no line with one marker")
    return o if axis == "h" else o.T


def g_hole_lines(ctx: Ctx) -> Iterator[Args]:
    """Changed cells all become one colour ``c`` that the states already hold in a
    few single cells."""
    cs: set[int] = set()
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return
        cs |= set(np.unique(t[d]).tolist())
    if len(cs) != 1:
        return
    c = cs.pop()
    if all(0 < int((s == c).sum()) <= 30 for s in ctx.states) and fits(ctx, hole_lines, c):
        yield (c,)


_BAND_OUT = "4044 4044 4044 8888"
_BAND = "4444 4044 4444 8888"


@op(
    params=(K.COLOR,),
    generator=g_hole_lines,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the hole in the wide band becomes a column across it (the 8 band stops it)
        Case((0,), _BAND, _BAND_OUT),
        # the same in a tall band: a row
        Case((0,), "448 448 048 448", "448 448 008 448"),
    ],
)
def hole_lines(g: Grid, c: int) -> Grid:
    """Each cell of colour ``c`` (a hole in a band of one colour) becomes a full line
    across its band: along the band's shorter side, through the 4-connected region
    of the band's colour (holes included) that holds it, up to other colours."""
    h, w = g.shape
    holes = np.argwhere(g == c)
    if holes.size == 0 or len(holes) > 30:
        raise ValueError("needs 1 to 30 holes")
    o = g.copy()
    for y, x in holes.tolist():
        nb = [
            int(g[y + dy, x + dx])
            for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if 0 <= y + dy < h and 0 <= x + dx < w and g[y + dy, x + dx] != c
        ]
        if not nb:
            continue
        k = max(set(nb), key=nb.count)
        band = np.where((g == k) | (g == c), 1, 0)
        for ys, xs in components(band, 4, 1, 0):
            if ((ys == y) & (xs == x)).any():
                break
        vertical = int(ys.max() - ys.min()) <= int(xs.max() - xs.min())
        dy, dx = (1, 0) if vertical else (0, 1)
        for sgn in (1, -1):
            yy, xx = y, x
            while 0 <= yy < h and 0 <= xx < w and band[yy, xx]:
                o[yy, xx] = c
                yy, xx = yy + sgn * dy, xx + sgn * dx
    return o


_DOTS_OUT = "42488 24218 42481 22218"
_DOTS = "22288 24288 22281 22288"


@op(
    params=(OneOf("diag", "hv", "all"),),
    generator=Fitting(fits, lambda ctx: ((d,) for d in ("diag", "hv", "all")), first=True),
    only_if=lambda ctx: all((s != t).any() for s, t in ctx.pairs),
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the 4 dot in the 2 region and the 1 dot in the 8 region: diagonals recolour
        # 2 -> 4 and 8 -> 1 wherever they cross
        Case(("diag",), _DOTS, _DOTS_OUT),
        Case(("hv",), _DOTS, "24281 44411 44411 24281"),
    ],
)
def dot_lines_by_region(g: Grid, dirs: str) -> Grid:
    """Lines through every dot (a cell with no 8-neighbour of its colour) to the
    grid's edges, along ``dirs`` (``diag``, ``hv`` or ``all``), recolouring what they
    cross by region: a dot of colour a lying in a region of colour b teaches b -> a,
    and each crossed cell of such a colour b becomes its a. Raises when two dots
    teach one region colour different colours, or there are no dots."""
    h, w = g.shape
    p = np.pad(g, 1, constant_values=-1)
    same = np.zeros((h, w), dtype=bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy or dx:
                same |= p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w] == g
    dots = np.argwhere(~same)
    if dots.size == 0 or len(dots) > 20:
        raise ValueError("needs 1 to 20 dots")
    lut: dict[int, int] = {}
    for y, x in dots.tolist():
        nb = p[y : y + 3, x : x + 3].ravel().tolist()
        nb = [v for v in nb if v >= 0 and v != g[y, x]]
        region = max(set(nb), key=nb.count)
        if lut.setdefault(region, int(g[y, x])) != g[y, x]:
            raise ValueError("a region colour taught two colours")
    steps = DIRS[dirs]
    o = g.copy()
    for y, x in dots.tolist():
        for dy, dx in steps:
            yy, xx = y + dy, x + dx
            while 0 <= yy < h and 0 <= xx < w:
                v = int(g[yy, xx])
                if v in lut:
                    o[yy, xx] = lut[v]
                yy, xx = yy + dy, xx + dx
    return o


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


def g_line_staircase(ctx: Ctx) -> Iterator[Args]:
    """Every input holds a few straight lines and gains cells (nothing else changes)
    in the lines' colour and one other colour: grow staircases in that colour."""
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
    for b in color_specs(ctx.train, bs)[:2]:
        yield (b, ctx.bg)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_line_staircase,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # a 7 line hanging from the top: copies 1 and 2 columns away, one and two cells
        # shorter, in 8 then 7
        Case((8, 0), "00700 00700 00700 00000", "78787 08780 00700 00000"),
        # a row touching the right edge grows from that end; copies leaving the grid are cut
        Case((5, 0), "0000 0222 0000", "0055 0222 0055"),
    ],
)
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


_SEG_IN = "00000 04400 00060 00060 20000"
_SEG_H = "00060 44444 00060 00060 20060"
_SEG_V = "00060 44464 00060 00060 20060"


@op(
    params=(OneOf("h", "v"), K.COLOR),
    generator=Fitting(fits, lambda ctx: ((top, ctx.bg) for top in ("h", "v")), first=True),
    when=W.CHANGED,
    cases=[
        # segments become full lines (rows painted last); the single cell stays
        Case(("h", 0), _SEG_IN, _SEG_H),
        Case(("v", 0), _SEG_IN, _SEG_V),
    ],
)
def extend_segments(g: Grid, top: str, bg: int) -> Grid:
    """Every straight segment (a 4-connected object of one colour, one cell thick, two
    cells or more) becomes a full row or column along its own axis, over everything;
    where rows and columns cross, those of ``top`` ("h" or "v") are painted last."""
    rows: list[tuple[int, int]] = []
    cols: list[tuple[int, int]] = []
    for ys, xs in components(g, 4, 1, bg):
        if ys.size < 2:
            continue
        if (ys == ys[0]).all():
            rows.append((int(ys[0]), int(g[ys[0], xs[0]])))
        elif (xs == xs[0]).all():
            cols.append((int(xs[0]), int(g[ys[0], xs[0]])))
    if not rows and not cols:
        raise ValueError("no segment")
    o = g.copy()
    for axis in ("v", "h") if top == "h" else ("h", "v"):
        for i, c in rows if axis == "h" else cols:
            if axis == "h":
                o[i, :] = c
            else:
                o[:, i] = c
    return o


_TOGGLE_IN = "0302 1300 0002"
_TOGGLE_OUT = "0302 1002 0300"


@op(
    params=(K.COLOR,),
    generator=Fitting(fits_bg, lambda ctx: ((bg,) for bg in bg_readings(ctx))),
    only_if=lambda ctx: all(
        (s[0] == t[0]).all() or (s[:, 0] == t[:, 0]).all() for s, t in ctx.pairs
    ),
    when=W.CHANGED,
    cases=[
        # markers 3 and 2 on the top row: in their columns 3s become 0 and 0s become 3
        Case((0,), _TOGGLE_IN, _TOGGLE_OUT),
        # an empty top row: the marker is on the first column and claims its row
        Case((0,), "000 404 010", "000 440 010"),
    ],
)
def toggle_lines(g: Grid, bg: int) -> Grid:
    """Marker cells on the first row (else the first column) each claim their column
    (row): below (beside) the marker, cells of its colour become background and every
    other cell takes its colour."""
    turned = not (g[0] != bg).any()
    a = g.T if turned else g
    xs = np.nonzero(a[0] != bg)[0]
    if not xs.size:
        raise ValueError("no marker")
    o = a.copy()
    for x in xs.tolist():
        m = a[0, x]
        o[1:, x] = np.where(a[1:, x] == m, bg, m)
    return o.T if turned else o
