"""Per-task enumerative search over the DSL (icecuber-style, in Python).

States are the intermediate grids a program prefix produces for every train and test
input. A best-first search expands states with every op whose parameters
:mod:`atlas_actors.arc.infer` can infer, drops duplicate states (same grids for every
input), and checks each new state with two finishers: exact match, and a consistent
cell-wise colour map. Budgets are counted in op applications, so runs are
deterministic.

Only the train pairs and the test *inputs* are used; a program must also run on the
test inputs to count.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from atlas_actors.arc.dsl import OPS, Expr, compile_program, expr_size, program_of
from atlas_actors.arc.grids import rigid_transform, role_color, selection_tied
from atlas_actors.arc.infer import Ctx, cmap_of_codes
from atlas_actors.arc.ops import GENERATED, GENERATORS
from atlas_actors.arc.ops.assembly import paint_fg
from atlas_actors.arc.registry import SUB_KINDS, K

Grid = np.ndarray[Any, Any]

DIVERSITY = 0.03
"""Priority lost per state already expanded in the same branch (same first op)."""

MAX_DEPTH = 3
"""Longest op chain the enumeration builds (a final colour map comes on top)."""

HELD_OUT_SIMILARITY = 0.9
"""Share of a held-out pair's cells a program must get right (see
:meth:`TaskSolver.held_out`)."""


MAX_STATES = 300_000
"""States a :class:`TaskSolver` keeps at most (about 1.6 KB each when packed, so some
500 MB), which bounds its memory however long it searches; at 10,000 op applications a
second a 60 s search makes about 330,000."""

DEEPEN_AFTER = 20_000
"""Op applications after which the depth limit of :class:`TaskSolver` first rises past
its ``max_depth`` (then after 4x as many again for each further level)."""

INF = float("inf")


@dataclass(frozen=True)
class Stop:
    """When a search step ends early, besides its budget of op applications: a cap on
    this thread's CPU time (``time.thread_time()`` value; a safety net for huge grids)
    and the wall-clock deadline of the search it serves (``time.monotonic()`` value).
    With neither, a step never reads a clock, so what it finds depends on its budget
    alone."""

    cpu: float = INF
    wall: float | None = None

    @classmethod
    def after(cls, max_seconds: float = INF, deadline: float | None = None) -> Stop:
        """At most ``max_seconds`` of CPU time from now, and not past ``deadline``."""
        return cls(INF if max_seconds == INF else time.thread_time() + max_seconds, deadline)

    def passed(self) -> bool:
        if self.wall is not None and time.monotonic() >= self.wall:
            return True
        return self.cpu != INF and time.thread_time() >= self.cpu


VIEW_CHECKED = 12
"""Exact programs (the simplest first) whose answers :meth:`TaskSolver.view_breaks`
checks when views are checked."""


NEVER = Stop()
"""No clock: a step bounded by its budget alone."""


class Node:
    """A state of the search: a program (``expr``) and its grids for the train then
    test inputs (``outs``).

    Most states are never expanded (the frontier holds them in case they are), so the
    solver *packs* a queued state: its grids are kept as one byte per cell
    (:func:`_grid_raw`, the bytes its grid keys hash) instead of numpy arrays of eight,
    and ``outs`` rebuilds the same arrays (same values, shapes and dtypes) when read."""

    __slots__ = (
        "_dtypes",
        "_outs",
        "_raws",
        "base",
        "depth",
        "exact",
        "expr",
        "grid_keys",
        "n_exact",
        "score",
        "tainted",
    )  # fmt: skip

    def __init__(
        self,
        expr: Expr,
        outs: list[Grid],
        score: float,
        depth: int,
        exact: bool = False,
        base: float = 0.0,
        tainted: bool = False,
        grid_keys: list[int] | None = None,
        n_exact: int | None = None,
        raws: list[bytes] | None = None,
    ) -> None:
        self.expr = expr
        self._outs: list[Grid] | None = outs
        self._raws = raws
        """:func:`_grid_raw` of each grid (set when known or packed)."""
        self._dtypes: list[Any] | None = None
        """The grids' dtypes when packed, None when all are int64."""
        self.score = score
        self.depth = depth
        self.exact = exact
        self.base = base
        """Search priority before the diversity penalty."""
        self.tainted = tainted
        """Some op on the way changed no train state but a test state: the train pairs
        do not support what the program does to the test inputs, so it is never a
        solution (it may still lead the search to one)."""
        self.grid_keys = grid_keys
        """:func:`_grid_key` of each of ``outs`` (set when first needed)."""
        self.n_exact = n_exact
        """Train pairs ``outs`` gets exactly right (set when known)."""

    def __repr__(self) -> str:
        return f"Node({self.expr!r}, score={self.score:.3f}, depth={self.depth})"

    @property
    def outs(self) -> list[Grid]:
        if self._outs is not None:
            return self._outs
        assert self._raws is not None
        dtypes = self._dtypes or [_INT64] * len(self._raws)
        return [_from_raw(r, d) for r, d in zip(self._raws, dtypes, strict=True)]

    @property
    def packed(self) -> bool:
        return self._outs is None

    def pack(self) -> None:
        """Keep the grids as bytes only (``outs`` rebuilds them)."""
        outs = self._outs
        if outs is None:
            return
        if self._raws is None:
            self._raws = [_grid_raw(g) for g in outs]
        if any(g.dtype != _INT64 for g in outs):
            self._dtypes = [g.dtype for g in outs]
        self._outs = None

    def unpack(self) -> None:
        """Hold the grids as arrays again (a state about to be expanded)."""
        if self._outs is None:
            self._outs = self.outs


_INT64 = np.dtype(np.int64)


def _from_raw(raw: bytes, dtype: Any) -> Grid:
    """The grid :func:`_grid_raw` gave ``raw`` for, as a fresh array of ``dtype``."""
    return np.frombuffer(raw, dtype=np.int8, offset=2).reshape(raw[0], raw[1]).astype(dtype)


def pair_score(outs: list[Grid], targets: list[Grid]) -> tuple[float, int]:
    """``(fitness, exact pairs)`` as the environment computes it."""
    exact = 0
    sim = 0.0
    for o, t in zip(outs, targets, strict=False):
        if o.shape == t.shape:
            right = int(np.count_nonzero(o == t))
            sim += right / t.size  # the mean of the cell matches, as a float
            exact += right == t.size
    n = len(targets)
    return (exact + sim / n) / (n + 1), exact


def _valid(g: Any) -> bool:
    if not (
        isinstance(g, np.ndarray)
        and g.ndim == 2
        and 1 <= g.shape[0] <= 30
        and 1 <= g.shape[1] <= 30
        and g.dtype.kind in "iu"
    ):
        return False
    # one reduction instead of min and max: as unsigned, a negative value is huge
    return int(g.view(_UNSIGNED[g.dtype.itemsize]).max()) <= 9


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _grid_raw(g: Grid) -> bytes:
    """A valid grid as bytes: its height and width, then one byte per cell."""
    return bytes(g.shape) + g.astype(np.int8).tobytes()


def _grid_key(g: Grid) -> int:
    return hash(_grid_raw(g))


def _keys_key(grid_keys: list[int]) -> int:
    """:func:`_key` from the grids' :func:`_grid_key` values."""
    return hash(tuple(grid_keys))


def _key(outs: list[Grid]) -> int:
    return _keys_key([_grid_key(o) for o in outs])


APPLY_CACHE_SIZE = 200_000
"""Entries (one op with its arguments on one grid) an :class:`ApplyCache` holds before
it starts over."""

APPLY_CACHE_BYTES = 384 * 2**20
"""Bytes of cached output grids an :class:`ApplyCache` holds before it starts over (big
grids reach this before :data:`APPLY_CACHE_SIZE`)."""

Cached = tuple[Grid, int, bytes]
"""An op's output: the grid, its :func:`_grid_key` and its :func:`_grid_raw`."""


class ApplyCache:
    """Op outputs by (op, arguments, input grid), shared by a task's solver and its
    held-out views: a view enumerates the same grids as the full task (one train input
    becomes a test input), so most of what it applies the full search, or another view,
    has applied already. A failure is kept too, as ``None``. ``size`` 0 turns it off.
    It starts over when it holds ``size`` entries or ``max_bytes`` of grids; what it
    holds changes the CPU time only, never what a search finds."""

    def __init__(self, size: int = APPLY_CACHE_SIZE, max_bytes: int = APPLY_CACHE_BYTES) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.bytes = 0
        """Bytes of the grids held (arrays and their raw forms)."""
        self.entries: dict[tuple[int, int], Cached | None] = {}
        """The output, or None for a failure."""
        self.hits = 0
        self.lookups = 0

    def get(self, key: tuple[int, int]) -> Cached | Literal[False] | None:
        """The cached output, ``None`` for a cached failure, ``False`` when unknown."""
        self.lookups += 1
        try:
            got = self.entries[key]
        except KeyError:
            return False
        self.hits += 1
        return got

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0

    def put(self, key: tuple[int, int], out: Cached | None) -> None:
        if self.size <= 0:  # off
            return
        if len(self.entries) >= self.size or self.bytes >= self.max_bytes:
            self.clear()
        self.entries[key] = out
        if out is not None:
            self.bytes += out[0].nbytes + len(out[2]) + 200  # with the objects' headers


@dataclass
class TaskSolver:
    """Enumeration state for one task, kept across proposer calls."""

    train: list[tuple[Grid, Grid]]
    test_inputs: list[Grid]
    bg: int = 0
    seen: set[int] = field(default_factory=set)
    frontier: list[tuple[float, int, Node]] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    exact: list[Node] = field(default_factory=list)
    applications: int = 0
    expanded: dict[str, int] = field(default_factory=dict)
    memo: dict[Any, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    pieces: dict[bytes, Node] = field(default_factory=dict)
    """Target-shaped states whose every non-background train cell is right, by the set
    of cells they get right (the first, simplest, state for each set)."""
    bases: dict[bytes, Node] = field(default_factory=dict)
    """Target-shaped states by the set of train cells they get wrong (packed bits)."""
    pinned: Node | None = None
    """The first solution when :meth:`search_alternative` began: it stays first (the
    search for an alternative only looks for the second attempt)."""
    composes: bool = True
    """Whether :meth:`search` tries :meth:`compose` when nothing fits (views of
    :meth:`held_out` do not: with a pair left out, a greedy cover fits by accident)."""
    views: list[TaskSolver] = field(default_factory=list)
    """One enumeration per held-out train pair (see :meth:`held_out`)."""
    near: set[int] = field(default_factory=set)
    """Answers (all grids) of the programs :meth:`held_out` has returned."""
    cache: ApplyCache = field(default_factory=ApplyCache)
    """Op outputs per input grid, shared with the views."""
    max_depth: int = MAX_DEPTH
    """Longest op chain the enumeration builds at first."""
    deepen_after: int | None = DEEPEN_AFTER
    """Op applications after which the depth limit rises by one, then 4x as many for
    each next level; the limit also rises whenever no open state is left under it.
    None keeps ``max_depth`` for good."""
    parked: list[Node] = field(default_factory=list)
    """States at the depth limit, expanded once it rises."""
    check_views: bool = False
    """Whether :meth:`solutions` ranks programs whose test answer breaks a view they
    keep on every train input (:meth:`view_breaks`) after those that keep theirs."""
    max_states: int = MAX_STATES
    """States kept at most: past it, the open states with the worst priorities are
    dropped (see :meth:`_prune`)."""
    pruned: int = 0
    """States dropped so far to stay under ``max_states``."""
    _composed: tuple[int, int] = (0, 0)
    _counter: int = 0

    def __post_init__(self) -> None:
        self.targets = [np.asarray(o, dtype=np.int64) for _, o in self.train]
        self.tiny = all(t.size == 1 for t in self.targets)
        """Every target is one cell: a colour map onto them would only memorise them."""
        self.inputs = [np.asarray(i, dtype=np.int64) for i, _ in self.train] + [
            np.asarray(i, dtype=np.int64) for i in self.test_inputs
        ]
        counts = np.bincount(np.concatenate([g.ravel() for g in self.inputs]), minlength=10)
        self.bg = int(counts.argmax()) if counts[0] * 2 < counts.max() else 0
        self._tflat = np.concatenate([t.ravel() for t in self.targets])
        self.n_train = len(self.targets)
        self._train_inputs = self.inputs[: self.n_train]
        self._tshapes = [t.shape for t in self.targets]
        self._by_shapes: dict[tuple[str, Any], Any] = {}
        self.depth_limit = self.max_depth
        """The current depth limit (see :attr:`deepen_after`)."""
        self._next_deepen = INF if self.deepen_after is None else float(self.deepen_after)
        root = Node("x", self.inputs, pair_score(self.inputs, self.targets)[0], 0)
        self.seen.add(_key(self.inputs))
        self._check(root)
        self._push(root)

    # ------------------------------------------------------------ internals

    def _push(self, node: Node) -> None:
        if node.depth >= self.depth_limit:
            if self.deepen_after is not None:
                self.parked.append(node)
            return
        node.base = node.score + self._shape_term(node.outs) - 0.15 * node.depth
        self._queue(node)

    def _shape_term(self, outs: list[Grid]) -> float:
        """The priority a state gets for how near its train grids' shapes are to the
        targets' (it depends on the shapes alone, so it is worked out once per shapes)."""
        shapes = tuple(o.shape for o in outs[: self.n_train])
        got = self._by_shapes.get(("term", shapes))
        if got is None:
            shape = 0.0
            if _same_ratio(outs, self.targets):
                shape = 0.8 * len(self.targets)  # one scale or tile op away
            else:
                for o, t in zip(outs, self.targets, strict=False):
                    shape += (min(o.shape[0], t.shape[0]) / max(o.shape[0], t.shape[0])) * (
                        min(o.shape[1], t.shape[1]) / max(o.shape[1], t.shape[1])
                    )
            got = self._by_shapes[("term", shapes)] = 0.2 * shape / len(self.targets)
        return float(got)

    def _prune(self) -> None:
        """Drop open states (the worst priorities first, then the latest parked) until
        at most half of ``max_states`` are kept, so a long search's memory stays
        bounded. Their keys stay seen: they are not found again. Expanded states,
        exact programs and the composition's bases and pieces are kept."""
        excess = len(self.nodes) - self.max_states // 2
        if excess <= 0:
            return
        keep = {id(n) for n in self.exact}
        keep.update(id(n) for n in self.pieces.values())
        keep.update(id(n) for n in self.bases.values())
        order = sorted(self.frontier, reverse=True)  # the worst priority first
        drop: set[int] = set()
        for entry in order:
            if len(drop) >= excess:
                break
            if id(entry[2]) not in keep:
                drop.add(id(entry[2]))
        for node in reversed(self.parked):
            if len(drop) >= excess:
                break
            if id(node) not in keep:
                drop.add(id(node))
        self.frontier = [e for e in self.frontier if id(e[2]) not in drop]
        heapq.heapify(self.frontier)
        self.parked = [n for n in self.parked if id(n) not in drop]
        self.nodes = [n for n in self.nodes if id(n) not in drop]
        for k in [k for k, v in self.memo.items() if isinstance(v, Node) and id(v) in drop]:
            del self.memo[k]
        self.pruned += len(drop)

    def _deepen(self) -> None:
        """Raise the depth limit by one when it is due (by applications spent, or no
        open state is left under it) and some state waits at it."""
        if not self.parked or (self.frontier and self.applications < self._next_deepen):
            return
        self.depth_limit += 1
        if self.applications >= self._next_deepen:
            self._next_deepen *= 4
        waiting, self.parked = self.parked, []
        for node in waiting:
            self._push(node)

    def _queue(self, node: Node) -> None:
        pri = node.base - DIVERSITY * self.expanded.get(_branch(node.expr), 0)
        self._counter += 1
        heapq.heappush(self.frontier, (-pri, self._counter, node))

    def _pop(self) -> Node | None:
        """The open state with the best priority, re-ranking states whose branch has been
        expanded since they were queued (so no single branch eats the budget)."""
        while self.frontier:
            neg, _, node = heapq.heappop(self.frontier)
            pri = node.base - DIVERSITY * self.expanded.get(_branch(node.expr), 0)
            if pri < -neg - 1e-12:
                self._queue(node)
                continue
            b = _branch(node.expr)
            self.expanded[b] = self.expanded.get(b, 0) + 1
            return node
        return None

    def run_expr(self, expr: Expr) -> list[Grid] | None:
        """Outputs of a program for every train and test input (None if it fails).

        Sub-program outputs are memoised, so variations of a program only recompute
        what changed."""
        try:
            outs = self._eval(expr)
        except Exception:
            return None
        return outs if all(_valid(o) for o in outs) else None

    def _eval(self, e: Expr) -> list[Grid]:
        if e == "x":
            return self.inputs
        hit = self.memo.get(e)
        if hit is not None:
            if hit is False:
                raise ValueError("failed before")
            if isinstance(hit, Node):  # a state of the enumeration
                return hit.outs
            return hit  # type: ignore[no-any-return]
        if len(self.memo) > 5000:
            self.memo.clear()
        try:
            spec = OPS[e[0]]
            cols: list[Any] = []
            for k, a in zip(spec.kinds, e[1:], strict=True):
                if k is K.GRID:
                    cols.append(self._eval(a))
                elif k is K.PROGRAM:
                    cols.append(program_of(a))
                else:
                    cols.append(_plain(a))
            outs = []
            for i in range(len(self.inputs)):
                args = [c[i] if k is K.GRID else c for k, c in zip(spec.kinds, cols, strict=True)]
                for j, k in enumerate(spec.kinds):
                    if k is K.COLOR and isinstance(args[j], int) and args[j] >= 10:
                        args[j] = role_color(args[0], args[j])
                outs.append(np.asarray(spec.fn(*args)))
        except Exception:
            self.memo[e] = False
            raise
        self.memo[e] = outs
        return outs

    def _apply(self, node: Node, op: str, args: tuple[Any, ...]) -> Node | None:
        self.applications += 1
        try:  # generators mostly yield hashable tuples: convert only when needed
            step = hash((op, args))
            hargs = args
        except TypeError:
            hargs = _hashable(args)
            step = hash((op, hargs))
        if node.grid_keys is None:
            node.grid_keys = [_grid_key(g) for g in node.outs]
        outs: list[Grid] = []
        keys: list[int] = []
        raws: list[bytes] = []
        cache = self.cache
        for g, gk in zip(node.outs, node.grid_keys, strict=True):
            got = cache.get((step, gk))
            if got is not False:
                if got is None:
                    return None  # failed on this grid before
                outs.append(got[0])
                keys.append(got[1])
                raws.append(got[2])
                continue
            try:
                fn, call, roles = _prepared(op, hargs, args)
                if roles:
                    call = list(call)
                    for i in roles:
                        call[i] = role_color(g, args[i])
                out = np.asarray(fn(g, *call))
                if not _valid(out):
                    raise ValueError("not a grid")
            except Exception:
                cache.put((step, gk), None)
                return None
            raw = _grid_raw(out)
            ok = hash(raw)
            cache.put((step, gk), (out, ok, raw))
            outs.append(out)
            keys.append(ok)
            raws.append(raw)
        k = _keys_key(keys)
        if k in self.seen:
            return None
        self.seen.add(k)
        n = self.n_train
        tainted = node.tainted or (
            keys[:n] == node.grid_keys[:n] and _train_noop(node.outs, outs, n)
        )
        expr = (op, node.expr, *hargs)
        score, exact = pair_score(outs, self.targets)
        child = Node(expr, outs, score, node.depth + 1, tainted=tainted, grid_keys=keys, raws=raws)
        child.n_exact = exact
        self.memo[expr] = child
        return child

    def _check(self, node: Node, look: bool = True) -> None:
        if node.tainted:
            return
        train = node.outs[: self.n_train]
        if node.n_exact is None:
            node.n_exact = pair_score(train, self.targets)[1]
        if node.n_exact == self.n_train:
            if node.expr != "x":
                node.exact = True
                self.exact.append(node)
            return
        # the train grids in one array when they have the targets' shapes
        flat = (
            np.concatenate([o.ravel() for o in train])
            if [o.shape for o in train] == self._tshapes
            else None
        )
        if flat is not None:
            self._keep_layer(node, flat)
        if look and node.expr != "x":
            self._scale_lookahead(node)
        if self.tiny:
            return
        role = None if flat is None else self._paint_role(train)
        if role is not None:
            paint: Expr = ("paint_fg", node.expr, "x", role, self.bg)
            outs = self.run_expr(paint)
            if outs is not None:
                self.exact.append(Node(paint, outs, 1.0, node.depth + 1, exact=True))
                return
        cmap = None if flat is None else cmap_of_codes(flat * 10 + self._tflat)
        if cmap and self._cmap_covers(node.outs, cmap):
            expr = ("recolor", node.expr, tuple(tuple(p) for p in cmap))
            outs = self.run_expr(expr)
            if outs is not None:
                fin = Node(expr, outs, 1.0, node.depth + 1, exact=True)
                self.exact.append(fin)

    def _scale_lookahead(self, node: Node) -> None:
        """A state one scaling op away from the targets' shapes (an integer ratio, the
        same in every pair; or blocky states whose blocks shrink to the targets) is
        finished at once with that op (then the usual finishers), so that the search
        need not rank a wrong-sized state high enough to expand it."""
        train = node.outs[: self.n_train]
        shapes = tuple(o.shape for o in train)
        ops = self._by_shapes.get(("scale", shapes))
        if ops is None:
            ops = ()
            if _same_ratio(train, self.targets):
                ops = _SCALE_UP if train[0].size < self.targets[0].size else ()
            elif all(
                o.shape != t.shape and o.size > t.size
                for o, t in zip(train, self.targets, strict=False)
            ):
                ops = ("downscale_auto",)
            self._by_shapes[("scale", shapes)] = ops
        if not ops:
            return
        ctx = Ctx(node.outs, self.targets, self.bg, node.depth)
        for op in ops:
            try:
                arg_list = list(GENERATORS[op](ctx))
            except Exception:
                continue
            for args in arg_list[:8]:
                child = self._apply(node, op, args)
                if child is None:
                    continue
                n = len(self.exact)
                self._check(child, look=False)
                if len(self.exact) == n:
                    self.seen.discard(_key(child.outs))  # still open to the search

    def _paint_role(self, train: list[Grid]) -> str | None:
        """A colour role of the original inputs whose colour, painted over every
        non-background cell of the states, gives the targets (the states have the right
        shape and cells; each target's foreground is one colour, not the same in all)."""
        cols = []
        for o, t in zip(train, self.targets, strict=False):
            if o.shape != t.shape or ((o != self.bg) != (t != self.bg)).any():
                return None
            fg = np.unique(t[t != self.bg])
            if fg.size != 1:
                return None
            cols.append(int(fg[0]))
        if len(set(cols)) < 2:
            return None
        for role in ("common", "second", "least", "lost"):
            try:
                if all(
                    paint_fg(o, g, role, self.bg)[o != self.bg][0] == c
                    for o, g, c in zip(train, self.inputs, cols, strict=False)
                ):
                    return role
            except ValueError:
                continue
        return None

    def _cmap_covers(self, outs: list[Grid], cmap: list[list[int]]) -> bool:
        """A colour map learned on the train pairs may meet a colour no train state has
        only when it keeps some non-background train colour as it is (then keeping the
        new colour too is the rule it shows); when it changes every one, or turns
        several colours into one, it says nothing about other colours."""
        n = len(self.targets)
        seen = np.zeros(10, dtype=bool)
        for o in outs[:n]:
            seen[np.unique(o)] = True
        changed = {a for a, _ in cmap}
        known = seen.copy()
        known[list(changed)] = True  # a colour the map names is no surprise
        if all(known[np.unique(o)].all() for o in outs[n:]):
            return True
        if len(changed) >= 2 and len({b for _, b in cmap}) == 1:
            return False  # many colours become one: a new colour may well follow them
        return any(seen[c] and c not in changed and c != self.bg for c in range(10))

    def _keep_layer(self, node: Node, flat: Grid) -> None:
        """Remember a target-shaped state (its train grids, flattened, are ``flat``)
        for :meth:`compose`."""
        wrong = flat != self._tflat
        paint = flat != self.bg
        if paint.any() and not (paint & wrong).any():
            self.pieces.setdefault(np.packbits(paint).tobytes(), node)
        if 2 * int(wrong.sum()) <= wrong.size:
            self.bases.setdefault(np.packbits(wrong).tobytes(), node)

    def compose(self, max_layers: int = 2, tries: int = 8) -> None:
        """Icecuber-style composition: a target-shaped state with the rest of its wrong
        cells covered by up to ``max_layers`` states painted over it (``layer``) whose
        every non-background train cell is right. Pieces are picked greedily by the
        wrong cells they cover (the simplest of equals); the simplest bases are tried first.
        Found programs are exact and go to :attr:`exact` (ranked after simpler ones)."""
        sizes = (len(self.pieces), len(self.bases))
        if self._composed == sizes or not self.pieces:
            return
        self._composed = sizes
        n = self._tflat.size
        keys = sorted(self.pieces, key=lambda k: complexity(self.pieces[k].expr))
        good = np.unpackbits(
            np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), -1), axis=1
        )[:, :n].astype(bool)
        cover = good.any(axis=0)
        ranked: list[tuple[float, int, int, Any, Node]] = []
        for k, base in self.bases.items():
            wrong = np.unpackbits(np.frombuffer(k, dtype=np.uint8))[:n].astype(bool)
            if wrong.any() and not (wrong & ~cover).any():
                ranked.append((complexity(base.expr), int(wrong.sum()), len(ranked), wrong, base))
        ranked.sort(key=lambda r: r[:3])
        for _, _, _, wrong, base in ranked[:tries]:
            left = wrong.copy()
            expr = base.expr
            for _ in range(max_layers):
                gain = (good & left).sum(axis=1)
                best = int(gain.argmax())
                if gain[best] == 0:
                    break
                expr = ("layer", expr, self.pieces[keys[best]].expr, self.bg)
                left &= ~good[best]
                if not left.any():
                    break
            if left.any() or complexity(expr) > MAX_DEPTH + 1:
                continue  # a long composition fits the train pairs by accident
            outs = self.run_expr(expr)
            if outs is not None and all(
                (o == t).all() for o, t in zip(outs, self.targets, strict=False)
            ):
                self.exact.append(Node(expr, outs, 1.0, base.depth + 1, exact=True))

    def expand(self, node: Node, budget: int, stop: Stop = NEVER) -> list[Node]:
        """Children of ``node`` (every op with inferred parameters), at most ``budget``
        op applications, ending early when ``stop`` has passed. A packed ``node`` is
        unpacked while it is expanded (every application reads its grids) and packed
        again after."""
        packed = node.packed
        node.unpack()
        try:
            return self._expand(node, budget, stop)
        finally:
            if packed:
                node.pack()

    def _expand(self, node: Node, budget: int, stop: Stop) -> list[Node]:
        ctx = Ctx(node.outs, self.targets, self.bg, node.depth, inputs=self._train_inputs)
        children: list[Node] = []
        used = 0
        for i, spec in enumerate(GENERATED):
            if spec.when and not ctx.holds(spec.when):
                continue
            if not i & 7 and stop.passed():  # generators alone can take a while
                return children
            try:
                arg_list = list(spec.generator(ctx))  # type: ignore[misc]
            except Exception:
                continue
            op = spec.name
            for args in arg_list:
                # the CPU clock is a system call: look every 8th application
                if used >= budget or (not used & 7 and used and stop.passed()):
                    return children
                used += 1
                child = self._apply(node, op, args)
                if child is None:
                    continue
                self._check(child)
                children.append(child)
        return children

    # ------------------------------------------------------------ public

    def search(self, budget: int, max_seconds: float = 3.0, deadline: float | None = None) -> None:
        """Spend about ``budget`` op applications expanding the best open states.

        ``max_seconds`` (CPU time of this thread) is a safety net for huge grids and
        ``deadline`` (``time.monotonic()``) the end of the search this step serves:
        the states found depend on the budget alone unless one of them cuts in."""
        self.step(budget, Stop.after(max_seconds, deadline))

    def step(self, budget: int, stop: Stop = NEVER) -> None:
        """:meth:`search` with its limits as one :class:`Stop`."""
        with self.lock:
            end = self.applications + budget
            while self.applications < end and not stop.passed():
                self._deepen()
                node = self._pop()
                if node is None:
                    break
                for child in self.expand(node, 100000, stop):
                    self.nodes.append(child)
                    self._push(child)
                    child.pack()  # most states are never expanded: keep their cells as bytes
                if len(self.nodes) > self.max_states:
                    self._prune()
            if not self.exact and self.composes and not stop.passed():
                self.compose()

    def has_alternative(self) -> bool:
        """Some exact program is a different reading of the train pairs from the first
        solution: it answers the test inputs differently and is not the first one with
        steps added or ending in the same step (see :func:`_similar`); ``solutions``
        ranks the first such program second."""
        ranked = self.solutions()
        return len(ranked) > 1 and self._other_reading(ranked[1], ranked[0])

    def answer(self, node: Node) -> int:
        """A key of ``node``'s test answer (its grids for the test inputs)."""
        return _key(node.outs[len(self.targets) :])

    def _other_reading(self, node: Node, first: Node) -> bool:
        """``node`` answers the test inputs differently from ``first`` and is not
        :func:`_similar` to it."""
        return self.answer(node) != self.answer(first) and not _similar(node.expr, first.expr)

    def search_alternative(
        self, budget: int, max_seconds: float, step: int = 1000, deadline: float | None = None
    ) -> bool:
        """Search on, in steps of about ``step`` op applications, until
        :meth:`has_alternative`, or ``budget`` applications or ``max_seconds`` of this
        thread's CPU time are spent, or ``deadline`` (``time.monotonic()``) has passed;
        True when an alternative was found.

        A task has two attempts. When the programs that fit the train pairs are one
        reading of them (one program, or it with extra steps), the second attempt would
        come from a variant of the same reading or from a program that does not fit;
        an exact program found later in the same best-first order that reads the pairs
        differently is a better second guess (the first may fit them by accident)."""
        if not self.exact:
            return False
        if self.pinned is None:
            self.pinned = self.solutions()[0]
        end = self.applications + budget
        stop = Stop.after(max_seconds, deadline)
        while not self.has_alternative():
            if not self.open() or self.applications >= end or stop.passed():
                return False
            self.step(min(step, end - self.applications), stop)
        return True

    def open(self) -> bool:
        """Some state is still to be expanded (open, or waiting at the depth limit)."""
        return bool(self.frontier or self.parked)

    def held_out(
        self,
        budget: int,
        max_seconds: float,
        similarity: float = HELD_OUT_SIMILARITY,
        deadline: float | None = None,
    ) -> list[Node]:
        """One step of a search for programs that fit every train pair but one and
        nearly fit that one; returns those found in this step.

        ARC's train pairs are drawn by hand and some carry a wrong cell or two (the
        2019 release of ARC-AGI-1 has such slips in 21 training and 25 evaluation
        tasks, fixed in later releases). A slip in one pair blocks every exact fit, and
        parameters inferred from all pairs (a colour map, a table) come out
        inconsistent, so the right program is never built. With three or more pairs,
        each pair is held out in its own view: an enumeration on the other pairs. A step
        spends ``budget`` op applications (at most ``max_seconds`` CPU seconds, and not
        past ``deadline``) on the
        view that has had the least so far; of the programs it finds exact on the other
        pairs, those whose output for the held-out input has the right shape and at
        least ``similarity`` of its cells right are returned, scored on all pairs (the
        environment's fitness then ranks them). Deterministic for a sequence of budgets,
        like :meth:`search`; a view never sees a test output either."""
        n = len(self.train)
        if n < 3 or budget <= 0:
            return []
        if not self.views:
            for i in range(n):
                rest = [p for j, p in enumerate(self.train) if j != i]
                tests = [self.train[i][0], *self.test_inputs]
                self.views.append(TaskSolver(rest, tests, composes=False, cache=self.cache))
        open_views = [(v.applications, i) for i, v in enumerate(self.views) if v.open()]
        if not open_views:
            return []
        i = min(open_views)[1]
        view = self.views[i]
        before = len(view.exact)
        view.search(budget, max_seconds=max_seconds, deadline=deadline)
        want = self.targets[i]
        found: list[Node] = []
        for node in view.exact[before:]:  # the ones this step found
            got = node.outs[n - 1]
            if got.shape != want.shape or float((got == want).mean()) < similarity:
                continue
            full = self.node_for(node.expr)
            if full is None:
                continue
            key = _key(full.outs)
            if key not in self.near:
                self.near.add(key)
                found.append(full)
        return sorted(found, key=lambda nd: -nd.score)

    def held_out_applications(self) -> int:
        """Op applications spent so far by :meth:`held_out`."""
        return sum(v.applications for v in self.views)

    def node_for(self, expr: Expr) -> Node | None:
        outs = self.run_expr(expr)
        if outs is None:
            return None
        return Node(expr, outs, pair_score(outs, self.targets)[0], expr_size(expr))

    def solutions(self) -> list[Node]:
        """Exact programs found so far, simplest first (see :func:`complexity`); a
        program that picks an object by an arbitrary tie-break on every input ranks as
        if one op longer (less when only some inputs tie)."""
        ranked = sorted(
            self.exact,
            key=lambda n: (complexity(n.expr) + self._ties(n.expr), len(str(n.expr))),
        )
        if self.check_views:  # a stable sort: simplest first among equals
            head = sorted(ranked[:VIEW_CHECKED], key=lambda n: self.view_breaks(n) > 0)
            ranked = head + ranked[VIEW_CHECKED:]
        if self.pinned is not None and ranked and ranked[0] is not self.pinned:
            ranked = [self.pinned, *(n for n in ranked if n is not self.pinned)]
        # The second attempt is worth most when it comes from a structurally different
        # program: move the first exact program that answers the test inputs
        # differently and neither shares the first one's outermost step nor merely
        # extends it up to second place; one that also starts from the input with a
        # different first step goes before those that only finish differently (two
        # programs that build on one first step usually share its mistake).
        if len(ranked) > 2:
            others = [i for i in range(1, len(ranked)) if self._other_reading(ranked[i], ranked[0])]
            first_step = _first_step(ranked[0].expr)
            i = next((i for i in others if _first_step(ranked[i].expr) != first_step), None)
            if i is None and others:
                i = others[0]
            if i is not None and i > 1:
                ranked.insert(1, ranked.pop(i))
        return ranked

    def view_breaks(self, node: Node) -> int:
        """Views of the task (the seven rigid transforms and a cycle of the colours other
        than the background) that ``node``'s program keeps on every train input (run on
        the transformed input it gives the transformed output) but breaks on some test
        input. Where the program's ops do not commute with a view (a fixed position or
        colour) it keeps it on no train input either, and that view says nothing; a
        break says the test answer depends on something the train pairs never showed.
        """
        key = ("views", node.expr)
        hit = self.memo.get(key)
        if isinstance(hit, int) and not isinstance(hit, bool):
            return hit
        try:
            fn = compile_program(program_of(node.expr))
        except Exception:
            self.memo[key] = 0
            return 0
        breaks = 0
        n = self.n_train
        for view in self._views():

            def keeps(lo: int, hi: int, view: Callable[[Grid], Grid] = view) -> bool:
                try:
                    return all(
                        np.array_equal(np.asarray(fn(view(x))), view(o))
                        for x, o in zip(self.inputs[lo:hi], node.outs[lo:hi], strict=True)
                    )
                except Exception:
                    return False

            if keeps(0, n) and not keeps(n, len(self.inputs)):
                breaks += 1
        self.memo[key] = breaks
        return breaks

    def _views(self) -> list[Callable[[Grid], Grid]]:
        """The transforms :meth:`view_breaks` tries."""
        others = [c for c in range(10) if c != self.bg]
        table = np.arange(10)
        table[others] = others[1:] + others[:1]

        def turn(k: int) -> Callable[[Grid], Grid]:
            return lambda g: rigid_transform(g, k)

        def recolour(g: Grid) -> Grid:
            return table[g]

        return [*(turn(k) for k in range(1, 8)), recolour]

    def _ties(self, e: Expr) -> float:
        """Object selections in ``e`` that are ties, each counted by the share of the
        inputs on which it ties."""
        if not isinstance(e, tuple):
            return 0.0
        key = ("ties", e)
        hit = self.memo.get(key)
        if isinstance(hit, float):
            return hit
        spec = OPS[e[0]]
        n = sum(self._ties(a) for k, a in zip(spec.kinds, e[1:], strict=True) if k in SUB_KINDS)
        if e[0] in _SELECTING:
            try:
                grids = self._eval(e[1])
                sel, conn, by_color, bg = e[2:6]
                # the share of grids where it is a tie: a pick tied on every grid is
                # pure tie-break, one tied on a single grid may still be the rule
                n += sum(selection_tied(g, sel, conn, by_color, bg) for g in grids) / max(
                    1, len(grids)
                )
            except Exception:
                pass
        self.memo[key] = float(n)
        return float(n)

    def best(self, k: int) -> list[Node]:
        return sorted(self.nodes, key=lambda n: -n.score)[:k]


def _top(e: Expr) -> Any:
    """The outermost op of ``e`` with its non-grid arguments."""
    if not isinstance(e, tuple):
        return e
    spec = OPS[e[0]]
    rest = [a for k, a in zip(spec.kinds, e[1:], strict=True) if k not in SUB_KINDS]
    return (e[0], *rest)


_PREPARED: dict[tuple[str, Any], tuple[Any, list[Any], list[int]]] = {}
""":func:`_prepared` by (op, hashable arguments)."""


def _prepared(
    op: str, hargs: tuple[Any, ...], args: tuple[Any, ...]
) -> tuple[Any, list[Any], list[int]]:
    """``op``'s function with :func:`_call_args` of ``args`` (``hargs`` their hashable
    form), made once per op and arguments."""
    key = (op, hargs)
    got = _PREPARED.get(key)
    if got is None:
        if len(_PREPARED) > 100_000:
            _PREPARED.clear()
        got = _PREPARED[key] = (OPS[op].fn, *_call_args(op, args))
    return got


def _call_args(op: str, args: tuple[Any, ...]) -> tuple[list[Any], list[int]]:
    """``args`` as ``op``'s function takes them (sub-programs compiled), and the
    positions of colour roles (colour arguments of 10 or more, resolved per grid)."""
    kinds = OPS[op].kinds[1:]
    call = list(
        _plain([(program_of(a) if k is K.PROGRAM else a) for k, a in zip(kinds, args, strict=True)])
    )
    roles = [
        i
        for i, (k, a) in enumerate(zip(kinds, call, strict=True))
        if k is K.COLOR and isinstance(a, int) and a >= 10
    ]
    return call, roles


def _first_step(e: Expr) -> Any:
    """The op applied to the input first: the innermost one on the path of first grid
    arguments (``x`` for the identity)."""
    while isinstance(e, tuple):
        spec = OPS[e[0]]
        grids = [a for k, a in zip(spec.kinds, e[1:], strict=True) if k is K.GRID]
        if not grids or not isinstance(grids[0], tuple):
            return e[0]
        e = grids[0]
    return e


def _contains(e: Expr, sub: Expr) -> bool:
    if e == sub:
        return True
    return isinstance(e, tuple) and any(_contains(a, sub) for a in e[1:] if isinstance(a, tuple))


def _similar(e: Expr, first: Expr) -> bool:
    """``e`` ends with the same step as ``first`` or is ``first`` with steps added."""
    return _top(e) == _top(first) or _contains(e, first)


def _same_ratio(outs: list[Grid], targets: list[Grid]) -> bool:
    """Every target is the state scaled by one integer factor pair (up or down), the
    same in every pair, and not 1:1."""
    ks = set()
    for o, t in zip(outs, targets, strict=False):
        (a, b), (c, d) = o.shape, t.shape
        if c % a == 0 and d % b == 0:
            ks.add((c // a, d // b))
        elif a % c == 0 and b % d == 0:
            ks.add((-(a // c), -(b // d)))
        else:
            return False
    return len(ks) == 1 and ks != {(1, 1)}


def _train_noop(before: list[Grid], after: list[Grid], n: int) -> bool:
    """The op changed no train state but some test state: nothing in the train pairs
    supports what it does to the test inputs."""
    same = [a.shape == b.shape and bool((a == b).all()) for a, b in zip(before, after, strict=True)]
    return all(same[:n]) and not all(same[n:])


def _branch(e: Expr) -> str:
    """The first op applied to the input (the branch of the search tree ``e`` is in)."""
    while isinstance(e, tuple):
        child = e[1]
        if child == "x":
            return str(e[:3]) if len(e) > 2 else str(e)
        e = child
    return "x"


_SCALE_UP = ("upscale", "tile", "tile_t", "kron_self", "kron_eq", "kron_own")
"""Ops the scale look-ahead tries on a state whose targets are an integer ratio larger."""

_SELECTING = ("crop_object", "keep_extreme", "remove_extreme", "move_to_contact")
"""Ops whose first parameters are (selector, conn, by_color, bg)."""

_HEAVY = {
    "local_rule": 3.0,
    "cell_tree": 3.0,
    "stamp": 1.0,
    "recolor_by": 1.0,
    "filter_objects": 1.0,
    "recolor_rank": 0.5,
}


def complexity(e: Expr) -> float:
    """Ops count, plus a charge for ops that carry a learned table (they overfit more)."""
    if not isinstance(e, tuple):
        return 0.0
    spec = OPS[e[0]]
    cost = 1.0 + _HEAVY.get(e[0], 0.0)
    for k, a in zip(spec.kinds, e[1:], strict=True):
        if k in SUB_KINDS:
            cost += complexity(a)
        elif k in (K.TABLE, K.COLOR_MAP):
            cost += len(a) / 8
    return cost


def _plain(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return [_plain(a) for a in v]
    return v


def _hashable(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return tuple(_hashable(a) for a in v)
    return v
