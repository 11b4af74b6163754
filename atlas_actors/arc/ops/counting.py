"""Ops whose output summarises a count or a colour ranking: rows and diagonals of counts,
histograms, colour lists and orders, lookup tables of grid features, constant grids."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import GRID_FEATURES, Grid, components, grid_feature, role_color
from atlas_actors.arc.infer import Args, Ctx, colors_vary
from atlas_actors.arc.registry import BG, Case, K, OneOf, W, op


def table_grid(v: int, table: list[list[int]], h: int, w: int, bg: int, dtype: Any) -> Grid:
    """The ``h`` x ``w`` grid ``table`` stores for the value ``v`` (entries ``[value *
    1000 + cell index, colour]``; cells not listed are ``bg``)."""
    o = np.full((h, w), bg, dtype=dtype)
    hit = False
    for k, c in table:
        fv, i = divmod(int(k), 1000)
        if fv == v:
            hit = True
            o.flat[i] = c
    if not hit:
        raise ValueError("value not in the table")
    return o


def g_count_row(ctx: Ctx) -> Iterator[Args]:
    if all(t.shape[0] == 1 for t in ctx.targets):
        cs = ctx.target_colors[:2]
        if colors_vary(ctx):
            cs = [*cs, 10]
        for c in cs:
            yield ("cells", c, 4, ctx.bg)
            yield ("objects", c, 8, ctx.bg)
            yield ("objects", c, 4, ctx.bg)


COUNT_WHAT = ("objects", "cells")


@op(
    params=(OneOf(*COUNT_WHAT), K.COLOR, K.CONN, K.COLOR),
    generator=g_count_row,
    cases=[Case(("objects", 5, 4, 0), "10101", "555")],
)
def count_row(g: Grid, what: str, c: int, conn: int, bg: int) -> Grid:
    """A 1xN row of colour ``c``, N = the number of objects or of cells of colour ``c``."""
    n = len(components(g, conn, 0, bg)) if what == "objects" else int((g == c).sum())
    if not 1 <= n <= 30:
        raise ValueError("count out of range")
    return np.full((1, n), c, dtype=g.dtype)


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(t.shape == (1, 1) for t in ctx.targets),
    cases=[Case((0,), "1330", "3")],
)
def most_common_color_cell(g: Grid, bg: int) -> Grid:
    """A 1x1 grid of the most common non-background colour."""
    fg = g[g != bg]
    if fg.size == 0:
        raise ValueError("empty grid")
    return np.array([[int(np.bincount(fg, minlength=10).argmax())]])


def g_classify(ctx: Ctx) -> Iterator[Args]:
    """Uniform targets of one shape whose colour is a function of a grid feature that
    every test input shares with some train input."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or ctx.depth > 1:
        return
    cols = []
    for t in ctx.targets:
        if (t != t.flat[0]).any():
            return
        cols.append(int(t.flat[0]))
    if len(set(cols)) < 2:
        return
    h, w = shapes.pop()
    for feat in GRID_FEATURES:
        lut: dict[int, int] = {}
        ok = True
        for s, c in zip(ctx.train, cols, strict=False):
            if lut.setdefault(grid_feature(s, feat, ctx.bg), c) != c:
                ok = False
                break
        if not ok or len(lut) < 2:
            continue
        if len(lut) == len(cols) and any(k != v for k, v in lut.items()):
            continue  # one key per pair: a memorised table, not a rule
        if all(grid_feature(x, feat, ctx.bg) in lut for x in ctx.states[ctx.n :]):
            yield (feat, sorted([k, v] for k, v in lut.items()), h, w, ctx.bg)


@op(
    params=(OneOf(*GRID_FEATURES), K.TABLE, K.COUNT, K.COUNT, K.COLOR),
    generator=g_classify,
    cases=[Case(("ncolors", [[1, 4], [2, 7]], 1, 1, 0), "120", "7")],
)
def classify(g: Grid, feature: str, table: list[list[int]], h: int, w: int, bg: int) -> Grid:
    """An ``h`` x ``w`` grid of the colour ``table`` gives for the input's ``feature``."""
    lut = {int(k): int(v) for k, v in table}
    v = grid_feature(g, feature, bg)
    if v not in lut:
        raise ValueError("feature value not in the table")
    return np.full((h, w), lut[v], dtype=g.dtype)


def g_const_grid(ctx: Ctx) -> Iterator[Args]:
    """Every target one colour and one shape: that colour, or the role naming it."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1:
        return
    cols = []
    for t in ctx.targets:
        if (t != t.flat[0]).any():
            return
        cols.append(int(t.flat[0]))
    h, w = shapes.pop()
    if len(set(cols)) == 1:
        yield (h, w, cols[0])
        return
    for r in (10, 11, 12, 13):
        try:
            if [role_color(s, r) for s in ctx.train] == cols:
                yield (h, w, r)
        except ValueError:
            continue


@op(
    params=(K.COUNT, K.COUNT, K.COLOR),
    generator=g_const_grid,
    cases=[Case((1, 2, 10), "000334", "33")],
)
def const_grid(g: Grid, h: int, w: int, c: int) -> Grid:
    """An ``h`` x ``w`` grid of colour ``c`` (use a colour role to read it off the input)."""
    return np.full((h, w), c, dtype=g.dtype)


def g_color_list(ctx: Ctx) -> Iterator[Args]:
    """Targets one cell wide (or high) listing distinct colours of the state."""
    for axis, k in (("v", 1), ("h", 0)):
        if all(t.shape[k] == 1 for t in ctx.targets):
            for order in ("desc", "asc", "desc1"):
                yield (order, axis, ctx.bg)


@op(
    params=(OneOf("desc", "asc", "desc1"), OneOf("v", "h"), K.COLOR),
    generator=g_color_list,
    cases=[Case(("desc", "v", 0), "122 333", "3 2 1"), Case(("desc1", "h", 0), "122 333", "21")],
)
def color_list(g: Grid, order: str, axis: str, bg: int) -> Grid:
    """The non-background colours, one cell each, sorted by how many cells they have
    (``desc``, ``asc``, or ``desc1``: descending without the commonest), as a column
    (``v``) or a row (``h``); ties by colour."""
    counts = np.bincount(g[g != bg], minlength=10)
    cols = [c for c in range(10) if counts[c] > 0 and c != bg]
    cols.sort(key=lambda c: (int(counts[c]) if order == "asc" else -int(counts[c]), c))
    if order == "desc1":
        cols = cols[1:]
    if not cols:
        raise ValueError("no colours")
    a = np.array([cols], dtype=g.dtype)
    return a.T if axis == "v" else a


def g_count_fill(ctx: Ctx) -> Iterator[Args]:
    """Targets of one shape holding one colour and the background."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or not ctx.smaller:
        return
    h, w = shapes.pop()
    if h * w > 30:
        return
    cols = set()
    for t in ctx.targets:
        cols |= set(np.unique(t).tolist())
    cols.discard(ctx.bg)
    if len(cols) != 1:
        return
    c = cols.pop()
    for what in ("objects", "big", "cells"):
        yield (what, c, h, w, ctx.bg)


@op(
    params=(OneOf("objects", "big", "cells"), K.COLOR, K.COUNT, K.COUNT, K.COLOR),
    generator=g_count_fill,
    cases=[
        Case(("big", 1, 1, 4, 0), "1101 0000 1011", "1100"),
        Case(("cells", 2, 2, 2, 0), "2022", "22 20"),
    ],
)
def count_fill(g: Grid, what: str, c: int, h: int, w: int, bg: int) -> Grid:
    """An ``h`` x ``w`` background grid whose first N cells (reading order) are ``c``:
    N the number of objects of colour ``c`` (``objects``; ``big``: those with more than
    one cell) or of its cells (``cells``)."""
    if what == "cells":
        n = int((g == c).sum())
    else:
        objs = components(np.where(g == c, c, bg), 4, 1, bg)
        n = len([o for o in objs if what == "objects" or o[0].size > 1])
    if n > h * w:
        raise ValueError("count too large")
    o = np.full(h * w, bg, dtype=g.dtype)
    o[:n] = c
    return o.reshape(h, w)


def g_histogram(ctx: Ctx) -> Iterator[Args]:
    for skip in (ctx.bg, -1):
        ncols = [len(set(np.unique(s).tolist()) - {skip}) for s in ctx.train]
        for axis, k in (("v", 1), ("h", 0)):
            if all(t.shape[k] == n for t, n in zip(ctx.targets, ncols, strict=False)):
                yield (axis, skip)


@op(
    params=(OneOf("v", "h"), K.COLOR_OR_NONE),
    generator=g_histogram,
    when=W.RESHAPED | W.SHALLOW,
    cases=[
        Case(("v", -1), "221 231 111", "123 120 120 100 100"),
        Case(("h", 0), "050 450", "55 40"),
    ],
)
def histogram(g: Grid, axis: str, skip: int) -> Grid:
    """Colours as bars sorted by cell count (most first, ties by colour): ``v`` one
    column per colour filled from the top, ``h`` one row per colour filled from the left.
    ``skip``: a colour not counted (-1 none); empty cells get ``skip`` (or 0)."""
    counts = np.bincount(g.ravel(), minlength=10)
    cols = [c for c in range(10) if counts[c] > 0 and c != skip]
    if not cols:
        raise ValueError("no colours")
    cols.sort(key=lambda c: (-int(counts[c]), c))
    n = int(counts[cols[0]])
    if n > 30 or len(cols) > 30:
        raise ValueError("too large")
    o = np.full((n, len(cols)), max(skip, 0), dtype=g.dtype)
    for j, c in enumerate(cols):
        o[: int(counts[c]), j] = c
    return o if axis == "v" else o.T


def g_count_diag(ctx: Ctx) -> Iterator[Args]:
    """Square targets whose non-background cells are exactly the main diagonal."""
    cols = set()
    for t in ctx.targets:
        h, w = t.shape
        if h != w:
            return
        on = t != ctx.bg
        if not (on == np.eye(h, dtype=bool)).all():
            return
        cols |= set(np.unique(t[on]).tolist())
    if len(cols) == 1:
        c = cols.pop()
        yield (c, 8, ctx.bg)
        yield (c, 4, ctx.bg)


@op(
    params=(K.COLOR, K.CONN, K.COLOR),
    generator=g_count_diag,
    cases=[Case((8, 8, 0), "100 002 000 330", "800 080 008")],
)
def count_diag(g: Grid, c: int, conn: int, bg: int) -> Grid:
    """An N x N grid with colour ``c`` on its main diagonal, N = the number of objects."""
    n = len(components(g, conn, 0, bg))
    if not 1 <= n <= 30:
        raise ValueError("count out of range")
    o = np.full((n, n), bg, dtype=g.dtype)
    np.fill_diagonal(o, c)
    return o


def g_color_order(ctx: Ctx) -> Iterator[Args]:
    if all(min(t.shape) == 1 for t in ctx.targets) and not ctx.same_shape:
        for axis in ("auto", "h", "v"):
            yield (axis, ctx.bg)
            yield (axis, -1)


@op(
    params=(OneOf("auto", "h", "v"), K.COLOR_OR_NONE),
    generator=g_color_order,
    cases=[Case(("auto", -1), "4228 4428", "428"), Case(("auto", 0), "33 00 60", "3 6")],
)
def color_order(g: Grid, axis: str, bg: int) -> Grid:
    """The non-background colours in the order they lie in space: ``h`` a row ordered by
    their mean column, ``v`` a column ordered by their mean row, ``auto`` whichever
    direction spreads them more."""
    cols = [int(c) for c in np.unique(g) if c != bg]
    if not cols or len(cols) > 30:
        raise ValueError("no colours")
    cy = {c: float(np.nonzero(g == c)[0].mean()) for c in cols}
    cx = {c: float(np.nonzero(g == c)[1].mean()) for c in cols}
    if axis == "auto":
        spread_y = max(cy.values()) - min(cy.values())
        spread_x = max(cx.values()) - min(cx.values())
        axis = "h" if spread_x >= spread_y else "v"
    pos = cx if axis == "h" else cy
    cols.sort(key=lambda c: (pos[c], c))
    a = np.array([cols], dtype=g.dtype)
    return a if axis == "h" else a.T


def g_lookup_grid(ctx: Ctx) -> Iterator[Args]:
    """Targets of one shape, not all one colour, each a function of a grid feature that
    two or more train pairs share and every test input has."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or ctx.depth > 0:
        return
    h, w = shapes.pop()
    if h * w > 64 or all((t == t.flat[0]).all() for t in ctx.targets):
        return
    for feat in GRID_FEATURES:
        lut: dict[int, bytes] = {}
        grids: dict[int, Grid] = {}
        ok = True
        for s, t in ctx.pairs:
            v = grid_feature(s, feat, ctx.bg)
            if lut.setdefault(v, t.tobytes()) != t.tobytes():
                ok = False
                break
            grids[v] = t
        if not ok or len(lut) < 2 or len(lut) == ctx.n:
            continue
        if not all(grid_feature(x, feat, ctx.bg) in lut for x in ctx.states[ctx.n :]):
            continue
        table = [
            [v * 1000 + i, int(c)]
            for v, t in sorted(grids.items())
            for i, c in enumerate(t.ravel().tolist())
            if c != ctx.bg
        ]
        if 0 < len(table) <= 64 and all(v >= 0 for v in grids):
            yield (feat, table, h, w, ctx.bg)


@op(
    params=(OneOf(*GRID_FEATURES), K.TABLE, K.COUNT, K.COUNT, K.COLOR),
    generator=g_lookup_grid,
    cases=[Case(("top_color", [[1001, 5], [2000, 7]], 1, 2, 0), "110", "05")],
)
def lookup_grid(g: Grid, feature: str, table: list[list[int]], h: int, w: int, bg: int) -> Grid:
    """The ``h`` x ``w`` grid stored in ``table`` for the input's grid ``feature``
    (entries ``[value * 1000 + cell index, colour]``; cells not listed are ``bg``)."""
    return table_grid(grid_feature(g, feature, bg), table, h, w, bg, g.dtype)


def g_snake_colors(ctx: Ctx) -> Iterator[Args]:
    """Targets of one small shape holding as many coloured cells as the state."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or ctx.depth > 1 or not ctx.smaller:
        return
    h, w = shapes.pop()
    if h * w > 36 or not all(
        int((s != ctx.bg).sum()) == int((t != ctx.bg).sum()) for s, t in ctx.pairs
    ):
        return
    for axis in ("h", "v"):
        yield (h, w, axis, ctx.bg)


@op(
    params=(K.COUNT, K.COUNT, OneOf("h", "v"), K.COLOR),
    generator=g_snake_colors,
    cases=[Case((2, 3, "h", 0), "01060 30807", "318 076"), Case((1, 3, "v", 0), "05 40", "540")],
)
def snake_colors(g: Grid, h: int, w: int, axis: str, bg: int) -> Grid:
    """The non-background cells in spatial order (``h`` by column, ``v`` by row) laid
    into an ``h`` x ``w`` grid row by row, every other row right to left."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0 or ys.size > h * w:
        raise ValueError("cells do not fit")
    keys = list(zip(xs.tolist(), ys.tolist(), strict=True))
    if axis == "v":
        keys = [(y, x) for x, y in keys]
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    o = np.full((h, w), bg, dtype=g.dtype)
    for n, i in enumerate(order):
        r, c = divmod(n, w)
        o[r, c if r % 2 == 0 else w - 1 - c] = g[ys[i], xs[i]]
    return o


@op(
    params=(K.CONN, K.COLOR),
    generator=lambda ctx: ((conn, ctx.bg) for conn in (8, 4)),
    only_if=lambda ctx: all((t == t[0:1]).all() for t in ctx.targets),
    when=W.SMALLER | W.SHALLOW,
    cases=[Case((8, 0), "40906 40906 40006", "46 46 46")],
)
def largest_bars(g: Grid, conn: int, bg: int) -> Grid:
    """The colours of the objects that tie for the most cells, as columns (left to
    right by position) as tall as that cell count."""
    objs = components(g, conn, 1, bg)
    if not objs:
        raise ValueError("no objects")
    sizes = [ys.size for ys, _ in objs]
    n = max(sizes)
    big = sorted((float(xs.mean()), int(g[ys[0], xs[0]])) for ys, xs in objs if ys.size == n)
    if n > 30 or len(big) > 30:
        raise ValueError("too large")
    return np.tile(np.array([[c for _, c in big]], dtype=g.dtype), (n, 1))


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all(
        t.shape[0] == t.shape[1] and ((t == t[:, :1]).all() or (t == t[:1]).all())
        for t in ctx.targets
    ),
    when=W.SMALLER | W.SHALLOW,
    cases=[Case((0,), "10255 10255 10200", "12 12"), Case((0,), "333 000 440", "33 44")],
)
def line_colors(g: Grid, bg: int) -> Grid:
    """The colours that each lie on one row (or each on one column), in order, as an
    N x N grid: row i (or column i) is the i-th line's colour."""
    rows: list[tuple[int, int]] = []
    cols: list[tuple[int, int]] = []
    for c in np.unique(g).tolist():
        if c == bg:
            continue
        ys, xs = np.nonzero(g == c)
        if ys.size < 2:
            continue
        if (ys == ys[0]).all():
            rows.append((int(ys[0]), c))
        elif (xs == xs[0]).all():
            cols.append((int(xs[0]), c))
    if bool(rows) == bool(cols):
        raise ValueError("no single line direction")
    lines = sorted(rows or cols)
    n = len(lines)
    if n < 2 or n > 30:
        raise ValueError("too few lines")
    o = np.tile(np.array([[c] for _, c in lines], dtype=g.dtype), (1, n))
    return o if rows else o.T


def g_most_dotted(ctx: Ctx) -> Iterator[Args]:
    """One-cell targets: dots of the least common colour (or another state colour no
    target shows)."""
    yield (12,)
    for c in ctx.state_colors[:6]:
        if not any((t == c).any() for t in ctx.targets):
            yield (c,)


@op(
    params=(K.COLOR,),
    generator=g_most_dotted,
    only_if=lambda ctx: ctx.tiny and len(ctx.state_colors) >= 3,
    when=W.FIRST,
    cases=[Case((1,), "44888 41818 44881", "8")],
)
def most_dotted(g: Grid, c: int) -> Grid:
    """A 1x1 grid of the colour of the region holding the most dots of colour ``c``
    (a dot belongs to the commonest colour among its four neighbours); a tie fails."""
    h, w = g.shape
    ys, xs = np.nonzero(g == c)
    if ys.size == 0 or ys.size > 100:
        raise ValueError("no dots")
    votes = np.zeros(10, dtype=int)
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        nb = [
            int(g[y + dy, x + dx])
            for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if 0 <= y + dy < h and 0 <= x + dx < w and g[y + dy, x + dx] != c
        ]
        if nb:
            votes[np.bincount(nb, minlength=10).argmax()] += 1
    best = int(votes.max())
    if best == 0 or int((votes == best).sum()) > 1:
        raise ValueError("tie")
    return np.array([[int(votes.argmax())]], dtype=g.dtype)


def g_count_colors_grid(ctx: Ctx) -> Iterator[Args]:
    """Targets of one small shape, each a function of the input's colour count, with
    fewer counts than pairs (a rule, not a memorised answer per pair) and every test
    input's count seen in training."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or ctx.depth > 0:
        return
    h, w = shapes.pop()
    if h * w > 64:
        return
    grids: dict[int, Grid] = {}
    for s, t in ctx.pairs:
        n = int(np.unique(s).size)
        if n in grids and not np.array_equal(grids[n], t):
            return
        grids[n] = t
    if len(grids) < 2 or len(grids) == ctx.n:
        return
    if any(int(np.unique(x).size) not in grids for x in ctx.states[ctx.n :]):
        return
    # the targets' commonest colour fills the unlisted cells (a shorter table)
    fill = int(np.bincount(np.concatenate([t.ravel() for t in ctx.targets])).argmax())
    table = [
        [n * 1000 + i, int(c)]
        for n, t in sorted(grids.items())
        for i, c in enumerate(t.ravel().tolist())
        if c != fill
    ]
    if 0 < len(table) <= 64:
        yield (table, h, w, fill)


@op(
    params=(K.TABLE, K.COUNT, K.COUNT, K.COLOR),
    generator=g_count_colors_grid,
    # two colours (background included) -> the table's diagonal, cells not listed 0
    cases=[Case(([[1000, 5], [2000, 5], [2003, 5]], 2, 2, 0), "33 34", "50 05")],
)
def count_colors_grid(g: Grid, table: list[list[int]], h: int, w: int, bg: int) -> Grid:
    """The ``h`` x ``w`` grid that ``table`` stores for the number of distinct colours
    in the input, background included (entries ``[count * 1000 + cell index, colour]``;
    cells not listed are ``bg``): a pattern chosen by how many colours a grid has, also
    when the grid is filled and no colour is background."""
    return table_grid(int(np.unique(g).size), table, h, w, bg, g.dtype)
