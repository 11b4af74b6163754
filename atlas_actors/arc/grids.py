"""Grid helpers the DSL's op families share: objects (connected components) and
their features, object selectors, colour roles, separator lines, splitting into parts,
the four and eight directions.

Like the ops, these are numpy-only functions with bounded loops:
:meth:`atlas_actors.arc.dsl.Program.to_python` copies the ones a program needs into its
standalone script."""

from __future__ import annotations

import contextlib
import importlib
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

Grid = np.ndarray[Any, Any]


_CACHE_CC: dict[Any, Any] = {}


_CACHE_FEAT: dict[Any, tuple[Any, int]] = {}
"""Object features and selections by the id of the object (list), with the object
(list) itself, so a stale id never matches."""

_CACHE_BOX: dict[int, tuple[Grid, tuple[int, int, int, int]]] = {}
"""The bounding box (top, bottom, left, right) of each object :func:`components` made,
by the id of its row array, with the array itself."""


def clear_caches() -> None:
    """Forget the memoised components, features and selections (a caller that changed
    a returned object list in place leaves later callers a changed list)."""
    _CACHE_CC.clear()
    _CACHE_FEAT.clear()
    _CACHE_BOX.clear()


def rigid_transform(g: Grid, k: int) -> Grid:
    """Rigid transform ``k``: 0 identity, 1-3 quarter turns clockwise, 4 ``flip_h``,
    5 ``flip_v``, 6 ``transpose``, 7 ``antitranspose``."""
    if k == 0:
        return g
    if k == 1:
        return g[::-1].T
    if k == 2:
        return g[::-1, ::-1]
    if k == 3:
        return g.T[::-1]
    if k == 4:
        return g[:, ::-1]
    if k == 5:
        return g[::-1, :]
    if k == 6:
        return g.T
    return g.T[::-1, ::-1]


def ray_hits(g: Grid, bg: int, k: int) -> tuple[Grid, Grid]:
    """Looking left from each cell of ``g`` turned by ``k`` quarter turns
    (``np.rot90``): the first non-background colour seen and how many steps away, -1
    and 0 where none, turned back. ``k`` 0 looks left, 1 up, 2 right, 3 down."""
    a = np.rot90(g, k)
    hh, ww = a.shape
    idx = np.where(a != bg, np.arange(ww)[None, :], -1)
    last = np.maximum.accumulate(idx, axis=1)
    prev = np.full((hh, ww), -1)
    prev[:, 1:] = last[:, :-1]
    seen = np.where(prev >= 0, a[np.arange(hh)[:, None], np.maximum(prev, 0)], -1)
    dist = np.where(prev >= 0, np.arange(ww)[None, :] - prev, 0)
    return np.rot90(seen, -k), np.rot90(dist, -k)


def components(g: Grid, conn: int, by_color: int, bg: int) -> list[tuple[Grid, Grid]]:
    """Connected components (4- or 8-connected) of non-background cells.

    With ``by_color`` a component has one colour; otherwise any non-background colours
    join. Returns ``(ys, xs)`` index arrays per object, in reading order of first cell.
    """
    key = (g.shape, g.tobytes(), conn, by_color, bg)
    hit = _CACHE_CC.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    out = _label(g, conn, by_color, bg)
    if len(_CACHE_CC) > 2000:
        _CACHE_CC.clear()
        _CACHE_FEAT.clear()
        _CACHE_BOX.clear()
    _CACHE_CC[key] = out
    return out


def object_labels(g: Grid, conn: int, by_color: int, bg: int) -> Grid:
    """Each cell's object number under :func:`components` (1, 2, ... in its order; 0 for
    background)."""
    lab = np.zeros(g.shape, dtype=np.int16)
    for i, (ys, xs) in enumerate(components(g, conn, by_color, bg)):
        lab[ys, xs] = i + 1
    return lab


def _label(g: Grid, conn: int, by_color: int, bg: int) -> list[tuple[Grid, Grid]]:
    """:func:`components` itself, uncached (the compiled kernel replaces it when built);
    records each object's bounding box in ``_CACHE_BOX``."""
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
        x0 = x1 = start % w
        while stack:
            p = stack.pop()
            cells.append(p)
            y, x = divmod(p, w)
            if x < x0:
                x0 = x
            elif x > x1:
                x1 = x
            for dy, dx in nb:
                ny, nx = y + dy, x + dx
                if 0 <= ny < h and 0 <= nx < w:
                    q = ny * w + nx
                    if not seen[q] and flat[q] != bg and (not by_color or flat[q] == c0):
                        seen[q] = True
                        stack.append(q)
        cells.sort()
        arr = np.array(cells)
        ys = arr // w
        out.append((ys, arr % w))
        _CACHE_BOX[id(ys)] = (ys, (cells[0] // w, cells[-1] // w, x0, x1))
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


def obj_box(o: tuple[Grid, Grid]) -> tuple[int, int, int, int]:
    """An object's bounding box: top, bottom, left and right (inclusive)."""
    ys, xs = o
    hit = _CACHE_BOX.get(id(ys))
    if hit is not None and hit[0] is ys:
        return hit[1]
    return int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())


def _obj_feature(g: Grid, o: tuple[Grid, Grid], name: str, bg: int) -> int:
    ys, xs = o
    if name == "size":
        return int(ys.size)
    y0, y1, x0, x1 = obj_box(o)
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
        return int(enclosed(~mask).sum())
    if name == "nholes":
        enc = enclosed(~mask)
        if not enc.any():
            return 0
        return len(components(enc.astype(np.int64), 4, 0, 0))
    if name == "shape":
        return zlib.crc32(bytes([hh, ww]) + mask.tobytes()) % 1000003
    if name == "symmetric":
        return int(bool((mask == mask[:, ::-1]).all() or (mask == mask[::-1, :]).all()))
    raise ValueError(f"unknown object feature {name!r}")


def enclosed(free: Grid) -> Grid:
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
"""Object selectors of :func:`select_object` (``crop_object``, ``keep_extreme``, ...)."""


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


def select_object(g: Grid, objs: list[tuple[Grid, Grid]], sel: str, bg: int) -> tuple[Grid, Grid]:
    """The object ``sel`` picks from ``objs`` (raises ValueError when none does)."""
    i = pick_index(g, objs, sel, bg)
    if i < 0:
        raise ValueError(f"selector {sel!r} picks no object")
    return objs[i]


def select_index(g: Grid, sel: str, conn: int, by_color: int, bg: int) -> int:
    """Which of ``g``'s objects (in :func:`components` order) ``sel`` picks; -1 for none."""
    return pick_index(g, components(g, conn, by_color, bg), sel, bg)


def pick_index(g: Grid, objs: list[tuple[Grid, Grid]], sel: str, bg: int) -> int:
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
    rsegs, csegs = sep_segments(g, bg)
    out = []
    for y0, y1 in rsegs:
        for x0, x1 in csegs:
            out.append(g[y0:y1, x0:x1])
    if len(out) < 2:
        raise ValueError("separator does not split")
    return out


def sep_segments(g: Grid, bg: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
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


DIRS = {
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
"""Ray directions by name: (dy, dx) steps."""

STEPS8 = ("up", "down", "left", "right", "ul", "ur", "dl", "dr")
"""The eight one-step directions of :data:`DIRS`."""

HEADINGS = STEPS8[:4]
"""The four side directions."""

GRAVITY = ("down", "up", "left", "right")
"""The sides things fall toward."""

HV4 = ((0, 1), (0, -1), (1, 0), (-1, 0))
"""The four side neighbours as (dy, dx)."""

HV4D = {"right": (0, 1), "left": (0, -1), "down": (1, 0), "up": (-1, 0)}
"""The four side neighbours by name."""

CORNERS = ("tl", "tr", "bl", "br")
"""The grid's corners: top-left, top-right, bottom-left, bottom-right."""


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


def dots_and_rest(g: Grid, bg: int) -> tuple[list[tuple[Grid, Grid]], Grid]:
    """The single cells (one-cell 4-connected objects of one colour) and a mask of the
    cells of every bigger object; raises unless there are some of both (at most 80
    single cells)."""
    objs = components(g, 4, 1, bg)
    dots = [ob for ob in objs if ob[0].size == 1]
    if not dots or len(dots) == len(objs) or len(dots) > 80:
        raise ValueError("no single cells or no bigger objects")
    rest = g != bg
    for ob in dots:
        rest[ob] = False
    return dots, rest


def clusters(m: Grid, reach: int) -> list[tuple[Grid, Grid]]:
    """Groups of the cells of mask ``m`` where cells at most ``reach`` apart (Chebyshev
    distance) join: 8-connected objects (``reach`` 1) that may skip ``reach`` - 1
    empty cells."""
    ys, xs = np.nonzero(m)
    n = int(ys.size)
    if reach >= max(m.shape):
        return [(ys, xs)] if n else []
    if n > 300:
        raise ValueError("too many cells")
    lab = list(range(n))

    def root(i: int) -> int:
        while lab[i] != i:
            lab[i] = lab[lab[i]]
            i = lab[i]
        return i

    near = np.maximum(np.abs(ys[:, None] - ys[None, :]), np.abs(xs[:, None] - xs[None, :]))
    for i, j in zip(*np.nonzero(np.triu(near <= reach, 1)), strict=True):
        lab[root(int(i))] = root(int(j))
    roots = np.array([root(i) for i in range(n)])
    return [(ys[roots == r], xs[roots == r]) for r in dict.fromkeys(roots.tolist())]


def d4_cells(cells: list[tuple[int, int, int]], k: int) -> list[tuple[int, int, int]]:
    """The cells (row, column, colour) turned by the ``k``-th of the 8 symmetries of the
    square (0 = unchanged, 1-3 = quarter turns, 4-7 = the same after a left-right
    mirror), shifted back to start at row and column 0."""
    out = []
    for y, x, c in cells:
        if k >= 4:
            x = -x
        for _ in range(k % 4):
            y, x = x, -y
        out.append((y, x, c))
    y0 = min(y for y, _, _ in out)
    x0 = min(x for _, x, _ in out)
    return [(y - y0, x - x0, c) for y, x, c in out]


def _line_colors(g: Grid, bg: int) -> dict[int, int]:
    """The rows of ``g`` that are lines (one non-background colour covers at least
    70% of the row), with that colour."""
    out: dict[int, int] = {}
    for i in range(g.shape[0]):
        vals, cnt = np.unique(g[i], return_counts=True)
        k = int(np.argmax(cnt))
        if int(vals[k]) != bg and 10 * int(cnt[k]) >= 7 * g.shape[1]:
            out[i] = int(vals[k])
    return out


def wall_lines(g: Grid, bg: int) -> tuple[dict[int, int], dict[int, int]]:
    """Line rows and line columns with their colours; crossings are ignored (columns
    are judged without the line rows, then rows without the line columns)."""
    h, w = g.shape
    r0 = _line_colors(g, bg)
    cols = _line_colors(np.delete(g, list(r0), axis=0).T, bg) if len(r0) < h else {}
    rows = _line_colors(np.delete(g, list(cols), axis=1), bg) if len(cols) < w else {}
    return rows, cols


# ---------------------------------------------------------------- compiled kernels
#
# ``atlas_actors.arc._kernels`` (built from ``_kernels.c`` by pip when a C compiler is
# there) computes what ``_label`` and ``enclosed`` compute, many times faster. The
# compiled versions below replace them under the same names; each keeps the pure
# function as ``__pure__``, which is what ``Program.to_python`` copies into a
# standalone script. ``COMPILED`` says whether they are in use.

KERNELS_VERSION = 1
"""The ``_kernels`` interface this module expects (a stale build is not used)."""

KERNELS: Any = None
"""The compiled extension module, None when it is not built (or is a stale build)."""
with contextlib.suppress(ImportError):  # not built: the pure versions serve
    # by name: a compiled module, and ``from atlas_actors.arc import`` would read as
    # importing the package (a circle for tests/test_layering.py)
    KERNELS = importlib.import_module("atlas_actors.arc._kernels")
if getattr(KERNELS, "VERSION", None) != KERNELS_VERSION:
    KERNELS = None

COMPILED = KERNELS is not None
"""Whether the compiled kernels are in use."""


def compiled(pure: Callable[..., Any], fast: Callable[..., Any]) -> Callable[..., Any]:
    """``fast`` carrying ``pure`` as ``__pure__`` when the kernels are built, else ``pure``."""
    if not COMPILED:
        return pure
    setattr(fast, "__pure__", pure)  # noqa: B010 (a function attribute mypy cannot declare)
    return fast


def _label_compiled(g: Grid, conn: int, by_color: int, bg: int) -> list[tuple[Grid, Grid]]:
    if g.dtype.kind not in "iub" or g.ndim != 2:
        return _label_pure(g, conn, by_color, bg)
    h, w = g.shape
    ybuf, xbuf, objs = KERNELS.label(
        np.ascontiguousarray(g, dtype=np.int64), h, w, conn, by_color, bg
    )
    ys_all = np.frombuffer(ybuf, dtype=np.int64)
    xs_all = np.frombuffer(xbuf, dtype=np.int64)
    out: list[tuple[Grid, Grid]] = []
    for a, b, top, bottom, left, right in objs:
        ys = ys_all[a:b]
        out.append((ys, xs_all[a:b]))
        _CACHE_BOX[id(ys)] = (ys, (top, bottom, left, right))
    return out


def _enclosed_compiled(free: Grid) -> Grid:
    if free.dtype != np.bool_ or free.ndim != 2:
        return _enclosed_pure(free)
    h, w = free.shape
    out = KERNELS.enclosed(np.ascontiguousarray(free).view(np.uint8), h, w)
    return np.frombuffer(out, dtype=np.bool_).reshape(h, w)


_label_pure = _label
_enclosed_pure = enclosed
_label = compiled(_label_pure, _label_compiled)
enclosed = compiled(_enclosed_pure, _enclosed_compiled)
