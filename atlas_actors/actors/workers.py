"""The plain classes the actors hold (no Ray in their logic).

:class:`EnvironmentWorker` keeps ready environments (one :class:`LocalEvaluator` per
task domain) and scores solutions for whichever task a request names;
:class:`ScorerWorker` holds a :class:`~atlas_actors.search.base.Scorer` (with an LLM,
:class:`DomainJudges`: each task's domain's judge). The actor
classes in :mod:`atlas_actors.actors.pool` are ``ray.remote(opts)(PlainClass)``, so
every actor method *is* one of these methods.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from atlas_actors.config import LLMConfig, MindEvolutionConfig
from atlas_actors.environments.base import MinimalEnvironment, Transition
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.environments.registry import create_environment, get_domain, pool_preferences
from atlas_actors.search.base import Scorer, ValueEstimate
from atlas_actors.types import Candidate, Outcome, RoutingDecision, Task, TaskResult

EnvironmentFactory = Callable[[Task], MinimalEnvironment]
"""Makes a (not yet reset) environment for a task; must pickle (it crosses to actors)."""

ScorerFactory = Callable[[], Scorer]
"""Makes the scorer a discriminator actor holds; must pickle."""

DEFAULT_CACHE = 64
"""Environments kept ready per domain when neither ``cache_sizes`` nor the domain's spec
(``DomainSpec.environment_cache``) says how many."""


def cache_size(domain: str, cache_sizes: Mapping[str, int]) -> int:
    """Environments an actor keeps ready for ``domain``: ``cache_sizes[domain]``, else
    the domain's preference, else :data:`DEFAULT_CACHE`."""
    if domain in cache_sizes:
        return cache_sizes[domain]
    preferred, _ = pool_preferences(domain)
    return preferred if preferred is not None else DEFAULT_CACHE


def process_info() -> dict[str, Any]:
    """Where this code runs: pid, host and (inside Ray) the node and actor ids."""
    info: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname()}
    try:
        import ray

        if ray.is_initialized():
            ctx = ray.get_runtime_context()
            info["node_id"] = ctx.get_node_id()
            info["actor_id"] = ctx.get_actor_id()
    except ImportError:  # pragma: no cover - ray is a dependency
        pass
    return info


class EnvironmentWorker:
    """Scores solutions for any task, keeping reset environments per task (LRU).

    One :class:`LocalEvaluator` per domain, so the cache size can differ (see
    :func:`cache_size`): a grid verifier keeps many tasks ready, a container-backed
    environment a few.
    """

    def __init__(
        self,
        factory: EnvironmentFactory | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        cache_sizes: Mapping[str, int] | None = None,
    ) -> None:
        self._factory = factory
        self._options = {k: dict(v) for k, v in (options or {}).items()}
        self._cache_sizes = dict(cache_sizes or {})
        self._evaluators: dict[str, LocalEvaluator] = {}

    def _evaluator(self, domain: str) -> LocalEvaluator:
        ev = self._evaluators.get(domain)
        if ev is None:
            factory = self._factory or functools.partial(
                create_environment, **self._options.get(domain, {})
            )
            ev = LocalEvaluator(factory, max_tasks=cache_size(domain, self._cache_sizes))
            self._evaluators[domain] = ev
        return ev

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        """One Outcome per solution, in order (idempotent: safe to retry)."""
        return await self._evaluator(task.domain).evaluate(task, solutions)

    async def verify(self, task: Task, solution: Any) -> Outcome:
        """The environment's full ``verify`` of a final answer (idempotent)."""
        return await self._evaluator(task.domain).verify(task, solution)

    async def root(self, task: Task) -> Transition:
        """The task's initial state (tree search)."""
        return await self._evaluator(task.domain).root(task)

    async def transition(self, task: Task, state: dict[str, Any], action: Any) -> Transition:
        """Restore ``state``, apply ``action`` (idempotent: the state is restored first)."""
        return await self._evaluator(task.domain).transition(task, state, action)

    async def invoke(self, task: Task, tool: str, kwargs: dict[str, Any]) -> Any:
        """Call one of the task's environment's tools (see ``Toolbox``)."""
        return await self._evaluator(task.domain).invoke(task, tool, **kwargs)

    async def holds(self, task: Task) -> bool:
        """Whether this worker has ``task``'s environment ready."""
        ev = self._evaluators.get(task.domain)
        return ev is not None and ev.holds(task)

    async def solve(
        self,
        task: Task,
        config: MindEvolutionConfig,
        seed: int,
        llm: LLMConfig | None,
        routing: RoutingDecision | None = None,
        proposer_options: dict[str, Any] | None = None,
    ) -> TaskResult:
        """Run a whole search here, against this worker's in-process evaluator
        (``placement="actors"``). Deterministic for a seed: safe to retry elsewhere."""
        from atlas_actors.search.solve import solve_task

        return await solve_task(
            task,
            self._evaluator(task.domain),
            config=config,
            seed=seed,
            llm=llm,
            routing=routing,
            proposer_options=proposer_options,
        )

    async def info(self) -> dict[str, Any]:
        """Health check: where the worker runs and how much it has scored."""
        return {
            **process_info(),
            "evaluations": sum(ev.evaluations for ev in self._evaluators.values()),
        }

    async def aclose(self) -> None:
        """Release every environment (containers, sandboxes)."""
        evaluators = list(self._evaluators.values())
        self._evaluators.clear()
        for ev in evaluators:
            await ev.aclose()


class DomainJudges:
    """A discriminator backend that values each task with its domain's LLM judge
    (``DomainSpec.judge``, on a client of its own for ``llm``), or with the offline
    test-evidence scorer for a domain that has no judge."""

    def __init__(self, llm: LLMConfig) -> None:
        self.llm = llm
        self._judges: dict[str, Scorer] = {}

    def judge(self, domain: str) -> Scorer:
        """The judge of ``domain`` (made on first use)."""
        judge = self._judges.get(domain)
        if judge is None:
            spec = get_domain(domain)
            if spec is not None and spec.judge is not None:
                from atlas_actors.llm.client import LLMClient  # the LLM SDK: only with an LLM

                judge = spec.make_judge(LLMClient(self.llm))
            else:
                from atlas_actors.search.discriminator import TestEvidenceScorer

                judge = TestEvidenceScorer()
            assert judge is not None
            self._judges[domain] = judge
        return judge

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        return await self.judge(task.domain).score(task, candidate)

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        from atlas_actors.search.discriminator import Discriminator

        return await Discriminator(self.judge(task.domain)).assess(task, candidate)

    async def aclose(self) -> None:
        judges = list(self._judges.values())
        self._judges.clear()
        for judge in judges:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()


def llm_judge_factory(llm: LLMConfig) -> Scorer:
    """The discriminator actors' backend with an LLM: each domain's judge."""
    return DomainJudges(llm)


class ScorerWorker:
    """Holds one discriminator backend (a :class:`~atlas_actors.search.base.Scorer`, and
    an :class:`~atlas_actors.search.base.Assessor` when it has ``assess``) and delegates
    to it. Default backend: the offline test-evidence scorer (which reads a candidate's
    verdict: test evidence for patches, the partial score otherwise)."""

    def __init__(self, factory: ScorerFactory | None = None) -> None:
        if factory is None:
            from atlas_actors.search.discriminator import TestEvidenceScorer

            self._scorer: Scorer = TestEvidenceScorer()
        else:
            self._scorer = factory()

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        return await self._scorer.score(task, candidate)

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        """A value estimate with its explanation, confidence and source."""
        from atlas_actors.search.discriminator import Discriminator

        return await Discriminator(self._scorer).assess(task, candidate)

    async def info(self) -> dict[str, Any]:
        return process_info()

    async def aclose(self) -> None:
        close = getattr(self._scorer, "aclose", None)
        if close is not None:
            await close()
