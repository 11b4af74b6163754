"""Ops that cut a window out of the grid: an object's or a colour's bounding box, fixed
windows, the box between lines or markers, margins, dropping empty or repeated lines."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import SELECTORS, Grid, components, select_object, wall_lines
from atlas_actors.arc.infer import Args, Ctx, g_crop_bg
from atlas_actors.arc.registry import BG, PLAIN, Case, K, OneOf, W, op


def g_crop_color(ctx: Ctx) -> Iterator[Args]:
    for c in ctx.state_colors[:8]:
        yield (c,)
    if len(ctx.state_colors) >= 2:
        yield (10,)
        yield (12,)


def g_crop_object(ctx: Ctx) -> Iterator[Args]:
    for conn, by_color in ctx.conns():
        sels = ctx.selections(SELECTORS, conn, by_color)
        for keep in (1, 0):
            for sel in sels:
                yield (sel, conn, by_color, ctx.bg, keep)


@op(
    params=(OneOf(*SELECTORS), K.CONN, K.FLAG, K.COLOR, K.FLAG),
    generator=g_crop_object,
    when=W.SMALLER,
    cases=[
        Case(("largest", 4, 0, 0, 1), "1000 0033 0030", "33 30"),
        Case(("smallest", 4, 0, 0, 1), "1000 0033 0030", "1"),
        Case(("unique_color", 8, 1, 0, 0), "1020 0000 1001", "2"),
        Case(("symmetric", 8, 0, 0, 1), "110000 010020 000222", "020 222"),
    ],
)
def crop_object(g: Grid, sel: str, conn: int, by_color: int, bg: int, keep: int) -> Grid:
    """Crop the bounding box of the object chosen by ``sel``.

    ``keep``: 1 keeps every cell inside the box, 0 keeps only the object's own cells.
    """
    objs = components(g, conn, by_color, bg)
    ys, xs = select_object(g, objs, sel, bg)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    if keep:
        return g[y0:y1, x0:x1].copy()
    o = np.full((y1 - y0, x1 - x0), bg, dtype=g.dtype)
    o[ys - y0, xs - x0] = g[ys, xs]
    return o


@op(
    params=(K.COLOR,),
    generator=g_crop_bg,
    when=W.SMALLER,
    cases=[Case((0,), "000 040 044", "40 44")],
)
def crop_nonbg(g: Grid, bg: int) -> Grid:
    """Crop to the bounding box of the non-background cells."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    return g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


@op(
    params=(K.COLOR,),
    generator=g_crop_color,
    when=W.SMALLER,
    cases=[Case((5,), "500 015", "500 015")],
)
def crop_color(g: Grid, c: int) -> Grid:
    """Crop to the bounding box of the cells of colour ``c``."""
    ys, xs = np.nonzero(g == c)
    if ys.size == 0:
        raise ValueError("colour absent")
    return g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


@op(
    params=(K.COLOR,),
    generator=g_crop_color,
    when=W.SMALLER,
    cases=[Case((2,), "2222 2782 2222 0000", "78")],
)
def crop_inside(g: Grid, c: int) -> Grid:
    """The inside of the bounding box of colour ``c`` (its one-cell frame removed)."""
    ys, xs = np.nonzero(g == c)
    if ys.size == 0 or ys.max() - ys.min() < 2 or xs.max() - xs.min() < 2:
        raise ValueError("no frame")
    return g[ys.min() + 1 : ys.max(), xs.min() + 1 : xs.max()].copy()


@op(params=(K.COLOR,), generator=BG, when=W.SMALLER, cases=[Case((0,), "000 102 000", "12")])
def drop_bg_lines(g: Grid, bg: int) -> Grid:
    """Delete the rows and columns that are entirely background."""
    rows = (g != bg).any(axis=1)
    cols = (g != bg).any(axis=0)
    if not rows.any():
        raise ValueError("empty grid")
    return np.asarray(g[rows][:, cols])


@op(generator=PLAIN, when=W.SMALLER, cases=[Case((), "112 112 334", "12 34")])
def dedup_lines(g: Grid) -> Grid:
    """Collapse runs of identical consecutive rows and columns."""
    keep_r = np.ones(g.shape[0], dtype=bool)
    keep_r[1:] = (g[1:] != g[:-1]).any(axis=1)
    g = g[keep_r]
    keep_c = np.ones(g.shape[1], dtype=bool)
    keep_c[1:] = (g[:, 1:] != g[:, :-1]).any(axis=0)
    return g[:, keep_c]


@op(generator=PLAIN, when=W.SMALLER, cases=[Case((), "111 121 111", "2")])
def trim(g: Grid) -> Grid:
    """Remove the outermost ring of cells."""
    if g.shape[0] < 3 or g.shape[1] < 3:
        raise ValueError("too small to trim")
    return g[1:-1, 1:-1].copy()


def _windows(s: Grid, t: Grid) -> set[tuple[int, int]]:
    """Top-left corners where ``t`` occurs in ``s``, also given from the bottom/right."""
    gh, gw = s.shape
    h, w = t.shape
    out: set[tuple[int, int]] = set()
    if h > gh or w > gw:
        return out
    for y in range(gh - h + 1):
        for x in range(gw - w + 1):
            if s[y, x] == t[0, 0] and (s[y : y + h, x : x + w] == t).all():
                for yy in (y, y + h - gh - 1):
                    for xx in (x, x + w - gw - 1):
                        out.add((yy, xx))
    return out


def g_crop_at(ctx: Ctx) -> Iterator[Args]:
    """A fixed window (anchored at any corner) that shows the target in every pair."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or not ctx.smaller:
        return
    common: set[tuple[int, int]] | None = None
    for s, t in ctx.pairs:
        here = _windows(s, t)
        common = here if common is None else common & here
        if not common:
            return
    h, w = shapes.pop()
    for y, x in sorted(common or [], key=lambda p: (abs(p[0]), abs(p[1])))[:2]:
        yield (y, x, h, w)


@op(
    params=(K.OFFSET, K.OFFSET, K.COUNT, K.COUNT),
    generator=g_crop_at,
    cases=[Case((-1, 0, 1, 2), "123 456", "45")],
)
def crop_at(g: Grid, y: int, x: int, h: int, w: int) -> Grid:
    """The ``h`` x ``w`` window at row ``y``, column ``x`` (negative: from the bottom/right,
    -1 meaning the window ends at the last row/column)."""
    gh, gw = g.shape
    y0 = y if y >= 0 else gh + y + 1 - h
    x0 = x if x >= 0 else gw + x + 1 - w
    if y0 < 0 or x0 < 0 or y0 + h > gh or x0 + w > gw:
        raise ValueError("window outside the grid")
    return g[y0 : y0 + h, x0 : x0 + w].copy()


def g_crop_most(ctx: Ctx) -> Iterator[Args]:
    # the counted colour shows in every target
    cs = [c for c in ctx.state_colors[:6] if all((t == c).any() for t in ctx.targets)]
    if len(ctx.state_colors) >= 2:
        cs += [10, 12]
    for c in cs:
        for most in (1, 0):
            for conn in (8, 4):
                yield (c, most, conn, ctx.bg)


@op(
    params=(K.COLOR, K.FLAG, K.CONN, K.COLOR),
    generator=g_crop_most,
    when=W.SMALLER | W.SHALLOW,
    cases=[
        Case((2, 1, 8, 0), "12022 11021 00000 11000", "22 21"),
        Case((2, 0, 8, 0), "12022 11021 00000 11000", "11"),
    ],
)
def crop_most(g: Grid, c: int, most: int, conn: int, bg: int) -> Grid:
    """Crop the bounding box of the (multicolour) object with the most (``most`` 1) or
    fewest (0) cells of colour ``c``; a tie fails."""
    objs = components(g, conn, 0, bg)
    if len(objs) < 2 or len(objs) > 60:
        raise ValueError("need 2..60 objects")
    counts = [int((g[ob] == c).sum()) for ob in objs]
    best = max(counts) if most else min(counts)
    if counts.count(best) != 1:
        raise ValueError("tie")
    ys, xs = objs[counts.index(best)]
    return g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


def g_object_color(ctx: Ctx) -> Iterator[Args]:
    """One-cell targets whose colour is in the state."""
    for conn in (8, 4):
        for by_color in (1, 0):
            for sel in SELECTORS:
                yield (sel, conn, by_color, ctx.bg)


@op(
    params=(OneOf(*SELECTORS), K.CONN, K.FLAG, K.COLOR),
    generator=g_object_color,
    only_if=lambda ctx: ctx.tiny and all(int(t.flat[0]) in s for s, t in ctx.pairs),
    when=W.FIRST,
    cases=[Case(("sparsest", 8, 1, 0), "22203 20203 22200 00004", "2")],
)
def object_color(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """A 1x1 grid of the most common colour of the object chosen by ``sel``."""
    ys, xs = select_object(g, components(g, conn, by_color, bg), sel, bg)
    return np.array([[int(np.bincount(g[ys, xs], minlength=10).argmax())]], dtype=g.dtype)


def g_crop_marked(ctx: Ctx) -> Iterator[Args]:
    cs = [12] if len(ctx.state_colors) >= 2 else []
    cs += [c for c in ctx.state_colors[:4] if all(int((s == c).sum()) == 4 for s in ctx.train)]
    for c in cs:
        yield (c, 1, ctx.bg)
        yield (c, 0, ctx.bg)


@op(
    params=(K.COLOR, K.FLAG, K.COLOR),
    generator=g_crop_marked,
    when=W.SMALLER | W.SHALLOW,
    cases=[
        Case((4, 1, 0), "4004 0200 0220 4004", "40 44"),
        Case((4, 0, 0), "4004 0200 0220 4004", "20 22"),
    ],
)
def crop_marked(g: Grid, c: int, paint: int, bg: int) -> Grid:
    """The inside of the bounding box of colour ``c`` (the marker cells excluded); with
    ``paint`` the content takes the markers' colour."""
    ys, xs = np.nonzero(g == c)
    if ys.size == 0 or ys.max() - ys.min() < 2 or xs.max() - xs.min() < 2:
        raise ValueError("no box")
    o = g[ys.min() + 1 : ys.max(), xs.min() + 1 : xs.max()].copy()
    if paint:
        o[o != bg] = c
    return o


def g_crop_margin(ctx: Ctx) -> Iterator[Args]:
    """A colour whose bounding box, grown by one row and/or column, has the target's
    shape in every pair."""
    for c in ctx.state_colors[:6]:
        for my, mx in ((1, 0), (0, 1), (1, 1)):
            ok = True
            for s, t in ctx.pairs:
                ys, xs = np.nonzero(s == c)
                if ys.size == 0 or t.shape != (
                    ys.max() - ys.min() + 1 + 2 * my,
                    xs.max() - xs.min() + 1 + 2 * mx,
                ):
                    ok = False
                    break
            if ok:
                yield (c, my, mx)


@op(
    params=(K.COLOR, K.FLAG, K.FLAG),
    generator=g_crop_margin,
    when=W.SMALLER | W.FIRST,
    cases=[Case((5, 1, 0), "0808 0505 0808 0000", "808 505 808")],
)
def crop_margin(g: Grid, c: int, my: int, mx: int) -> Grid:
    """Crop the bounding box of colour ``c`` grown by ``my`` rows and ``mx`` columns on
    each side (the grown box must fit in the grid)."""
    ys, xs = np.nonzero(g == c)
    if ys.size == 0:
        raise ValueError("colour absent")
    y0, y1, x0, x1 = ys.min() - my, ys.max() + my, xs.min() - mx, xs.max() + mx
    if y0 < 0 or x0 < 0 or y1 >= g.shape[0] or x1 >= g.shape[1]:
        raise ValueError("margin leaves the grid")
    return g[y0 : y1 + 1, x0 : x1 + 1].copy()


@op(
    params=(K.FLAG, K.COLOR),
    generator=lambda ctx: ((k, ctx.bg) for k in (0, 1)),
    only_if=lambda ctx: all(
        t.shape[0] <= s.shape[0] and t.shape[1] <= s.shape[1] and t.size >= 2 for s, t in ctx.pairs
    ),
    when=W.SMALLER | W.SHALLOW,
    cases=[
        # the rectangle between the two 1 rows and the 3 and 4 columns (a 2 noise cell
        # does not break the 1 row)
        Case((0, 0), "030040 111211 035040 111111 030040", "1121 3504 1111"),
        Case((1, 0), "030040 035040 030040", "00 50 00"),
    ],
)
def crop_lines(g: Grid, inner: int, bg: int) -> Grid:
    """Crop the rectangle bounded by the outermost full lines (rows or columns that
    one non-background colour covers at least 70%, see ``wall_lines``): lines
    included (``inner`` 0) or excluded (1). An axis with fewer than two lines keeps
    its full range; raises unless some axis has two."""
    walls = wall_lines(g, bg)
    rows, cols = sorted(walls[0]), sorted(walls[1])
    if len(rows) < 2 and len(cols) < 2:
        raise ValueError("needs two parallel lines")
    y0, y1 = (rows[0] + inner, rows[-1] - inner) if len(rows) >= 2 else (0, g.shape[0] - 1)
    x0, x1 = (cols[0] + inner, cols[-1] - inner) if len(cols) >= 2 else (0, g.shape[1] - 1)
    if y1 < y0 or x1 < x0:
        raise ValueError("nothing between the lines")
    return g[y0 : y1 + 1, x0 : x1 + 1].copy()


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


@op(
    generator=PLAIN,
    only_if=lambda ctx: all(
        2 <= t.shape[0] < s.shape[0] and 2 <= t.shape[1] < s.shape[1] for s, t in ctx.pairs
    ),
    when=W.SMALLER | W.SHALLOW,
    # the 3 x 3 block of 4 (with a stray 1 inside) hidden in noise
    cases=[Case((), "12356 74442 34149 84441 26135", "444 414 444")],
)
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
