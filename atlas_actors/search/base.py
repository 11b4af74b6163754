"""Protocols the searches depend on: proposers and discriminators.

A proposer makes candidate solutions (the offline ARC DSL proposer, the offline
code-repair proposer, or an LLM); an evaluator (see
:class:`atlas_actors.environments.base.Evaluator`) scores them. Searches only ever talk
to these protocols, so an actor pool is just another implementation.
"""

from __future__ import annotations

import random
from typing import Any, Protocol, runtime_checkable

from atlas_actors.types import Candidate, Task


@runtime_checkable
class Proposer(Protocol):
    """Makes candidate solutions for a task.

    Every method gets its own ``rng`` (seeded by the search), so the same seed gives
    the same proposals however many calls run concurrently. Methods return JSON-able
    solutions; they may return fewer than asked (or more, for ``initial``), never
    invalid ones.
    """

    proposals_per_call: int
    """How many children one mutate/crossover call should ask for (1 for LLMs;
    more for cheap offline proposers)."""

    # Optional: ``max_concurrent_calls: int | None``. A CPU-bound proposer sets it to 1:
    # the search then runs its calls one at a time and checks the time limit between
    # them, so a deadline is overrun by at most one call. LLM proposers leave it unset.

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        """Initial solutions for ``task``, about ``n`` of them."""
        ...

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        """Variations of ``parent``, guided by ``parent.outcome`` feedback."""
        ...

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        """Children combining ``a`` and ``b``."""
        ...


@runtime_checkable
class Scorer(Protocol):
    """Scores a candidate in [0, 1] without running it (a discriminator backend)."""

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        """Return ``(score, reason)``."""
        ...
