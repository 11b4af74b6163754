"""Ops that split the grid into equal parts or halves and combine them: boolean masks,
stacking, picking one part, overlaying corners or windows, folding, crossing bands."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, components, split_parts
from atlas_actors.arc.infer import Args, Ctx, fits
from atlas_actors.arc.registry import BG, PLAIN, Case, K, OneOf, OnSelf, W, op

SPLIT_MODES = ("h2", "h3", "v2", "v3", "sep")


def _combine_color(ctx: Ctx) -> list[int]:
    return ctx.target_colors[:3]


def g_split_combine(ctx: Ctx) -> Iterator[Args]:
    for mode in SPLIT_MODES:
        try:
            shapes = [split_parts(s, mode, ctx.bg)[0].shape for s in ctx.train]
        except ValueError:
            continue
        if any(sh != t.shape for sh, t in zip(shapes, ctx.targets, strict=False)):
            continue
        for c in _combine_color(ctx):
            for how in ("and", "or", "xor", "nor", "anb", "bna"):
                yield (mode, how, c, ctx.bg)


COMBINE_OPS = ("and", "or", "xor", "nor", "anb", "bna")


@op(
    params=(OneOf(*SPLIT_MODES), OneOf(*COMBINE_OPS), K.COLOR, K.COLOR),
    generator=g_split_combine,
    when=W.SMALLER,
    cases=[Case(("h2", "and", 4, 0), "11510", "40"), Case(("h2", "xor", 4, 0), "10511", "04")],
)
def split_combine(g: Grid, mode: str, op: str, c: int, bg: int) -> Grid:
    """Split, then combine the parts' non-background masks with a boolean ``op``;
    ``c`` where true, background elsewhere."""
    parts = split_parts(g, mode, bg)
    if len({p.shape for p in parts}) != 1:
        raise ValueError("parts differ in shape")
    ms = np.stack([p != bg for p in parts])
    n = ms.sum(axis=0)
    if op == "and":
        r = n == len(parts)
    elif op == "or":
        r = n > 0
    elif op == "xor":
        r = n == 1
    elif op == "nor":
        r = n == 0
    elif op == "anb":
        r = ms[0] & ~ms[1:].any(axis=0)
    elif op == "bna":
        r = ms[-1] & ~ms[:-1].any(axis=0)
    else:
        raise ValueError(f"unknown op {op!r}")
    return np.where(r, c, bg)


@op(
    params=(OneOf(*SPLIT_MODES), K.FLAG, K.COLOR),
    generator=lambda ctx: ((mode, k, ctx.bg) for mode in SPLIT_MODES for k in (0, 1)),
    when=W.SMALLER,
    cases=[Case(("v2", 0, 0), "10 02", "12")],
)
def split_overlay(g: Grid, mode: str, rev: int, bg: int) -> Grid:
    """Split, then stack the parts: later parts (earlier if ``rev``) paint over earlier."""
    parts = split_parts(g, mode, bg)
    if len({p.shape for p in parts}) != 1:
        raise ValueError("parts differ in shape")
    if rev:
        parts = parts[::-1]
    o = parts[0].copy()
    for p in parts[1:]:
        o[p != bg] = p[p != bg]
    return o


def g_split_pick(ctx: Ctx) -> Iterator[Args]:
    # every selector, but of the parts by index only the first two
    sels = [s for s in PICK_SELS if not s.startswith("i") or s in ("i0", "i1")]
    for mode in SPLIT_MODES:
        for sel in sels:
            yield (mode, sel, ctx.bg)


PICK_SELS = (
    "unique",
    "most",
    "least",
    "most_colors",
    "least_colors",
    "sym",
    "asym",
    *tuple(f"i{i}" for i in range(9)),
)


@op(
    params=(OneOf(*SPLIT_MODES), OneOf(*PICK_SELS), K.COLOR),
    generator=g_split_pick,
    when=W.SMALLER,
    cases=[
        Case(("sep", "unique", 0), "15152 15151", "2 1"),
        Case(("h3", "most", 0), "102203", "22"),
        Case(("h3", "asym", 0), "112366 114566", "23 45"),
    ],
)
def split_pick(g: Grid, mode: str, sel: str, bg: int) -> Grid:
    """Split, then return one part chosen by ``sel``."""
    parts = split_parts(g, mode, bg)
    if sel.startswith("i"):
        return parts[int(sel[1:])].copy()
    if sel in ("sym", "asym"):
        flags = [
            any(
                (m.shape == p.shape and (m == p).all())
                for m in (p[:, ::-1], p[::-1, :], p.T, np.rot90(p, 2).T)
            )
            for p in parts
        ]
        cand = [p for p, f in zip(parts, flags, strict=True) if f == (sel == "sym")]
        if len(cand) != 1:
            raise ValueError("no single (a)symmetric part")
        return cand[0].copy()
    if sel == "unique":
        keys = [p.tobytes() + bytes(p.shape) for p in parts]
        cand = [p for p, k in zip(parts, keys, strict=True) if keys.count(k) == 1]
        if len(cand) != 1:
            masks = [(p != bg).tobytes() + bytes(p.shape) for p in parts]
            cand = [p for p, k in zip(parts, masks, strict=True) if masks.count(k) == 1]
        if len(cand) != 1:
            raise ValueError("no unique part")
        return cand[0].copy()
    vals = {
        "most": [int((p != bg).sum()) for p in parts],
        "least": [-int((p != bg).sum()) for p in parts],
        "most_colors": [int(np.unique(p[p != bg]).size) for p in parts],
        "least_colors": [-int(np.unique(p[p != bg]).size) for p in parts],
    }[sel]
    return parts[int(np.argmax(vals))].copy()


@op(
    params=(OneOf("h", "v"), K.COLOR),
    generator=lambda ctx: ((a, ctx.bg) for a in ("h", "v")),
    when=W.SMALLER,
    cases=[Case(("h", 0), "10530 00502", "13 20")],
)
def fold(g: Grid, axis: str, bg: int) -> Grid:
    """Split into two halves (``h`` left/right, ``v`` top/bottom; a one-line separator
    between them is dropped) and lay the second, mirrored, over the first."""
    a, b = split_parts(g, "h2" if axis == "h" else "v2", bg)
    b = b[:, ::-1] if axis == "h" else b[::-1, :]
    return np.where(b != bg, b, a)


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SHALLOW | W.SAME_SHAPE,
    only_if=OnSelf(fits),
    # the 3 row band lies on top of the 8 column band: the 8 band goes on top
    cases=[Case((0,), "080 333 080", "080 383 080")],
)
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


def _parts(g: Grid, mode: str, bg: int) -> list[Grid]:
    """``split_parts``, plus ``q4``: the four quadrants (a middle separator line or
    column dropped), in reading order."""
    if mode != "q4":
        parts = split_parts(g, mode, bg)
    else:
        parts = [q for half in split_parts(g, "v2", bg) for q in split_parts(half, "h2", bg)]
    if any(p.size == 0 for p in parts):
        raise ValueError("empty part")
    return parts


def _overlay_order(parts_list: list[list[Grid]], targets: list[Grid], bg: int) -> list[int] | None:
    """A top-to-bottom order of the parts consistent with every target, if one exists:
    where exactly one part shows the target's colour, it lies above the other parts
    that are not background there."""
    n = len(parts_list[0])
    above: set[tuple[int, int]] = set()
    for parts, t in zip(parts_list, targets, strict=False):
        stack = np.stack(parts)
        fg = stack != bg
        if ((t != bg) != fg.any(axis=0)).any():
            return None
        shows = stack == t[None]
        one = (shows.sum(axis=0) == 1) & (t != bg)
        for y, x in zip(*np.nonzero(one), strict=True):
            w = int(np.argmax(shows[:, y, x]))
            for j in np.nonzero(fg[:, y, x] & ~shows[:, y, x])[0].tolist():
                above.add((w, j))
    order: list[int] = []
    left = set(range(n))
    while left:
        free = sorted(i for i in left if not any((j, i) in above for j in left))
        if not free:
            return None
        order.append(free[0])
        left.discard(free[0])
    return order


def g_overlay_parts(ctx: Ctx) -> Iterator[Args]:
    for mode in ("q4", "h2", "v2", "h3", "v3", "sep"):
        try:
            pl = [_parts(s, mode, ctx.bg) for s in ctx.states]
        except ValueError:
            continue
        if len({len(p) for p in pl}) != 1 or len(pl[0]) > 9:
            continue
        if any(
            {p.shape for p in parts} != {t.shape} for parts, t in zip(pl, ctx.targets, strict=False)
        ):
            continue
        order = _overlay_order(pl[: ctx.n], ctx.targets, ctx.bg)
        if order is not None:
            yield (mode, order, ctx.bg)


@op(
    params=(OneOf("q4", "h2", "v2", "h3", "v3", "sep"), K.INTS, K.COLOR),
    generator=g_overlay_parts,
    when=W.SMALLER | W.SHALLOW,
    cases=[
        Case(("q4", [2, 0, 3, 1], 0), "1105 0055 6000 0099", "61 99"),
        Case(("h2", [1, 0], 0), "1102 0000", "12 00"),
    ],
)
def overlay_parts(g: Grid, mode: str, order: list[int], bg: int) -> Grid:
    """Split into equal parts and stack them: ``order`` lists part indices from top to
    bottom (the first part's non-background cells show above all others)."""
    parts = _parts(g, mode, bg)
    if len({p.shape for p in parts}) != 1 or sorted(order) != list(range(len(parts))):
        raise ValueError("parts do not fit the order")
    o = np.full_like(parts[0], bg)
    for i in reversed(order):
        p = parts[i]
        o[p != bg] = p[p != bg]
    return o


def _bg_runs(empty: Grid) -> list[tuple[int, int]]:
    """Spans between runs of empty lines."""
    segs: list[tuple[int, int]] = []
    start = -1
    for i, e in enumerate([*empty.tolist(), True]):
        if not e and start < 0:
            start = i
        elif e and start >= 0:
            segs.append((start, i))
            start = -1
    return segs


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SMALLER | W.SHALLOW,
    cases=[Case((0,), "101002 111002 000000 333040", "12 34")],
)
def block_summary(g: Grid, bg: int) -> Grid:
    """Cut the grid along its empty (all-background) rows and columns into blocks; an
    R x C grid of each block's most common non-background colour."""
    rows = _bg_runs((g == bg).all(axis=1))
    cols = _bg_runs((g == bg).all(axis=0))
    if len(rows) * len(cols) < 2:
        raise ValueError("no blocks")
    o = np.full((len(rows), len(cols)), bg, dtype=g.dtype)
    for i, (y0, y1) in enumerate(rows):
        for j, (x0, x1) in enumerate(cols):
            b = g[y0:y1, x0:x1]
            fg = b[b != bg]
            if fg.size:
                o[i, j] = int(np.bincount(fg, minlength=10).argmax())
    return o


def g_overlay_windows(ctx: Ctx) -> Iterator[Args]:
    """Targets of one odd shape, smaller than the states, holding a colour that every
    state has at its centre."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or not ctx.smaller or ctx.depth > 1:
        return
    h, w = shapes.pop()
    if h % 2 == 0 or w % 2 == 0:
        return
    centre = {int(t[h // 2, w // 2]) for t in ctx.targets}
    c = centre.pop() if len(centre) == 1 else ctx.bg
    if c != ctx.bg and all((s == c).any() for s in ctx.states):
        yield (c, h, w, ctx.bg)


@op(
    params=(K.COLOR, K.COUNT, K.COUNT, K.COLOR),
    generator=g_overlay_windows,
    cases=[Case((5, 3, 3, 0), "60000 05000 00000 00057 00000", "600 057 000")],
)
def overlay_windows(g: Grid, c: int, h: int, w: int, bg: int) -> Grid:
    """Overlay the ``h`` x ``w`` windows centred on every cell of colour ``c`` (parts
    outside the grid are background; later windows paint over earlier ones)."""
    ys, xs = np.nonzero(g == c)
    if ys.size == 0 or ys.size > 30 or h % 2 == 0 or w % 2 == 0:
        raise ValueError("no anchors or even window")
    pad = np.pad(g, ((h // 2, h // 2), (w // 2, w // 2)), constant_values=bg)
    o = np.full((h, w), bg, dtype=g.dtype)
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        win = pad[y : y + h, x : x + w]
        o[win != bg] = win[win != bg]
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.FIRST,
    only_if=lambda ctx: all(t.shape == (s.shape[0] - 4, s.shape[1] - 4) for s, t in ctx.pairs),
    cases=[Case((0,), "211113 111111 118011 118811 111111 411116", "20 46")],
)
def corner_quadrants(g: Grid, bg: int) -> Grid:
    """The four corner cells are a colour key: drop the two outer rings (corners and
    frame) and paint each quadrant's non-background cells with its corner's colour."""
    h, w = g.shape
    if h < 6 or w < 6 or h % 2 or w % 2:
        raise ValueError("no even interior")
    inner = g[2:-2, 2:-2]
    ih, iw = inner.shape
    key = np.zeros_like(inner)
    key[: ih // 2, : iw // 2] = g[0, 0]
    key[: ih // 2, iw // 2 :] = g[0, -1]
    key[ih // 2 :, : iw // 2] = g[-1, 0]
    key[ih // 2 :, iw // 2 :] = g[-1, -1]
    return np.where(inner != bg, key, bg)


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


@op(
    generator=PLAIN,
    only_if=lambda ctx: (
        bool(ctx.pairs)
        and all(
            t.shape in ((s.shape[0], s.shape[1] // 2), (s.shape[0] // 2, s.shape[1]))
            for s, t in ctx.pairs
        )
    ),
    when=W.FIRST,
    # the 1-2 template of the left half moves onto the loose 2 of the right half
    cases=[Case((), "88880000 81280000 88880002", "0000 0000 0012")],
)
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


@op(
    params=(K.COUNT, K.COUNT, K.COLOR),
    generator=g_overlay_corners,
    cases=[
        # the four 2 x 2 corner windows of a 3 x 3 grid overlaid (they share the middle)
        Case((2, 2, 0), "100 000 002", "10 02"),
        Case((2, 3, 0), "08008 80000 00000 00030", "088 830"),
    ],
)
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
