"""Ops that paint a pattern around cells: local neighbourhood rules, stamps around each
colour, motifs grown from seeds, stamps by colour role or around markers."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, components, ray_hits
from atlas_actors.arc.infer import Args, Ctx, fits
from atlas_actors.arc.registry import Case, K, OneOf, W, op


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
        for k in (3, 1, 0, 2):  # look down, up, left, right
            seen, _ = ray_hits(g, bg, k)
            parts.append(
                (seen >= 0).astype(np.int64) if fs == "rays4any" else np.where(seen >= 0, seen, 10)
            )
    else:
        raise ValueError(f"unknown neighbourhood {fs!r}")
    key = np.zeros((h, w), dtype=np.int64)
    for part in parts:
        key = key * 11 + part
    return key


def g_local_rule(ctx: Ctx) -> Iterator[Args]:
    """Infer a neighbourhood -> colour table (coarsest neighbourhood that is consistent)."""
    found = 0
    for fs in ("n4count", "nsets", "n8count", "rays4any", "rays4", "n4", "n8"):
        lut: dict[int, int] = {}
        own: dict[int, int] = {}
        ok = True
        for s, t in ctx.pairs:
            keys = cell_keys(s, fs, ctx.bg)
            rows = np.unique(np.stack([keys.ravel(), s.ravel(), t.ravel()], axis=1), axis=0)
            for k, a, v in rows.tolist():
                own[k] = a
                if lut.setdefault(k, v) != v:
                    ok = False
                    break
            if not ok:
                break
        if not ok:
            continue
        # the rule must have seen every neighbourhood the test inputs contain
        test_keys: set[int] = set()
        for x in ctx.states[ctx.n :]:
            test_keys |= set(np.unique(cell_keys(x, fs, ctx.bg)).tolist())
        if not test_keys <= lut.keys():
            continue
        table = sorted([k, v] for k, v in lut.items() if own[k] != v)
        if table and len(table) <= 64:
            yield (fs, table, ctx.bg)
            found += 1
            if found >= 2:
                return


NEIGHBOURHOODS = ("n4", "n8", "n4count", "n8count", "rays4", "rays4any", "nsets")


@op(
    params=(OneOf(*NEIGHBOURHOODS), K.TABLE, K.COLOR),
    generator=g_local_rule,
    when=W.CHANGED | W.NOT_TINY,
    # cells of colour 0 with exactly 2 non-background 4-neighbours become 5: key 0*11+2
    cases=[Case(("n4count", [[2, 5]], 0), "101 000", "151 000")],
)
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


def _stamp_table(ctx: Ctx, radius: int) -> list[list[int]]:
    """Per source colour and offset, the one colour the targets show there (on cells
    that were background), when it is the same
    at every source cell of every train pair. Only colours seen in two or more pairs,
    and offsets seen at two or more source cells, count (a one-off is no rule)."""
    vals: dict[int, set[int]] = {}
    seen: dict[int, int] = {}
    pairs: dict[int, int] = {}
    for s, t in ctx.pairs:
        h, w = s.shape
        for c in np.unique(s).tolist():
            if c == ctx.bg:
                continue
            pairs[c] = pairs.get(c, 0) + 1
            ys, xs = np.nonzero(s == c)
            if ys.size > 200:
                continue
            for dy in range(-radius, radius + 1):
                for dx in range(-radius, radius + 1):
                    ny, nx = ys + dy, xs + dx
                    inside = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
                    ny, nx = ny[inside], nx[inside]
                    if dy or dx:
                        free = s[ny, nx] == ctx.bg
                        ny, nx = ny[free], nx[free]
                    key = c * 25 + (dy + 2) * 5 + dx + 2
                    vals.setdefault(key, set()).update(np.unique(t[ny, nx]).tolist())
                    seen[key] = seen.get(key, 0) + int(ny.size)
    table = []
    for key, vs in sorted(vals.items()):
        if len(vs) == 1 and seen[key] >= 2 and pairs[key // 25] >= 2 and key % 25 != 12:
            v = next(iter(vs))
            if v != ctx.bg:
                table.append([key, v])
    return table


def g_stamp(ctx: Ctx) -> Iterator[Args]:
    """Infer the pattern painted around each cell of each colour (radius 1, then 2), on
    the input only (after other ops it mostly overfits)."""
    seen: list[list[list[int]]] = []
    for radius in (1, 2):
        table = _stamp_table(ctx, radius)
        if table and table not in seen and len(table) <= 40:
            seen.append(table)
            yield (table, ctx.bg)


@op(
    params=(K.TABLE, K.COLOR),
    generator=g_stamp,
    when=W.SAME_SHAPE | W.FIRST,
    # colour 1 paints 4 above and below itself (keys 1*25 + 1*5 + 2, 1*25 + 3*5 + 2),
    # colour 2 turns into 6 (key 2*25 + 12)
    cases=[Case(([[32, 4], [42, 4], [62, 6]], 0), "000 012 000", "040 016 040")],
)
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


def g_stamp_markers(ctx: Ctx) -> Iterator[Args]:
    """Same shapes; the marker is a colour of every state that the targets lose."""
    for m in ctx.state_colors[:8]:
        if not all((s == m).any() for s in ctx.states):
            continue
        if not all(((s == m) & (t != m)).any() for s, t in ctx.pairs):
            continue
        if fits(ctx, stamp_markers, m, ctx.bg):
            yield (m, ctx.bg)
            return


@op(
    params=(K.COLOR, K.COLOR),
    generator=g_stamp_markers,
    when=W.SAME_SHAPE | W.SHALLOW,
    # the 1 x 3 template (left of the 5 separator) is stamped centred on each 1
    cases=[Case((1, 0), "2345000 0005010 0005001", "2345000 0005234 0005023")],
)
def stamp_markers(g: Grid, m: int, bg: int) -> Grid:
    """Copy the template centred on every marker cell (colour ``m``). The template is
    the bounding box (odd height and width) of the cells that are neither background,
    nor ``m``, nor on a full line of one colour (a separator); its non-background
    cells are painted."""
    h, w = g.shape
    line = np.zeros(g.shape, dtype=bool)
    line[(g == g[:, :1]).all(axis=1) & (g[:, 0] != bg)] = True
    line[:, (g == g[:1, :]).all(axis=0) & (g[0, :] != bg)] = True
    ty, tx = np.nonzero((g != bg) & (g != m) & ~line)
    my, mx = np.nonzero(g == m)
    if ty.size == 0 or my.size == 0 or my.size > 30:
        raise ValueError("no template or no markers")
    y0, x0 = int(ty.min()), int(tx.min())
    th, tw = int(ty.max()) - y0 + 1, int(tx.max()) - x0 + 1
    if th % 2 == 0 or tw % 2 == 0 or th * tw > 49:
        raise ValueError("template has no centre cell or is too big")
    tpl = g[y0 : y0 + th, x0 : x0 + tw].copy()
    keep = (tpl != bg) & ~line[y0 : y0 + th, x0 : x0 + tw]
    o = g.copy()
    for cy, cx in zip(my.tolist(), mx.tolist(), strict=True):
        for dy in range(th):
            for dx in range(tw):
                y, x = cy - th // 2 + dy, cx - tw // 2 + dx
                if keep[dy, dx] and 0 <= y < h and 0 <= x < w:
                    o[y, x] = tpl[dy, dx]
    return o


def _role_objects(g: Grid, bg: int) -> list[tuple[int, int, int, int]]:
    """Objects (8-connected, any colours) with a centre cell (odd box sides, at most
    5 x 5): (centre row, centre column, centre colour, other colour; -1 if none)."""
    objs = components(g, 8, 0, bg)
    if not objs or len(objs) > 30:
        raise ValueError("no objects or too many")
    out = []
    for ys, xs in objs:
        hh, ww = int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1
        if hh % 2 == 0 or ww % 2 == 0 or hh > 5 or ww > 5:
            raise ValueError("an object has no centre cell")
        cy, cx = int(ys.min()) + hh // 2, int(xs.min()) + ww // 2
        a = int(g[cy, cx])
        if a == bg:
            raise ValueError("empty centre")
        rest = g[ys, xs][g[ys, xs] != a]
        b = int(np.bincount(rest).argmax()) if rest.size else -1
        out.append((cy, cx, a, b))
    return out


def g_role_stamp(ctx: Ctx) -> Iterator[Args]:
    """Only background cells painted, each near (within 3 cells of) one object's
    centre, with the centre's or the object's other colour: read the table off the
    pairs, each cell taken relative to its nearest centre."""
    table: dict[int, int] = {}
    for s, t in ctx.pairs:
        try:
            objs = _role_objects(s, ctx.bg)
        except ValueError:
            return
        cen = np.array([(cy, cx) for cy, cx, _a, _b in objs])
        for y, x in zip(*np.nonzero(s == ctx.bg), strict=True):
            dist = np.maximum(np.abs(cen[:, 0] - y), np.abs(cen[:, 1] - x))
            near = int(dist.min())
            v = int(t[y, x])
            if near > 3 or int((dist == near).sum()) > 1:
                if v != ctx.bg:
                    return
                continue
            cy, cx, a, b = objs[int(dist.argmin())]
            role = -1 if v == ctx.bg else 0 if v == a else 1 if v == b else -2
            key = (int(y) - cy + 3) * 7 + (int(x) - cx + 3)
            if role == -2 or table.setdefault(key, role) != role:
                return
    entries = [[k, r] for k, r in sorted(table.items()) if r >= 0]
    if entries and fits(ctx, role_stamp, entries, ctx.bg):
        yield (entries, ctx.bg)


@op(
    params=(K.TABLE, K.COLOR),
    generator=g_role_stamp,
    when=W.PAINTED | W.SHALLOW,
    # each object grows diagonal corners in its centre's colour and a cell two to the
    # right in its other colour (the colours differ per object; the lone 5 has none)
    cases=[
        Case(
            ([[16, 0], [32, 0], [26, 1]], 0),
            "0000000 0272000 0000000 0000000 0000050",
            "0700000 0272200 0007000 0000500 0000050",
        )
    ],
)
def role_stamp(g: Grid, table: list[list[int]], bg: int) -> Grid:
    """Grow every object (8-connected, with a centre cell) by a pattern given relative
    to its centre and in colour roles: an entry ``[key, role]`` with
    ``key = (dy + 3) * 7 + (dx + 3)`` paints the background cell at offset (dy, dx)
    with the centre's colour (``role`` 0) or the object's other colour (1)."""
    h, w = g.shape
    o = g.copy()
    for cy, cx, a, b in _role_objects(g, bg):
        for key, role in table:
            dy, dx = divmod(int(key), 7)
            y, x = cy + dy - 3, cx + dx - 3
            col = a if role == 0 else b
            if 0 <= y < h and 0 <= x < w and g[y, x] == bg and col >= 0:
                o[y, x] = col
    return o


_W = 61  # offsets -30..30 per axis in a motif key


_SPAN = _W * _W


def _seeds(g: Grid, m: int, bg: int) -> list[tuple[int, int, int]]:
    """The cells of colour ``m`` (-1: every non-background cell; at most 12) as (row,
    column, colour)."""
    ys, xs = np.nonzero(g != bg if m < 0 else g == m)
    if ys.size == 0 or ys.size > 12:
        raise ValueError("no seeds or too many")
    return [(int(y), int(x), int(g[y, x])) for y, x in zip(ys, xs, strict=True)]


def motif_key(dy: int, dx: int, s: int, own: int) -> int:
    """Encode a motif entry: offset (dy, dx), chain ``s`` (-1, 0, 1) and whether the
    cell takes the seed's colour (``own`` 1)."""
    return ((s + 1) * 2 + own) * _SPAN + (dy + 30) * _W + (dx + 30)


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
            out.append([motif_key(dy, dx, 0, int(c < 0)), max(c, 0)])
            continue
        d = dy * vy + dx * vx
        if 0 <= d < vv and fwd:
            out.append([motif_key(dy, dx, 1, int(c < 0)), max(c, 0)])
        if -vv < d <= 0 and back:
            out.append([motif_key(dy, dx, -1, int(c < 0)), max(c, 0)])
    for s in (1, -1):  # the seed's own copies along the chain
        c0 = pts.get((s * vy, s * vx))
        if vv and c0 is not None:
            out.append([motif_key(0, 0, s, int(c0 < 0)), max(c0, 0)])
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
            if fits(ctx, seed_motif, table, vy, vx, m, ctx.bg):
                best = (table, vy, vx, m, ctx.bg)
        if best is not None:
            yield best
            return


# a zigzag below each seed: the seed's own colour, period two rows down
_ZIG = [
    [motif_key(1, -1, 1, 1), 0],
    [motif_key(1, 1, 1, 1), 0],
    [motif_key(0, 0, 1, 1), 0],
]


@op(
    params=(K.TABLE, K.OFFSET, K.OFFSET, K.COLOR_OR_NONE, K.COLOR),
    generator=g_seed_motif,
    when=W.PAINTED | W.SHALLOW,
    cases=[
        Case((_ZIG, 2, 0, -1, 0), "02000 00000 00000 00000", "02000 20200 02000 20200"),
        # two seeds of two colours; the motif is clipped at the edges
        Case((_ZIG, 2, 0, -1, 0), "3004 0000 0000", "3004 0340 3004"),
        # a fixed colour 5 both ways along a diagonal step, and a one-off cell of 1
        Case(
            (
                [
                    [motif_key(0, 0, 1, 0), 5],
                    [motif_key(0, 0, -1, 0), 5],
                    [motif_key(0, 1, 0, 0), 1],
                ],
                1,
                1,
                -1,
                0,
            ),
            "0000 0800 0000 0000",
            "5000 0810 0050 0005",
        ),
        # only the 2s are seeds: the 5 wall stays and blocks nothing but its own cell
        Case(([[motif_key(0, 0, 1, 1), 0]], 0, 2, 2, 0), "20500 00000", "20502 00000"),
        # no step: a plain stamp
        Case(
            ([[motif_key(-1, 0, 0, 1), 0], [motif_key(1, 0, 0, 0), 7]], 0, 0, -1, 0),
            "00 60 00",
            "60 60 70",
        ),
    ],
)
def seed_motif(g: Grid, table: list[list[int]], vy: int, vx: int, m: int, bg: int) -> Grid:
    """Grow a motif from every seed: each cell of colour ``m`` (-1: every
    non-background cell; at most 12 seeds). An entry ``[key, col]`` (see
    ``motif_key``) paints the background cell at offset (dy, dx) from the seed in
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
