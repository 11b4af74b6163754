"""Ops over grids cut by separator lines into cells or panels: one pixel per cell, feature
tables per cell, copying, connecting and filling cells, per-panel transforms and colours."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import (
    GRID_FEATURES,
    Grid,
    grid_feature,
    line_segments,
    rigid_transform,
    sep_segments,
)
from atlas_actors.arc.infer import Args, Ctx, color_change, fits, g_crop_bg, has_cells
from atlas_actors.arc.ops.connect import connect
from atlas_actors.arc.registry import BG, Case, Fitting, K, OneOf, W, op


def _lenient_segments(g: Grid, bg: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Row and column spans between full lines of one colour (the colour with the most
    full rows and columns, not the background), which may appear inside the cells
    too; falls back to :func:`sep_segments` rules first."""
    try:
        return sep_segments(g, bg)
    except ValueError:
        pass
    h, w = g.shape
    best: tuple[int, list[int], list[int]] | None = None
    for c in np.unique(g).tolist():
        if c == bg:
            continue
        rows = [y for y in range(h) if (g[y] == c).all()]
        cols = [x for x in range(w) if (g[:, x] == c).all()]
        if rows and cols and (best is None or len(rows) + len(cols) > len(best[1]) + len(best[2])):
            best = (int(c), rows, cols)
    if best is None:
        raise ValueError("no separator")
    return line_segments(best[1], h), line_segments(best[2], w)


def _panels(g: Grid, bg: int) -> list[tuple[int, int, int, int]]:
    """Panel boxes ``(y0, y1, x0, x1)`` in reading order: cut by full separator lines
    of one colour, or else (when that colour also shows inside the panels) by full
    lines of one colour that cut one axis into at least two equal parts."""
    try:
        rsegs, csegs = sep_segments(g, bg)
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


@op(
    params=(K.COLOR,),
    generator=g_crop_bg,
    when=W.SMALLER,
    cases=[Case((0,), "10500 00502 55555 03500", "12 30")],
)
def cells_to_pixels(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into R x C cells, an R x C grid holding each
    cell's most common non-background colour (background if it has none)."""
    rsegs, csegs = sep_segments(g, bg)
    nr, nc = len(rsegs), len(csegs)
    if nr * nc < 2:
        raise ValueError("no cells")
    parts = [g[y0:y1, x0:x1] for y0, y1 in rsegs for x0, x1 in csegs]
    out = np.full((nr, nc), bg, dtype=g.dtype)
    for i, p in enumerate(parts):
        fg = p[p != bg]
        if fg.size:
            out[i // nc, i % nc] = int(np.bincount(fg, minlength=10).argmax())
    return out


def g_cells_map(ctx: Ctx) -> Iterator[Args]:
    """Infer a cell feature -> colour table for grids cut into cells by separators."""
    cells = []
    for s, t in ctx.pairs:
        try:
            rsegs, csegs = sep_segments(s, ctx.bg)
        except ValueError:
            return
        if (len(rsegs), len(csegs)) != t.shape:
            return
        cells.append(
            [
                (s[y0:y1, x0:x1], int(t[i, j]))
                for i, (y0, y1) in enumerate(rsegs)
                for j, (x0, x1) in enumerate(csegs)
            ]
        )
    found: list[tuple[int, str, dict[int, int]]] = []
    for feat in GRID_FEATURES:
        lut: dict[int, int] = {}
        ok = True
        for row in cells:
            for cell, c in row:
                if lut.setdefault(grid_feature(cell, feat, ctx.bg), c) != c:
                    ok = False
                    break
            if not ok:
                break
        if ok and len(set(lut.values())) > 1:
            # every test cell's feature value must have been seen in training
            for x in ctx.states[ctx.n :]:
                try:
                    rsegs, csegs = sep_segments(x, ctx.bg)
                except ValueError:
                    ok = False
                    break
                for y0, y1 in rsegs:
                    for x0, x1 in csegs:
                        ok &= grid_feature(x[y0:y1, x0:x1], feat, ctx.bg) in lut
            if ok:
                found.append((len(lut), feat, lut))
    found.sort(key=lambda f: f[0])
    for _, feat, lut in found[:2]:
        yield (feat, sorted([k, v] for k, v in lut.items() if v != ctx.bg), ctx.bg)


@op(
    params=(OneOf(*GRID_FEATURES), K.TABLE, K.COLOR),
    generator=g_cells_map,
    when=W.SMALLER | W.SHALLOW,
    # cells with 2 coloured cells become 1, others background
    cases=[Case(("ncells", [[2, 1]], 0), "66560 00500 55555 60566", "10 01")],
)
def cells_map(g: Grid, feature: str, table: list[list[int]], bg: int) -> Grid:
    """For a grid cut by separator lines into R x C cells, an R x C grid: each cell's
    ``grid_feature`` looked up in ``table`` (background if absent)."""
    rsegs, csegs = sep_segments(g, bg)
    nr, nc = len(rsegs), len(csegs)
    if nr * nc < 2:
        raise ValueError("no cells")
    lut = {int(k): int(v) for k, v in table}
    out = np.full((nr, nc), bg, dtype=g.dtype)
    for i, (y0, y1) in enumerate(rsegs):
        for j, (x0, x1) in enumerate(csegs):
            out[i, j] = lut.get(grid_feature(g[y0:y1, x0:x1], feature, bg), bg)
    return out


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SHALLOW | W.PAINTED,
    only_if=has_cells,
    # 3 x 3 cells cut by 5 lines: the two 2 cells of the middle row are joined
    cases=[Case((0,), "05050 55555 25052 55555 05050", "05050 55555 25252 55555 05050")],
)
def cell_connect(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into cells of one colour each, join every two
    cells of one colour in a row or column of cells by painting the background cells
    between them that colour (as ``connect`` on the grid of cells)."""
    rsegs, csegs = sep_segments(g, bg)
    if len(rsegs) * len(csegs) < 4:
        raise ValueError("no cells")
    small = cells_to_pixels(g, bg)
    new = connect(small, -1, -1, bg)
    o = g.copy()
    for i, j in zip(*np.nonzero(new != small), strict=True):
        (y0, y1), (x0, x1) = rsegs[int(i)], csegs[int(j)]
        o[y0:y1, x0:x1] = new[i, j]
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.SHALLOW | W.PAINTED,
    only_if=has_cells,
    # two cells cut by a 5 column: the empty one gets the other's pattern
    cases=[Case((0,), "10500 02500", "10510 02502")],
)
def cell_broadcast(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into equal cells, copy the one pattern found
    in the non-empty cells into every empty cell (all non-empty cells must agree)."""
    rsegs, csegs = sep_segments(g, bg)
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 2 or len({(y1 - y0, x1 - x0) for y0, y1, x0, x1 in cells}) != 1:
        raise ValueError("no equal cells")
    full = [g[y0:y1, x0:x1] for y0, y1, x0, x1 in cells if (g[y0:y1, x0:x1] != bg).any()]
    if not full or any(not np.array_equal(p, full[0]) for p in full[1:]):
        raise ValueError("no single pattern")
    o = g.copy()
    for y0, y1, x0, x1 in cells:
        o[y0:y1, x0:x1] = full[0]
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    when=W.CHANGED,
    only_if=has_cells,
    # the cell with the most cells (the right one) is filled, the left one cleared
    cases=[Case((0,), "10522 00502", "00522 00522")],
)
def cell_max_fill(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into cells: the cells holding the most
    non-background cells are filled with their commonest colour, the others cleared."""
    rsegs, csegs = sep_segments(g, bg)
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 2:
        raise ValueError("no cells")
    counts = [int((g[y0:y1, x0:x1] != bg).sum()) for y0, y1, x0, x1 in cells]
    top = max(counts)
    if top == 0:
        raise ValueError("empty cells")
    o = g.copy()
    for (y0, y1, x0, x1), n in zip(cells, counts, strict=True):
        p = g[y0:y1, x0:x1]
        o[y0:y1, x0:x1] = int(np.bincount(p[p != bg], minlength=10).argmax()) if n == top else bg
    return o


@op(
    params=(OneOf("min", "max"), K.COLOR),
    generator=Fitting(fits, lambda ctx: ((s, ctx.bg) for s in ("min", "max")), first=True),
    when=W.SAME_SHAPE | W.SHALLOW,
    # 2 x 2 cells of 2 x 2: the emptiest cell (top left) is blown up over the grid
    cases=[Case(("min", 0), "10511 00501 55555 22533 20533", "11500 11500 55555 00500 00500")],
)
def cell_expand(g: Grid, sel: str, bg: int) -> Grid:
    """For a grid cut by separator lines into n x m cells of n x m cells each: pick the
    one cell holding the fewest (``sel`` min) or the most (max) non-background cells,
    and fill every cell of the grid with the colour of the picked cell's pixel at the
    same position (background pixels give empty cells)."""
    rsegs, csegs = _lenient_segments(g, bg)
    hs, ws = {b - a for a, b in rsegs}, {b - a for a, b in csegs}
    if len(hs) != 1 or len(ws) != 1 or hs != {len(rsegs)} or ws != {len(csegs)}:
        raise ValueError("cells are not n x m of n x m")
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    counts = [int((g[y0:y1, x0:x1] != bg).sum()) for y0, y1, x0, x1 in cells]
    pick = min(counts) if sel == "min" else max(counts)
    if counts.count(pick) != 1:
        raise ValueError("no single cell to pick")
    y0, y1, x0, x1 = cells[counts.index(pick)]
    src = g[y0:y1, x0:x1].copy()
    o = g.copy()
    for i, (a0, a1) in enumerate(rsegs):
        for j, (b0, b1) in enumerate(csegs):
            o[a0:a1, b0:b1] = src[i, j]
    return o


def g_cell_template_mark(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted: the separator colour or one new colour."""
    ch = color_change(ctx)
    cs = [ch[1][0]] if ch is not None and len(set(ch[1])) == 1 else []
    for c in [-1, *cs]:
        if fits(ctx, cell_template_mark, c, ctx.bg):
            yield (c, ctx.bg)
            return


@op(
    params=(K.COLOR_OR_NONE, K.COLOR),
    generator=g_cell_template_mark,
    when=W.PAINTED | W.SHALLOW,
    # the fullest cell (left) is the template: the other cell gets its missing cells in
    # the separator colour (5)
    cases=[Case((-1, 0), "11501 10500", "11551 10550")],
)
def cell_template_mark(g: Grid, c: int, bg: int) -> Grid:
    """For a grid cut by separator lines into equal cells: the cell holding the most
    non-background cells is a template (ties must have one shape); in every other
    cell, the background cells where the template has something become ``c`` (-1: the
    separator colour)."""
    rsegs, csegs = sep_segments(g, bg)
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 2 or len({(y1 - y0, x1 - x0) for y0, y1, x0, x1 in cells}) != 1:
        raise ValueError("no equal cells")
    counts = [int((g[y0:y1, x0:x1] != bg).sum()) for y0, y1, x0, x1 in cells]
    top = max(counts)
    tops = [g[y0:y1, x0:x1] != bg for y0, y1, x0, x1 in cells]
    tpl = tops[counts.index(top)]
    if top == 0 or any(
        not np.array_equal(m, tpl) for m, n in zip(tops, counts, strict=True) if n == top
    ):
        raise ValueError("no single template")
    if c < 0:
        r0 = rsegs[0][1] if rsegs[0][1] < g.shape[0] else -1
        c0 = csegs[0][1] if csegs[0][1] < g.shape[1] else -1
        if r0 >= 0:
            c = int(g[r0, 0])
        elif c0 >= 0:
            c = int(g[0, c0])
        else:
            raise ValueError("no separator line")
    o = g.copy()
    for a0, a1, b0, b1 in cells:
        part = o[a0:a1, b0:b1]
        part[tpl & (part == bg)] = c
    return o


@op(
    params=(K.COLOR, K.COLOR),
    generator=Fitting(
        fits,
        lambda ctx: (
            (k, ctx.bg) for k in ctx.state_colors[:10] if all((s == k).any() for s in ctx.states)
        ),
        first=True,
    ),
    only_if=lambda ctx: all(
        int((t != ctx.bg).sum()) < int((s != ctx.bg).sum()) for s, t in ctx.pairs
    ),
    when=W.SAME_SHAPE | W.SHALLOW,
    # the cell holding the 4 (top left, the 4 at its bottom right) moves to the bottom
    # right cell; the rest is cleared
    cases=[Case((4, 0), "10500 04520 55555 30500 00506", "00500 00500 55555 00510 00504")],
)
def cell_key_place(g: Grid, k: int, bg: int) -> Grid:
    """For a grid cut by separator lines into n x m cells of n x m cells each: the one
    cell holding colour ``k`` is moved to the cell whose position in the grid is the
    position of ``k`` inside it (cells of the separator colour in it are cleared);
    every other cell is cleared."""
    rsegs, csegs = _lenient_segments(g, bg)
    hs, ws = {b - a for a, b in rsegs}, {b - a for a, b in csegs}
    if len(hs) != 1 or len(ws) != 1 or hs != {len(rsegs)} or ws != {len(csegs)}:
        raise ValueError("cells are not n x m of n x m")
    cells = [(y0, y1, x0, x1) for y0, y1 in rsegs for x0, x1 in csegs]
    if len(cells) < 4:
        raise ValueError("too few cells")
    hits = [cell for cell in cells if (g[cell[0] : cell[1], cell[2] : cell[3]] == k).any()]
    if len(hits) != 1:
        raise ValueError("no single key cell")
    y0, y1, x0, x1 = hits[0]
    part = g[y0:y1, x0:x1].copy()
    sep = int(g[rsegs[0][1], 0]) if len(rsegs) > 1 else int(g[0, csegs[0][1]])
    part[part == sep] = bg  # stray separator-coloured cells are noise
    ky, kx = np.nonzero(part == k)
    if ky.size != 1:
        raise ValueError("no single key")
    o = g.copy()
    for a0, a1, b0, b1 in cells:
        o[a0:a1, b0:b1] = bg
    (a0, a1), (b0, b1) = rsegs[int(ky[0])], csegs[int(kx[0])]
    o[a0:a1, b0:b1] = part
    return o


def g_panel_transforms(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, every state cut into the same number of equal panels, the first
    one kept, and each other target panel one rigid transform of the first (the same
    transform per panel index in every pair)."""
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
            {k for k in range(8) if np.array_equal(rigid_transform(src, k), t[a:b, c:d])}
            for a, b, c, d in boxes
        ]
        allowed = ok if allowed is None else [x & y for x, y in zip(allowed, ok, strict=True)]
        if not all(allowed):
            return
    if allowed:
        yield ([min(a) for a in allowed], ctx.bg)


@op(
    params=(K.RIGIDS, K.COLOR),
    generator=g_panel_transforms,
    when=W.SAME_SHAPE | W.FIRST,
    # panels cut by the 5 column: the second is the first mirrored left-right, the
    # third the first turned a half turn
    cases=[Case(([0, 4, 2], 0), "12500500 30500500", "12521503 30503521")],
)
def panel_transforms(g: Grid, ts: list[int], bg: int) -> Grid:
    """The grid is cut into panels by full separator lines of one colour; panel ``i``
    (reading order) is replaced by the first panel transformed by ``rigid_transform(ts[i])``
    (a panel strip completed with rotations or reflections of its first panel)."""
    boxes = _panels(g, bg)
    if len(boxes) < 2 or len(boxes) != len(ts):
        raise ValueError("panels and transforms do not match")
    y0, y1, x0, x1 = boxes[0]
    src = g[y0:y1, x0:x1]
    o = g.copy()
    for (a, b, c, d), t in zip(boxes[1:], ts[1:], strict=True):
        part = rigid_transform(src, int(t))
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


def g_panel_colors(ctx: Ctx) -> Iterator[Args]:
    """Every state cut into panels, every target one line of one colour per panel
    (rows or columns, one length), the colour a function of the panel's content that
    covers the test panels."""
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


_KA = panel_key(np.array([[1, 1], [1, 0]]))
_KB = panel_key(np.array([[2, 2], [2, 0]]))


@op(
    params=(K.TABLE, OneOf("rows", "cols"), K.COUNT, K.COLOR),
    generator=g_panel_colors,
    when=W.SMALLER | W.FIRST,
    cases=[
        # two panels cut by the 0 column (0 also inside them): each panel's content looked
        # up (1-panel -> 4, 2-panel -> 6) and written as a row of 3
        Case(([[_KA, 4], [_KB, 6]], "rows", 3, 0), "11022 10020", "444 666"),
        Case(([[_KA, 4], [_KB, 6]], "cols", 1, 0), "22011 20010", ("64")),
    ],
)
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


def _place_class(i: int, n: int) -> int:
    """Where index ``i`` of ``n`` sits: 0 first, 1 the exact middle, 2 last, 3 other."""
    if i == 0:
        return 0
    if i == n - 1:
        return 2
    return 1 if 2 * i == n - 1 else 3


def g_fill_panels_by_place(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, every state cut into at least 2 x 2 panels, and every target panel
    either unchanged or with its background painted one colour, the same colour for
    panels of the same place class in every pair; the test panels' classes seen (or
    "other" places, when no such place was painted)."""
    table: dict[int, int] = {}
    for s, t in ctx.pairs:
        try:
            rsegs, csegs = sep_segments(s, ctx.bg)
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
            rsegs, csegs = sep_segments(s, ctx.bg)
        except ValueError:
            return
        for i in range(len(rsegs)):
            for j in range(len(csegs)):
                ri, cj = _place_class(i, len(rsegs)), _place_class(j, len(csegs))
                if 4 * ri + cj not in table and (3 not in (ri, cj) or painted_other):
                    return
    if any(v >= 0 for v in table.values()):
        yield (sorted([k, v] for k, v in table.items() if v >= 0), ctx.bg)


@op(
    params=(K.TABLE, K.COLOR),
    generator=g_fill_panels_by_place,
    when=W.SAME_SHAPE | W.FIRST,
    # 3 x 3 panels cut by 5 lines: the first panel painted 1, the middle one 2, the
    # last one 3 (keys 4 * row class + column class)
    cases=[
        Case(
            ([[0, 1], [5, 2], [10, 3]], 0),
            "05050 55555 05050 55555 05750",
            "15050 55555 05250 55555 05753",
        )
    ],
)
def fill_panels_by_place(g: Grid, table: list[list[int]], bg: int) -> Grid:
    """Panels cut by full separator lines: each panel's background is painted with the
    colour ``table`` (``[key, colour]`` rows, colour -1: left alone) gives its place in
    the panel grid, key ``4 * row class + column class`` (classes: 0 first, 1 the exact
    middle, 2 last, 3 other)."""
    rsegs, csegs = sep_segments(g, bg)
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
