"""Ops that repeat or repair copies of a shape: repeating toward other objects, repairing
damaged copies, overlaying objects, recolouring matches, painting a key through a mask,
marching copies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import Grid, components, enclosed, role_color, split_parts
from atlas_actors.arc.infer import Args, Ctx, bg_readings, fits, fits_bg, painted_bg
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, OnSelf, W, op


def _mask(ys: Grid, xs: Grid) -> tuple[tuple[int, int], bytes]:
    """An object's shape: its bounding-box size and the cells it fills there."""
    m = np.zeros((int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1), dtype=bool)
    m[ys - ys.min(), xs - xs.min()] = True
    return m.shape, m.tobytes()


def g_recolor_matching(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; only non-background cells change, to non-background colours."""
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


@op(
    params=(OneOf("inner", "frame"), K.FLAG, K.COLOR),
    generator=g_recolor_matching,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the 2 bar in the 5 frame is the template: the matching 1 bar turns 2
        Case(("inner", 1, 0), "55550 52250 55550 00000 11010", "55550 52250 55550 00000 22010"),
        Case(("frame", 0, 0), "55550 52250 55550 00000 11010", "55550 52250 55550 00000 55010"),
    ],
)
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
            walled = enclosed(g != g[ys[0], xs[0]])
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


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=OnSelf(fits),
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the 1 block repeats toward the 3, in colour 3, every 3 columns to the edge
        Case((0,), "110300000 110000000", "110330330 110330330"),
        # diagonal step
        Case((0,), "44000 40000 00000 00020 00000", "44000 40000 00000 00022 00020"),
    ],
)
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


def _ncolors(g: Grid, bg: int) -> int:
    return int(np.unique(g[g != bg]).size)


def _key_and_mask(g: Grid, bg: int) -> tuple[Grid, Grid]:
    """Two parts of the grid: the key (two or more colours) and the mask (one other
    colour). Parts are the two non-empty parts of a split (separator lines, left/right,
    top/bottom) when the mask touches every side of its part, else a multicolour object and the
    bounding box of everything else."""
    for mode in ("sep", "h2", "v2"):
        try:
            parts = [p for p in split_parts(g, mode, bg) if (p != bg).any()]
        except ValueError:
            continue
        if len(parts) == 2:
            try:
                key, mask = _order_key_mask(parts[0], parts[1], bg, True)
            except ValueError:
                continue
            on = mask != bg
            if on[0].any() and on[-1].any() and on[:, 0].any() and on[:, -1].any():
                return key, mask  # the mask spans its part
    return _key_mask_objects(g, bg)


def _order_key_mask(a: Grid, b: Grid, bg: int, disjoint: bool) -> tuple[Grid, Grid]:
    na, nb = _ncolors(a, bg), _ncolors(b, bg)
    if min(na, nb) != 1 or max(na, nb) < 2:
        raise ValueError("cannot tell key from mask")
    if disjoint and set(np.unique(a).tolist()) & set(np.unique(b).tolist()) - {bg}:
        raise ValueError("key and mask share a colour")
    return (a, b) if na > nb else (b, a)


def _key_mask_objects(g: Grid, bg: int) -> tuple[Grid, Grid]:
    objs = components(g, 8, 0, bg)
    if len(objs) < 2 or len(objs) > 60:
        raise ValueError("no key and mask")
    ncol = [np.unique(g[ob]).size for ob in objs]
    k = int(np.argmax(ncol))
    if ncol[k] < 2 or ncol.count(ncol[k]) > 1:
        raise ValueError("no single multicolour key")
    ys, xs = objs[k]
    key = g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    rest = g.copy()
    rest[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] = bg
    my, mx = np.nonzero(rest != bg)
    if my.size == 0:
        raise ValueError("no mask")
    mask = rest[my.min() : my.max() + 1, mx.min() : mx.max() + 1]
    return _order_key_mask(key, mask, bg, False)


def g_key_mask(ctx: Ctx) -> Iterator[Args]:
    try:
        for s in ctx.train:
            _key_and_mask(s, ctx.bg)
    except ValueError:
        return
    for mode in ("up", "down", "kron"):
        yield (mode, ctx.bg)


@op(
    params=(OneOf("up", "down", "kron"), K.COLOR),
    generator=g_key_mask,
    when=W.RESHAPED | W.SHALLOW,
    cases=[
        Case(
            ("up", 0),
            "1280000 3480000 8888888 0085005 0080550 0080500 0085505",
            "1002 0120 0300 3304",
        ),
        Case(("down", 0), "550000 550000 005500 005500 000000 000012 000034", "10 04"),
        Case(("kron", 0), "1070 0277", "1000 1100 0020 0022"),
    ],
)
def key_mask(g: Grid, mode: str, bg: int) -> Grid:
    """Paint a small multicolour key through a one-colour mask found elsewhere in the
    grid: ``up`` the key scaled up to the mask's size, ``down`` the mask scaled down to
    the key's size, ``kron`` a copy of the mask per key cell in that cell's colour."""
    key, mask = _key_and_mask(g, bg)
    (kh, kw), (mh, mw) = key.shape, mask.shape
    on = mask != bg
    if mode == "up":
        if mh % kh or mw % kw:
            raise ValueError("mask is not a multiple of the key")
        big = np.repeat(np.repeat(key, mh // kh, axis=0), mw // kw, axis=1)
        return np.where(on, big, bg)
    if mode == "down":
        if mh % kh or mw % kw:
            raise ValueError("mask is not a multiple of the key")
        fy, fx = mh // kh, mw // kw
        small = on.reshape(kh, fy, kw, fx).mean(axis=(1, 3)) > 0.5
        return np.where(small, key, bg)
    if kh * mh > 30 or kw * mw > 30:
        raise ValueError("too large")
    o = np.full((kh * mh, kw * mw), bg, dtype=g.dtype)
    for y in range(kh):
        for x in range(kw):
            if key[y, x] != bg:
                o[y * mh : (y + 1) * mh, x * mw : (x + 1) * mw][on] = key[y, x]
    return o


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


def g_march_copies(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, nothing lost and something painted, and every train state has an
    object (8-connected) of two colours."""
    bgs = {int(np.bincount(s.ravel(), minlength=10).argmax()) for s in ctx.train}
    bg = 13 if len(bgs) > 1 else ctx.bg
    for s in ctx.train:
        b = role_color(s, bg)
        objs = components(s, 8, 0, b)
        if len(objs) > 20 or not any(np.unique(s[ys, xs]).size == 2 for ys, xs in objs):
            return
    yield ("marker", bg)
    yield ("main", bg)


@op(
    params=(OneOf("marker", "main"), K.COLOR),
    generator=g_march_copies,
    when=W.GROWS | W.FIRST,
    cases=[
        # the 1 diamond is stamped in the marker's colour 2 toward the marker, with the
        # smallest step (2) that clears it, until off the grid
        Case(
            ("marker", 0),
            "010000 101000 010200 000000 000000 000000",
            "010000 101000 010200 002020 000202 000020",
        ),
        # background by role (13, the commonest colour 8): a bar repeated to the right
        Case(("marker", 13), "1888 1388 1888", "1333 1333 1333"),
        # copies in the shape's own colour (the marker cell itself is kept)
        Case(("main", 0), "1000 1300 1000", "1111 1311 1111"),
        # two markers on one shape: copies toward each (step 3 clears the bar)
        Case(("marker", 0), "00 02 01 01 01 02 00", "02 02 01 01 01 02 02"),
    ],
)
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


_OVER_IN = "55000 51055 00025"


@op(
    params=(K.COLOR,),
    generator=Fitting(fits_bg, lambda ctx: ((bg,) for bg in bg_readings(ctx))),
    when=W.SMALLER | W.SHALLOW,
    cases=[
        # two same-size objects stacked, 5 (the commonest) showing through
        Case((0,), _OVER_IN, "55 21"),
        # role 13: each grid's commonest colour is its background
        Case((13,), "55777 51755 77725", "55 21"),
    ],
)
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


def g_complete_copies(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own):
    objects joined across gaps of one cell, then two."""
    for bg in bg_readings(ctx):
        if painted_bg(ctx, bg):
            for reach in (1, 2):
                if fits_bg(ctx, complete_copies, reach, bg):
                    yield (reach, bg)
                    break


_PLUS_IN = "010000 111000 010000 000020 000222 000000"
_PLUS_OUT = "010000 111000 010000 000020 000222 000020"


@op(
    params=(K.COUNT, K.COLOR),
    generator=g_complete_copies,
    when=W.SHALLOW,
    # the 2 plus lacks its bottom arm: the one placement of the 1 plus's shape covering
    # it finishes it
    cases=[Case((1, 0), _PLUS_IN, _PLUS_OUT)],
)
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
