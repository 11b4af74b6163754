"""More DSL ops (see ops_objects.py for the conventions): staircases of shrinking
parallel copies grown from straight lines, the grid moved by a tally of marker cells,
the closed rectangular rooms of a line drawing filled, lines finished by analogy, and
(from the fresh-training survey) objects moved by their cell count or turned in place,
segments extended into full lines, contained objects erased, objects repainted by the
dot touching them, the grid sheared, mirrored across a cross, and its same-size
objects stacked; objects falling toward the border wall of their colour, a noisy
patchwork summarised one cell per block, same-colour objects joined corner to corner
on a diagonal, each colour moved by its own offset, a fractal by colour, damaged
copies of a shape repaired, a colour key applied, cells mirrored across a line
(diagonals too), cells recoloured by a colour cycle, all but the commonest colours
painted over, objects trimmed on one side, ticks at the corners of square outlines,
colours nested as rings by count, objects stepping toward a corner marker, dots grown
to the nearest grid corner, paths with their colours reversed, the grid rolled by a
key line, and lines toggled to the colour of their marker.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import _fits, _painted_only
from atlas_actors.arc.prims import _DIRS, components, rigid, role_color, shift

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]


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


_STEPS8 = ("up", "down", "left", "right", "ul", "ur", "dl", "dr")
_HEADINGS = _STEPS8[:4]
"""The one-step directions of :data:`prims._DIRS`."""


def shift_by_count(g: Grid, m: int, d: str, bg: int) -> Grid:
    """Count the cells of colour ``m`` (a tally), erase them, and move the rest of the
    grid that many steps in direction ``d``; cells moved in from outside copy the
    grid's edge (so lines running across the grid stay whole)."""
    ((dy, dx),) = _DIRS[d]
    n = int((g == m).sum())
    a = np.where(g == m, bg, g)
    h, w = g.shape
    ys = np.clip(np.arange(h) - dy * n, 0, h - 1)
    xs = np.clip(np.arange(w) - dx * n, 0, w - 1)
    return a[np.ix_(ys, xs)].copy()


def fill_rooms(g: Grid, e: int, c: int) -> Grid:
    """Paint ``c`` inside the rectangular rooms of a line drawing: 4-connected regions
    of colour ``e`` that are solid rectangles walled in on every side inside the grid
    (their 8-neighbour ring) by one other colour whose walls stop at the room's corners
    (lines may meet a wall mid-side, not continue one); a room may lean on one grid
    side."""
    h, w = g.shape
    regs = components(np.where(g == e, 1, 0), 4, 1, 0)
    if len(regs) > 200:
        raise ValueError("too many regions")
    o = g.copy()
    hit = False
    for ys, xs in regs:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        if ys.size != (y1 - y0 + 1) * (x1 - x0 + 1):
            continue
        if (y0 == 0) + (y1 == h - 1) + (x0 == 0) + (x1 == w - 1) > 1:
            continue
        ring = g[max(y0 - 1, 0) : y1 + 2, max(x0 - 1, 0) : x1 + 2].copy()
        oy, ox = y0 - max(y0 - 1, 0), x0 - max(x0 - 1, 0)
        ring[oy : oy + y1 - y0 + 1, ox : ox + x1 - x0 + 1] = -1
        vals = np.unique(ring[ring >= 0])
        if vals.size != 1 or int(vals[0]) == e:
            continue
        wall = int(vals[0])
        ok = True
        for cy, sy in ((y0 - 1, -1), (y1 + 1, 1)):
            for cx, sx in ((x0 - 1, -1), (x1 + 1, 1)):
                if not (0 <= cy < h and 0 <= cx < w):
                    continue
                for py, px in ((cy + sy, cx), (cy, cx + sx)):
                    if 0 <= py < h and 0 <= px < w and g[py, px] == wall:
                        ok = False
        if ok:
            o[ys, xs] = c
            hit = True
    if not hit:
        raise ValueError("no rooms")
    return o


def g_line_staircase(ctx: Ctx) -> Iterator[Args]:
    """Every input holds a few straight lines and gains cells (nothing else changes)
    in the lines' colour and one other colour: grow staircases in that colour."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    from atlas_actors.arc.infer import _specs

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
    for b in _specs(ctx.train, bs)[:2]:
        yield (b, ctx.bg)


def g_shift_by_count(ctx: Ctx) -> Iterator[Args]:
    """A colour present in some inputs vanishes from every target, and its number of
    cells varies: the tally of a move."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for m in range(10):
        if m == ctx.bg or any((t == m).any() for t in ctx.targets):
            continue
        counts = {int((s == m).sum()) for s in ctx.train}
        if len(counts) < 2:
            continue
        for d in _STEPS8:
            if all(np.array_equal(shift_by_count(s, m, d, ctx.bg), t) for s, t in ctx.pairs):
                yield (m, d, ctx.bg)


def g_fill_rooms(ctx: Ctx) -> Iterator[Args]:
    """Cells of one colour turn into one other colour (the same in every pair)."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    e = c = -1
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return
        a, b = np.unique(s[d]), np.unique(t[d])
        if a.size != 1 or b.size != 1 or e not in (-1, int(a[0])) or c not in (-1, int(b[0])):
            return
        e, c = int(a[0]), int(b[0])
    try:
        if all(np.array_equal(fill_rooms(s, e, c), t) for s, t in ctx.pairs):
            yield (e, c)
    except ValueError:
        return


def complete_by_analogy(g: Grid, axis: str, bg: int) -> Grid:
    """Finish partly drawn lines (rows for ``axis`` "h", columns for "v") after a
    complete one: each line with background gaps takes the nearest earlier complete
    line (no background) whose colours map one way onto its drawn cells, and its gaps
    get the mapped colours of that template (so "23......" under "14144141" becomes
    "23233232")."""
    t = g if axis == "h" else g.T
    o = t.copy()
    full = [y for y in range(t.shape[0]) if (t[y] != bg).all()]
    hit = False
    for y in range(t.shape[0]):
        row = t[y]
        gaps = row == bg
        if not gaps.any() or gaps.all():
            continue
        for ty in sorted(full, key=lambda f: (f > y, abs(f - y))):
            cmap: dict[int, int] = {}
            tmpl = t[ty]
            if all(
                cmap.setdefault(int(a), int(b)) == int(b)
                for a, b in zip(tmpl[~gaps], row[~gaps], strict=True)
            ) and all(int(a) in cmap for a in np.unique(tmpl[gaps])):
                o[y, gaps] = [cmap[int(a)] for a in tmpl[gaps]]
                hit = True
                break
    if not hit:
        raise ValueError("no line completes a template")
    return o if axis == "h" else o.T


def g_complete_by_analogy(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own), in
    grids that hold a complete row or column."""
    if ctx.depth > 1:
        return
    for bg in _bgs(ctx):
        if _painted_bg(ctx, bg):
            for axis in ("h", "v"):
                if _fits_bg(ctx, complete_by_analogy, axis, bg):
                    yield (axis, bg)


# ---------------------------------------------------------------- objects in place


def move_by_count(g: Grid, d: str, bg: int) -> Grid:
    """Move every object (8-connected, one colour) in direction ``d`` by its number of
    cells; cells moved past the edge are lost. Objects spanning the grid's full width
    or height (a floor, a wall) stay put and are painted last."""
    h, w = g.shape
    objs = components(g, 8, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("needs 1 to 40 objects")
    ((dy, dx),) = _DIRS[d]
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


_TURNS = {"ccw": 1, "180": 2, "cw": 3}


def turn_objects(g: Grid, turn: str, conn: int, bg: int) -> Grid:
    """Turn every object (``conn``-connected, one colour) about the centre of its
    bounding box (``turn`` "ccw", "180" or "cw") on a background canvas; a box whose
    turn needs a half-cell shift is placed toward the top-left, and cells turned past
    the edge are lost."""
    h, w = g.shape
    objs = components(g, conn, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("needs 1 to 40 objects")
    o = np.full_like(g, bg)
    for ys, xs in objs:
        y0, x0 = int(ys.min()), int(xs.min())
        box = np.zeros((int(ys.max()) - y0 + 1, int(xs.max()) - x0 + 1), dtype=bool)
        box[ys - y0, xs - x0] = True
        turned = np.rot90(box, _TURNS[turn])
        ty, tx = np.nonzero(turned)
        ny = ty + y0 + (box.shape[0] - turned.shape[0]) // 2
        nx = tx + x0 + (box.shape[1] - turned.shape[1]) // 2
        keep = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        o[ny[keep], nx[keep]] = g[ys[0], xs[0]]
    return o


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


def shear(g: Grid, mode: str, bg: int) -> Grid:
    """Skew the grid into a parallelogram on a background canvas: "h+" shifts row ``i``
    right by ``h-1-i`` (the top row furthest), "h-" by ``i``; "v+" and "v-" do the same
    to the columns, downward."""
    a = g.T if mode[0] == "v" else g
    h, w = a.shape
    if w + h - 1 > 30:
        raise ValueError("too large")
    o = np.full((h, w + h - 1), bg, dtype=g.dtype)
    for i in range(h):
        off = h - 1 - i if mode[1] == "+" else i
        o[i, off : off + w] = a[i]
    return o.T if mode[0] == "v" else o


def mirror_cross(g: Grid, bg: int) -> Grid:
    """A full row and a full column of one colour are two mirrors: every other
    non-background cell is reflected across the row, the column and both, onto
    background cells (images past the edge are dropped)."""
    h, w = g.shape
    rows = [y for y in range(h) if g[y, 0] != bg and (g[y] == g[y, 0]).all()]
    cols = [x for x in range(w) if g[0, x] != bg and (g[:, x] == g[0, x]).all()]
    if len(rows) != 1 or len(cols) != 1:
        raise ValueError("needs one full row and one full column")
    r, c = rows[0], cols[0]
    o = g.copy()
    ys, xs = np.nonzero(g != bg)
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        if y == r or x == c:
            continue
        for yy, xx in ((2 * r - y, x), (y, 2 * c - x), (2 * r - y, 2 * c - x)):
            if 0 <= yy < h and 0 <= xx < w and o[yy, xx] == bg:
                o[yy, xx] = g[y, x]
    return o


def overlay_objects(g: Grid, bg: int) -> Grid:
    """Stack the objects (8-connected, any colours), each cropped to its bounding box,
    all of one size: the colour commonest over all the crops shows through, every other
    colour paints; two colours meeting on one cell raise."""
    objs = components(g, 8, 0, bg)
    if not 2 <= len(objs) <= 12:
        raise ValueError("needs 2 to 12 objects")
    crops = [g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] for ys, xs in objs]
    if len({cr.shape for cr in crops}) != 1:
        raise ValueError("objects differ in size")
    clear = int(np.bincount(np.concatenate([cr.ravel() for cr in crops])).argmax())
    o = np.full_like(crops[0], clear)
    for cr in crops:
        m = cr != clear
        if ((o != clear) & m & (o != cr)).any():
            raise ValueError("colours clash")
        o[m] = cr[m]
    return o


def _border_line(g: Grid, side: str) -> Grid:
    """The row or column of ``g`` on ``side`` (a view)."""
    line: Grid = {"up": g[0], "down": g[-1], "left": g[:, 0], "right": g[:, -1]}[side]
    return line


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
        moving.append((int(dist), c, ys, xs, _DIRS[side][0]))
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


def _merge_runs(a: Grid, bg: int) -> list[list[int]]:
    """Runs of consecutive rows of ``a`` that agree wherever both are non-background
    (the background is a wildcard, so holes in a block do not split it)."""
    runs = [[0]]
    for i in range(1, a.shape[0]):
        row = a[i]
        if all(((r == bg) | (row == bg) | (r == row)).all() for r in a[runs[-1]]):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def block_pixels(g: Grid, bg: int) -> Grid:
    """A patchwork of (noisy) solid blocks summarised one cell per block: the
    non-background box is cut where consecutive rows (then columns) disagree on cells
    both have non-background, and each block becomes its commonest non-background
    colour (background if it has none)."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    a = g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    rows, cols = _merge_runs(a, bg), _merge_runs(a.T, bg)
    if len(rows) * len(cols) < 2 or (len(rows) == a.shape[0] and len(cols) == a.shape[1]):
        raise ValueError("no blocks")
    o = np.full((len(rows), len(cols)), bg, dtype=g.dtype)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            cells = a[np.ix_(r, c)].ravel()
            cells = cells[cells != bg]
            if cells.size:
                o[i, j] = int(np.bincount(cells).argmax())
    return o


def _facing(lo1: int, hi1: int, lo2: int, hi2: int) -> tuple[int, int] | None:
    """The facing ends of two disjoint spans ``[lo1, hi1]`` and ``[lo2, hi2]`` (first
    span's end first), or None when they overlap."""
    if hi1 < lo2:
        return hi1, lo2
    if hi2 < lo1:
        return lo1, hi2
    return None


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


def _offset_code(dy: int, dx: int) -> int:
    return (dy + 30) * 61 + dx + 30


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


def kron_own(g: Grid, bg: int) -> Grid:
    """A fractal by colour: every non-background cell of colour k becomes an h x w
    block showing where the grid has colour k (in k, the rest background); background
    cells become background blocks."""
    h, w = g.shape
    if h * h > 30 or w * w > 30:
        raise ValueError("too large")
    o = np.full((h * h, w * w), bg, dtype=g.dtype)
    for y, x in zip(*np.nonzero(g != bg), strict=True):
        k = g[y, x]
        o[y * h : (y + 1) * h, x * w : (x + 1) * w] = np.where(g == k, k, bg)
    return o


def _near_groups(g: Grid, reach: int, bg: int) -> list[tuple[Grid, Grid]]:
    """Groups of same-colour cells joined across gaps: cells of one colour at Chebyshev
    distance ``reach`` or less belong together (so a broken copy stays one group)."""
    seen = g == bg
    out = []
    for y0, x0 in zip(*np.nonzero(~seen), strict=True):
        if seen[y0, x0]:
            continue
        c = g[y0, x0]
        seen[y0, x0] = True
        stack, cells = [(int(y0), int(x0))], []
        while stack:
            y, x = stack.pop()
            cells.append((y, x))
            ys, xs = (
                slice(max(0, y - reach), y + reach + 1),
                slice(max(0, x - reach), x + reach + 1),
            )
            for dy, dx in zip(*np.nonzero(~seen[ys, xs] & (g[ys, xs] == c)), strict=True):
                ny, nx = ys.start + int(dy), xs.start + int(dx)
                seen[ny, nx] = True
                stack.append((ny, nx))
        a = np.array(cells)
        out.append((a[:, 0], a[:, 1]))
    return out


def complete_copies(g: Grid, reach: int, bg: int) -> Grid:
    """Damaged copies of one shape repaired: objects are same-colour groups (cells
    ``reach`` apart or closer join); the shape is the union of the objects with the
    largest bounding box (aligned at their corners); each object gets, in its colour
    over background, the one placement of the shape that covers all its cells inside
    the grid and lands on nothing but background and its own colour. An object with no
    such placement or with two raises."""
    h, w = g.shape
    objs = _near_groups(g, reach, bg)
    if not 2 <= len(objs) <= 20:
        raise ValueError("needs 2 to 20 objects")
    dims = [(int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1) for ys, xs in objs]
    bh, bw = max(dims, key=lambda d: (d[0] * d[1], d))
    shape = np.zeros((bh, bw), dtype=bool)
    for (ys, xs), d in zip(objs, dims, strict=True):
        if d == (bh, bw):
            shape[ys - ys.min(), xs - xs.min()] = True
    ty, tx = np.nonzero(shape)
    o = g.copy()
    for ys, xs in objs:
        c = g[ys[0], xs[0]]
        fits = []
        for oy in range(max(0, int(ys.max()) - bh + 1), min(int(ys.min()), h - bh) + 1):
            for ox in range(max(0, int(xs.max()) - bw + 1), min(int(xs.min()), w - bw) + 1):
                if shape[ys - oy, xs - ox].all():
                    under = g[ty + oy, tx + ox]
                    if ((under == bg) | (under == c)).all():
                        fits.append((oy, ox))
        if len(fits) != 1:
            raise ValueError(f"{len(fits)} placements for an object of colour {int(c)}")
        oy, ox = fits[0]
        py, px = ty + oy, tx + ox
        free = o[py, px] == bg
        o[py[free], px[free]] = c
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


def mirror_line(g: Grid, c: int, m: int, bg: int) -> Grid:
    """A full straight line of colour ``c`` (a row, a column, or on a square grid a
    diagonal) is a mirror: every cell of colour ``m`` gets its image painted over
    background (the original stays)."""
    h, w = g.shape
    if m in (c, bg):
        raise ValueError("the mirrored colour is the line's or the background")
    ys, xs = np.nonzero(g == m)
    if ys.size == 0:
        raise ValueError("nothing to mirror")
    rows = np.nonzero((g == c).all(axis=1))[0]
    cols = np.nonzero((g == c).all(axis=0))[0]
    if rows.size + cols.size == 1:
        ny, nx = (2 * int(rows[0]) - ys, xs) if rows.size else (ys, 2 * int(cols[0]) - xs)
    elif rows.size + cols.size == 0 and h == w and (np.diag(g) == c).all():
        ny, nx = xs, ys
    elif rows.size + cols.size == 0 and h == w and (np.diag(g[:, ::-1]) == c).all():
        ny, nx = h - 1 - xs, h - 1 - ys
    else:
        raise ValueError("needs exactly one mirror line")
    keep = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
    ny, nx = ny[keep], nx[keep]
    o = g.copy()
    free = o[ny, nx] == bg
    o[ny[free], nx[free]] = m
    return o


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


def keep_top_colors(g: Grid, k: int, c: int) -> Grid:
    """Keep the ``k`` commonest colours (every colour counted, ties to the smaller)
    and paint every other cell ``c``."""
    counts = np.bincount(g.ravel(), minlength=10)
    present = [i for i in range(10) if counts[i]]
    if len(present) <= k:
        raise ValueError("nothing to recolour")
    keep = sorted(present, key=lambda i: (-counts[i], i))[:k]
    return np.where(np.isin(g, keep), g, c)


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


def nest_by_count(g: Grid, bg: int) -> Grid:
    """The colours other than ``bg`` as concentric square rings one cell thick, the
    colour with most cells outermost: a (2n-1) x (2n-1) grid for n colours. Equal
    counts raise."""
    vals, cnt = np.unique(g[g != bg], return_counts=True)
    if not 1 <= vals.size <= 15 or np.unique(cnt).size != cnt.size:
        raise ValueError("needs 1 to 15 colours with distinct counts")
    order = vals[np.argsort(-cnt, kind="stable")]
    n = 2 * vals.size - 1
    o = np.empty((n, n), dtype=g.dtype)
    for k, col in enumerate(order.tolist()):
        o[k : n - k, k : n - k] = col
    return o


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


def dot_to_corner(g: Grid, bg: int) -> Grid:
    """Every one-cell object (8-connected) grows into the rectangle from it to the
    nearest corner of the grid, in its colour; a cell as near two corners raises."""
    dots = [(int(ys[0]), int(xs[0])) for ys, xs in components(g, 8, 0, bg) if ys.size == 1]
    if not dots or len(dots) > 30:
        raise ValueError("needs 1 to 30 one-cell objects")
    h, w = g.shape
    o = g.copy()
    for y, x in dots:
        far = sorted(
            ((y - cy) ** 2 + (x - cx) ** 2, cy, cx) for cy in (0, h - 1) for cx in (0, w - 1)
        )
        if far[0][0] == far[1][0]:
            raise ValueError("as near two corners")
        _, cy, cx = far[0]
        o[min(y, cy) : max(y, cy) + 1, min(x, cx) : max(x, cx) + 1] = g[y, x]
    return o


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


def _some_change(ctx: Ctx) -> bool:
    return ctx.depth <= 1 and ctx.same_shape and any((s != t).any() for s, t in ctx.pairs)


def _bgs(ctx: Ctx, *extra: int) -> list[int]:
    """Background readings worth trying: the task's, then ``extra`` colours, then each
    grid's own commonest colour (role 13) when that is not the task's on some grid,
    train or test (a test grid with another background fails every op given the
    task's)."""
    own = ctx._get("own_bg", lambda: [role_color(s, 13) for s in ctx.states])
    return list(dict.fromkeys([ctx.bg, *extra, *([13] if any(b != ctx.bg for b in own) else [])]))


def _fits_bg(ctx: Ctx, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` is the target for every train pair, with a colour role in
    the last argument (the background) read on each state."""
    *rest, bg = args
    try:
        return all(np.array_equal(fn(s, *rest, role_color(s, bg)), t) for s, t in ctx.pairs)
    except ValueError:
        return False


def _resolved(ctx: Ctx, c: int) -> list[tuple[tuple[Grid, Grid], int]]:
    """The train pairs, each with the colour (role) ``c`` read on its state."""
    return [((s, t), role_color(s, c)) for s, t in ctx.pairs]


def _painted_bg(ctx: Ctx, bg: int) -> bool:
    """Same shapes, some cells changed, and only background cells (``bg`` read on each
    state, a colour role allowed)."""
    return (
        ctx.same_shape
        and any((s != t).any() for s, t in ctx.pairs)
        and all((s[s != t] == role_color(s, bg)).all() for s, t in ctx.pairs)
    )


def _painted_fits(ctx: Ctx, fn: Callable[..., Grid]) -> Iterator[Args]:
    """``(bg,)`` for each background reading (see :func:`_bgs`) under which only
    background cells are painted and ``fn(state, bg)`` is every target."""
    if ctx.depth > 1:
        return
    for bg in _bgs(ctx):
        if _painted_bg(ctx, bg) and _fits_bg(ctx, fn, bg):
            yield (bg,)


def _same_counts(ctx: Ctx) -> bool:
    """Every target has its state's number of cells of each colour."""
    return all(
        np.array_equal(np.bincount(s.ravel(), minlength=10), np.bincount(t.ravel(), minlength=10))
        for s, t in ctx.pairs
    )


def g_move_by_count(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, no target with more non-background cells than its state."""
    if not _some_change(ctx):
        return
    if any(int((t != ctx.bg).sum()) > int((s != ctx.bg).sum()) for s, t in ctx.pairs):
        return
    for d in _HEADINGS:
        if _fits(ctx, move_by_count, d, ctx.bg):
            yield (d, ctx.bg)


def g_turn_objects(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, each target with its state's count of each colour's cells."""
    if not _some_change(ctx) or not _same_counts(ctx):
        return
    for turn in _TURNS:
        for conn in (4, 8):
            if _fits(ctx, turn_objects, turn, conn, ctx.bg):
                yield (turn, conn, ctx.bg)
                break


def g_extend_segments(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, some change: try both crossing orders."""
    if not _some_change(ctx):
        return
    for top in ("h", "v"):
        if _fits(ctx, extend_segments, top, ctx.bg):
            yield (top, ctx.bg)
            return


def g_erase_contained(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only cells erased (to the background, or to colour 0 where the
    background the task reads is another colour)."""
    if not _some_change(ctx):
        return
    for bg in dict.fromkeys((ctx.bg, 0)):
        if all(((t[s != t]) == bg).all() for s, t in ctx.pairs) and _fits(ctx, erase_contained, bg):
            yield (bg,)


def g_dot_paint_touching(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only non-background cells change: try each state colour as the one
    repainted."""
    if not _some_change(ctx):
        return
    if any((s[s != t] == ctx.bg).any() for s, t in ctx.pairs):
        return
    for c in ctx.state_colors:
        if _fits(ctx, dot_paint_touching, c, ctx.bg):
            yield (c, ctx.bg)


_SHEARS = ("h+", "h-", "v+", "v-")


def g_shear(ctx: Ctx) -> Iterator[Args]:
    """Every target wider by its height less one (or taller by its width less one);
    the canvas colour is read off a corner the skew leaves empty (the background if
    the targets disagree)."""
    if ctx.depth > 1:
        return
    for axis in ("h", "v"):
        grown = [
            (s.shape[0], s.shape[1] + s.shape[0] - 1)
            if axis == "h"
            else (s.shape[0] + s.shape[1] - 1, s.shape[1])
            for s, _ in ctx.pairs
        ]
        if any(t.shape != sh or min(sh) < 2 for (_, t), sh in zip(ctx.pairs, grown, strict=True)):
            continue
        for sign, corner in (("+", (0, 0)), ("-", (-1, 0))):
            fill = {int(t[corner]) for _, t in ctx.pairs}
            yield (axis + sign, fill.pop() if len(fill) == 1 else ctx.bg)


def g_mirror_cross(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own)."""
    yield from _painted_fits(ctx, mirror_cross)


def g_overlay_objects(ctx: Ctx) -> Iterator[Args]:
    """Smaller targets: with the task's background, or each grid's commonest colour
    (role 13)."""
    if ctx.depth > 1 or not ctx.smaller:
        return
    for bg in _bgs(ctx):
        if _fits_bg(ctx, overlay_objects, bg):
            yield (bg,)


def g_wall_gravity(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, each target with its state's count of each colour's cells."""
    if not _some_change(ctx) or not _same_counts(ctx):
        return
    for conn in (8, 4):
        if _fits(ctx, wall_gravity, conn, ctx.bg):
            yield (conn, ctx.bg)
            return


def g_block_pixels(ctx: Ctx) -> Iterator[Args]:
    """Smaller targets that are the summary itself, or one rotation or reflection of
    it (the same in every pair: the next step turns it)."""
    if ctx.depth > 1 or not ctx.smaller:
        return
    try:
        outs = [block_pixels(s, ctx.bg) for s, _ in ctx.pairs]
    except ValueError:
        return
    if any(
        all(np.array_equal(rigid(o, r), t) for o, (_, t) in zip(outs, ctx.pairs, strict=True))
        for r in range(8)
    ):
        yield (ctx.bg,)


def g_connect_corners_diag(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own)."""
    yield from _painted_fits(ctx, connect_corners_diag)


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
    if not _some_change(ctx):
        return
    table = _colour_offsets(ctx)
    if table is None or len(set(table.values())) < 2:
        return
    args = [[_offset_code(dy, dx), c] for c, (dy, dx) in sorted(table.items())]
    if _fits(ctx, shift_by_color, args, ctx.bg):
        yield (args, ctx.bg)


def g_kron_own(ctx: Ctx) -> Iterator[Args]:
    """Every target h*h x w*w for an h x w state (background: the task's, colour 0 for
    grids with none, or each grid's own)."""
    if ctx.depth > 1 or any(t.shape != (s.shape[0] ** 2, s.shape[1] ** 2) for s, t in ctx.pairs):
        return
    for bg in _bgs(ctx, 0):
        if _fits_bg(ctx, kron_own, bg):
            yield (bg,)


def g_complete_copies(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own):
    objects joined across gaps of one cell, then two."""
    if ctx.depth > 1:
        return
    for bg in _bgs(ctx):
        if _painted_bg(ctx, bg):
            for reach in (1, 2):
                if _fits_bg(ctx, complete_copies, reach, bg):
                    yield (reach, bg)
                    break


def g_legend_recolor(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only non-background cells recoloured (the task's background or
    each grid's own)."""
    if not _some_change(ctx):
        return
    for bg in _bgs(ctx):
        if any(((s == b) != (t == b)).any() for (s, t), b in _resolved(ctx, bg)):
            continue
        for chain in (1, 0):
            if _fits_bg(ctx, legend_recolor, chain, bg):
                yield (chain, bg)
                break


def g_mirror_line(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, in one colour per pair: try each line colour,
    with that colour or the least common one (role 12) mirrored."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    for c in ctx.state_colors:
        for m in dict.fromkeys([*ctx.state_colors, 12]):
            try:
                ok = all(
                    np.array_equal(mirror_line(s, c, role_color(s, m), ctx.bg), t)
                    for s, t in ctx.pairs
                )
            except ValueError:
                continue
            if ok:
                yield (c, m, ctx.bg)


def _period(seq: list[int]) -> list[int] | None:
    """The shortest list (2 to 4 long) whose repetition gives ``seq``."""
    for n in range(2, min(4, len(seq) - 1) + 1):
        if all(seq[i] == seq[i % n] for i in range(len(seq))):
            return seq[:n]
    return None


def g_cycle_recolor(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, background kept, colours changed: the colour cycle read off the
    first target in each order."""
    if not _some_change(ctx) or any(((s == ctx.bg) != (t == ctx.bg)).any() for s, t in ctx.pairs):
        return
    s0, t0 = ctx.pairs[0]
    ys, xs = np.nonzero(s0 != ctx.bg)
    for order in ("rows", "cols", "auto"):
        try:
            idx = _cell_order(ys, xs, order)
        except ValueError:
            continue
        cols = _period(t0[ys[idx], xs[idx]].tolist())
        if cols is not None and _fits(ctx, cycle_recolor, cols, order, ctx.bg):
            yield (cols, order, ctx.bg)
            return


def g_keep_top_colors(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, every changed cell becoming one colour (the same in every pair)."""
    if not _some_change(ctx):
        return
    new = {int(v) for s, t in ctx.pairs for v in np.unique(t[s != t])}
    if len(new) != 1:
        return
    (c,) = new
    for k in (1, 2, 3):
        if _fits(ctx, keep_top_colors, k, c):
            yield (k, c)
            return


def g_trim_objects(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only cells erased."""
    if not _some_change(ctx) or any((t[s != t] != ctx.bg).any() for s, t in ctx.pairs):
        return
    for side in _HEADINGS:
        for k in (1, 2, 3):
            if _fits(ctx, trim_objects, side, k, ctx.bg):
                yield (side, k, ctx.bg)
                return


def g_square_ticks(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own), in
    one colour across the pairs."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    new = {int(v) for s, t in ctx.pairs for v in np.unique(t[s != t])}
    if len(new) != 1:
        return
    for bg in _bgs(ctx):
        if _painted_bg(ctx, bg) and _fits_bg(ctx, square_ticks, *new, bg):
            yield (*new, bg)


def g_nest_by_count(ctx: Ctx) -> Iterator[Args]:
    """Square targets of odd side 2n-1 for states with n colours besides the
    background."""
    if ctx.depth > 1:
        return
    for bg in _bgs(ctx):
        sides = [2 * int((np.unique(s) != b).sum()) - 1 for (s, _), b in _resolved(ctx, bg)]
        shaped = all(t.shape == (n, n) for (_, t), n in zip(ctx.pairs, sides, strict=True))
        if shaped and _fits_bg(ctx, nest_by_count, bg):
            yield (bg,)


def g_step_to_marker(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; the marker is the one colour in every state and in no target."""
    if not _some_change(ctx):
        return
    gone = set.intersection(
        *(set(np.unique(s).tolist()) - set(np.unique(t).tolist()) for s, t in ctx.pairs)
    )
    if len(gone) != 1:
        return
    (m,) = gone
    for bg in _bgs(ctx):
        if _fits_bg(ctx, step_to_marker, m, bg):
            yield (m, bg)


def g_dot_to_corner(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own)."""
    yield from _painted_fits(ctx, dot_to_corner)


def g_reverse_path(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, background kept, the same colour counts."""
    if not _some_change(ctx) or not _same_counts(ctx):
        return
    for bg in _bgs(ctx):
        if _fits_bg(ctx, reverse_path, bg):
            yield (bg,)


def g_roll_by_key(ctx: Ctx) -> Iterator[Args]:
    """Targets one column (or row) narrower than their states."""
    if ctx.depth > 1:
        return
    narrower = all(t.shape == (s.shape[0], s.shape[1] - 1) for s, t in ctx.pairs)
    shorter = all(t.shape == (s.shape[0] - 1, s.shape[1]) for s, t in ctx.pairs)
    if (narrower or shorter) and _fits(ctx, roll_by_key):
        yield ()


def g_toggle_lines(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, the first row or column unchanged (the markers stay)."""
    if not _some_change(ctx):
        return
    if not all((s[0] == t[0]).all() or (s[:, 0] == t[:, 0]).all() for s, t in ctx.pairs):
        return
    for bg in _bgs(ctx):
        if _fits_bg(ctx, toggle_lines, bg):
            yield (bg,)


OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = [
    ("line_staircase", line_staircase, ("g", "c", "c")),
    ("shift_by_count", shift_by_count, ("g", "c", _STEPS8, "c")),
    ("fill_rooms", fill_rooms, ("g", "c", "c")),
    ("complete_by_analogy", complete_by_analogy, ("g", ("h", "v"), "c")),
    ("move_by_count", move_by_count, ("g", _HEADINGS, "c")),
    ("turn_objects", turn_objects, ("g", tuple(_TURNS), "conn", "c")),
    ("extend_segments", extend_segments, ("g", ("h", "v"), "c")),
    ("erase_contained", erase_contained, ("g", "c")),
    ("dot_paint_touching", dot_paint_touching, ("g", "c", "c")),
    ("shear", shear, ("g", _SHEARS, "c")),
    ("mirror_cross", mirror_cross, ("g", "c")),
    ("overlay_objects", overlay_objects, ("g", "c")),
    ("wall_gravity", wall_gravity, ("g", "conn", "c")),
    ("block_pixels", block_pixels, ("g", "c")),
    ("connect_corners_diag", connect_corners_diag, ("g", "c")),
    ("shift_by_color", shift_by_color, ("g", "table", "c")),
    ("kron_own", kron_own, ("g", "c")),
    ("complete_copies", complete_copies, ("g", "k", "c")),
    ("legend_recolor", legend_recolor, ("g", "b", "c")),
    ("mirror_line", mirror_line, ("g", "c", "c", "c")),
    ("cycle_recolor", cycle_recolor, ("g", "cl", ("rows", "cols", "auto"), "c")),
    ("keep_top_colors", keep_top_colors, ("g", "k", "c")),
    ("trim_objects", trim_objects, ("g", _HEADINGS, "k", "c")),
    ("square_ticks", square_ticks, ("g", "c", "c")),
    ("nest_by_count", nest_by_count, ("g", "c")),
    ("step_to_marker", step_to_marker, ("g", "c", "c")),
    ("dot_to_corner", dot_to_corner, ("g", "c")),
    ("reverse_path", reverse_path, ("g", "c")),
    ("roll_by_key", roll_by_key, ("g",)),
    ("toggle_lines", toggle_lines, ("g", "c")),
]
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {
    "line_staircase": g_line_staircase,
    "shift_by_count": g_shift_by_count,
    "fill_rooms": g_fill_rooms,
    "complete_by_analogy": g_complete_by_analogy,
    "move_by_count": g_move_by_count,
    "turn_objects": g_turn_objects,
    "extend_segments": g_extend_segments,
    "erase_contained": g_erase_contained,
    "dot_paint_touching": g_dot_paint_touching,
    "shear": g_shear,
    "mirror_cross": g_mirror_cross,
    "overlay_objects": g_overlay_objects,
    "wall_gravity": g_wall_gravity,
    "block_pixels": g_block_pixels,
    "connect_corners_diag": g_connect_corners_diag,
    "shift_by_color": g_shift_by_color,
    "kron_own": g_kron_own,
    "complete_copies": g_complete_copies,
    "legend_recolor": g_legend_recolor,
    "mirror_line": g_mirror_line,
    "cycle_recolor": g_cycle_recolor,
    "keep_top_colors": g_keep_top_colors,
    "trim_objects": g_trim_objects,
    "square_ticks": g_square_ticks,
    "nest_by_count": g_nest_by_count,
    "step_to_marker": g_step_to_marker,
    "dot_to_corner": g_dot_to_corner,
    "reverse_path": g_reverse_path,
    "roll_by_key": g_roll_by_key,
    "toggle_lines": g_toggle_lines,
}
"""Parameter generators, by op name."""
