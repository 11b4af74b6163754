"""The state of one MCTS search (see :mod:`atlas_actors.search.mcts`): the tree and its
seen-state table, the verdicts and value estimates (each computed once per distinct
solution or state), the concurrency limits, and the budgets that stop the search."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

import anyio

from atlas_actors.config import SWESearchConfig
from atlas_actors.environments.base import Evaluator
from atlas_actors.search.base import ActionProposer, Stepper, ValueEstimate
from atlas_actors.search.discriminator import (
    Discriminator,
    RolloutEnv,
    call_limited,
    evidence_estimate,
)
from atlas_actors.search.tree import MCTSNode, MCTSStats, SearchTree, StopReason, verdict_key
from atlas_actors.types import Candidate, Outcome, Task

log = logging.getLogger(__name__)

T = TypeVar("T")


class Once(Generic[T]):
    """Values by key, each computed once even when asked for concurrently."""

    def __init__(self) -> None:
        self.done: dict[str, T] = {}
        self._pending: dict[str, anyio.Event] = {}

    async def get(self, key: str, compute: Callable[[], Awaitable[T]]) -> T:
        while key not in self.done:
            event = self._pending.get(key)
            if event is None:
                event = anyio.Event()
                self._pending[key] = event
                try:
                    self.done[key] = await compute()
                finally:
                    del self._pending[key]
                    event.set()
            else:
                await event.wait()  # if that computation failed, the loop tries again
        return self.done[key]


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (marked as cut)."""
    return text if len(text) <= limit else text[: limit - 12] + "\n... (cut)"


def short(exc: BaseException) -> str:
    """An exception on one line, for feedback and logs."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:500]


def _usage_of(obj: object, task_id: str) -> Any:
    per_task = getattr(obj, "usage_for", None)
    if callable(per_task):
        return per_task(task_id)
    return getattr(obj, "usage", None)


class _Evaluations:
    """The search's evaluator for rollouts: one verdict per distinct solution, counted,
    trimmed."""

    def __init__(self, run: SearchRun) -> None:
        self.run = run

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        out: list[Outcome] = []
        for solution in solutions:
            if solution is None:  # a state-only domain: no key to share a verdict by
                self.run.stats.evaluations += 1
                raw = await call_limited(
                    None, self.run.env_limiter, self.run.evaluator.evaluate, task, [solution]
                )
                out.append(self.run.trim(raw[0]))
            else:
                out.append(await self.run.verdict(solution, {}))
        return out


class SearchRun:
    """The state of one ``SWESearch.search`` call, shared by its expansion, integration
    and persistence."""

    def __init__(
        self,
        *,
        proposer: ActionProposer,
        stepper: Stepper,
        evaluator: Evaluator,
        discriminator: Discriminator | None,
        config: SWESearchConfig,
        task: Task,
        seed: int,
    ) -> None:
        self.proposer = proposer
        self.stepper = stepper
        self.evaluator = evaluator
        self.discriminator = discriminator
        self.cfg = config
        self.task = task
        self.seed = seed
        self.tree = SearchTree(task_id=task.id, seed=seed, config=config.model_dump(mode="json"))
        self.table: dict[str, int] = {}
        """The seen-state table: a state's key -> the node that holds it."""
        self.verdicts: Once[Outcome] = Once()
        self.estimates: Once[ValueEstimate] = Once()
        self.started = time.monotonic()
        self.deadline = (
            self.started + config.time_limit_s if config.time_limit_s is not None else None
        )
        self.prior_seconds = 0.0
        self.prior_calls = 0
        self.prior_cost = 0.0
        self.usage_base: tuple[int, float] = (0, 0.0)
        self.env_limiter = anyio.CapacityLimiter(config.concurrency) if config.concurrency else None
        calls = getattr(proposer, "max_concurrent_calls", None)
        self.proposer_limiter = (
            anyio.CapacityLimiter(calls) if isinstance(calls, int) and calls > 0 else None
        )
        self.rollout_env = RolloutEnv(
            stepper=stepper,
            evaluator=_Evaluations(self),
            proposer=proposer,
            call_timeout_s=config.call_timeout_s,
            limiter=self.env_limiter,
        )

    @property
    def nodes(self) -> list[MCTSNode]:
        return self.tree.nodes

    @property
    def stats(self) -> MCTSStats:
        return self.tree.stats

    # -- budgets ------------------------------------------------------------------------------

    def usage_now(self) -> tuple[int, float]:
        """LLM calls and cost of the proposer and the discriminator for the task so far."""
        seen: set[int] = set()
        calls, cost = 0, 0.0
        for obj in (self.proposer, self.discriminator):
            usage = _usage_of(obj, self.task.id) if obj is not None else None
            if usage is None or id(usage) in seen:
                continue
            seen.add(id(usage))
            calls += int(getattr(usage, "calls", 0) or 0)
            cost += float(getattr(usage, "cost", 0.0) or 0.0)
        return calls, cost

    def update_usage(self) -> None:
        calls, cost = self.usage_now()
        self.stats.llm_calls = self.prior_calls + calls - self.usage_base[0]
        self.stats.llm_cost = self.prior_cost + cost - self.usage_base[1]

    def update_stats(self) -> None:
        """The counters as of now: LLM usage, nodes, seconds (resumed runs included)."""
        self.update_usage()
        self.stats.nodes = len(self.nodes)
        self.stats.seconds = self.prior_seconds + (time.monotonic() - self.started)

    def time_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def stop_reason(self) -> StopReason | None:
        cfg = self.cfg
        if cfg.stop_on_success and any(n.succeeded for n in self.nodes):
            return "success"
        if self.stats.expansions >= cfg.max_expansions:
            return "expansions"
        if cfg.max_cost is not None:
            self.update_usage()
            if self.stats.llm_cost >= cfg.max_cost:
                return "cost"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time"
        return None

    # -- verdicts and values ------------------------------------------------------------------

    async def verdict(self, solution: Any, state: dict[str, Any]) -> Outcome:
        """The evaluator's verdict on ``solution``, once per distinct solution."""

        async def compute() -> Outcome:
            self.stats.evaluations += 1
            outcomes = await call_limited(
                self.cfg.call_timeout_s,
                self.env_limiter,
                self.evaluator.evaluate,
                self.task,
                [solution],
            )
            return self.trim(outcomes[0])

        return await self.verdicts.get(verdict_key(solution, state), compute)

    def trim(self, outcome: Outcome) -> Outcome:
        """The verdict as the search keeps it: feedback cut, no details."""
        return outcome.model_copy(
            update={
                "feedback": cut(outcome.feedback, self.cfg.max_observation_chars),
                "details": {},
            }
        )

    async def estimate(self, key: str, candidate: Candidate) -> ValueEstimate:
        """The value estimate of a candidate, once per distinct state."""
        disc = self.discriminator

        async def compute() -> ValueEstimate:
            if disc is None:
                outcome = candidate.outcome
                value = (
                    0.0 if outcome is None else (1.0 if outcome.success else outcome.partial_score)
                )
                return ValueEstimate(
                    value=value, explanation="the verifier's partial score", source="partial_score"
                )
            found: list[ValueEstimate] = []
            with anyio.move_on_after(self.cfg.call_timeout_s):
                found.append(await disc.assess(self.task, candidate))
            return (
                found[0] if found else evidence_estimate(candidate, "the discriminator timed out")
            )

        return await self.estimates.get(key, compute)

    def candidate(self, node: MCTSNode) -> Candidate:
        """A node as a candidate solution (for the discriminator and the result)."""
        outcome = node.outcome
        return Candidate(
            id=f"{self.task.id}#n{node.id}",
            solution=node.solution,
            outcome=outcome,
            fitness=outcome.partial_score if outcome is not None else 0.0,
            origin="init" if node.parent is None else "mutation",
            parents=[] if node.parent is None else [f"{self.task.id}#n{node.parent}"],
            generation=node.depth,
        )
