"""More DSL ops (see ops_objects.py for the conventions): a motif learned from the
train pairs grown around every seed cell, once or repeated along a learned period
(zigzags, staircases, dotted columns).

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import _fits, _painted_only

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]

OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = []
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {}
"""Parameter generators, by op name."""

_W = 61  # offsets -30..30 per axis in a motif key
_SPAN = _W * _W

# ---------------------------------------------------------------- primitives


def _seeds(g: Grid, m: int, bg: int) -> list[tuple[int, int, int]]:
    """The cells of colour ``m`` (-1: every non-background cell; at most 12) as (row,
    column, colour)."""
    ys, xs = np.nonzero(g != bg if m < 0 else g == m)
    if ys.size == 0 or ys.size > 12:
        raise ValueError("no seeds or too many")
    return [(int(y), int(x), int(g[y, x])) for y, x in zip(ys, xs, strict=True)]


def _motif_key(dy: int, dx: int, s: int, own: int) -> int:
    """Encode a motif entry: offset (dy, dx), chain ``s`` (-1, 0, 1) and whether the
    cell takes the seed's colour (``own`` 1)."""
    return ((s + 1) * 2 + own) * _SPAN + (dy + 30) * _W + (dx + 30)


def seed_motif(g: Grid, table: list[list[int]], vy: int, vx: int, m: int, bg: int) -> Grid:
    """Grow a motif from every seed: each cell of colour ``m`` (-1: every
    non-background cell; at most 12 seeds). An entry ``[key, col]`` (see
    ``_motif_key``) paints the background cell at offset (dy, dx) from the seed in
    colour ``col`` (or the seed's own colour); with chain ``s`` = 1 (-1) the cell is
    painted again at every step (vy, vx) (minus that step) on to the grid's edge, so
    the motif continues periodically."""
    h, w = g.shape
    o = g.copy()
    free = g == bg
    steps = max(h, w)
    for sy, sx, sc in _seeds(g, m, bg):
        for key, col in table:
            head, r = divmod(int(key), _SPAN)
            dy, dx = r // _W - 30, r % _W - 30
            s, own = head // 2 - 1, head % 2
            c = sc if own else int(col)
            y, x = sy + dy, sx + dx
            ty, tx = s * vy, s * vx
            if s == 0 or (ty == 0 and tx == 0):
                if 0 <= y < h and 0 <= x < w and free[y, x]:
                    o[y, x] = c
                continue
            for _ in range(2 * steps):
                if (y < 0 and ty <= 0) or (y >= h and ty >= 0):
                    break
                if (x < 0 and tx <= 0) or (x >= w and tx >= 0):
                    break
                if 0 <= y < h and 0 <= x < w and free[y, x]:
                    o[y, x] = c
                y, x = y + ty, x + tx
    return o


# ---------------------------------------------------------------- generators


def _seed_offsets(ctx: Ctx, m: int) -> dict[tuple[int, int], int] | None:
    """Every painted cell of the train pairs relative to its nearest seed (Chebyshev;
    ties skipped), with its colour: -1 for the seed's own colour, else a fixed colour.
    None when the pairs disagree."""
    spec: dict[tuple[int, int], set[int]] = {}
    for s, t in ctx.pairs:
        try:
            seeds = _seeds(s, m, ctx.bg)
        except ValueError:
            return None
        sy = np.array([a for a, _b, _c in seeds])
        sx = np.array([b for _a, b, _c in seeds])
        for y, x in zip(*np.nonzero(s != t), strict=True):
            dist = np.maximum(np.abs(sy - y), np.abs(sx - x))
            near = int(dist.min())
            if int((dist == near).sum()) > 1:
                continue
            a, b, c = seeds[int(dist.argmin())]
            v = int(t[y, x])
            opts = {v} | ({-1} if v == c else set())
            key = (int(y) - a, int(x) - b)
            spec[key] = spec[key] & opts if key in spec else opts
            if not spec[key]:
                return None
    return {k: (-1 if -1 in v else min(v)) for k, v in spec.items()}


def _motif_table(pts: dict[tuple[int, int], int], vy: int, vx: int) -> list[list[int]] | None:
    """The motif entries for step (vy, vx): the painted offsets of the first period
    on each side of the seed (that the motif reaches) become chains (all of them
    one-off entries when there is no step)."""
    vv = vy * vy + vx * vx
    out: list[list[int]] = []
    ds = [dy * vy + dx * vx for dy, dx in pts]
    fwd, back = max(ds) > 0, min(ds) < 0  # which sides of the seed the motif has
    for (dy, dx), c in sorted(pts.items()):
        if vv == 0:
            out.append([_motif_key(dy, dx, 0, int(c < 0)), max(c, 0)])
            continue
        d = dy * vy + dx * vx
        if 0 <= d < vv and fwd:
            out.append([_motif_key(dy, dx, 1, int(c < 0)), max(c, 0)])
        if -vv < d <= 0 and back:
            out.append([_motif_key(dy, dx, -1, int(c < 0)), max(c, 0)])
    for s in (1, -1):  # the seed's own copies along the chain
        c0 = pts.get((s * vy, s * vx))
        if vv and c0 is not None:
            out.append([_motif_key(0, 0, s, int(c0 < 0)), max(c0, 0)])
    return out if 0 < len(out) <= 64 else None


def _clipped(ctx: Ctx, m: int, pts: dict[tuple[int, int], int]) -> bool:
    """Some train seed has a motif offset off its grid (a plain stamp would be cut
    there, so the pattern may well go on beyond what was seen)."""
    ys = [dy for dy, _ in pts]
    xs = [dx for _, dx in pts]
    for s, _t in ctx.pairs:
        h, w = s.shape
        for y, x, _c in _seeds(s, m, ctx.bg):
            if y + min(ys) < 0 or y + max(ys) >= h or x + min(xs) < 0 or x + max(xs) >= w:
                return True
    return False


def g_seed_motif(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted around a few seed cells (every non-background
    cell, else the cells of one state colour): read the painted cells relative to
    their nearest seed, then try the shortest steps found among them (at most 6
    cells each way) as the motif's period, and no step (only when no train seed's
    motif is cut by the grid's edge); the fitting motif with the fewest entries wins
    (a periodic one on a tie), if it explains at least twice as many painted cells
    as it has entries."""
    if ctx.depth > 1 or not _painted_only(ctx):
        return
    for m in [-1, *ctx.state_colors[:6]]:
        pts = _seed_offsets(ctx, m)
        if not pts:
            continue
        steps = sorted(
            {(dy, dx) for dy, dx in pts if max(abs(dy), abs(dx)) <= 6},
            key=lambda v: (v[0] * v[0] + v[1] * v[1], v),
        )
        painted = sum(int((s != t).sum()) for s, t in ctx.pairs)
        plain = [] if _clipped(ctx, m, pts) else [(0, 0)]
        best: Args | None = None
        for vy, vx in [*steps[:20], *plain]:
            table = _motif_table(pts, vy, vx)
            if table is None or (best is not None and len(table) >= len(best[0])):
                continue
            if painted < 2 * len(table):
                continue
            if _fits(ctx, seed_motif, table, vy, vx, m, ctx.bg):
                best = (table, vy, vx, m, ctx.bg)
        if best is not None:
            yield best
            return


OP_TABLE.append(("seed_motif", seed_motif, ("g", "table", "d", "d", "cd", "c")))
GENERATORS["seed_motif"] = g_seed_motif
