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
    components,
    grid_feature,
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
    v = grid_feature(g, feature, bg)
    o = np.full((h, w), bg, dtype=g.dtype)
    hit = False
    for k, c in table:
        fv, i = divmod(int(k), 1000)
        if fv == v:
            hit = True
            o.flat[i] = c
    if not hit:
        raise ValueError("feature value not in the table")
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


# ---------------------------------------------------------------- generators


def _role_specs(ctx: Ctx) -> list[int]:
    return [13, 10, 12] if len(ctx.state_colors) >= 2 else [13, 10]


def _target_bg(ctx: Ctx) -> int:
    """The commonest colour over all targets."""
    return int(np.bincount(np.concatenate([t.ravel() for t in ctx.targets])).argmax())


def g_kron_eq(ctx: Ctx) -> Iterator[Args]:
    """Targets of shape (h*h, w*w)."""
    if ctx.same_shape or not all(
        t.shape == (s.shape[0] ** 2, s.shape[1] ** 2)
        for s, t in zip(ctx.train, ctx.targets, strict=False)
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
        for s, t in zip(ctx.train, ctx.targets, strict=False):
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
    if any(int(t.flat[0]) not in s for s, t in zip(ctx.train, ctx.targets, strict=False)):
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
        for s, t in zip(ctx.train, ctx.targets, strict=False):
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
}
"""op name -> parameter generator (see :mod:`atlas_actors.arc.infer`)."""
