"""Ops that scale, tile and pad: up- and downscaling, tiles (transformed), Kronecker
self-products, canvases, lattices, and layouts whose size is a count read off the grid."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import CORNERS, Grid, grid_feature, rigid_transform
from atlas_actors.arc.infer import Args, Ctx, bg_readings, fits, fits_bg
from atlas_actors.arc.registry import PLAIN, Case, Fitting, K, OneOf, W, op


def _ratio(ctx: Ctx, inverse: bool) -> list[tuple[int, int]]:
    """Integer (ky, kx) with target = state * k (or state = target * k)."""
    ks: set[tuple[int, int]] | None = None
    for s, t in ctx.pairs:
        a, b = (s, t) if not inverse else (t, s)
        if b.shape[0] % a.shape[0] or b.shape[1] % a.shape[1]:
            return []
        k = (b.shape[0] // a.shape[0], b.shape[1] // a.shape[1])
        ks = {k} if ks is None else ks & {k}
    return sorted(ks or [])


_COUNTS = ("ncells", "nbg", "ncolors", "nobjects")


_GRID_COUNTS = {"ncells": "ncells", "ncolors": "ncolors", "nobjects": "nobjects8"}
"""The counts that are :func:`atlas_actors.arc.grids.grid_feature` features (by their
name there)."""


def _count(g: Grid, what: str, bg: int) -> int:
    """A number read off the grid: its non-background cells (``ncells``), background
    cells (``nbg``), non-background colours (``ncolors``) or objects (``nobjects``,
    8-connected, several colours)."""
    if what == "nbg":
        return int((g == bg).sum())
    if what not in _GRID_COUNTS:
        raise ValueError(f"unknown count {what}")
    return grid_feature(g, _GRID_COUNTS[what], bg)


def g_upscale(ctx: Ctx) -> Iterator[Args]:
    for k in _ratio(ctx, False):
        if k != (1, 1):
            yield k


@op(params=(K.COUNT, K.COUNT), generator=g_upscale, cases=[Case((2, 1), "12", "12 12")])
def upscale(g: Grid, ky: int, kx: int) -> Grid:
    """Scale up: every cell becomes a ``ky`` x ``kx`` block."""
    if not (1 <= ky <= 30 and 1 <= kx <= 30):
        raise ValueError("bad factor")
    return np.repeat(np.repeat(g, ky, axis=0), kx, axis=1)


@op(
    params=(K.COUNT, K.COUNT),
    generator=lambda ctx: (k for k in _ratio(ctx, True) if k != (1, 1)),
    cases=[Case((2, 2), "1122 1122", "12")],
)
def downscale(g: Grid, ky: int, kx: int) -> Grid:
    """Shrink by integer factors; each block becomes its most common colour."""
    h, w = g.shape
    if ky < 1 or kx < 1 or h % ky or w % kx:
        raise ValueError("factor does not divide the grid")
    b = g.reshape(h // ky, ky, w // kx, kx).transpose(0, 2, 1, 3).reshape(h // ky, w // kx, -1)
    counts = (b[..., None] == np.arange(10)).sum(axis=2)
    return np.asarray(counts.argmax(axis=2))


@op(
    params=(K.COUNT, K.COUNT),
    generator=lambda ctx: (k for k in _ratio(ctx, False) if k != (1, 1)),
    cases=[Case((1, 2), "12", "1212")],
)
def tile(g: Grid, ny: int, nx: int) -> Grid:
    """Tile ``ny`` x ``nx`` copies of the grid."""
    if not (1 <= ny <= 30 and 1 <= nx <= 30):
        raise ValueError("bad tile count")
    return np.tile(g, (ny, nx))


def g_tile_t(ctx: Ctx) -> Iterator[Args]:
    """Infer the transform of every tile: the smallest rigid code that fits in all pairs."""
    for ny, nx in _ratio(ctx, False):
        if (ny, nx) == (1, 1) or ny * nx > 16:
            continue
        ts: list[int] = []
        for i in range(ny * nx):
            r, c = divmod(i, nx)
            for k in range(8):
                fits = True
                for s, t in ctx.pairs:
                    h, w = s.shape
                    block = t[r * h : (r + 1) * h, c * w : (c + 1) * w]
                    m = rigid_transform(s, k)
                    if m.shape != block.shape or not (m == block).all():
                        fits = False
                        break
                if fits:
                    ts.append(k)
                    break
            else:
                break
        if len(ts) == ny * nx and any(ts):
            yield (ny, nx, ts)


@op(
    params=(K.COUNT, K.COUNT, K.RIGIDS),
    generator=g_tile_t,
    cases=[Case((1, 2, [0, 4]), "12", "1221")],
)
def tile_t(g: Grid, ny: int, nx: int, ts: list[int]) -> Grid:
    """Tile ``ny`` x ``nx`` copies, copy ``i`` (reading order) transformed by ``rigid(ts[i])``."""
    parts = [rigid_transform(g, int(t)) for t in ts]
    if len(parts) != ny * nx or len({p.shape for p in parts}) != 1:
        raise ValueError("tile transforms do not fit")
    rows = [np.concatenate(parts[r * nx : (r + 1) * nx], axis=1) for r in range(ny)]
    return np.concatenate(rows, axis=0)


@op(
    params=(K.COLOR, K.FLAG),
    generator=lambda ctx: ((ctx.bg, k) for k in (0, 1)),
    only_if=lambda ctx: all(t.shape == (s.shape[0] ** 2, s.shape[1] ** 2) for s, t in ctx.pairs),
    cases=[Case((0, 0), "10 00", "1000 0000 0000 0000")],
)
def kron_self(g: Grid, bg: int, invert: int) -> Grid:
    """Each non-background cell (background if ``invert``) becomes a copy of the grid."""
    h, w = g.shape
    if h * h > 30 or w * w > 30:
        raise ValueError("too large")
    mask = (g != bg) if not invert else (g == bg)
    o = np.full((h * h, w * w), bg, dtype=g.dtype)
    for y in range(h):
        for x in range(w):
            if mask[y, x]:
                o[y * h : (y + 1) * h, x * w : (x + 1) * w] = g
    return o


@op(
    params=(OneOf("ncolors", "ncells"), K.COLOR),
    generator=lambda ctx: ((m, ctx.bg) for m in ("ncolors", "ncells")),
    only_if=lambda ctx: ctx.larger and not _ratio(ctx, False),
    cases=[Case(("ncolors", 0), "12", "1122 1122")],
)
def upscale_by(g: Grid, what: str, bg: int) -> Grid:
    """Scale up by a factor read off the grid: its number of colours or of cells."""
    fg = g[g != bg]
    k = int(np.unique(fg).size) if what == "ncolors" else int(fg.size)
    if not k >= 1 or g.shape[0] * k > 30 or g.shape[1] * k > 30:
        raise ValueError("factor out of range")
    return np.repeat(np.repeat(g, k, axis=0), k, axis=1)


@op(
    params=(K.COUNT, K.COUNT, K.COLOR),
    generator=lambda ctx: ((*k, ctx.bg) for k in _ratio(ctx, False) if k != (1, 1)),
    cases=[Case((2, 1, 0), "34", "34 00")],
)
def canvas(g: Grid, ky: int, kx: int, bg: int) -> Grid:
    """The grid at the top-left of a background canvas ``ky`` x ``kx`` times its size."""
    h, w = g.shape
    if h * ky > 30 or w * kx > 30:
        raise ValueError("too large")
    o = np.full((h * ky, w * kx), bg, dtype=g.dtype)
    o[:h, :w] = g
    return o


def _role_specs(ctx: Ctx) -> list[int]:
    return [13, 10, 12] if len(ctx.state_colors) >= 2 else [13, 10]


def _target_bg(ctx: Ctx) -> int:
    """The commonest colour over all targets."""
    return int(np.bincount(np.concatenate([t.ravel() for t in ctx.targets])).argmax())


def g_kron_eq(ctx: Ctx) -> Iterator[Args]:
    """Targets of shape (h*h, w*w)."""
    fills = {ctx.bg, _target_bg(ctx)}
    for c in [*ctx.state_colors[:4], *_role_specs(ctx)]:
        for fill in sorted(fills):
            yield (c, fill)


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_kron_eq,
    only_if=lambda ctx: all(t.shape == (s.shape[0] ** 2, s.shape[1] ** 2) for s, t in ctx.pairs),
    when=W.RESHAPED,
    cases=[
        Case((1, 0), "12 01", "1200 0100 0012 0001"),
        Case((13, 0), "34 33", "3400 3300 3434 3333"),
    ],
)
def kron_eq(g: Grid, c: int, bg: int) -> Grid:
    """Each cell of colour ``c`` becomes a copy of the grid, every other cell a block of
    background (``c`` may be a role, e.g. 13 the commonest colour)."""
    h, w = g.shape
    if h * h > 30 or w * w > 30:
        raise ValueError("too large")
    o = np.full((h * h, w * w), bg, dtype=g.dtype)
    for y in range(h):
        for x in range(w):
            if g[y, x] == c:
                o[y * h : (y + 1) * h, x * w : (x + 1) * w] = g
    return o


def _block(n: int, lines: Grid) -> int:
    """The largest k > 1 dividing n with lines equal within each run of k (else 1)."""
    for k in range(n, 1, -1):
        if n % k == 0 and all((lines[i] == lines[i - i % k]).all() for i in range(n) if i % k):
            return k
    return 1


def block_factors(g: Grid) -> tuple[int, int]:
    """(ky, kx): the grid is exactly an upscaled smaller grid by these factors."""
    return _block(g.shape[0], g), _block(g.shape[1], g.T)


@op(
    generator=PLAIN,
    only_if=(
        lambda ctx: not (ctx.same_shape and ctx.depth == 0),
        lambda ctx: all(block_factors(s) != (1, 1) for s in ctx.train),
    ),
    cases=[Case((), "1122 1122 3300 3300", "12 30"), Case((), "111222", "12")],
)
def downscale_auto(g: Grid) -> Grid:
    """Undo an upscale: shrink by the largest block size the grid is made of."""
    ky, kx = block_factors(g)
    if ky == 1 and kx == 1:
        raise ValueError("not blocky")
    return g[::ky, ::kx].copy()


def g_pad_extend(ctx: Ctx) -> Iterator[Args]:
    if ctx.depth <= 1 and all(t.shape == (s.shape[0] + 2, s.shape[1] + 2) for s, t in ctx.pairs):
        corners = {int(t[y, x]) for t in ctx.targets for y in (0, -1) for x in (0, -1)}
        yield (corners.pop() if len(corners) == 1 else ctx.bg,)


@op(params=(K.COLOR,), generator=g_pad_extend, cases=[Case((0,), "12 38", "0120 1122 3388 0380")])
def pad_extend(g: Grid, bg: int) -> Grid:
    """Add a one-cell border that repeats the edge rows and columns outward (the four
    corners stay background)."""
    h, w = g.shape
    if h + 2 > 30 or w + 2 > 30:
        raise ValueError("too large")
    o = np.pad(g, 1, mode="edge")
    for y, x in ((0, 0), (0, w + 1), (h + 1, 0), (h + 1, w + 1)):
        o[y, x] = bg
    return o


def _lattice(g: Grid, k: int, bg: int) -> tuple[int, int] | None:
    """The offsets (oy, ox) of a stride-``k`` lattice holding every coloured cell."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        return None
    oy, ox = int(ys[0]) % k, int(xs[0]) % k
    if (ys % k != oy).any() or (xs % k != ox).any():
        return None
    return oy, ox


def g_sample_lattice(ctx: Ctx) -> Iterator[Args]:
    """States (not same-shape tasks) whose cells lie on a sparse lattice, with at least
    two cells per state."""
    for k in (2, 3):
        if all(
            int((s != ctx.bg).sum()) >= 2 and _lattice(s, k, ctx.bg) is not None for s in ctx.states
        ):
            yield (k, ctx.bg)


@op(
    params=(K.COUNT, K.COLOR),
    generator=g_sample_lattice,
    when=W.RESHAPED | W.SHALLOW,
    cases=[Case((2, 0), "0000 0200 0000 0403", "20 43")],
)
def sample_lattice(g: Grid, k: int, bg: int) -> Grid:
    """Compress a grid whose coloured cells all lie on a stride-``k`` lattice to the
    lattice's cells (one cell per lattice point)."""
    off = _lattice(g, k, bg)
    if off is None or k < 2:
        raise ValueError("cells are not on a lattice")
    return g[off[0] :: k, off[1] :: k].copy()


_LAYOUTS = ("row", "col", "square", "side_ncells", "side_nbg", "side_ncolors")


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


@op(
    params=(OneOf(*_COUNTS), OneOf(*_LAYOUTS), K.COLOR),
    generator=Fitting(fits, lambda ctx: ((n, lay, ctx.bg) for n in _COUNTS for lay in _LAYOUTS)),
    only_if=lambda ctx: _multiples(ctx),
    when=W.SHALLOW | W.RESHAPED,
    cases=[
        # two non-background cells: two copies in a row
        Case(("ncells", "row", 0), "12", "1212"),
        # two objects: two copies in a column
        Case(("nobjects", "col", 0), "5 0 5", "5 0 5 5 0 5"),
        # two colours: a full 2 x 2 block of copies
        Case(("ncolors", "square", 0), "34", "3434 3434"),
        # two cells copied into the first two tiles of a canvas 2 (background cells) wide
        Case(("ncells", "side_nbg", 0), "10 02", "1010 0202 0000 0000"),
    ],
)
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


def _canvas_shape(g: Grid, what: str, size: str, bg: int) -> tuple[int, int]:
    """The canvas for ``canvas_count``: the grid's shape times a count (``scale``) or a
    square of its longer side times the count (``square``)."""
    h, w = g.shape
    n = _count(g, what, bg)
    hh, ww = (h * n, w * n) if size == "scale" else (max(h, w) * n, max(h, w) * n)
    if not (n >= 1 and h <= hh <= 30 and w <= ww <= 30):
        raise ValueError("bad canvas")
    return hh, ww


def g_canvas_count(ctx: Ctx) -> Iterator[Args]:
    """Targets bigger than their states by a ratio that varies: every count and canvas
    size that gives the targets' shapes, with each corner where every target holds the
    state's non-background cells."""
    for what in _COUNTS:
        for size in ("scale", "square"):
            try:
                if any(_canvas_shape(s, what, size, ctx.bg) != t.shape for s, t in ctx.pairs):
                    continue
            except ValueError:
                continue
            for corner in CORNERS:
                ok = True
                for s, t in ctx.pairs:
                    out = canvas_count(s, what, size, corner, ctx.bg)
                    fg = out != ctx.bg
                    if not np.array_equal(out[fg], t[fg]):
                        ok = False
                        break
                if ok:
                    yield (what, size, corner, ctx.bg)


@op(
    params=(OneOf(*_COUNTS), OneOf("scale", "square"), OneOf(*CORNERS), K.COLOR),
    generator=g_canvas_count,
    only_if=lambda ctx: (
        len({(t.shape[0] / s.shape[0], t.shape[1] / s.shape[1]) for s, t in ctx.pairs}) >= 2
    ),
    when=W.RESHAPED | W.LARGER | W.SHALLOW,
    cases=[
        # two cells: a square canvas of side 2 x 2, the grid at its bottom-left
        Case(("ncells", "square", "bl", 0), "12", "0000 0000 0000 1200"),
        # two cells: the shape scaled by 2, the grid at its top-right
        Case(("ncells", "scale", "tr", 0), "12", "0012 0000"),
    ],
)
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


def _isqrt_exact(n: int) -> int:
    r = int(n**0.5 + 0.5)
    return r if r * r == n else 0


def _block_ok(s: Grid, bg: int) -> bool:
    h, w = s.shape
    bh, bw = _isqrt_exact(h), _isqrt_exact(w)
    if bh < 2 or bw < 2:
        return False
    ys, xs = np.nonzero(s != bg)
    return bool(
        ys.size
        and int(ys.min()) // bh == int(ys.max()) // bh
        and int(xs.min()) // bw == int(xs.max()) // bw
    )


def g_kron_fill(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape and ctx.grows and all(_block_ok(s, ctx.bg) for s in ctx.states):
        yield (ctx.bg, 0)
        yield (ctx.bg, 1)


_IN = "0000 0000 1000 1100"
_OUT = "1000 1100 1010 1111"


@op(
    params=(K.COLOR, K.FLAG),
    generator=g_kron_fill,
    cases=[
        # the 2x2 block holding the content is kron-ed with itself over the 4x4 grid
        Case((0, 0), _IN, _OUT),
        # inverted: the block's background cell gets the copy
        Case((0, 1), _IN, "0010 0011 0000 0000"),
    ],
)
def kron_fill(g: Grid, bg: int, invert: int) -> Grid:
    """In-place fractal: an ``n*n`` x ``m*m`` grid whose content sits inside one cell of
    its ``n`` x ``m`` block lattice becomes that block's self-``kron``: every
    non-background cell of the block (background if ``invert``) becomes a copy of it."""
    h, w = g.shape
    bh, bw = _isqrt_exact(h), _isqrt_exact(w)
    if bh < 2 or bw < 2:
        raise ValueError("sides are not squares")
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    by, bx = int(ys.min()) // bh, int(xs.min()) // bw
    if int(ys.max()) // bh != by or int(xs.max()) // bw != bx:
        raise ValueError("content spans several blocks")
    block = g[by * bh : (by + 1) * bh, bx * bw : (bx + 1) * bw]
    mask = (block != bg) if not invert else (block == bg)
    o = np.full_like(g, bg)
    for y in range(bh):
        for x in range(bw):
            if mask[y, x]:
                o[y * bh : (y + 1) * bh, x * bw : (x + 1) * bw] = block
    return o


def _merge_runs(a: Grid, bg: int) -> list[list[int]]:
    """Runs of consecutive rows of ``a`` that agree wherever both are non-background
    (the background is a wildcard, so holes in a block do not split it)."""
    runs = [[0]]
    for i in range(1, a.shape[0]):
        row = a[i]
        if all(((r == bg) | (row == bg) | (r == row)).all() for r in a[runs[-1]]):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def g_block_pixels(ctx: Ctx) -> Iterator[Args]:
    """Smaller targets that are the summary itself, or one rotation or reflection of
    it (the same in every pair: the next step turns it)."""
    try:
        outs = [block_pixels(s, ctx.bg) for s, _ in ctx.pairs]
    except ValueError:
        return
    if any(
        all(
            np.array_equal(rigid_transform(o, r), t)
            for o, (_, t) in zip(outs, ctx.pairs, strict=True)
        )
        for r in range(8)
    ):
        yield (ctx.bg,)


_PATCH_IN = "00000 03344 03044 05560 05566"


@op(
    params=(K.COLOR,),
    generator=g_block_pixels,
    when=W.SMALLER | W.SHALLOW,
    # four noisy blocks (a hole in the 3 block, one in the 6 block), one cell each
    cases=[Case((0,), _PATCH_IN, "34 56")],
)
def block_pixels(g: Grid, bg: int) -> Grid:
    """A patchwork of (noisy) solid blocks summarised one cell per block: the
    non-background box is cut where consecutive rows (then columns) disagree on cells
    both have non-background, and each block becomes its commonest non-background
    colour (background if it has none)."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    a = g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    rows, cols = _merge_runs(a, bg), _merge_runs(a.T, bg)
    if len(rows) * len(cols) < 2 or (len(rows) == a.shape[0] and len(cols) == a.shape[1]):
        raise ValueError("no blocks")
    o = np.full((len(rows), len(cols)), bg, dtype=g.dtype)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            cells = a[np.ix_(r, c)].ravel()
            cells = cells[cells != bg]
            if cells.size:
                o[i, j] = int(np.bincount(cells).argmax())
    return o


_KRON_IN = "12 01"
_KRON_OUT = "1002 0100 0010 0001"


@op(
    params=(K.COLOR,),
    generator=Fitting(fits_bg, lambda ctx: ((bg,) for bg in bg_readings(ctx, 0))),
    only_if=lambda ctx: all(t.shape == (s.shape[0] ** 2, s.shape[1] ** 2) for s, t in ctx.pairs),
    when=W.SHALLOW,
    # every cell becomes a block showing where its own colour is
    cases=[Case((0,), _KRON_IN, _KRON_OUT)],
)
def kron_own(g: Grid, bg: int) -> Grid:
    """A fractal by colour: every non-background cell of colour k becomes an h x w
    block showing where the grid has colour k (in k, the rest background); background
    cells become background blocks."""
    h, w = g.shape
    if h * h > 30 or w * w > 30:
        raise ValueError("too large")
    o = np.full((h * h, w * w), bg, dtype=g.dtype)
    for y, x in zip(*np.nonzero(g != bg), strict=True):
        k = g[y, x]
        o[y * h : (y + 1) * h, x * w : (x + 1) * w] = np.where(g == k, k, bg)
    return o
