"""More DSL ops (shape): primitives, their signatures and parameter generators.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).

Ops that change the grid's shape: a self-similar ``kron`` keyed on one colour, cropping
the object with the most cells of a colour, colour histograms, a key grid painted
through a mask, automatic block downscaling, counting objects onto a diagonal, colours
in spatial order, a whole output grid looked up by a grid feature, stacking parts in an
inferred order, block summaries, the colour of a selected object, pieces gathered around
anchors, mirror extension, cropping between markers, and fitting a shape into a frame.

Primitives call other primitives by bare name (imported from :mod:`prims`), so that
``Program.to_python`` can copy their source into a standalone script.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc import prims
from atlas_actors.arc.prims import (
    GRID_FEATURES,
    SELECTORS,
    _select,
    attract,
    components,
    grid_feature,
    rays,
    role_color,
    split_parts,
)

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]


# ---------------------------------------------------------------- primitives


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


def _block(n: int, lines: Grid) -> int:
    """The largest k > 1 dividing n with lines equal within each run of k (else 1)."""
    for k in range(n, 1, -1):
        if n % k == 0 and all((lines[i] == lines[i - i % k]).all() for i in range(n) if i % k):
            return k
    return 1


def block_factors(g: Grid) -> tuple[int, int]:
    """(ky, kx): the grid is exactly an upscaled smaller grid by these factors."""
    return _block(g.shape[0], g), _block(g.shape[1], g.T)


def downscale_auto(g: Grid) -> Grid:
    """Undo an upscale: shrink by the largest block size the grid is made of."""
    ky, kx = block_factors(g)
    if ky == 1 and kx == 1:
        raise ValueError("not blocky")
    return g[::ky, ::kx].copy()


def count_diag(g: Grid, c: int, conn: int, bg: int) -> Grid:
    """An N x N grid with colour ``c`` on its main diagonal, N = the number of objects."""
    n = len(components(g, conn, 0, bg))
    if not 1 <= n <= 30:
        raise ValueError("count out of range")
    o = np.full((n, n), bg, dtype=g.dtype)
    np.fill_diagonal(o, c)
    return o


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


def lookup_grid(g: Grid, feature: str, table: list[list[int]], h: int, w: int, bg: int) -> Grid:
    """The ``h`` x ``w`` grid stored in ``table`` for the input's grid ``feature``
    (entries ``[value * 1000 + cell index, colour]``; cells not listed are ``bg``)."""
    return table_grid(grid_feature(g, feature, bg), table, h, w, bg, g.dtype)


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


def object_color(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """A 1x1 grid of the most common colour of the object chosen by ``sel``."""
    ys, xs = _select(g, components(g, conn, by_color, bg), sel, bg)
    return np.array([[int(np.bincount(g[ys, xs], minlength=10).argmax())]], dtype=g.dtype)


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


def pingpong(g: Grid, axis: str, k: int) -> Grid:
    """Mirror-extend the grid ``k`` times along ``axis`` (``v`` rows, ``h`` columns),
    each copy reflected and sharing its edge line with the previous one: n lines become
    k * (n - 1) + 1."""
    a = g if axis == "v" else g.T
    n = a.shape[0]
    if n < 2 or k < 1 or k * (n - 1) + 1 > 30:
        raise ValueError("cannot extend")
    period = 2 * (n - 1)
    idx = [i % period for i in range(k * (n - 1) + 1)]
    o = a[[i if i < n else period - i for i in idx]]
    return o if axis == "v" else o.T


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


def grow_rows(g: Grid, bg: int) -> Grid:
    """A one-row grid grown into a staircase of ``w // 2`` rows: row i has its
    coloured run (from the left) extended by i cells in the run's last colour."""
    h, w = g.shape
    if h != 1 or w < 2:
        raise ValueError("not a single row")
    on = np.nonzero(g[0] != bg)[0]
    if on.size == 0 or on[0] != 0 or on.size != on[-1] + 1:
        raise ValueError("no run from the left edge")
    n, c = int(on.size), int(g[0, on[-1]])
    o = np.repeat(g, w // 2, axis=0)
    for i in range(w // 2):
        o[i, n : n + i] = c
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


def sample_lattice(g: Grid, k: int, bg: int) -> Grid:
    """Compress a grid whose coloured cells all lie on a stride-``k`` lattice to the
    lattice's cells (one cell per lattice point)."""
    off = _lattice(g, k, bg)
    if off is None or k < 2:
        raise ValueError("cells are not on a lattice")
    return g[off[0] :: k, off[1] :: k].copy()


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


def attract_to(g: Grid, c: int, t: int, diag: int, bg: int) -> Grid:
    """Like ``attract``, but objects of colour ``c`` slide only towards cells of colour
    ``t`` (other colours neither attract nor block them)."""
    if c == t or not (g == t).any():
        raise ValueError("no target colour")
    masked = np.where((g == c) | (g == t), g, bg)
    moved = attract(masked, c, diag, bg)
    return np.where(moved == c, c, np.where(g == c, bg, g))


def rays_paint(g: Grid, src: int, c: int, dirs: str, stop: int, bg: int) -> Grid:
    """From every cell of colour ``src`` draw rays (``dirs`` h, v or hv) in colour ``c``
    over the background; ``stop`` 1 ends a ray at the first non-background cell, 0
    passes over (without painting) non-background cells."""
    if not (g == src).any():
        raise ValueError("no source cells")
    return np.where(rays(g, src, dirs, stop, bg) != g, c, g)


def diag_marks(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` on the background cells diagonally next to a non-background cell."""
    h, w = g.shape
    p = np.pad(g != bg, 1)
    near = np.zeros((h, w), dtype=bool)
    for dy in (-1, 1):
        for dx in (-1, 1):
            near |= p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    return np.where(near & (g == bg), c, g)


# ---------------------------------------------------------------- generators


def _role_specs(ctx: Ctx) -> list[int]:
    return [13, 10, 12] if len(ctx.state_colors) >= 2 else [13, 10]


def _target_bg(ctx: Ctx) -> int:
    """The commonest colour over all targets."""
    return int(np.bincount(np.concatenate([t.ravel() for t in ctx.targets])).argmax())


def g_kron_eq(ctx: Ctx) -> Iterator[Args]:
    """Targets of shape (h*h, w*w)."""
    if ctx.same_shape or not all(
        t.shape == (s.shape[0] ** 2, s.shape[1] ** 2) for s, t in ctx.pairs
    ):
        return
    fills = {ctx.bg, _target_bg(ctx)}
    for c in [*ctx.state_colors[:4], *_role_specs(ctx)]:
        for fill in sorted(fills):
            yield (c, fill)


def g_crop_most(ctx: Ctx) -> Iterator[Args]:
    if not ctx.smaller or ctx.depth > 1:
        return
    # the counted colour shows in every target
    cs = [c for c in ctx.state_colors[:6] if all((t == c).any() for t in ctx.targets)]
    if len(ctx.state_colors) >= 2:
        cs += [10, 12]
    for c in cs:
        for most in (1, 0):
            for conn in (8, 4):
                yield (c, most, conn, ctx.bg)


def g_histogram(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape or ctx.depth > 1:
        return
    for skip in (ctx.bg, -1):
        ncols = [len(set(np.unique(s).tolist()) - {skip}) for s in ctx.train]
        for axis, k in (("v", 1), ("h", 0)):
            if all(t.shape[k] == n for t, n in zip(ctx.targets, ncols, strict=False)):
                yield (axis, skip)


def g_key_mask(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape or ctx.depth > 1:
        return
    try:
        for s in ctx.train:
            _key_and_mask(s, ctx.bg)
    except ValueError:
        return
    for mode in ("up", "down", "kron"):
        yield (mode, ctx.bg)


def g_downscale_auto(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape and ctx.depth == 0:
        return
    if all(block_factors(s) != (1, 1) for s in ctx.train):
        yield ()


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


def g_color_order(ctx: Ctx) -> Iterator[Args]:
    if all(min(t.shape) == 1 for t in ctx.targets) and not ctx.same_shape:
        for axis in ("auto", "h", "v"):
            yield (axis, ctx.bg)
            yield (axis, -1)


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
            v = prims.grid_feature(s, feat, ctx.bg)
            if lut.setdefault(v, t.tobytes()) != t.tobytes():
                ok = False
                break
            grids[v] = t
        if not ok or len(lut) < 2 or len(lut) == ctx.n:
            continue
        if not all(prims.grid_feature(x, feat, ctx.bg) in lut for x in ctx.states[ctx.n :]):
            continue
        table = [
            [v * 1000 + i, int(c)]
            for v, t in sorted(grids.items())
            for i, c in enumerate(t.ravel().tolist())
            if c != ctx.bg
        ]
        if 0 < len(table) <= 64 and all(v >= 0 for v in grids):
            yield (feat, table, h, w, ctx.bg)


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
    if not ctx.smaller or ctx.depth > 1:
        return
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


def g_block_summary(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller and ctx.depth <= 1:
        yield (ctx.bg,)


def g_object_color(ctx: Ctx) -> Iterator[Args]:
    """One-cell targets whose colour is in the state."""
    if not ctx.tiny or ctx.depth > 0:
        return
    if any(int(t.flat[0]) not in s for s, t in ctx.pairs):
        return
    for conn in (8, 4):
        for by_color in (1, 0):
            for sel in SELECTORS:
                yield (sel, conn, by_color, ctx.bg)


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


def g_pingpong(ctx: Ctx) -> Iterator[Args]:
    """Targets k * (n - 1) + 1 lines long along one axis (same k in every pair)."""
    if not ctx.larger or ctx.depth > 1:
        return
    for axis, a, b in (("v", 0, 1), ("h", 1, 0)):
        ks = set()
        for s, t in ctx.pairs:
            n, m = s.shape[a], t.shape[a]
            if s.shape[b] != t.shape[b] or n < 2 or (m - 1) % (n - 1):
                break
            ks.add((m - 1) // (n - 1))
        else:
            if len(ks) == 1 and (k := ks.pop()) > 1:
                yield (axis, k)


def g_crop_marked(ctx: Ctx) -> Iterator[Args]:
    if not ctx.smaller or ctx.depth > 1:
        return
    cs = [12] if len(ctx.state_colors) >= 2 else []
    cs += [c for c in ctx.state_colors[:4] if all(int((s == c).sum()) == 4 for s in ctx.train)]
    for c in cs:
        yield (c, 1, ctx.bg)
        yield (c, 0, ctx.bg)


def g_fit_in_frame(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller and ctx.depth == 0:
        yield (ctx.bg,)


def g_paint_fg(ctx: Ctx) -> Iterator[Args]:
    """Built by the solver's finisher (it needs the original input), never enumerated."""
    return iter(())


def g_pad_extend(ctx: Ctx) -> Iterator[Args]:
    if ctx.depth <= 1 and all(t.shape == (s.shape[0] + 2, s.shape[1] + 2) for s, t in ctx.pairs):
        corners = {int(t[y, x]) for t in ctx.targets for y in (0, -1) for x in (0, -1)}
        yield (corners.pop() if len(corners) == 1 else ctx.bg,)


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


def g_largest_bars(ctx: Ctx) -> Iterator[Args]:
    """Targets whose rows are all equal."""
    if not ctx.smaller or ctx.depth > 1:
        return
    if all((t == t[0:1]).all() for t in ctx.targets):
        for conn in (8, 4):
            yield (conn, ctx.bg)


def g_corner_quadrants(ctx: Ctx) -> Iterator[Args]:
    if ctx.depth == 0 and all(t.shape == (s.shape[0] - 4, s.shape[1] - 4) for s, t in ctx.pairs):
        yield (ctx.bg,)


def g_line_colors(ctx: Ctx) -> Iterator[Args]:
    """Square targets whose rows (or columns) are each one colour."""
    if ctx.depth > 1 or not ctx.smaller:
        return
    for t in ctx.targets:
        if t.shape[0] != t.shape[1] or not ((t == t[:, :1]).all() or (t == t[:1]).all()):
            return
    yield (ctx.bg,)


def g_most_dotted(ctx: Ctx) -> Iterator[Args]:
    """One-cell targets: dots of the least common colour (or another state colour no
    target shows)."""
    if not ctx.tiny or ctx.depth > 0 or len(ctx.state_colors) < 3:
        return
    yield (12,)
    for c in ctx.state_colors[:6]:
        if not any((t == c).any() for t in ctx.targets):
            yield (c,)


def g_join_pieces(ctx: Ctx) -> Iterator[Args]:
    """Targets with no background cell, smaller than the states."""
    if ctx.smaller and ctx.depth == 0 and all((t != ctx.bg).all() for t in ctx.targets):
        yield (ctx.bg,)


def g_grow_rows(ctx: Ctx) -> Iterator[Args]:
    if ctx.depth == 0 and all(
        s.shape[0] == 1 and t.shape == (s.shape[1] // 2, s.shape[1]) for s, t in ctx.pairs
    ):
        yield (ctx.bg,)


def g_sample_lattice(ctx: Ctx) -> Iterator[Args]:
    """States (not same-shape tasks) whose cells lie on a sparse lattice, with at least
    two cells per state."""
    if ctx.same_shape or ctx.depth > 1:
        return
    for k in (2, 3):
        if all(
            int((s != ctx.bg).sum()) >= 2 and _lattice(s, k, ctx.bg) is not None for s in ctx.states
        ):
            yield (k, ctx.bg)


def g_corner_assemble(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller and ctx.depth == 0 and all(t.shape[0] % 2 == 0 for t in ctx.targets):
        yield (ctx.bg,)


def g_crop_margin(ctx: Ctx) -> Iterator[Args]:
    """A colour whose bounding box, grown by one row and/or column, has the target's
    shape in every pair."""
    if not ctx.smaller or ctx.depth > 0:
        return
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


def g_attract_to(ctx: Ctx) -> Iterator[Args]:
    """A colour whose cells moved towards a colour that stayed put in every pair, with
    at least three non-background colours in some state (else ``attract`` says it)."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    if max(len(set(np.unique(s).tolist()) - {ctx.bg}) for s in ctx.train) < 3:
        return
    pairs = ctx.pairs
    moved = [c for c in ctx.state_colors[:5] if any(((s == c) != (t == c)).any() for s, t in pairs)]
    still = [
        c
        for c in ctx.state_colors[:6]
        if c not in moved and all(((s == c) == (t == c)).all() for s, t in pairs)
    ]
    for c in moved:
        for t in still[:3]:
            yield (c, t, 0, ctx.bg)
            yield (c, t, 1, ctx.bg)


def _painted(ctx: Ctx, c: int) -> list[tuple[Grid, Grid]] | None:
    """Per pair (state, cells that became ``c``), when every change paints ``c`` over
    the background and some pair paints something."""
    out = []
    for s, t in ctx.pairs:
        diff = s != t
        if not ((t[diff] == c).all() and (s[diff] == ctx.bg).all()):
            return None
        out.append((s, diff))
    return out if any(d.any() for _, d in out) else None


def g_rays_paint(ctx: Ctx) -> Iterator[Args]:
    """A new colour painted only on rows/columns through cells of one state colour:
    the narrowest direction set (h, v, hv) that covers every painted cell."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for c in ctx.new_colors[:2]:
        got = _painted(ctx, c)
        if got is None:
            continue
        roles = len({frozenset(np.unique(s).tolist()) for s in ctx.train}) > 1
        for src in ctx.state_colors[:4] + ([10, 12] if roles else []):
            if src in (c, ctx.bg):
                continue
            ok = {"h": True, "v": True, "hv": True}
            for s, diff in got:
                try:
                    m = s == role_color(s, src)
                except ValueError:
                    ok = {}
                    break
                rows, cols = m.any(axis=1)[:, None], m.any(axis=0)[None, :]
                ok["h"] &= bool((~diff | rows).all())
                ok["v"] &= bool((~diff | cols).all())
                ok["hv"] &= bool((~diff | rows | cols).all())
            for d in ("h", "v", "hv"):
                if ok.get(d):
                    yield (src, c, d, 0, ctx.bg)
                    yield (src, c, d, 1, ctx.bg)
                    break


def g_diag_marks(ctx: Ctx) -> Iterator[Args]:
    """A new colour painted only on background cells diagonally next to others."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for c in ctx.new_colors[:2]:
        got = _painted(ctx, c)
        if got is None:
            continue
        if all((diag_marks(s, 10, ctx.bg) == 10)[diff].all() for s, diff in got):
            yield (c, ctx.bg)


OP_TABLE: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("kron_eq", kron_eq, ("g", "c", "c")),
    ("crop_most", crop_most, ("g", "c", "b", "conn", "c")),
    ("histogram", histogram, ("g", ("v", "h"), "cd")),
    ("key_mask", key_mask, ("g", ("up", "down", "kron"), "c")),
    ("downscale_auto", downscale_auto, ("g",)),
    ("count_diag", count_diag, ("g", "c", "conn", "c")),
    ("color_order", color_order, ("g", ("auto", "h", "v"), "cd")),
    ("lookup_grid", lookup_grid, ("g", GRID_FEATURES, "table", "k", "k", "c")),
    ("overlay_parts", overlay_parts, ("g", ("q4", "h2", "v2", "h3", "v3", "sep"), "il", "c")),
    ("block_summary", block_summary, ("g", "c")),
    ("object_color", object_color, ("g", SELECTORS, "conn", "b", "c")),
    ("overlay_windows", overlay_windows, ("g", "c", "k", "k", "c")),
    ("pingpong", pingpong, ("g", ("v", "h"), "k")),
    ("crop_marked", crop_marked, ("g", "c", "b", "c")),
    ("fit_in_frame", fit_in_frame, ("g", "c")),
    ("paint_fg", paint_fg, ("g", "g", ("common", "second", "least", "lost"), "c")),
    ("pad_extend", pad_extend, ("g", "c")),
    ("snake_colors", snake_colors, ("g", "k", "k", ("h", "v"), "c")),
    ("largest_bars", largest_bars, ("g", "conn", "c")),
    ("corner_quadrants", corner_quadrants, ("g", "c")),
    ("line_colors", line_colors, ("g", "c")),
    ("most_dotted", most_dotted, ("g", "c")),
    ("join_pieces", join_pieces, ("g", "c")),
    ("grow_rows", grow_rows, ("g", "c")),
    ("sample_lattice", sample_lattice, ("g", "k", "c")),
    ("corner_assemble", corner_assemble, ("g", "c")),
    ("crop_margin", crop_margin, ("g", "c", "b", "b")),
    ("attract_to", attract_to, ("g", "c", "c", "b", "c")),
    ("rays_paint", rays_paint, ("g", "c", "c", ("h", "v", "hv"), "b", "c")),
    ("diag_marks", diag_marks, ("g", "c", "c")),
]
"""(name, primitive, argument kinds) as in :func:`atlas_actors.arc.dsl._ops`."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {
    "kron_eq": g_kron_eq,
    "crop_most": g_crop_most,
    "histogram": g_histogram,
    "key_mask": g_key_mask,
    "downscale_auto": g_downscale_auto,
    "count_diag": g_count_diag,
    "color_order": g_color_order,
    "lookup_grid": g_lookup_grid,
    "overlay_parts": g_overlay_parts,
    "block_summary": g_block_summary,
    "object_color": g_object_color,
    "overlay_windows": g_overlay_windows,
    "pingpong": g_pingpong,
    "crop_marked": g_crop_marked,
    "fit_in_frame": g_fit_in_frame,
    "paint_fg": g_paint_fg,
    "pad_extend": g_pad_extend,
    "snake_colors": g_snake_colors,
    "largest_bars": g_largest_bars,
    "corner_quadrants": g_corner_quadrants,
    "line_colors": g_line_colors,
    "most_dotted": g_most_dotted,
    "join_pieces": g_join_pieces,
    "grow_rows": g_grow_rows,
    "sample_lattice": g_sample_lattice,
    "corner_assemble": g_corner_assemble,
    "crop_margin": g_crop_margin,
    "attract_to": g_attract_to,
    "rays_paint": g_rays_paint,
    "diag_marks": g_diag_marks,
}
"""op name -> parameter generator (see :mod:`atlas_actors.arc.infer`)."""
