"""Shape-changing DSL ops: outputs sized by a count, continued layer patterns, shapes
put into a marked box, shapes nested after completing cut ones, and pieces assembled by
their marks. Primitives, signatures and generators (see ops_objects.py for the
conventions).

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import _fits
from atlas_actors.arc.ops_objects import color_mask, nest_shapes
from atlas_actors.arc.prims import grid_feature, rigid, role_color

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]

OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = []
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {}
"""Parameter generators, by op name."""

# ---------------------------------------------------------------- primitives

_COUNTS = ("ncells", "nbg", "ncolors", "nobjects")
_CORNERS = ("tl", "tr", "bl", "br")
_LAYOUTS = ("row", "col", "square", "side_ncells", "side_nbg", "side_ncolors")


_GRID_COUNTS = {"ncells": "ncells", "ncolors": "ncolors", "nobjects": "nobjects8"}
"""The counts that are :func:`prims.grid_feature` features (by their name there)."""


def _count(g: Grid, what: str, bg: int) -> int:
    """A number read off the grid: its non-background cells (``ncells``), background
    cells (``nbg``), non-background colours (``ncolors``) or objects (``nobjects``,
    8-connected, several colours)."""
    if what == "nbg":
        return int((g == bg).sum())
    if what not in _GRID_COUNTS:
        raise ValueError(f"unknown count {what}")
    return grid_feature(g, _GRID_COUNTS[what], bg)


def repeat_count(g: Grid, what: str, layout: str, bg: int) -> Grid:
    """N copies of the grid, N a count read off it (see ``_count``), laid out as tiles:
    a row (``row``), a column (``col``), a full N x N block (``square``), or the first
    N tiles in reading order of a square canvas whose side (in tiles) is another count
    (``side_ncells``, ``side_nbg``, ``side_ncolors``), the other tiles background."""
    h, w = g.shape
    n = _count(g, what, bg)
    if n < 1:
        raise ValueError("nothing to count")
    if layout == "row":
        ty, tx, k = 1, n, n
    elif layout == "col":
        ty, tx, k = n, 1, n
    elif layout == "square":
        ty, tx, k = n, n, n * n
    elif layout.startswith("side_"):
        s = _count(g, layout[5:], bg)
        ty, tx, k = s, s, n
        if n > s * s:
            raise ValueError("canvas too small")
    else:
        raise ValueError(f"unknown layout {layout}")
    if not (ty >= 1 and tx >= 1 and h * ty <= 30 and w * tx <= 30):
        raise ValueError("too large")
    o = np.full((h * ty, w * tx), bg, dtype=g.dtype)
    for i in range(k):
        y, x = divmod(i, tx)
        o[y * h : (y + 1) * h, x * w : (x + 1) * w] = g
    return o


def extend_layers(g: Grid, k: int, corner: str, bg: int) -> Grid:
    """The grid's pattern at corner ``corner`` is nested L-shaped layers around that
    corner (every cell has the colour of the diagonal cell of its layer); continue the
    layers periodically on a grid ``k`` times as big, from the same corner. The pattern
    is the bounding box of the non-background cells when it starts at the corner, else
    the whole grid."""
    fy, fx = corner[0] == "b", corner[1] == "r"
    g = g[::-1] if fy else g
    g = g[:, ::-1] if fx else g
    out = _layers_tl(g, k, bg)
    out = out[::-1] if fy else out
    return out[:, ::-1] if fx else out


def _layers_tl(g: Grid, k: int, bg: int) -> Grid:
    """``extend_layers`` from the top-left corner."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0 or ys.min() or xs.min():
        raise ValueError("no corner pattern")
    p = int(max(ys.max(), xs.max())) + 1
    pat = g[:p, :p]
    if pat.shape != (p, p) or p < 2:
        raise ValueError("pattern not square")
    layer = np.maximum.outer(np.arange(p), np.arange(p))
    diag = np.diagonal(pat)
    if not np.array_equal(pat, diag[layer]):
        raise ValueError("not nested layers")
    if not (2 <= k <= 4 and h * k <= 30 and w * k <= 30):
        raise ValueError("bad factor")
    big = np.maximum.outer(np.arange(h * k), np.arange(w * k)) % p
    out: Grid = diag[big].astype(g.dtype)
    return out


def _canvas_shape(g: Grid, what: str, size: str, bg: int) -> tuple[int, int]:
    """The canvas for ``canvas_count``: the grid's shape times a count (``scale``) or a
    square of its longer side times the count (``square``)."""
    h, w = g.shape
    n = _count(g, what, bg)
    hh, ww = (h * n, w * n) if size == "scale" else (max(h, w) * n, max(h, w) * n)
    if not (n >= 1 and h <= hh <= 30 and w <= ww <= 30):
        raise ValueError("bad canvas")
    return hh, ww


def canvas_count(g: Grid, what: str, size: str, corner: str, bg: int) -> Grid:
    """The grid in corner ``corner`` of a background canvas whose size is set by a count
    read off the grid (see ``_count``): its shape times the count (``size`` ``scale``)
    or a square of its longer side times the count (``square``)."""
    h, w = g.shape
    hh, ww = _canvas_shape(g, what, size, bg)
    o = np.full((hh, ww), bg, dtype=g.dtype)
    y = 0 if corner[0] == "t" else hh - h
    x = 0 if corner[1] == "l" else ww - w
    o[y : y + h, x : x + w] = g
    return o


_TS = {"id": (0,), "flips": (0, 4, 5, 2), "all": (0, 4, 5, 2, 1, 3, 6, 7)}


def _corner_box(g: Grid, bg: int) -> tuple[int, int, int, int, int]:
    """The box marked by four cells of one colour at the corners of a rectangle, or by
    a whole rectangular frame of one colour (at least 3 x 3; the biggest when several
    colours mark one): (top, bottom, left, right, colour)."""
    best: tuple[int, int, int, int, int] | None = None
    for c in np.unique(g).tolist():
        if c == bg:
            continue
        ys, xs = np.nonzero(g == c)
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        if y1 - y0 < 2 or x1 - x0 < 2:
            continue
        ring = np.zeros(g.shape, dtype=bool)
        ring[y0 : y1 + 1, x0 : x1 + 1] = True
        ring[y0 + 1 : y1, x0 + 1 : x1] = False
        corners = ys.size == 4 and all(g[y, x] == c for y in (y0, y1) for x in (x0, x1))
        if not corners and not np.array_equal(ring, g == c):  # nor a whole frame
            continue
        if best is None or (y1 - y0) * (x1 - x0) > (best[1] - best[0]) * (best[3] - best[2]):
            best = (y0, y1, x0, x1, int(c))
    if best is None:
        raise ValueError("no corner-marked box")
    return best


def fill_marked_box(g: Grid, ts: str, bg: int) -> Grid:
    """Crop the box marked by four corner cells (or a whole frame) of one colour and
    put the shape found outside it (the bounding box of the other cells) inside,
    transformed (``ts``: ``id``, ``flips`` or ``all`` rigid transforms) and scaled up
    by a whole factor: so that it covers every cell already inside the box and agrees
    with them, or (an empty box) as big as fits (over the whole box when it fits
    nowhere inside the marks). Among the placements that do, the one whose cells touch
    most same-coloured cells of the box wins (on a tie the biggest, then the first
    transform)."""
    y0, y1, x0, x1, _c = _corner_box(g, bg)
    box = g[y0 : y1 + 1, x0 : x1 + 1].copy()
    rest = g.copy()
    rest[y0 : y1 + 1, x0 : x1 + 1] = bg
    ys, xs = np.nonzero(rest != bg)
    if ys.size == 0:
        raise ValueError("no shape outside the box")
    shape = rest[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    content = box != bg
    content[[0, -1], :] = content[:, [0, -1]] = False  # what is inside the border
    best = _best_place(box, shape, _TS[ts], 1, content, bg)
    if best is None:  # not inside the marks: over the whole box
        best = _best_place(box, shape, _TS[ts], 0, content, bg)
    if best is None:
        raise ValueError("the shape fits nowhere")
    y, x, patch = best
    on = patch != bg
    box[y : y + patch.shape[0], x : x + patch.shape[1]][on] = patch[on]
    return box


def _best_place(
    box: Grid, shape: Grid, ts: tuple[int, ...], m: int, content: Grid, bg: int
) -> tuple[int, int, Grid] | None:
    """For ``fill_marked_box``: the best placement (top, left, scaled patch) of the
    shape in the box less a margin ``m``, or None. An empty box only tries the biggest
    scale that fits; otherwise a placement must cover the box's content."""
    h, w = box.shape
    cy, cx = np.nonzero(content)
    best: tuple[tuple[int, int, int], int, int, Grid] | None = None  # (key, y, x, patch)
    seen: set[tuple[tuple[int, int], bytes]] = set()
    for order, t in enumerate(ts):
        base = rigid(shape, t)
        if (base.shape, base.tobytes()) in seen:  # a symmetric shape: nothing new
            continue
        seen.add((base.shape, base.tobytes()))
        bh, bw = base.shape
        top = min((h - 2 * m) // bh, (w - 2 * m) // bw)
        if top < 1:
            continue
        for k in range(1 if cy.size else top, top + 1):
            patch = np.repeat(np.repeat(base, k, axis=0), k, axis=1)
            ph, pw = patch.shape
            on = patch != bg
            ys = range(m, h - m - ph + 1)
            xs = range(m, w - m - pw + 1)
            if cy.size:  # the patch must cover the content's box
                ys = range(max(m, int(cy.max()) - ph + 1), min(h - m - ph, int(cy.min())) + 1)
                xs = range(max(m, int(cx.max()) - pw + 1), min(w - m - pw, int(cx.min())) + 1)
            for y in ys:
                for x in xs:
                    if cy.size and not on[cy - y, cx - x].all():
                        continue
                    win = box[y : y + ph, x : x + pw]
                    both = on & (win != bg)
                    if (win[both] != patch[both]).any():
                        continue
                    score = int(both.sum()) + _touching(box, patch, y, x, bg)
                    key = (score, ph * pw, -order)
                    if best is None or key > best[0]:
                        best = (key, y, x, patch)
    return None if best is None else best[1:]


def _touching(box: Grid, patch: Grid, y: int, x: int, bg: int) -> int:
    """How many (patch cell, box cell) pairs of 4-neighbours have the same colour, the
    box cell outside the patch's cells, with the patch at (y, x) of the box."""
    ph, pw = patch.shape
    big = np.full((box.shape[0] + 2, box.shape[1] + 2), -1, dtype=np.int64)
    big[1:-1, 1:-1] = box
    pad = np.full((ph + 2, pw + 2), bg, dtype=np.int64)
    pad[1:-1, 1:-1] = patch
    on = pad[1:-1, 1:-1] != bg
    n = 0
    for dy, dx in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        nb_patch = pad[1 + dy : 1 + dy + ph, 1 + dx : 1 + dx + pw]
        nb_box = big[1 + y + dy : 1 + y + dy + ph, 1 + x + dx : 1 + x + dx + pw]
        n += int((on & (nb_patch == bg) & (nb_box == patch)).sum())
    return n


def _complete_mirror(g: Grid, c: int, n: int) -> Grid | None:
    """The cells of colour ``c`` as an ``n`` x ``n`` mask symmetric about both middle
    lines, where the grid's edge may cut the shape: the one placement of the box over
    the visible cells whose mirrored cells inside the grid all have colour ``c`` and
    span the box (None when no placement or several do)."""
    ys, xs = np.nonzero(g == c)
    y0, x0 = int(ys.min()), int(xs.min())
    h, w = int(ys.max()) - y0 + 1, int(xs.max()) - x0 + 1
    gh, gw = g.shape
    found: Grid | None = None
    for oy in range(n - h + 1):
        for ox in range(n - w + 1):
            top, left = y0 - oy, x0 - ox
            if h < n and top >= 0 and top + n <= gh:  # a cut needs an edge
                continue
            if w < n and left >= 0 and left + n <= gw:
                continue
            m = np.zeros((n, n), dtype=bool)
            m[ys - top, xs - left] = True
            m = m | m[::-1] | m[:, ::-1] | m[::-1, ::-1]
            if not (m[0].any() and m[:, 0].any()):  # the shape spans its box
                continue
            my, mx = np.nonzero(m)
            gy, gx = my + top, mx + left
            inside = (gy >= 0) & (gy < gh) & (gx >= 0) & (gx < gw)
            if (g[gy[inside], gx[inside]] != c).any():
                continue
            if found is not None:
                return None
            found = m
    return found


def nest_complete(g: Grid, bg: int) -> Grid:
    """Nest the colours concentrically, like ``nest_colors``, when some shapes are cut
    by the grid's edge: each colour's cells form one shape, symmetric about both its
    middle lines; one that is not (as seen) is completed as the smallest square such
    shape that the grid's edge cuts and that agrees with the grid (see
    ``_complete_mirror``). The output is as big as the biggest shape, and each shape is
    centred in it, bigger ones painted first."""
    b = role_color(g, bg)
    shapes: list[tuple[int, Grid]] = []
    for c in np.unique(g).tolist():
        if c == b:
            continue
        seen = color_mask(g, c)
        m: Grid | None = seen
        if not (np.array_equal(seen, seen[::-1]) and np.array_equal(seen, seen[:, ::-1])):
            lo = max(seen.shape)
            for n in range(lo, min(30, 2 * lo + 1) + 1):
                m = _complete_mirror(g, c, n)
                if m is not None:
                    break
        if m is None:
            raise ValueError("no single completion")
        shapes.append((c, m))
    return nest_shapes(shapes, b, g.dtype)


def _square_pieces(g: Grid, bg: int) -> list[Grid]:
    """Cut the non-background cells into solid p x p squares, p^2 times the number of
    squares (9 or 4) being the number of cells: each square starts at the first
    uncovered cell in reading order."""
    left = g != bg
    n = int(left.sum())
    for k in (9, 4):
        p = round((n / k) ** 0.5)
        if p >= 1 and k * p * p == n:
            break
    else:
        raise ValueError("not 9 or 4 squares")
    pieces = []
    while left.any():
        y, x = (int(v[0]) for v in np.nonzero(left))
        win = left[y : y + p, x : x + p]
        if win.shape != (p, p) or not win.all():
            raise ValueError("not solid squares")
        pieces.append(g[y : y + p, x : x + p])
        win[:] = False
    return pieces


def assemble_by_mark(g: Grid, bg: int) -> Grid:
    """Assemble square pieces into a 3 x 3 (9 pieces) or 2 x 2 (4 pieces) picture: the
    pieces share a filler colour (the commonest); each piece goes to the slot its other
    colours point at, from its centre (a piece of filler only goes in the middle)."""
    pieces = _square_pieces(g, bg)
    k = 3 if len(pieces) == 9 else 2
    p = pieces[0].shape[0]
    stack = np.stack(pieces)
    filler = int(np.bincount(stack.ravel()).argmax())
    o = np.full((k * p, k * p), filler, dtype=g.dtype)
    used: set[tuple[int, int]] = set()
    mid = (p - 1) / 2
    for q in pieces:
        ys, xs = np.nonzero(q != filler)
        if ys.size == 0:
            if k == 2:
                raise ValueError("a blank piece has no corner")
            slot = (1, 1)
        else:
            sy, sx = int(np.sign(ys.mean() - mid)), int(np.sign(xs.mean() - mid))
            if k == 2 and (sy == 0 or sx == 0):
                raise ValueError("no corner to point at")
            slot = ((sy + 1) // 2, (sx + 1) // 2) if k == 2 else (sy + 1, sx + 1)
        if slot in used:
            raise ValueError("two pieces for one slot")
        used.add(slot)
        o[slot[0] * p : (slot[0] + 1) * p, slot[1] * p : (slot[1] + 1) * p] = q
    return o


# ---------------------------------------------------------------- generators


def _multiples(ctx: Ctx) -> bool:
    """Every target is a whole number of copies of its state in each direction, and the
    number of copies is not the same for all pairs (else a plain tile does it)."""
    ratios = set()
    for s, t in ctx.pairs:
        (h, w), (th, tw) = s.shape, t.shape
        if th % h or tw % w or (th == h and tw == w):
            return False
        ratios.add((th // h, tw // w))
    return len(ratios) > 1


def g_repeat_count(ctx: Ctx) -> Iterator[Args]:
    """Targets whole multiples of their states, by a ratio that varies: every count and
    layout that rebuilds all train targets."""
    if ctx.depth > 1 or ctx.same_shape or not _multiples(ctx):
        return
    for what in _COUNTS:
        for layout in _LAYOUTS:
            if _fits(ctx, repeat_count, what, layout, ctx.bg):
                yield (what, layout, ctx.bg)


OP_TABLE.append(("repeat_count", repeat_count, ("g", _COUNTS, _LAYOUTS, "c")))
GENERATORS["repeat_count"] = g_repeat_count


def g_extend_layers(ctx: Ctx) -> Iterator[Args]:
    """Every target the same whole multiple (2 to 4) of its state in both directions."""
    if ctx.depth > 1 or ctx.same_shape:
        return
    ks = set()
    for s, t in ctx.pairs:
        (h, w), (th, tw) = s.shape, t.shape
        if th % h or th // h != tw // w or tw % w:
            return
        ks.add(th // h)
    if len(ks) != 1 or not 2 <= (k := ks.pop()) <= 4:
        return
    for corner in _CORNERS:
        if _fits(ctx, extend_layers, k, corner, ctx.bg):
            yield (k, corner, ctx.bg)


OP_TABLE.append(("extend_layers", extend_layers, ("g", "k", _CORNERS, "c")))
GENERATORS["extend_layers"] = g_extend_layers


def g_canvas_count(ctx: Ctx) -> Iterator[Args]:
    """Targets bigger than their states by a ratio that varies: every count and canvas
    size that gives the targets' shapes, with each corner where every target holds the
    state's non-background cells."""
    if ctx.depth > 1 or ctx.same_shape or not ctx.larger:
        return
    if len({(t.shape[0] / s.shape[0], t.shape[1] / s.shape[1]) for s, t in ctx.pairs}) < 2:
        return
    for what in _COUNTS:
        for size in ("scale", "square"):
            try:
                if any(_canvas_shape(s, what, size, ctx.bg) != t.shape for s, t in ctx.pairs):
                    continue
            except ValueError:
                continue
            for corner in _CORNERS:
                ok = True
                for s, t in ctx.pairs:
                    out = canvas_count(s, what, size, corner, ctx.bg)
                    fg = out != ctx.bg
                    if not np.array_equal(out[fg], t[fg]):
                        ok = False
                        break
                if ok:
                    yield (what, size, corner, ctx.bg)


OP_TABLE.append(("canvas_count", canvas_count, ("g", _COUNTS, ("scale", "square"), _CORNERS, "c")))
GENERATORS["canvas_count"] = g_canvas_count


def g_fill_marked_box(ctx: Ctx) -> Iterator[Args]:
    """Smaller targets whose four corners have one colour: the narrowest transform set
    that rebuilds the train targets."""
    if ctx.depth > 1 or ctx.same_shape or not ctx.smaller:
        return
    for t in ctx.targets:
        h, w = t.shape
        if h < 3 or w < 3:
            return
        c = t[0, 0]
        if c == ctx.bg or not (t[0, -1] == c and t[-1, 0] == c and t[-1, -1] == c):
            return
    for ts in _TS:
        if _fits(ctx, fill_marked_box, ts, ctx.bg):
            yield (ts, ctx.bg)
            return


OP_TABLE.append(("fill_marked_box", fill_marked_box, ("g", tuple(_TS), "c")))
GENERATORS["fill_marked_box"] = g_fill_marked_box


def g_nest_complete(ctx: Ctx) -> Iterator[Args]:
    """Smaller square targets with the colours of their states: the task's background
    or each state's commonest colour as the background."""
    if ctx.depth > 1 or not ctx.smaller:
        return
    for s, t in ctx.pairs:
        if t.shape[0] != t.shape[1] or set(np.unique(s).tolist()) != set(np.unique(t).tolist()):
            return
    for bg in (ctx.bg, 13):
        if _fits(ctx, nest_complete, bg):
            yield (bg,)
            return


OP_TABLE.append(("nest_complete", nest_complete, ("g", "c")))
GENERATORS["nest_complete"] = g_nest_complete


def g_assemble_by_mark(ctx: Ctx) -> Iterator[Args]:
    """Square targets (3 or 2 pieces a side) with as many cells as their state has
    non-background cells."""
    if ctx.depth > 1 or not ctx.smaller:
        return
    for s, t in ctx.pairs:
        if t.shape[0] != t.shape[1] or (t.shape[0] % 2 and t.shape[0] % 3):
            return
        if int((s != ctx.bg).sum()) != t.size:
            return
    if _fits(ctx, assemble_by_mark, ctx.bg):
        yield (ctx.bg,)


OP_TABLE.append(("assemble_by_mark", assemble_by_mark, ("g", "c")))
GENERATORS["assemble_by_mark"] = g_assemble_by_mark
