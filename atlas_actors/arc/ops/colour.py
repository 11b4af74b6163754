"""Ops that recolour cells by colour alone: colour maps, keeping or erasing a colour, swaps,
majority and minority colours, recolouring by stride, by order, by a legend or by the
nearest other colour."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import HV4, Grid, components, role_color
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    bg_readings,
    color_change,
    color_specs,
    fits,
    fits_bg,
    pair_cmaps,
    resolved_pairs,
)
from atlas_actors.arc.registry import BG, Case, K, OneOf, W, op


def g_keep_color(ctx: Ctx) -> Iterator[Args]:
    for c in ctx.state_colors[:6]:
        yield (c, ctx.bg)
    if len(ctx.state_colors) >= 2:
        yield (10, ctx.bg)
        yield (12, ctx.bg)
    if ctx.same_shape and len(ctx.new_colors) == 1 and ctx.bg_varies:
        # keep one role colour, paint the rest with the one new colour
        for r in (13, 10):
            yield (r, ctx.new_colors[0])


_A = "120 030"


@op(
    params=(K.COLOR_MAP,),
    no_generator="the search's colour-map finisher infers its table (TaskSolver)",
    cases=[Case(([[1, 5], [0, 7]],), _A, "527 737")],
)
def recolor(g: Grid, cmap: list[list[int]]) -> Grid:
    """Map colours by ``cmap`` (``[from, to]`` pairs); other colours stay."""
    lut = np.arange(10)
    for a, b in cmap:
        lut[a] = b
    return lut[g]


def g_replace_color(ctx: Ctx) -> Iterator[Args]:
    """One colour replaced by another in every pair, colours possibly varying per pair
    (then given as roles)."""
    src, dst = [], []
    for s, t in ctx.pairs:
        diff = s != t
        if not diff.any():
            return
        was, now = np.unique(s[diff]), np.unique(t[diff])
        if was.size != 1 or now.size != 1 or (s == was[0]).sum() != diff.sum():
            return
        src.append(int(was[0]))
        dst.append(int(now[0]))
    if len(set(src)) == 1 and len(set(dst)) == 1:
        return  # a plain colour map, found by the recolor finisher
    for a in color_specs(ctx.train, src)[:2]:
        for b in color_specs(ctx.train, dst)[:2]:
            yield (a, b)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_replace_color,
    when=W.SAME_SHAPE,
    cases=[Case((2, 9), _A, "190 030")],
)
def replace_color(g: Grid, a: int, b: int) -> Grid:
    """Paint every cell of colour ``a`` with ``b``."""
    return np.where(g == a, b, g)


@op(params=(K.COLOR, K.COLOR), generator=g_keep_color, cases=[Case((3, 0), _A, "000 030")])
def keep_color(g: Grid, c: int, bg: int) -> Grid:
    """Keep the cells of colour ``c``; every other cell becomes ``bg``."""
    return np.where(g == c, g, bg)


@op(params=(K.COLOR, K.COLOR), generator=g_keep_color, cases=[Case((3, 0), _A, "120 000")])
def erase_color(g: Grid, c: int, bg: int) -> Grid:
    """Paint the cells of colour ``c`` with ``bg``."""
    return np.where(g == c, bg, g)


def g_swap_colors(ctx: Ctx) -> Iterator[Args]:
    """Per-pair colour maps where colour ``a`` takes the place of another colour ``b`` of
    the same grid, the colours varying per pair (given as roles): swap them, and the
    final colour map does the rest."""
    maps = pair_cmaps(ctx)
    if maps is None:
        return
    found = 0
    for a in [*sorted({a for m in maps for a in m}), 10, 11, 12, 13]:
        try:
            src = [role_color(s, a) for s in ctx.train]
        except ValueError:
            continue
        dst = [m.get(x, -1) for m, x in zip(maps, src, strict=True)]
        if any(b < 0 or b == x or b not in m for b, x, m in zip(dst, src, maps, strict=True)):
            continue
        if len(set(dst)) == 1 and len(set(src)) == 1:
            continue  # a plain colour map
        for b in color_specs(ctx.train, dst)[:2]:
            yield (a, b)
            found += 1
            if found >= 3:
                return


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_swap_colors,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case((1, 2), _A, "210 030")],
)
def swap_colors(g: Grid, a: int, b: int) -> Grid:
    """Exchange colours ``a`` and ``b``."""
    return np.where(g == a, b, np.where(g == b, a, g))


@op(params=(K.COLOR,), generator=BG, cases=[Case((0,), "112", "111")])
def majority_recolor(g: Grid, bg: int) -> Grid:
    """Paint every non-background cell with the most common non-background colour."""
    fg = g[g != bg]
    if fg.size == 0:
        return g.copy()
    c = int(np.bincount(fg, minlength=10).argmax())
    return np.where(g != bg, c, bg)


@op(params=(K.COLOR,), generator=BG, cases=[Case((0,), "112", "222")])
def minority_recolor(g: Grid, bg: int) -> Grid:
    """Paint every non-background cell with the least common non-background colour."""
    counts = np.bincount(g[g != bg], minlength=10)
    present = np.nonzero(counts)[0]
    if present.size == 0:
        return g.copy()
    c = int(present[np.argmin(counts[present])])
    return np.where(g != bg, c, bg)


@op(
    params=(OneOf("rows", "cols", "auto"),),
    generator=lambda ctx: ((a,) for a in ("rows", "cols", "auto")),
    when=W.SAME_SHAPE,
    cases=[Case(("rows",), "112 344", "111 444"), Case(("auto",), "123 123 523", "123 123 123")],
)
def line_majority(g: Grid, axis: str) -> Grid:
    """Every row (``rows``) or column (``cols``) painted with its most common colour;
    ``auto``: rows or columns, whichever of the two changes fewer cells."""
    outs = []
    for ax in ("rows", "cols") if axis == "auto" else (axis,):
        a = g if ax == "rows" else g.T
        o = np.empty_like(a)
        for i in range(a.shape[0]):
            o[i] = int(np.bincount(a[i], minlength=10).argmax())
        outs.append(o if ax == "rows" else o.T)
    return min(outs, key=lambda o: int((o != g).sum()))


def g_recolor_nearest(ctx: Ctx) -> Iterator[Args]:
    """Only cells of one colour change (to other colours already in the grid)."""
    src: set[int] = set()
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            continue
        src |= set(np.unique(s[d]).tolist())
        if len(src) > 1 or ctx.bg in src:
            return
        if not set(np.unique(t[d]).tolist()) <= set(np.unique(s).tolist()):
            return
    if len(src) != 1:
        return
    c = src.pop()
    for mode in ("row", "col", "orow", "ocol", "any"):
        yield (c, mode, ctx.bg)


@op(
    params=(K.COLOR, OneOf("row", "col", "orow", "ocol", "any"), K.COLOR),
    generator=g_recolor_nearest,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # each 5 takes the colour of the nearest other colour in its row
        Case((5, "row", 0), "10553 25000", "10133 22000"),
        # the 5 block takes the colour of the cell above one of its columns
        Case((5, "ocol", 0), "0407 0000 5500", "0407 0000 4400"),
        Case((5, "any", 0), "6000 0005 0008", "6000 0008 0008"),
    ],
)
def recolor_nearest(g: Grid, c: int, mode: str, bg: int) -> Grid:
    """Recolour cells of colour ``c`` with the colour of the nearest cell of another
    (non-background) colour: ``row``/``col`` per cell, looking along its row/column;
    ``orow``/``ocol`` per object (4-connected), looking in the rows/columns it spans;
    ``any`` per object, anywhere (Manhattan distance). Ties: the first in reading order.
    Cells with nothing to copy keep their colour."""
    other = (g != bg) & (g != c)
    if not other.any() or not (g == c).any():
        raise ValueError("nothing to recolour or to copy")
    oy, ox = np.nonzero(other)
    ocol = g[oy, ox]
    o = g.copy()
    if mode in ("row", "col"):
        ys, xs = np.nonzero(g == c)
        for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
            sel = oy == y if mode == "row" else ox == x
            if not sel.any():
                continue
            d = np.abs(ox[sel] - x) if mode == "row" else np.abs(oy[sel] - y)
            o[y, x] = ocol[sel][int(np.argmin(d))]
        return o
    objs = components(np.where(g == c, c, bg), 4, 1, bg)
    if len(objs) > 60:
        raise ValueError("too many objects")
    for ys, xs in objs:
        if mode == "orow":
            sel = np.isin(oy, ys)
        elif mode == "ocol":
            sel = np.isin(ox, xs)
        else:
            sel = np.ones(oy.shape, dtype=bool)
        if not sel.any():
            continue
        cy, cx = oy[sel], ox[sel]
        d = np.abs(cy[:, None] - ys[None, :]) + np.abs(cx[:, None] - xs[None, :])
        o[ys, xs] = ocol[sel][int(np.argmin(d.min(axis=1)))]
    return o


def g_stride_recolor(ctx: Ctx) -> Iterator[Args]:
    ch = color_change(ctx)
    if ch is None or len(set(ch[0])) != 1 or len(set(ch[1])) != 1:
        return
    a, b = ch[0][0], ch[1][0]
    for axis in ("cols", "rows"):
        for k in range(2, 5):
            for anchor in (0, 1):
                if fits(ctx, stride_recolor, a, b, axis, k, anchor):
                    yield (a, b, axis, k, anchor)


@op(
    params=(K.COLOR, K.COLOR, OneOf("rows", "cols"), K.COUNT, K.FLAG),
    generator=g_stride_recolor,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        Case((4, 6, "cols", 3, 0), "44444 04040", "64464 04060"),
        Case((5, 3, "cols", 2, 1), "5555", "5353"),
    ],
)
def stride_recolor(g: Grid, a: int, b: int, axis: str, k: int, anchor: int) -> Grid:
    """Recolour cells of colour ``a`` to ``b`` in every ``k``-th column (``axis`` cols)
    or row (rows), counted from the first (``anchor`` 0) or the last (1) one."""
    h, w = g.shape
    n = w if axis == "cols" else h
    idx = np.arange(n) if not anchor else np.arange(n)[::-1]
    pick = (idx % k) == 0
    m = pick[None, :] if axis == "cols" else pick[:, None]
    return np.where(m & (g == a), b, g)


def g_recolor_except(ctx: Ctx) -> Iterator[Args]:
    """All colours but one (kept) become one colour."""
    maps = pair_cmaps(ctx)
    if maps is None:
        return
    keeps, cs = [], []
    for m in maps:
        kept = [a for a, b in m.items() if a == b]
        moved = {b for a, b in m.items() if a != b}
        if len(moved) != 1:
            return
        c = moved.pop()
        kept = [a for a in kept if a != c]
        if len(kept) != 1:
            return
        keeps.append(kept[0])
        cs.append(c)
    for k in color_specs(ctx.train, keeps)[:2]:
        for c in color_specs(ctx.train, cs)[:2]:
            yield (k, c)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_recolor_except,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case((2, 5), "218 220", "255 225")],
)
def recolor_except(g: Grid, keep: int, c: int) -> Grid:
    """Every cell not of colour ``keep`` becomes ``c``."""
    return np.where(g == keep, g, c)


def g_swap_other(ctx: Ctx) -> Iterator[Args]:
    """Colour ``a`` takes the place of the grid's one other colour, which varies."""
    maps = pair_cmaps(ctx)
    if maps is None:
        return
    every = sorted({int(v) for s in ctx.train for v in np.unique(s)})
    for bg in (-1, ctx.bg):
        for a in every[:8]:
            dst = []
            for s, m in zip(ctx.train, maps, strict=True):
                others = [int(v) for v in np.unique(s) if v != a and v != bg]
                if len(others) != 1 or m.get(a) != others[0]:
                    break
                dst.append(others[0])
            else:
                if len(set(dst)) > 1:
                    yield (a, bg)
                    return


@op(
    params=(K.COLOR, K.COLOR_OR_NONE),
    generator=g_swap_other,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case((5, -1), "45 55", "54 44")],
)
def swap_other(g: Grid, a: int, bg: int) -> Grid:
    """Swap colour ``a`` with the one other colour of the grid (not counting ``bg``;
    -1: count every colour)."""
    others = [int(v) for v in np.unique(g) if v != a and v != bg]
    if len(others) != 1 or not (g == a).any():
        raise ValueError("needs exactly one other colour")
    b = others[0]
    return np.where(g == a, b, np.where(g == b, a, g))


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(
        int(((s != ctx.bg) & (t == ctx.bg)).sum()) == 1
        and not ((t != ctx.bg) & (s == ctx.bg)).any()
        for s, t in ctx.pairs
    ),
    when=W.SAME_SHAPE | W.SHALLOW,
    # the lone 4 cell is the palette: the 2 shape turns 4 and the 4 cell goes
    cases=[Case((0,), "2200 0200 0004", "4400 0400 0000")],
)
def recolor_by_dot(g: Grid, bg: int) -> Grid:
    """A palette cell: the one colour found only as a single isolated cell (no
    non-background 8-neighbour) paints every other non-background cell, and the
    single cell itself is erased."""
    objs = components(g, 8, 0, bg)
    dots = [ob for ob in objs if ob[0].size == 1]
    cols = {int(g[ys[0], xs[0]]) for ys, xs in dots}
    if len(dots) != 1 or len(objs) < 2:
        raise ValueError("not one palette cell")
    o = np.where(g != bg, cols.pop(), g)
    o[dots[0]] = bg
    return o


def g_merge_touching(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour become background and cells of another one new colour."""
    found: set[tuple[int, int, int]] = set()
    for s, t in ctx.pairs:
        d = s != t
        gone = d & (t == ctx.bg)
        new = d & (t != ctx.bg)
        bs, as_, cs = np.unique(s[gone]), np.unique(s[new]), np.unique(t[new])
        if bs.size != 1 or as_.size != 1 or cs.size != 1:
            return
        found.add((int(as_[0]), int(bs[0]), int(cs[0])))
    if len(found) == 1:
        a, b, c = found.pop()
        if fits(ctx, merge_touching, a, b, c, ctx.bg):
            yield (a, b, c, ctx.bg)


@op(
    params=(K.COLOR, K.COLOR, K.COLOR_OR_NONE, K.COLOR),
    generator=g_merge_touching,
    when=W.SHALLOW | W.SAME_SHAPE,
    # the 3 touching a 2 turns 8 and the 2 goes; the lone 3 stays
    cases=[Case((3, 2, 8, 0), "320 000 302", "800 000 302")],
)
def merge_touching(g: Grid, a: int, b: int, c: int, bg: int) -> Grid:
    """Where a cell of colour ``a`` touches (4-neighbour) a cell of colour ``b``, the
    ``a`` cell becomes ``c`` and the ``b`` cell becomes background."""
    h, w = g.shape
    ma, mb = g == a, g == b
    o = g.copy()
    hit = False
    for y, x in zip(*np.nonzero(ma), strict=True):
        for dy, dx in HV4:
            v, u = int(y) + dy, int(x) + dx
            if 0 <= v < h and 0 <= u < w and mb[v, u]:
                o[y, x] = c
                o[v, u] = bg
                hit = True
    if not hit:
        raise ValueError("no touching pair")
    return o


def _legend(a: Grid, bg: int) -> tuple[int, int, int] | None:
    """The longest run (three or more) of consecutive rows that each hold two
    side-by-side cells of different non-background colours in the same two columns,
    with background or the grid's edge beside the pair: ``(column, first row, end)``."""
    h, w = a.shape
    best: tuple[int, int, int] | None = None
    pad = np.pad(a, ((0, 0), (1, 1)), constant_values=bg)
    for x in range(w - 1):
        p, q = a[:, x], a[:, x + 1]
        ok = (p != bg) & (q != bg) & (p != q) & (pad[:, x] == bg) & (pad[:, x + 3] == bg)
        y = 0
        while y < h:
            if not ok[y]:
                y += 1
                continue
            start = y
            while y < h and ok[y]:
                y += 1
            if y - start >= 3 and (best is None or y - start > best[2] - best[1]):
                best = (x, start, y)
    return best


def g_legend_recolor(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only non-background cells recoloured (the task's background or
    each grid's own)."""
    for bg in bg_readings(ctx):
        if any(((s == b) != (t == b)).any() for (s, t), b in resolved_pairs(ctx, bg)):
            continue
        for chain in (1, 0):
            if fits_bg(ctx, legend_recolor, chain, bg):
                yield (chain, bg)
                break


_KEY_IN = "120110 340302 250000 000213"
_KEY_CHAIN = "120550 340405 250000 000554"
_KEY_ONCE = "120220 340405 250000 000524"


@op(
    params=(K.FLAG, K.COLOR),
    generator=g_legend_recolor,
    when=W.CHANGED,
    cases=[
        # the key 1->2, 3->4, 2->5 (left two columns) recolours the rest: chained, 1 ends
        # as 5; once, 1 becomes 2
        Case((1, 0), _KEY_IN, _KEY_CHAIN),
        Case((0, 0), _KEY_IN, _KEY_ONCE),
    ],
)
def legend_recolor(g: Grid, chain: int, bg: int) -> Grid:
    """A colour key of side-by-side pairs (a, b) stacked in rows (or columns): every
    cell outside the key is recoloured a -> b; with ``chain`` the pairs apply one after
    another down the key (a -> b then b -> c makes a c), else each cell's own pair
    once (a later pair for the same colour wins). The key stays as it is."""
    for t in (False, True):
        a = g.T if t else g
        key = _legend(a, bg)
        if key is not None:
            break
    else:
        raise ValueError("no legend")
    x, start, end = key
    pairs = [(int(a[y, x]), int(a[y, x + 1])) for y in range(start, end)]
    lut = list(range(10))
    for c in range(10):
        if chain:
            for p, q in pairs:
                if lut[c] == p:
                    lut[c] = q
        else:
            lut[c] = dict(pairs).get(c, c)
    o = np.asarray(lut, dtype=g.dtype)[a]
    o[start:end, x : x + 2] = a[start:end, x : x + 2]
    return o.T if t else o


def _cell_order(ys: Grid, xs: Grid, order: str) -> Grid:
    """Indices of cells ``(ys, xs)`` in reading order ("rows"), column by column
    ("cols"), or ("auto") by rows when no row holds two of them, else by columns when no
    column does."""
    if order == "auto":
        if np.unique(ys).size == ys.size:
            order = "rows"
        elif np.unique(xs).size == xs.size:
            order = "cols"
        else:
            raise ValueError("no row or column order")
    idx: Grid = np.lexsort((xs, ys)) if order == "rows" else np.lexsort((ys, xs))
    return idx


def _period(seq: list[int]) -> list[int] | None:
    """The shortest list (2 to 4 long) whose repetition gives ``seq``."""
    for n in range(2, min(4, len(seq) - 1) + 1):
        if all(seq[i] == seq[i % n] for i in range(len(seq))):
            return seq[:n]
    return None


def g_cycle_recolor(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, background kept, colours changed: the colour cycle read off the
    first target in each order."""
    s0, t0 = ctx.pairs[0]
    ys, xs = np.nonzero(s0 != ctx.bg)
    for order in ("rows", "cols", "auto"):
        try:
            idx = _cell_order(ys, xs, order)
        except ValueError:
            continue
        cols = _period(t0[ys[idx], xs[idx]].tolist())
        if cols is not None and fits(ctx, cycle_recolor, cols, order, ctx.bg):
            yield (cols, order, ctx.bg)
            return


_CYCLE_IN = "010 100 001"
_CYCLE_ROWS = "020 800 002"


@op(
    params=(K.COLORS, OneOf("rows", "cols", "auto"), K.COLOR),
    generator=g_cycle_recolor,
    only_if=lambda ctx: all(((s == ctx.bg) == (t == ctx.bg)).all() for s, t in ctx.pairs),
    when=W.CHANGED,
    cases=[
        # one cell per row: reading order; by columns the first two swap
        Case(([2, 8], "auto", 0), _CYCLE_IN, _CYCLE_ROWS),
        Case(([2, 8], "cols", 0), _CYCLE_IN, "080 200 002"),
    ],
)
def cycle_recolor(g: Grid, cols: list[int], order: str, bg: int) -> Grid:
    """The non-background cells, taken in ``order`` (see ``_cell_order``), are
    recoloured with ``cols`` in turn, cycling."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("no cells")
    idx = _cell_order(ys, xs, order)
    o = g.copy()
    o[ys[idx], xs[idx]] = np.resize(np.asarray(cols, dtype=g.dtype), idx.size)
    return o


def g_keep_top_colors(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, every changed cell becoming one colour (the same in every pair)."""
    new = {int(v) for s, t in ctx.pairs for v in np.unique(t[s != t])}
    if len(new) != 1:
        return
    (c,) = new
    for k in (1, 2, 3):
        if fits(ctx, keep_top_colors, k, c):
            yield (k, c)
            return


_TOP_IN = "1112 1123 4121"
_TOP_OUT = "1112 1127 7121"


@op(
    params=(K.COUNT, K.COLOR),
    generator=g_keep_top_colors,
    when=W.CHANGED,
    # 1 and 2 are the commonest; 3 and 4 become 7
    cases=[Case((2, 7), _TOP_IN, _TOP_OUT)],
)
def keep_top_colors(g: Grid, k: int, c: int) -> Grid:
    """Keep the ``k`` commonest colours (every colour counted, ties to the smaller)
    and paint every other cell ``c``."""
    counts = np.bincount(g.ravel(), minlength=10)
    present = [i for i in range(10) if counts[i]]
    if len(present) <= k:
        raise ValueError("nothing to recolour")
    keep = sorted(present, key=lambda i: (-counts[i], i))[:k]
    return np.where(np.isin(g, keep), g, c)
