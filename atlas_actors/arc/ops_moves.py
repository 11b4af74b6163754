"""More DSL ops (see ops_objects.py for the conventions): rays in one heading that
side-step or turn at obstacles instead of stopping.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas_actors.arc.ops_cells import _fits
from atlas_actors.arc.prims import _DIRS

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]

OP_TABLE: list[tuple[str, Callable[..., Grid], tuple[Any, ...]]] = []
"""``(name, primitive, argument kinds)`` rows added to the DSL."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {}
"""Parameter generators, by op name."""

_HEADINGS = ("up", "down", "left", "right")

# ---------------------------------------------------------------- primitives


def ray_detour(g: Grid, c: int, d: str, side: int, bg: int) -> Grid:
    """From every cell of colour ``c`` (-1: every non-background cell, each ray in
    its source's colour) whose next cell in direction ``d`` is background,
    draw a ray of ``c`` over the background to the grid's edge. A ray whose way is
    blocked (a non-background cell ahead) steps aside by one cell (``side`` 1: to the
    right of its heading, -1: to the left) and goes on in its heading from there, or
    turns (``side`` 2: right, -2: left) and goes on in the new heading (turning again
    the same way at the next obstacle); it ends where it cannot go on (``side`` 0:
    at the first obstacle). At most 40 sources."""
    h, w = g.shape
    ys, xs = np.nonzero(g != bg if c < 0 else g == c)
    if ys.size == 0 or ys.size > 40:
        raise ValueError("no sources or too many")
    o = g.copy()
    sgn = 1 if side > 0 else -1
    for y0, x0 in zip(ys.tolist(), xs.tolist(), strict=True):
        col = int(g[y0, x0])
        ((dy, dx),) = _DIRS[d]
        ny, nx = y0 + dy, x0 + dx
        if not (0 <= ny < h and 0 <= nx < w) or g[ny, nx] != bg:
            continue
        y, x = y0, x0
        for _ in range(h * w):
            ny, nx = y + dy, x + dx
            if not (0 <= ny < h and 0 <= nx < w):
                break
            if g[ny, nx] != bg:
                if side == 0:
                    break
                sy, sx = dx * sgn, -dy * sgn  # right of (dy, dx) for sgn 1
                if abs(side) == 2:
                    dy, dx = sy, sx
                ny, nx = y + sy, x + sx
                if not (0 <= ny < h and 0 <= nx < w) or g[ny, nx] != bg:
                    break
            if o[ny, nx] == col and abs(side) == 2:
                break  # a turning ray back on its own path
            o[ny, nx] = col
            y, x = ny, nx
    return o


# ---------------------------------------------------------------- generators


def _painted(ctx: Ctx) -> set[int] | None:
    """The colours painted over background cells (None unless only background cells
    change)."""
    out: set[int] = set()
    for s, t in ctx.pairs:
        ch = s != t
        if not ch.any() or (s[ch] != ctx.bg).any():
            return None
        out |= set(np.unique(t[ch]).tolist())
    return out


def g_ray_detour(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, all in one state colour (else rays in their
    sources' colours): try each heading, then sidestep or turn (only where some ray
    meets an obstacle, else plain rays do)."""
    if ctx.depth > 1 or not ctx.same_shape:
        return
    cols = _painted(ctx)
    if not cols or not cols <= set(ctx.state_colors):
        return
    c = next(iter(cols)) if len(cols) == 1 else -1
    for d in _HEADINGS:
        if _fits(ctx, ray_detour, c, d, 0, ctx.bg):
            continue  # plain rays do
        for side in (1, -1, 2, -2):
            if _fits(ctx, ray_detour, c, d, side, ctx.bg):
                yield (c, d, side, ctx.bg)
                return


OP_TABLE.append(("ray_detour", ray_detour, ("g", "cd", _HEADINGS, "d", "c")))
GENERATORS["ray_detour"] = g_ray_detour
