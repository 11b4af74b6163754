"""Ops over objects (connected components) chosen or recoloured by their features: lookup
tables, ranks, filters, the extreme object, applying a sub-program to every object."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import (
    SELECTORS,
    Grid,
    components,
    obj_box,
    obj_feature,
    select_object,
)
from atlas_actors.arc.infer import Args, Ctx, bg_readings, color_change, fits, fits_bg, painted_bg
from atlas_actors.arc.registry import Case, K, OneOf, W, op


def _obj_pairs(ctx: Ctx, conn: int, by_color: int) -> list[tuple[Grid, Grid, list[Any]]] | None:
    out = []
    for s, t in ctx.pairs:
        objs = components(s, conn, by_color, ctx.bg)
        if len(objs) > 60:
            return None
        out.append((s, t, objs))
    return out


def _test_obj_values(ctx: Ctx, feat: str, conn: int, by_color: int) -> set[int]:
    """``feat`` of every object of every test state."""
    out: set[int] = set()
    for x in ctx.states[ctx.n :]:
        objs = components(x, conn, by_color, ctx.bg)
        if len(objs) > 60:
            raise ValueError("too many objects")
        out |= {obj_feature(x, ob, feat, ctx.bg) for ob in objs}
    return out


def g_extreme(ctx: Ctx) -> Iterator[Args]:
    for conn, by_color in ctx.conns():
        for sel in ctx.selections(SELECTORS, conn, by_color):
            yield (sel, conn, by_color, ctx.bg)


FEATURES = (
    "size", "height", "width", "area", "top", "left", "bottom", "right", "ncolors", "color",
    "is_rect", "density", "touches_border", "holes", "nholes", "shape", "symmetric",
)  # fmt: skip


_FEATS = ("size", "height", "width", "area", "holes", "is_rect", "touches_border", "shape")


def _obj_colors(ctx: Ctx, conn: int) -> list[tuple[Grid, list[Any], list[int]]] | None:
    """Per pair: the state, its one-colour objects and the one colour each object has
    in the target (-1 if unchanged); None if an object is not one colour there, or
    cells outside the objects change."""
    out = []
    for s, t in ctx.pairs:
        objs = components(s, conn, 1, ctx.bg)
        if not objs or len(objs) > 60:
            return None
        if ((s == ctx.bg) & (t != ctx.bg)).any():
            return None
        cols = []
        for ob in objs:
            u = np.unique(t[ob])
            if u.size != 1:
                return None
            c = int(u[0])
            cols.append(-1 if (t[ob] == s[ob]).all() else c)
        out.append((s, objs, cols))
    return out


_CACHE_MAP: dict[Any, Grid] = {}


def g_map_objects(ctx: Ctx) -> Iterator[Args]:
    subs: list[Any] = [("flip_h", "x"), ("flip_v", "x"), ("rot180", "x"), ("transpose", "x")]
    subs += [("fill_enclosed", "x", c, ctx.bg) for c in ctx.new_colors[:2]]
    subs += [("symmetrize", "x", k, ctx.bg) for k in ("h", "v", "hv")]
    for conn, by_color in ctx.conns():
        for s in subs:
            yield (s, conn, by_color, ctx.bg)


@op(
    params=(K.PROGRAM, K.CONN, K.FLAG, K.COLOR),
    generator=g_map_objects,
    when=W.SAME_SHAPE,
    cases=[Case((["flip_h", "x"], 8, 0, 0), "1200 0003", "2100 0003")],
)
def map_objects(g: Grid, fn: Any, conn: int, by_color: int, bg: int) -> Grid:
    """Apply ``fn`` to each object (cropped, other cells background) and paint it back."""
    o = g.copy()
    h, w = g.shape
    objs = components(g, conn, by_color, bg)
    if len(objs) > 100:
        raise ValueError("too many objects")
    for ys, xs in objs:
        y0, y1, x0, x1 = obj_box((ys, xs))
        sub = np.full((y1 - y0 + 1, x1 - x0 + 1), bg, dtype=g.dtype)
        sub[ys - y0, xs - x0] = g[ys, xs]
        key = (fn, sub.shape, sub.tobytes(), bg)
        r = _CACHE_MAP.get(key)
        if r is None:
            # the same object recurs in many states of a search: transform it once
            r = np.asarray(fn(sub))
            if len(_CACHE_MAP) > 50000:
                _CACHE_MAP.clear()
            _CACHE_MAP[key] = r
        if r.ndim != 2 or y0 + r.shape[0] > h or x0 + r.shape[1] > w:
            continue
        o[ys, xs] = bg
        region = o[y0 : y0 + r.shape[0], x0 : x0 + r.shape[1]]
        region[r != bg] = r[r != bg]
    return o


def g_recolor_by(ctx: Ctx) -> Iterator[Args]:
    """Infer a feature -> colour table from how each object is recoloured."""
    for conn in (8, 4):
        for by_color in (1, 0):
            data = _obj_pairs(ctx, conn, by_color)
            if data is None:
                continue
            rows: list[tuple[Grid, Any, int]] = []
            ok = True
            for s, t, objs in data:
                for ob in objs:
                    cs = np.unique(t[ob])
                    if cs.size != 1:
                        ok = False
                        break
                    rows.append((s, ob, int(cs[0])))
                if not ok:
                    break
            if not ok or not rows:
                continue
            found = 0
            for feat in FEATURES:
                table: dict[int, int] = {}
                for s, ob, c in rows:
                    v = obj_feature(s, ob, feat, ctx.bg)
                    if table.setdefault(v, c) != c:
                        break
                else:
                    args = _recolor_by_args(ctx, feat, table, conn, by_color)
                    yield from args
                    found += bool(args)
                    if found >= 3:
                        break


def _recolor_by_args(
    ctx: Ctx, feat: str, table: dict[int, int], conn: int, by_color: int
) -> list[Args]:
    """``recolor_by`` arguments for a learned table: when one colour serves two or more
    values, that colour as the default and only the exceptions in the table (this
    covers unseen values); the full table only when it covers every test object."""
    out: list[Args] = []
    cols = list(table.values())
    common = max(set(cols), key=lambda c: (cols.count(c), -c))
    rest = sorted([k, v] for k, v in table.items() if v != common)
    if feat != "shape" and rest and 2 * len(rest) <= cols.count(common):
        out.append((feat, rest, common, conn, by_color, ctx.bg))
    try:
        covered = _test_obj_values(ctx, feat, conn, by_color) <= table.keys()
    except ValueError:
        covered = False
    if covered:
        out.append((feat, sorted([k, v] for k, v in table.items()), -1, conn, by_color, ctx.bg))
    return out


@op(
    params=(OneOf(*FEATURES), K.TABLE, K.COLOR_OR_NONE, K.CONN, K.FLAG, K.COLOR),
    generator=g_recolor_by,
    only_if=lambda ctx: all(not ((s == ctx.bg) != (t == ctx.bg)).any() for s, t in ctx.pairs),
    when=W.SAME_SHAPE | W.NOT_TINY,
    cases=[Case(("size", [[1, 5], [2, 6]], -1, 4, 0, 0), "1011 0000 1110", "5066 0000 1110")],
)
def recolor_by(
    g: Grid, feature: str, table: list[list[int]], default: int, conn: int, by_color: int, bg: int
) -> Grid:
    """Recolour each object by a lookup table on one of its features.

    ``default`` -1 keeps the object's colours when its feature value is not in the table.
    """
    lut = {int(k): int(v) for k, v in table}
    o = g.copy()
    for obj in components(g, conn, by_color, bg):
        v = obj_feature(g, obj, feature, bg)
        c = lut.get(v, default)
        if c >= 0:
            o[obj] = c
    return o


def g_recolor_rank(ctx: Ctx) -> Iterator[Args]:
    """Infer a rank -> colour list (objects ranked by size, area, height, width)."""
    for conn in (8, 4):
        for by_color in (1, 0):
            data = _obj_pairs(ctx, conn, by_color)
            if data is None:
                continue
            if any(np.unique(t[ob]).size != 1 for s, t, objs in data for ob in objs):
                continue
            for feat in ("size", "area", "height", "width"):
                ranks: dict[int, int] = {}
                good = True
                for s, t, objs in data:
                    vals = sorted({obj_feature(s, ob, feat, ctx.bg) for ob in objs}, reverse=True)
                    for ob in objs:
                        r = vals.index(obj_feature(s, ob, feat, ctx.bg))
                        c = int(np.unique(t[ob])[0])
                        if ranks.setdefault(r, c) != c:
                            good = False
                if good and ranks and len(ranks) <= 9:
                    cols = [ranks.get(i, ranks[max(ranks)]) for i in range(max(ranks) + 1)]
                    yield (feat, cols, conn, by_color, ctx.bg)


@op(
    params=(OneOf(*FEATURES), K.COLORS, K.CONN, K.FLAG, K.COLOR),
    generator=g_recolor_rank,
    only_if=lambda ctx: all(not ((s == ctx.bg) != (t == ctx.bg)).any() for s, t in ctx.pairs),
    when=W.SAME_SHAPE | W.NOT_TINY,
    cases=[Case(("size", [3, 4], 4, 0, 0), "1011 0000 1110", "4044 0000 3330")],
)
def recolor_rank(
    g: Grid, feature: str, colors: list[int], conn: int, by_color: int, bg: int
) -> Grid:
    """Recolour objects by the rank of a feature (largest first); ``colors[i]`` for rank i,
    the last entry for the remaining ones."""
    objs = components(g, conn, by_color, bg)
    vals = sorted({obj_feature(g, ob, feature, bg) for ob in objs}, reverse=True)
    o = g.copy()
    for ob in objs:
        r = vals.index(obj_feature(g, ob, feature, bg))
        o[ob] = colors[min(r, len(colors) - 1)]
    return o


def g_filter_objects(ctx: Ctx) -> Iterator[Args]:
    """Infer which objects are kept (target shows them unchanged, the rest erased)."""
    for conn in (8, 4):
        for by_color in (0, 1):
            data = _obj_pairs(ctx, conn, by_color)
            if data is None:
                continue
            kept: list[tuple[Grid, Any]] = []
            gone: list[tuple[Grid, Any]] = []
            ok = True
            for s, t, objs in data:
                rest = np.ones(s.shape, dtype=bool)
                for ob in objs:
                    rest[ob] = False
                    if (t[ob] == s[ob]).all():
                        kept.append((s, ob))
                    elif (t[ob] == ctx.bg).all():
                        gone.append((s, ob))
                    else:
                        ok = False
                        break
                if not ok or not (t[rest] == s[rest]).all():
                    ok = False
                    break
            if not ok or not gone or not kept:
                continue
            found = 0
            for feat in FEATURES:
                kv = {obj_feature(s, ob, feat, ctx.bg) for s, ob in kept}
                gv = {obj_feature(s, ob, feat, ctx.bg) for s, ob in gone}
                if kv & gv:
                    continue
                try:  # every test object's value must have been seen kept or erased
                    if not _test_obj_values(ctx, feat, conn, by_color) <= kv | gv:
                        continue
                except ValueError:
                    continue
                yield (feat, sorted(kv), 1, conn, by_color, ctx.bg)
                yield (feat, sorted(gv), 0, conn, by_color, ctx.bg)
                found += 1
                if found >= 2:
                    break


@op(
    params=(OneOf(*FEATURES), K.INTS, K.FLAG, K.CONN, K.FLAG, K.COLOR),
    generator=g_filter_objects,
    when=W.SAME_SHAPE,
    cases=[Case(("size", [1], 0, 4, 0, 0), "1011 0000 1000", "0011 0000 0000")],
)
def filter_objects(
    g: Grid, feature: str, values: list[int], keep: int, conn: int, by_color: int, bg: int
) -> Grid:
    """Keep (``keep`` 1) or remove (0) the objects whose feature is in ``values``."""
    vs = {int(v) for v in values}
    o = np.full_like(g, bg)
    for obj in components(g, conn, by_color, bg):
        if (obj_feature(g, obj, feature, bg) in vs) == bool(keep):
            o[obj] = g[obj]
    return o


@op(
    params=(OneOf(*SELECTORS), K.CONN, K.FLAG, K.COLOR),
    generator=g_extreme,
    when=W.SHALLOW,
    cases=[Case(("largest", 4, 0, 0), "1022", "0022")],
)
def keep_extreme(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """Keep only the object chosen by ``sel`` (in place), erase the rest."""
    objs = components(g, conn, by_color, bg)
    ob = select_object(g, objs, sel, bg)
    o = np.full_like(g, bg)
    o[ob] = g[ob]
    return o


@op(
    params=(OneOf(*SELECTORS), K.CONN, K.FLAG, K.COLOR),
    generator=g_extreme,
    when=W.SHALLOW,
    cases=[Case(("largest", 4, 0, 0), "1022", "1000")],
)
def remove_extreme(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """Erase the object chosen by ``sel``."""
    objs = components(g, conn, by_color, bg)
    ob = select_object(g, objs, sel, bg)
    o = g.copy()
    o[ob] = bg
    return o


def g_recolor_extremes(ctx: Ctx) -> Iterator[Args]:
    data = _obj_colors(ctx, 4)
    if data is None:
        return
    for feat in ("size", "height", "width", "area"):
        want: list[set[int]] = [set(), set(), set()]
        ok = True
        for s, objs, cols in data:
            vals = [obj_feature(s, ob, feat, ctx.bg) for ob in objs]
            hi, lo = max(vals), min(vals)
            if hi == lo:
                ok = False
                break
            for v, c in zip(vals, cols, strict=True):
                want[0 if v == hi else 1 if v == lo else 2].add(c)
        if ok and all(len(w) <= 1 for w in want) and want[0] and want[1]:
            cmax, cmin = want[0].pop(), want[1].pop()
            crest = want[2].pop() if want[2] else -1
            if crest != -1 or (cmax != -1 and cmin != -1):  # not a plain selection
                yield (feat, cmax, cmin, crest, ctx.bg)


@op(
    params=(OneOf(*_FEATS), K.COLOR_OR_NONE, K.COLOR_OR_NONE, K.COLOR_OR_NONE, K.COLOR),
    generator=g_recolor_extremes,
    when=W.SAME_SHAPE | W.SHALLOW,
    # tallest bar -> 1, shortest -> 2, the rest erased
    cases=[Case(("height", 1, 2, 0, 0), "50000 50500 50505", "10000 10000 10002")],
)
def recolor_extremes(g: Grid, feature: str, cmax: int, cmin: int, crest: int, bg: int) -> Grid:
    """Objects (4-connected, one colour) with the largest ``feature`` become ``cmax``,
    those with the smallest ``cmin``, the others ``crest`` (-1: unchanged)."""
    objs = components(g, 4, 1, bg)
    if len(objs) < 2 or len(objs) > 60:
        raise ValueError("needs 2 to 60 objects")
    vals = [obj_feature(g, ob, feature, bg) for ob in objs]
    hi, lo = max(vals), min(vals)
    if hi == lo:
        raise ValueError("no extremes")
    o = g.copy()
    for ob, v in zip(objs, vals, strict=True):
        c = cmax if v == hi else cmin if v == lo else crest
        if c >= 0:
            o[ob] = c
    return o


def g_recolor_if(ctx: Ctx) -> Iterator[Args]:
    """Objects fall in two target classes (a colour, or unchanged) told apart by one
    feature: the values of the smaller class."""
    for conn in (8, 4):
        data = _obj_colors(ctx, conn)
        if data is None:
            continue
        classes = {c for _, _, cols in data for c in cols}
        if len(classes) != 2:
            continue
        ca, cb = sorted(classes)
        for feat in _FEATS:
            va: set[int] = set()
            vb: set[int] = set()
            for s, objs, cols in data:
                for ob, c in zip(objs, cols, strict=True):
                    (va if c == ca else vb).add(obj_feature(s, ob, feat, ctx.bg))
            if va & vb:
                continue
            # a class told by one value, against a class of several (or a tie)
            if len(va) == 1 and len(va) <= len(vb):
                yield (feat, sorted(va), ca, cb, conn, ctx.bg)
            if len(vb) == 1 and len(vb) <= len(va):
                yield (feat, sorted(vb), cb, ca, conn, ctx.bg)
            return


@op(
    params=(OneOf(*_FEATS), K.INTS, K.COLOR_OR_NONE, K.COLOR_OR_NONE, K.CONN, K.COLOR),
    generator=g_recolor_if,
    when=W.SAME_SHAPE | W.SHALLOW,
    # objects of size 2 -> 3, others -> 1
    cases=[Case(("size", [2], 3, 1, 8, 0), "5505 0005 5005", "3301 0001 1001")],
)
def recolor_if(
    g: Grid, feature: str, values: list[int], cyes: int, cno: int, conn: int, bg: int
) -> Grid:
    """Objects (``conn``-connected, one colour) whose ``feature`` is in ``values`` become
    ``cyes``, the others ``cno`` (-1: unchanged)."""
    objs = components(g, conn, 1, bg)
    if not objs or len(objs) > 60:
        raise ValueError("needs 1 to 60 objects")
    o = g.copy()
    for ob in objs:
        c = cyes if obj_feature(g, ob, feature, bg) in values else cno
        if c >= 0:
            o[ob] = c
    return o


def g_halo_if(ctx: Ctx) -> Iterator[Args]:
    """Painted one colour around some objects only: the feature value(s) of those
    objects, when no unpainted object shares them."""
    ch = color_change(ctx)
    if ch is None or len(set(ch[1])) != 1 or set(ch[0]) != {ctx.bg}:
        return
    c = ch[1][0]
    rows: list[tuple[Grid, Any, bool]] = []
    for s, t in ctx.pairs:
        objs = components(s, 4, 1, ctx.bg)
        if len(objs) > 60:
            return
        painted = np.pad((t == c) & (s != c), 1)
        free = np.pad(s == ctx.bg, 1)
        for ys, xs in objs:
            ring = np.zeros(painted.shape, dtype=bool)
            for dy in (0, 1, 2):
                for dx in (0, 1, 2):
                    ring[ys + dy, xs + dx] = True
            ring &= free
            rows.append((s, (ys, xs), bool(ring.any() and painted[ring].all())))
    for feat in _FEATS:
        yes = {obj_feature(s, ob, feat, ctx.bg) for s, ob, n in rows if n}
        no = {obj_feature(s, ob, feat, ctx.bg) for s, ob, n in rows if not n}
        ok = yes and no and not yes & no and len(yes) == 1
        if ok and fits(ctx, halo_if, feat, sorted(yes), c, ctx.bg):
            yield (feat, sorted(yes), c, ctx.bg)
            return


@op(
    params=(OneOf(*_FEATS), K.INTS, K.COLOR, K.COLOR),
    generator=g_halo_if,
    when=W.GROWS | W.SHALLOW,
    # only the domino gets an outline
    cases=[Case(("size", [2], 3, 0), "00000 02200 00000 00002", "33330 32230 33330 00002")],
)
def halo_if(g: Grid, feature: str, values: list[int], c: int, bg: int) -> Grid:
    """Outline with ``c`` (the background cells among the 8 neighbours) every object
    (4-connected, one colour) whose ``feature`` is in ``values``."""
    h, w = g.shape
    objs = components(g, 4, 1, bg)
    if not objs or len(objs) > 60:
        raise ValueError("needs 1 to 60 objects")
    mark = np.zeros((h + 2, w + 2), dtype=bool)
    for ob in objs:
        if obj_feature(g, ob, feature, bg) in values:
            ys, xs = ob
            for dy in (0, 1, 2):
                for dx in (0, 1, 2):
                    mark[ys + dy, xs + dx] = True
    return np.where(mark[1:-1, 1:-1] & (g == bg), c, g)


def g_square_ticks(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own), in
    one colour across the pairs."""
    new = {int(v) for s, t in ctx.pairs for v in np.unique(t[s != t])}
    if len(new) != 1:
        return
    for bg in bg_readings(ctx):
        if painted_bg(ctx, bg) and fits_bg(ctx, square_ticks, *new, bg):
            yield (*new, bg)


_SQ_IN = "0000555 0110000 0110000 0000000 0003330 0003030 0003330"
_SQ_OUT = "0220555 2112000 2112000 0222020 0023332 0003030 0023332"


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_square_ticks,
    when=W.SAME_SHAPE | W.SHALLOW,
    # the 2x2 block and the 3x3 ring are square outlines (ticks off the grid dropped);
    # the 5 bar is not
    cases=[Case((2, 0), _SQ_IN, _SQ_OUT)],
)
def square_ticks(g: Grid, c: int, bg: int) -> Grid:
    """Every object (4-connected, one colour) that is exactly the outline of a square
    of side 2 or more gets colour ``c`` on the background cells continuing its four
    sides one cell past each corner (eight ticks); other objects are left alone."""
    objs = components(g, 4, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("needs 1 to 40 objects")
    h, w = g.shape
    o = g.copy()
    hit = False
    for ys, xs in objs:
        t, b, left, r = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        side = b - t + 1
        if side < 2 or r - left != b - t or ys.size != 4 * side - 4:
            continue
        if not ((ys == t) | (ys == b) | (xs == left) | (xs == r)).all():
            continue
        hit = True
        for y, x in (
            (t - 1, left), (t, left - 1), (t - 1, r), (t, r + 1),
            (b + 1, left), (b, left - 1), (b + 1, r), (b, r + 1),
        ):  # fmt: skip
            if 0 <= y < h and 0 <= x < w and g[y, x] == bg:
                o[y, x] = c
    if not hit:
        raise ValueError("no square outline")
    return o
