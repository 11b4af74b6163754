"""Ops that put pieces together: square pieces into a picture, quadrants, two pieces into a
rectangle, a shape into a frame or a marked box, pieces into holes, repainting the
foreground with the input's colours."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, components, d4_cells, rigid_transform, role_color
from atlas_actors.arc.infer import Args, Ctx, fits
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, OnSelf, W, op


def _shape_key(ys: Grid, xs: Grid) -> tuple[tuple[int, int], ...]:
    """The cells of a shape shifted to start at row and column 0, sorted."""
    return tuple(sorted(zip((ys - ys.min()).tolist(), (xs - xs.min()).tolist(), strict=True)))


@op(
    params=(OneOf("id", "d4"), K.COLOR),
    generator=Fitting(fits, lambda ctx: ((t, ctx.bg) for t in ("id", "d4")), first=True),
    only_if=lambda ctx: all(
        not (s == t).all()
        and np.array_equal(
            np.bincount(s.ravel(), minlength=10), np.bincount(t.ravel(), minlength=10)
        )
        for s, t in ctx.pairs
    ),
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the lone 2 moves into the one-cell hole of the 5 ring
        Case(("id", 0), "555000 505020 555000", "555000 525000 555000"),
        # two 1 x 2 pieces: the 7 has other objects (noise), so the 6 goes in
        Case(("id", 0), "555507 500500 555500 770660", "555507 566500 555500 770000"),
        # turned: the upright 1 x 2 piece fills the flat 1 x 2 hole
        Case(("d4", 0), "55550 50053 55553", "55550 53350 55550"),
        # shifted only: the flat 4 4 piece fits, the upright 3 3 piece does not
        Case(("id", 0), "55550 50053 55553 00044", "55550 54453 55553 00000"),
    ],
)
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
        keys = {tuple(sorted((y, x) for y, x, _ in d4_cells(cells, k))) for k in range(8)}
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


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SMALLER | W.FIRST,
    cases=[
        Case(
            (0,), "222222000 200002000 200002000 222222000 000000035", "222222 233552 233552 222222"
        )
    ],
)
def fit_in_frame(g: Grid, bg: int) -> Grid:
    """Scale the shape up to fill the inside of the hollow rectangular frame (the
    object with the largest bounding box) and return the framed result."""
    objs = components(g, 8, 0, bg)
    if len(objs) < 2 or len(objs) > 30:
        raise ValueError("need a frame and a shape")
    areas = [(int(ys.max() - ys.min() + 1) * int(xs.max() - xs.min() + 1)) for ys, xs in objs]
    fy, fx = objs[int(np.argmax(areas))]
    frame = g[fy.min() : fy.max() + 1, fx.min() : fx.max() + 1].copy()
    inner = frame[1:-1, 1:-1]
    if inner.size == 0 or (inner != bg).any():
        raise ValueError("not a hollow frame")
    rest = g.copy()
    rest[fy, fx] = bg
    ys, xs = np.nonzero(rest != bg)
    if ys.size == 0:
        raise ValueError("no shape")
    shape = rest[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    (ih, iw), (sh, sw) = inner.shape, shape.shape
    if ih % sh or iw % sw or ih // sh != iw // sw:
        raise ValueError("shape does not scale to the frame")
    k = ih // sh
    frame[1:-1, 1:-1] = np.repeat(np.repeat(shape, k, axis=0), k, axis=1)
    return frame


def g_paint_fg(ctx: Ctx) -> Iterator[Args]:
    """Built by the solver's finisher (it needs the original input), never enumerated."""
    return iter(())


@op(
    params=(K.GRID, OneOf("common", "second", "least", "lost"), K.COLOR),
    generator=g_paint_fg,
    cases=[
        Case.of(["paint_fg", ["crop_color", "x", 1], "x", "common", 0], "3301 3001", "3 3"),
        Case.of(["paint_fg", ["keep_color", "x", 1, 0], "x", "lost", 0], "12 01", "20 02"),
    ],
)
def paint_fg(g: Grid, src: Grid, role: str, bg: int) -> Grid:
    """Paint every non-background cell with a colour of another grid ``src`` (the
    original input: the colour a crop or a rebuild lost): ``role`` ``common``,
    ``second`` or ``least`` (colour roles 10, 11, 12 of ``src``), or ``lost``, the one
    non-background colour of ``src`` that ``g`` lacks."""
    if role == "lost":
        lost = set(np.unique(src).tolist()) - set(np.unique(g).tolist()) - {bg}
        if len(lost) != 1:
            raise ValueError("no single lost colour")
        c = lost.pop()
    else:
        c = role_color(src, {"common": 10, "second": 11, "least": 12}[role])
    o = g.copy()
    o[g != bg] = c
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SMALLER | W.FIRST,
    only_if=lambda ctx: all((t != ctx.bg).all() for t in ctx.targets),
    cases=[Case((0,), "33000 30000 00007 00077", "337 377")],
)
def join_pieces(g: Grid, bg: int) -> Grid:
    """Two one-colour pieces fitted together (by translation) into a full rectangle
    with no gap or overlap; the smallest such rectangle, found in reading order."""
    objs = components(g, 8, 1, bg)
    if len(objs) != 2:
        raise ValueError("need two pieces")
    masks = []
    for ys, xs in objs:
        m = np.full((int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1), bg, g.dtype)
        m[ys - ys.min(), xs - xs.min()] = g[ys, xs]
        masks.append(m)
    a, b = masks
    if a.size > 100 or b.size > 100:
        raise ValueError("pieces too large")
    (ah, aw), (bh, bw) = a.shape, b.shape
    best: Grid | None = None
    for dy in range(-bh, ah + 1):
        for dx in range(-bw, aw + 1):
            y0, x0 = min(0, dy), min(0, dx)
            hh, ww = max(ah, dy + bh) - y0, max(aw, dx + bw) - x0
            if best is not None and hh * ww >= best.size:
                continue
            o = np.full((hh, ww), bg, dtype=g.dtype)
            o[-y0 : -y0 + ah, -x0 : -x0 + aw] = a
            sub = o[dy - y0 : dy - y0 + bh, dx - x0 : dx - x0 + bw]
            if ((sub != bg) & (b != bg)).any():
                continue
            sub[b != bg] = b[b != bg]
            if (o != bg).all():
                best = o
    if best is None:
        raise ValueError("pieces do not fit")
    return best


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SMALLER | W.FIRST,
    only_if=lambda ctx: all(t.shape[0] % 2 == 0 for t in ctx.targets),
    cases=[Case((0,), "0220880 0020800 0000000 3000001 3300011", "8822 8002 3001 3311")],
)
def corner_assemble(g: Grid, bg: int) -> Grid:
    """Four equal-sized objects put together as the quadrants of one grid: each goes to
    the corner its own filled corner points at (the opposite corner being empty)."""
    objs = components(g, 8, 1, bg)
    if len(objs) != 4:
        raise ValueError("need four pieces")
    crops = [g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] for ys, xs in objs]
    if len({c.shape for c in crops}) != 1:
        raise ValueError("pieces differ in size")
    h, w = crops[0].shape
    o = np.full((2 * h, 2 * w), bg, dtype=g.dtype)
    used = set()
    for c in crops:
        quads = [
            (qy, qx)
            for qy in (0, 1)
            for qx in (0, 1)
            if c[-qy, -qx] != bg and c[qy - 1, qx - 1] == bg
        ]
        if len(quads) != 1 or quads[0] in used:
            raise ValueError("no single corner")
        qy, qx = quads[0]
        used.add((qy, qx))
        o[qy * h : (qy + 1) * h, qx * w : (qx + 1) * w] = c
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
        base = rigid_transform(shape, t)
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


def g_fill_marked_box(ctx: Ctx) -> Iterator[Args]:
    """Smaller targets whose four corners have one colour: the narrowest transform set
    that rebuilds the train targets."""
    for t in ctx.targets:
        h, w = t.shape
        if h < 3 or w < 3:
            return
        c = t[0, 0]
        if c == ctx.bg or not (t[0, -1] == c and t[-1, 0] == c and t[-1, -1] == c):
            return
    for ts in _TS:
        if fits(ctx, fill_marked_box, ts, ctx.bg):
            yield (ts, ctx.bg)
            return


_BOX = "400040 200000 400040 000000 112000"
_BOX_OUT = "40004 22110 40004"


@op(
    params=(OneOf(*_TS), K.COLOR),
    generator=g_fill_marked_box,
    when=W.RESHAPED | W.SMALLER | W.SHALLOW,
    cases=[
        # the 1 2 outside the box of the 4 corners goes where it agrees with the 1 inside
        Case(
            ("id", 0),
            "4000400 0000000 0010000 0000000 4000400 0000000 1200000",
            "40004 00000 00120 00000 40004",
        ),
        # a whole frame marks the box too: the 5 goes inside, scaled to fill it
        Case(("id", 0), "33330 30030 30030 33330 00005", "3333 3553 3553 3333"),
        # 1 1 2 flipped so that its 2 touches the box's 2
        Case(("flips", 0), _BOX, _BOX_OUT),
    ],
)
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


_PICTURE = "1552 5555 5555 3554"
_PIECES = "55015 54055 00000 52550 55350"


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=(
        lambda ctx: all(
            t.shape[0] == t.shape[1]
            and not (t.shape[0] % 2 and t.shape[0] % 3)
            and int((s != ctx.bg).sum()) == t.size
            for s, t in ctx.pairs
        ),
        OnSelf(fits),
    ),
    when=W.SMALLER | W.SHALLOW,
    # four 2 x 2 pieces (two of them touching), each put in the corner its mark is at
    cases=[Case((0,), _PIECES, _PICTURE)],
)
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
