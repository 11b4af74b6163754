"""More DSL ops (cells): primitives, their signatures and parameter generators.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).

The primitives follow the conventions of :mod:`atlas_actors.arc.prims` (numpy only,
bounded loops), so ``Program.to_python`` can copy their source into a standalone script.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc import prims
from atlas_actors.arc.prims import (
    _enclosed,
    _sep_segments,
    cells_to_pixels,
    components,
    connect,
    interior,
    line_segments,
    obj_feature,
    symmetrize,
    symmetrize_bbox,
)

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]

_HV4 = ((0, 1), (0, -1), (1, 0), (-1, 0))
_FEATS = ("size", "height", "width", "area", "holes", "is_rect", "touches_border", "shape")

# ---------------------------------------------------------------- primitives


def _dots_and_rest(g: Grid, bg: int) -> tuple[list[tuple[Grid, Grid]], Grid]:
    """The single cells (one-cell 4-connected objects of one colour) and a mask of the
    cells of every bigger object; raises unless there are some of both (at most 80
    single cells)."""
    objs = components(g, 4, 1, bg)
    dots = [ob for ob in objs if ob[0].size == 1]
    if not dots or len(dots) == len(objs) or len(dots) > 80:
        raise ValueError("no single cells or no bigger objects")
    rest = g != bg
    for ob in dots:
        rest[ob] = False
    return dots, rest


def snap_to_line(g: Grid, keep: int, bg: int) -> Grid:
    """Move every single cell straight toward the nearest bigger object (a line or wall)
    of its own colour in its row or column, until it touches it. Single cells with no
    such object in line are erased (``keep`` 0) or stay put (``keep`` 1)."""
    h, w = g.shape
    dots, static = _dots_and_rest(g, bg)
    o = g.copy()
    for ys, _xs in dots:
        o[ys, _xs] = bg
    for ys, xs in dots:
        y, x = int(ys[0]), int(xs[0])
        c = int(g[y, x])
        best: tuple[int, int, int] | None = None
        for dy, dx in _HV4:
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


def _gaps(g: Grid, c: int, axis: str, bg: int) -> list[tuple[Grid, Grid, int]]:
    """Runs of background between two consecutive non-background cells of one colour
    (``c``, or any if -1) along rows (``axis`` h), columns (v) or both (hv): index
    arrays and the pair's colour."""
    out: list[tuple[Grid, Grid, int]] = []
    h, w = g.shape
    if "h" in axis:
        for y in range(h):
            xs = np.nonzero(g[y] != bg)[0]
            for a, b in zip(xs[:-1].tolist(), xs[1:].tolist(), strict=True):
                col = int(g[y, a])
                if b - a > 1 and col == g[y, b] and (c < 0 or col == c):
                    out.append((np.full(b - a - 1, y), np.arange(a + 1, b), col))
    if "v" in axis:
        for x in range(w):
            ys = np.nonzero(g[:, x] != bg)[0]
            for a, b in zip(ys[:-1].tolist(), ys[1:].tolist(), strict=True):
                col = int(g[a, x])
                if b - a > 1 and col == g[b, x] and (c < 0 or col == c):
                    out.append((np.arange(a + 1, b), np.full(b - a - 1, x), col))
    return out


def fill_gaps(g: Grid, c: int, fill: int, axis: str, maxgap: int, bg: int) -> Grid:
    """Fill each background gap of at most ``maxgap`` cells between two consecutive
    cells of the same colour (``c``, or any if -1) in a row (``axis`` h), column (v) or
    both (hv) with ``fill`` (-1: the pair's colour)."""
    o = g.copy()
    for ys, xs, col in _gaps(g, c, axis, bg):
        if ys.size <= maxgap:
            o[ys, xs] = col if fill < 0 else fill
    return o


def fill_squares(g: Grid, kh: int, kw: int, e: int, c: int) -> Grid:
    """Paint with ``c`` the ``kh`` x ``kw`` windows made only of colour ``e``, taken
    greedily in reading order without overlapping one already painted."""
    h, w = g.shape
    if kh > h or kw > w or kh * kw < 2:
        raise ValueError("window too big or too small")
    free = g == e
    o = g.copy()
    for y in range(h - kh + 1):
        for x in range(w - kw + 1):
            if free[y : y + kh, x : x + kw].all():
                o[y : y + kh, x : x + kw] = c
                free[y : y + kh, x : x + kw] = False
    return o


def stride_recolor(g: Grid, a: int, b: int, axis: str, k: int, anchor: int) -> Grid:
    """Recolour cells of colour ``a`` to ``b`` in every ``k``-th column (``axis`` cols)
    or row (rows), counted from the first (``anchor`` 0) or the last (1) one."""
    h, w = g.shape
    n = w if axis == "cols" else h
    idx = np.arange(n) if not anchor else np.arange(n)[::-1]
    pick = (idx % k) == 0
    m = pick[None, :] if axis == "cols" else pick[:, None]
    return np.where(m & (g == a), b, g)


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


def recolor_except(g: Grid, keep: int, c: int) -> Grid:
    """Every cell not of colour ``keep`` becomes ``c``."""
    return np.where(g == keep, g, c)


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


def swap_other(g: Grid, a: int, bg: int) -> Grid:
    """Swap colour ``a`` with the one other colour of the grid (not counting ``bg``;
    -1: count every colour)."""
    others = [int(v) for v in np.unique(g) if v != a and v != bg]
    if len(others) != 1 or not (g == a).any():
        raise ValueError("needs exactly one other colour")
    b = others[0]
    return np.where(g == a, b, np.where(g == b, a, g))


def complete_templates(g: Grid, bg: int) -> Grid:
    """Complete partial copies of templates. The multicolour objects (8-connected) are
    templates; a placement of a template (shifted, never turned) that covers only
    background or cells of its own colours, and some cells outside the templates,
    completes them. Placements covering the most such cells go first; each cell is
    completed once."""
    h, w = g.shape
    objs = components(g, 8, 0, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    temps = []
    in_temp = np.zeros(g.shape, dtype=bool)
    for ys, xs in objs:
        if np.unique(g[ys, xs]).size > 1:
            y0, x0 = int(ys.min()), int(xs.min())
            cells = list(
                zip((ys - y0).tolist(), (xs - x0).tolist(), g[ys, xs].tolist(), strict=True)
            )
            temps.append(cells)
            in_temp[ys, xs] = True
    loose = (g != bg) & ~in_temp
    if not temps or not loose.any() or int(loose.sum()) > 200:
        raise ValueError("no templates or nothing to complete")
    ly, lx = np.nonzero(loose)
    cands: list[tuple[int, int, frozenset[tuple[int, int]], list[tuple[int, int, int]]]] = []
    seen: set[tuple[int, int, int]] = set()
    for ti, cells in enumerate(temps):
        for py, px in zip(ly.tolist(), lx.tolist(), strict=True):
            for ty, tx, tc in cells:
                dy, dx = py - ty, px - tx
                if tc != g[py, px] or (ti, dy, dx) in seen:
                    continue
                seen.add((ti, dy, dx))
                placed = [(y + dy, x + dx, c) for y, x, c in cells]
                if any(
                    not (0 <= y < h and 0 <= x < w)
                    or in_temp[y, x]
                    or (g[y, x] != bg and g[y, x] != c)
                    for y, x, c in placed
                ):
                    continue
                hit = frozenset((y, x) for y, x, _ in placed if loose[y, x])
                if len(hit) < len(placed):
                    cands.append((-len(hit), len(cands), hit, placed))
    cands.sort(key=lambda t: (t[0], t[1]))
    o = g.copy()
    done: set[tuple[int, int]] = set()
    for _, _, hit, placed in cands:
        if hit & done:
            continue
        done |= hit
        for y, x, c in placed:
            o[y, x] = c
    return o


def hollow(g: Grid, bg: int) -> Grid:
    """Erase the cells of objects whose 8 neighbours are all non-background (keep the
    outlines)."""
    return interior(g, bg, bg)


def connect_layered(g: Grid, top: str, bg: int) -> Grid:
    """Join pairs of same-colour cells in a row or column with lines of their colour
    (over background); where lines cross, the ``top`` ones (h rows, v columns) win."""
    o = g.copy()
    for axis in ("h", "v") if top == "v" else ("v", "h"):
        a = g if axis == "h" else g.T
        b = o if axis == "h" else o.T
        for i in range(a.shape[0]):
            line = a[i]
            for col in np.unique(line).tolist():
                if col == bg:
                    continue
                idx = np.nonzero(line == col)[0]
                if idx.size >= 2:
                    seg = slice(int(idx.min()), int(idx.max()) + 1)
                    b[i, seg][line[seg] == bg] = col
    return o


def ring_colors(g: Grid, mode: str) -> Grid:
    """Permute the colours of concentric rings (the cells at one distance from the
    grid's edge, each ring one colour). Taking the colours in order from the outside
    in, they are reversed (``mode`` rev), or each takes the colour of the one before
    it, the first that of the last (out), or of the one after it (in)."""
    h, w = g.shape
    yy, xx = np.mgrid[0:h, 0:w]
    layer = np.minimum(np.minimum(yy, xx), np.minimum(h - 1 - yy, w - 1 - xx))
    cols = []
    for k in range(int(layer.max()) + 1):
        u = np.unique(g[layer == k])
        if u.size != 1:
            raise ValueError("a ring is not one colour")
        cols.append(int(u[0]))
    order = list(dict.fromkeys(cols))
    n = len(order)
    if n < 2:
        raise ValueError("one colour")
    if mode == "rev":
        new = order[::-1]
    elif mode == "out":
        new = [order[(i - 1) % n] for i in range(n)]
    else:
        new = [order[(i + 1) % n] for i in range(n)]
    lut = np.arange(10)
    lut[order] = new
    return lut[g]


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


def connect_l(g: Grid, a: int, b: int, first: str, c: int, bg: int) -> Grid:
    """Join the one cell of colour ``a`` to the one cell of colour ``b`` with an
    L-shaped path of colour ``c`` (over background) that leaves ``a`` along its column
    (``first`` v) or its row (h), then turns toward ``b``."""
    pa, pb = np.argwhere(g == a), np.argwhere(g == b)
    if len(pa) != 1 or len(pb) != 1:
        raise ValueError("needs exactly one cell of each colour")
    (ay, ax), (by, bx) = pa[0].tolist(), pb[0].tolist()
    cy, cx = (by, ax) if first == "v" else (ay, bx)
    o = g.copy()
    for (y0, x0), (y1, x1) in (((ay, ax), (cy, cx)), ((cy, cx), (by, bx))):
        ys = np.arange(min(y0, y1), max(y0, y1) + 1)
        xs = np.arange(min(x0, x1), max(x0, x1) + 1)
        seg = o[np.ix_(ys, xs)]
        seg[seg == bg] = c
        o[np.ix_(ys, xs)] = seg
    return np.where(g != bg, g, o)


def fill_holes(g: Grid, kind: str, c: int, bg: int) -> Grid:
    """Paint with ``c`` the enclosed background regions (4-connected, not reaching the
    edge) of one kind: ``rect`` solid rectangles, ``square`` solid squares, ``even`` /
    ``odd`` regions whose width is even / odd."""
    enc = _enclosed(g == bg)
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


def mark_contact(g: Grid, bg: int) -> Grid:
    """Every single cell looks along its row and column: the first cell of a bigger
    object (4-connected, one colour) it sees takes the single cell's colour."""
    h, w = g.shape
    dots, big = _dots_and_rest(g, bg)
    o = g.copy()
    for ys, xs in dots:
        y, x = int(ys[0]), int(xs[0])
        for dy, dx in _HV4:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w and g[ny, nx] == bg:
                ny, nx = ny + dy, nx + dx
            if 0 <= ny < h and 0 <= nx < w and big[ny, nx]:
                o[ny, nx] = g[y, x]
    return o


_DIAG4 = {"ul": (-1, -1), "ur": (-1, 1), "dl": (1, -1), "dr": (1, 1)}


def _diag_ray(o: Grid, g: Grid, y: int, x: int, dy: int, dx: int, c: int, bg: int) -> None:
    """Paint ``c`` over the background from (y+dy, x+dx) on to the border."""
    h, w = g.shape
    y, x = y + dy, x + dx
    while 0 <= y < h and 0 <= x < w:
        if g[y, x] == bg:
            o[y, x] = c
        y, x = y + dy, x + dx


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


def cell_connect(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into cells of one colour each, join every two
    cells of one colour in a row or column of cells by painting the background cells
    between them that colour (as ``connect`` on the grid of cells)."""
    rsegs, csegs = _sep_segments(g, bg)
    if len(rsegs) * len(csegs) < 4:
        raise ValueError("no cells")
    small = cells_to_pixels(g, bg)
    new = connect(small, -1, -1, bg)
    o = g.copy()
    for i, j in zip(*np.nonzero(new != small), strict=True):
        (y0, y1), (x0, x1) = rsegs[int(i)], csegs[int(j)]
        o[y0:y1, x0:x1] = new[i, j]
    return o


_HV4D = {"right": (0, 1), "left": (0, -1), "down": (1, 0), "up": (-1, 0)}


def dashed_rays(g: Grid, d: str, c2: int, bg: int) -> Grid:
    """From every cell not of colour ``c2`` or the background (at most 40) draw a ray
    in direction ``d`` to the border over the background, alternating ``c2`` (first)
    with the cell's own colour."""
    dy, dx = _HV4D[d]
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


def cell_broadcast(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into equal cells, copy the one pattern found
    in the non-empty cells into every empty cell (all non-empty cells must agree)."""
    rsegs, csegs = _sep_segments(g, bg)
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 2 or len({(y1 - y0, x1 - x0) for y0, y1, x0, x1 in cells}) != 1:
        raise ValueError("no equal cells")
    full = [g[y0:y1, x0:x1] for y0, y1, x0, x1 in cells if (g[y0:y1, x0:x1] != bg).any()]
    if not full or any(not np.array_equal(p, full[0]) for p in full[1:]):
        raise ValueError("no single pattern")
    o = g.copy()
    for y0, y1, x0, x1 in cells:
        o[y0:y1, x0:x1] = full[0]
    return o


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


def cell_max_fill(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into cells: the cells holding the most
    non-background cells are filled with their commonest colour, the others cleared."""
    rsegs, csegs = _sep_segments(g, bg)
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 2:
        raise ValueError("no cells")
    counts = [int((g[y0:y1, x0:x1] != bg).sum()) for y0, y1, x0, x1 in cells]
    top = max(counts)
    if top == 0:
        raise ValueError("empty cells")
    o = g.copy()
    for (y0, y1, x0, x1), n in zip(cells, counts, strict=True):
        p = g[y0:y1, x0:x1]
        o[y0:y1, x0:x1] = int(np.bincount(p[p != bg], minlength=10).argmax()) if n == top else bg
    return o


def snap_to_wall(g: Grid, bg: int) -> Grid:
    """Move every single cell (a one-cell object of its colour) straight toward the
    nearest bigger object of any colour in its row or column until it touches it (or
    a cell already moved there: they pile up), taking that object's colour. Single
    cells with no such object in line are erased."""
    h, w = g.shape
    dots, static = _dots_and_rest(g, bg)
    o = g.copy()
    moves: list[tuple[int, int, int, int, int, int]] = []
    for ys, xs in dots:
        y, x = int(ys[0]), int(xs[0])
        o[y, x] = bg
        best: tuple[int, int, int, int, int, int] | None = None
        for dy, dx in _HV4:
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


def _mask(ys: Grid, xs: Grid) -> tuple[tuple[int, int], bytes]:
    """An object's shape: its bounding-box size and the cells it fills there."""
    m = np.zeros((int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1), dtype=bool)
    m[ys - ys.min(), xs - xs.min()] = True
    return m.shape, m.tobytes()


def recolor_matching(g: Grid, mode: str, closed: int, bg: int) -> Grid:
    """Templates are the objects (8-connected, one colour) lying inside the bounding box
    of a container object (with ``closed`` 1: walled in by the container's colour, not
    reaching the border). Every object outside the containers with the same shape as a
    template gets the template's colour (``mode`` inner) or its container's (frame)."""
    objs = components(g, 8, 1, bg)
    if len(objs) < 3 or len(objs) > 40:
        raise ValueError("too few or too many objects")
    boxes = [(int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())) for ys, xs in objs]
    inside: dict[int, int] = {}
    for i, (y0, y1, x0, x1) in enumerate(boxes):
        for j, (a0, a1, b0, b1) in enumerate(boxes):
            if i != j and y0 <= a0 and a1 <= y1 and x0 <= b0 and b1 <= x1:
                inside[j] = i
    if closed:
        for j, i in list(inside.items()):
            ys, xs = objs[i]
            walled = _enclosed(g != g[ys[0], xs[0]])
            if not walled[objs[j]].all():
                del inside[j]
    if not inside:
        raise ValueError("no container")
    templ: dict[Any, int] = {}
    for j, i in inside.items():
        ys, xs = objs[j]
        src = objs[i] if mode == "frame" else objs[j]
        templ[_mask(ys, xs)] = int(g[src[0][0], src[1][0]])
    o = g.copy()
    for k, (ys, xs) in enumerate(objs):
        if k in inside or k in inside.values():
            continue
        c = templ.get(_mask(ys, xs))
        if c is not None:
            o[ys, xs] = c
    return o


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


def corner_marks(g: Grid, size: str, cmode: str, cols: list[int], bg: int) -> Grid:
    """Decorate each object (8-connected, any colours) at its four outer diagonal
    corners with a square of one cell (``size`` dot) or of the object's smaller side
    (same). Colours: ``cmode`` fixed takes ``cols`` (up-left, up-right, down-left,
    down-right); opp takes the object's cell in the opposite corner of its box. Only
    background cells are painted."""
    objs = components(g, 8, 0, bg)
    if not objs or len(objs) > 30 or (cmode == "fixed" and len(cols) != 4):
        raise ValueError("no objects, too many, or not four colours")
    h, w = g.shape
    o = g.copy()
    for ys, xs in objs:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        k = 1 if size == "dot" else min(y1 - y0, x1 - x0) + 1
        corners = [(y0 - k, x0 - k, y1, x1), (y0 - k, x1 + 1, y1, x0)]
        corners += [(y1 + 1, x0 - k, y0, x1), (y1 + 1, x1 + 1, y0, x0)]
        for i, (ty, tx, oy, ox) in enumerate(corners):
            col = cols[i] if cmode == "fixed" else int(g[oy, ox])
            for y in range(max(ty, 0), min(ty + k, h)):
                for x in range(max(tx, 0), min(tx + k, w)):
                    if g[y, x] == bg:
                        o[y, x] = col
    return o


def midpoint_mark(g: Grid, shape: str, c: int, bg: int) -> Grid:
    """Mark with ``c`` the midpoint of every two same-coloured single cells that share
    a row or column an even distance apart: the cell (``shape`` dot) or a plus around
    it (plus). Only background cells are painted."""
    h, w = g.shape
    cells = [(int(ys[0]), int(xs[0])) for ys, xs in components(g, 8, 1, bg) if ys.size == 1]
    if len(cells) < 2 or len(cells) > 20:
        raise ValueError("needs two to twenty single cells")
    o = g.copy()
    arm = ((0, 0),) if shape == "dot" else ((0, 0), *_HV4)
    for i, (y, x) in enumerate(cells):
        for v, u in cells[i + 1 :]:
            if g[y, x] != g[v, u] or (y != v and x != u) or (v - y + u - x) % 2:
                continue
            my, mx = (y + v) // 2, (x + u) // 2
            for dy, dx in arm:
                if 0 <= my + dy < h and 0 <= mx + dx < w and g[my + dy, mx + dx] == bg:
                    o[my + dy, mx + dx] = c
    return o


def bridge(g: Grid, c: int, inset: int, bg: int) -> Grid:
    """Join every two objects (one colour, 4-connected) that face each other across
    background with a band of ``c``: the band spans the rows (or columns) both objects
    share, less ``inset`` cells on each side, and fills the gap between them."""
    objs = components(g, 4, 1, bg)
    if len(objs) < 2 or len(objs) > 10:
        raise ValueError("needs two to ten objects")
    boxes = [(int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())) for ys, xs in objs]
    o = g.copy()
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            for ax in (0, 1):
                p, q = (a, b) if ax == 0 else ((a[2], a[3], a[0], a[1]), (b[2], b[3], b[0], b[1]))
                lo, hi = max(p[0], q[0]) + inset, min(p[1], q[1]) - inset
                if p[3] < q[2]:
                    g0, g1 = p[3] + 1, q[2] - 1
                elif q[3] < p[2]:
                    g0, g1 = q[3] + 1, p[2] - 1
                else:
                    continue
                if lo > hi or g0 > g1:
                    continue
                win = (slice(lo, hi + 1), slice(g0, g1 + 1))
                if ax == 1:
                    win = (win[1], win[0])
                if (g[win] == bg).all():
                    o[win] = c
    return o


def cross_swap(g: Grid, bg: int) -> Grid:
    """Where a full-width band of rows crosses a full-height band of columns, put the
    band that is under on top: the crossing takes the other band's colour."""
    rows = np.nonzero((g != bg).all(axis=1))[0]
    cols = np.nonzero((g != bg).all(axis=0))[0]
    if rows.size == 0 or cols.size == 0 or rows.size == g.shape[0] or cols.size == g.shape[1]:
        raise ValueError("no crossing bands")
    inner = g[np.ix_(rows, cols)]
    rmask = np.ones(g.shape[1], dtype=bool)
    rmask[cols] = False
    cmask = np.ones(g.shape[0], dtype=bool)
    cmask[rows] = False
    rc, cc, x = np.unique(g[rows][:, rmask]), np.unique(g[:, cols][cmask]), np.unique(inner)
    if rc.size != 1 or cc.size != 1 or x.size != 1 or rc[0] == cc[0]:
        raise ValueError("bands not of one colour each")
    o = g.copy()
    o[np.ix_(rows, cols)] = cc[0] if x[0] == rc[0] else rc[0]
    return o


def meet_middle(g: Grid, c: int, axis: str, bg: int) -> Grid:
    """Two single cells facing each other across background in a row (``axis`` h), a
    column (v) or either (hv) grow toward each other, each with its own colour, and
    meet halfway; an odd middle cell gets ``c``."""
    cells = [(int(ys[0]), int(xs[0])) for ys, xs in components(g, 8, 0, bg) if ys.size == 1]
    if len(cells) < 2 or len(cells) > 20:
        raise ValueError("needs two to twenty single cells")
    o = g.copy()
    done = 0
    for i, (y, x) in enumerate(cells):
        for v, u in cells[i + 1 :]:
            seg: tuple[Any, Any]
            if y == v and "h" in axis:
                seg = (y, slice(x + 1, u)) if x < u else (y, slice(u + 1, x))
            elif x == u and "v" in axis:
                seg = (slice(y + 1, v), x) if y < v else (slice(v + 1, y), x)
            else:
                continue
            run = g[seg]
            n = run.size
            if n == 0 or (run != bg).any():
                continue
            a, b = (int(g[y, x]), int(g[v, u])) if (y, x) < (v, u) else (int(g[v, u]), int(g[y, x]))
            line = np.full(n, b)
            line[: n // 2] = a
            if n % 2:
                line[n // 2] = c
            o[seg] = line
            done += 1
    if not done:
        raise ValueError("no facing pair")
    return o


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


def merge_touching(g: Grid, a: int, b: int, c: int, bg: int) -> Grid:
    """Where a cell of colour ``a`` touches (4-neighbour) a cell of colour ``b``, the
    ``a`` cell becomes ``c`` and the ``b`` cell becomes background."""
    h, w = g.shape
    ma, mb = g == a, g == b
    o = g.copy()
    hit = False
    for y, x in zip(*np.nonzero(ma), strict=True):
        for dy, dx in _HV4:
            v, u = int(y) + dy, int(x) + dx
            if 0 <= v < h and 0 <= u < w and mb[v, u]:
                o[y, x] = c
                o[v, u] = bg
                hit = True
    if not hit:
        raise ValueError("no touching pair")
    return o


def _clusters(m: Grid, reach: int) -> list[tuple[Grid, Grid]]:
    """Groups of the cells of mask ``m`` where cells at most ``reach`` apart (Chebyshev
    distance) join: 8-connected objects (``reach`` 1) that may skip ``reach`` - 1
    empty cells."""
    ys, xs = np.nonzero(m)
    n = int(ys.size)
    if reach >= max(m.shape):
        return [(ys, xs)] if n else []
    if n > 300:
        raise ValueError("too many cells")
    lab = list(range(n))

    def root(i: int) -> int:
        while lab[i] != i:
            lab[i] = lab[lab[i]]
            i = lab[i]
        return i

    near = np.maximum(np.abs(ys[:, None] - ys[None, :]), np.abs(xs[:, None] - xs[None, :]))
    for i, j in zip(*np.nonzero(np.triu(near <= reach, 1)), strict=True):
        lab[root(int(i))] = root(int(j))
    roots = np.array([root(i) for i in range(n)])
    return [(ys[roots == r], xs[roots == r]) for r in dict.fromkeys(roots.tolist())]


def recolor_in_box(g: Grid, a: int, b: int, c: int, reach: int, bg: int) -> Grid:
    """Inside the bounding box of every group of colour ``a`` cells (8-connected with
    ``reach`` 1, or allowed to skip ``reach`` - 1 cells), the cells of colour ``b``
    (-1: every colour but ``a`` and the background) become ``c``."""
    if a in (b, bg) or not (g == a).any():
        raise ValueError("no box colour")
    o = g.copy()
    for ys, xs in _clusters(g == a, reach):
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        box = o[y0:y1, x0:x1]
        src = g[y0:y1, x0:x1]
        box[(src == b) if b >= 0 else ((src != a) & (src != bg))] = c
    return o


def _sign(v: float) -> int:
    return 0 if abs(v) < 1e-9 else (1 if v > 0 else -1)


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


def _sym_maps(kind: str, p: int, q: int) -> list[tuple[int, int, int, int, int, int]]:
    """The maps of symmetry ``kind`` about the centre (``p``/2, ``q``/2) as
    (y' = a*y + b*x + e, x' = c*y + d*x + f) coefficient tuples (a, b, e, c, d, f)."""
    h_ = (1, 0, 0, 0, -1, q)  # left-right mirror
    v_ = (-1, 0, p, 0, 1, 0)  # up-down mirror
    if kind == "h":
        return [h_]
    if kind == "v":
        return [v_]
    if kind == "hv":
        return [h_, v_, (-1, 0, p, 0, -1, q)]
    if kind == "diag":  # both diagonal mirrors (needs p, q of one parity)
        t_ = (0, 1, (p - q) // 2, 1, 0, (q - p) // 2)
        a_ = (0, -1, (p + q) // 2, -1, 0, (p + q) // 2)
        return [t_, a_, (-1, 0, p, 0, -1, q)]
    # rot: quarter turns about the centre (needs p, q of one parity)
    r1 = (0, 1, (p - q) // 2, -1, 0, (p + q) // 2)
    r3 = (0, -1, (p + q) // 2, 1, 0, (q - p) // 2)
    return [r1, (-1, 0, p, 0, -1, q), r3]


def _fit_symmetry(g: Grid, kind: str, bg: int) -> Grid:
    """The cells to add to complete symmetry ``kind`` about the centre that explains
    the most non-background cells (no clash of two colours, every image in the grid);
    their colours (as a grid, background elsewhere)."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0 or ys.size > 200:
        raise ValueError("nothing or too much to mirror")
    cols = g[ys, xs]
    y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
    best: tuple[int, Grid] | None = None
    for p in range(2 * y0, 2 * y1 + 1) if kind != "h" else [0]:
        for q in range(2 * x0, 2 * x1 + 1) if kind != "v" else [0]:
            if kind in ("rot", "diag") and (p - q) % 2:
                continue
            add = np.full(g.shape, bg)
            score, ok = 0, True
            for a, b, e, c, d, f in _sym_maps(kind, p, q):
                ty, tx = a * ys + b * xs + e, c * ys + d * xs + f
                if ty.min() < 0 or tx.min() < 0 or ty.max() >= h or tx.max() >= w:
                    ok = False
                    break
                there = g[ty, tx]
                if ((there != bg) & (there != cols)).any():
                    ok = False
                    break
                score += int((there != bg).sum())
                empty = there == bg
                add[ty[empty], tx[empty]] = cols[empty]
            if ok and (best is None or score > best[0]):
                best = (score, add)
    if best is None:
        raise ValueError("no symmetry centre")
    return best[1]


def symmetrize_mark(g: Grid, kind: str, where: str, c: int, bg: int) -> Grid:
    """Complete the mirror/rotation symmetry ``kind`` (``h``, ``v``, ``hv``, ``rot``,
    ``diag`` as ``symmetrize``) of the whole grid (``where`` grid), of the
    non-background bounding box (bbox) or about the centre that fits the cells best
    (fit), painting the added cells ``c`` (-1: their mirror colour)."""
    if where == "fit":
        add = _fit_symmetry(g, kind, bg)
        s = np.where(add != bg, add, g)
    elif where == "grid":
        s = symmetrize(g, kind, bg)
    else:
        s = symmetrize_bbox(g, kind, bg)
    new = (g == bg) & (s != bg)
    if not new.any():
        raise ValueError("already symmetric")
    o = g.copy()
    o[new] = s[new] if c < 0 else c
    return o


def fill_largest_rect(g: Grid, e: int, c: int, mn: int) -> Grid:
    """Paint with ``c`` the largest (by area; first in reading order on ties) rectangle
    made only of colour ``e`` whose sides are at least ``mn`` long."""
    h, w = g.shape
    free = (g == e).astype(np.int64)
    up = np.zeros(w, dtype=np.int64)
    best = (0, 0, 0, 0, 0)  # area, y0, x0, y1, x1 (inclusive bottom row y1)
    for y in range(h):
        up = np.where(free[y] > 0, up + 1, 0)
        for x0 in range(w):
            hmin = 10**9
            for x1 in range(x0, w):
                hmin = min(hmin, int(up[x1]))
                if hmin < mn:
                    break
                if x1 - x0 + 1 < mn:
                    continue
                area = hmin * (x1 - x0 + 1)
                key = (area, -(y - hmin + 1), -x0)
                if key > (best[0], -best[1], -best[2]):
                    best = (area, y - hmin + 1, x0, y, x1)
    if best[0] < 2:
        raise ValueError("no rectangle")
    o = g.copy()
    o[best[1] : best[3] + 1, best[2] : best[4] + 1] = c
    return o


def complete_lines(g: Grid, c: int, reach: int, bg: int) -> Grid:
    """Mend broken lines: in the bounding box of every group of non-background cells
    (joined across ``reach`` - 1 empty cells), each row and column that is more than
    half filled gets its background cells painted ``c`` (-1: the line's commonest
    colour)."""
    o = g.copy()
    groups = _clusters(g != bg, reach)
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


def _lenient_segments(g: Grid, bg: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Row and column spans between full lines of one colour (the colour with the most
    full rows and columns, not the background), which may appear inside the cells
    too; falls back to :func:`_sep_segments` rules first."""
    try:
        return _sep_segments(g, bg)
    except ValueError:
        pass
    h, w = g.shape
    best: tuple[int, list[int], list[int]] | None = None
    for c in np.unique(g).tolist():
        if c == bg:
            continue
        rows = [y for y in range(h) if (g[y] == c).all()]
        cols = [x for x in range(w) if (g[:, x] == c).all()]
        if rows and cols and (best is None or len(rows) + len(cols) > len(best[1]) + len(best[2])):
            best = (int(c), rows, cols)
    if best is None:
        raise ValueError("no separator")
    return line_segments(best[1], h), line_segments(best[2], w)


def cell_expand(g: Grid, sel: str, bg: int) -> Grid:
    """For a grid cut by separator lines into n x m cells of n x m cells each: pick the
    one cell holding the fewest (``sel`` min) or the most (max) non-background cells,
    and fill every cell of the grid with the colour of the picked cell's pixel at the
    same position (background pixels give empty cells)."""
    rsegs, csegs = _lenient_segments(g, bg)
    hs, ws = {b - a for a, b in rsegs}, {b - a for a, b in csegs}
    if len(hs) != 1 or len(ws) != 1 or hs != {len(rsegs)} or ws != {len(csegs)}:
        raise ValueError("cells are not n x m of n x m")
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    counts = [int((g[y0:y1, x0:x1] != bg).sum()) for y0, y1, x0, x1 in cells]
    pick = min(counts) if sel == "min" else max(counts)
    if counts.count(pick) != 1:
        raise ValueError("no single cell to pick")
    y0, y1, x0, x1 = cells[counts.index(pick)]
    src = g[y0:y1, x0:x1].copy()
    o = g.copy()
    for i, (a0, a1) in enumerate(rsegs):
        for j, (b0, b1) in enumerate(csegs):
            o[a0:a1, b0:b1] = src[i, j]
    return o


def cell_template_mark(g: Grid, c: int, bg: int) -> Grid:
    """For a grid cut by separator lines into equal cells: the cell holding the most
    non-background cells is a template (ties must have one shape); in every other
    cell, the background cells where the template has something become ``c`` (-1: the
    separator colour)."""
    rsegs, csegs = _sep_segments(g, bg)
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 2 or len({(y1 - y0, x1 - x0) for y0, y1, x0, x1 in cells}) != 1:
        raise ValueError("no equal cells")
    counts = [int((g[y0:y1, x0:x1] != bg).sum()) for y0, y1, x0, x1 in cells]
    top = max(counts)
    tops = [g[y0:y1, x0:x1] != bg for y0, y1, x0, x1 in cells]
    tpl = tops[counts.index(top)]
    if top == 0 or any(
        not np.array_equal(m, tpl) for m, n in zip(tops, counts, strict=True) if n == top
    ):
        raise ValueError("no single template")
    if c < 0:
        r0 = rsegs[0][1] if rsegs[0][1] < g.shape[0] else -1
        c0 = csegs[0][1] if csegs[0][1] < g.shape[1] else -1
        if r0 >= 0:
            c = int(g[r0, 0])
        elif c0 >= 0:
            c = int(g[0, c0])
        else:
            raise ValueError("no separator line")
    o = g.copy()
    for a0, a1, b0, b1 in cells:
        part = o[a0:a1, b0:b1]
        part[tpl & (part == bg)] = c
    return o


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


def cell_key_place(g: Grid, k: int, bg: int) -> Grid:
    """For a grid cut by separator lines into n x m cells of n x m cells each: the one
    cell holding colour ``k`` is moved to the cell whose position in the grid is the
    position of ``k`` inside it (cells of the separator colour in it are cleared);
    every other cell is cleared."""
    rsegs, csegs = _lenient_segments(g, bg)
    hs, ws = {b - a for a, b in rsegs}, {b - a for a, b in csegs}
    if len(hs) != 1 or len(ws) != 1 or hs != {len(rsegs)} or ws != {len(csegs)}:
        raise ValueError("cells are not n x m of n x m")
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 4:
        raise ValueError("too few cells")
    hits = [cell for cell in cells if (g[cell[0] : cell[1], cell[2] : cell[3]] == k).any()]
    if len(hits) != 1:
        raise ValueError("no single key cell")
    y0, y1, x0, x1 = hits[0]
    part = g[y0:y1, x0:x1].copy()
    sep = int(g[rsegs[0][1], 0]) if len(rsegs) > 1 else int(g[0, csegs[0][1]])
    part[part == sep] = bg  # stray separator-coloured cells are noise
    ky, kx = np.nonzero(part == k)
    if ky.size != 1:
        raise ValueError("no single key")
    o = g.copy()
    for a0, a1, b0, b1 in cells:
        o[a0:a1, b0:b1] = bg
    (a0, a1), (b0, b1) = rsegs[int(ky[0])], csegs[int(kx[0])]
    o[a0:a1, b0:b1] = part
    return o


def mirror_marker(g: Grid, bg: int) -> Grid:
    """Objects (8-connected) of two colours: the commoner colour is the shape, the other
    a marker lying beyond one side of the shape's box. The shape is mirrored across
    that side (its copy in the shape's colour replaces the marker)."""
    h, w = g.shape
    objs = components(g, 8, 0, bg)
    if len(objs) > 20:
        raise ValueError("too many objects")
    o = g.copy()
    done = 0
    for ys, xs in objs:
        vals, cnt = np.unique(g[ys, xs], return_counts=True)
        if vals.size != 2 or cnt[0] == cnt[1]:
            continue
        main = int(vals[int(cnt[1] > cnt[0])])
        mk = g[ys, xs] != main
        my, mx, ky, kx = ys[~mk], xs[~mk], ys[mk], xs[mk]
        sides = [
            ("up", ky.max() < my.min()),
            ("down", ky.min() > my.max()),
            ("left", kx.max() < mx.min()),
            ("right", kx.min() > mx.max()),
        ]
        side = [n for n, ok in sides if ok]
        if len(side) != 1:
            continue
        if side[0] == "up":
            ty, tx = 2 * int(my.min()) - 1 - my, mx
        elif side[0] == "down":
            ty, tx = 2 * int(my.max()) + 1 - my, mx
        elif side[0] == "left":
            ty, tx = my, 2 * int(mx.min()) - 1 - mx
        else:
            ty, tx = my, 2 * int(mx.max()) + 1 - mx
        if ty.min() < 0 or tx.min() < 0 or ty.max() >= h or tx.max() >= w:
            raise ValueError("mirror leaves the grid")
        o[ky, kx] = bg
        o[ty, tx] = main
        done += 1
    if not done:
        raise ValueError("no marked object")
    return o


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


def border_marks(g: Grid, side: str, c: int, bg: int) -> Grid:
    """Drop a mark of colour ``c`` from every object (8-connected, one colour) onto the
    grid's border on ``side`` (down, up, left, right), at the object's centre column
    (or row); objects with no centre cell (an even span) are skipped."""
    h, w = g.shape
    objs = components(g, 8, 1, bg)
    if not objs or len(objs) > 30:
        raise ValueError("no objects or too many")
    o = g.copy()
    done = 0
    for ys, xs in objs:
        span = xs if side in ("down", "up") else ys
        lo, hi = int(span.min()), int(span.max())
        if (lo + hi) % 2:
            continue
        mid = (lo + hi) // 2
        y, x = {"down": (h - 1, mid), "up": (0, mid), "left": (mid, 0), "right": (mid, w - 1)}[side]
        o[y, x] = c
        done += 1
    if not done:
        raise ValueError("no object with a centre")
    return o


def mark_crossings(g: Grid, c: int, bg: int) -> Grid:
    """Where a full row and a full column of non-background cells cross, paint the 8
    cells around the crossing with ``c``."""
    fg = g != bg
    rows = np.nonzero(fg.all(axis=1))[0].tolist()
    cols = np.nonzero(fg.all(axis=0))[0].tolist()
    if not rows or not cols or len(rows) * len(cols) > 20:
        raise ValueError("no crossing or too many")
    o = g.copy()
    for y in rows:
        for x in cols:
            keep = int(g[y, x])
            o[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2] = c
            o[y, x] = keep
    return o


def stamp_markers(g: Grid, m: int, bg: int) -> Grid:
    """Copy the template centred on every marker cell (colour ``m``). The template is
    the bounding box (odd height and width) of the cells that are neither background,
    nor ``m``, nor on a full line of one colour (a separator); its non-background
    cells are painted."""
    h, w = g.shape
    line = np.zeros(g.shape, dtype=bool)
    line[(g == g[:, :1]).all(axis=1) & (g[:, 0] != bg)] = True
    line[:, (g == g[:1, :]).all(axis=0) & (g[0, :] != bg)] = True
    ty, tx = np.nonzero((g != bg) & (g != m) & ~line)
    my, mx = np.nonzero(g == m)
    if ty.size == 0 or my.size == 0 or my.size > 30:
        raise ValueError("no template or no markers")
    y0, x0 = int(ty.min()), int(tx.min())
    th, tw = int(ty.max()) - y0 + 1, int(tx.max()) - x0 + 1
    if th % 2 == 0 or tw % 2 == 0 or th * tw > 49:
        raise ValueError("template has no centre cell or is too big")
    tpl = g[y0 : y0 + th, x0 : x0 + tw].copy()
    keep = (tpl != bg) & ~line[y0 : y0 + th, x0 : x0 + tw]
    o = g.copy()
    for cy, cx in zip(my.tolist(), mx.tolist(), strict=True):
        for dy in range(th):
            for dx in range(tw):
                y, x = cy - th // 2 + dy, cx - tw // 2 + dx
                if keep[dy, dx] and 0 <= y < h and 0 <= x < w:
                    o[y, x] = tpl[dy, dx]
    return o


def _role_objects(g: Grid, bg: int) -> list[tuple[int, int, int, int]]:
    """Objects (8-connected, any colours) with a centre cell (odd box sides, at most
    5 x 5): (centre row, centre column, centre colour, other colour; -1 if none)."""
    objs = components(g, 8, 0, bg)
    if not objs or len(objs) > 30:
        raise ValueError("no objects or too many")
    out = []
    for ys, xs in objs:
        hh, ww = int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1
        if hh % 2 == 0 or ww % 2 == 0 or hh > 5 or ww > 5:
            raise ValueError("an object has no centre cell")
        cy, cx = int(ys.min()) + hh // 2, int(xs.min()) + ww // 2
        a = int(g[cy, cx])
        if a == bg:
            raise ValueError("empty centre")
        rest = g[ys, xs][g[ys, xs] != a]
        b = int(np.bincount(rest).argmax()) if rest.size else -1
        out.append((cy, cx, a, b))
    return out


def role_stamp(g: Grid, table: list[list[int]], bg: int) -> Grid:
    """Grow every object (8-connected, with a centre cell) by a pattern given relative
    to its centre and in colour roles: an entry ``[key, role]`` with
    ``key = (dy + 3) * 7 + (dx + 3)`` paints the background cell at offset (dy, dx)
    with the centre's colour (``role`` 0) or the object's other colour (1)."""
    h, w = g.shape
    o = g.copy()
    for cy, cx, a, b in _role_objects(g, bg):
        for key, role in table:
            dy, dx = divmod(int(key), 7)
            y, x = cy + dy - 3, cx + dx - 3
            col = a if role == 0 else b
            if 0 <= y < h and 0 <= x < w and g[y, x] == bg and col >= 0:
                o[y, x] = col
    return o


def anchor_copy(g: Grid, flip_c: int, bg: int) -> Grid:
    """Templates are the objects (8-connected, any colours) of two or more cells; a
    colour found once in a template is its anchor. Every lone cell whose colour
    anchors exactly one template gets a copy of that template placed so that the
    anchors meet (mirrored left-right when the colour is ``flip_c``; -1 never),
    painted over the background."""
    h, w = g.shape
    objs = components(g, 8, 0, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    temps = [ob for ob in objs if ob[0].size > 1]
    lone = [ob for ob in objs if ob[0].size == 1]
    o = g.copy()
    done = 0
    for ly, lx in lone:
        y, x = int(ly[0]), int(lx[0])
        k = int(g[y, x])
        hits = []
        for ys, xs in temps:
            sel = g[ys, xs] == k
            if int(sel.sum()) == 1:
                hits.append((ys, xs, int(ys[sel][0]), int(xs[sel][0])))
        if len(hits) != 1:
            continue
        ys, xs, ay, ax = hits[0]
        dx = (ax - xs) if k == flip_c else (xs - ax)
        ty, tx = y + ys - ay, x + dx
        ok = (ty >= 0) & (ty < h) & (tx >= 0) & (tx < w)
        cols = g[ys, xs]
        free = g[ty[ok], tx[ok]] == bg
        o[ty[ok][free], tx[ok][free]] = cols[ok][free]
        done += 1
    if not done:
        raise ValueError("no lone anchor cell")
    return o


def _d4_cells(cells: list[tuple[int, int, int]], k: int) -> list[tuple[int, int, int]]:
    """The cells (row, column, colour) turned by the ``k``-th of the 8 symmetries of the
    square (0 = unchanged, 1-3 = quarter turns, 4-7 = the same after a left-right
    mirror), shifted back to start at row and column 0."""
    out = []
    for y, x, c in cells:
        if k >= 4:
            x = -x
        for _ in range(k % 4):
            y, x = x, -y
        out.append((y, x, c))
    y0 = min(y for y, _, _ in out)
    x0 = min(x for _, x, _ in out)
    return [(y - y0, x - x0, c) for y, x, c in out]


_Fit = tuple[int, int, int, int, int, int, list[int], list[tuple[int, int, int]], int]
"""A fitting placement: sort key (5 ints), its index, the objects it covers, the cells
it paints, the template's index."""


def fit_templates(g: Grid, turns: str, mode: str, bg: int) -> Grid:
    """Complete templates at their marker pieces. A template is an object (8-connected,
    any colours) of two or more colours, or such an object cut to the bounding box of
    its commonest colour; a placement of it, scaled by 1-4 and turned
    or mirrored (``turns`` "d4"; "id": neither), fits when its (scaled) cells land on
    whole blocks of other objects' cells, every cell of those objects is covered, the
    covered colours follow a one-to-one colour map that keeps at least one colour,
    and every template cell of a kept colour is covered. Objects covered by a fitting
    placement are markers, not templates (unless they cover that template in turn, at
    the same or a larger scale). Placements covering the most cells go first (fewer
    recoloured colours, bigger templates, fewer turns, smaller scales break ties);
    each object is used once; the template is painted, in the mapped colours, over
    the background (with ``mode`` "move" the placed templates are erased first)."""
    key = (g.shape, g.tobytes(), turns, mode, bg)
    if key not in _CACHE_FIT:
        if len(_CACHE_FIT) > 500:
            _CACHE_FIT.clear()
        try:
            _CACHE_FIT[key] = _fit_templates(g, turns, mode, bg)
        except ValueError:
            _CACHE_FIT[key] = None
    hit = _CACHE_FIT[key]
    if hit is None:
        raise ValueError("no template fits")
    return hit.copy()  # type: ignore[no-any-return]


_CACHE_FIT: dict[Any, Any] = {}


def _fit_templates(g: Grid, turns: str, mode: str, bg: int) -> Grid:
    """:func:`fit_templates` without its cache."""
    h, w = g.shape
    objs = components(g, 8, 0, bg)
    if len(objs) > 60 or len(objs) < 2:
        raise ValueError("too few or too many objects")
    lab: Grid = np.full(g.shape, -1, dtype=np.int64)
    for i, (ys, xs) in enumerate(objs):
        lab[ys, xs] = i
    sizes = [int(ys.size) for ys, _ in objs]
    gl: list[list[int]] = g.tolist()
    labl: list[list[int]] = lab.tolist()
    nk = 8 if turns == "d4" else 1
    tries = 0
    cands: list[_Fit] = []
    # each object, and (when it sticks out) the object cut to the box of its
    # commonest colour: stray cells touching a template are not part of it
    variants = []
    for ti, (tys, txs) in enumerate(objs):
        variants.append((ti, tys, txs))
        vals = g[tys, txs]
        main = vals == int(np.bincount(vals).argmax())
        my, mx = tys[main], txs[main]
        cut = (tys >= my.min()) & (tys <= my.max()) & (txs >= mx.min()) & (txs <= mx.max())
        if not cut.all():
            variants.append((ti, tys[cut], txs[cut]))
    for ti, tys, txs in variants:
        tcols = set(g[tys, txs].tolist())
        if len(tcols) < 2 or tys.size > 40:
            continue
        base = list(
            zip(
                (tys - tys.min()).tolist(),
                (txs - txs.min()).tolist(),
                g[tys, txs].tolist(),
                strict=True,
            )
        )
        shapes = [_d4_cells(base, k) for k in range(nk)]
        seen: set[tuple[int, int, int, int]] = set()
        for oi, (oys, oxs) in enumerate(objs):
            if oi == ti:
                continue
            ovals = g[oys, oxs].tolist()
            first = [j for j, v in enumerate(ovals) if v in tcols]
            if not first:
                continue
            ay, ax, ac = int(oys[first[0]]), int(oxs[first[0]]), ovals[first[0]]
            # scales whose anchor block (from the anchor cell down-right) is whole
            scales = [s for s in range(1, 5) if (g[ay : ay + s, ax : ax + s] == ac).sum() == s * s]
            for k, cells in enumerate(shapes):
                for s in scales:
                    for cy, cx, cc in cells:
                        if cc != ac:
                            continue
                        oy, ox = ay - cy * s, ax - cx * s
                        if (k, s, oy, ox) in seen:
                            continue
                        seen.add((k, s, oy, ox))
                        tries += 1
                        if tries > 4000:
                            raise ValueError("too many placements to try")
                        fit = _fit_at(gl, labl, cells, s, oy, ox, ti, bg)
                        if fit is None:
                            continue
                        cmap, used, nblk = fit
                        if any(sz != sizes[i] for i, sz in used.items()):
                            continue
                        placed = []
                        for y, x, c in cells:
                            for dy in range(s):
                                for dx in range(s):
                                    placed.append(
                                        (oy + y * s + dy, ox + x * s + dx, cmap.get(c, c))
                                    )
                        moved = sum(a != b for a, b in cmap.items())
                        cands.append(
                            (-nblk, moved, -len(base), k, s, len(cands), sorted(used), placed, ti)
                        )
    # an object covered by a template's placement is a marker, unless it covers that
    # template in turn at the same or a larger scale
    cover: dict[tuple[int, int], int] = {}
    for cand in cands:
        for i in cand[6]:
            cover[cand[8], i] = max(cover.get((cand[8], i), 0), cand[4])
    markers = {i for (t, i), sc in cover.items() if cover.get((i, t), 0) < sc}
    cands = [cand for cand in cands if cand[8] not in markers]
    cands.sort(key=lambda t: t[:6])
    o = g.copy()
    done: set[int] = set()
    keep = []
    for cand in cands:
        if done.intersection(cand[6]):
            continue
        done.update(cand[6])
        keep.append(cand)
        if mode == "move":
            ys, xs = objs[cand[8]]
            o[ys, xs] = bg
    for cand in keep:
        for y, x, c in cand[7]:
            if 0 <= y < h and 0 <= x < w and o[y, x] == bg:
                o[y, x] = c
    return o


def _fit_at(
    gl: list[list[int]],
    labl: list[list[int]],
    cells: list[tuple[int, int, int]],
    s: int,
    oy: int,
    ox: int,
    ti: int,
    bg: int,
) -> tuple[dict[int, int], dict[int, int], int] | None:
    """Check one placement for :func:`fit_templates` (grid and object labels as
    nested lists): (colour map, covered cell count per object, covered template
    cells), or None when it does not fit."""
    h, w = len(gl), len(gl[0])
    cmap: dict[int, int] = {}
    used: dict[int, int] = {}
    hit: dict[int, int] = {}
    nblk = 0
    for y, x, c in cells:
        y0, x0 = oy + y * s, ox + x * s
        y1, x1 = max(y0, 0), max(x0, 0)
        y2, x2 = min(y0 + s, h), min(x0 + s, w)
        if y1 >= y2 or x1 >= x2:
            continue
        v = gl[y1][x1]
        li = labl[y1][x1]
        for yy in range(y1, y2):
            for xx in range(x1, x2):
                if gl[yy][xx] != v or labl[yy][xx] != li:
                    return None
        if v == bg:
            continue
        if li == ti or cmap.setdefault(c, v) != v:
            return None
        used[li] = used.get(li, 0) + (y2 - y1) * (x2 - x1)
        hit[c] = hit.get(c, 0) + 1
        nblk += 1
    if len(set(cmap.values())) < len(cmap) or not any(a == b for a, b in cmap.items()):
        return None
    tcols = [c for _, _, c in cells]
    if any(a == b and hit[a] != tcols.count(a) for a, b in cmap.items()):
        return None
    return cmap, used, nblk


def cell_fit_templates(g: Grid, turns: str, bg: int) -> Grid:
    """:func:`fit_templates` (copies) on a grid cut by separator lines into cells,
    each cell read as one pixel (its commonest non-background colour); the cells that
    the templates paint are filled whole."""
    rsegs, csegs = _sep_segments(g, bg)
    small = cells_to_pixels(g, bg)
    new = fit_templates(small, turns, "copy", bg)
    o = g.copy()
    for i, (y0, y1) in enumerate(rsegs):
        for j, (x0, x1) in enumerate(csegs):
            if new[i, j] != small[i, j]:
                part = o[y0:y1, x0:x1]
                part[part == bg] = new[i, j]
    return o


def repeat_toward(g: Grid, bg: int) -> Grid:
    """Repeat the largest object (one colour, 8-connected) toward each other object:
    the nearest shift of it along one of the 8 directions (straight or diagonal) that
    covers the other object, keeps its bounding box a
    cell or more clear of the original's, and meets nothing but background and the other object's
    colour, gives the step (objects with two nearest shifts are skipped); copies in
    the other object's colour follow at every step to the grid's edge, painted over
    the background."""
    h, w = g.shape
    objs = components(g, 8, 1, bg)
    if len(objs) < 2 or len(objs) > 12:
        raise ValueError("too few or too many objects")
    sizes = sorted((int(ys.size) for ys, _ in objs), reverse=True)
    if sizes[0] == sizes[1] or sizes[0] > 60:
        raise ValueError("no single largest object")
    tys, txs = next((ys, xs) for ys, xs in objs if ys.size == sizes[0])
    tcells = list(zip(tys.tolist(), txs.tolist(), strict=True))
    th, tw = int(tys.max() - tys.min()) + 1, int(txs.max() - txs.min()) + 1
    o = g.copy()
    done = 0
    for ys, xs in objs:
        if ys.size == sizes[0]:
            continue
        c = int(g[ys[0], xs[0]])
        ocells = list(zip(ys.tolist(), xs.tolist(), strict=True))
        best: set[tuple[int, int, int]] = set()
        for oy, ox in ocells:
            for ty, tx in tcells:
                sy, sx = oy - ty, ox - tx
                if sy and sx and abs(sy) != abs(sx):
                    continue
                cover = {(y + sy, x + sx) for y, x in tcells}
                if (abs(sy) <= th and abs(sx) <= tw) or not cover.issuperset(ocells):
                    continue
                if any(
                    0 <= y < h and 0 <= x < w and g[y, x] != bg and g[y, x] != c for y, x in cover
                ):
                    continue
                best.add((abs(sy) + abs(sx), sy, sx))
        ranked = sorted(best)
        if not ranked or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
            continue
        _, sy, sx = ranked[0]
        for k in range(1, 31):
            py, px = tys + k * sy, txs + k * sx
            ok = (py >= 0) & (py < h) & (px >= 0) & (px < w)
            if not ok.any():
                break
            free = o[py[ok], px[ok]] == bg
            o[py[ok][free], px[ok][free]] = c
        done += 1
    if not done:
        raise ValueError("no object to repeat toward")
    return o


def _shape_key(ys: Grid, xs: Grid) -> tuple[tuple[int, int], ...]:
    """The cells of a shape shifted to start at row and column 0, sorted."""
    return tuple(sorted(zip((ys - ys.min()).tolist(), (xs - xs.min()).tolist(), strict=True)))


def pieces_into_holes(g: Grid, turns: str, bg: int) -> Grid:
    """Move pieces into the holes they fit: a hole is a region of background
    (4-connected) that does not touch the grid's edge; a piece is an object (one
    colour, 4-connected) of exactly the hole's shape (shifted; with ``turns`` "d4"
    also turned or mirrored). A hole with exactly one such piece (or, among several,
    exactly one whose colour forms no other object) gets it, each piece once, and
    the piece's old cells become background."""
    h, w = g.shape
    free = (g == bg).astype(np.int64)
    holes = []
    for ys, xs in components(free, 4, 1, 0):
        if ys.min() > 0 and xs.min() > 0 and ys.max() < h - 1 and xs.max() < w - 1:
            holes.append((ys, xs))
    if not holes or len(holes) > 20:
        raise ValueError("no holes or too many")
    pieces: dict[tuple[tuple[int, int], ...], list[int]] = {}
    objs = components(g, 4, 1, bg)
    nobj = np.bincount([int(g[ys[0], xs[0]]) for ys, xs in objs], minlength=10)
    for i, (ys, xs) in enumerate(objs):
        if ys.size > 40:
            continue
        cells = [(y, x, 0) for y, x in _shape_key(ys, xs)]
        keys = {tuple(sorted((y, x) for y, x, _ in _d4_cells(cells, k))) for k in range(8)}
        for key in keys if turns == "d4" else [_shape_key(ys, xs)]:
            pieces.setdefault(key, []).append(i)
    o = g.copy()
    moved: list[tuple[int, Grid, Grid]] = []
    used: set[int] = set()
    for hy, hx in holes:
        cands = [i for i in pieces.get(_shape_key(hy, hx), []) if i not in used]
        if len(cands) > 1:
            cands = [i for i in cands if nobj[g[objs[i][0][0], objs[i][1][0]]] == 1]
        if len(cands) != 1:
            continue
        used.add(cands[0])
        moved.append((cands[0], hy, hx))
    if not moved:
        raise ValueError("no piece fits a hole")
    for i, _, _ in moved:
        o[objs[i]] = bg
    for i, hy, hx in moved:
        o[hy, hx] = g[objs[i][0][0], objs[i][1][0]]
    return o


def spill_cups(g: Grid, bg: int) -> Grid:
    """Fill open containers with their contents' colour, spilling out of the opening:
    a container is an object (one colour, 8-connected) whose bounding box holds cells
    of exactly one other colour and whose box edge has gaps on exactly one side. The
    background in its box takes the other colour, and so does the line just outside
    that side, as long as the box."""
    h, w = g.shape
    o = g.copy()
    done = 0
    for ys, xs in components(g, 8, 1, bg):
        a = int(g[ys[0], xs[0]])
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        box = g[y0 : y1 + 1, x0 : x1 + 1]
        cols = np.unique(box[(box != bg) & (box != a)]).tolist()
        if len(cols) != 1 or ys.size < 5:
            continue
        c = int(cols[0])
        sides = {"up": box[0], "down": box[-1], "left": box[:, 0], "right": box[:, -1]}
        open_ = [k for k, v in sides.items() if (v == bg).any()]
        if len(open_) != 1 or y1 - y0 < 2 or x1 - x0 < 2:
            continue
        sub = o[y0 : y1 + 1, x0 : x1 + 1]
        sub[box == bg] = c
        side = open_[0]
        if side in ("up", "down"):
            y = y0 - 1 if side == "up" else y1 + 1
            if 0 <= y < h:
                row = o[y, x0 : x1 + 1]
                row[row == bg] = c
        else:
            x = x0 - 1 if side == "left" else x1 + 1
            if 0 <= x < w:
                col = o[y0 : y1 + 1, x]
                col[col == bg] = c
        done += 1
    if not done:
        raise ValueError("no open container")
    return o


def extend_rings(g: Grid, bg: int) -> Grid:
    """Three cells of one colour on a diagonal, evenly spaced: square ring outlines
    centred on the middle one, every spacing apart (the outer two cells are corners
    of the first ring), drawn out to the grid's edge."""
    ys, xs = np.nonzero(g != bg)
    if ys.size != 3 or np.unique(g[ys, xs]).size != 1:
        raise ValueError("not three cells of one colour")
    order = np.argsort(ys, kind="stable")
    ys, xs = ys[order], xs[order]
    d = int(ys[1] - ys[0])
    if d < 1 or int(ys[2] - ys[1]) != d or abs(int(xs[1] - xs[0])) != d:
        raise ValueError("not evenly spaced on a diagonal")
    if int(xs[2] - xs[1]) != int(xs[1] - xs[0]):
        raise ValueError("not on one line")
    h, w = g.shape
    cy, cx, c = int(ys[1]), int(xs[1]), int(g[ys[1], xs[1]])
    o = g.copy()
    for k in range(1, 31):
        r = k * d
        y0, y1, x0, x1 = cy - r, cy + r, cx - r, cx + r
        if y0 < 0 and x0 < 0 and y1 >= h and x1 >= w:
            break
        for y in (y0, y1):
            if 0 <= y < h:
                o[y, max(x0, 0) : min(x1, w - 1) + 1] = c
        for x in (x0, x1):
            if 0 <= x < w:
                o[max(y0, 0) : min(y1, h - 1) + 1, x] = c
    return o


OP_TABLE: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("snap_to_line", snap_to_line, ("g", "b", "c")),
    ("recolor_nearest", recolor_nearest, ("g", "c", ("row", "col", "orow", "ocol", "any"), "c")),
    ("bounce", bounce, ("g", "c")),
    ("fill_gaps", fill_gaps, ("g", "cd", "cd", ("h", "v", "hv"), "k", "c")),
    ("fill_squares", fill_squares, ("g", "k", "k", "c", "c")),
    ("stride_recolor", stride_recolor, ("g", "c", "c", ("rows", "cols"), "k", "b")),
    ("denoise", denoise, ("g", ("iso4", "iso8", "sq2"), "c")),
    ("recolor_extremes", recolor_extremes, ("g", _FEATS, "cd", "cd", "cd", "c")),
    ("recolor_if", recolor_if, ("g", _FEATS, "il", "cd", "cd", "conn", "c")),
    ("move_by_size", move_by_size, ("g", ("down", "up", "left", "right"), "c")),
    ("recolor_except", recolor_except, ("g", "c", "c")),
    ("fill_empty_lines", fill_empty_lines, ("g", "c", "c", ("full", "inner"))),
    ("swap_other", swap_other, ("g", "c", "cd")),
    ("complete_templates", complete_templates, ("g", "c")),
    ("hollow", hollow, ("g", "c")),
    ("connect_layered", connect_layered, ("g", ("h", "v"), "c")),
    ("ring_colors", ring_colors, ("g", ("rev", "out", "in"))),
    ("extend_ends", extend_ends, ("g", "c")),
    ("connect_l", connect_l, ("g", "c", "c", ("h", "v"), "c", "c")),
    ("fill_holes", fill_holes, ("g", ("rect", "square", "even", "odd"), "c", "c")),
    ("halo_if", halo_if, ("g", _FEATS, "il", "c", "c")),
    ("mark_contact", mark_contact, ("g", "c")),
    ("corner_rays", corner_rays, ("g", ("empty", "full", "all"), ("own", "inside"), "c")),
    ("obj_diag_ray", obj_diag_ray, ("g", "c", tuple(_DIAG4), "c")),
    ("cell_connect", cell_connect, ("g", "c")),
    ("dashed_rays", dashed_rays, ("g", tuple(_HV4D), "c", "c")),
    ("center_lines", center_lines, ("g", "c", ("h", "v", "hv"), "c")),
    ("fill_corners", fill_corners, ("g", "c", "c")),
    ("cell_broadcast", cell_broadcast, ("g", "c")),
    ("diag_period_fill", diag_period_fill, ("g", "c")),
    ("cell_max_fill", cell_max_fill, ("g", "c")),
    ("snap_to_wall", snap_to_wall, ("g", "c")),
    ("recolor_by_dot", recolor_by_dot, ("g", "c")),
    ("recolor_matching", recolor_matching, ("g", ("inner", "frame"), "b", "c")),
    ("flood_alternate", flood_alternate, ("g", "c")),
    ("corner_marks", corner_marks, ("g", ("dot", "same"), ("fixed", "opp"), "cl", "c")),
    ("midpoint_mark", midpoint_mark, ("g", ("dot", "plus"), "c", "c")),
    ("bridge", bridge, ("g", "c", "b", "c")),
    ("cross_swap", cross_swap, ("g", "c")),
    ("meet_middle", meet_middle, ("g", "c", ("h", "v", "hv"), "c")),
    ("half_recolor", half_recolor, ("g", tuple(_HV4D), "c", "c")),
    ("frame_in_markers", frame_in_markers, ("g", "cd", "c")),
    ("stretch_to_dot", stretch_to_dot, ("g", "c")),
    ("step_toward", step_toward, ("g", "c", "c", "c")),
    ("keep_center_line", keep_center_line, ("g", ("h", "v"), "c")),
    ("alternate_cells", alternate_cells, ("g", "c", "c", "c")),
    ("merge_touching", merge_touching, ("g", "c", "c", "cd", "c")),
    ("wall_rays", wall_rays, ("g", "c", "b", "c")),
    ("recolor_in_box", recolor_in_box, ("g", "c", "cd", "c", "k", "c")),
    (
        "pointer_ray",
        pointer_ray,
        ("g", "cd", ("toward", "away"), ("line", "sweep"), ("marker", "main"), "c"),
    ),
    (
        "symmetrize_mark",
        symmetrize_mark,
        ("g", ("h", "v", "hv", "rot", "diag"), ("grid", "bbox", "fit"), "cd", "c"),
    ),
    ("fill_largest_rect", fill_largest_rect, ("g", "c", "c", "k")),
    ("complete_lines", complete_lines, ("g", "cd", "k", "c")),
    ("cell_expand", cell_expand, ("g", ("min", "max"), "c")),
    ("cell_template_mark", cell_template_mark, ("g", "cd", "c")),
    ("diag_bounce", diag_bounce, ("g", "cd", "c")),
    ("cell_key_place", cell_key_place, ("g", "c", "c")),
    ("mirror_marker", mirror_marker, ("g", "c")),
    ("checker_interior", checker_interior, ("g", "b", "c", "c")),
    ("border_marks", border_marks, ("g", tuple(_HV4D), "c", "c")),
    ("mark_crossings", mark_crossings, ("g", "c", "c")),
    ("stamp_markers", stamp_markers, ("g", "c", "c")),
    ("role_stamp", role_stamp, ("g", "table", "c")),
    ("anchor_copy", anchor_copy, ("g", "cd", "c")),
    ("fit_templates", fit_templates, ("g", ("id", "d4"), ("copy", "move"), "c")),
    ("repeat_toward", repeat_toward, ("g", "c")),
    ("cell_fit_templates", cell_fit_templates, ("g", ("id", "d4"), "c")),
    ("pieces_into_holes", pieces_into_holes, ("g", ("id", "d4"), "c")),
    ("spill_cups", spill_cups, ("g", "c")),
    ("extend_rings", extend_rings, ("g", "c")),
]
"""(name, primitive, argument kinds) as in :func:`atlas_actors.arc.dsl._ops`."""


# ---------------------------------------------------------------- generators


def g_snap_to_line(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, and some colour's cells moved (the non-background count kept or
    shrunk)."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        if int((t != ctx.bg).sum()) > int((s != ctx.bg).sum()):
            return
    if all((s == t).all() for s, t in ctx.pairs):
        return
    yield (0, ctx.bg)
    yield (1, ctx.bg)


def g_recolor_nearest(ctx: Ctx) -> Iterator[Args]:
    """Only cells of one colour change (to other colours already in the grid)."""
    if not ctx.same_shape or ctx.depth > 1:
        return
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


def g_bounce(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows and all(1 <= int((s != ctx.bg).sum()) <= 4 for s in ctx.states):
        yield (ctx.bg,)


def g_fill_gaps(ctx: Ctx) -> Iterator[Args]:
    """Infer which gaps are filled: the pairs' colour or one fill colour, along which
    axis, and the longest gap filled (every longer gap must stay open)."""
    if not ctx.grows or ctx.depth > 1:
        return
    pairs = ctx.pairs
    painted: list[Grid] = []
    for s, t in pairs:
        d = s != t
        if (s[d] != ctx.bg).any():
            return
        painted.append(d)
    fills = {int(v) for (_, t), d in zip(pairs, painted, strict=True) for v in np.unique(t[d])}
    cands = [c for c in ctx.state_colors[:4]]
    found = 0
    for axis in ("h", "v", "hv"):
        for c in (-1, *cands):
            for fill in sorted(fills) if len(fills) == 1 else [-1]:
                longest, shortest_open, ok = 0, 99, True
                for (s, t), d in zip(pairs, painted, strict=True):
                    cover = np.zeros(s.shape, dtype=bool)
                    for ys, xs, col in _gaps(s, c, axis, ctx.bg):
                        want = col if fill < 0 else fill
                        got = t[ys, xs]
                        if (got == want).all():
                            cover[ys, xs] = True
                            longest = max(longest, int(ys.size))
                        elif (got == ctx.bg).all():
                            shortest_open = min(shortest_open, int(ys.size))
                        else:
                            ok = False
                            break
                    if not ok or (d & ~cover).any():
                        ok = False
                        break
                if ok and 0 < longest < shortest_open:
                    yield (c, fill, axis, longest, ctx.bg)
                    found += 1
                    if found >= 3:
                        return


def _fits(ctx: Ctx, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` is the target for every train pair."""
    try:
        return all(np.array_equal(fn(s, *args), t) for s, t in ctx.pairs)
    except ValueError:
        return False


def _paints_in(pairs: list[tuple[Grid, Grid]], c: int, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` changes some cells of every train state, and the target has
    colour ``c`` on all of them."""
    for s, t in pairs:
        try:
            new = fn(s, *args) != s
        except ValueError:
            return False
        if not new.any() or (t[new] != c).any():
            return False
    return True


def _change(ctx: Ctx) -> tuple[list[int], list[int]] | None:
    """Per pair, the one colour the changed cells had and the one they got (None if
    any pair changes more than one colour into one colour, or nothing changes)."""
    src, dst = [], []
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return None
        a, b = np.unique(s[d]), np.unique(t[d])
        if a.size != 1 or b.size != 1:
            return None
        src.append(int(a[0]))
        dst.append(int(b[0]))
    return src, dst


def g_fill_squares(ctx: Ctx) -> Iterator[Args]:
    """Background windows of one size painted one colour: try small sizes."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1 or len(set(ch[0])) != 1:
        return
    e, c = ch[0][0], ch[1][0]
    s0, t0 = ctx.train[0], ctx.targets[0]
    painted = np.where(s0 != t0, 1, 0)
    sizes: set[tuple[int, int]] = set()
    for ys, xs in components(painted, 4, 1, 0)[:20]:
        bh, bw = int(ys.max() - ys.min() + 1), int(xs.max() - xs.min() + 1)
        for kh in {bh, min(bh, bw)}:
            for kw in {bw, min(bh, bw)}:
                if kh * kw >= 2 and kh <= 6 and kw <= 6:
                    sizes.add((kh, kw))
    for kh, kw in sorted(sizes)[:4]:
        if _fits(ctx, fill_squares, kh, kw, e, c):
            yield (kh, kw, e, c)


def g_stride_recolor(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape or ctx.depth > 1:
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[0])) != 1 or len(set(ch[1])) != 1:
        return
    a, b = ch[0][0], ch[1][0]
    for axis in ("cols", "rows"):
        for k in range(2, 5):
            for anchor in (0, 1):
                if _fits(ctx, stride_recolor, a, b, axis, k, anchor):
                    yield (a, b, axis, k, anchor)


def g_denoise(ctx: Ctx) -> Iterator[Args]:
    """Only erasures: every target cell is background or as in the state."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        if ((t != s) & (t != ctx.bg)).any():
            return
    if all((s == t).all() for s, t in ctx.pairs):
        return
    for mode in ("iso4", "iso8", "sq2"):
        yield (mode, ctx.bg)


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


def g_recolor_extremes(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape or ctx.depth > 1:
        return
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


def g_recolor_if(ctx: Ctx) -> Iterator[Args]:
    """Objects fall in two target classes (a colour, or unchanged) told apart by one
    feature: the values of the smaller class."""
    if not ctx.same_shape or ctx.depth > 1:
        return
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


def g_move_by_size(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        if int((s != ctx.bg).sum()) != int((t != ctx.bg).sum()):
            return
    if all((s == t).all() for s, t in ctx.pairs):
        return
    for d in ("down", "up", "left", "right"):
        yield (d, ctx.bg)


def _cmaps(ctx: Ctx) -> list[dict[int, int]] | None:
    """Per pair, the cell-wise colour map state -> target (None if there is none)."""
    from atlas_actors.arc.infer import pair_cmap

    out = []
    for s, t in ctx.pairs:
        m = pair_cmap(s, t)
        if m is None:
            return None
        out.append(m)
    return out


def g_swap_colors(ctx: Ctx) -> Iterator[Args]:
    """Per-pair colour maps where colour ``a`` takes the place of another colour ``b`` of
    the same grid, the colours varying per pair (given as roles): swap them, and the
    final colour map does the rest."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    from atlas_actors.arc.infer import _specs

    maps = _cmaps(ctx)
    if maps is None:
        return
    found = 0
    for a in [*sorted({a for m in maps for a in m}), 10, 11, 12, 13]:
        try:
            src = [prims.role_color(s, a) for s in ctx.train]
        except ValueError:
            continue
        dst = [m.get(x, -1) for m, x in zip(maps, src, strict=True)]
        if any(b < 0 or b == x or b not in m for b, x, m in zip(dst, src, maps, strict=True)):
            continue
        if len(set(dst)) == 1 and len(set(src)) == 1:
            continue  # a plain colour map
        for b in _specs(ctx.train, dst)[:2]:
            yield (a, b)
            found += 1
            if found >= 3:
                return


def g_recolor_except(ctx: Ctx) -> Iterator[Args]:
    """All colours but one (kept) become one colour."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    from atlas_actors.arc.infer import _specs

    maps = _cmaps(ctx)
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
    for k in _specs(ctx.train, keeps)[:2]:
        for c in _specs(ctx.train, cs)[:2]:
            yield (k, c)


def g_fill_empty_lines(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape or ctx.depth > 1:
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[0])) != 1 or len(set(ch[1])) != 1:
        return
    for mode in ("full", "inner"):
        if _fits(ctx, fill_empty_lines, ch[0][0], ch[1][0], mode):
            yield (ch[0][0], ch[1][0], mode)


def g_swap_other(ctx: Ctx) -> Iterator[Args]:
    """Colour ``a`` takes the place of the grid's one other colour, which varies."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    maps = _cmaps(ctx)
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


def g_complete_templates(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows and ctx.depth <= 1:
        yield (ctx.bg,)


def g_hollow(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        if ((t != s) & (t != ctx.bg)).any() or (s == t).all():
            return
    yield (ctx.bg,)


def g_connect_layered(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows and ctx.depth <= 1:
        yield ("h", ctx.bg)
        yield ("v", ctx.bg)


def g_ring_colors(ctx: Ctx) -> Iterator[Args]:
    """Same shapes and the same cells per colour, colours permuted."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    if _cmaps(ctx) is None:
        return
    for mode in ("rev", "out", "in"):
        yield (mode,)


def g_extend_ends(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows and ctx.depth <= 1:
        yield (ctx.bg,)


def g_connect_l(ctx: Ctx) -> Iterator[Args]:
    """Two colours with one cell each in every state; the path colour is the one
    colour painted."""
    if not ctx.grows or ctx.depth > 1:
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1 or set(ch[0]) != {ctx.bg}:
        return
    singles = [c for c in ctx.state_colors[:6] if all(int((s == c).sum()) == 1 for s in ctx.states)]
    for a in singles:
        for b in singles:
            for first in ("v", "h"):
                if a != b and _fits(ctx, connect_l, a, b, first, ch[1][0], ctx.bg):
                    yield (a, b, first, ch[1][0], ctx.bg)


def g_fill_holes(ctx: Ctx) -> Iterator[Args]:
    """Only enclosed background cells are painted."""
    if not ctx.grows or ctx.depth > 1:
        return
    cols: set[int] = set()
    for s, t in ctx.pairs:
        d = s != t
        if (d & ~_enclosed(s == ctx.bg)).any():
            return
        cols |= set(np.unique(t[d]).tolist())
    for c in sorted(cols)[:2]:
        for kind in ("rect", "square", "even", "odd"):
            yield (kind, c, ctx.bg)


def g_halo_if(ctx: Ctx) -> Iterator[Args]:
    """Painted one colour around some objects only: the feature value(s) of those
    objects, when no unpainted object shares them."""
    if not ctx.grows or ctx.depth > 1:
        return
    ch = _change(ctx)
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
        if ok and _fits(ctx, halo_if, feat, sorted(yes), c, ctx.bg):
            yield (feat, sorted(yes), c, ctx.bg)
            return


def g_mark_contact(ctx: Ctx) -> Iterator[Args]:
    """Only non-background cells change, to colours already in the grid."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        d = s != t
        if (s[d] == ctx.bg).any() or (t[d] == ctx.bg).any():
            return
    if all((s == t).all() for s, t in ctx.pairs):
        return
    yield (ctx.bg,)


def _painted_only(ctx: Ctx) -> bool:
    """Only background cells change (nothing is erased or recoloured)."""
    return ctx.grows and all(not (s[s != t] != ctx.bg).any() for s, t in ctx.pairs)


def g_corner_rays(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: try each corner choice and colour rule."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    for which in ("empty", "full", "all"):
        for cmode in ("own", "inside"):
            if _fits(ctx, corner_rays, which, cmode, ctx.bg):
                yield (which, cmode, ctx.bg)
                return


def g_obj_diag_ray(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted; a colour and direction whose rays paint only
    cells the target gives that colour (in every pair, some of them)."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    pairs = ctx.pairs
    for c in ctx.state_colors[:5]:
        if c == ctx.bg:
            continue
        for d in _DIAG4:
            if _paints_in(pairs, c, obj_diag_ray, c, d, ctx.bg):
                yield (c, d, ctx.bg)


def _has_cells(ctx: Ctx) -> bool:
    """Every train state is cut into two or more cells by separator lines."""
    try:
        for s in ctx.train:
            rsegs, csegs = _sep_segments(s, ctx.bg)
            if len(rsegs) * len(csegs) < 2:
                return False
    except ValueError:
        return False
    return True


def g_cell_connect(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, in grids cut into cells by separator lines."""
    if ctx.depth <= 1 and _painted_only(ctx) and _has_cells(ctx):
        yield (ctx.bg,)


def g_cell_broadcast(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, in grids cut into cells by separator lines."""
    if ctx.depth <= 1 and _painted_only(ctx) and _has_cells(ctx):
        yield (ctx.bg,)


def g_fill_corners(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    if ch is not None and len(set(ch[1])) == 1:
        yield (ch[1][0], ctx.bg)


def g_dashed_rays(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (at depth 0): a painted colour and a direction
    that fit every pair."""
    if ctx.depth > 0 or not _painted_only(ctx):
        return
    common: set[int] | None = None
    for s, t in ctx.pairs:
        cols = {int(v) for v in np.unique(t[s != t])}
        common = cols if common is None else common & cols
    for c2 in sorted(common or ())[:2]:
        for d in _HV4D:
            if _fits(ctx, dashed_rays, d, c2, ctx.bg):
                yield (d, c2, ctx.bg)
                return


def g_center_lines(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for axis in ("hv", "h", "v"):
        yield (ch[1][0], axis, ctx.bg)


def g_diag_period_fill(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, and the targets have no background left."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    if all((t != ctx.bg).all() for t in ctx.targets):
        yield (ctx.bg,)


def g_cell_max_fill(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, something changes, in grids cut into cells by separator lines."""
    if ctx.depth > 1 or not ctx.same_shape or not _has_cells(ctx):
        return
    if not all((s == t).all() for s, t in ctx.pairs):
        yield (ctx.bg,)


def g_snap_to_wall(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, something changes, and no target has more non-background cells
    than its state."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    pairs = ctx.pairs
    if all((s == t).all() for s, t in pairs):
        return
    if all(int((t != ctx.bg).sum()) <= int((s != ctx.bg).sum()) for s, t in pairs):
        yield (ctx.bg,)


def g_recolor_by_dot(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; per pair exactly one cell is erased and none painted on."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    for s, t in ctx.pairs:
        fs, ft = s != ctx.bg, t != ctx.bg
        if int((fs & ~ft).sum()) != 1 or (ft & ~fs).any():
            return
    yield (ctx.bg,)


def g_recolor_matching(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; only non-background cells change, to non-background colours."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    pairs = ctx.pairs
    for s, t in pairs:
        d = s != t
        if (s[d] == ctx.bg).any() or (t[d] == ctx.bg).any():
            return
    if all((s == t).all() for s, t in pairs):
        return
    for mode in ("inner", "frame"):
        for closed in (1, 0):
            yield (mode, closed, ctx.bg)


def g_flood_alternate(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, with two colours."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    if all(np.unique(t[s != t]).size == 2 for s, t in ctx.pairs):
        yield (ctx.bg,)


def g_wall_rays(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted; a colour and a side of the wall whose rays paint
    only cells the target gives that colour (in every pair, some of them)."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    pairs = ctx.pairs
    for c in ctx.state_colors[:5]:
        if c == ctx.bg:
            continue
        for toward in (1, 0):
            if _paints_in(pairs, c, wall_rays, c, toward, ctx.bg):
                yield (c, toward, ctx.bg)


def g_corner_marks(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: read the four corner colours off the first
    pair's first object (or take the opposite cells) and keep what fits."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    s, t = ctx.pairs[0]
    objs = components(s, 8, 0, ctx.bg)
    if not objs or len(objs) > 30:
        return
    ys, xs = objs[0]
    y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
    h, w = s.shape
    spots = ((y0 - 1, x0 - 1), (y0 - 1, x1 + 1), (y1 + 1, x0 - 1), (y1 + 1, x1 + 1))
    if all(0 <= y < h and 0 <= x < w for y, x in spots):
        cols = [int(t[y, x]) for y, x in spots]
        if ctx.bg not in cols and _fits(ctx, corner_marks, "dot", "fixed", cols, ctx.bg):
            yield ("dot", "fixed", cols, ctx.bg)
    for size in ("dot", "same"):
        if _fits(ctx, corner_marks, size, "opp", [0], ctx.bg):
            yield (size, "opp", [0], ctx.bg)


def g_midpoint_mark(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour: try a dot and a plus."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for shape in ("dot", "plus"):
        if _fits(ctx, midpoint_mark, shape, ch[1][0], ctx.bg):
            yield (shape, ch[1][0], ctx.bg)


def g_bridge(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour: try both insets."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for inset in (0, 1):
        if _fits(ctx, bridge, ch[1][0], inset, ctx.bg):
            yield (ch[1][0], inset, ctx.bg)


def g_cross_swap(ctx: Ctx) -> Iterator[Args]:
    """Some full rows and columns in every state, and only their crossing changes."""
    if ctx.depth > 1 or any(s.shape != t.shape for s, t in ctx.pairs):
        return
    if _fits(ctx, cross_swap, ctx.bg):
        yield (ctx.bg,)


def g_meet_middle(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: the middle colour is a target colour that no
    state has (or the background when nothing needs it)."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    pairs = ctx.pairs
    new = set(np.unique(np.concatenate([t[s != t] for s, t in pairs])).tolist())
    for c in [*sorted(new), ctx.bg]:
        for axis in ("h", "v", "hv"):
            if _fits(ctx, meet_middle, c, axis, ctx.bg):
                yield (c, axis, ctx.bg)
                return


def g_half_recolor(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour recoloured to one colour in every pair: try each side."""
    if ctx.depth > 1 or any(s.shape != t.shape for s, t in ctx.pairs):
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1 or ctx.bg in ch[0]:
        return
    for side in _HV4D:
        if _fits(ctx, half_recolor, side, ch[1][0], ctx.bg):
            yield (side, ch[1][0], ctx.bg)


def g_frame_in_markers(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all with one colour: that colour or the other
    objects' colour."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    if ch is None:
        return
    if _fits(ctx, frame_in_markers, -1, ctx.bg):
        yield (-1, ctx.bg)
    elif len(set(ch[1])) == 1 and _fits(ctx, frame_in_markers, ch[1][0], ctx.bg):
        yield (ch[1][0], ctx.bg)


def g_stretch_to_dot(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, more non-background cells in every target."""
    if ctx.depth <= 1 and ctx.grows and _fits(ctx, stretch_to_dot, ctx.bg):
        yield (ctx.bg,)


def g_step_toward(ctx: Ctx) -> Iterator[Args]:
    """Same shapes and colour counts, some cells move: a colour that changes place and
    another colour that does not."""
    if ctx.depth > 1 or any(s.shape != t.shape for s, t in ctx.pairs):
        return
    pairs = ctx.pairs
    cols = [c for c in ctx.state_colors[:6] if c != ctx.bg]
    for a in cols:
        if not all(((s == a) != (t == a)).any() for s, t in pairs):
            continue
        for b in cols:
            if b != a and _fits(ctx, step_toward, a, b, ctx.bg):
                yield (a, b, ctx.bg)
                return


def g_keep_center_line(ctx: Ctx) -> Iterator[Args]:
    """Only erasing (cells become background) in odd-sized grids."""
    if ctx.depth > 1 or any(s.shape != t.shape for s, t in ctx.pairs):
        return
    if not all((t[s != t] == ctx.bg).all() for s, t in ctx.pairs):
        return
    for axis in ("v", "h"):
        if _fits(ctx, keep_center_line, axis, ctx.bg):
            yield (axis, ctx.bg)


def g_alternate_cells(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour recoloured to one colour in every pair."""
    if ctx.depth > 1 or any(s.shape != t.shape for s, t in ctx.pairs):
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1 or ctx.bg in ch[0]:
        return
    pairs = ctx.pairs
    try:
        if len(set(ch[0])) == 1:
            a = ch[0][0]
        elif all(prims.role_color(s, 10) == c for (s, _t), c in zip(pairs, ch[0], strict=True)):
            a = 10  # the commonest non-background colour, per grid
        else:
            return
        ok = all(
            np.array_equal(alternate_cells(s, prims.role_color(s, a), ch[1][0], ctx.bg), t)
            for s, t in pairs
        )
    except ValueError:
        return
    if ok:
        yield (a, ch[1][0], ctx.bg)


def g_merge_touching(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour become background and cells of another one new colour."""
    if ctx.depth > 1 or any(s.shape != t.shape for s, t in ctx.pairs):
        return
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
        if _fits(ctx, merge_touching, a, b, c, ctx.bg):
            yield (a, b, c, ctx.bg)


def g_recolor_in_box(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour ``b`` (or of varying colours: -1) become one colour ``c`` in
    every pair: the box colour is another state colour whose groups' boxes explain the
    change."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    b, c = ch[0][0] if len(set(ch[0])) == 1 else -1, ch[1][0]
    if b >= 0 and not any(((s == b) & (t == b)).any() for s, t in ctx.pairs):
        return  # every b cell changes: a plain recolour, no box needed
    for a in ctx.state_colors[:6]:
        if a == c or a == ctx.bg or a in ch[0]:
            continue
        for reach in (1, 2, 3, 30):
            if _fits(ctx, recolor_in_box, a, b, c, reach, ctx.bg):
                yield (a, b, c, reach, ctx.bg)
                return


def g_pointer_ray(ctx: Ctx) -> Iterator[Args]:
    """Background cells painted (and maybe marker cells recoloured): try the minority
    colour or a colour found in every state as the marker, each direction, paint mode
    and colour rule."""
    if ctx.depth > 1 or not ctx.grows:
        return
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
                    if _fits(ctx, pointer_ray, m, d, paint, col, ctx.bg):
                        yield (m, d, paint, col, ctx.bg)
                        return


def g_symmetrize_mark(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: with one new colour (or their mirror colours),
    try each symmetry about the grid's, the box's or a fitted centre."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    cs = [ch[1][0]] if ch is not None and len(set(ch[1])) == 1 else []
    masks = [(t != ctx.bg).astype(np.int64) for _s, t in ctx.pairs]
    for c in [*cs, -1]:
        for where in ("grid", "bbox", "fit"):
            if c < 0 and where != "fit":
                continue  # symmetrize / symmetrize_bbox do that
            for kind in ("h", "v", "hv", "rot", "diag"):
                # the targets' cells must be symmetric (about the grid's or the box's
                # centre; a fitted centre needs a single object, so the box's)
                sym = symmetrize if where == "grid" else symmetrize_bbox
                try:
                    if not all(np.array_equal(sym(m, kind, 0), m) for m in masks):
                        continue
                except ValueError:
                    continue
                if _fits(ctx, symmetrize_mark, kind, where, c, ctx.bg):
                    yield (kind, where, c, ctx.bg)
                    return


def g_fill_largest_rect(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour become one colour, and they form one rectangle per pair."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[0])) != 1 or len(set(ch[1])) != 1:
        return
    for s, t in ctx.pairs:
        ys, xs = np.nonzero(s != t)
        if ys.size != (ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1):
            return
    for mn in (1, 2):
        if _fits(ctx, fill_largest_rect, ch[0][0], ch[1][0], mn):
            yield (ch[0][0], ch[1][0], mn)
            return


def g_complete_lines(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, each in a row or column with at least two cells
    already: one new colour or the lines' own colours."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    for s, t in ctx.pairs:
        fg = s != ctx.bg
        lined = (fg.sum(axis=1) >= 2)[:, None] | (fg.sum(axis=0) >= 2)[None, :]
        if ((s != t) & ~lined).any():
            return
    ch = _change(ctx)
    cs = [ch[1][0]] if ch is not None and len(set(ch[1])) == 1 else []
    for c in [*cs, -1]:
        for reach in (1, 2, 4, 30):
            if _fits(ctx, complete_lines, c, reach, ctx.bg):
                yield (c, reach, ctx.bg)
                return


def g_cell_expand(ctx: Ctx) -> Iterator[Args]:
    """Same shapes: try picking the emptiest and the fullest cell."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    for sel in ("min", "max"):
        if _fits(ctx, cell_expand, sel, ctx.bg):
            yield (sel, ctx.bg)
            return


def g_cell_template_mark(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: the separator colour or one new colour."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    cs = [ch[1][0]] if ch is not None and len(set(ch[1])) == 1 else []
    for c in [-1, *cs]:
        if _fits(ctx, cell_template_mark, c, ctx.bg):
            yield (c, ctx.bg)
            return


def g_diag_bounce(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: one new colour or the segments' own."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    cs = [ch[1][0]] if ch is not None and len(set(ch[1])) == 1 else []
    for c in [*cs, -1]:
        if _fits(ctx, diag_bounce, c, ctx.bg):
            yield (c, ctx.bg)
            return


def g_cell_key_place(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, fewer non-background cells: the key is a colour of every state."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    if any(int((t != ctx.bg).sum()) >= int((s != ctx.bg).sum()) for s, t in ctx.pairs):
        return
    for k in ctx.state_colors[:10]:
        if all((s == k).any() for s in ctx.states) and _fits(ctx, cell_key_place, k, ctx.bg):
            yield (k, ctx.bg)
            return


def _fits_recolored(ctx: Ctx, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` is the target for every train pair up to one colour map
    (the same for all pairs; the solver's colour-map finisher adds it)."""
    cmap: dict[int, int] = {}
    try:
        for s, t in ctx.pairs:
            out = fn(s, *args)
            if out.shape != t.shape:
                return False
            for a, b in set(zip(out.ravel().tolist(), t.ravel().tolist(), strict=True)):
                if cmap.setdefault(a, b) != b:
                    return False
    except ValueError:
        return False
    return True


def g_mirror_marker(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, two-colour objects in every state: fits up to a colour map."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    if _fits_recolored(ctx, mirror_marker, ctx.bg):
        yield (ctx.bg,)


def _one_new_color(ctx: Ctx) -> int | None:
    """The one colour every changed cell gets, in every pair (None if some pair does
    not change or the changed cells get several colours)."""
    dst: set[int] = set()
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return None
        dst |= set(np.unique(t[d]).tolist())
        if len(dst) > 1:
            return None
    return dst.pop() if dst else None


def g_checker_interior(ctx: Ctx) -> Iterator[Args]:
    """Non-background cells recoloured to one colour (or erased) in every pair."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    c = _one_new_color(ctx)
    if c is None or any((s[s != t] == ctx.bg).any() for s, t in ctx.pairs):
        return
    for parity in (0, 1):
        if _fits(ctx, checker_interior, parity, c, ctx.bg):
            yield (parity, c, ctx.bg)
            return


def g_border_marks(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, with one colour, all on one border line."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    ch = _change(ctx)
    if ch is None or len(set(ch[1])) != 1:
        return
    for side in _HV4D:
        if _fits(ctx, border_marks, side, ch[1][0], ctx.bg):
            yield (side, ch[1][0], ctx.bg)
            return


def g_mark_crossings(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; the changed cells got one colour and lie around full lines."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    c = _one_new_color(ctx)
    if c is not None and _fits(ctx, mark_crossings, c, ctx.bg):
        yield (c, ctx.bg)


def g_stamp_markers(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; the marker is a colour of every state that the targets lose."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    for m in ctx.state_colors[:8]:
        if not all((s == m).any() for s in ctx.states):
            continue
        if not all(((s == m) & (t != m)).any() for s, t in ctx.pairs):
            continue
        if _fits(ctx, stamp_markers, m, ctx.bg):
            yield (m, ctx.bg)
            return


def g_role_stamp(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, each near (within 3 cells of) one object's
    centre, with the centre's or the object's other colour: read the table off the
    pairs, each cell taken relative to its nearest centre."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    table: dict[int, int] = {}
    for s, t in ctx.pairs:
        try:
            objs = _role_objects(s, ctx.bg)
        except ValueError:
            return
        cen = np.array([(cy, cx) for cy, cx, _a, _b in objs])
        for y, x in zip(*np.nonzero(s == ctx.bg), strict=True):
            dist = np.maximum(np.abs(cen[:, 0] - y), np.abs(cen[:, 1] - x))
            near = int(dist.min())
            v = int(t[y, x])
            if near > 3 or int((dist == near).sum()) > 1:
                if v != ctx.bg:
                    return
                continue
            cy, cx, a, b = objs[int(dist.argmin())]
            role = -1 if v == ctx.bg else 0 if v == a else 1 if v == b else -2
            key = (int(y) - cy + 3) * 7 + (int(x) - cx + 3)
            if role == -2 or table.setdefault(key, role) != role:
                return
    entries = [[k, r] for k, r in sorted(table.items()) if r >= 0]
    if entries and _fits(ctx, role_stamp, entries, ctx.bg):
        yield (entries, ctx.bg)


def g_anchor_copy(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: plain copies, or copies mirrored for one of the
    state colours."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    for f in [-1, *ctx.state_colors[:6]]:
        if _fits(ctx, anchor_copy, f, ctx.bg):
            yield (f, ctx.bg)
            return


def g_fit_templates(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background, or each state's
    commonest colour), or some cells erased and others painted (moves): plain
    placements first, then turned ones. On the input grids only (depth 0): a search
    can cost a good part of a second on a busy grid."""
    if ctx.depth > 0 or not ctx.same_shape:
        return
    for bg in (ctx.bg, 13):
        bgs = [prims.role_color(s, bg) for s in ctx.train]
        if not all((s != t).any() for s, t in ctx.pairs):
            return
        painted = all((s[s != t] == b).all() for (s, t), b in zip(ctx.pairs, bgs, strict=True))
        # moved: some cells erased and some painted
        moved = all(
            (t[s != t] == b).any() and (s[s != t] == b).any()
            for (s, t), b in zip(ctx.pairs, bgs, strict=True)
        )
        for mode in ("copy", "move"):
            if not (painted if mode == "copy" else moved):
                continue
            for turns in ("id", "d4"):
                try:
                    ok = all(
                        np.array_equal(fit_templates(s, turns, mode, b), t)
                        for (s, t), b in zip(ctx.pairs, bgs, strict=True)
                    )
                except ValueError:
                    ok = False
                if ok:
                    yield (turns, mode, bg)
                    return


def g_repeat_toward(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, with colours the states have."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    if _fits(ctx, repeat_toward, ctx.bg):
        yield (ctx.bg,)


def g_cell_fit_templates(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, and the states are cut into cells (on the input
    grids only, like :func:`g_fit_templates`)."""
    if ctx.depth > 0 or not _painted_only(ctx) or not _has_cells(ctx):
        return
    for turns in ("id", "d4"):
        if _fits(ctx, cell_fit_templates, turns, ctx.bg):
            yield (turns, ctx.bg)
            return


def g_pieces_into_holes(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, the same colour counts, and some cells changed (things moved)."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    for s, t in ctx.pairs:
        if (s == t).all() or not np.array_equal(
            np.bincount(s.ravel(), minlength=10), np.bincount(t.ravel(), minlength=10)
        ):
            return
    for turns in ("id", "d4"):
        if _fits(ctx, pieces_into_holes, turns, ctx.bg):
            yield (turns, ctx.bg)
            return


def g_spill_cups(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    if _fits(ctx, spill_cups, ctx.bg):
        yield (ctx.bg,)


def g_extend_rings(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, and every state has exactly three cells."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    if all(int((s != ctx.bg).sum()) == 3 for s in ctx.states) and _fits(ctx, extend_rings, ctx.bg):
        yield (ctx.bg,)


GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {
    "snap_to_line": g_snap_to_line,
    "recolor_nearest": g_recolor_nearest,
    "bounce": g_bounce,
    "fill_gaps": g_fill_gaps,
    "fill_squares": g_fill_squares,
    "stride_recolor": g_stride_recolor,
    "denoise": g_denoise,
    "recolor_extremes": g_recolor_extremes,
    "recolor_if": g_recolor_if,
    "move_by_size": g_move_by_size,
    "swap_colors": g_swap_colors,
    "recolor_except": g_recolor_except,
    "fill_empty_lines": g_fill_empty_lines,
    "swap_other": g_swap_other,
    "complete_templates": g_complete_templates,
    "hollow": g_hollow,
    "connect_layered": g_connect_layered,
    "ring_colors": g_ring_colors,
    "extend_ends": g_extend_ends,
    "connect_l": g_connect_l,
    "fill_holes": g_fill_holes,
    "halo_if": g_halo_if,
    "mark_contact": g_mark_contact,
    "corner_rays": g_corner_rays,
    "obj_diag_ray": g_obj_diag_ray,
    "cell_connect": g_cell_connect,
    "dashed_rays": g_dashed_rays,
    "center_lines": g_center_lines,
    "fill_corners": g_fill_corners,
    "cell_broadcast": g_cell_broadcast,
    "diag_period_fill": g_diag_period_fill,
    "cell_max_fill": g_cell_max_fill,
    "snap_to_wall": g_snap_to_wall,
    "recolor_by_dot": g_recolor_by_dot,
    "recolor_matching": g_recolor_matching,
    "flood_alternate": g_flood_alternate,
    "wall_rays": g_wall_rays,
    "corner_marks": g_corner_marks,
    "midpoint_mark": g_midpoint_mark,
    "bridge": g_bridge,
    "cross_swap": g_cross_swap,
    "meet_middle": g_meet_middle,
    "half_recolor": g_half_recolor,
    "frame_in_markers": g_frame_in_markers,
    "stretch_to_dot": g_stretch_to_dot,
    "step_toward": g_step_toward,
    "keep_center_line": g_keep_center_line,
    "alternate_cells": g_alternate_cells,
    "merge_touching": g_merge_touching,
    "recolor_in_box": g_recolor_in_box,
    "pointer_ray": g_pointer_ray,
    "symmetrize_mark": g_symmetrize_mark,
    "fill_largest_rect": g_fill_largest_rect,
    "complete_lines": g_complete_lines,
    "cell_expand": g_cell_expand,
    "cell_template_mark": g_cell_template_mark,
    "diag_bounce": g_diag_bounce,
    "cell_key_place": g_cell_key_place,
    "mirror_marker": g_mirror_marker,
    "checker_interior": g_checker_interior,
    "border_marks": g_border_marks,
    "mark_crossings": g_mark_crossings,
    "stamp_markers": g_stamp_markers,
    "role_stamp": g_role_stamp,
    "anchor_copy": g_anchor_copy,
    "fit_templates": g_fit_templates,
    "repeat_toward": g_repeat_toward,
    "cell_fit_templates": g_cell_fit_templates,
    "pieces_into_holes": g_pieces_into_holes,
    "spill_cups": g_spill_cups,
    "extend_rings": g_extend_rings,
}
"""op name -> parameter generator (see :mod:`atlas_actors.arc.infer`)."""
