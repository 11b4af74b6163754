"""DSLProposer: the offline ARC proposer behind Mind Evolution.

``initial`` runs a deterministic best-first enumeration of DSL programs with inferred
parameters (see :mod:`atlas_actors.arc.solver`) and returns every program it found that
fits all train pairs (simplest first), then the best-scoring partial programs, then a
random spread of the rest. ``mutate`` continues that enumeration a little, then does a
local search around the parent: extend it by one op (parameters inferred against the
targets), replace one of its steps by another op enumerated from the state before that
step (the steps above it kept), put its upper steps on the enumeration's best states,
tweak one parameter, drop one op; children are pre-scored on the train pairs and
sampled by a Boltzmann choice at the given temperature. ``crossover`` splices the
parents: the lower steps of one under the upper steps of the other, and one parent on
top of the other. With ``evolve=False`` the parents are ignored and every call only
continues the enumeration (enumeration alone, for comparison at an equal budget).
Every returned program is valid JSON that :func:`atlas_actors.arc.compile_program`
accepts, ran without error on every train and test input, and was never returned
before for this task.

The proposer sees only the train pairs and the test inputs, never test outputs.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from atlas_actors.arc.dsl import OPS, Expr, Program, program_of
from atlas_actors.arc.registry import SUB_KINDS, K, OneOf, ParamKind
from atlas_actors.arc.solver import Node, Stop, TaskSolver
from atlas_actors.errors import InvalidSolutionError
from atlas_actors.types import Candidate, Task

CACHED_TASKS = 2
"""Tasks (the most recently used) whose solver keeps its op-output cache."""


log = logging.getLogger(__name__)

_REPORTED: set[str] = set()
"""Ops whose enumerated programs failed validation, reported once per process."""


@dataclass
class _Entry:
    solver: TaskSolver
    emitted: set[str] = field(default_factory=set)
    expansions: dict[str, list[Node]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    charged: int = 0
    """Ops applied to evaluate programs outside the enumeration (mutations, crossovers):
    each op of a program whose output was not already known counts as one."""


def task_grids(task: Task) -> tuple[list[tuple[Any, Any]], list[Any]]:
    """The train pairs and test inputs of an ARC task (never its test outputs)."""
    from atlas_actors.arc.environment import load_arc_task

    data = load_arc_task(task)
    return list(data.train), list(data.test_inputs)


class DSLProposer:
    """Offline proposer of ARC DSL programs (implements ``search.base.Proposer``)."""

    max_concurrent_calls = 1
    """CPU-bound and stateful: the search calls it one call at a time, in a fixed order,
    and checks its time limit between calls."""

    def __init__(
        self,
        proposals_per_call: int = 32,
        initial_budget: int = 2500,
        mutate_budget: int = 500,
        max_tasks: int = 16,
        initial_seconds: float = 5.0,
        step_seconds: float = 2.0,
        second_budget: int = 8000,
        second_seconds: float = 4.0,
        held_out_budget: int = 12000,
        held_out_step: int = 1000,
        time_limit: float | None = None,
        check_views: bool = False,
        evolve: bool = True,
        max_applications: int | None = None,
    ) -> None:
        """``initial_budget``/``mutate_budget``: op applications the enumeration spends per
        ``initial`` / ``mutate`` call.
        ``initial_seconds``: cap on the enumeration in ``initial``, in CPU seconds of the
        thread doing it (a safety net for huge grids; CPU time, not wall-clock time, so a
        busy machine or other searches in the process do not change the result).
        ``step_seconds``: the same for each step of ``mutate``/``crossover`` (enumeration
        gets half of it).
        ``second_budget``/``second_seconds``: when ``initial`` finds programs that fit
        every train pair but all read them one way (one program and variants of it), it
        searches on (at most this many op applications / CPU seconds, once per task) for
        a different reading that answers the test inputs differently, so the second
        attempt also comes from a program that fits (``TaskSolver.search_alternative``).
        ``held_out_budget``/``held_out_step``: while no program fits every train pair,
        each ``mutate`` call first spends ``held_out_step`` op applications (up to
        ``held_out_budget`` in all per task) on enumerations that each hold one train
        pair out (tasks with three or more pairs), for programs exact on the others that
        get the held-out pair nearly right: a slip in one hand-drawn pair then no longer
        hides the rule (``TaskSolver.held_out``). 0 turns it off.
        ``time_limit``: wall-clock seconds from this proposer's first call (the search's
        time limit) after which every enumeration step ends early, so a call never runs
        far past the limit the search checks between calls; None: no wall clock (a
        budgeted run is then bounded by op applications alone).
        ``check_views``: rank the programs that fit every train pair by whether their
        test answers keep the views of the task they keep on the train inputs
        (``TaskSolver.check_views``).
        ``evolve``: False makes ``mutate`` and ``crossover`` ignore their parents and
        only continue the enumeration (``mutate_budget`` op applications a call, and the
        held-out step), returning what it found: enumeration alone.
        ``max_applications``: a per-task budget of op applications for all calls
        together (enumeration, held-out views, second reading, and the ops applied to
        evaluate mutations and crossovers); once spent, calls return nothing. None: no
        cap. :meth:`applications` tells what a task has spent."""
        self.proposals_per_call = proposals_per_call
        self.initial_budget = initial_budget
        self.mutate_budget = mutate_budget
        self.max_tasks = max_tasks
        self.initial_seconds = initial_seconds
        self.step_seconds = step_seconds
        self.second_budget = second_budget
        self.second_seconds = second_seconds
        self.held_out_budget = held_out_budget
        self.held_out_step = held_out_step
        self.time_limit = time_limit
        self.check_views = check_views
        self._deadline: float | None = None
        self.evolve = evolve
        self.max_applications = max_applications
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------ Proposer protocol

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        return await anyio.to_thread.run_sync(self.initial_sync, task, n, rng)

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        return await anyio.to_thread.run_sync(self.mutate_sync, task, parent, n, rng, temperature)

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        return await anyio.to_thread.run_sync(self.crossover_sync, task, a, b, n, rng)

    # ------------------------------------------------------------ sync implementations

    def entry(self, task: Task) -> _Entry:
        """Per-task analysis and enumeration state (cached by task id)."""
        if self.time_limit is not None and self._deadline is None:
            self._deadline = time.monotonic() + self.time_limit
        with self._lock:
            e = self._entries.get(task.id)
            if e is not None:
                self._entries.move_to_end(task.id)
                return e
        train, tests = task_grids(task)
        e = _Entry(TaskSolver(train, tests, check_views=self.check_views))
        with self._lock:
            e = self._entries.setdefault(task.id, e)
            while len(self._entries) > self.max_tasks:
                self._entries.popitem(last=False)
            # op-output caches are the bulk of an entry's memory and pay off only while
            # a task is searched: keep them for the tasks used last
            for old in list(self._entries.values())[:-CACHED_TASKS]:
                old.solver.cache.clear()
        return e

    def applications(self, task_id: str) -> int:
        """Op applications spent on a task so far (see ``max_applications``); 0 for a
        task this proposer has not seen (or no longer caches)."""
        with self._lock:
            e = self._entries.get(task_id)
        return 0 if e is None else _spent(e)

    def report(self, task_id: str) -> dict[str, float]:
        """The proposer's counters for a task (added to ``TaskResult.stats``)."""
        return {"op_applications": float(self.applications(task_id))}

    def _left(self, e: _Entry) -> float:
        if self.max_applications is None:
            return math.inf
        return max(0, self.max_applications - _spent(e))

    def _budget(self, e: _Entry, want: int) -> int:
        """``want`` op applications, or what is left of the task's budget."""
        return int(min(want, self._left(e)))

    def initial_sync(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        e = self.entry(task)
        with e.lock:
            if self._left(e) <= 0:
                return []
            e.solver.search(
                self._budget(e, self.initial_budget), self.initial_seconds, self._deadline
            )
            near: list[Node] = []
            s = e.solver
            if (
                s.exact
                and s.pinned is None  # once per task: it pins
                and self._left(e) > 0
                and not s.search_alternative(
                    self._budget(e, self.second_budget),
                    self.second_seconds,
                    deadline=self._deadline,
                )
            ):
                near = self._near_reading(e)
            out = self._take_exact(e)
            for node in near:  # after every exact program: a second attempt
                self._emit(e, node.expr, out)
            nodes = e.solver.best(len(e.solver.nodes))
            k = max(n // 2, n - len(out))
            for node in nodes[:k]:
                self._emit(e, node.expr, out)
            rest = nodes[k:]
            rng.shuffle(rest)
            for node in rest:
                if len(out) >= n:
                    break
                self._emit(e, node.expr, out)
            if not out:
                self._emit(e, ("rigid", "x", 0), out)
            return out

    def mutate_sync(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        e = self.entry(task)
        with e.lock:
            if self._left(e) <= 0:
                return []
            out = self._enumerate_on(e)
            if not self.evolve:
                return out + self._fill_best(e, n - len(out))
            expr = _parse(parent.solution)
            if expr is None:
                return out + self._fill(e, n - len(out), rng)
            # per-pair feedback: shape errors or crashes mean the last op is wrong, so
            # look more at replacing it (siblings: other ops on the same input)
            checks = parent.outcome.checks if parent.outcome else []
            broken = any(c.error or not c.well_formed for c in checks)
            cands: dict[str, Node] = {}
            for node in self._extensions(e, expr)[: (2 if broken else 4) * n]:
                cands.setdefault(_key(node.expr), node)
            child = _first_grid_child(expr)
            if child is not None and child != "x":
                for node in self._extensions(e, child)[: (4 if broken else 1) * n]:
                    cands.setdefault(_key(node.expr), node)
            stop = Stop.after(self.step_seconds, self._deadline)
            varied = _tweaks(expr, rng, 2 * n) + _deletions(expr)
            varied += self._restepped(e, expr, n, stop) + self._replanted(e, expr, n)
            for ex in varied:
                if stop.passed() or self._left(e) <= 0:
                    break
                key = _key(ex)
                if key in cands or key in e.emitted:
                    continue
                tweaked = self._node(e, ex)
                if tweaked is not None:
                    cands[key] = tweaked
            out += self._exact_from(e, cands.values())
            picked = _boltzmann(
                [c for k, c in cands.items() if k not in e.emitted], n, rng, temperature
            )
            for node in picked:
                self._emit(e, node.expr, out)
            if len(out) < n:
                out += self._fill(e, n - len(out), rng)
            return out[: max(n, n_exact(e, out))]

    def crossover_sync(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        e = self.entry(task)
        with e.lock:
            if self._left(e) <= 0:
                return []
            if not self.evolve:
                out = self._enumerate_on(e)
                return out + self._fill_best(e, n - len(out))
            out = self._take_exact(e)
            ea, eb = _parse(a.solution), _parse(b.solution)
            if ea is None or eb is None:
                return out + self._fill(e, n - len(out), rng)
            cands: dict[str, Node] = {}
            stop = Stop.after(self.step_seconds, self._deadline)
            for ex in _grafts(ea, eb, rng, 3 * n) + _grafts(eb, ea, rng, 3 * n):
                if stop.passed() or self._left(e) <= 0:
                    break
                key = _key(ex)
                if key in cands or key in e.emitted:
                    continue
                node = self._node(e, ex)
                if node is not None:
                    cands[key] = node
            out += self._exact_from(e, cands.values())
            for node in _boltzmann(list(cands.values()), n, rng, 0.5):
                self._emit(e, node.expr, out)
            if len(out) < n:
                out += self._fill(e, n - len(out), rng)
            return out[: max(n, n_exact(e, out))]

    # ------------------------------------------------------------ helpers

    def _enumerate_on(self, e: _Entry) -> list[Any]:
        """Continue the enumeration (``mutate_budget``, then a held-out step while
        nothing fits); the exact and near programs it found, not yet returned."""
        s = e.solver
        s.search(self._budget(e, self.mutate_budget), self.step_seconds / 2, self._deadline)
        out = self._take_exact(e)
        if not s.exact and s.held_out_applications() < self.held_out_budget:
            step = self._budget(e, self.held_out_step)
            near = s.held_out(step, self.step_seconds / 4, deadline=self._deadline)
            out += self._exact_from(e, near)
            for node in near:
                self._emit(e, node.expr, out)
        return out

    def _node(self, e: _Entry, expr: Expr) -> Node | None:
        """``expr`` run on the task's grids, its new ops charged to the budget."""
        e.charged += _new_ops(expr, e.solver.memo)
        return e.solver.node_for(expr)

    def _restepped(self, e: _Entry, expr: Expr, n: int, stop: Stop) -> list[Expr]:
        """``expr`` with one of its inner steps replaced by another op enumerated from
        the state before it, the steps above kept (the outermost step is replaced by
        ``mutate``'s sibling extensions)."""
        out: list[Expr] = []
        for path in _paths(expr)[1:]:
            if stop.passed() or self._left(e) <= 0:
                break
            below = _first_grid_child(_get(expr, path))
            if below is None or _single_grid(_get(expr, path)) is None:
                continue
            for node in self._extensions(e, below)[:n]:
                out.append(_set(expr, path, node.expr))
        return out

    def _replanted(self, e: _Entry, expr: Expr, n: int) -> list[Expr]:
        """The upper steps of ``expr`` put on the enumeration's best states in place of
        its lower steps (a sub-program replaced by an enumerated one)."""
        tops = e.solver.best(n)
        out: list[Expr] = []
        for path in _paths(expr)[1:]:
            for node in tops:
                out.append(_set(expr, path, node.expr))
        return [x for x in out if x != expr and _depth(x) <= 6]

    def _fill_best(self, e: _Entry, k: int) -> list[Any]:
        """The enumeration's best programs not yet returned (up to ``k``)."""
        out: list[Any] = []
        if k <= 0:
            return out
        for node in e.solver.best(len(e.solver.nodes)):
            if len(out) >= k:
                break
            self._emit(e, node.expr, out)
        return out

    def _emit(self, e: _Entry, expr: Expr, out: list[Any]) -> None:
        if expr == "x":  # a bare string would read as Python source: spell identity out
            expr = ("rigid", "x", 0)
        try:
            prog = Program(expr)
        except InvalidSolutionError as err:
            # a generator yielded arguments its op's signature rejects: a DSL bug that
            # would otherwise lose the program without a trace
            op = expr[0] if isinstance(expr, tuple) else str(expr)
            if op not in _REPORTED:
                _REPORTED.add(op)
                log.warning("dropped an enumerated program that fails validation: %s", err)
            return
        key = prog.canonical()
        if key in e.emitted:
            return
        e.emitted.add(key)
        out.append(prog.to_json())

    def _near_reading(self, e: _Entry) -> list[Node]:
        """Programs that fit every train pair but one and nearly fit that one, searched
        for (``held_out_budget`` op applications at most) when the exact programs are
        all one reading of the train pairs, until one answers the test inputs
        differently from the first: the first may fit by accident (a learned table
        memorising the pairs), and a program that misses a few cells of one pair is a
        better second attempt than one that fits none."""
        s = e.solver
        first = s.answer(s.solutions()[0])
        found: list[Node] = []
        while s.held_out_applications() < self.held_out_budget and self._left(e) > 0:
            spent = s.held_out_applications()
            step = self._budget(e, self.held_out_step)
            found += s.held_out(step, self.step_seconds / 4, deadline=self._deadline)
            if any(s.answer(nd) != first for nd in found):
                break
            if s.held_out_applications() == spent:
                break  # every view has run out of states
        return sorted(found, key=lambda nd: s.answer(nd) == first)  # new answers first

    def _take_exact(self, e: _Entry) -> list[Any]:
        out: list[Any] = []
        for node in e.solver.solutions():
            self._emit(e, node.expr, out)
        return out

    def _exact_from(self, e: _Entry, nodes: Any) -> list[Any]:
        out: list[Any] = []
        for node in nodes:
            if node.score >= 1.0 - 1e-12:
                node.exact = True
                e.solver.exact.append(node)
                self._emit(e, node.expr, out)
        return out

    def _fill(self, e: _Entry, k: int, rng: random.Random) -> list[Any]:
        out: list[Any] = []
        if k <= 0:
            return out
        pool = [nd for nd in e.solver.nodes if _key(nd.expr) not in e.emitted]
        rng.shuffle(pool)
        for node in pool[:k]:
            self._emit(e, node.expr, out)
        return out

    def _extensions(self, e: _Entry, expr: Expr) -> list[Node]:
        key = _key(expr)
        got = e.expansions.get(key)
        if got is None:
            node = self._node(e, expr)
            stop = Stop.after(self.step_seconds, self._deadline)
            budget = self._budget(e, 600)
            got = [] if node is None or budget <= 0 else e.solver.expand(node, budget, stop)
            got.sort(key=lambda nd: -nd.score)
            e.expansions[key] = got
            e.solver.nodes.extend(got)
        return [nd for nd in got if _key(nd.expr) not in e.emitted]


def _spent(e: _Entry) -> int:
    """Op applications a task's calls have spent (see ``max_applications``)."""
    return e.solver.applications + e.solver.held_out_applications() + e.charged


def _new_ops(expr: Expr, memo: dict[Any, Any]) -> int:
    """Ops of ``expr`` whose outputs ``memo`` does not hold (what running it costs)."""
    if not isinstance(expr, tuple) or memo.get(expr) is not None:
        return 0
    kinds = OPS[expr[0]].kinds
    return 1 + sum(_new_ops(a, memo) for k, a in zip(kinds, expr[1:], strict=True) if k is K.GRID)


def n_exact(e: _Entry, out: list[Any]) -> int:
    """How many leading entries of ``out`` fit every train pair."""
    k = 0
    exact = {_key(nd.expr) for nd in e.solver.exact}
    for sol in out:
        if Program.from_json(sol).canonical() not in exact:
            break
        k += 1
    return k


# ---------------------------------------------------------------- tree operations


def _key(expr: Expr) -> str:
    """Canonical text of a program (``"invalid"`` for one that does not validate).

    The search keys every state it filters, often the same one many times over (a
    fifth of a task's time went here when each key built a new Program)."""
    try:
        try:
            return program_of(expr).canonical()
        except TypeError:  # unhashable (lists inside): build it afresh
            return Program(expr).canonical()
    except InvalidSolutionError:
        return "invalid"


def _parse(solution: Any) -> Expr | None:
    try:
        return Program.from_json(solution).expr
    except (InvalidSolutionError, TypeError, ValueError):
        return None


def _boltzmann(nodes: list[Node], n: int, rng: random.Random, temperature: float) -> list[Node]:
    """Sample ``n`` distinct nodes, weight exp(score / T)."""
    t = max(temperature, 0.02)
    pool = list(nodes)
    picked: list[Node] = []
    while pool and len(picked) < n:
        top = max(nd.score for nd in pool)
        ws = [math.exp((nd.score - top) / t) for nd in pool]
        i = rng.choices(range(len(pool)), weights=ws)[0]
        picked.append(pool.pop(i))
    return picked


def _paths(expr: Expr, kinds: tuple[ParamKind, ...] = (K.GRID,)) -> list[tuple[int, ...]]:
    """Paths (argument index lists) to every op node reachable through ``kinds`` args."""
    out: list[tuple[int, ...]] = []

    def walk(e: Expr, p: tuple[int, ...]) -> None:
        if not isinstance(e, tuple):
            return
        out.append(p)
        for i, (k, a) in enumerate(zip(OPS[e[0]].kinds, e[1:], strict=True)):
            if k in kinds:
                walk(a, (*p, i + 1))

    walk(expr, ())
    return out


def _get(expr: Expr, path: tuple[int, ...]) -> Expr:
    for i in path:
        expr = expr[i]
    return expr


def _set(expr: Expr, path: tuple[int, ...], value: Expr) -> Expr:
    if not path:
        return value
    i = path[0]
    return (*expr[:i], _set(expr[i], path[1:], value), *expr[i + 1 :])


def _param_values(kind: ParamKind, v: Any, rng: random.Random) -> list[Any]:
    if isinstance(kind, OneOf):
        return [c for c in kind.values if c != v]
    if kind is K.COLOR:
        return [c for c in range(14) if c != v]
    if kind is K.COLOR_OR_NONE:
        return [c for c in range(-1, 10) if c != v]
    if kind is K.FLAG:
        return [1 - v]
    if kind is K.NEIGHBOURHOOD:
        return [k for k in range(3) if k != v]
    if kind is K.CONN:
        return [12 - v]
    if kind is K.COUNT:
        return [k for k in (v - 1, v + 1, 2, 3) if 1 <= k <= 30 and k != v]
    if kind is K.RIGID:
        return [k for k in range(8) if k != v]
    if kind is K.OFFSET:
        return [d for d in (v - 1, v + 1) if -30 <= d <= 30]
    return []


def _tweaks(expr: Expr, rng: random.Random, n: int) -> list[Expr]:
    """Copies of ``expr`` with one literal parameter changed."""
    sites: list[tuple[tuple[int, ...], int, Any]] = []
    for p in _paths(expr, SUB_KINDS):
        node = _get(expr, p)
        for i, (k, a) in enumerate(zip(OPS[node[0]].kinds, node[1:], strict=True)):
            if k not in SUB_KINDS:
                for v in _param_values(k, a, rng):
                    sites.append((p, i + 1, v))
    rng.shuffle(sites)
    out = []
    for p, i, v in sites[:n]:
        node = _get(expr, p)
        out.append(_set(expr, p, (*node[:i], v, *node[i + 1 :])))
    return out


def _deletions(expr: Expr) -> list[Expr]:
    """Copies of ``expr`` with one single-grid-argument op removed."""
    out = []
    for p in _paths(expr):
        node = _get(expr, p)
        gs = [a for k, a in zip(OPS[node[0]].kinds, node[1:], strict=True) if k is K.GRID]
        if len(gs) == 1:
            out.append(_set(expr, p, gs[0]))
    return [e for e in out if e != "x"]


def _grafts(a: Expr, b: Expr, rng: random.Random, n: int) -> list[Expr]:
    """Children of ``a`` with one grid sub-tree replaced by a sub-tree of ``b``, plus
    ``b`` applied on top of ``a`` (b's input replaced by a)."""
    pa, pb = _paths(a), _paths(b)
    pairs = [(x, y) for x in pa for y in pb]
    rng.shuffle(pairs)
    out = [_set(a, x, _get(b, y)) for x, y in pairs[:n]]
    for y in pb:
        sub = _get(b, y)
        out.append(_replace_leaf(sub, a))
    return [e for e in out if e not in (a, b, "x") and _depth(e) <= 6]


def _single_grid(e: Expr) -> Expr | None:
    """The grid argument of an op that takes exactly one, else None."""
    if not isinstance(e, tuple):
        return None
    gs = [a for k, a in zip(OPS[e[0]].kinds, e[1:], strict=True) if k is K.GRID]
    return gs[0] if len(gs) == 1 else None


def _first_grid_child(e: Expr) -> Expr | None:
    if not isinstance(e, tuple):
        return None
    for k, a in zip(OPS[e[0]].kinds, e[1:], strict=True):
        if k is K.GRID:
            return a
    return None


def _replace_leaf(e: Expr, leaf: Expr) -> Expr:
    if e == "x":
        return leaf
    kinds = OPS[e[0]].kinds
    return (
        e[0],
        *[_replace_leaf(a, leaf) if k is K.GRID else a for k, a in zip(kinds, e[1:], strict=False)],
    )


def _depth(e: Expr) -> int:
    if not isinstance(e, tuple):
        return 0
    kinds = OPS[e[0]].kinds
    return 1 + max([_depth(a) for k, a in zip(kinds, e[1:], strict=True) if k in SUB_KINDS] + [0])
