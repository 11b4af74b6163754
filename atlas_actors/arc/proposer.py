"""DSLProposer: the offline ARC proposer behind Mind Evolution.

``initial`` runs a deterministic best-first enumeration of DSL programs with inferred
parameters (see :mod:`atlas_actors.arc.solver`) and returns every program it found that
fits all train pairs (simplest first), then the best-scoring partial programs, then a
random spread of the rest. ``mutate`` continues that enumeration a little, then does a
local search around the parent: extend it by one op (parameters inferred against the
targets), tweak one parameter, drop one op; children are pre-scored on the train pairs
and sampled by a Boltzmann choice at the given temperature. ``crossover`` grafts
sub-trees of one parent into the other. Every returned program is valid JSON that
:func:`atlas_actors.arc.compile_program` accepts, ran without error on every train and
test input, and was never returned before for this task.

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
from atlas_actors.arc.solver import Node, TaskSolver
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
        hides the rule (``TaskSolver.held_out``). 0 turns it off."""
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
        with self._lock:
            e = self._entries.get(task.id)
            if e is not None:
                self._entries.move_to_end(task.id)
                return e
        train, tests = task_grids(task)
        e = _Entry(TaskSolver(train, tests))
        with self._lock:
            e = self._entries.setdefault(task.id, e)
            while len(self._entries) > self.max_tasks:
                self._entries.popitem(last=False)
            # op-output caches are the bulk of an entry's memory and pay off only while
            # a task is searched: keep them for the tasks used last
            for old in list(self._entries.values())[:-CACHED_TASKS]:
                old.solver.cache.entries.clear()
        return e

    def initial_sync(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        e = self.entry(task)
        with e.lock:
            e.solver.search(self.initial_budget, max_seconds=self.initial_seconds)
            near: list[Node] = []
            s = e.solver
            if (
                s.exact
                and s.pinned is None  # once per task: it pins
                and not s.search_alternative(self.second_budget, self.second_seconds)
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
            e.solver.search(self.mutate_budget, max_seconds=self.step_seconds / 2)
            out = self._take_exact(e)
            s = e.solver
            if not s.exact and s.held_out_applications() < self.held_out_budget:
                near = s.held_out(self.held_out_step, max_seconds=self.step_seconds / 4)
                out += self._exact_from(e, near)
                for node in near:
                    self._emit(e, node.expr, out)
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
            stop = time.thread_time() + self.step_seconds
            for ex in _tweaks(expr, rng, 2 * n) + _deletions(expr):
                if time.thread_time() > stop:
                    break
                tweaked = e.solver.node_for(ex)
                if tweaked is not None:
                    cands.setdefault(_key(ex), tweaked)
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
            out = self._take_exact(e)
            ea, eb = _parse(a.solution), _parse(b.solution)
            if ea is None or eb is None:
                return out + self._fill(e, n - len(out), rng)
            cands: dict[str, Node] = {}
            stop = time.thread_time() + self.step_seconds
            for ex in _grafts(ea, eb, rng, 3 * n) + _grafts(eb, ea, rng, 3 * n):
                if time.thread_time() > stop:
                    break
                key = _key(ex)
                if key in cands or key in e.emitted:
                    continue
                node = e.solver.node_for(ex)
                if node is not None:
                    cands[key] = node
            out += self._exact_from(e, cands.values())
            for node in _boltzmann(list(cands.values()), n, rng, 0.5):
                self._emit(e, node.expr, out)
            if len(out) < n:
                out += self._fill(e, n - len(out), rng)
            return out[: max(n, n_exact(e, out))]

    # ------------------------------------------------------------ helpers

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
        while s.held_out_applications() < self.held_out_budget:
            spent = s.held_out_applications()
            found += s.held_out(self.held_out_step, max_seconds=self.step_seconds / 4)
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
            node = e.solver.node_for(expr)
            deadline = time.thread_time() + self.step_seconds
            got = [] if node is None else e.solver.expand(node, 600, deadline)
            got.sort(key=lambda nd: -nd.score)
            e.expansions[key] = got
            e.solver.nodes.extend(got)
        return [nd for nd in got if _key(nd.expr) not in e.emitted]


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
