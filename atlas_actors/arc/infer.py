"""Parameter inference: which parameters of each op are worth trying for a task.

A generator gets a :class:`Ctx` (the current intermediate grids for every train and test
input, the train targets, the background colour) and yields argument tuples for one op.
Parameters that can be read off the train pairs (scale factors, tile transforms,
colour maps, object recolouring tables, target colours) are inferred, not guessed.

Each op declares its generator (see :mod:`atlas_actors.arc.registry`); this module has
the context and the inference helpers that generators of several op families share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from atlas_actors.arc.grids import (
    Grid,
    components,
    object_labels,
    pick_index,
    rigid_transform,
    role_color,
    sep_segments,
)
from atlas_actors.arc.registry import When

Args = tuple[Any, ...]


def _colors_besides(grids: list[Grid], bg: int) -> list[int]:
    """The colours in any of ``grids`` other than ``bg``, sorted."""
    cs: set[int] = set()
    for g in grids:
        cs |= set(np.unique(g).tolist())
    cs.discard(bg)
    return sorted(cs)


@dataclass
class Ctx:
    """What a generator may look at: intermediate grids (train then test) and targets."""

    states: list[Grid]
    targets: list[Grid]
    bg: int
    depth: int = 0
    cache: dict[Any, Any] = field(default_factory=dict)
    inputs: list[Grid] | None = None
    """The task's train inputs, where the states began (None when not known)."""

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

    def holds(self, when: When) -> bool:
        """Every condition of ``when`` holds of this context (one that cannot be
        evaluated does not)."""
        got = self.cache.get(when)
        if got is None:
            try:
                got = all(_CONDITIONS[c](self) for c in when)
            except Exception:
                got = False
            self.cache[when] = got
        return bool(got)

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
                sig = b"|".join(
                    object_labels(g, conn, by_color, self.bg).tobytes() for g in self.states
                )
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
            objs = [(g, components(g, conn, by_color, self.bg)) for g in self.states]
            for sel in sels:
                picks = tuple(pick_index(g, o, sel, self.bg) for g, o in objs)
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
        :func:`atlas_actors.arc.grids.rigid_transform`): the generator of an op's turned
        twin (``op_r(g, k) = unrigid(op(rigid(g, k)), k)``) is the op's generator run on it."""
        return self._get(  # type: ignore[no-any-return]
            f"turned{k}",
            lambda: Ctx(
                [rigid_transform(s, k) for s in self.states],
                [rigid_transform(t, k) for t in self.targets],
                self.bg,
                self.depth,
                inputs=None
                if self.inputs is None
                else [rigid_transform(g, k) for g in self.inputs],
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
        """Colour roles (10-13, see :func:`atlas_actors.arc.grids.role_color`) that name,
        in every train pair, the colour the target gains most, when that colour is not the
        same in all pairs."""

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
                    roles = [role_color(s, r) for s in self.train]
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


def g_crop_bg(ctx: Ctx) -> Iterator[Args]:
    yield (ctx.bg,)


def g_connect(ctx: Ctx) -> Iterator[Args]:
    yield (-1, -1, ctx.bg)
    for c in ctx.state_colors[:4]:
        for line in [c, *ctx.new_colors[:2], *ctx.paint_roles]:
            yield (c, line, ctx.bg)


def noise_colors(ctx: Ctx) -> list[int]:
    """Colours present in every train state but absent from every target."""
    cs = None
    for s, t in ctx.pairs:
        here = set(np.unique(s).tolist()) - set(np.unique(t).tolist())
        cs = here if cs is None else cs & here
    return sorted(cs or [])


def colors_vary(ctx: Ctx) -> bool:
    """The train states do not all use the same non-background colours."""
    return len({frozenset(np.unique(s).tolist()) - {ctx.bg} for s in ctx.train}) > 1


def color_specs(states: list[Grid], cols: list[int]) -> list[int]:
    """Colour parameters (a literal, or roles 10-13) that resolve to ``cols[i]`` on
    ``states[i]`` for every i."""
    out = [cols[0]] if len(set(cols)) == 1 else []
    for r in (10, 11, 12, 13):
        try:
            if [role_color(s, r) for s in states] == cols:
                out.append(r)
        except ValueError:
            continue
    return out


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
    pairs = list(zip(states, targets, strict=False))
    if any(s.shape != t.shape for s, t in pairs):
        return None
    return cmap_of_codes(np.concatenate([(s * 10 + t).ravel() for s, t in pairs]))


def cmap_of_codes(codes: Grid) -> list[list[int]] | None:
    """:func:`infer_cmap` of cells given as ``10 * state colour + target colour``."""
    lut: dict[int, int] = {}
    for p in np.flatnonzero(np.bincount(codes, minlength=100)).tolist():
        a, b = divmod(p, 10)
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


def fits(ctx: Ctx, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` is the target for every train pair."""
    try:
        return all(np.array_equal(fn(s, *args), t) for s, t in ctx.pairs)
    except ValueError:
        return False


def paints_in(pairs: list[tuple[Grid, Grid]], c: int, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` changes some cells of every train state, and the target has
    colour ``c`` on all of them."""
    for s, t in pairs:
        try:
            new = fn(s, *args) != s
        except ValueError:
            return False
        if not new.any() or (t[new] != c).any():
            return False
    return True


def color_change(ctx: Ctx) -> tuple[list[int], list[int]] | None:
    """Per pair, the one colour the changed cells had and the one they got (None if
    any pair changes more than one colour into one colour, or nothing changes)."""
    src, dst = [], []
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return None
        a, b = np.unique(s[d]), np.unique(t[d])
        if a.size != 1 or b.size != 1:
            return None
        src.append(int(a[0]))
        dst.append(int(b[0]))
    return src, dst


def pair_cmaps(ctx: Ctx) -> list[dict[int, int]] | None:
    """Per pair, the cell-wise colour map state -> target (None if there is none)."""
    out = []
    for s, t in ctx.pairs:
        m = pair_cmap(s, t)
        if m is None:
            return None
        out.append(m)
    return out


def painted_only(ctx: Ctx) -> bool:
    """Only background cells change (nothing is erased or recoloured)."""
    return ctx.grows and all(not (s[s != t] != ctx.bg).any() for s, t in ctx.pairs)


def has_cells(ctx: Ctx) -> bool:
    """Every train state is cut into two or more cells by separator lines."""
    try:
        for s in ctx.train:
            rsegs, csegs = sep_segments(s, ctx.bg)
            if len(rsegs) * len(csegs) < 2:
                return False
    except ValueError:
        return False
    return True


def one_new_color(ctx: Ctx) -> int | None:
    """The one colour every changed cell gets, in every pair (None if some pair does
    not change or the changed cells get several colours)."""
    dst: set[int] = set()
    for s, t in ctx.pairs:
        d = s != t
        if not d.any():
            return None
        dst |= set(np.unique(t[d]).tolist())
        if len(dst) > 1:
            return None
    return dst.pop() if dst else None


def painted_cells(ctx: Ctx, c: int) -> list[tuple[Grid, Grid]] | None:
    """Per pair (state, cells that became ``c``), when every change paints ``c`` over
    the background and some pair paints something."""
    out = []
    for s, t in ctx.pairs:
        diff = s != t
        if not ((t[diff] == c).all() and (s[diff] == ctx.bg).all()):
            return None
        out.append((s, diff))
    return out if any(d.any() for _, d in out) else None


def moved_colors(ctx: Ctx) -> list[int] | None:
    """The colours whose cells are the same in every train pair (the anchors), when
    the pairs have the same shapes, keep their colour counts and something moves."""
    if not ctx.same_shape:
        return None
    fixed = set(ctx.state_colors)
    moved = False
    for s, t in ctx.pairs:
        if not np.array_equal(
            np.bincount(s.ravel(), minlength=10), np.bincount(t.ravel(), minlength=10)
        ):
            return None
        if not (s == t).all():
            moved = True
        fixed = {c for c in fixed if np.array_equal(s == c, t == c)}
    return sorted(fixed) if moved else None


def some_change(ctx: Ctx) -> bool:
    return ctx.depth <= 1 and ctx.same_shape and any((s != t).any() for s, t in ctx.pairs)


def closer_than_inputs(ctx: Ctx) -> bool:
    """The train states are nearer their targets than the task's inputs
    (:attr:`Ctx.inputs`) were: they have the targets' shapes where the inputs did not,
    or, the shapes being the same, more of their cells are right. False when the inputs
    are not known."""
    if ctx.inputs is None or not ctx.same_shape:
        return False
    pairs = list(zip(ctx.inputs, ctx.targets, strict=True))
    if any(i.shape != t.shape for i, t in pairs):
        return True
    right = sum(int((s == t).sum()) for s, t in ctx.pairs)
    return right > sum(int((i == t).sum()) for i, t in pairs)


def bg_readings(ctx: Ctx, *extra: int) -> list[int]:
    """Background readings worth trying: the task's, then ``extra`` colours, then each
    grid's own commonest colour (role 13) when that is not the task's on some grid,
    train or test (a test grid with another background fails every op given the
    task's)."""
    own = ctx._get("own_bg", lambda: [role_color(s, 13) for s in ctx.states])
    return list(dict.fromkeys([ctx.bg, *extra, *([13] if any(b != ctx.bg for b in own) else [])]))


def fits_bg(ctx: Ctx, fn: Callable[..., Grid], *args: Any) -> bool:
    """``fn(state, *args)`` is the target for every train pair, with a colour role in
    the last argument (the background) read on each state."""
    *rest, bg = args
    try:
        return all(np.array_equal(fn(s, *rest, role_color(s, bg)), t) for s, t in ctx.pairs)
    except ValueError:
        return False


def resolved_pairs(ctx: Ctx, c: int) -> list[tuple[tuple[Grid, Grid], int]]:
    """The train pairs, each with the colour (role) ``c`` read on its state."""
    return [((s, t), role_color(s, c)) for s, t in ctx.pairs]


def painted_bg(ctx: Ctx, bg: int) -> bool:
    """Same shapes, some cells changed, and only background cells (``bg`` read on each
    state, a colour role allowed)."""
    return (
        ctx.same_shape
        and any((s != t).any() for s, t in ctx.pairs)
        and all((s[s != t] == role_color(s, bg)).all() for s, t in ctx.pairs)
    )


def painted_fits(ctx: Ctx, fn: Callable[..., Grid]) -> Iterator[Args]:
    """``(bg,)`` for each background reading (see :func:`bg_readings`) under which only
    background cells are painted and ``fn(state, bg)`` is every target."""
    if ctx.depth > 1:
        return
    for bg in bg_readings(ctx):
        if painted_bg(ctx, bg) and fits_bg(ctx, fn, bg):
            yield (bg,)


def same_counts(ctx: Ctx) -> bool:
    """Every target has its state's number of cells of each colour."""
    return all(
        np.array_equal(np.bincount(s.ravel(), minlength=10), np.bincount(t.ravel(), minlength=10))
        for s, t in ctx.pairs
    )


_CONDITIONS: dict[When, Callable[[Ctx], bool]] = {
    When.SAME_SHAPE: lambda c: c.same_shape,
    When.RESHAPED: lambda c: not c.same_shape,
    When.SMALLER: lambda c: c.smaller,
    When.NOT_SMALLER: lambda c: not c.smaller,
    When.LARGER: lambda c: c.larger,
    When.GROWS: lambda c: c.grows,
    When.PAINTED: painted_only,
    When.CHANGED: some_change,
    When.SHALLOW: lambda c: c.depth <= 1,
    When.FIRST: lambda c: c.depth == 0,
    When.NOT_TINY: lambda c: not c.tiny,
}
"""What each :class:`~atlas_actors.arc.registry.When` condition tests."""
