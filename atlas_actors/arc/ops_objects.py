"""More DSL ops (same shape, object level): primitives, signatures and generators.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).

Objects centred in a box of markers, objects sorted by size and stacked against a
side, a template copied onto the other place that matches its key, objects reflected
across the nearest wall or toward marker cells, single cells gathered onto an
anchor object, cells extended to the wall of their colour, and (shape changing) the
colours nested concentrically and the rectangle between full lines cropped.

Also: a shape stamped again and again toward its marker, panels completed by rigid
transforms of the first or painted by their place in the panel grid, lines painted
by their marker's index or as stripes of a header palette, multicolour runs repeated
along their lines, and (shape changing) corner windows overlaid, panels classified
into colour lines, and a pattern grown with a drifting period.

Primitives call other primitives by bare name (imported from :mod:`prims`), so that
``Program.to_python`` can copy their source into a standalone script.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.prims import (
    _sep_segments,
    components,
    line_segments,
    rigid,
    role_color,
)

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]

# ---------------------------------------------------------------- primitives


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


def copy_to_match(g: Grid, c: int) -> Grid:
    """The template is the bounding box of colour ``c``; its other cells (any colour,
    background included) are a key. Wherever else the key occurs exactly, paint the
    template's ``c`` cells around it (a frame or shape copied onto its matching
    slot). Raises when the key occurs nowhere else."""
    ys, xs = np.nonzero(g == c)
    if ys.size < 2:
        raise ValueError("no template")
    y0, x0 = int(ys.min()), int(xs.min())
    box = g[y0 : int(ys.max()) + 1, x0 : int(xs.max()) + 1]
    th, tw = box.shape
    part = box == c
    key = ~part
    if not key.any() or part.all():
        raise ValueError("template without key")
    h, w = g.shape
    o = g.copy()
    found = 0
    for y in range(h - th + 1):
        for x in range(w - tw + 1):
            if (y, x) == (y0, x0):
                continue
            win = g[y : y + th, x : x + tw]
            if (win[key] == box[key]).all() and not (win[part] == c).all():
                o[y : y + th, x : x + tw][part] = c
                found += 1
    if not found or found > 20:
        raise ValueError("no (or too many) matches")
    return o


def sort_stack(g: Grid, d: str, align: str, bg: int) -> Grid:
    """Take the objects (8-connected, one colour) and stack them against side ``d``
    (down/up/left/right), biggest first (ties: reading order), each flush with the
    start (top/left, ``align`` start) or end (bottom/right) of the perpendicular
    side. Raises when they do not fit."""
    objs = components(g, 8, 1, bg)
    if not 2 <= len(objs) <= 30:
        raise ValueError("needs 2 to 30 objects")
    objs.sort(key=lambda o: -int(o[0].size))
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


def mirror_across(g: Grid, c: int, keep: int, bg: int) -> Grid:
    """Reflect every object (8-connected, any colours but ``c``) across the nearest
    wall of colour ``c``: looking up, down, left and right from the object, the first
    row (column) whose cells over the object's whole column (row) span are all ``c``
    is the mirror line; the nearest such line wins (ties: up, down, left, right). The
    original is erased (``keep`` 0) or kept (1); objects with no wall stay put."""
    h, w = g.shape
    objs = components(np.where(g == c, bg, g), 8, 0, bg)
    if not objs or len(objs) > 30 or not (g == c).any():
        raise ValueError("needs walls and 1 to 30 objects")
    o = g.copy()
    moves: list[tuple[Grid, Grid, Grid, Grid]] = []
    for ys, xs in objs:
        best: tuple[int, str, int] | None = None
        for d in ("up", "down", "left", "right"):
            vert = d in ("up", "down")
            lo, hi = (int(xs.min()), int(xs.max())) if vert else (int(ys.min()), int(ys.max()))
            step = -1 if d in ("up", "left") else 1
            start = {"up": ys.min(), "down": ys.max(), "left": xs.min(), "right": xs.max()}[d]
            i = int(start) + step
            while 0 <= i < (h if vert else w):
                line = g[i, lo : hi + 1] if vert else g[lo : hi + 1, i]
                if (line == c).all():
                    dist = abs(i - int(start))
                    if best is None or dist < best[0]:
                        best = (dist, d, i)
                    break
                i += step
        if best is None:
            continue
        _, d, i = best
        ny, nx = (2 * i - ys, xs) if d in ("up", "down") else (ys, 2 * i - xs)
        if ny.min() < 0 or ny.max() >= h or nx.min() < 0 or nx.max() >= w:
            raise ValueError("reflection leaves the grid")
        moves.append((ys, xs, ny, nx))
    if not moves:
        raise ValueError("nothing to reflect")
    if not keep:
        for ys, xs, _, _ in moves:
            o[ys, xs] = bg
    for ys, xs, ny, nx in moves:
        o[ny, nx] = g[ys, xs]
    return o


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


def nest_shapes(shapes: list[tuple[int, Grid]], bg: int, dtype: Any) -> Grid:
    """Masks ``(colour, mask)`` nested concentrically: the output is as big as the
    biggest mask, each mask centred in it in its colour, bigger ones painted first.
    Raises when a mask cannot be centred exactly."""
    if len(shapes) < 2:
        raise ValueError("needs two colours")
    hh = max(m.shape[0] for _c, m in shapes)
    ww = max(m.shape[1] for _c, m in shapes)
    o = np.full((hh, ww), bg, dtype=dtype)
    for c, m in sorted(shapes, key=lambda v: -v[1].size):
        h, w = m.shape
        if (hh - h) % 2 or (ww - w) % 2:
            raise ValueError("no exact centre")
        dy, dx = (hh - h) // 2, (ww - w) // 2
        o[dy : dy + h, dx : dx + w][m] = c
    return o


def color_mask(g: Grid, c: int) -> Grid:
    """The cells of colour ``c`` as a mask the size of their bounding box."""
    ys, xs = np.nonzero(g == c)
    m = np.zeros((int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1), dtype=bool)
    m[ys - ys.min(), xs - xs.min()] = True
    return m


def nest_colors(g: Grid, bg: int) -> Grid:
    """Nest the colours concentrically: the output is as big as the largest bounding
    box of one colour's cells; every colour's cells keep their layout and are centred
    in it, bigger boxes painted first. Raises when a box cannot be centred exactly."""
    cols = [c for c in np.unique(g).tolist() if c != bg]
    return nest_shapes([(c, color_mask(g, c)) for c in cols], bg, g.dtype)


def mirror_to_markers(g: Grid, bg: int) -> Grid:
    """Each object (8-connected, several colours) is a body (its commonest colour)
    with marker cells of other colours beside its bounding box. For each marker, the
    body is mirrored across the box side(s) the marker lies beyond (above, below,
    left, right, or across a corner for a diagonal marker), painted in the marker's
    colour over the background."""
    h, w = g.shape
    o = g.copy()
    done = 0
    for ys, xs in components(g, 8, 0, bg):
        cols = g[ys, xs]
        vals, cnt = np.unique(cols, return_counts=True)
        if vals.size < 2:
            continue
        body = cols == vals[int(np.argmax(cnt))]
        by, bx = ys[body], xs[body]
        top, bot, lef, rig = int(by.min()), int(by.max()), int(bx.min()), int(bx.max())
        for y, x, c in zip(
            ys[~body].tolist(), xs[~body].tolist(), cols[~body].tolist(), strict=True
        ):
            if top <= y <= bot and lef <= x <= rig:
                continue  # a marker inside the box points nowhere
            ny, nx = by, bx
            if y < top:
                ny = 2 * top - 1 - by
            elif y > bot:
                ny = 2 * bot + 1 - by
            if x < lef:
                nx = 2 * lef - 1 - bx
            elif x > rig:
                nx = 2 * rig + 1 - bx
            ok = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
            ny, nx = ny[ok], nx[ok]
            free = o[ny, nx] == bg
            o[ny[free], nx[free]] = c
            done += 1
    if not done:
        raise ValueError("no markers beside a body")
    return o


def _line_colors(g: Grid, bg: int) -> dict[int, int]:
    """The rows of ``g`` that are lines (one non-background colour covers at least
    70% of the row), with that colour."""
    out: dict[int, int] = {}
    for i in range(g.shape[0]):
        vals, cnt = np.unique(g[i], return_counts=True)
        k = int(np.argmax(cnt))
        if int(vals[k]) != bg and 10 * int(cnt[k]) >= 7 * g.shape[1]:
            out[i] = int(vals[k])
    return out


def _walls(g: Grid, bg: int) -> tuple[dict[int, int], dict[int, int]]:
    """Line rows and line columns with their colours; crossings are ignored (columns
    are judged without the line rows, then rows without the line columns)."""
    h, w = g.shape
    r0 = _line_colors(g, bg)
    cols = _line_colors(np.delete(g, list(r0), axis=0).T, bg) if len(r0) < h else {}
    rows = _line_colors(np.delete(g, list(cols), axis=1), bg) if len(cols) < w else {}
    return rows, cols


def crop_lines(g: Grid, inner: int, bg: int) -> Grid:
    """Crop the rectangle bounded by the outermost full lines (rows or columns that
    one non-background colour covers at least 70%, see ``_walls``): lines
    included (``inner`` 0) or excluded (1). An axis with fewer than two lines keeps
    its full range; raises unless some axis has two."""
    walls = _walls(g, bg)
    rows, cols = sorted(walls[0]), sorted(walls[1])
    if len(rows) < 2 and len(cols) < 2:
        raise ValueError("needs two parallel lines")
    y0, y1 = (rows[0] + inner, rows[-1] - inner) if len(rows) >= 2 else (0, g.shape[0] - 1)
    x0, x1 = (cols[0] + inner, cols[-1] - inner) if len(cols) >= 2 else (0, g.shape[1] - 1)
    if y1 < y0 or x1 < x0:
        raise ValueError("nothing between the lines")
    return g[y0 : y1 + 1, x0 : x1 + 1].copy()


def ray_to_wall(g: Grid, bg: int) -> Grid:
    """Full lines (rows or columns that one non-background colour covers at least
    70%) are walls. Every other non-background cell draws a line of its colour over
    the background up to each nearest wall of its own colour straight above, below,
    left or right of it."""
    rows, cols = _walls(g, bg)
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


def _largest_rect(m: Grid) -> tuple[int, int, int, int, int]:
    """The largest all-True rectangle of a boolean grid: (area, top, left, height,
    width), by the histogram method."""
    h, w = m.shape
    heights = [0] * w
    best = (0, 0, 0, 0, 0)
    for y in range(h):
        for x in range(w):
            heights[x] = heights[x] + 1 if m[y, x] else 0
        stack: list[int] = []
        for x in range(w + 1):
            cur = heights[x] if x < w else 0
            while stack and heights[stack[-1]] >= cur:
                top = heights[stack.pop()]
                left = stack[-1] + 1 if stack else 0
                area = top * (x - left)
                if area > best[0]:
                    best = (area, y - top + 1, left, top, x - left)
            stack.append(x)
    return best


def crop_solid_rect(g: Grid) -> Grid:
    """Crop the largest rectangle of one colour, stray cells inside it allowed (a cell
    counts as that colour when its two neighbours left and right, or above and
    below, have it): the big block hidden in a noisy grid."""
    best: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    for c in np.unique(g).tolist():
        m = g == c
        f = m.copy()
        f[1:-1, :] |= m[:-2, :] & m[2:, :]
        f[:, 1:-1] |= m[:, :-2] & m[:, 2:]
        r = _largest_rect(f)
        if r[0] > best[0]:
            best = r
    _, y, x, hh, ww = best
    if hh < 2 or ww < 2 or hh * ww == g.size:
        raise ValueError("no block")
    return g[y : y + hh, x : x + ww].copy()


def _place_templates(src: Grid, dst: Grid) -> Grid:
    """Copy the objects of ``src`` (8-connected, any colours, on its commonest colour)
    onto ``dst``: an object's cells whose colour ``dst`` also has (besides its
    commonest) are its markers, and it goes where all of them land on cells of their
    colour and its other cells on background; objects with more markers go first
    and use up the markers they land on (objects with no place left are dropped).
    Raises when an object has no markers or two places, or nothing is placed."""
    sbg = int(np.bincount(src.ravel()).argmax())
    dbg = int(np.bincount(dst.ravel()).argmax())
    have = set(np.unique(dst).tolist()) - {dbg}
    objs = components(src, 8, 0, sbg)
    if not objs or len(objs) > 12 or not have:
        raise ValueError("nothing to place")
    h, w = dst.shape
    o = dst.copy()
    used = np.zeros(dst.shape, dtype=bool)
    placed = 0
    marked = []
    for ys, xs in objs:
        mk = np.isin(src[ys, xs], list(have))
        if not mk.any() or mk.all():
            raise ValueError("a template without markers")
        marked.append((-int(mk.sum()), ys, xs, mk))
    marked.sort(key=lambda m: m[0])
    for _, ys, xs, mk in marked:
        cols = src[ys, xs]
        my, mx, mc = ys[mk], xs[mk], cols[mk]
        ty, tx = np.nonzero((o == mc[0]) & ~used)
        places = []
        for y, x in zip(ty.tolist(), tx.tolist(), strict=True):
            dy, dx = y - int(my[0]), x - int(mx[0])
            ny, nx = ys + dy, xs + dx
            if ny.min() < 0 or nx.min() < 0 or ny.max() >= h or nx.max() >= w:
                continue
            under = o[ny, nx]
            free = ~used[ny, nx]
            if (under[mk] == mc).all() and free[mk].all() and (under[~mk] == dbg).all():
                places.append((dy, dx))
        if len(places) > 1:
            raise ValueError("two places")
        if places:
            dy, dx = places[0]
            o[ys + dy, xs + dx] = cols
            used[ys + dy, xs + dx] = True
            placed += 1
    if not placed:
        raise ValueError("nothing placed")
    return o


def place_halves(g: Grid) -> Grid:
    """The grid is two halves (left/right or top/bottom) with different background
    colours. The objects of one half are templates carrying marker cells; the other
    half holds loose markers. The output is the marker half with every template moved
    onto its markers (see ``_place_templates``); whichever assignment of the halves
    works, trying the templates on the left or top half first."""
    h, w = g.shape
    halves = []
    if w % 2 == 0:
        halves.append((g[:, : w // 2], g[:, w // 2 :]))
    if h % 2 == 0:
        halves.append((g[: h // 2], g[h // 2 :]))
    for a, b in halves:
        if np.bincount(a.ravel()).argmax() == np.bincount(b.ravel()).argmax():
            continue
        for src, dst in ((a, b), (b, a)):
            try:
                return _place_templates(src, dst)
            except ValueError:
                continue
    raise ValueError("no halves to assemble")


def _march(o: Grid, g: Grid, sy: Grid, sx: Grid, my: Grid, mx: Grid, c: int, b: int) -> bool:
    """Stamp the shape (``sy``, ``sx``) in colour ``c`` over the background ``b`` of
    ``o``, stepping toward the marker cells (``my``, ``mx``); False when no step
    clears the shape and covers the marker."""
    h, w = g.shape
    dy = int(np.sign(int(my.sum()) * sy.size - int(sy.sum()) * my.size))
    dx = int(np.sign(int(mx.sum()) * sx.size - int(sx.sum()) * mx.size))
    if dy == 0 and dx == 0:
        return False
    shape = set(zip(sy.tolist(), sx.tolist(), strict=True))
    marks = set(zip(my.tolist(), mx.tolist(), strict=True))
    step = 0
    for k in range(1, max(h, w)):
        moved = {(y + k * dy, x + k * dx) for y, x in shape}
        if not moved & shape and marks <= moved:
            step = k
            break
    if not step:
        return False
    for j in range(1, max(h, w) + 1):
        ty, tx = sy + j * step * dy, sx + j * step * dx
        inb = (ty >= 0) & (ty < h) & (tx >= 0) & (tx < w)
        if not inb.any():
            break
        ty, tx = ty[inb], tx[inb]
        free = g[ty, tx] == b
        o[ty[free], tx[free]] = c
    return True


def march_copies(g: Grid, col: str, bg: int) -> Grid:
    """Objects (8-connected) of two colours: the majority colour is a shape, each
    group (8-connected) of minority cells a marker beside it. The shape is copied in
    the marker's colour (``col`` marker) or its own (main), again and again, from the
    shape toward each marker (the sign of the offset of the marker's centre from the
    shape's, per axis) until off the grid; the step is the smallest that clears the
    shape and covers the marker cells. Copies paint only the background; ``bg`` may
    be a role (13: each grid's commonest colour)."""
    b = role_color(g, bg)
    objs = components(g, 8, 0, b)
    if len(objs) > 20:
        raise ValueError("too many objects")
    o = g.copy()
    done = False
    for ys, xs in objs:
        vals, cnt = np.unique(g[ys, xs], return_counts=True)
        if vals.size != 2 or cnt[0] == cnt[1]:
            continue
        main = int(vals[int(cnt[1] > cnt[0])])
        mark = int(vals[int(cnt[1] < cnt[0])])
        sm = g[ys, xs] == main
        sy, sx = ys[sm], xs[sm]
        marker_grid = np.zeros(g.shape, dtype=g.dtype)
        marker_grid[ys[~sm], xs[~sm]] = 1
        for my, mx in components(marker_grid, 8, 1, 0):
            c = mark if col == "marker" else main
            done |= _march(o, g, sy, sx, my, mx, c, b)
    if not done:
        raise ValueError("no shape with a marker")
    return o


def overlay_corners(g: Grid, h: int, w: int, bg: int) -> Grid:
    """Overlay the four ``h`` x ``w`` corner windows of the grid (top-left, top-right,
    bottom-left, bottom-right, later ones painting their non-background cells over
    earlier ones): a grid folded onto itself. The windows must cover the grid."""
    gh, gw = g.shape
    if not (h <= gh <= 2 * h and w <= gw <= 2 * w) or (h, w) == (gh, gw):
        raise ValueError("windows do not fit or cover the grid")
    o = np.full((h, w), bg, dtype=g.dtype)
    for y in (0, gh - h):
        for x in (0, gw - w):
            win = g[y : y + h, x : x + w]
            o[win != bg] = win[win != bg]
    return o


def _panels(g: Grid, bg: int) -> list[tuple[int, int, int, int]]:
    """Panel boxes ``(y0, y1, x0, x1)`` in reading order: cut by full separator lines
    of one colour, or else (when that colour also shows inside the panels) by full
    lines of one colour that cut one axis into at least two equal parts."""
    try:
        rsegs, csegs = _sep_segments(g, bg)
        return [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    except ValueError:
        pass
    h, w = g.shape
    for a in (g.T, g):  # columns first, then rows
        n = a.shape[0]
        full = [i for i in range(n) if (a[i] == a[i, 0]).all()]
        for c in sorted({int(a[i, 0]) for i in full}):
            segs = line_segments([i for i in full if a[i, 0] == c], n)
            if len(segs) >= 2 and len({e - b for b, e in segs}) == 1:
                if a is g:
                    return [(b, e, 0, w) for b, e in segs]
                return [(0, h, b, e) for b, e in segs]
    raise ValueError("no panels")


def panel_transforms(g: Grid, ts: list[int], bg: int) -> Grid:
    """The grid is cut into panels by full separator lines of one colour; panel ``i``
    (reading order) is replaced by the first panel transformed by ``rigid(ts[i])``
    (a panel strip completed with rotations or reflections of its first panel)."""
    boxes = _panels(g, bg)
    if len(boxes) < 2 or len(boxes) != len(ts):
        raise ValueError("panels and transforms do not match")
    y0, y1, x0, x1 = boxes[0]
    src = g[y0:y1, x0:x1]
    o = g.copy()
    for (a, b, c, d), t in zip(boxes[1:], ts[1:], strict=True):
        part = rigid(src, int(t))
        if part.shape != (b - a, d - c):
            raise ValueError("panel shapes differ")
        o[a:b, c:d] = part
    return o


def panel_key(p: Grid) -> int:
    """A number naming a panel's exact content (shape and colours), below 10**12."""
    k = int(p.shape[0]) * 31 + int(p.shape[1])
    for v in p.ravel().tolist():
        k = (k * 11 + int(v) + 1) % 999999999989
    return k


def panel_colors(g: Grid, table: list[list[int]], layout: str, n: int, bg: int) -> Grid:
    """The grid is cut into panels by full separator lines of one colour; each panel's
    content is looked up in ``table`` (``[panel_key, colour]`` rows) and becomes a line
    of that colour, ``n`` cells long: one row per panel (``layout`` rows) or one
    column per panel (cols), in reading order. Raises on an unknown panel."""
    parts = [g[y0:y1, x0:x1] for y0, y1, x0, x1 in _panels(g, bg)]
    if len(parts) < 2:
        raise ValueError("no panels")
    look = {int(k): int(v) for k, v in table}
    cols = []
    for p in parts:
        k = panel_key(p)
        if k not in look:
            raise ValueError("panel not in table")
        cols.append(look[k])
    o = np.array([[c] * n for c in cols], dtype=g.dtype)
    return o if layout == "rows" else o.T


def _shift_row(r: Grid, dx: int, bg: int) -> Grid:
    """A row shifted ``dx`` cells right (left if negative); cells shifted in are
    background, cells shifted out are lost."""
    o = np.full_like(r, bg)
    w = r.shape[0]
    if dx >= 0:
        o[dx:] = r[: w - dx]
    else:
        o[: w + dx] = r[-dx:]
    return o


def extend_drift(g: Grid, d: str, n: int, bg: int) -> Grid:
    """Grow the grid to ``n`` lines toward side ``d`` (down, up, right, left),
    continuing its pattern: the smallest period ``p`` of lines such that each line is
    the line ``p`` before it shifted sideways by one fixed drift (a staircase, a
    zigzag, or a plain repetition with drift 0)."""
    fwd, back = {"down": (0, 0), "up": (5, 5), "right": (6, 6), "left": (7, 7)}[d]
    a = rigid(g, fwd)
    h, w = a.shape
    if n <= h or not (a != bg).any():
        raise ValueError("nothing to grow")
    rows = [a[i] for i in range(h)]
    for p in range(1, h):
        for dx in sorted(range(-w + 1, w), key=abs):
            if all(np.array_equal(rows[i + p], _shift_row(rows[i], dx, bg)) for i in range(h - p)):
                while len(rows) < n:
                    rows.append(_shift_row(rows[-p], dx, bg))
                return rigid(np.array(rows, dtype=g.dtype), back)
    raise ValueError("no drifting period")


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


def palette_stripes(g: Grid, axis: str, bg: int) -> Grid:
    """The first row (``axis`` h; the first column for v) is a palette: the empty
    lines after the last non-empty one are painted whole, one palette colour each, in
    the palette's order, cycling (stripes below a header)."""
    a = g if axis == "h" else g.T
    pal = [int(v) for v in a[0].tolist() if v != bg]
    full = np.nonzero((a != bg).any(axis=1))[0]
    start = int(full[-1]) + 1 if full.size else 0
    if len(pal) < 2 or start >= a.shape[0]:
        raise ValueError("no palette or no room")
    o = a.copy()
    for i in range(start, a.shape[0]):
        o[i, :] = pal[(i - start) % len(pal)]
    return o if axis == "h" else o.T


def _place_class(i: int, n: int) -> int:
    """Where index ``i`` of ``n`` sits: 0 first, 1 the exact middle, 2 last, 3 other."""
    if i == 0:
        return 0
    if i == n - 1:
        return 2
    return 1 if 2 * i == n - 1 else 3


def fill_panels_by_place(g: Grid, table: list[list[int]], bg: int) -> Grid:
    """Panels cut by full separator lines: each panel's background is painted with the
    colour ``table`` (``[key, colour]`` rows, colour -1: left alone) gives its place in
    the panel grid, key ``4 * row class + column class`` (classes: 0 first, 1 the exact
    middle, 2 last, 3 other)."""
    rsegs, csegs = _sep_segments(g, bg)
    look = {int(k): int(v) for k, v in table}
    o = g.copy()
    done = False
    for i, (y0, y1) in enumerate(rsegs):
        for j, (x0, x1) in enumerate(csegs):
            c = look.get(4 * _place_class(i, len(rsegs)) + _place_class(j, len(csegs)), -1)
            if c >= 0:
                box = o[y0:y1, x0:x1]
                box[box == bg] = c
                done = True
    if not done:
        raise ValueError("no panel to fill")
    return o


# ---------------------------------------------------------------- generators


def _moved_colors(ctx: Ctx) -> list[int] | None:
    """The colours whose cells are the same in every train pair (the anchors), when
    the pairs have the same shapes, keep their colour counts and something moves."""
    if not ctx.same_shape:
        return None
    fixed = set(ctx.state_colors)
    moved = False
    for s, t in ctx.pairs:
        if not np.array_equal(
            np.bincount(s.ravel(), minlength=10), np.bincount(t.ravel(), minlength=10)
        ):
            return None
        if not (s == t).all():
            moved = True
        fixed = {c for c in fixed if np.array_equal(s == c, t == c)}
    return sorted(fixed) if moved else None


def g_center_in(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, colour counts kept, and the cells of colour ``c`` stay put while
    others move."""
    if ctx.depth > 1:
        return
    for c in _moved_colors(ctx) or []:
        yield (c, ctx.bg)


def g_copy_to_match(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, and the targets only gain cells of one colour that the states
    already have."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    gained: list[int] = []
    for s, t in ctx.pairs:
        cs = np.unique(t[s != t])
        if cs.size != 1 or not (s == cs[0]).any():
            return
        gained.append(int(cs[0]))
    if len(set(gained)) == 1:
        yield (gained[0],)
        return
    for r in (12, 10, 11):
        try:
            if [role_color(s, r) for s in ctx.train] == gained:
                yield (r,)
                return
        except ValueError:
            continue


def g_sort_stack(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, colour counts kept, and every target's cells reach side ``d`` and
    one end of the perpendicular side."""
    if ctx.depth > 1 or _moved_colors(ctx) is None:
        return
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


def g_mirror_across(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, some colour's cells fixed (the walls) and the rest moved (colour
    counts kept: ``keep`` 0) or copied (nothing lost, something gained: ``keep`` 1)."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    moved = _moved_colors(ctx)
    if moved is not None:
        for c in moved[:3]:
            yield (c, 0, ctx.bg)
        return
    if not ctx.grows:
        return
    fixed = [
        c for c in ctx.state_colors if all(np.array_equal(s == c, t == c) for s, t in ctx.pairs)
    ]
    for c in fixed[:3]:
        yield (c, 1, ctx.bg)


def g_gather_dots(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, and every target has fewer (but some) non-background cells."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    for s, t in ctx.pairs:
        ms, mt = s != ctx.bg, t != ctx.bg
        if not mt.any() or int(mt.sum()) >= int(ms.sum()):
            return
    yield (ctx.bg,)


def g_nest_colors(ctx: Ctx) -> Iterator[Args]:
    """Every target is as big as the largest bounding box of one colour of its state
    (with the background the task's or each state's commonest colour)."""
    if not ctx.smaller or ctx.depth > 1:
        return
    for bg in (ctx.bg, 13):
        ok = True
        for s, t in ctx.pairs:
            b = role_color(s, bg)
            hw = [(0, 0)]
            for c in np.unique(s).tolist():
                if c != b:
                    ys, xs = np.nonzero(s == c)
                    hw.append((int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1))
            if t.shape != (max(h for h, _ in hw), max(w for _, w in hw)):
                ok = False
                break
        if ok:
            yield (bg,)
            return


def g_mirror_to_markers(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, nothing lost and something painted."""
    if ctx.depth > 1 or not ctx.grows:
        return
    for s, t in ctx.pairs:
        m = s != ctx.bg
        if not (s[m] == t[m]).all():
            return
    yield (ctx.bg,)


def g_crop_lines(ctx: Ctx) -> Iterator[Args]:
    """Every target is smaller than its state in both dimensions, or in one dimension
    and equal in the other."""
    if not ctx.smaller or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        if t.shape[0] > s.shape[0] or t.shape[1] > s.shape[1] or t.size < 2:
            return
    yield (0, ctx.bg)
    yield (1, ctx.bg)


def g_ray_to_wall(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, nothing lost and something painted."""
    if ctx.depth > 1 or not ctx.grows:
        return
    yield (ctx.bg,)


def g_recolor_topology(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, only colours change, each object (4-connected, one colour) takes
    one colour, and that colour is a function of its topology key; the table must
    cover the test objects' keys."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
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


def g_crop_solid_rect(ctx: Ctx) -> Iterator[Args]:
    """Every target is smaller than its state in both dimensions, and at least 2 x 2."""
    if not ctx.smaller or ctx.depth > 1:
        return
    for s, t in ctx.pairs:
        if not (2 <= t.shape[0] < s.shape[0] and 2 <= t.shape[1] < s.shape[1]):
            return
    yield ()


def g_place_halves(ctx: Ctx) -> Iterator[Args]:
    """Every target is half its state (one dimension halved, the other kept)."""
    if ctx.depth > 0 or not ctx.pairs:
        return
    for s, t in ctx.pairs:
        if t.shape not in ((s.shape[0], s.shape[1] // 2), (s.shape[0] // 2, s.shape[1])):
            return
    yield ()


def g_march_copies(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, nothing lost and something painted, and every train state has an
    object (8-connected) of two colours."""
    if ctx.depth > 0 or not ctx.grows:
        return
    bgs = {int(np.bincount(s.ravel(), minlength=10).argmax()) for s in ctx.train}
    bg = 13 if len(bgs) > 1 else ctx.bg
    for s in ctx.train:
        b = role_color(s, bg)
        objs = components(s, 8, 0, b)
        if len(objs) > 20 or not any(np.unique(s[ys, xs]).size == 2 for ys, xs in objs):
            return
    yield ("marker", bg)
    yield ("main", bg)


def g_overlay_corners(ctx: Ctx) -> Iterator[Args]:
    """Targets of one shape, smaller than every state and at least half its size along
    each axis (so that the four corner windows cover the state)."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or not ctx.smaller or ctx.depth > 1:
        return
    h, w = shapes.pop()
    for s in ctx.states:
        gh, gw = s.shape
        if not (h <= gh <= 2 * h and w <= gw <= 2 * w) or (h, w) == (gh, gw):
            return
    yield (h, w, ctx.bg)


def g_panel_transforms(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, every state cut into the same number of equal panels, the first
    one kept, and each other target panel one rigid transform of the first (the same
    transform per panel index in every pair)."""
    if ctx.depth > 0 or not ctx.same_shape:
        return
    allowed: list[set[int]] | None = None
    for s, t in ctx.pairs:
        try:
            boxes = _panels(s, ctx.bg)
        except ValueError:
            return
        if not 2 <= len(boxes) <= 9 or (allowed is not None and len(boxes) != len(allowed)):
            return
        y0, y1, x0, x1 = boxes[0]
        src = s[y0:y1, x0:x1]
        if not (src == t[y0:y1, x0:x1]).all() or (s == t).all():
            return
        ok = [
            {k for k in range(8) if np.array_equal(rigid(src, k), t[a:b, c:d])}
            for a, b, c, d in boxes
        ]
        allowed = ok if allowed is None else [x & y for x, y in zip(allowed, ok, strict=True)]
        if not all(allowed):
            return
    if allowed:
        yield ([min(a) for a in allowed], ctx.bg)


def g_panel_colors(ctx: Ctx) -> Iterator[Args]:
    """Every state cut into panels, every target one line of one colour per panel
    (rows or columns, one length), the colour a function of the panel's content that
    covers the test panels."""
    if ctx.depth > 0 or not ctx.smaller:
        return
    for layout in ("rows", "cols"):
        table: dict[int, int] = {}
        lens: set[int] = set()
        ok = True
        for s, t in ctx.pairs:
            tt = t if layout == "rows" else t.T
            try:
                parts = [s[a:b, c:d] for a, b, c, d in _panels(s, ctx.bg)]
            except ValueError:
                return
            if len(parts) != tt.shape[0] or not (tt == tt[:, :1]).all():
                ok = False
                break
            lens.add(tt.shape[1])
            for p, c in zip(parts, tt[:, 0].tolist(), strict=True):
                if table.setdefault(panel_key(p), int(c)) != int(c):
                    ok = False
            if not ok:
                break
        if not ok or len(lens) != 1 or len(set(table.values())) < 2:
            continue
        for s in ctx.states[ctx.n :]:
            try:
                boxes = _panels(s, ctx.bg)
                if any(panel_key(s[a:b, c:d]) not in table for a, b, c, d in boxes):
                    return
            except ValueError:
                return
        yield (sorted([k, v] for k, v in table.items()), layout, lens.pop(), ctx.bg)
        return


def g_extend_drift(ctx: Ctx) -> Iterator[Args]:
    """Every target is its state grown along one axis to one common length, the state
    kept at the side the growth starts from."""
    if ctx.depth > 0 or not ctx.larger:
        return
    for d, ax in (("down", 0), ("up", 0), ("right", 1), ("left", 1)):
        lens = set()
        for s, t in ctx.pairs:
            if t.shape[1 - ax] != s.shape[1 - ax] or t.shape[ax] <= s.shape[ax]:
                break
            m = s.shape[ax]
            part = {"down": t[:m], "up": t[-m:], "right": t[:, :m], "left": t[:, -m:]}[d]
            if not np.array_equal(part, s):
                break
            lens.add(t.shape[ax])
        else:
            if len(lens) == 1:
                yield (d, lens.pop(), ctx.bg)


def g_extend_runs(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, nothing lost and something painted, and some train state has a
    line whose non-background cells are one run of two colours."""
    if ctx.depth > 0 or not ctx.grows:
        return
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


def g_lines_by_position(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; in every pair each line with one non-background cell becomes one
    colour (the others stay), a function of the cell's index that covers the test
    lines."""
    if ctx.depth > 0 or not ctx.same_shape:
        return
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


def g_palette_stripes(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, nothing lost and something painted, and each target's last line
    along the stripes' axis is of one non-background colour."""
    if ctx.depth > 0 or not ctx.grows:
        return
    for axis in ("h", "v"):
        lasts = [(t if axis == "h" else t.T)[-1] for _s, t in ctx.pairs]
        if all(r[0] != ctx.bg and (r == r[0]).all() for r in lasts):
            yield (axis, ctx.bg)


def g_fill_panels_by_place(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, every state cut into at least 2 x 2 panels, and every target panel
    either unchanged or with its background painted one colour, the same colour for
    panels of the same place class in every pair; the test panels' classes seen (or
    "other" places, when no such place was painted)."""
    if ctx.depth > 0 or not ctx.same_shape:
        return
    table: dict[int, int] = {}
    for s, t in ctx.pairs:
        try:
            rsegs, csegs = _sep_segments(s, ctx.bg)
        except ValueError:
            return
        if len(rsegs) < 2 or len(csegs) < 2:
            return
        for i, (y0, y1) in enumerate(rsegs):
            for j, (x0, x1) in enumerate(csegs):
                a, b = s[y0:y1, x0:x1], t[y0:y1, x0:x1]
                free = a == ctx.bg
                if not (a[~free] == b[~free]).all():
                    return
                cs = np.unique(b[free])
                if cs.size > 1:
                    return
                c = -1 if cs.size == 0 or cs[0] == ctx.bg else int(cs[0])
                k = 4 * _place_class(i, len(rsegs)) + _place_class(j, len(csegs))
                if table.setdefault(k, c) != c:
                    return
    # an unseen place class of the test is left alone only if it is an "other" place
    # (not first, middle or last) and no "other" place was ever painted
    painted_other = any(v >= 0 and (k // 4 == 3 or k % 4 == 3) for k, v in table.items())
    for s in ctx.states[ctx.n :]:
        try:
            rsegs, csegs = _sep_segments(s, ctx.bg)
        except ValueError:
            return
        for i in range(len(rsegs)):
            for j in range(len(csegs)):
                ri, cj = _place_class(i, len(rsegs)), _place_class(j, len(csegs))
                if 4 * ri + cj not in table and (3 not in (ri, cj) or painted_other):
                    return
    if any(v >= 0 for v in table.values()):
        yield (sorted([k, v] for k, v in table.items() if v >= 0), ctx.bg)


OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = [
    ("center_in", center_in, ("g", "c", "c")),
    ("copy_to_match", copy_to_match, ("g", "c")),
    ("mirror_across", mirror_across, ("g", "c", "b", "c")),
    ("gather_dots", gather_dots, ("g", "c")),
    ("nest_colors", nest_colors, ("g", "c")),
    ("mirror_to_markers", mirror_to_markers, ("g", "c")),
    ("crop_lines", crop_lines, ("g", "b", "c")),
    ("ray_to_wall", ray_to_wall, ("g", "c")),
    ("recolor_topology", recolor_topology, ("g", "table", "c")),
    ("crop_solid_rect", crop_solid_rect, ("g",)),
    ("place_halves", place_halves, ("g",)),
    ("sort_stack", sort_stack, ("g", ("down", "up", "left", "right"), ("start", "end"), "c")),
    ("march_copies", march_copies, ("g", ("marker", "main"), "c")),
    ("overlay_corners", overlay_corners, ("g", "k", "k", "c")),
    ("panel_transforms", panel_transforms, ("g", "ts", "c")),
    ("panel_colors", panel_colors, ("g", "table", ("rows", "cols"), "k", "c")),
    ("extend_drift", extend_drift, ("g", ("down", "up", "right", "left"), "k", "c")),
    ("extend_runs", extend_runs, ("g", ("h", "v", "hv"), "c")),
    ("lines_by_position", lines_by_position, ("g", "table", ("h", "v"), "c")),
    ("palette_stripes", palette_stripes, ("g", ("h", "v"), "c")),
    ("fill_panels_by_place", fill_panels_by_place, ("g", "table", "c")),
]
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {
    "center_in": g_center_in,
    "copy_to_match": g_copy_to_match,
    "sort_stack": g_sort_stack,
    "place_halves": g_place_halves,
    "crop_solid_rect": g_crop_solid_rect,
    "recolor_topology": g_recolor_topology,
    "ray_to_wall": g_ray_to_wall,
    "crop_lines": g_crop_lines,
    "mirror_to_markers": g_mirror_to_markers,
    "nest_colors": g_nest_colors,
    "gather_dots": g_gather_dots,
    "mirror_across": g_mirror_across,
    "march_copies": g_march_copies,
    "overlay_corners": g_overlay_corners,
    "panel_transforms": g_panel_transforms,
    "panel_colors": g_panel_colors,
    "extend_drift": g_extend_drift,
    "extend_runs": g_extend_runs,
    "lines_by_position": g_lines_by_position,
    "palette_stripes": g_palette_stripes,
    "fill_panels_by_place": g_fill_panels_by_place,
}
"""Parameter generators, by op name."""
