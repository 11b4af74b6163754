"""More DSL ops (same shape, regions): primitives, signatures and generators (see
ops_objects.py for the conventions).

Background regions recoloured by a table on one region property (solid rectangle,
boxed, enclosed, size parity, rank from a side ...), empty windows of a size filled,
holes grown into lines across their band, lines through dots recolouring each
region they cross by what the dots teach, and open containers filled and shining
out of their opening.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import _fits, _painted_only
from atlas_actors.arc.prims import _DIRS, components

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]


# ---------------------------------------------------------------- primitives

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


def _bg_regions(g: Grid, bg: int) -> list[tuple[Grid, Grid]]:
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


def recolor_regions(g: Grid, feature: str, table: list[list[int]], bg: int) -> Grid:
    """Paint every 4-connected region of background cells with the colour that
    ``table`` (``[value, colour]`` rows) gives its ``feature`` (see
    :func:`region_values`); a colour equal to ``bg`` leaves the region alone. Raises
    when a region's value is not in the table."""
    regs = _bg_regions(g, bg)
    if not regs or len(regs) > 100:
        raise ValueError("no regions or too many")
    lut = {int(k): int(v) for k, v in table}
    o = g.copy()
    for (ys, xs), v in zip(regs, region_values(g, regs, feature), strict=True):
        if v not in lut:
            raise ValueError("region value not in table")
        o[ys, xs] = lut[v]
    return o


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
    steps = _DIRS[dirs]
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


# ---------------------------------------------------------------- generators


def g_recolor_regions(ctx: Ctx) -> Iterator[Args]:
    """Background regions painted whole, one colour each: the first features (simple
    ones first) whose values map consistently to the painted colour, when the table
    covers the test inputs' regions too."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    train: list[tuple[Grid, list[tuple[Grid, Grid]], list[int]]] = []
    for s, t in ctx.pairs:
        rs = _bg_regions(s, ctx.bg)
        if len(rs) > 100:
            return
        cols = []
        for ys, xs in rs:
            u = np.unique(t[ys, xs])
            if u.size != 1:
                return
            cols.append(int(u[0]))
        train.append((s, rs, cols))
    tests = [(s, _bg_regions(s, ctx.bg)) for s in ctx.states[ctx.n :]]
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


def g_fill_windows(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour painted one colour, in blocks at least 2 wide and tall:
    the smallest painted run lengths across and down as the window."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
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
    if 2 <= kh <= 6 and 2 <= kw <= 6 and _fits(ctx, fill_windows, kh, kw, e, c):
        yield (kh, kw, e, c)


def g_hole_lines(ctx: Ctx) -> Iterator[Args]:
    """Changed cells all become one colour ``c`` that the states already hold in a
    few single cells."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    cs: set[int] = set()
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return
        cs |= set(np.unique(t[d]).tolist())
    if len(cs) != 1:
        return
    c = cs.pop()
    if all(0 < int((s == c).sum()) <= 30 for s in ctx.states) and _fits(ctx, hole_lines, c):
        yield (c,)


def g_dot_lines_by_region(ctx: Ctx) -> Iterator[Args]:
    """Same shapes and a few cells change colour in every pair: try the directions."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    if any(not (s != t).any() for s, t in ctx.pairs):
        return
    for dirs in ("diag", "hv", "all"):
        if _fits(ctx, dot_lines_by_region, dirs):
            yield (dirs,)
            return


def g_spill_beam(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all one colour: with or without diagonals."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    cs = {int(v) for s, t in ctx.pairs for v in np.unique(t[s != t])}
    if len(cs) != 1:
        return
    c = cs.pop()
    for diag in (1, 0):
        if _fits(ctx, spill_beam, c, diag, ctx.bg):
            yield (c, diag, ctx.bg)
            return


OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = [
    ("recolor_regions", recolor_regions, ("g", REGION_FEATURES, "table", "c")),
    ("fill_windows", fill_windows, ("g", "k", "k", "c", "c")),
    ("hole_lines", hole_lines, ("g", "c")),
    ("dot_lines_by_region", dot_lines_by_region, ("g", ("diag", "hv", "all"))),
    ("spill_beam", spill_beam, ("g", "c", "b", "c")),
]
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {
    "recolor_regions": g_recolor_regions,
    "fill_windows": g_fill_windows,
    "hole_lines": g_hole_lines,
    "dot_lines_by_region": g_dot_lines_by_region,
    "spill_beam": g_spill_beam,
}
"""Parameter generators, by op name."""
