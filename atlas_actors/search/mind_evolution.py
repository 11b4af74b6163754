"""Mind Evolution (Lee et al. 2025): islands of candidates evolved by a proposer.

One generation, on every island at once:

* ``conversations_per_island`` conversations start from parents picked by Boltzmann
  tournament (two parents and a crossover with probability ``crossover_rate``, else a
  mutation of one parent);
* each conversation runs ``turns_per_conversation`` turns: the proposer refines the
  best child so far, reading the verifier's feedback on it (for LLM proposers this is
  the critic/author "refinement through critical conversation");
* every child is scored by the evaluator (the environment's train-only fitness);
* each island keeps its elites plus the best new children, sends its top
  ``migration_size`` to the next island on the ring, and every ``reset_interval``
  generations the ``reset_islands`` weakest islands restart from the best candidates
  overall plus fresh proposals.

The search stops when a candidate succeeds (all train pairs exact, for ARC), when the
evaluation budget or time limit is spent, or after ``generations``.

Determinism: every proposer call gets its own ``random.Random`` derived from
``(seed, generation, island, conversation)``, parents are chosen from a snapshot taken
at the start of the generation, duplicates are found against that snapshot, and the
evaluation budget is split between conversations up front. So the same seed, budget
and proposer give the same result however the evaluations interleave. (A wall-clock
``time_limit_s`` is the one thing that can cut a run at a different point.)
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import random
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.config import MindEvolutionConfig
from atlas_actors.environments.base import Evaluator
from atlas_actors.search.base import Proposer
from atlas_actors.types import Candidate, Origin, Outcome, Task, solution_key

StopReason = Literal["success", "evaluations", "time", "generations"]


class SearchResult(BaseModel):
    """What a search found for one task."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    candidates: list[Candidate] = Field(default_factory=list)
    """Distinct candidates, best first (at most ``keep`` of them)."""
    evaluations: int = 0
    """Evaluations charged to the budget (deterministic for a seed)."""
    evaluator_calls: int = 0
    """Solutions actually sent to the evaluator (concurrent duplicates share one)."""
    generations: int = 0
    seconds: float = 0.0
    stopped: StopReason = "generations"
    history: list[float] = Field(default_factory=list)
    """Best fitness after initialisation and after each generation."""

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


def derive_rng(seed: int, *parts: object) -> random.Random:
    """An independent, reproducible RNG for one proposer call."""
    digest = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _settles(c: Candidate) -> bool:
    """``c`` succeeds on everything the search may see and the environment has no doubt
    about its answers (``Outcome.doubts``, e.g. an ARC prediction that breaks a property
    every train pair has): a success worth stopping on. A doubted success is kept and
    ranked like any other; the search goes on looking for one without doubts."""
    if c.outcome is None or not c.outcome.success:
        return False
    return not c.outcome.doubted


def _rank_key(c: Candidate) -> tuple[float, int]:
    return (-c.fitness, c.generation)


class _Budget:
    """Evaluation and time budget of one search."""

    def __init__(self, cfg: MindEvolutionConfig, memo: _Memo, proposer_calls: int | None) -> None:
        self.memo = memo
        self.limiter = anyio.CapacityLimiter(proposer_calls) if proposer_calls else None
        self.sequential = proposer_calls == 1
        self.max_evaluations = cfg.max_evaluations
        self.deadline = (
            time.monotonic() + cfg.time_limit_s if cfg.time_limit_s is not None else None
        )
        self.used = 0
        self.settled = False
        """A conversation found a success worth stopping on and the generation's other
        conversations take no further turn (``end_generation_on_success``)."""

    def remaining(self) -> int | None:
        if self.max_evaluations is None:
            return None
        return max(0, self.max_evaluations - self.used)

    @contextlib.asynccontextmanager
    async def proposer_slot(self) -> AsyncIterator[None]:
        """Hold one of the proposer's call slots (no limit when it declares none)."""
        if self.limiter is None:
            yield
        else:
            async with self.limiter:
                yield

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def exhausted(self) -> StopReason | None:
        if self.remaining() == 0:
            return "evaluations"
        if self.out_of_time():
            return "time"
        return None


class _Memo:
    """Outcomes by solution key for one search: a solution proposed by two concurrent
    conversations is evaluated once, and the second waits for the first's result."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator
        self.done: dict[str, Outcome] = {}
        self.pending: dict[str, anyio.Event] = {}
        self.calls = 0
        """Solutions actually sent to the evaluator."""

    async def evaluate(self, task: Task, keyed: list[tuple[str, Any]]) -> list[Outcome]:
        mine = [(k, s) for k, s in keyed if k not in self.done and k not in self.pending]
        for k, _ in mine:
            self.pending[k] = anyio.Event()
        try:
            if mine:
                self.calls += len(mine)
                outcomes = await self.evaluator.evaluate(task, [s for _, s in mine])
                for (k, _), o in zip(mine, outcomes, strict=True):
                    self.done[k] = o
        finally:
            for k, _ in mine:
                self.pending.pop(k).set()
        result: list[Outcome] = []
        for k, s in keyed:
            event = self.pending.get(k)
            if event is not None:
                await event.wait()
            if k not in self.done:  # the other evaluation failed: do it here
                self.calls += 1
                self.done[k] = (await self.evaluator.evaluate(task, [s]))[0]
            result.append(self.done[k])
        return result


class MindEvolutionSearch:
    """Mind Evolution over any proposer and any evaluator.

    Args:
        proposer: makes initial solutions, mutations and crossovers.
        evaluator: scores solutions (``partial_score`` is the fitness); in process
            (:class:`~atlas_actors.environments.base.LocalEvaluator`) or a Ray pool.
        config: the paper's settings and the budget.
        keep: how many distinct candidates the result lists.
        chunk: solutions sent to the evaluator per call (the time limit and an early
            success are checked between chunks).
    """

    def __init__(
        self,
        proposer: Proposer,
        evaluator: Evaluator,
        config: MindEvolutionConfig | None = None,
        keep: int = 32,
        chunk: int = 256,
    ) -> None:
        self.proposer = proposer
        self.evaluator = evaluator
        self.config = config or MindEvolutionConfig()
        self.keep = keep
        self.chunk = chunk

    async def search(
        self, task: Task, *, seed: int = 0, initial: Sequence[Any] = ()
    ) -> SearchResult:
        """Evolve solutions for ``task``.

        ``initial``: remembered solutions to seed from (up to ``memory_init_fraction``
        of the first population).
        """
        cfg = self.config
        start = time.monotonic()
        budget = _Budget(
            cfg, _Memo(self.evaluator), getattr(self.proposer, "max_concurrent_calls", None)
        )
        seen: dict[str, Candidate] = {}
        history: list[float] = []

        # -- initial population --------------------------------------------------------
        total = cfg.islands * cfg.population_size
        n_memory = min(len(initial), int(cfg.memory_init_fraction * total))
        memory = [(s, "memory") for s in list(initial)[:n_memory]]
        # a proposer that can be shown the remembered solutions (an LLM: as examples in
        # its first prompt) gets them; the others propose as they would without memory
        with_examples = getattr(self.proposer, "initial_with_examples", None)
        rng = derive_rng(seed, "init")
        if initial and with_examples is not None:
            fresh = await with_examples(task, total - n_memory, rng, list(initial))
        else:
            fresh = await self.proposer.initial(task, total - n_memory, rng)
        first = await self._evaluate(
            task,
            [*memory, *((s, "init") for s in fresh)],
            budget,
            seen,
            seen,
            generation=0,
            island=-1,
            parents=[],
        )
        islands: list[list[Candidate]] = [[] for _ in range(cfg.islands)]
        for i, cand in enumerate(first):
            cand.island = i % cfg.islands
            islands[cand.island].append(cand)
        islands = [self._select([], isl) for isl in islands]
        history.append(self._best_fitness(seen))

        stopped: StopReason | None = self._success(seen) or budget.exhausted()
        generation = 0
        while stopped is None and generation < cfg.generations:
            generation += 1
            snapshot = dict(seen)
            allot = self._allot(budget.remaining())
            slots: dict[tuple[int, int], list[Candidate]] = {}

            jobs = [
                (task, islands[isl], isl, conv, generation, seed,
                 allot[isl * cfg.conversations_per_island + conv] if allot else None,
                 budget, snapshot)
                for isl in range(cfg.islands)
                for conv in range(cfg.conversations_per_island)
            ]  # fmt: skip
            if budget.sequential:
                # A stateful, CPU-bound proposer: call it in a fixed order (concurrency
                # would only interleave its calls on one core, in a timing-dependent order).
                for job in jobs:
                    await self._run_conversation(slots, job)
            else:
                async with anyio.create_task_group() as tg:
                    for job in jobs:
                        tg.start_soon(self._run_conversation, slots, job)

            # Merge in (island, conversation) order, never in completion order.
            for isl in range(cfg.islands):
                children: list[Candidate] = []
                for conv in range(cfg.conversations_per_island):
                    for c in slots.get((isl, conv), []):
                        seen.setdefault(solution_key(c.solution), c)
                        children.append(c)
                islands[isl] = self._select(islands[isl], children)
            self._migrate(islands)
            stopped = self._success(seen) or budget.exhausted()
            if stopped is None and generation % cfg.reset_interval == 0 and cfg.reset_islands > 0:
                await self._reset(task, islands, generation, seed, budget, seen)
                stopped = self._success(seen) or budget.exhausted()
            history.append(self._best_fitness(seen))

        ranked = sorted(seen.values(), key=_rank_key)[: self.keep]
        return SearchResult(
            task_id=task.id,
            candidates=ranked,
            evaluations=budget.used,
            evaluator_calls=budget.memo.calls,
            generations=generation,
            seconds=time.monotonic() - start,
            stopped=stopped or "generations",
            history=history,
        )

    # -- one conversation ----------------------------------------------------------------

    async def _run_conversation(
        self, slots: dict[tuple[int, int], list[Candidate]], args: tuple[Any, ...]
    ) -> None:
        slots[(args[2], args[3])] = await self._conversation(*args)

    async def _conversation(
        self,
        task: Task,
        population: list[Candidate],
        island: int,
        conv: int,
        generation: int,
        seed: int,
        limit: int | None,
        budget: _Budget,
        snapshot: dict[str, Candidate],
    ) -> list[Candidate]:
        cfg = self.config
        rng = derive_rng(seed, generation, island, conv)
        n = max(1, int(getattr(self.proposer, "proposals_per_call", 1)))
        produced: list[Candidate] = []
        if not population or limit == 0:
            return produced
        local: dict[str, Candidate] = {}
        current: Candidate | None = None
        for turn in range(cfg.turns_per_conversation):
            if budget.out_of_time() or budget.settled or (limit is not None and limit <= 0):
                break
            ask = n if limit is None else min(n, limit)
            async with budget.proposer_slot():
                if budget.out_of_time() or budget.settled:  # the slot may have taken a while
                    break
                if turn == 0 and len(population) >= 2 and rng.random() < cfg.crossover_rate:
                    a = self._tournament(population, rng)
                    b = self._tournament([c for c in population if c.id != a.id], rng)
                    sols = await self.proposer.crossover(task, a, b, ask, rng)
                    origin: Origin = "crossover"
                    parents = [a.id, b.id]
                else:
                    parent = current if current is not None else self._tournament(population, rng)
                    temperature = cfg.mutation_temperature
                    sols = await self.proposer.mutate(task, parent, ask, rng, temperature)
                    origin = "mutation"
                    parents = [parent.id]
            if not sols:
                break
            if limit is not None:
                sols = sols[:limit]
            new = await self._evaluate(
                task,
                [(s, origin) for s in sols],
                budget,
                snapshot,
                local,
                generation=generation,
                island=island,
                parents=parents,
            )
            if limit is not None:
                limit -= len(new)
            produced.extend(new)
            ends = cfg.stop_on_success and cfg.end_generation_on_success
            if ends and not budget.sequential and any(map(_settles, new)):
                budget.settled = True
            if new:
                best_new = min(new, key=_rank_key)
                if current is None or best_new.fitness >= current.fitness:
                    current = best_new
            if current is not None and _settles(current):
                break
        return produced

    # -- pieces ------------------------------------------------------------------------------

    async def _evaluate(
        self,
        task: Task,
        items: Sequence[tuple[Any, str]],
        budget: _Budget,
        known: dict[str, Candidate],
        local: dict[str, Candidate],
        *,
        generation: int,
        island: int,
        parents: list[str],
    ) -> list[Candidate]:
        """Score new solutions (skipping ones already known); returns the new candidates."""
        todo: list[tuple[str, Any, str]] = []
        for sol, origin in items:
            key = solution_key(sol)
            if key in known or key in local or any(k == key for k, _, _ in todo):
                continue
            todo.append((key, sol, origin))
        remaining = budget.remaining()
        if remaining is not None:
            todo = todo[:remaining]
        out: list[Candidate] = []
        for start in range(0, len(todo), self.chunk):
            if start and (budget.out_of_time() or self._any_success(out)):
                break
            chunk = todo[start : start + self.chunk]
            budget.used += len(chunk)
            outcomes = await budget.memo.evaluate(task, [(key, sol) for key, sol, _ in chunk])
            out.extend(self._candidates(chunk, outcomes, generation, island, parents, local))
        return out

    def _candidates(
        self,
        chunk: list[tuple[str, Any, str]],
        outcomes: Sequence[Any],
        generation: int,
        island: int,
        parents: list[str],
        local: dict[str, Candidate],
    ) -> list[Candidate]:
        out: list[Candidate] = []
        for (key, sol, origin), outcome in zip(chunk, outcomes, strict=True):
            cand = Candidate(
                id=f"g{generation}i{island}-{key[:10]}",
                solution=sol,
                outcome=outcome,
                fitness=outcome.partial_score,
                origin=origin,
                parents=list(parents),
                generation=generation,
                island=max(island, 0),
                cost={"evaluations": 1.0},
            )
            local[key] = cand
            out.append(cand)
        return out

    def _any_success(self, cands: list[Candidate]) -> bool:
        return self.config.stop_on_success and any(_settles(c) for c in cands)

    def _select(self, population: list[Candidate], children: list[Candidate]) -> list[Candidate]:
        """Elites of the old population plus the best new children, distinct solutions."""
        cfg = self.config
        n_elite = max(1, math.ceil(cfg.elite_fraction * cfg.population_size)) if population else 0
        elites = sorted(population, key=_rank_key)[:n_elite]
        chosen: dict[str, Candidate] = {solution_key(c.solution): c for c in elites}
        rest = sorted(
            [c for c in [*children, *population] if solution_key(c.solution) not in chosen],
            key=_rank_key,
        )
        for c in rest:
            if len(chosen) >= cfg.population_size:
                break
            chosen.setdefault(solution_key(c.solution), c)
        return sorted(chosen.values(), key=_rank_key)

    def _tournament(self, population: list[Candidate], rng: random.Random) -> Candidate:
        """Boltzmann tournament: pick with probability ∝ exp(fitness / T)."""
        t = self.config.boltzmann_temperature
        top = max(c.fitness for c in population)
        weights = [math.exp((c.fitness - top) / t) for c in population]
        return rng.choices(population, weights=weights, k=1)[0]

    def _migrate(self, islands: list[list[Candidate]]) -> None:
        """Each island's top ``migration_size`` join the next island on the ring."""
        k = self.config.migration_size
        if k == 0 or len(islands) < 2:
            return
        emigrants = [sorted(isl, key=_rank_key)[:k] for isl in islands]
        for i, group in enumerate(emigrants):
            dest = (i + 1) % len(islands)
            keys = {solution_key(c.solution) for c in islands[dest]}
            moved = [c for c in group if solution_key(c.solution) not in keys]
            merged = sorted([*islands[dest], *moved], key=_rank_key)
            islands[dest] = merged[: self.config.population_size]

    async def _reset(
        self,
        task: Task,
        islands: list[list[Candidate]],
        generation: int,
        seed: int,
        budget: _Budget,
        seen: dict[str, Candidate],
    ) -> None:
        """Restart the weakest islands from the global best plus fresh proposals."""
        cfg = self.config
        order = sorted(
            range(len(islands)),
            key=lambda i: (max((c.fitness for c in islands[i]), default=0.0), i),
        )
        weakest = order[: min(cfg.reset_islands, len(islands) - 1)]
        best = sorted(seen.values(), key=_rank_key)[: cfg.reset_top_k]
        for isl in weakest:
            if budget.out_of_time():
                return
            n_new = max(0, cfg.population_size - len(best))
            fresh = await self.proposer.initial(
                task, n_new, derive_rng(seed, "reset", generation, isl)
            )
            local: dict[str, Candidate] = {}
            new = await self._evaluate(
                task,
                [(s, "init") for s in fresh],
                budget,
                seen,
                local,
                generation=generation,
                island=isl,
                parents=[],
            )
            for c in new:
                seen.setdefault(solution_key(c.solution), c)
            islands[isl] = self._select([], [*best, *new])

    def _allot(self, remaining: int | None) -> list[int] | None:
        """Split the remaining evaluation budget between this generation's conversations."""
        if remaining is None:
            return None
        cfg = self.config
        count = cfg.islands * cfg.conversations_per_island
        base, extra = divmod(remaining, count)
        return [base + (1 if i < extra else 0) for i in range(count)]

    def _success(self, seen: dict[str, Candidate]) -> StopReason | None:
        if not self.config.stop_on_success:
            return None
        return "success" if any(_settles(c) for c in seen.values()) else None

    @staticmethod
    def _best_fitness(seen: dict[str, Candidate]) -> float:
        return max((c.fitness for c in seen.values()), default=0.0)
