"""Ops that complete or copy templates: partial copies of multicolour templates, templates
fitted at marker pieces, anchored copies, copies matched by a key, painted templates."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import Grid, components, d4_cells, role_color, sep_segments
from atlas_actors.arc.infer import Args, Ctx, fits, has_cells
from atlas_actors.arc.ops.cells import cells_to_pixels
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, W, op

_Fit = tuple[int, int, int, int, int, int, list[int], list[tuple[int, int, int]], int]
"""A fitting placement: sort key (5 ints), its index, the objects it covers, the cells
it paints, the template's index."""


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
        shapes = [d4_cells(base, k) for k in range(nk)]
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


def g_paint_template(ctx: Ctx) -> Iterator[Args]:
    for mode in ("shape", "cell"):
        for conn in (8, 4):
            yield (mode, 0, conn, ctx.bg)
            yield (mode, 1, conn, ctx.bg)


@op(
    params=(OneOf("shape", "cell"), K.FLAG, K.CONN, K.COLOR),
    generator=g_paint_template,
    when=W.SAME_SHAPE,
    cases=[
        Case(("shape", 0, 8, 0), "1200 0000 0055 0000", "0000 0000 0012 0000"),
        Case(("cell", 1, 8, 0), "12000 34000 00000 00050 00000", "12000 34000 00120 00340 00000"),
    ],
)
def paint_template(g: Grid, mode: str, keep: int, conn: int, bg: int) -> Grid:
    """Copy the one multicolour object (the template; objects are ``conn``-connected)
    onto other objects: ``mode``
    ``shape`` recolours each one-colour object with the template's outline to the
    template's colours; ``cell`` paints the template centred on each single cell.
    ``keep`` 0 erases the template."""
    objs = components(g, conn, 0, bg)
    if len(objs) > 60:
        raise ValueError("too many objects")
    multi = [ob for ob in objs if np.unique(g[ob]).size > 1]
    if len(multi) != 1:
        raise ValueError("no single template")
    ty, tx = multi[0]
    y0, x0 = int(ty.min()), int(tx.min())
    th, tw = int(ty.max()) - y0 + 1, int(tx.max()) - x0 + 1
    tmask = np.zeros((th, tw), dtype=bool)
    tmask[ty - y0, tx - x0] = True
    tcol = np.full((th, tw), bg, dtype=g.dtype)
    tcol[ty - y0, tx - x0] = g[ty, tx]
    o = g.copy()
    if not keep:
        o[ty, tx] = bg
    h, w = g.shape
    done = 0
    for ob in objs:
        if ob is multi[0]:
            continue
        ys, xs = ob
        if mode == "shape":
            oy, ox = int(ys.min()), int(xs.min())
            if (int(ys.max()) - oy + 1, int(xs.max()) - ox + 1) != (th, tw):
                continue
            m = np.zeros((th, tw), dtype=bool)
            m[ys - oy, xs - ox] = True
            if not (m == tmask).all():
                continue
        else:
            if ys.size != 1:
                continue
            oy, ox = int(ys[0]) - th // 2, int(xs[0]) - tw // 2
            if oy < 0 or ox < 0 or oy + th > h or ox + tw > w:
                continue
        region = o[oy : oy + th, ox : ox + tw]
        region[tmask] = tcol[tmask]
        done += 1
    if not done:
        raise ValueError("nothing to paint")
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.GROWS | W.SHALLOW,
    # the 4 . 4 pair and the lone 8 are completed to copies of the 4 8 4 template
    cases=[Case((0,), "48400 00000 40400 00000 00080", "48400 00000 48400 00000 00484")],
)
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


@op(
    params=(K.COLOR_OR_NONE, K.COLOR),
    generator=Fitting(
        fits, lambda ctx: ((f, ctx.bg) for f in [-1, *ctx.state_colors[:6]]), first=True
    ),
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the 3-anchored template is copied onto the lone 3, anchors aligned
        Case((-1, 0), "43000 40000 00030 00000", "43000 40000 00430 00400"),
        # mirrored left-right when the anchor colour is the flip colour
        Case((3, 0), "43000 40000 00030 00000", "43000 40000 00034 00004"),
    ],
)
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


def g_fit_templates(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background, or each state's
    commonest colour), or some cells erased and others painted (moves): plain
    placements first, then turned ones. On the input grids only (depth 0): a search
    can cost a good part of a second on a busy grid."""
    for bg in (ctx.bg, 13):
        bgs = [role_color(s, bg) for s in ctx.train]
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


@op(
    params=(OneOf("id", "d4"), OneOf("copy", "move"), K.COLOR),
    generator=g_fit_templates,
    when=W.SAME_SHAPE | W.FIRST,
    cases=[
        # the lone 2 (found once in the template) gets a copy of the template
        Case(("id", "copy", 0), "21000 01000 00020 00000", "21000 01000 00021 00001"),
        # scaled by 2, the template's 3 recoloured 4 like the marker's block
        Case(("id", "copy", 0), "331000 000000 004411 004411", "331000 000000 444411 444411"),
        # turned (half a turn) to fit the 6 5 marker, and moved there
        Case(("d4", "move", 0), "56000 07000 00000 00065 00000", "00000 00000 00070 00065 00000"),
        # without turns nothing fits
        Case(("id", "move", 0), "560 070 000 650", "560 070 000 650"),
    ],
)
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


@op(
    params=(OneOf("id", "d4"), K.COLOR),
    generator=Fitting(fits, lambda ctx: ((t, ctx.bg) for t in ("id", "d4")), first=True),
    only_if=lambda ctx: has_cells(ctx),
    when=W.FIRST | W.PAINTED,
    # in cell space (cells cut by 5 lines) the lone 2 cell gets the 2 1 template
    cases=[
        Case(
            ("id", 0),
            "2515050 5555555 0505050 5555555 0505250",
            "2515050 5555555 0505050 5555555 0505251",
        )
    ],
)
def cell_fit_templates(g: Grid, turns: str, bg: int) -> Grid:
    """:func:`fit_templates` (copies) on a grid cut by separator lines into cells,
    each cell read as one pixel (its commonest non-background colour); the cells that
    the templates paint are filled whole."""
    rsegs, csegs = sep_segments(g, bg)
    small = cells_to_pixels(g, bg)
    new = fit_templates(small, turns, "copy", bg)
    o = g.copy()
    for i, (y0, y1) in enumerate(rsegs):
        for j, (x0, x1) in enumerate(csegs):
            if new[i, j] != small[i, j]:
                part = o[y0:y1, x0:x1]
                part[part == bg] = new[i, j]
    return o


def g_copy_to_match(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, and the targets only gain cells of one colour that the states
    already have."""
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


@op(
    params=(K.COLOR,),
    generator=g_copy_to_match,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the 2 frame around a 0 is copied onto the other 0 ringed by 1s; the 0 next to the
        # 1 at the edge has no room
        Case((2,), "222111 202101 222111 111110", "222222 202202 222222 111110"),
        # the least common colour (role 12) is the template's
        Case((12,), "5051 1111 1011", "5051 1111 5051"),
    ],
)
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
