"""DirectSolver: reuse what was solved before (seed spec 002's "adapt, verify, return").

For a task the router found similar to solved ones (``adapt`` or ``direct``), the solver
tries the remembered solutions before any search:

1. the most similar task's solution with its alternatives (for ARC the programs behind
   the other attempt): for a repeat they settle it; then, if none succeeds, every other
   remembered solution and alternative, most similar task first, in one evaluator call
   (an ARC program run on this task's train pairs; a remembered patch applied to this
   repository, where the environment's apply chain — ``git apply --3way``, then
   ``patch --fuzz`` — re-anchors hunks whose lines moved);
2. if none succeeds and the proposer can mutate (Mind Evolution's proposers: the DSL, an
   LLM), a few local mutations of the best remembered solutions;

and returns the first success, or the best partial result for the routed search to
start from. It never sees hidden answers: it scores through the evaluator, as a search
does. Deterministic for a seed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.environments.base import Evaluator
from atlas_actors.search.mind_evolution import derive_rng
from atlas_actors.types import Candidate, Experience, Task, solution_key


class DirectResult(BaseModel):
    """What reusing remembered solutions gave."""

    model_config = ConfigDict(extra="forbid")

    solved: bool = False
    """A candidate succeeded on everything the search may see, without doubts."""
    best: Candidate | None = None
    """The success, else the best candidate tried (None when nothing was tried)."""
    candidates: list[Candidate] = Field(default_factory=list)
    """Every candidate tried, best first."""
    evaluations: int = 0
    experiences: int = 0
    """Remembered experiences whose solutions were tried."""
    seconds: float = 0.0


class DirectSolver:
    """Adapts remembered solutions (see the module docstring).

    Args:
        memory: where ``solve`` looks experiences up when it is not given them (a
            :class:`~atlas_actors.memory.MemorySystem`; optional).
        proposer: a Mind Evolution proposer whose ``mutate`` makes local variations.
        max_experiences: remembered solutions tried at most.
        mutations: variations asked for each of the two best remembered solutions.
        temperature: the mutation temperature (how far a variation strays).
    """

    def __init__(
        self,
        memory: Any = None,
        proposer: Any = None,
        *,
        max_experiences: int = 5,
        mutations: int = 8,
        temperature: float = 0.7,
    ) -> None:
        self.memory = memory
        self.proposer = proposer
        self.max_experiences = max_experiences
        self.mutations = mutations
        self.temperature = temperature

    async def solve(
        self,
        task: Task,
        evaluator: Evaluator,
        experiences: Sequence[Experience] | None = None,
        *,
        seed: int = 0,
    ) -> DirectResult:
        """Try the remembered solutions of ``experiences`` (most similar first; from
        ``memory`` when None) on ``task``; the first success or the best partial."""
        start = time.monotonic()
        if experiences is None:
            found = await self.memory.query(task, self.max_experiences, successful_only=True)
            experiences = [e for e, _ in found]
        remembered: list[Any] = []
        first = 0  # how many of ``remembered`` come from the most similar experience
        seen: set[str] = set()
        used = 0
        for e in experiences:
            if used >= self.max_experiences:
                break
            if e.domain != task.domain or e.solution is None:
                continue
            used += 1
            for solution in (e.solution, *e.alternatives):
                key = solution_key(solution)
                if key not in seen:
                    seen.add(key)
                    remembered.append(solution)
            first = first or len(remembered)
        out = DirectResult(experiences=used)
        if not remembered:
            out.seconds = time.monotonic() - start
            return out
        # The most similar task's solution and its alternatives first (for a repeat they
        # are the answer, and the alternatives keep ARC's second attempt); the other
        # experiences' only when none of those succeeds.
        tried = await self._score(task, evaluator, remembered[:first], "memory", out)
        if not out.solved and len(remembered) > first:
            more = await self._score(task, evaluator, remembered[first:], "memory", out)
            tried = sorted([*tried, *more], key=lambda c: -c.fitness)
        if not out.solved and self.mutations > 0 and hasattr(self.proposer, "mutate"):
            for i, parent in enumerate(tried[:2]):
                rng = derive_rng(seed, "direct", i)
                children = await self.proposer.mutate(
                    task, parent, self.mutations, rng, self.temperature
                )
                fresh = [c for c in children if solution_key(c) not in seen]
                seen.update(solution_key(c) for c in fresh)
                if fresh and any(
                    _settles(c) for c in await self._score(task, evaluator, fresh, "mutation", out)
                ):
                    break
        out.candidates.sort(key=lambda c: -c.fitness)
        success = next((c for c in out.candidates if _settles(c)), None)
        out.best = success or (out.candidates[0] if out.candidates else None)
        out.seconds = time.monotonic() - start
        return out

    async def _score(
        self, task: Task, evaluator: Evaluator, solutions: list[Any], origin: Any, out: DirectResult
    ) -> list[Candidate]:
        outcomes = await evaluator.evaluate(task, solutions)
        out.evaluations += len(outcomes)
        made = [
            Candidate(solution=s, outcome=o, fitness=o.partial_score, origin=origin)
            for s, o in zip(solutions, outcomes, strict=True)
        ]
        out.candidates.extend(made)
        out.solved = out.solved or any(_settles(c) for c in made)
        return sorted(made, key=lambda c: -c.fitness)


def _settles(c: Candidate) -> bool:
    return c.outcome is not None and c.outcome.success and not c.outcome.doubted
