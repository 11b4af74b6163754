"""Ops that edit the cells inside each object: hollowing, halves, every second cell,
trimming, reversing paths, denoising, recolouring by topology, erasing contained objects."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import HEADINGS, HV4D, Grid, components, role_color
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    bg_readings,
    color_change,
    fits,
    fits_bg,
    one_new_color,
    same_counts,
)
from atlas_actors.arc.ops.fill import interior
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, W, op


@op(
    params=(OneOf("iso4", "iso8", "sq2"), K.COLOR),
    generator=lambda ctx: ((m, ctx.bg) for m in ("iso4", "iso8", "sq2")),
    only_if=lambda ctx: all(not ((t != s) & (t != ctx.bg)).any() for s, t in ctx.pairs),
    when=W.CHANGED,
    cases=[
        Case(("iso8", 0), "1000 0020 0002", "0000 0020 0002"),
        Case(("iso4", 0), "1000 0020 0002", "0000 0000 0000"),
        Case(("sq2", 0), "3303 3330 0000", "3300 3300 0000"),
    ],
)
def denoise(g: Grid, mode: str, bg: int) -> Grid:
    """Erase noise: ``iso4``/``iso8`` cells with no non-background 4-/8-neighbour;
    ``sq2`` cells in no 2x2 block of one colour."""
    h, w = g.shape
    p = np.pad(g, 1, constant_values=-1)
    if mode == "sq2":
        keep = np.zeros((h + 2, w + 2), dtype=bool)
        same = (p[:-1, :-1] == p[1:, :-1]) & (p[:-1, :-1] == p[:-1, 1:])
        same &= (p[:-1, :-1] == p[1:, 1:]) & (p[:-1, :-1] != bg) & (p[:-1, :-1] >= 0)
        keep[:-1, :-1] |= same
        keep[1:, :-1] |= same
        keep[:-1, 1:] |= same
        keep[1:, 1:] |= same
        return np.where(keep[1:-1, 1:-1], g, bg)
    nb = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    if mode == "iso8":
        nb += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    has = np.zeros(g.shape, dtype=bool)
    for dy, dx in nb:
        q = p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
        has |= (q != bg) & (q >= 0)
    return np.where(has, g, bg)


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(
        not (((t != s) & (t != ctx.bg)).any() or (s == t).all()) for s, t in ctx.pairs
    ),
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[Case((0,), "3330 3330 3330", "3330 3030 3330")],
)
def hollow(g: Grid, bg: int) -> Grid:
    """Erase the cells of objects whose 8 neighbours are all non-background (keep the
    outlines)."""
    return interior(g, bg, bg)


def g_half_recolor(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour recoloured to one colour in every pair: try each side."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1 or ctx.bg in ch[0]:
        return
    for side in HV4D:
        if fits(ctx, half_recolor, side, ch[1][0], ctx.bg):
            yield (side, ch[1][0], ctx.bg)


@op(
    params=(OneOf(*HV4D), K.COLOR, K.COLOR),
    generator=g_half_recolor,
    when=W.SHALLOW | W.SAME_SHAPE,
    # the lower half of each bar turns 8; the odd middle cell stays
    cases=[Case(("down", 8, 0), "200 202 202 202", "200 202 802 808")],
)
def half_recolor(g: Grid, side: str, c: int, bg: int) -> Grid:
    """Recolour with ``c`` the half of each object (one colour, 4-connected) on one
    ``side`` of its box: the last (or first) floor(h/2) rows, or floor(w/2) columns;
    an odd middle line keeps its colour."""
    objs = components(g, 4, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("no objects or too many")
    o = g.copy()
    for ys, xs in objs:
        v = ys if side in ("down", "up") else xs
        lo, hi = int(v.min()), int(v.max())
        k = (hi - lo + 1) // 2
        sel = v > hi - k if side in ("down", "right") else v < lo + k
        o[ys[sel], xs[sel]] = c
    return o


def g_alternate_cells(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour recoloured to one colour in every pair."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1 or ctx.bg in ch[0]:
        return
    pairs = ctx.pairs
    try:
        if len(set(ch[0])) == 1:
            a = ch[0][0]
        elif all(role_color(s, 10) == c for (s, _t), c in zip(pairs, ch[0], strict=True)):
            a = 10  # the commonest non-background colour, per grid
        else:
            return
        ok = all(
            np.array_equal(alternate_cells(s, role_color(s, a), ch[1][0], ctx.bg), t)
            for s, t in pairs
        )
    except ValueError:
        return
    if ok:
        yield (a, ch[1][0], ctx.bg)


@op(
    params=(K.COLOR, K.COLOR, K.COLOR),
    generator=g_alternate_cells,
    when=W.SHALLOW | W.SAME_SHAPE,
    # every second cell of the diagonal line turns 4
    cases=[Case((10, 4, 0), "2000 0200 0020 0002", "2000 0400 0020 0004")],
)
def alternate_cells(g: Grid, a: int, c: int, bg: int) -> Grid:
    """Recolour every second cell (the 2nd, 4th, ...) of each object of colour ``a``
    (8-connected), counted from its first cell in reading order, with ``c``."""
    objs = components(np.where(g == a, a, bg), 8, 1, bg)
    if not objs or len(objs) > 40 or a == bg:
        raise ValueError("no objects or too many")
    o = g.copy()
    for ys, xs in objs:
        order = np.lexsort((xs, ys))
        o[ys[order][1::2], xs[order][1::2]] = c
    return o


def g_checker_interior(ctx: Ctx) -> Iterator[Args]:
    """Non-background cells recoloured to one colour (or erased) in every pair."""
    c = one_new_color(ctx)
    if c is None or any((s[s != t] == ctx.bg).any() for s, t in ctx.pairs):
        return
    for parity in (0, 1):
        if fits(ctx, checker_interior, parity, c, ctx.bg):
            yield (parity, c, ctx.bg)
            return


@op(
    params=(K.FLAG, K.COLOR, K.COLOR),
    generator=g_checker_interior,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the interior of the 3 x 6 bar (the middle row but its ends) gets holes at even
        # offsets from the bar's corner
        Case((0, 0, 0), "444444 444444 444444", "444444 404044 444444"),
        Case((1, 2, 0), "444444 444444 444444", "444444 442424 444444"),
    ],
)
def checker_interior(g: Grid, parity: int, c: int, bg: int) -> Grid:
    """Paint ``c`` on every second interior cell (all 8 neighbours in the object) of
    each object (4-connected, one colour): those whose offset (rows + columns) from
    the object's top-left corner is even (``parity`` 0) or odd (1)."""
    o = g.copy()
    objs = components(g, 4, 1, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    h, w = g.shape
    done = 0
    for ys, xs in objs:
        m = np.zeros((h + 2, w + 2), dtype=bool)
        m[ys + 1, xs + 1] = True
        inner = m[1:-1, 1:-1].copy()
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                inner &= m[1 + dy : h + 1 + dy, 1 + dx : w + 1 + dx]
        iy, ix = np.nonzero(inner)
        odd = ((iy - ys.min()) + (ix - xs.min())) % 2 == parity
        o[iy[odd], ix[odd]] = c
        done += int(odd.sum())
    if not done:
        raise ValueError("no interior")
    return o


def topology_key(ys: Grid, xs: Grid) -> int:
    """A line drawing's topology: 10 x its ends (cells with one 4-neighbour in the
    object) + its bends (cells with two 4-neighbours at a right angle), each capped
    at 9."""
    cells = set(zip(ys.tolist(), xs.tolist(), strict=True))
    ends = bends = 0
    for y, x in cells:
        up, dn = (y - 1, x) in cells, (y + 1, x) in cells
        lf, rt = (y, x - 1) in cells, (y, x + 1) in cells
        n = up + dn + lf + rt
        if n == 1:
            ends += 1
        elif n == 2 and (up or dn) and (lf or rt):
            bends += 1
    return 10 * min(ends, 9) + min(bends, 9)


def g_recolor_topology(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only colours change, each object (4-connected, one colour) takes
    one colour, and that colour is a function of its topology key; the table must
    cover the test objects' keys."""
    bg = ctx.bg
    table: dict[int, int] = {}
    changed = False
    for s, t in ctx.pairs:
        if not np.array_equal(s == bg, t == bg):
            return
        objs = components(s, 4, 1, bg)
        if len(objs) > 40:
            return
        for ys, xs in objs:
            cs = np.unique(t[ys, xs])
            if cs.size != 1:
                return
            k, v = topology_key(ys, xs), int(cs[0])
            if table.setdefault(k, v) != v:
                return
            changed |= v != int(s[ys[0], xs[0]])
    if not changed or len(set(table.values())) < 2:
        return
    for s in ctx.states[ctx.n :]:
        objs = components(s, 4, 1, bg)
        if len(objs) > 40 or any(topology_key(ys, xs) not in table for ys, xs in objs):
            return
    yield (sorted([k, v] for k, v in table.items()), bg)


@op(
    params=(K.TABLE, K.COLOR),
    generator=g_recolor_topology,
    when=W.SAME_SHAPE | W.SHALLOW,
    # the L (2 ends, 1 bend) becomes 1, the straight bar (2 ends, 0 bends) 2
    cases=[Case(([[20, 2], [21, 1]], 0), "303 303 330", "102 102 110")],
)
def recolor_topology(g: Grid, table: list[list[int]], bg: int) -> Grid:
    """Recolour each object (4-connected, one colour) by ``table`` entries
    ``[topology_key, colour]`` (how many ends and bends the line drawing has);
    objects whose key is not in the table keep their colour."""
    lut = {int(k): int(v) for k, v in table}
    o = g.copy()
    objs = components(g, 4, 1, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    for ys, xs in objs:
        v = lut.get(topology_key(ys, xs))
        if v is not None:
            o[ys, xs] = v
    return o


def g_erase_contained(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only cells erased (to the background, or to colour 0 where the
    background the task reads is another colour)."""
    for bg in dict.fromkeys((ctx.bg, 0)):
        if all(((t[s != t]) == bg).all() for s, t in ctx.pairs) and fits(ctx, erase_contained, bg):
            yield (bg,)


@op(
    params=(K.COLOR,),
    generator=g_erase_contained,
    when=W.CHANGED,
    # the 2 inside the 1 frame's box goes; the 3 outside stays
    cases=[Case((0,), "11110 10210 11113 00000", "11110 10010 11113 00000")],
)
def erase_contained(g: Grid, bg: int) -> Grid:
    """Erase every object (8-connected, one colour) lying wholly inside the bounding box
    of an object of another colour (things inside a container)."""
    objs = components(g, 8, 1, bg)
    if len(objs) > 60:
        raise ValueError("too many objects")
    boxes = [
        (int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max()), int(g[ys[0], xs[0]]))
        for ys, xs in objs
    ]
    o = g.copy()
    hit = False
    for (ys, xs), (y0, y1, x0, x1, c) in zip(objs, boxes, strict=True):
        if any(
            cc != c and yy0 <= y0 and y1 <= yy1 and xx0 <= x0 and x1 <= xx1
            for yy0, yy1, xx0, xx1, cc in boxes
        ):
            o[ys, xs] = bg
            hit = True
    if not hit:
        raise ValueError("nothing contained")
    return o


@op(
    params=(K.COLOR, K.COLOR),
    generator=Fitting(fits, lambda ctx: ((c, ctx.bg) for c in ctx.state_colors)),
    only_if=lambda ctx: all((s[s != t] != ctx.bg).all() for s, t in ctx.pairs),
    when=W.CHANGED,
    # the 2 repaints the 5 pair it touches; the 3 touches nothing; both dots go
    cases=[Case((5, 0), "5500 0205 0005 3000", "2200 0005 0005 0000")],
)
def dot_paint_touching(g: Grid, c: int, bg: int) -> Grid:
    """Every single cell (an 8-connected one-colour object of one cell) not of colour
    ``c`` repaints in its own colour each object of colour ``c`` (4-connected) it
    touches on a side, and is erased."""
    h, w = g.shape
    dots = [
        (int(ys[0]), int(xs[0]))
        for ys, xs in components(g, 8, 1, bg)
        if ys.size == 1 and g[ys[0], xs[0]] != c
    ]
    if not dots or len(dots) > 40:
        raise ValueError("no dots or too many")
    objs = components(np.where(g == c, 1, 0), 4, 1, 0)
    label = np.full((h, w), -1)
    for i, (ys, xs) in enumerate(objs):
        label[ys, xs] = i
    o = g.copy()
    for y, x in dots:
        o[y, x] = bg
    for y, x in dots:
        for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            ny, nx = y + dy, x + dx
            if 0 <= ny < h and 0 <= nx < w and label[ny, nx] >= 0:
                o[objs[int(label[ny, nx])]] = g[y, x]
    return o


def g_trim_objects(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only cells erased."""
    for side in HEADINGS:
        for k in (1, 2, 3):
            if fits(ctx, trim_objects, side, k, ctx.bg):
                yield (side, k, ctx.bg)
                return


_TRIM_IN = "0333 0333 5500"
_TRIM_LEFT = "0033 0033 0500"


@op(
    params=(OneOf(*HEADINGS), K.COUNT, K.COLOR),
    generator=g_trim_objects,
    only_if=lambda ctx: all((t[s != t] == ctx.bg).all() for s, t in ctx.pairs),
    when=W.CHANGED,
    cases=[
        # each object loses its leftmost column
        Case(("left", 1, 0), _TRIM_IN, _TRIM_LEFT),
        Case(("down", 1, 0), _TRIM_IN, "0333 0000 0000"),
    ],
)
def trim_objects(g: Grid, side: str, k: int, bg: int) -> Grid:
    """Erase the first ``k`` columns (``side`` left or right) or rows (up or down) of
    every object (4-connected, one colour), counted from that side of its box."""
    objs = components(g, 4, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("needs 1 to 40 objects")
    o = g.copy()
    for ys, xs in objs:
        cut = {
            "left": xs < xs.min() + k,
            "right": xs > xs.max() - k,
            "up": ys < ys.min() + k,
            "down": ys > ys.max() - k,
        }[side]
        o[ys[cut], xs[cut]] = bg
    return o


_PATH_IN = "1230 0040 5000"
_PATH_OUT = "4320 0010 5000"


@op(
    params=(K.COLOR,),
    generator=Fitting(fits_bg, lambda ctx: ((bg,) for bg in bg_readings(ctx))),
    only_if=lambda ctx: same_counts(ctx),
    when=W.CHANGED,
    # 1-2-3-4 read from one end to the other becomes 4-3-2-1; the lone 5 stays
    cases=[Case((0,), _PATH_IN, _PATH_OUT)],
)
def reverse_path(g: Grid, bg: int) -> Grid:
    """Every object (4-connected, any colours) that is a simple path of two cells or
    more (two ends, no branch) has its colours reversed end to end; other objects stay.
    No path raises."""
    o = g.copy()
    done = 0
    for ys, xs in components(g, 4, 0, bg):
        if ys.size < 2:
            continue
        cells = set(zip(ys.tolist(), xs.tolist(), strict=True))
        nb = {
            (y, x): [q for q in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)) if q in cells]
            for y, x in cells
        }
        ends = sorted(p for p, v in nb.items() if len(v) == 1)
        if len(ends) != 2 or any(len(v) > 2 for v in nb.values()):
            continue
        # connected, two ends, no cell with three neighbours: one walk covers it
        path = [ends[0]]
        prev: tuple[int, int] | None = None
        while len(path) < len(cells):
            nxt = next(q for q in nb[path[-1]] if q != prev)
            prev = path[-1]
            path.append(nxt)
        py, px = np.array(path).T
        o[py, px] = g[py[::-1], px[::-1]]
        done += 1
    if not done:
        raise ValueError("no path")
    return o
