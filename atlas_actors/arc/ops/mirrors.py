"""Ops that reflect objects across mirrors: walls, markers, crossing lines, mirror lines."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from atlas_actors.arc.grids import Grid, components, role_color
from atlas_actors.arc.infer import Args, Ctx, moved_colors, painted_fits
from atlas_actors.arc.registry import BG, Case, K, OnSelf, W, op


def _fits_recolored(ctx: Ctx, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` is the target for every train pair up to one colour map
    (the same for all pairs; the solver's colour-map finisher adds it)."""
    cmap: dict[int, int] = {}
    try:
        for s, t in ctx.pairs:
            out = fn(s, *args)
            if out.shape != t.shape:
                return False
            for a, b in set(zip(out.ravel().tolist(), t.ravel().tolist(), strict=True)):
                if cmap.setdefault(a, b) != b:
                    return False
    except ValueError:
        return False
    return True


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=OnSelf(_fits_recolored),
    when=W.SAME_SHAPE | W.SHALLOW,
    # the 2 marker sits right of the 4 shape: the shape is mirrored across its right side
    cases=[Case((0,), "04000 44200 04200", "04400 44440 04400")],
)
def mirror_marker(g: Grid, bg: int) -> Grid:
    """Objects (8-connected) of two colours: the commoner colour is the shape, the other
    a marker lying beyond one side of the shape's box. The shape is mirrored across
    that side (its copy in the shape's colour replaces the marker)."""
    h, w = g.shape
    objs = components(g, 8, 0, bg)
    if len(objs) > 20:
        raise ValueError("too many objects")
    o = g.copy()
    done = 0
    for ys, xs in objs:
        vals, cnt = np.unique(g[ys, xs], return_counts=True)
        if vals.size != 2 or cnt[0] == cnt[1]:
            continue
        main = int(vals[int(cnt[1] > cnt[0])])
        mk = g[ys, xs] != main
        my, mx, ky, kx = ys[~mk], xs[~mk], ys[mk], xs[mk]
        sides = [
            ("up", ky.max() < my.min()),
            ("down", ky.min() > my.max()),
            ("left", kx.max() < mx.min()),
            ("right", kx.min() > mx.max()),
        ]
        side = [n for n, ok in sides if ok]
        if len(side) != 1:
            continue
        if side[0] == "up":
            ty, tx = 2 * int(my.min()) - 1 - my, mx
        elif side[0] == "down":
            ty, tx = 2 * int(my.max()) + 1 - my, mx
        elif side[0] == "left":
            ty, tx = my, 2 * int(mx.min()) - 1 - mx
        else:
            ty, tx = my, 2 * int(mx.max()) + 1 - mx
        if ty.min() < 0 or tx.min() < 0 or ty.max() >= h or tx.max() >= w:
            raise ValueError("mirror leaves the grid")
        o[ky, kx] = bg
        o[ty, tx] = main
        done += 1
    if not done:
        raise ValueError("no marked object")
    return o


def g_mirror_across(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, some colour's cells fixed (the walls) and the rest moved (colour
    counts kept: ``keep`` 0) or copied (nothing lost, something gained: ``keep`` 1)."""
    moved = moved_colors(ctx)
    if moved is not None:
        for c in moved[:3]:
            yield (c, 0, ctx.bg)
        return
    if not ctx.grows:
        return
    fixed = [
        c for c in ctx.state_colors if all(np.array_equal(s == c, t == c) for s, t in ctx.pairs)
    ]
    for c in fixed[:3]:
        yield (c, 1, ctx.bg)


@op(
    params=(K.COLOR, K.FLAG, K.COLOR),
    generator=g_mirror_across,
    when=W.SAME_SHAPE | W.SHALLOW,
    cases=[
        # the 5 below the 2 wall is reflected across it; the 7 has no wall spanning its
        # columns and stays
        Case((2, 0, 0), "0000 0000 2220 0000 5507", "5500 0000 2220 0000 0007"),
        Case((2, 1, 0), "00000 00203 00200", "00000 30203 00200"),
    ],
)
def mirror_across(g: Grid, c: int, keep: int, bg: int) -> Grid:
    """Reflect every object (8-connected, any colours but ``c``) across the nearest
    wall of colour ``c``: looking up, down, left and right from the object, the first
    row (column) whose cells over the object's whole column (row) span are all ``c``
    is the mirror line; the nearest such line wins (ties: up, down, left, right). The
    original is erased (``keep`` 0) or kept (1); objects with no wall stay put."""
    h, w = g.shape
    objs = components(np.where(g == c, bg, g), 8, 0, bg)
    if not objs or len(objs) > 30 or not (g == c).any():
        raise ValueError("needs walls and 1 to 30 objects")
    o = g.copy()
    moves: list[tuple[Grid, Grid, Grid, Grid]] = []
    for ys, xs in objs:
        best: tuple[int, str, int] | None = None
        for d in ("up", "down", "left", "right"):
            vert = d in ("up", "down")
            lo, hi = (int(xs.min()), int(xs.max())) if vert else (int(ys.min()), int(ys.max()))
            step = -1 if d in ("up", "left") else 1
            start = {"up": ys.min(), "down": ys.max(), "left": xs.min(), "right": xs.max()}[d]
            i = int(start) + step
            while 0 <= i < (h if vert else w):
                line = g[i, lo : hi + 1] if vert else g[lo : hi + 1, i]
                if (line == c).all():
                    dist = abs(i - int(start))
                    if best is None or dist < best[0]:
                        best = (dist, d, i)
                    break
                i += step
        if best is None:
            continue
        _, d, i = best
        ny, nx = (2 * i - ys, xs) if d in ("up", "down") else (ys, 2 * i - xs)
        if ny.min() < 0 or ny.max() >= h or nx.min() < 0 or nx.max() >= w:
            raise ValueError("reflection leaves the grid")
        moves.append((ys, xs, ny, nx))
    if not moves:
        raise ValueError("nothing to reflect")
    if not keep:
        for ys, xs, _, _ in moves:
            o[ys, xs] = bg
    for ys, xs, ny, nx in moves:
        o[ny, nx] = g[ys, xs]
    return o


@op(
    params=(K.COLOR,),
    generator=BG,
    only_if=lambda ctx: all((s[s != ctx.bg] == t[s != ctx.bg]).all() for s, t in ctx.pairs),
    when=W.GROWS | W.SHALLOW,
    # the 1 body is mirrored to the right in 2 (marker beside it) and over the top-left
    # corner in 3 (diagonal marker)
    cases=[Case((0,), "0000000 0300000 0011200 0010000", "0300000 3300000 0011220 0010020")],
)
def mirror_to_markers(g: Grid, bg: int) -> Grid:
    """Each object (8-connected, several colours) is a body (its commonest colour)
    with marker cells of other colours beside its bounding box. For each marker, the
    body is mirrored across the box side(s) the marker lies beyond (above, below,
    left, right, or across a corner for a diagonal marker), painted in the marker's
    colour over the background."""
    h, w = g.shape
    o = g.copy()
    done = 0
    for ys, xs in components(g, 8, 0, bg):
        cols = g[ys, xs]
        vals, cnt = np.unique(cols, return_counts=True)
        if vals.size < 2:
            continue
        body = cols == vals[int(np.argmax(cnt))]
        by, bx = ys[body], xs[body]
        top, bot, lef, rig = int(by.min()), int(by.max()), int(bx.min()), int(bx.max())
        for y, x, c in zip(
            ys[~body].tolist(), xs[~body].tolist(), cols[~body].tolist(), strict=True
        ):
            if top <= y <= bot and lef <= x <= rig:
                continue  # a marker inside the box points nowhere
            ny, nx = by, bx
            if y < top:
                ny = 2 * top - 1 - by
            elif y > bot:
                ny = 2 * bot + 1 - by
            if x < lef:
                nx = 2 * lef - 1 - bx
            elif x > rig:
                nx = 2 * rig + 1 - bx
            ok = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
            ny, nx = ny[ok], nx[ok]
            free = o[ny, nx] == bg
            o[ny[free], nx[free]] = c
            done += 1
    if not done:
        raise ValueError("no markers beside a body")
    return o


def g_mirror_cross(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted (the task's background or each grid's own)."""
    yield from painted_fits(ctx, mirror_cross)


_CROSS_IN = "10800 30800 88888 00800 00800"
_CROSS_OUT = "10801 30803 88888 30803 10801"


@op(
    params=(K.COLOR,),
    generator=g_mirror_cross,
    # reflected across the 8 row, the 8 column and both
    cases=[Case((0,), _CROSS_IN, _CROSS_OUT)],
)
def mirror_cross(g: Grid, bg: int) -> Grid:
    """A full row and a full column of one colour are two mirrors: every other
    non-background cell is reflected across the row, the column and both, onto
    background cells (images past the edge are dropped)."""
    h, w = g.shape
    rows = [y for y in range(h) if g[y, 0] != bg and (g[y] == g[y, 0]).all()]
    cols = [x for x in range(w) if g[0, x] != bg and (g[:, x] == g[0, x]).all()]
    if len(rows) != 1 or len(cols) != 1:
        raise ValueError("needs one full row and one full column")
    r, c = rows[0], cols[0]
    o = g.copy()
    ys, xs = np.nonzero(g != bg)
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        if y == r or x == c:
            continue
        for yy, xx in ((2 * r - y, x), (y, 2 * c - x), (2 * r - y, 2 * c - x)):
            if 0 <= yy < h and 0 <= xx < w and o[yy, xx] == bg:
                o[yy, xx] = g[y, x]
    return o


def g_mirror_line(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, in one colour per pair: try each line colour,
    with that colour or the least common one (role 12) mirrored."""
    for c in ctx.state_colors:
        for m in dict.fromkeys([*ctx.state_colors, 12]):
            try:
                ok = all(
                    np.array_equal(mirror_line(s, c, role_color(s, m), ctx.bg), t)
                    for s, t in ctx.pairs
                )
            except ValueError:
                continue
            if ok:
                yield (c, m, ctx.bg)


_DIAG_MIRROR_IN = "1032 0100 0010 0001"
_DIAG_MIRROR_OUT = "1032 0100 3010 0001"


@op(
    params=(K.COLOR, K.COLOR, K.COLOR),
    generator=g_mirror_line,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        # the diagonal of 1s mirrors the 3 (not the 2)
        Case((1, 3, 0), _DIAG_MIRROR_IN, _DIAG_MIRROR_OUT),
        # a column of 8s; the image falling off the grid is dropped
        Case((8, 4, 0), "408000 008004", "408040 008004"),
    ],
)
def mirror_line(g: Grid, c: int, m: int, bg: int) -> Grid:
    """A full straight line of colour ``c`` (a row, a column, or on a square grid a
    diagonal) is a mirror: every cell of colour ``m`` gets its image painted over
    background (the original stays)."""
    h, w = g.shape
    if m in (c, bg):
        raise ValueError("the mirrored colour is the line's or the background")
    ys, xs = np.nonzero(g == m)
    if ys.size == 0:
        raise ValueError("nothing to mirror")
    rows = np.nonzero((g == c).all(axis=1))[0]
    cols = np.nonzero((g == c).all(axis=0))[0]
    if rows.size + cols.size == 1:
        ny, nx = (2 * int(rows[0]) - ys, xs) if rows.size else (ys, 2 * int(cols[0]) - xs)
    elif rows.size + cols.size == 0 and h == w and (np.diag(g) == c).all():
        ny, nx = xs, ys
    elif rows.size + cols.size == 0 and h == w and (np.diag(g[:, ::-1]) == c).all():
        ny, nx = h - 1 - xs, h - 1 - ys
    else:
        raise ValueError("needs exactly one mirror line")
    keep = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
    ny, nx = ny[keep], nx[keep]
    o = g.copy()
    free = o[ny, nx] == bg
    o[ny[free], nx[free]] = m
    return o
