"""Ops that move the whole grid: quarter turns, flips, the rigid transforms, shifts and
shears, concatenation and layering of grids, turning each object in place."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, components, rigid_transform
from atlas_actors.arc.infer import Args, Ctx, fits, same_counts
from atlas_actors.arc.registry import PLAIN, Case, K, OneOf, W, op

_A = "120 030"


@op(generator=PLAIN, cases=[Case((), _A, "01 32 00")])
def rot90(g: Grid) -> Grid:
    """Turn a quarter clockwise."""
    return np.rot90(g, -1)


@op(generator=PLAIN, cases=[Case((), _A, "030 021")])
def rot180(g: Grid) -> Grid:
    """Turn half way round."""
    return np.rot90(g, 2)


@op(generator=PLAIN, cases=[Case((), _A, "00 23 10")])
def rot270(g: Grid) -> Grid:
    """Turn a quarter anticlockwise."""
    return np.rot90(g, 1)


@op(generator=PLAIN, cases=[Case((), _A, "021 030")])
def flip_h(g: Grid) -> Grid:
    """Mirror left-right."""
    return g[:, ::-1]


@op(generator=PLAIN, cases=[Case((), _A, "030 120")])
def flip_v(g: Grid) -> Grid:
    """Mirror top-bottom."""
    return g[::-1, :]


@op(generator=PLAIN, cases=[Case((), _A, "10 23 00")])
def transpose(g: Grid) -> Grid:
    """Mirror about the main diagonal (rows become columns)."""
    return g.T


@op(generator=PLAIN, cases=[Case((), _A, "00 32 01")])
def antitranspose(g: Grid) -> Grid:
    """Mirror about the anti-diagonal."""
    return np.rot90(g, 2).T


@op(
    params=(K.RIGID,),
    no_generator="the seven named turns and flips cover it; mutation and the proposer reach it",
    cases=[Case((4,), _A, "021 030")],
)
def rigid(g: Grid, k: int) -> Grid:
    """Rigid transform ``k`` as an op: 0 identity, 1-3 quarter turns clockwise, 4
    ``flip_h``, 5 ``flip_v``, 6 ``transpose``, 7 ``antitranspose``
    (:func:`atlas_actors.arc.grids.rigid_transform`)."""
    return rigid_transform(g, k)


def g_shift(ctx: Ctx) -> Iterator[Args]:
    """Infer a translation from where the non-background content moved (same in all pairs)."""
    deltas = set()
    for s, t in ctx.pairs:
        ys, xs = np.nonzero(s != ctx.bg)
        yt, xt = np.nonzero(t != ctx.bg)
        if ys.size == 0 or yt.size == 0:
            return
        deltas.add((int(yt.min() - ys.min()), int(xt.min() - xs.min())))
    if len(deltas) == 1:
        dy, dx = deltas.pop()
        if (dy, dx) != (0, 0):
            yield (dy, dx, ctx.bg)


@op(
    params=(K.OFFSET, K.OFFSET, K.COLOR),
    generator=g_shift,
    when=W.SAME_SHAPE,
    cases=[Case((1, 1, 0), _A, "000 012")],
)
def shift(g: Grid, dy: int, dx: int, bg: int) -> Grid:
    """Move the whole grid by ``dy`` rows and ``dx`` columns; cells moved in are ``bg``."""
    h, w = g.shape
    o = np.full_like(g, bg)
    ys, yd = max(0, -dy), max(0, dy)
    xs, xd = max(0, -dx), max(0, dx)
    hh, ww = h - abs(dy), w - abs(dx)
    if hh > 0 and ww > 0:
        o[yd : yd + hh, xd : xd + ww] = g[ys : ys + hh, xs : xs + ww]
    return o


@op(
    params=(K.GRID,),
    no_generator="two grid arguments: reached by mutation (grafts) only",
    cases=[Case((["flip_h", "x"],), "12", "1221")],
)
def hcat(a: Grid, b: Grid) -> Grid:
    """Put ``b`` to the right of ``a`` (equal heights)."""
    return np.concatenate([a, b], axis=1)


@op(
    params=(K.GRID,),
    no_generator="two grid arguments: reached by mutation (grafts) only",
    cases=[Case(("x",), "12", "12 12")],
)
def vcat(a: Grid, b: Grid) -> Grid:
    """Put ``b`` below ``a`` (equal widths)."""
    return np.concatenate([a, b], axis=0)


@op(
    params=(K.GRID, K.COLOR),
    no_generator="built by the search's composition step (TaskSolver.compose) and by mutation",
    cases=[
        Case((["flip_h", "x"], 0), "103", "301"),
        Case((["rigid", "x", 2], 0), "00 05", "50 05"),
    ],
)
def layer(base: Grid, top: Grid, bg: int) -> Grid:
    """``top`` painted over ``base``: every cell of ``top`` that is not ``bg`` wins."""
    if base.shape != top.shape:
        raise ValueError("layers differ in shape")
    return np.where(top != bg, top, base)


def g_pingpong(ctx: Ctx) -> Iterator[Args]:
    """Targets k * (n - 1) + 1 lines long along one axis (same k in every pair)."""
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


@op(
    params=(OneOf("v", "h"), K.COUNT),
    generator=g_pingpong,
    when=W.LARGER | W.SHALLOW,
    cases=[Case(("v", 3), "12 34", "12 34 12 34"), Case(("h", 2), "123", "12321")],
)
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


_TURNS = {"ccw": 1, "180": 2, "cw": 3}


def g_turn_objects(ctx: Ctx) -> Iterator[Args]:
    """Same shapes, each target with its state's count of each colour's cells."""
    for turn in _TURNS:
        for conn in (4, 8):
            if fits(ctx, turn_objects, turn, conn, ctx.bg):
                yield (turn, conn, ctx.bg)
                break


_L_IN = "00000 03000 03000 03300 00000"
_L_OUT = "00000 00300 33300 00000 00000"


@op(
    params=(OneOf(*_TURNS), K.CONN, K.COLOR),
    generator=g_turn_objects,
    only_if=lambda ctx: same_counts(ctx),
    when=W.CHANGED,
    cases=[
        # an L turned a quarter anticlockwise about its box's centre (half cell: up-left)
        Case(("ccw", 4, 0), _L_IN, _L_OUT),
        # a bar turned clockwise about its middle cell
        Case(("cw", 8, 0), "00000 00000 07770 00000", "00000 00700 00700 00700"),
    ],
)
def turn_objects(g: Grid, turn: str, conn: int, bg: int) -> Grid:
    """Turn every object (``conn``-connected, one colour) about the centre of its
    bounding box (``turn`` "ccw", "180" or "cw") on a background canvas; a box whose
    turn needs a half-cell shift is placed toward the top-left, and cells turned past
    the edge are lost."""
    h, w = g.shape
    objs = components(g, conn, 1, bg)
    if not objs or len(objs) > 40:
        raise ValueError("needs 1 to 40 objects")
    o = np.full_like(g, bg)
    for ys, xs in objs:
        y0, x0 = int(ys.min()), int(xs.min())
        box = np.zeros((int(ys.max()) - y0 + 1, int(xs.max()) - x0 + 1), dtype=bool)
        box[ys - y0, xs - x0] = True
        turned = np.rot90(box, _TURNS[turn])
        ty, tx = np.nonzero(turned)
        ny = ty + y0 + (box.shape[0] - turned.shape[0]) // 2
        nx = tx + x0 + (box.shape[1] - turned.shape[1]) // 2
        keep = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        o[ny[keep], nx[keep]] = g[ys[0], xs[0]]
    return o


_SHEARS = ("h+", "h-", "v+", "v-")


def g_shear(ctx: Ctx) -> Iterator[Args]:
    """Every target wider by its height less one (or taller by its width less one);
    the canvas colour is read off a corner the skew leaves empty (the background if
    the targets disagree)."""
    for axis in ("h", "v"):
        grown = [
            (s.shape[0], s.shape[1] + s.shape[0] - 1)
            if axis == "h"
            else (s.shape[0] + s.shape[1] - 1, s.shape[1])
            for s, _ in ctx.pairs
        ]
        if any(t.shape != sh or min(sh) < 2 for (_, t), sh in zip(ctx.pairs, grown, strict=True)):
            continue
        for sign, corner in (("+", (0, 0)), ("-", (-1, 0))):
            fill = {int(t[corner]) for _, t in ctx.pairs}
            yield (axis + sign, fill.pop() if len(fill) == 1 else ctx.bg)


@op(
    params=(OneOf(*_SHEARS), K.COLOR),
    generator=g_shear,
    when=W.SHALLOW,
    cases=[
        # the top row shifted furthest right
        Case(("h+", 0), "123 456", "0123 4560"),
        # columns: column j shifted down by j, on a canvas of 9
        Case(("v-", 9), "12 34 56", "19 32 54 96"),
    ],
)
def shear(g: Grid, mode: str, bg: int) -> Grid:
    """Skew the grid into a parallelogram on a background canvas: "h+" shifts row ``i``
    right by ``h-1-i`` (the top row furthest), "h-" by ``i``; "v+" and "v-" do the same
    to the columns, downward."""
    a = g.T if mode[0] == "v" else g
    h, w = a.shape
    if w + h - 1 > 30:
        raise ValueError("too large")
    o = np.full((h, w + h - 1), bg, dtype=g.dtype)
    for i in range(h):
        off = h - 1 - i if mode[1] == "+" else i
        o[i, off : off + w] = a[i]
    return o.T if mode[0] == "v" else o
