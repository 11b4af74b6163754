"""Parameter inference: which parameters of each op are worth trying for a task.

A generator gets a :class:`Ctx` (the current intermediate grids for every train and test
input, the train targets, the background colour) and yields argument tuples for one op.
Parameters that can be read off the train pairs (scale factors, tile transforms,
colour maps, object recolouring tables, target colours) are inferred, not guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from atlas_actors.arc import prims
from atlas_actors.arc.dsl import (
    FEATURES,
    GRAVITY,
    GRID_FEATURES,
    PICK_SELS,
    SELECTORS,
    SPLIT_MODES,
    SYM_KINDS,
)

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]


def _colors_besides(grids: list[Grid], bg: int) -> list[int]:
    """The colours in any of ``grids`` other than ``bg``, sorted."""
    cs: set[int] = set()
    for g in grids:
        cs |= set(np.unique(g).tolist())
    cs.discard(bg)
    return sorted(cs)


def _labels(g: Grid, conn: int, by_color: int, bg: int) -> Grid:
    """Each cell's object number (0 for background) under one object split."""
    lab = np.zeros(g.shape, dtype=np.int16)
    for i, (ys, xs) in enumerate(prims.components(g, conn, by_color, bg)):
        lab[ys, xs] = i + 1
    return lab


@dataclass
class Ctx:
    """What a generator may look at: intermediate grids (train then test) and targets."""

    states: list[Grid]
    targets: list[Grid]
    bg: int
    depth: int = 0
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.targets)

    @property
    def train(self) -> list[Grid]:
        return self.states[: self.n]

    @property
    def pairs(self) -> list[tuple[Grid, Grid]]:
        """The train pairs as (current state, target)."""
        return self._get("pairs", lambda: list(zip(self.train, self.targets, strict=False)))  # type: ignore[no-any-return]

    def _get(self, key: str, fn: Callable[[], Any]) -> Any:  # cached per context
        if key not in self.cache:
            self.cache[key] = fn()
        return self.cache[key]

    def conns(
        self, order: tuple[tuple[int, int], ...] = ((8, 0), (8, 1), (4, 0), (4, 1))
    ) -> list[tuple[int, int]]:
        """The ``(conn, by_color)`` object splits worth trying, in ``order``: a split that
        cuts every state (train and test) into exactly the objects an earlier one does is
        left out, since an op that sees the grid only through its objects gives the same
        grids with either (so the search would only find duplicates)."""

        def f() -> list[tuple[int, int]]:
            seen: set[bytes] = set()
            out = []
            for conn, by_color in order:
                sig = b"|".join(_labels(g, conn, by_color, self.bg).tobytes() for g in self.states)
                if sig not in seen:
                    seen.add(sig)
                    out.append((conn, by_color))
            return out

        return list(self._get(f"conns{order}", f))

    def selections(self, sels: tuple[str, ...], conn: int, by_color: int) -> list[str]:
        """The selectors of ``sels`` that pick an object in every state, leaving out one
        that picks the same objects as an earlier one (an op that sees only the picked
        object would give the same grids)."""

        def f() -> list[str]:
            seen: set[tuple[int, ...]] = set()
            out = []
            for sel in sels:
                picks = tuple(
                    prims.select_index(g, sel, conn, by_color, self.bg) for g in self.states
                )
                if -1 not in picks and picks not in seen:
                    seen.add(picks)
                    out.append(sel)
            return out

        return list(self._get(f"sels{sels}{conn}{by_color}", f))

    @property
    def same_shape(self) -> bool:
        return bool(
            self._get(
                "same",
                lambda: all(s.shape == t.shape for s, t in self.pairs),
            )
        )

    @property
    def tiny(self) -> bool:
        """Every target is one cell (a learned table would only memorise the answers)."""
        return all(t.size == 1 for t in self.targets)

    @property
    def smaller(self) -> bool:
        """Some target is smaller than its state in some dimension."""
        return bool(
            self._get(
                "smaller",
                lambda: any(
                    t.shape[0] < s.shape[0] or t.shape[1] < s.shape[1] for s, t in self.pairs
                ),
            )
        )

    @property
    def larger(self) -> bool:
        return bool(
            self._get(
                "larger",
                lambda: any(
                    t.shape[0] > s.shape[0] or t.shape[1] > s.shape[1] for s, t in self.pairs
                ),
            )
        )

    @property
    def grows(self) -> bool:
        """Same shapes, no target has fewer non-background cells than its state and
        some has more (something is painted on)."""

        def f() -> bool:
            pairs = self.pairs
            # the task's background, or each state's commonest colour
            for bgs in (
                [self.bg] * len(pairs),
                [int(np.bincount(s.ravel()).argmax()) for s in self.train],
            ):
                d = [
                    int((t != b).sum()) - int((s != b).sum())
                    for (s, t), b in zip(pairs, bgs, strict=True)
                ]
                if min(d) >= 0 and max(d) > 0:
                    return True
            return False

        return self.same_shape and bool(self._get("grows", f))

    def turned(self, k: int) -> Ctx:
        """This context with every grid under rigid transform ``k`` (see
        :func:`prims.rigid`): the generator of an op's turned twin
        (``op_r(g, k) = unrigid(op(rigid(g, k)), k)``) is the op's generator run on it."""
        return self._get(  # type: ignore[no-any-return]
            f"turned{k}",
            lambda: Ctx(
                [prims.rigid(s, k) for s in self.states],
                [prims.rigid(t, k) for t in self.targets],
                self.bg,
                self.depth,
            ),
        )

    @property
    def bg_varies(self) -> bool:
        """The most common colour is not the same in every train state (then ops may
        take the background as colour role 13)."""
        return bool(
            self._get(
                "bgv",
                lambda: len({int(np.bincount(s.ravel()).argmax()) for s in self.train}) > 1,
            )
        )

    @property
    def state_colors(self) -> list[int]:
        return self._get("scol", lambda: _colors_besides(self.states, self.bg))  # type: ignore[no-any-return]

    @property
    def target_colors(self) -> list[int]:
        return self._get("tcol", lambda: _colors_besides(self.targets, self.bg))  # type: ignore[no-any-return]

    @property
    def new_colors(self) -> list[int]:
        """Colours a target has that its state lacks (in some pair), most frequent first."""

        def f() -> list[int]:
            cnt: dict[int, int] = {}
            for s, t in self.pairs:
                have = set(np.unique(s).tolist())
                for c, k in zip(*np.unique(t, return_counts=True), strict=False):
                    if int(c) not in have:
                        cnt[int(c)] = cnt.get(int(c), 0) + int(k)
            return sorted(cnt, key=lambda c: -cnt[c])

        return self._get("ncol", f)  # type: ignore[no-any-return]

    @property
    def grown_colors(self) -> list[int]:
        """Colours some target has on cells where its state has the background (what
        an op that paints over the background may usefully paint with), sorted."""

        def f() -> list[int]:
            cs: set[int] = set()
            for s, t in self.pairs:
                if s.shape == t.shape:
                    cs |= set(np.unique(t[s == self.bg]).tolist())
            cs.discard(self.bg)
            return sorted(cs)

        return list(self._get("gcol", f))

    @property
    def paint_roles(self) -> list[int]:
        """Colour roles (10-13, see ``prims.role_color``) that name, in every train pair,
        the colour the target gains most, when that colour is not the same in all pairs."""

        def f() -> list[int]:
            gained = []
            for s, t in self.pairs:
                d = np.bincount(t.ravel(), minlength=10) - np.bincount(s.ravel(), minlength=10)
                if d.max() <= 0:
                    return []
                gained.append(int(d.argmax()))
            if len(set(gained)) == 1:
                return []
            out = []
            for r in (10, 11, 12, 13):
                try:
                    roles = [prims.role_color(s, r) for s in self.train]
                except ValueError:
                    continue
                if roles == gained:
                    out.append(r)
            return out

        return list(self._get("proles", f))

    @property
    def paint_colors(self) -> list[int]:
        """Colours worth painting with: new colours first, then the targets' others."""

        def f() -> list[int]:
            new = self.new_colors
            return new[:3] + [c for c in self.target_colors if c not in new][:2]

        return list(self._get("pcol", f))


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


# ---------------------------------------------------------------- generators


def g_plain(ctx: Ctx) -> Iterator[Args]:
    yield ()


def g_bg(ctx: Ctx) -> Iterator[Args]:
    yield (ctx.bg,)


def g_geometry(ctx: Ctx) -> Iterator[Args]:
    yield ()


def g_shift(ctx: Ctx) -> Iterator[Args]:
    """Infer a translation from where the non-background content moved (same in all pairs)."""
    if not ctx.same_shape:
        return
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


def g_keep_color(ctx: Ctx) -> Iterator[Args]:
    for c in ctx.state_colors[:6]:
        yield (c, ctx.bg)
    if len(ctx.state_colors) >= 2:
        yield (10, ctx.bg)
        yield (12, ctx.bg)
    if ctx.same_shape and len(ctx.new_colors) == 1 and ctx.bg_varies:
        # keep one role colour, paint the rest with the one new colour
        for r in (13, 10):
            yield (r, ctx.new_colors[0])


def g_crop_object(ctx: Ctx) -> Iterator[Args]:
    if not ctx.smaller:
        return
    for conn, by_color in ctx.conns():
        sels = ctx.selections(SELECTORS, conn, by_color)
        for keep in (1, 0):
            for sel in sels:
                yield (sel, conn, by_color, ctx.bg, keep)


def g_crop_color(ctx: Ctx) -> Iterator[Args]:
    if not ctx.smaller:
        return
    for c in ctx.state_colors[:8]:
        yield (c,)
    if len(ctx.state_colors) >= 2:
        yield (10,)
        yield (12,)


def g_crop_bg(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller:
        yield (ctx.bg,)


def g_dedup(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller:
        yield ()


def g_map_objects(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape:
        return
    subs: list[Any] = [("flip_h", "x"), ("flip_v", "x"), ("rot180", "x"), ("transpose", "x")]
    subs += [("fill_enclosed", "x", c, ctx.bg) for c in ctx.new_colors[:2]]
    subs += [("symmetrize", "x", k, ctx.bg) for k in ("h", "v", "hv")]
    for conn, by_color in ctx.conns():
        for s in subs:
            yield (s, conn, by_color, ctx.bg)


def _obj_pairs(ctx: Ctx, conn: int, by_color: int) -> list[tuple[Grid, Grid, list[Any]]] | None:
    out = []
    for s, t in ctx.pairs:
        objs = prims.components(s, conn, by_color, ctx.bg)
        if len(objs) > 60:
            return None
        out.append((s, t, objs))
    return out


def g_recolor_by(ctx: Ctx) -> Iterator[Args]:
    """Infer a feature -> colour table from how each object is recoloured."""
    if ctx.tiny or not ctx.same_shape:
        return
    for s, t in ctx.pairs:
        if ((s == ctx.bg) != (t == ctx.bg)).any():
            return
    for conn in (8, 4):
        for by_color in (1, 0):
            data = _obj_pairs(ctx, conn, by_color)
            if data is None:
                continue
            rows: list[tuple[Grid, Any, int]] = []
            ok = True
            for s, t, objs in data:
                for ob in objs:
                    cs = np.unique(t[ob])
                    if cs.size != 1:
                        ok = False
                        break
                    rows.append((s, ob, int(cs[0])))
                if not ok:
                    break
            if not ok or not rows:
                continue
            found = 0
            for feat in FEATURES:
                table: dict[int, int] = {}
                for s, ob, c in rows:
                    v = prims.obj_feature(s, ob, feat, ctx.bg)
                    if table.setdefault(v, c) != c:
                        break
                else:
                    args = _recolor_by_args(ctx, feat, table, conn, by_color)
                    yield from args
                    found += bool(args)
                    if found >= 3:
                        break


def _test_obj_values(ctx: Ctx, feat: str, conn: int, by_color: int) -> set[int]:
    """``feat`` of every object of every test state."""
    out: set[int] = set()
    for x in ctx.states[ctx.n :]:
        objs = prims.components(x, conn, by_color, ctx.bg)
        if len(objs) > 60:
            raise ValueError("too many objects")
        out |= {prims.obj_feature(x, ob, feat, ctx.bg) for ob in objs}
    return out


def _recolor_by_args(
    ctx: Ctx, feat: str, table: dict[int, int], conn: int, by_color: int
) -> list[Args]:
    """``recolor_by`` arguments for a learned table: when one colour serves two or more
    values, that colour as the default and only the exceptions in the table (this
    covers unseen values); the full table only when it covers every test object."""
    out: list[Args] = []
    cols = list(table.values())
    common = max(set(cols), key=lambda c: (cols.count(c), -c))
    rest = sorted([k, v] for k, v in table.items() if v != common)
    if feat != "shape" and rest and 2 * len(rest) <= cols.count(common):
        out.append((feat, rest, common, conn, by_color, ctx.bg))
    try:
        covered = _test_obj_values(ctx, feat, conn, by_color) <= table.keys()
    except ValueError:
        covered = False
    if covered:
        out.append((feat, sorted([k, v] for k, v in table.items()), -1, conn, by_color, ctx.bg))
    return out


def g_recolor_rank(ctx: Ctx) -> Iterator[Args]:
    """Infer a rank -> colour list (objects ranked by size, area, height, width)."""
    if ctx.tiny or not ctx.same_shape:
        return
    for s, t in ctx.pairs:
        if ((s == ctx.bg) != (t == ctx.bg)).any():
            return
    for conn in (8, 4):
        for by_color in (1, 0):
            data = _obj_pairs(ctx, conn, by_color)
            if data is None:
                continue
            if any(np.unique(t[ob]).size != 1 for s, t, objs in data for ob in objs):
                continue
            for feat in ("size", "area", "height", "width"):
                ranks: dict[int, int] = {}
                good = True
                for s, t, objs in data:
                    vals = sorted(
                        {prims.obj_feature(s, ob, feat, ctx.bg) for ob in objs}, reverse=True
                    )
                    for ob in objs:
                        r = vals.index(prims.obj_feature(s, ob, feat, ctx.bg))
                        c = int(np.unique(t[ob])[0])
                        if ranks.setdefault(r, c) != c:
                            good = False
                if good and ranks and len(ranks) <= 9:
                    cols = [ranks.get(i, ranks[max(ranks)]) for i in range(max(ranks) + 1)]
                    yield (feat, cols, conn, by_color, ctx.bg)


def g_filter_objects(ctx: Ctx) -> Iterator[Args]:
    """Infer which objects are kept (target shows them unchanged, the rest erased)."""
    if not ctx.same_shape:
        return
    for conn in (8, 4):
        for by_color in (0, 1):
            data = _obj_pairs(ctx, conn, by_color)
            if data is None:
                continue
            kept: list[tuple[Grid, Any]] = []
            gone: list[tuple[Grid, Any]] = []
            ok = True
            for s, t, objs in data:
                rest = np.ones(s.shape, dtype=bool)
                for ob in objs:
                    rest[ob] = False
                    if (t[ob] == s[ob]).all():
                        kept.append((s, ob))
                    elif (t[ob] == ctx.bg).all():
                        gone.append((s, ob))
                    else:
                        ok = False
                        break
                if not ok or not (t[rest] == s[rest]).all():
                    ok = False
                    break
            if not ok or not gone or not kept:
                continue
            found = 0
            for feat in FEATURES:
                kv = {prims.obj_feature(s, ob, feat, ctx.bg) for s, ob in kept}
                gv = {prims.obj_feature(s, ob, feat, ctx.bg) for s, ob in gone}
                if kv & gv:
                    continue
                try:  # every test object's value must have been seen kept or erased
                    if not _test_obj_values(ctx, feat, conn, by_color) <= kv | gv:
                        continue
                except ValueError:
                    continue
                yield (feat, sorted(kv), 1, conn, by_color, ctx.bg)
                yield (feat, sorted(gv), 0, conn, by_color, ctx.bg)
                found += 1
                if found >= 2:
                    break


def g_extreme(ctx: Ctx) -> Iterator[Args]:
    if ctx.depth > 1:
        return
    for conn, by_color in ctx.conns():
        for sel in ctx.selections(SELECTORS, conn, by_color):
            yield (sel, conn, by_color, ctx.bg)


def g_upscale(ctx: Ctx) -> Iterator[Args]:
    for k in _ratio(ctx, False):
        if k != (1, 1):
            yield k


def g_downscale(ctx: Ctx) -> Iterator[Args]:
    for k in _ratio(ctx, True):
        if k != (1, 1):
            yield k


def g_tile(ctx: Ctx) -> Iterator[Args]:
    for k in _ratio(ctx, False):
        if k != (1, 1):
            yield k


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
                    m = prims.rigid(s, k)
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


def g_kron(ctx: Ctx) -> Iterator[Args]:
    if all(t.shape == (s.shape[0] ** 2, s.shape[1] ** 2) for s, t in ctx.pairs):
        yield (ctx.bg, 0)
        yield (ctx.bg, 1)


def _combine_color(ctx: Ctx) -> list[int]:
    return ctx.target_colors[:3]


def g_split_combine(ctx: Ctx) -> Iterator[Args]:
    if not ctx.smaller:
        return
    for mode in SPLIT_MODES:
        try:
            shapes = [prims.split_parts(s, mode, ctx.bg)[0].shape for s in ctx.train]
        except ValueError:
            continue
        if any(sh != t.shape for sh, t in zip(shapes, ctx.targets, strict=False)):
            continue
        for c in _combine_color(ctx):
            for op in ("and", "or", "xor", "nor", "anb", "bna"):
                yield (mode, op, c, ctx.bg)


def g_split_overlay(ctx: Ctx) -> Iterator[Args]:
    if not ctx.smaller:
        return
    for mode in SPLIT_MODES:
        yield (mode, 0, ctx.bg)
        yield (mode, 1, ctx.bg)


def g_split_pick(ctx: Ctx) -> Iterator[Args]:
    if not ctx.smaller:
        return
    # every selector, but of the parts by index only the first two
    sels = [s for s in PICK_SELS if not s.startswith("i") or s in ("i0", "i1")]
    for mode in SPLIT_MODES:
        for sel in sels:
            yield (mode, sel, ctx.bg)


def g_gravity(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for d in GRAVITY:
            yield (d, ctx.bg)


def g_paint(ctx: Ctx) -> Iterator[Args]:
    """(colour, bg) for ops that paint a new colour onto background cells."""
    if ctx.same_shape:
        for c in ctx.paint_colors[:3] + ctx.paint_roles:
            yield (c, ctx.bg)


def g_fill_bbox(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for c in ctx.new_colors[:2] + ctx.paint_roles:
            for conn, by_color in ctx.conns():
                yield (c, conn, by_color, ctx.bg)


def g_halo(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for c in ctx.paint_colors[:3] + ctx.paint_roles:
            yield (c, 1, ctx.bg)
            yield (c, 0, ctx.bg)
            yield (c, 2, ctx.bg)


def g_border(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for c in ctx.paint_colors[:3] + ctx.paint_roles:
            yield (c,)


def g_rays(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape:
        return
    # a ray has its source's colour and covers background: only colours some target
    # gains on background cells can be rays
    grown = ctx.grown_colors
    colors = [(c, ctx.bg) for c in ctx.state_colors if c in grown][:4]
    if ctx.depth >= 1 and ctx.bg_varies:
        # past the input (e.g. after a crop): background and ray colour as colour roles
        colors += [(r, 13) for r in (10, 11, 12)]
    for c, bg in colors:
        for d in ("h", "v", "hv", "diag", "all", "up", "down", "left", "right"):
            yield (c, d, 1, bg)
            yield (c, d, 0, bg)
        for d in ("ul", "ur", "dl", "dr"):
            yield (c, d, 1, bg)


def g_connect(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape:
        return
    yield (-1, -1, ctx.bg)
    for c in ctx.state_colors[:4]:
        for line in [c, *ctx.new_colors[:2], *ctx.paint_roles]:
            yield (c, line, ctx.bg)


def g_symmetrize(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for k in SYM_KINDS:
            yield (k, ctx.bg)


def _noise_colors(ctx: Ctx) -> list[int]:
    """Colours present in every train state but absent from every target."""
    cs = None
    for s, t in ctx.pairs:
        here = set(np.unique(s).tolist()) - set(np.unique(t).tolist())
        cs = here if cs is None else cs & here
    return sorted(cs or [])


def g_sym_repair(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for c in _noise_colors(ctx):
            yield (c,)


def g_noise_crop(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller:
        for c in ctx.state_colors:
            yield (c,)


def g_count_row(ctx: Ctx) -> Iterator[Args]:
    if all(t.shape[0] == 1 for t in ctx.targets):
        cs = ctx.target_colors[:2]
        if _colors_vary(ctx):
            cs = [*cs, 10]
        for c in cs:
            yield ("cells", c, 4, ctx.bg)
            yield ("objects", c, 8, ctx.bg)
            yield ("objects", c, 4, ctx.bg)


def g_swap_roles(ctx: Ctx) -> Iterator[Args]:
    """Swap two role colours, when the states' colours vary (else the colour-map
    finisher does it)."""
    if ctx.same_shape and _colors_vary(ctx):
        yield (13, 10)
        yield (10, 12)


def g_cell(ctx: Ctx) -> Iterator[Args]:
    if all(t.shape == (1, 1) for t in ctx.targets):
        yield (ctx.bg,)


def g_drop_bg(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller:
        yield (ctx.bg,)


def g_local_rule(ctx: Ctx) -> Iterator[Args]:
    """Infer a neighbourhood -> colour table (coarsest neighbourhood that is consistent)."""
    if ctx.tiny or not ctx.same_shape or ctx.depth > 1:
        return
    if all((s == t).all() for s, t in ctx.pairs):
        return
    found = 0
    for fs in ("n4count", "nsets", "n8count", "rays4any", "rays4", "n4", "n8"):
        lut: dict[int, int] = {}
        own: dict[int, int] = {}
        ok = True
        for s, t in ctx.pairs:
            keys = prims.cell_keys(s, fs, ctx.bg)
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
            test_keys |= set(np.unique(prims.cell_keys(x, fs, ctx.bg)).tolist())
        if not test_keys <= lut.keys():
            continue
        table = sorted([k, v] for k, v in lut.items() if own[k] != v)
        if table and len(table) <= 64:
            yield (fs, table, ctx.bg)
            found += 1
            if found >= 2:
                return


def g_period_repair(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for c in _noise_colors(ctx):
            yield (c,)


def g_lattice_fill(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for c in _noise_colors(ctx):
            yield (c, 0)
    elif ctx.smaller:
        for c in _noise_colors(ctx) or ctx.state_colors[:4]:
            yield (c, 1)


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
    if not ctx.same_shape or ctx.depth > 0:
        return
    seen: list[list[list[int]]] = []
    for radius in (1, 2):
        table = _stamp_table(ctx, radius)
        if table and table not in seen and len(table) <= 40:
            seen.append(table)
            yield (table, ctx.bg)


def g_rays_all(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape or ctx.depth > 1:
        return
    # past the input, the background as a colour role when it is not the same in
    # every state
    bgs = [ctx.bg] if ctx.grows else []
    if ctx.depth >= 1 and ctx.bg_varies:
        bgs.append(13)
    for bg in bgs:
        for d in ("h", "v", "hv", "diag", "all", "up", "down", "left", "right"):
            yield (d, 1, bg)
            yield (d, 0, bg)
        for d in ("ul", "ur", "dl", "dr"):
            yield (d, 1, bg)


def g_attract(ctx: Ctx) -> Iterator[Args]:
    """Colours whose cells are not where they were in some pair (they moved, or moved
    and were recoloured)."""
    if not ctx.same_shape or ctx.depth > 1:
        return
    for c in ctx.state_colors[:5]:
        if any(((s == c) != (t == c)).any() for s, t in ctx.pairs):
            yield (c, 0, ctx.bg)
            yield (c, 1, ctx.bg)
    if _colors_vary(ctx):
        for r in (10, 12):
            yield (r, 0, ctx.bg)
            yield (r, 1, ctx.bg)


def _colors_vary(ctx: Ctx) -> bool:
    """The train states do not all use the same non-background colours."""
    return len({frozenset(np.unique(s).tolist()) - {ctx.bg} for s in ctx.train}) > 1


def g_align(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape or ctx.depth > 1:
        return
    for c in ctx.state_colors[:5]:
        for side in ("top", "bottom", "left", "right"):
            yield (c, side, ctx.bg)


def g_project(ctx: Ctx) -> Iterator[Args]:
    if not ctx.grows:
        return
    for c in ctx.state_colors[:5]:
        yield (c, ctx.bg)
    if ctx.bg_varies:
        yield (10, 13)


def g_paint_template(ctx: Ctx) -> Iterator[Args]:
    if not ctx.same_shape:
        return
    for mode in ("shape", "cell"):
        for conn in (8, 4):
            yield (mode, 0, conn, ctx.bg)
            yield (mode, 1, conn, ctx.bg)


def g_symmetrize_about(ctx: Ctx) -> Iterator[Args]:
    if not ctx.grows or ctx.depth > 1:
        return
    cs = ctx.state_colors[:5] + ([10, 12] if len(ctx.state_colors) > 1 else [])
    for c in cs:
        for kind in ("h", "v", "hv", "rot"):
            yield (c, kind, ctx.bg)


def g_plain_grows(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows:
        yield (ctx.bg,)


def g_cells_map(ctx: Ctx) -> Iterator[Args]:
    """Infer a cell feature -> colour table for grids cut into cells by separators."""
    if not ctx.smaller or ctx.depth > 1:
        return
    cells = []
    for s, t in ctx.pairs:
        try:
            rsegs, csegs = prims._sep_segments(s, ctx.bg)
        except ValueError:
            return
        if (len(rsegs), len(csegs)) != t.shape:
            return
        cells.append(
            [
                (s[y0:y1, x0:x1], int(t[i, j]))
                for i, (y0, y1) in enumerate(rsegs)
                for j, (x0, x1) in enumerate(csegs)
            ]
        )
    found: list[tuple[int, str, dict[int, int]]] = []
    for feat in GRID_FEATURES:
        lut: dict[int, int] = {}
        ok = True
        for row in cells:
            for cell, c in row:
                if lut.setdefault(prims.grid_feature(cell, feat, ctx.bg), c) != c:
                    ok = False
                    break
            if not ok:
                break
        if ok and len(set(lut.values())) > 1:
            # every test cell's feature value must have been seen in training
            for x in ctx.states[ctx.n :]:
                try:
                    rsegs, csegs = prims._sep_segments(x, ctx.bg)
                except ValueError:
                    ok = False
                    break
                for y0, y1 in rsegs:
                    for x0, x1 in csegs:
                        ok &= prims.grid_feature(x[y0:y1, x0:x1], feat, ctx.bg) in lut
            if ok:
                found.append((len(lut), feat, lut))
    found.sort(key=lambda f: f[0])
    for _, feat, lut in found[:2]:
        yield (feat, sorted([k, v] for k, v in lut.items() if v != ctx.bg), ctx.bg)


def g_fill_regions(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows:
        for c in ctx.paint_colors[:3]:
            yield ("largest", c, ctx.bg)
            yield ("smallest", c, ctx.bg)


def g_flood_from(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows:
        for c in ctx.state_colors[:6]:
            yield (c, ctx.bg)


def g_canvas(ctx: Ctx) -> Iterator[Args]:
    for k in _ratio(ctx, False):
        if k != (1, 1):
            yield (*k, ctx.bg)


def g_repeat_bbox(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for axis in ("v", "h", "hv"):
            yield (axis, ctx.bg)


def g_fold(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller:
        yield ("h", ctx.bg)
        yield ("v", ctx.bg)


def g_line_majority(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        yield ("rows",)
        yield ("cols",)
        yield ("auto",)


def g_continue_period(ctx: Ctx) -> Iterator[Args]:
    if ctx.grows and ctx.depth <= 1:
        for d in GRAVITY:
            yield (d, ctx.bg)


def g_color_list(ctx: Ctx) -> Iterator[Args]:
    """Targets one cell wide (or high) listing distinct colours of the state."""
    for axis, k in (("v", 1), ("h", 0)):
        if all(t.shape[k] == 1 for t in ctx.targets):
            for order in ("desc", "asc", "desc1"):
                yield (order, axis, ctx.bg)


def g_stripes(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape and all(int((s != ctx.bg).sum()) == 2 for s in ctx.states):
        yield (ctx.bg,)


def g_spiral(ctx: Ctx) -> Iterator[Args]:
    """Targets drawn on blank inputs: the targets' one non-background colour."""
    if not ctx.same_shape or any((s != s.flat[0]).any() for s in ctx.states):
        return
    for c in ctx.new_colors[:1]:
        yield (c,)


def g_count_fill(ctx: Ctx) -> Iterator[Args]:
    """Targets of one shape holding one colour and the background."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or not ctx.smaller:
        return
    h, w = shapes.pop()
    if h * w > 30:
        return
    cols = set()
    for t in ctx.targets:
        cols |= set(np.unique(t).tolist())
    cols.discard(ctx.bg)
    if len(cols) != 1:
        return
    c = cols.pop()
    for what in ("objects", "big", "cells"):
        yield (what, c, h, w, ctx.bg)


def g_smaller_plain(ctx: Ctx) -> Iterator[Args]:
    if ctx.smaller:
        yield ()


def g_upscale_by(ctx: Ctx) -> Iterator[Args]:
    if ctx.larger and not _ratio(ctx, False):
        yield ("ncolors", ctx.bg)
        yield ("ncells", ctx.bg)


def g_object_gravity(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        for d in GRAVITY:
            for conn, _ in ctx.conns(((8, 0), (4, 0))):
                yield (d, conn, ctx.bg)


def g_move_to_contact(ctx: Ctx) -> Iterator[Args]:
    if ctx.same_shape:
        sels = ("smallest", "largest", "unique_color", "common_color", "top", "bottom")
        for by_color in (1, 0):
            for sel in ctx.selections(sels, 8, by_color):
                yield (sel, 8, by_color, ctx.bg)


def g_const_grid(ctx: Ctx) -> Iterator[Args]:
    """Every target one colour and one shape: that colour, or the role naming it."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1:
        return
    cols = []
    for t in ctx.targets:
        if (t != t.flat[0]).any():
            return
        cols.append(int(t.flat[0]))
    h, w = shapes.pop()
    if len(set(cols)) == 1:
        yield (h, w, cols[0])
        return
    for r in (10, 11, 12, 13):
        try:
            if [prims.role_color(s, r) for s in ctx.train] == cols:
                yield (h, w, r)
        except ValueError:
            continue


def _windows(s: Grid, t: Grid) -> set[tuple[int, int]]:
    """Top-left corners where ``t`` occurs in ``s``, also given from the bottom/right."""
    gh, gw = s.shape
    h, w = t.shape
    out: set[tuple[int, int]] = set()
    if h > gh or w > gw:
        return out
    for y in range(gh - h + 1):
        for x in range(gw - w + 1):
            if s[y, x] == t[0, 0] and (s[y : y + h, x : x + w] == t).all():
                for yy in (y, y + h - gh - 1):
                    for xx in (x, x + w - gw - 1):
                        out.add((yy, xx))
    return out


def g_crop_at(ctx: Ctx) -> Iterator[Args]:
    """A fixed window (anchored at any corner) that shows the target in every pair."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or not ctx.smaller:
        return
    common: set[tuple[int, int]] | None = None
    for s, t in ctx.pairs:
        here = _windows(s, t)
        common = here if common is None else common & here
        if not common:
            return
    h, w = shapes.pop()
    for y, x in sorted(common or [], key=lambda p: (abs(p[0]), abs(p[1])))[:2]:
        yield (y, x, h, w)


def g_classify(ctx: Ctx) -> Iterator[Args]:
    """Uniform targets of one shape whose colour is a function of a grid feature that
    every test input shares with some train input."""
    shapes = {t.shape for t in ctx.targets}
    if len(shapes) != 1 or ctx.depth > 1:
        return
    cols = []
    for t in ctx.targets:
        if (t != t.flat[0]).any():
            return
        cols.append(int(t.flat[0]))
    if len(set(cols)) < 2:
        return
    h, w = shapes.pop()
    for feat in GRID_FEATURES:
        lut: dict[int, int] = {}
        ok = True
        for s, c in zip(ctx.train, cols, strict=False):
            if lut.setdefault(prims.grid_feature(s, feat, ctx.bg), c) != c:
                ok = False
                break
        if not ok or len(lut) < 2:
            continue
        if len(lut) == len(cols) and any(k != v for k, v in lut.items()):
            continue  # one key per pair: a memorised table, not a rule
        if all(prims.grid_feature(x, feat, ctx.bg) in lut for x in ctx.states[ctx.n :]):
            yield (feat, sorted([k, v] for k, v in lut.items()), h, w, ctx.bg)


def g_extend_period(ctx: Ctx) -> Iterator[Args]:
    shapes = {t.shape for t in ctx.targets}
    if ctx.larger and len(shapes) == 1:
        h, w = shapes.pop()
        yield (h, w)


def _specs(states: list[Grid], cols: list[int]) -> list[int]:
    """Colour parameters (a literal, or roles 10-13) that resolve to ``cols[i]`` on
    ``states[i]`` for every i."""
    out = [cols[0]] if len(set(cols)) == 1 else []
    for r in (10, 11, 12, 13):
        try:
            if [prims.role_color(s, r) for s in states] == cols:
                out.append(r)
        except ValueError:
            continue
    return out


def g_replace_color(ctx: Ctx) -> Iterator[Args]:
    """One colour replaced by another in every pair, colours possibly varying per pair
    (then given as roles)."""
    if not ctx.same_shape:
        return
    src, dst = [], []
    for s, t in ctx.pairs:
        diff = s != t
        if not diff.any():
            return
        was, now = np.unique(s[diff]), np.unique(t[diff])
        if was.size != 1 or now.size != 1 or (s == was[0]).sum() != diff.sum():
            return
        src.append(int(was[0]))
        dst.append(int(now[0]))
    if len(set(src)) == 1 and len(set(dst)) == 1:
        return  # a plain colour map, found by the recolor finisher
    for a in _specs(ctx.train, src)[:2]:
        for b in _specs(ctx.train, dst)[:2]:
            yield (a, b)


GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {
    "rot90": g_geometry,
    "rot180": g_geometry,
    "rot270": g_geometry,
    "flip_h": g_geometry,
    "flip_v": g_geometry,
    "transpose": g_geometry,
    "antitranspose": g_geometry,
    "shift": g_shift,
    "crop_nonbg": g_crop_bg,
    "crop_object": g_crop_object,
    "crop_color": g_crop_color,
    "crop_inside": g_crop_color,
    "drop_bg_lines": g_drop_bg,
    "dedup_lines": g_dedup,
    "upscale": g_upscale,
    "downscale": g_downscale,
    "tile": g_tile,
    "tile_t": g_tile_t,
    "kron_self": g_kron,
    "split_combine": g_split_combine,
    "split_overlay": g_split_overlay,
    "split_pick": g_split_pick,
    "recolor_by": g_recolor_by,
    "filter_objects": g_filter_objects,
    "recolor_rank": g_recolor_rank,
    "keep_extreme": g_extreme,
    "remove_extreme": g_extreme,
    "map_objects": g_map_objects,
    "gravity": g_gravity,
    "fill_enclosed": g_paint,
    "fill_bbox": g_fill_bbox,
    "halo": g_halo,
    "interior": g_paint,
    "border": g_border,
    "rays": g_rays,
    "connect": g_connect,
    "symmetrize": g_symmetrize,
    "symmetrize_bbox": g_symmetrize,
    "sym_repair": g_sym_repair,
    "crop_noise_repair": g_noise_crop,
    "keep_color": g_keep_color,
    "replace_color": g_replace_color,
    "erase_color": g_keep_color,
    "majority_recolor": g_bg,
    "minority_recolor": g_bg,
    "count_row": g_count_row,
    "swap_colors": g_swap_roles,
    "local_rule": g_local_rule,
    "period_repair": g_period_repair,
    "lattice_fill": g_lattice_fill,
    "stamp": g_stamp,
    "rays_all": g_rays_all,
    "attract": g_attract,
    "align": g_align,
    "symmetrize_about": g_symmetrize_about,
    "stripes": g_stripes,
    "color_list": g_color_list,
    "fold": g_fold,
    "line_majority": g_line_majority,
    "continue_period": g_continue_period,
    "flood_from": g_flood_from,
    "canvas": g_canvas,
    "repeat_bbox": g_repeat_bbox,
    "fill_regions": g_fill_regions,
    "cells_map": g_cells_map,
    "fill_color_bbox": g_plain_grows,
    "spiral": g_spiral,
    "count_fill": g_count_fill,
    "project": g_project,
    "paint_template": g_paint_template,
    "crop_period": g_smaller_plain,
    "cells_to_pixels": g_crop_bg,
    "upscale_by": g_upscale_by,
    "object_gravity": g_object_gravity,
    "move_to_contact": g_move_to_contact,
    "trim": g_smaller_plain,
    "classify": g_classify,
    "extend_period": g_extend_period,
    "crop_at": g_crop_at,
    "const_grid": g_const_grid,
    "connect_diag": g_connect,
    "most_common_color_cell": g_cell,
}
"""Op name -> generator of inferred argument tuples (ops absent here are only reached
by mutation)."""


def _extensions() -> None:
    from atlas_actors.arc.dsl import extension_modules

    for mod in extension_modules():
        GENERATORS.update(mod.GENERATORS)


_extensions()


def pair_cmap(s: Grid, t: Grid) -> dict[int, int] | None:
    """The cell-wise colour map taking ``s`` to ``t`` (None if the shapes differ or a
    colour would go to two colours)."""
    if s.shape != t.shape:
        return None
    m: dict[int, int] = {}
    for p in np.unique(s.ravel() * 10 + t.ravel()).tolist():
        a, b = divmod(p, 10)
        if m.setdefault(a, b) != b:
            return None
    return m


def infer_cmap(states: list[Grid], targets: list[Grid]) -> list[list[int]] | None:
    """A consistent cell-wise colour map taking every state to its target, if one exists."""
    lut: dict[int, int] = {}
    for s, t in zip(states, targets, strict=False):
        m = pair_cmap(s, t)
        if m is None:
            return None
        for a, b in m.items():
            if lut.setdefault(a, b) != b:
                return None
    return [[a, b] for a, b in sorted(_complete_swaps(lut).items()) if a != b]


def _complete_swaps(lut: dict[int, int]) -> dict[int, int]:
    """A map whose changes are swaps (some pair ``a <-> b`` both seen, and every change
    whose target is a colour seen in the states maps it back) gets the missing halves
    of its one-way changes: ``a -> b`` with ``b`` never in a state adds ``b -> a``."""
    moves = {a: b for a, b in lut.items() if a != b}
    if not any(lut.get(b) == a for a, b in moves.items()):
        return lut
    if any(b in lut and lut[b] != a for a, b in moves.items()):
        return lut
    return {**lut, **{b: a for a, b in moves.items() if b not in lut}}
