"""Ops that complete or repair symmetry: mirroring into the background, repairing noise by
symmetry, symmetry inside a box or about a colour, showing what an occluder hides,
completing lines by analogy."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, rigid_transform
from atlas_actors.arc.infer import (
    Args,
    Ctx,
    bg_readings,
    color_change,
    fits,
    fits_bg,
    noise_colors,
    painted_bg,
)
from atlas_actors.arc.registry import Case, K, OneOf, W, op


def g_symmetrize(ctx: Ctx) -> Iterator[Args]:
    for k in SYM_KINDS:
        yield (k, ctx.bg)


SYM_KINDS = ("h", "v", "hv", "rot", "diag")


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


@op(
    params=(OneOf(*SYM_KINDS), K.COLOR),
    generator=g_symmetrize,
    when=W.SAME_SHAPE,
    cases=[Case(("h", 0), "1200", "1221")],
)
def symmetrize(g: Grid, kind: str, bg: int) -> Grid:
    """Fill background cells from their mirror images (``h``, ``v``, ``hv``, ``rot``, ``diag``)."""
    o = g.copy()
    ks = {"h": [4], "v": [5], "hv": [4, 5, 2], "rot": [1, 2, 3], "diag": [6, 7]}[kind]
    for _ in range(2):
        for k in ks:
            m = rigid_transform(o, k)
            if m.shape != o.shape:
                raise ValueError("not square")
            o = np.where(o == bg, m, o)
    return o


@op(
    params=(K.COLOR,),
    generator=lambda ctx: ((c,) for c in noise_colors(ctx)),
    when=W.SAME_SHAPE,
    cases=[Case((9,), "1221 3943 1221", "1221 3443 1221")],
)
def sym_repair(g: Grid, noise: int) -> Grid:
    """Replace cells of colour ``noise`` using the grid's mirror symmetries.

    Tries left-right, up-down and diagonal mirrors about every axis position, keeps those
    consistent with all non-noise cells they overlap, and copies values through them.
    """
    h, w = g.shape
    o = g.copy()
    known = g != noise
    if known.all():
        return o
    yy, xx = np.mgrid[0:h, 0:w]
    maps = []
    for a in range(h // 2, 2 * h - 1 - h // 2):
        maps.append((a - yy, xx))
    for a in range(w // 2, 2 * w - 1 - w // 2):
        maps.append((yy, a - xx))
    for a in range(-(h // 3), h // 3 + 1):
        maps.append((xx + a, yy - a))
    good = []
    for my, mx in maps:
        inb = (my >= 0) & (my < h) & (mx >= 0) & (mx < w)
        if inb.sum() < h * w // 2:
            continue
        sy, sx = np.where(inb, my, 0), np.where(inb, mx, 0)
        both = inb & known & known[sy, sx]
        if both.sum() and (g[both] == g[sy, sx][both]).all():
            good.append((inb, sy, sx))
    for _ in range(4):
        for inb, sy, sx in good:
            take = inb & (o == noise) & (o[sy, sx] != noise)
            o[take] = o[sy, sx][take]
    if (o == noise).any():
        raise ValueError("could not repair")
    return o


@op(
    params=(OneOf(*SYM_KINDS), K.COLOR),
    generator=g_symmetrize,
    when=W.SAME_SHAPE,
    cases=[Case(("h", 0), "012000", "012000"), Case(("h", 0), "0120300", "0122300")],
)
def symmetrize_bbox(g: Grid, kind: str, bg: int) -> Grid:
    """``symmetrize`` applied inside the bounding box of the non-background cells."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    o = g.copy()
    o[y0:y1, x0:x1] = symmetrize(g[y0:y1, x0:x1], kind, bg)
    return o


@op(
    params=(K.COLOR,),
    generator=lambda ctx: ((c,) for c in ctx.state_colors),
    when=W.SMALLER,
    cases=[Case((9,), "1221 3943 1221", "4")],
)
def crop_noise_repair(g: Grid, noise: int) -> Grid:
    """Repair ``noise`` cells by symmetry, then crop what was under the noise."""
    ys, xs = np.nonzero(g == noise)
    if ys.size == 0:
        raise ValueError("no noise")
    r = sym_repair(g, noise)
    return r[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


def g_symmetrize_about(ctx: Ctx) -> Iterator[Args]:
    cs = ctx.state_colors[:5] + ([10, 12] if len(ctx.state_colors) > 1 else [])
    for c in cs:
        for kind in ("h", "v", "hv", "rot"):
            yield (c, kind, ctx.bg)


@op(
    params=(K.COLOR, OneOf("h", "v", "hv", "rot"), K.COLOR),
    generator=g_symmetrize_about,
    when=W.GROWS | W.SHALLOW,
    cases=[
        Case((4, "h", 0), "20000 00400 03000", "20002 00400 03030"),
        Case((4, "rot", 0), "200 040 000", "202 040 202"),
    ],
)
def symmetrize_about(g: Grid, c: int, kind: str, bg: int) -> Grid:
    """Mirror every non-background cell about the centre of the bounding box of colour
    ``c`` (``h`` left-right, ``v`` up-down, ``hv`` both, ``rot`` the 90-degree turns
    too), painting the images that land on background cells inside the grid."""
    ys, xs = np.nonzero(g == c)
    if ys.size == 0:
        raise ValueError("no centre")
    cy2, cx2 = int(ys.min() + ys.max()), int(xs.min() + xs.max())
    h, w = g.shape
    sy, sx = np.nonzero(g != bg)
    vals = g[sy, sx]
    dy2, dx2 = 2 * sy - cy2, 2 * sx - cx2
    images = {
        "h": [(dy2, -dx2)],
        "v": [(-dy2, dx2)],
        "hv": [(dy2, -dx2), (-dy2, dx2), (-dy2, -dx2)],
        "rot": [(dx2, -dy2), (-dy2, -dx2), (-dx2, dy2)],
    }[kind]
    if kind == "rot" and (cy2 - cx2) % 2:
        raise ValueError("centre not on a cell or corner")
    o = g.copy()
    for my2, mx2 in images:
        ny, nx = (cy2 + my2) // 2, (cx2 + mx2) // 2
        inb = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        ny, nx, v = ny[inb], nx[inb], vals[inb]
        free = g[ny, nx] == bg
        o[ny[free], nx[free]] = v[free]
    return o


def g_symmetrize_mark(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: with one new colour (or their mirror colours),
    try each symmetry about the grid's, the box's or a fitted centre."""
    ch = color_change(ctx)
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
                if fits(ctx, symmetrize_mark, kind, where, c, ctx.bg):
                    yield (kind, where, c, ctx.bg)
                    return


@op(
    params=(
        OneOf("h", "v", "hv", "rot", "diag"),
        OneOf("grid", "bbox", "fit"),
        K.COLOR_OR_NONE,
        K.COLOR,
    ),
    generator=g_symmetrize_mark,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # left-right mirror of the whole grid; the added cells are painted 2
        Case(("h", "grid", 2, 0), "1000 1100", "1002 1122"),
        # fitted left-right mirror axis (column 2): the missing right cells copy their mirror
        Case(("h", "fit", -1, 0), "056500 056000", "056500 056500"),
        # fitted quarter-turn centre: the shape's missing arm is painted 2
        Case(("rot", "fit", 2, 0), "0010 0111 0000 0000", "0010 0111 0020 0000"),
        # fitted diagonal mirrors (both diagonals through the 1): the corner cells fill in
        Case(("diag", "fit", -1, 0), "000 012 003", "320 212 023"),
    ],
)
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


def _occluder(g: Grid, bg: int) -> Grid | None:
    """The mask of the one colour whose cells form one solid rectangle (at least 2 x 2),
    if exactly one colour does."""
    found = None
    for c in np.unique(g).tolist():
        if c == bg:
            continue
        m = g == c
        ys, xs = np.nonzero(m)
        hh, ww = int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1
        if hh >= 2 and ww >= 2 and hh * ww == ys.size:
            if found is not None:
                return None
            found = m
    return found


def g_unocclude(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; every state has one solid-rectangle colour and its target has
    none of it."""
    for s, t in ctx.pairs:
        m = _occluder(s, ctx.bg)
        if m is None or (t == s[m][0]).any():
            return
    if any(_occluder(x, ctx.bg) is None for x in ctx.states[ctx.n :]):
        return
    for k in ("h", "v", "hv", "rot", "diag"):
        yield (k, ctx.bg)


_HID = "060011 660011 066660"
_SHOWN = "060060 660066 066660"


@op(
    params=(OneOf("h", "v", "hv", "rot", "diag"), K.COLOR),
    generator=g_unocclude,
    when=W.SAME_SHAPE | W.SHALLOW,
    # the solid 1 rectangle hides the right part of a left-right symmetric figure
    cases=[Case(("h", 0), _HID, _SHOWN)],
)
def unocclude(g: Grid, kind: str, bg: int) -> Grid:
    """Show what a solid rectangle hides: the one colour that forms a solid rectangle
    is an occluder; it is erased and the cells under it get what completing the
    symmetry ``kind`` (``h``, ``v``, ``hv``, ``rot``, ``diag``) of the rest shows,
    about the centre that fits the visible cells best (background where nothing
    mirrors)."""
    m = _occluder(g, bg)
    if m is None:
        raise ValueError("no single solid-rectangle occluder")
    a = np.where(m, bg, g)
    add = _fit_symmetry(a, kind, bg)
    o = a.copy()
    o[m] = add[m]
    return o


def g_complete_by_analogy(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own), in
    grids that hold a complete row or column."""
    for bg in bg_readings(ctx):
        if painted_bg(ctx, bg):
            for axis in ("h", "v"):
                if fits_bg(ctx, complete_by_analogy, axis, bg):
                    yield (axis, bg)


@op(
    params=(OneOf("h", "v"), K.COLOR),
    generator=g_complete_by_analogy,
    when=W.SHALLOW,
    cases=[
        # partial rows finish like the complete row above them, in their own colours
        Case(("h", 0), "14114 00000 23000 60000", "14114 00000 23223 60000"),
        # columns, with the nearest earlier template (the second) for the last column
        Case(("v", 0), "1057 2068 1060 2050", "1057 2068 1068 2057"),
    ],
)
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
