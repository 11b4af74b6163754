"""ARC DSL primitives: plain numpy functions over grids.

Every primitive takes a grid (a 2-D integer array, colours 0-9) first, then literal
parameters, and returns a new grid. They depend only on numpy and on each other, so
:meth:`atlas_actors.arc.dsl.Program.to_python` can copy their source into a standalone
script. Every loop is bounded by the grid size (at most 30x30 cells).

Rigid transform codes (used by ``rigid`` and ``tile_t``): 0 identity, 1 rot90
(clockwise), 2 rot180, 3 rot270, 4 flip_h (mirror left-right), 5 flip_v (upside down),
6 transpose, 7 antitranspose.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

Grid = np.ndarray[Any, Any]

_CACHE_CC: dict[Any, Any] = {}
_CACHE_FEAT: dict[Any, tuple[Any, int]] = {}
"""Object features and selections by the id of the object (list), with the object
(list) itself, so a stale id never matches."""
_CACHE_MAP: dict[Any, Grid] = {}

# ---------------------------------------------------------------- geometry


def rot90(g: Grid) -> Grid:
    return np.rot90(g, -1)


def rot180(g: Grid) -> Grid:
    return np.rot90(g, 2)


def rot270(g: Grid) -> Grid:
    return np.rot90(g, 1)


def flip_h(g: Grid) -> Grid:
    return g[:, ::-1]


def flip_v(g: Grid) -> Grid:
    return g[::-1, :]


def transpose(g: Grid) -> Grid:
    return g.T


def antitranspose(g: Grid) -> Grid:
    return np.rot90(g, 2).T


def rigid(g: Grid, k: int) -> Grid:
    if k == 0:
        return g
    if k == 1:
        return np.rot90(g, -1)
    if k == 2:
        return np.rot90(g, 2)
    if k == 3:
        return np.rot90(g, 1)
    if k == 4:
        return g[:, ::-1]
    if k == 5:
        return g[::-1, :]
    if k == 6:
        return g.T
    return np.rot90(g, 2).T


def shift(g: Grid, dy: int, dx: int, bg: int) -> Grid:
    h, w = g.shape
    o = np.full_like(g, bg)
    ys, yd = max(0, -dy), max(0, dy)
    xs, xd = max(0, -dx), max(0, dx)
    hh, ww = h - abs(dy), w - abs(dx)
    if hh > 0 and ww > 0:
        o[yd : yd + hh, xd : xd + ww] = g[ys : ys + hh, xs : xs + ww]
    return o


# ---------------------------------------------------------------- colours


def recolor(g: Grid, cmap: list[list[int]]) -> Grid:
    lut = np.arange(10)
    for a, b in cmap:
        lut[a] = b
    return lut[g]


def replace_color(g: Grid, a: int, b: int) -> Grid:
    return np.where(g == a, b, g)


def keep_color(g: Grid, c: int, bg: int) -> Grid:
    return np.where(g == c, g, bg)


def erase_color(g: Grid, c: int, bg: int) -> Grid:
    return np.where(g == c, bg, g)


def swap_colors(g: Grid, a: int, b: int) -> Grid:
    return np.where(g == a, b, np.where(g == b, a, g))


def majority_recolor(g: Grid, bg: int) -> Grid:
    """Paint every non-background cell with the most common non-background colour."""
    fg = g[g != bg]
    if fg.size == 0:
        return g.copy()
    c = int(np.bincount(fg, minlength=10).argmax())
    return np.where(g != bg, c, bg)


def minority_recolor(g: Grid, bg: int) -> Grid:
    """Paint every non-background cell with the least common non-background colour."""
    counts = np.bincount(g[g != bg], minlength=10)
    present = np.nonzero(counts)[0]
    if present.size == 0:
        return g.copy()
    c = int(present[np.argmin(counts[present])])
    return np.where(g != bg, c, bg)


# ---------------------------------------------------------------- objects


def components(g: Grid, conn: int, by_color: int, bg: int) -> list[tuple[Grid, Grid]]:
    """Connected components (4- or 8-connected) of non-background cells.

    With ``by_color`` a component has one colour; otherwise any non-background colours
    join. Returns ``(ys, xs)`` index arrays per object, in reading order of first cell.
    """
    key = (g.shape, g.tobytes(), conn, by_color, bg)
    hit = _CACHE_CC.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    h, w = g.shape
    flat = g.ravel().tolist()
    seen = [False] * (h * w)
    if conn == 8:
        nb = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
    else:
        nb = [(-1, 0), (0, -1), (0, 1), (1, 0)]
    out: list[tuple[Grid, Grid]] = []
    for start in range(h * w):
        if seen[start] or flat[start] == bg:
            continue
        c0 = flat[start]
        seen[start] = True
        stack = [start]
        cells = []
        while stack:
            p = stack.pop()
            cells.append(p)
            y, x = divmod(p, w)
            for dy, dx in nb:
                ny, nx = y + dy, x + dx
                if 0 <= ny < h and 0 <= nx < w:
                    q = ny * w + nx
                    if not seen[q] and flat[q] != bg and (not by_color or flat[q] == c0):
                        seen[q] = True
                        stack.append(q)
        arr = np.array(sorted(cells))
        out.append((arr // w, arr % w))
    if len(_CACHE_CC) > 2000:
        _CACHE_CC.clear()
        _CACHE_FEAT.clear()
    _CACHE_CC[key] = out
    return out


def obj_feature(g: Grid, o: tuple[Grid, Grid], name: str, bg: int) -> int:
    """A numeric feature of one object (used to select, filter and recolour)."""
    return _by_identity(o[0], (name, bg), lambda: _obj_feature(g, o, name, bg))


def _by_identity(owner: Any, key: tuple[Any, ...], compute: Callable[[], int]) -> int:
    """``compute()``, memoised in ``_CACHE_FEAT`` under the identity of ``owner`` (an
    object's cell array, or an object list) and ``key``. The entry holds ``owner``, so
    its id cannot be reused while the entry stands; a list can outlive its place in the
    components cache, which may clear in the middle of a computation."""
    full = (id(owner), *key)
    hit = _CACHE_FEAT.get(full)
    if hit is not None and hit[0] is owner:
        return hit[1]
    v = compute()
    if len(_CACHE_FEAT) > 200000:
        _CACHE_FEAT.clear()
    _CACHE_FEAT[full] = (owner, v)
    return v


def _obj_feature(g: Grid, o: tuple[Grid, Grid], name: str, bg: int) -> int:
    ys, xs = o
    if name == "size":
        return int(ys.size)
    y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
    hh, ww = y1 - y0 + 1, x1 - x0 + 1
    if name == "height":
        return hh
    if name == "width":
        return ww
    if name == "area":
        return hh * ww
    if name == "top":
        return y0
    if name == "left":
        return x0
    if name == "bottom":
        return y1
    if name == "right":
        return x1
    if name == "ncolors":
        return int(np.unique(g[ys, xs]).size)
    if name == "color":
        return int(np.bincount(g[ys, xs], minlength=10).argmax())
    if name == "is_rect":
        return int(ys.size == hh * ww)
    if name == "density":
        return int(100 * ys.size // (hh * ww))
    if name == "touches_border":
        h, w = g.shape
        return int(y0 == 0 or x0 == 0 or y1 == h - 1 or x1 == w - 1)
    mask = np.zeros((hh, ww), dtype=bool)
    mask[ys - y0, xs - x0] = True
    if name == "holes":
        return int(_enclosed(~mask).sum())
    if name == "nholes":
        enc = _enclosed(~mask)
        if not enc.any():
            return 0
        return len(components(enc.astype(np.int64), 4, 0, 0))
    if name == "shape":
        return zlib.crc32(bytes([hh, ww]) + mask.tobytes()) % 1000003
    if name == "symmetric":
        return int(bool((mask == mask[:, ::-1]).all() or (mask == mask[::-1, :]).all()))
    raise ValueError(f"unknown object feature {name!r}")


def _enclosed(free: Grid) -> Grid:
    """Cells of boolean mask ``free`` not 4-connected to the border through ``free``."""
    h, w = free.shape
    reach = np.zeros_like(free)
    reach[0, :] = free[0, :]
    reach[-1, :] = free[-1, :]
    reach[:, 0] |= free[:, 0]
    reach[:, -1] |= free[:, -1]
    for _ in range(h * w):
        nxt = reach.copy()
        nxt[1:, :] |= reach[:-1, :]
        nxt[:-1, :] |= reach[1:, :]
        nxt[:, 1:] |= reach[:, :-1]
        nxt[:, :-1] |= reach[:, 1:]
        nxt &= free
        if (nxt == reach).all():
            break
        reach = nxt
    return free & ~reach


SELECTORS = (
    "largest", "smallest", "largest_bbox", "smallest_bbox", "most_colors", "top", "bottom",
    "left", "right", "densest", "sparsest", "most_holes", "tallest", "widest",
    "unique_color", "unique_shape", "unique_size", "common_shape", "common_color",
    "symmetric", "asymmetric",
)  # fmt: skip
"""Object selectors of :func:`_select` (``crop_object``, ``keep_extreme``, ...)."""

GRID_FEATURES = ("mask", "ncolors", "nobjects4", "nobjects8", "ncells", "symmetric", "top_color")
"""Whole-grid features of :func:`grid_feature`."""

_SEL_FEATURE = {
    "largest": ("size", 1),
    "smallest": ("size", -1),
    "largest_bbox": ("area", 1),
    "smallest_bbox": ("area", -1),
    "most_colors": ("ncolors", 1),
    "top": ("top", -1),
    "bottom": ("bottom", 1),
    "left": ("left", -1),
    "right": ("right", 1),
    "densest": ("density", 1),
    "sparsest": ("density", -1),
    "most_holes": ("holes", 1),
    "tallest": ("height", 1),
    "widest": ("width", 1),
}
"""Selectors that pick the object with the best value of one feature (sign: +1 max)."""


def _select(g: Grid, objs: list[tuple[Grid, Grid]], sel: str, bg: int) -> tuple[Grid, Grid]:
    """The object ``sel`` picks from ``objs`` (raises ValueError when none does)."""
    i = _pick(g, objs, sel, bg)
    if i < 0:
        raise ValueError(f"selector {sel!r} picks no object")
    return objs[i]


def select_index(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> int:
    """Which of ``g``'s objects (in :func:`components` order) ``sel`` picks; -1 for none."""
    return _pick(g, components(g, conn, by_color, bg), sel, bg)


def _pick(g: Grid, objs: list[tuple[Grid, Grid]], sel: str, bg: int) -> int:
    """Index of the object ``sel`` picks from ``objs``, -1 when it picks none (memoised
    by the identity of ``objs``)."""

    def compute() -> int:
        try:
            picked = _select_uncached(g, objs, sel, bg)
        except ValueError:
            return -1
        return next(i for i, o in enumerate(objs) if o is picked)

    return _by_identity(objs, ("select", sel, bg), compute)


def _select_uncached(
    g: Grid, objs: list[tuple[Grid, Grid]], sel: str, bg: int
) -> tuple[Grid, Grid]:
    if not objs or len(objs) > 300:
        raise ValueError("no objects or too many")
    if sel in ("largest", "smallest"):
        sizes = [o[0].size for o in objs]
        return objs[int(np.argmax(sizes) if sel == "largest" else np.argmin(sizes))]
    if len(objs) > 40:
        raise ValueError("too many objects to compare")
    if sel in ("symmetric", "asymmetric"):
        want = int(sel == "symmetric")
        cand = [o for o in objs if obj_feature(g, o, "symmetric", bg) == want]
        if len(cand) != 1:
            raise ValueError("no single (a)symmetric object")
        return cand[0]
    if sel in ("unique_color", "unique_shape", "unique_size", "common_shape", "common_color"):
        feat = {"unique_color": "color", "common_color": "color", "unique_size": "size"}.get(
            sel, "shape"
        )
        vals = [obj_feature(g, o, feat, bg) for o in objs]
        counts = {v: vals.count(v) for v in vals}
        if sel.startswith("unique"):
            cand = [o for o, v in zip(objs, vals, strict=True) if counts[v] == 1]
            if len(cand) != 1:
                raise ValueError("no unique object")
            return cand[0]
        best = max(counts.values())
        return next(o for o, v in zip(objs, vals, strict=True) if counts[v] == best)
    feat, sign = _SEL_FEATURE[sel]
    vals = [sign * obj_feature(g, o, feat, bg) for o in objs]
    return objs[int(np.argmax(vals))]


def selection_tied(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> bool:
    """Whether ``sel`` picks its object by an arbitrary tie-break on ``g`` (several
    objects share the best value), so the choice says little about the rule."""
    objs = components(g, conn, by_color, bg)
    if len(objs) < 2 or len(objs) > (300 if sel in ("largest", "smallest") else 40):
        return False
    if sel in ("common_shape", "common_color"):
        vals = [obj_feature(g, o, "shape" if sel == "common_shape" else "color", bg) for o in objs]
        counts = sorted((vals.count(v) for v in set(vals)), reverse=True)
        return len(counts) > 1 and counts[0] == counts[1]
    if sel not in _SEL_FEATURE:
        return False
    feat, sign = _SEL_FEATURE[sel]
    vals = [sign * obj_feature(g, o, feat, bg) for o in objs]
    return vals.count(max(vals)) > 1


def crop_object(g: Grid, sel: str, conn: int, by_color: int, bg: int, keep: int) -> Grid:
    """Crop the bounding box of the object chosen by ``sel``.

    ``keep``: 1 keeps every cell inside the box, 0 keeps only the object's own cells.
    """
    objs = components(g, conn, by_color, bg)
    ys, xs = _select(g, objs, sel, bg)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    if keep:
        return g[y0:y1, x0:x1].copy()
    o = np.full((y1 - y0, x1 - x0), bg, dtype=g.dtype)
    o[ys - y0, xs - x0] = g[ys, xs]
    return o


def crop_nonbg(g: Grid, bg: int) -> Grid:
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    return g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


def crop_color(g: Grid, c: int) -> Grid:
    ys, xs = np.nonzero(g == c)
    if ys.size == 0:
        raise ValueError("colour absent")
    return g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


def crop_inside(g: Grid, c: int) -> Grid:
    """The inside of the bounding box of colour ``c`` (its one-cell frame removed)."""
    ys, xs = np.nonzero(g == c)
    if ys.size == 0 or ys.max() - ys.min() < 2 or xs.max() - xs.min() < 2:
        raise ValueError("no frame")
    return g[ys.min() + 1 : ys.max(), xs.min() + 1 : xs.max()].copy()


def drop_bg_lines(g: Grid, bg: int) -> Grid:
    """Delete the rows and columns that are entirely background."""
    rows = (g != bg).any(axis=1)
    cols = (g != bg).any(axis=0)
    if not rows.any():
        raise ValueError("empty grid")
    return np.asarray(g[rows][:, cols])


def dedup_lines(g: Grid) -> Grid:
    """Collapse runs of identical consecutive rows and columns."""
    keep_r = np.ones(g.shape[0], dtype=bool)
    keep_r[1:] = (g[1:] != g[:-1]).any(axis=1)
    g = g[keep_r]
    keep_c = np.ones(g.shape[1], dtype=bool)
    keep_c[1:] = (g[:, 1:] != g[:, :-1]).any(axis=0)
    return g[:, keep_c]


def map_objects(g: Grid, fn: Any, conn: int, by_color: int, bg: int) -> Grid:
    """Apply ``fn`` to each object (cropped, other cells background) and paint it back."""
    o = g.copy()
    h, w = g.shape
    objs = components(g, conn, by_color, bg)
    if len(objs) > 100:
        raise ValueError("too many objects")
    for ys, xs in objs:
        y0, x0 = int(ys.min()), int(xs.min())
        sub = np.full((int(ys.max()) - y0 + 1, int(xs.max()) - x0 + 1), bg, dtype=g.dtype)
        sub[ys - y0, xs - x0] = g[ys, xs]
        key = (fn, sub.shape, sub.tobytes(), bg)
        r = _CACHE_MAP.get(key)
        if r is None:
            # the same object recurs in many states of a search: transform it once
            r = np.asarray(fn(sub))
            if len(_CACHE_MAP) > 50000:
                _CACHE_MAP.clear()
            _CACHE_MAP[key] = r
        if r.ndim != 2 or y0 + r.shape[0] > h or x0 + r.shape[1] > w:
            continue
        o[ys, xs] = bg
        region = o[y0 : y0 + r.shape[0], x0 : x0 + r.shape[1]]
        region[r != bg] = r[r != bg]
    return o


def recolor_by(
    g: Grid, feature: str, table: list[list[int]], default: int, conn: int, by_color: int, bg: int
) -> Grid:
    """Recolour each object by a lookup table on one of its features.

    ``default`` -1 keeps the object's colours when its feature value is not in the table.
    """
    lut = {int(k): int(v) for k, v in table}
    o = g.copy()
    for obj in components(g, conn, by_color, bg):
        v = obj_feature(g, obj, feature, bg)
        c = lut.get(v, default)
        if c >= 0:
            o[obj] = c
    return o


def recolor_rank(
    g: Grid, feature: str, colors: list[int], conn: int, by_color: int, bg: int
) -> Grid:
    """Recolour objects by the rank of a feature (largest first); ``colors[i]`` for rank i,
    the last entry for the remaining ones."""
    objs = components(g, conn, by_color, bg)
    vals = sorted({obj_feature(g, ob, feature, bg) for ob in objs}, reverse=True)
    o = g.copy()
    for ob in objs:
        r = vals.index(obj_feature(g, ob, feature, bg))
        o[ob] = colors[min(r, len(colors) - 1)]
    return o


def filter_objects(
    g: Grid, feature: str, values: list[int], keep: int, conn: int, by_color: int, bg: int
) -> Grid:
    """Keep (``keep`` 1) or remove (0) the objects whose feature is in ``values``."""
    vs = {int(v) for v in values}
    o = np.full_like(g, bg)
    for obj in components(g, conn, by_color, bg):
        if (obj_feature(g, obj, feature, bg) in vs) == bool(keep):
            o[obj] = g[obj]
    return o


def keep_extreme(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """Keep only the object chosen by ``sel`` (in place), erase the rest."""
    objs = components(g, conn, by_color, bg)
    ob = _select(g, objs, sel, bg)
    o = np.full_like(g, bg)
    o[ob] = g[ob]
    return o


def remove_extreme(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """Erase the object chosen by ``sel``."""
    objs = components(g, conn, by_color, bg)
    ob = _select(g, objs, sel, bg)
    o = g.copy()
    o[ob] = bg
    return o


# ---------------------------------------------------------------- scaling and tiling


def upscale(g: Grid, ky: int, kx: int) -> Grid:
    if not (1 <= ky <= 30 and 1 <= kx <= 30):
        raise ValueError("bad factor")
    return np.repeat(np.repeat(g, ky, axis=0), kx, axis=1)


def downscale(g: Grid, ky: int, kx: int) -> Grid:
    """Shrink by integer factors; each block becomes its most common colour."""
    h, w = g.shape
    if ky < 1 or kx < 1 or h % ky or w % kx:
        raise ValueError("factor does not divide the grid")
    b = g.reshape(h // ky, ky, w // kx, kx).transpose(0, 2, 1, 3).reshape(h // ky, w // kx, -1)
    counts = (b[..., None] == np.arange(10)).sum(axis=2)
    return np.asarray(counts.argmax(axis=2))


def tile(g: Grid, ny: int, nx: int) -> Grid:
    if not (1 <= ny <= 30 and 1 <= nx <= 30):
        raise ValueError("bad tile count")
    return np.tile(g, (ny, nx))


def tile_t(g: Grid, ny: int, nx: int, ts: list[int]) -> Grid:
    """Tile ``ny`` x ``nx`` copies, copy ``i`` (reading order) transformed by ``rigid(ts[i])``."""
    parts = [rigid(g, int(t)) for t in ts]
    if len(parts) != ny * nx or len({p.shape for p in parts}) != 1:
        raise ValueError("tile transforms do not fit")
    rows = [np.concatenate(parts[r * nx : (r + 1) * nx], axis=1) for r in range(ny)]
    return np.concatenate(rows, axis=0)


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


def hcat(a: Grid, b: Grid) -> Grid:
    return np.concatenate([a, b], axis=1)


def vcat(a: Grid, b: Grid) -> Grid:
    return np.concatenate([a, b], axis=0)


def layer(base: Grid, top: Grid, bg: int) -> Grid:
    """``top`` painted over ``base``: every cell of ``top`` that is not ``bg`` wins."""
    if base.shape != top.shape:
        raise ValueError("layers differ in shape")
    return np.where(top != bg, top, base)


# ---------------------------------------------------------------- splitting


def split_parts(g: Grid, mode: str, bg: int) -> list[Grid]:
    """Split a grid into parts.

    ``h2``/``h3`` cut into equal left-to-right parts, ``v2``/``v3`` top-to-bottom (a
    one-cell separator between equal parts is dropped); ``sep`` cuts along full rows and
    columns of one separator colour (preferring a non-background one).
    """
    h, w = g.shape
    if mode in ("h2", "h3", "v2", "v3"):
        n = int(mode[1])
        size = w if mode[0] == "h" else h
        if size % n == 0:
            step, gap = size // n, 0
        elif (size - (n - 1)) % n == 0:
            step, gap = (size - (n - 1)) // n, 1
        else:
            raise ValueError("cannot split evenly")
        parts = []
        for i in range(n):
            s = i * (step + gap)
            parts.append(g[:, s : s + step] if mode[0] == "h" else g[s : s + step, :])
        return parts
    rsegs, csegs = _sep_segments(g, bg)
    out = []
    for y0, y1 in rsegs:
        for x0, x1 in csegs:
            out.append(g[y0:y1, x0:x1])
    if len(out) < 2:
        raise ValueError("separator does not split")
    return out


def _sep_segments(g: Grid, bg: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Row and column spans between full separator lines of one colour."""
    h, w = g.shape
    row_full = (g == g[:, :1]).all(axis=1)
    col_full = (g == g[:1, :]).all(axis=0)
    cands = []
    for c in sorted({int(v) for v in g[row_full, 0]} | {int(v) for v in g[0, col_full]}):
        on_line = (row_full & (g[:, 0] == c))[:, None] | (col_full & (g[0, :] == c))[None, :]
        if not ((g == c) & ~on_line).any():
            cands.append(c)
    cands.sort(key=lambda c: (c == bg, c))
    if not cands:
        raise ValueError("no separator")
    sep = cands[0]
    rows = [y for y in range(h) if (g[y] == sep).all()]
    cols = [x for x in range(w) if (g[:, x] == sep).all()]
    return line_segments(rows, h), line_segments(cols, w)


def line_segments(lines: list[int], n: int) -> list[tuple[int, int]]:
    """The ``(start, stop)`` runs of ``range(n)`` between the separator ``lines``."""
    segs, s = [], 0
    for line in [*lines, n]:
        if line > s:
            segs.append((s, line))
        s = line + 1
    return segs


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


# ---------------------------------------------------------------- painting


def gravity(g: Grid, d: str, bg: int) -> Grid:
    """Let every non-background cell fall toward side ``d`` (down/up/left/right)."""
    fwd, back = {"down": (0, 0), "up": (5, 5), "left": (3, 1), "right": (1, 3)}[d]
    # turn the grid so that side d is at the bottom, compact columns, turn back
    a = rigid(g, fwd)
    o = np.full_like(a, bg)
    for x in range(a.shape[1]):
        col = a[:, x]
        fg = col[col != bg]
        if fg.size:
            o[a.shape[0] - fg.size :, x] = fg
    return rigid(o, back)


def fill_enclosed(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` on the background cells that are cut off from the border."""
    enc = _enclosed(g == bg)
    return np.where(enc, c, g)


def fill_bbox(g: Grid, c: int, conn: int, by_color: int, bg: int) -> Grid:
    """Paint ``c`` on the background cells inside each object's bounding box."""
    o = g.copy()
    for ys, xs in components(g, conn, by_color, bg):
        box = o[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        box[box == bg] = c
    return o


def halo(g: Grid, c: int, diag: int, bg: int) -> Grid:
    """Paint ``c`` on background cells next to non-background ones: the 4 side
    neighbours (``diag`` 0), all 8 (1) or only the 4 diagonal ones (2)."""
    fg = g != bg
    p = np.pad(fg, 1)
    h, w = g.shape
    near = np.zeros_like(fg)
    for dy, dx in _DIRS[("hv", "all", "diag")[diag]]:
        near |= p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    return np.where(near & ~fg, c, g)


def interior(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` on non-background cells whose 8 neighbours are all non-background."""
    fg = g != bg
    p = np.pad(fg, 1)
    h, w = g.shape
    inside = fg.copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            inside &= p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    return np.where(inside, c, g)


def border(g: Grid, c: int) -> Grid:
    """Paint the outermost ring of the grid with ``c``."""
    o = g.copy()
    o[0, :] = c
    o[-1, :] = c
    o[:, 0] = c
    o[:, -1] = c
    return o


_DIRS = {
    "h": [(0, 1), (0, -1)],
    "v": [(1, 0), (-1, 0)],
    "hv": [(0, 1), (0, -1), (1, 0), (-1, 0)],
    "diag": [(1, 1), (1, -1), (-1, 1), (-1, -1)],
    "all": [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)],
    "up": [(-1, 0)],
    "down": [(1, 0)],
    "left": [(0, -1)],
    "right": [(0, 1)],
    "ul": [(-1, -1)],
    "ur": [(-1, 1)],
    "dl": [(1, -1)],
    "dr": [(1, 1)],
}


def rays(g: Grid, c: int, dirs: str, stop: int, bg: int) -> Grid:
    """From every cell of colour ``c`` draw rays of ``c`` over the background.

    ``stop`` 1 ends a ray at the first non-background cell, 0 passes over (without
    painting) non-background cells.
    """
    h, w = g.shape
    free = g == bg
    src = g == c
    if src.sum() > 40:
        raise ValueError("too many sources")
    paint = np.zeros((h, w), dtype=bool)
    for dy, dx in _DIRS[dirs]:
        if dx == 0 or dy == 0:  # along rows or columns: one scan, no stepping
            down = _rays_down(_as_down(src, dy, dx, False), _as_down(free, dy, dx, False), stop)
            paint |= _as_down(down, dy, dx, True)
            continue
        front = src
        for _ in range(max(h, w)):
            nxt = np.zeros((h, w), dtype=bool)
            ys, yd = (
                (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
            )
            xs, xd = (
                (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
            )
            nxt[yd, xd] = front[ys, xs]
            front = nxt & free if stop else nxt
            if not front.any():
                break
            paint |= front & free
    return np.where(paint, c, g)


def _rays_down(src: Grid, free: Grid, stop: int) -> Grid:
    """Background cells a downward ray from a ``src`` cell reaches: with ``stop``, when
    the nearest non-background cell above is a source; without, when any source is."""
    h, w = src.shape
    out = np.zeros((h, w), dtype=bool)
    if h < 2:
        return out
    if stop:
        rows = np.arange(h)[:, None]
        last = np.maximum.accumulate(np.where(free, -1, rows), axis=0)[:-1]
        hit = src[np.maximum(last, 0), np.arange(w)[None, :]] & (last >= 0)
        out[1:] = hit & free[1:]
    else:
        out[1:] = np.logical_or.accumulate(src, axis=0)[:-1] & free[1:]
    return out


def _as_down(m: Grid, dy: int, dx: int, back: bool) -> Grid:
    """``m`` turned so that direction (dy, dx) runs down (``back``: turned back)."""
    if dy == 1:
        return m
    if dy == -1:
        return m[::-1]
    if dx == 1:
        return m.T
    return m[::-1].T if back else m.T[::-1]


def connect(g: Grid, c: int, line: int, bg: int) -> Grid:
    """Join pairs of ``c`` cells in the same row or column with a line of colour ``line``
    (over background cells only). ``c`` -1: every colour; ``line`` -1: the pair's colour."""
    o = g.copy()
    colours = [c] if c >= 0 else [int(v) for v in np.unique(g) if v != bg]
    for col in colours:
        m = g == col
        paint = col if line < 0 else line
        for y in range(g.shape[0]):
            xs = np.nonzero(m[y])[0]
            if xs.size >= 2:
                seg = o[y, xs.min() : xs.max() + 1]
                seg[g[y, xs.min() : xs.max() + 1] == bg] = paint
        for x in range(g.shape[1]):
            ys = np.nonzero(m[:, x])[0]
            if ys.size >= 2:
                seg = o[ys.min() : ys.max() + 1, x]
                seg[g[ys.min() : ys.max() + 1, x] == bg] = paint
    return o


def symmetrize(g: Grid, kind: str, bg: int) -> Grid:
    """Fill background cells from their mirror images (``h``, ``v``, ``hv``, ``rot``, ``diag``)."""
    o = g.copy()
    ks = {"h": [4], "v": [5], "hv": [4, 5, 2], "rot": [1, 2, 3], "diag": [6, 7]}[kind]
    for _ in range(2):
        for k in ks:
            m = rigid(o, k)
            if m.shape != o.shape:
                raise ValueError("not square")
            o = np.where(o == bg, m, o)
    return o


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


def crop_noise_repair(g: Grid, noise: int) -> Grid:
    """Repair ``noise`` cells by symmetry, then crop what was under the noise."""
    ys, xs = np.nonzero(g == noise)
    if ys.size == 0:
        raise ValueError("no noise")
    r = sym_repair(g, noise)
    return r[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


# ---------------------------------------------------------------- counting


def count_row(g: Grid, what: str, c: int, conn: int, bg: int) -> Grid:
    """A 1xN row of colour ``c``, N = the number of objects or of cells of colour ``c``."""
    n = len(components(g, conn, 0, bg)) if what == "objects" else int((g == c).sum())
    if not 1 <= n <= 30:
        raise ValueError("count out of range")
    return np.full((1, n), c, dtype=g.dtype)


def most_common_color_cell(g: Grid, bg: int) -> Grid:
    """A 1x1 grid of the most common non-background colour."""
    fg = g[g != bg]
    if fg.size == 0:
        raise ValueError("empty grid")
    return np.array([[int(np.bincount(fg, minlength=10).argmax())]])


# ---------------------------------------------------------------- local rules


def cell_keys(g: Grid, fs: str, bg: int) -> Grid:
    """An integer key per cell describing its neighbourhood (``fs``, see below).

    ``n4``/``n8``: the colours of the cell and its 4 / 8 neighbours (10 = off-grid);
    ``n4count``/``n8count``: the cell's colour and how many neighbours are not background;
    ``nsets``: the cell's colour and the sets of non-background colours among its 4
    orthogonal and among its 4 diagonal neighbours; ``rays4``: the cell's colour and the
    first non-background colour seen looking up, down, left and right (10 = none);
    ``rays4any``: the cell's colour and which of those four directions see any
    non-background cell.
    """
    h, w = g.shape
    p = np.pad(g, 1, constant_values=10)
    off4 = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    off8 = [*off4, (-1, -1), (-1, 1), (1, -1), (1, 1)]
    parts: list[Grid] = [g]
    if fs in ("n4", "n8"):
        for dy, dx in off4 if fs == "n4" else off8:
            parts.append(p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w])
    elif fs in ("n4count", "n8count"):
        cnt = np.zeros((h, w), dtype=np.int64)
        for dy, dx in off4 if fs == "n4count" else off8:
            q = p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
            cnt += (q != bg) & (q != 10)
        parts.append(cnt)
    elif fs == "nsets":
        orth = np.zeros((h, w), dtype=np.int64)
        diag = np.zeros((h, w), dtype=np.int64)
        for i, (dy, dx) in enumerate(off8):
            q = p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
            bit = np.where((q != bg) & (q != 10), 1 << np.minimum(q, 9), 0)
            if i < 4:
                orth |= bit
            else:
                diag |= bit
        return (g << 20) | (orth << 10) | diag
    elif fs in ("rays4", "rays4any"):
        for k in (3, 1, 0, 2):  # look up, down, left, right via rotations
            a = np.rot90(g, k)
            hh, ww = a.shape
            idx = np.where(a != bg, np.arange(ww)[None, :], -1)
            last = np.maximum.accumulate(idx, axis=1)
            prev = np.full((hh, ww), -1)
            prev[:, 1:] = last[:, :-1]
            seen = np.where(prev >= 0, a[np.arange(hh)[:, None], np.maximum(prev, 0)], 10)
            if fs == "rays4any":
                seen = (seen != 10).astype(np.int64)
            parts.append(np.rot90(seen, -k))
    else:
        raise ValueError(f"unknown neighbourhood {fs!r}")
    key = np.zeros((h, w), dtype=np.int64)
    for part in parts:
        key = key * 11 + part
    return key


def local_rule(g: Grid, fs: str, table: list[list[int]], bg: int) -> Grid:
    """Recolour each cell whose neighbourhood key (``cell_keys``) is in ``table``."""
    keys = cell_keys(g, fs, bg)
    o = g.copy()
    lut = {int(k): int(v) for k, v in table}
    for k in np.unique(keys).tolist():
        v = lut.get(k)
        if v is not None:
            o[keys == k] = v
    return o


# ---------------------------------------------------------------- periodic patterns


def find_period(g: Grid, noise: int) -> tuple[int, int]:
    """The smallest row and column periods consistent with every non-``noise`` cell
    (``noise`` -1: every cell is known); a period equal to the size means none."""
    h, w = g.shape
    known = g != noise
    py = h
    for p in range(1, h):
        both = known[p:, :] & known[:-p, :]
        if both.any() and (g[p:, :][both] == g[:-p, :][both]).all():
            py = p
            break
    px = w
    for p in range(1, w):
        both = known[:, p:] & known[:, :-p]
        if both.any() and (g[:, p:][both] == g[:, :-p][both]).all():
            px = p
            break
    if (py, px) == (h, w):
        raise ValueError("no period")
    return py, px


def period_repair(g: Grid, noise: int) -> Grid:
    """Replace ``noise`` cells by continuing the grid's smallest periodic tiling."""
    py, px = find_period(g, noise)
    o = g.copy()
    known = g != noise
    for oy in range(py):
        for ox in range(px):
            vals = g[oy::py, ox::px][known[oy::py, ox::px]]
            if vals.size == 0:
                raise ValueError("period cell never seen")
            o[oy::py, ox::px] = int(np.bincount(vals, minlength=10).argmax())
    return o


def crop_period(g: Grid) -> Grid:
    """The smallest tile that repeats to make the grid."""
    py, px = find_period(g, -1)
    return g[:py, :px].copy()


# ---------------------------------------------------------------- grid cells


def cells_to_pixels(g: Grid, bg: int) -> Grid:
    """For a grid cut by separator lines into R x C cells, an R x C grid holding each
    cell's most common non-background colour (background if it has none)."""
    rsegs, csegs = _sep_segments(g, bg)
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


def upscale_by(g: Grid, what: str, bg: int) -> Grid:
    """Scale up by a factor read off the grid: its number of colours or of cells."""
    fg = g[g != bg]
    k = int(np.unique(fg).size) if what == "ncolors" else int(fg.size)
    if not k >= 1 or g.shape[0] * k > 30 or g.shape[1] * k > 30:
        raise ValueError("factor out of range")
    return np.repeat(np.repeat(g, k, axis=0), k, axis=1)


def object_gravity(g: Grid, d: str, conn: int, bg: int) -> Grid:
    """Move every object (as a rigid body) toward side ``d`` until it hits the edge or
    another cell; objects nearest the side move first."""
    fwd, back = {"down": (0, 0), "up": (5, 5), "left": (3, 1), "right": (1, 3)}[d]
    a = rigid(g, fwd).copy()
    h = a.shape[0]
    objs = components(a, conn, 0, bg)
    if len(objs) > 60:
        raise ValueError("too many objects")
    objs = sorted(objs, key=lambda o: -int(o[0].max()))
    rows = np.arange(h)[:, None]
    for ys, xs in objs:
        vals = a[ys, xs].copy()
        a[ys, xs] = bg
        # the fall is the shortest free run below any of the object's cells: row index
        # of the first non-background cell at or below each row (h when none)
        first = np.minimum.accumulate(np.where(a != bg, rows, h)[::-1], axis=0)[::-1]
        below = np.vstack([first[1:], np.full((1, a.shape[1]), h)])
        step = int((below[ys, xs] - ys - 1).min())
        a[ys + step, xs] = vals
    return rigid(a, back)


def move_to_contact(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> Grid:
    """Slide the object chosen by ``sel`` in a straight line (the direction where it
    gets there soonest) until it touches the other non-background cells."""
    h, w = g.shape
    objs = components(g, conn, by_color, bg)
    ys, xs = _select(g, objs, sel, bg)
    vals = g[ys, xs]
    rest = g.copy()
    rest[ys, xs] = bg
    others = rest != bg
    if not others.any():
        raise ValueError("nothing to move to")
    best = None
    for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        for k in range(1, max(h, w) + 1):
            ny, nx = ys + dy * k, xs + dx * k
            if ny.min() < 0 or nx.min() < 0 or ny.max() >= h or nx.max() >= w:
                break
            if others[ny, nx].any():
                if k > 1 and (best is None or k - 1 < best[0]):
                    best = (k - 1, dy, dx)
                break
    if best is None:
        raise ValueError("no contact direction")
    k, dy, dx = best
    rest[ys + dy * k, xs + dx * k] = vals
    return rest


# ---------------------------------------------------------------- colour roles


def role_color(g: Grid, r: int) -> int:
    """Resolve a colour role: 10 the most common colour other than the grid's most common
    one, 11 the second most common such colour, 12 the least common, 13 the most common
    colour of all. Values 0-9 are plain colours."""
    if r < 10:
        return r
    counts = np.bincount(g.ravel(), minlength=10)
    order = sorted(range(10), key=lambda c: (-counts[c], c))
    order = [c for c in order if counts[c] > 0]
    if r == 13:
        return order[0]
    fg = order[1:]
    if not fg:
        raise ValueError("no colour for this role")
    if r == 10:
        return fg[0]
    if r == 11:
        if len(fg) < 2:
            raise ValueError("no second colour")
        return fg[1]
    return fg[-1]


def trim(g: Grid) -> Grid:
    """Remove the outermost ring of cells."""
    if g.shape[0] < 3 or g.shape[1] < 3:
        raise ValueError("too small to trim")
    return g[1:-1, 1:-1].copy()


def const_grid(g: Grid, h: int, w: int, c: int) -> Grid:
    """An ``h`` x ``w`` grid of colour ``c`` (use a colour role to read it off the input)."""
    return np.full((h, w), c, dtype=g.dtype)


def connect_diag(g: Grid, c: int, line: int, bg: int) -> Grid:
    """Join pairs of ``c`` cells on the same diagonal with ``line`` (over background).
    ``c`` -1: every colour; ``line`` -1: the pair's colour."""
    o = g.copy()
    colours = [c] if c >= 0 else [int(v) for v in np.unique(g) if v != bg]
    for col in colours:
        ys, xs = np.nonzero(g == col)
        if ys.size > 60:
            raise ValueError("too many cells")
        paint = col if line < 0 else line
        pts = list(zip(ys.tolist(), xs.tolist(), strict=True))
        for i, (y0, x0) in enumerate(pts):
            for y1, x1 in pts[i + 1 :]:
                if abs(y1 - y0) == abs(x1 - x0) and y1 != y0:
                    sy = 1 if y1 > y0 else -1
                    sx = 1 if x1 > x0 else -1
                    for k in range(1, abs(y1 - y0)):
                        y, x = y0 + sy * k, x0 + sx * k
                        if g[y, x] == bg:
                            o[y, x] = paint
    return o


def crop_at(g: Grid, y: int, x: int, h: int, w: int) -> Grid:
    """The ``h`` x ``w`` window at row ``y``, column ``x`` (negative: from the bottom/right,
    -1 meaning the window ends at the last row/column)."""
    gh, gw = g.shape
    y0 = y if y >= 0 else gh + y + 1 - h
    x0 = x if x >= 0 else gw + x + 1 - w
    if y0 < 0 or x0 < 0 or y0 + h > gh or x0 + w > gw:
        raise ValueError("window outside the grid")
    return g[y0 : y0 + h, x0 : x0 + w].copy()


def grid_feature(g: Grid, feature: str, bg: int) -> int:
    """A whole-grid feature: ``mask`` (the non-background pattern), ``ncolors``,
    ``nobjects4``/``nobjects8`` (multicolour components), ``ncells``, ``symmetric``
    (bits: left-right, up-down, transpose), ``top_color`` (most common non-background)."""
    fg = g != bg
    if feature == "mask":
        return zlib.crc32(bytes(g.shape) + fg.tobytes()) % 1000003
    if feature == "ncolors":
        return int(np.unique(g[fg]).size)
    if feature == "nobjects4":
        return len(components(g, 4, 0, bg))
    if feature == "nobjects8":
        return len(components(g, 8, 0, bg))
    if feature == "ncells":
        return int(fg.sum())
    if feature == "symmetric":
        bits = int((g == g[:, ::-1]).all()) | int((g == g[::-1, :]).all()) << 1
        if g.shape[0] == g.shape[1]:
            bits |= int((g == g.T).all()) << 2
        return bits
    if feature == "top_color":
        if not fg.any():
            return -1
        return int(np.bincount(g[fg], minlength=10).argmax())
    raise ValueError(f"unknown grid feature {feature!r}")


def classify(g: Grid, feature: str, table: list[list[int]], h: int, w: int, bg: int) -> Grid:
    """An ``h`` x ``w`` grid of the colour ``table`` gives for the input's ``feature``."""
    lut = {int(k): int(v) for k, v in table}
    v = grid_feature(g, feature, bg)
    if v not in lut:
        raise ValueError("feature value not in the table")
    return np.full((h, w), lut[v], dtype=g.dtype)


def extend_period(g: Grid, h: int, w: int) -> Grid:
    """Continue the grid's smallest periodic tiling to an ``h`` x ``w`` grid."""
    py, px = find_period(g, -1)
    tile_ = g[:py, :px]
    reps = (-(-h // py), -(-w // px))
    return np.tile(tile_, reps)[:h, :w].copy()


def symmetrize_bbox(g: Grid, kind: str, bg: int) -> Grid:
    """``symmetrize`` applied inside the bounding box of the non-background cells."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    o = g.copy()
    o[y0:y1, x0:x1] = symmetrize(g[y0:y1, x0:x1], kind, bg)
    return o


def _lattice_classes(h: int, w: int, v1: tuple[int, int], v2: tuple[int, int]) -> Grid | None:
    """For the lattice generated by translations ``v1`` and ``v2`` (``(dy, dx)``), an
    ``h`` x ``w`` array of class ids: two cells share an id iff they differ by a lattice
    vector. None if the vectors are parallel."""
    (a1, b1), (a2, b2) = v1, v2
    det = a1 * b2 - a2 * b1
    if det == 0:
        return None
    # extended Euclid: u * a1 + t * a2 = gcd(a1, a2)
    r0, r1, u0, u1, t0, t1 = a1, a2, 1, 0, 0, 1
    while r1:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        u0, u1 = u1, u0 - q * u1
        t0, t1 = t1, t0 - q * t1
    if r0 < 0:
        r0, u0, t0 = -r0, -u0, -t0
    py = r0
    if py == 0:
        return None
    s = u0 * b1 + t0 * b2
    px = abs(det) // py
    yy, xx = np.mgrid[0:h, 0:w]
    k = yy // py
    return np.asarray((yy - k * py) * px + (xx - k * s) % px)


def lattice_fill(g: Grid, noise: int, crop: int) -> Grid:
    """Replace ``noise`` cells by continuing the grid's translational symmetry: the
    shortest translation (any direction, skewed ones too) that maps every known cell it
    overlaps (at least a quarter of the grid) onto the same colour, plus a second,
    independent one, such that the lattice they generate is consistent on the known
    cells. ``crop`` 1 returns only the filled bounding box of the noise cells."""
    h, w = g.shape
    known = g != noise
    if known.all() or not known.any():
        raise ValueError("nothing to fill")
    cands = sorted(
        (abs(dy) + abs(dx), dy, dx)
        for dy in range(h)
        for dx in range(-w + 1, w)
        if (dy, dx) > (0, 0)
    )
    good: list[tuple[int, int]] = []
    for _, dy, dx in cands:
        x0, x1 = max(0, -dx), min(w, w - dx)
        a = g[0 : h - dy, x0:x1]
        b = g[dy:h, x0 + dx : x1 + dx]
        both = known[0 : h - dy, x0:x1] & known[dy:h, x0 + dx : x1 + dx]
        n = int(both.sum())
        if n < 4 or n * 4 < h * w:
            continue
        if (a[both] == b[both]).all():
            good.append((dy, dx))
            if len(good) >= 12:
                break
    if not good:
        raise ValueError("no period")
    v1 = good[0]
    seconds = [v for v in good[1:] if v1[0] * v[1] - v1[1] * v[0] != 0] + [(h, 0), (0, w)]
    flat = g.ravel()
    kf = known.ravel()
    for v2 in seconds:
        cls = _lattice_classes(h, w, v1, v2)
        if cls is None:
            continue
        cf = cls.ravel()
        col = np.full(int(cf.max()) + 1, -1)
        ok = True
        for c in np.unique(flat[kf]).tolist():
            m = np.zeros(col.size, dtype=bool)
            m[cf[kf & (flat == c)]] = True
            if (col[m] >= 0).any():
                ok = False
                break
            col[m] = c
        if not ok:
            continue
        fill = col[cf].reshape(h, w)
        if (fill[~known] < 0).any():
            continue
        o = np.where(known, g, fill)
        if crop:
            ys, xs = np.nonzero(~known)
            return o[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()
        return np.asarray(o)
    raise ValueError("no consistent lattice")


def stamp(g: Grid, table: list[list[int]], bg: int) -> Grid:
    """Paint a fixed pattern around every cell of a colour: an entry ``[key, v]`` with
    ``key = c * 25 + (dy + 2) * 5 + (dx + 2)`` paints ``v`` at offset ``(dy, dx)``
    (``|dy|, |dx| <= 2``) from each cell of colour ``c``, on cells that were background
    (offset (0, 0) recolours the cell itself)."""
    h, w = g.shape
    o = g.copy()
    free = g == bg
    for key, v in table:
        c, r = divmod(int(key), 25)
        dy, dx = r // 5 - 2, r % 5 - 2
        src = g == c
        if not src.any():
            continue
        if dy == 0 and dx == 0:
            o[src] = v
            continue
        m = np.zeros((h, w), dtype=bool)
        m[max(0, dy) : h + min(0, dy), max(0, dx) : w + min(0, dx)] = src[
            max(0, -dy) : h + min(0, -dy), max(0, -dx) : w + min(0, -dx)
        ]
        o[m & free] = v
    return o


def rays_all(g: Grid, dirs: str, stop: int, bg: int) -> Grid:
    """``rays`` from every non-background cell, each in its own colour (cells nearer the
    top-left first, so later rays paint over earlier ones where they cross)."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg)
    if ys.size > 60:
        raise ValueError("too many sources")
    o = g.copy()
    free = g == bg
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        c = g[y, x]
        for dy, dx in _DIRS[dirs]:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w:
                if free[ny, nx]:
                    o[ny, nx] = c
                elif stop:
                    break
                ny, nx = ny + dy, nx + dx
    return o


def attract(g: Grid, c: int, diag: int, bg: int) -> Grid:
    """Slide each object of colour ``c`` (8-connected) in a straight line, in the
    direction (4 ways, 8 if ``diag``) where it touches another colour soonest, until it
    does; nearest objects move first and then block the others (they pile up); objects
    that never would touch stay put."""
    h, w = g.shape
    objs = components(np.where(g == c, c, bg), 8, 1, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    static = (g != bg) & (g != c)
    if not static.any():
        raise ValueError("nothing to move to")
    o = np.where(g == c, bg, g)
    dirs = _DIRS["all"] if diag else _DIRS["hv"]

    def best_move(ys: Grid, xs: Grid) -> tuple[int, int, int] | None:
        best = None
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
        for dy, dx in dirs:
            # steps before leaving the grid, and before reaching the nearest best
            room = min(
                h - 1 - y1 if dy > 0 else y0 if dy < 0 else h + w,
                w - 1 - x1 if dx > 0 else x0 if dx < 0 else h + w,
            )
            if best is not None:
                room = min(room, best[0])
            for k in range(room):
                if static[ys + dy * (k + 1), xs + dx * (k + 1)].any():
                    best = (k, dy, dx)
                    break
        return best

    first = [best_move(ys, xs) for ys, xs in objs]
    order = sorted(range(len(objs)), key=lambda i: (first[i] is None, (first[i] or (0,))[0], i))
    for i in order:
        ys, xs = objs[i]
        mv = best_move(ys, xs) if first[i] is not None else None
        if mv is not None:
            k, dy, dx = mv
            ys, xs = ys + dy * k, xs + dx * k
        o[ys, xs] = c
        static[ys, xs] = True
    return o


def align(g: Grid, c: int, side: str, bg: int) -> Grid:
    """Move every object (8-connected, one colour) not of colour ``c`` straight up/down
    (``side`` top/bottom) or left/right (left/right) so its ``side`` edge lines up with
    that of the cells of colour ``c``, which stay put."""
    ref = g == c
    if not ref.any():
        raise ValueError("no reference")
    ys, xs = np.nonzero(ref)
    rest = np.where(ref, bg, g)
    objs = components(rest, 8, 1, bg)
    if len(objs) > 40:
        raise ValueError("too many objects")
    o = np.where(ref, c, bg)
    h, w = g.shape
    for oy, ox in objs:
        if side == "top":
            dy, dx = int(ys.min() - oy.min()), 0
        elif side == "bottom":
            dy, dx = int(ys.max() - oy.max()), 0
        elif side == "left":
            dy, dx = 0, int(xs.min() - ox.min())
        else:
            dy, dx = 0, int(xs.max() - ox.max())
        ny, nx = oy + dy, ox + dx
        if ny.min() < 0 or nx.min() < 0 or ny.max() >= h or nx.max() >= w:
            raise ValueError("object leaves the grid")
        o[ny, nx] = g[oy, ox]
    return o


def project(g: Grid, c: int, bg: int) -> Grid:
    """From every non-background cell not of colour ``c``, draw a line in its own colour
    toward colour ``c`` in each of the 4 directions where the first non-background cell
    it meets has colour ``c``."""
    h, w = g.shape
    ys, xs = np.nonzero((g != bg) & (g != c))
    if ys.size > 80 or not (g == c).any():
        raise ValueError("no target or too many sources")
    o = g.copy()
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        for dy, dx in _DIRS["hv"]:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w and g[ny, nx] == bg:
                ny, nx = ny + dy, nx + dx
            if 0 <= ny < h and 0 <= nx < w and g[ny, nx] == c:
                py, px = y + dy, x + dx
                while (py, px) != (ny, nx):
                    o[py, px] = g[y, x]
                    py, px = py + dy, px + dx
    return o


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


def stripes(g: Grid, bg: int) -> Grid:
    """Two coloured cells start a repeating sequence of full lines: lines (across the
    shorter side) through each, then again every time the gap between them repeats,
    the colours alternating, to the far edge."""
    ys, xs = np.nonzero(g != bg)
    if ys.size != 2:
        raise ValueError("need two cells")
    h, w = g.shape
    vertical = w >= h
    pos = xs if vertical else ys
    order = np.argsort(pos, kind="stable")
    p0, p1 = int(pos[order[0]]), int(pos[order[1]])
    c0, c1 = int(g[ys[order[0]], xs[order[0]]]), int(g[ys[order[1]], xs[order[1]]])
    d = p1 - p0
    if d <= 0:
        raise ValueError("cells on one line")
    o = np.full_like(g, bg)
    for i, p in enumerate(range(p0, w if vertical else h, d)):
        col = c0 if i % 2 == 0 else c1
        if vertical:
            o[:, p] = col
        else:
            o[p, :] = col
    return o


def spiral(g: Grid, c: int) -> Grid:
    """A square spiral of colour ``c`` drawn over the grid from the top-left corner,
    clockwise, one background cell between its turns."""
    h, w = g.shape
    o = g.copy()
    path = np.zeros((h, w), dtype=bool)
    y, x, dy, dx = 0, 0, 0, 1
    path[0, 0] = True
    for _ in range(h * w):
        moved = False
        for _turn in range(2):
            ny, nx = y + dy, x + dx
            ay, ax = ny + dy, nx + dx  # the cell after next must not be on the path
            ok = 0 <= ny < h and 0 <= nx < w and not path[ny, nx]
            if ok and 0 <= ay < h and 0 <= ax < w and path[ay, ax]:
                ok = False
            if ok:
                y, x = ny, nx
                path[y, x] = True
                moved = True
                break
            dy, dx = dx, -dy  # turn clockwise
        if not moved:
            break
    o[path] = c
    return o


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


def fill_color_bbox(g: Grid, bg: int) -> Grid:
    """Fill the background inside the bounding box of each colour with that colour
    (colours with more cells first, so smaller boxes paint last)."""
    o = g.copy()
    cols = [int(v) for v in np.unique(g) if v != bg]
    cols.sort(key=lambda c: -int((g == c).sum()))
    for c in cols:
        ys, xs = np.nonzero(g == c)
        box = o[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        box[g[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] == bg] = c
    return o


def cells_map(g: Grid, feature: str, table: list[list[int]], bg: int) -> Grid:
    """For a grid cut by separator lines into R x C cells, an R x C grid: each cell's
    ``grid_feature`` looked up in ``table`` (background if absent)."""
    rsegs, csegs = _sep_segments(g, bg)
    nr, nc = len(rsegs), len(csegs)
    if nr * nc < 2:
        raise ValueError("no cells")
    lut = {int(k): int(v) for k, v in table}
    out = np.full((nr, nc), bg, dtype=g.dtype)
    for i, (y0, y1) in enumerate(rsegs):
        for j, (x0, x1) in enumerate(csegs):
            out[i, j] = lut.get(grid_feature(g[y0:y1, x0:x1], feature, bg), bg)
    return out


def fill_regions(g: Grid, sel: str, c: int, bg: int) -> Grid:
    """Paint ``c`` on the 4-connected regions of background cells that are the
    ``largest`` or ``smallest`` (every region tying for it)."""
    inv = np.where(g == bg, 1, 0)
    regs = components(inv, 4, 1, 0)
    if not regs or len(regs) > 100:
        raise ValueError("no regions or too many")
    sizes = [r[0].size for r in regs]
    want = max(sizes) if sel == "largest" else min(sizes)
    o = g.copy()
    for r, n in zip(regs, sizes, strict=True):
        if n == want:
            o[r] = c
    return o


def flood_from(g: Grid, c: int, bg: int) -> Grid:
    """Paint ``c`` over every 4-connected region of background cells that touches
    (4-neighbours) a cell of colour ``c``."""
    src = g == c
    if not src.any():
        raise ValueError("colour absent")
    regs = components(np.where(g == bg, 1, 0), 4, 1, 0)
    if len(regs) > 200:
        raise ValueError("too many regions")
    h, w = g.shape
    near = np.zeros((h, w), dtype=bool)
    near[1:, :] |= src[:-1, :]
    near[:-1, :] |= src[1:, :]
    near[:, 1:] |= src[:, :-1]
    near[:, :-1] |= src[:, 1:]
    o = g.copy()
    for r in regs:
        if near[r].any():
            o[r] = c
    return o


def canvas(g: Grid, ky: int, kx: int, bg: int) -> Grid:
    """The grid at the top-left of a background canvas ``ky`` x ``kx`` times its size."""
    h, w = g.shape
    if h * ky > 30 or w * kx > 30:
        raise ValueError("too large")
    o = np.full((h * ky, w * kx), bg, dtype=g.dtype)
    o[:h, :w] = g
    return o


def repeat_bbox(g: Grid, axis: str, bg: int) -> Grid:
    """Repeat the band of rows (``v``), of columns (``h``) or the box (``hv``) spanned by
    the non-background cells across the whole grid, keeping its phase."""
    ys, xs = np.nonzero(g != bg)
    if ys.size == 0:
        raise ValueError("empty grid")
    h, w = g.shape
    y0, y1 = (int(ys.min()), int(ys.max()) + 1) if axis != "h" else (0, h)
    x0, x1 = (int(xs.min()), int(xs.max()) + 1) if axis != "v" else (0, w)
    tile_ = g[y0:y1, x0:x1]
    th, tw = tile_.shape
    yy = (np.arange(h) - y0) % th
    xx = (np.arange(w) - x0) % tw
    return np.asarray(tile_[yy[:, None], xx[None, :]])


def fold(g: Grid, axis: str, bg: int) -> Grid:
    """Split into two halves (``h`` left/right, ``v`` top/bottom; a one-line separator
    between them is dropped) and lay the second, mirrored, over the first."""
    a, b = split_parts(g, "h2" if axis == "h" else "v2", bg)
    b = b[:, ::-1] if axis == "h" else b[::-1, :]
    return np.where(b != bg, b, a)


def line_majority(g: Grid, axis: str) -> Grid:
    """Every row (``rows``) or column (``cols``) painted with its most common colour;
    ``auto``: rows or columns, whichever of the two changes fewer cells."""
    outs = []
    for ax in ("rows", "cols") if axis == "auto" else (axis,):
        a = g if ax == "rows" else g.T
        o = np.empty_like(a)
        for i in range(a.shape[0]):
            o[i] = int(np.bincount(a[i], minlength=10).argmax())
        outs.append(o if ax == "rows" else o.T)
    return min(outs, key=lambda o: int((o != g).sum()))


def continue_period(g: Grid, d: str, bg: int) -> Grid:
    """Continue the pattern that starts at one side (``d`` is where it grows: right,
    down, left, up) periodically to the far side: the smallest period of the lines up
    to the last one holding non-background cells."""
    fwd, back = {"right": (0, 0), "left": (4, 4), "down": (6, 6), "up": (7, 7)}[d]
    a = rigid(g, fwd)
    cols = np.nonzero((a != bg).any(axis=0))[0]
    if cols.size == 0:
        raise ValueError("empty grid")
    n = int(cols.max()) + 1
    part = a[:, :n]
    for p in range(1, n):
        if (part[:, p:] == part[:, : n - p]).all():
            break
    else:
        raise ValueError("no period")
    idx = np.arange(a.shape[1]) % p
    return rigid(np.asarray(a[:, idx]), back)


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
