"""Solve one task end to end: proposer, search, report.

:func:`solve_task` is what the CLI, the :class:`~atlas_actors.actors.Engine` and the
search coordinator actor run for each task. It names no domain: the task's domain is
looked up in the registry (:mod:`atlas_actors.environments.registry`) for its proposer
and its reporter. The search never sees hidden answers: it scores candidates through
the evaluator (train pairs only, for ARC); the domain's reporter reads the hidden
answers afterwards, only to report whether the answer was right (``solved`` is None
when they are unknown).
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from atlas_actors.config import LLMConfig, MindEvolutionConfig
from atlas_actors.environments.base import Evaluator, Verifier
from atlas_actors.environments.registry import get_domain, require_domain
from atlas_actors.errors import AtlasError
from atlas_actors.resources import close_shared_proposers
from atlas_actors.search.base import Proposer
from atlas_actors.search.mind_evolution import MindEvolutionSearch, SearchResult
from atlas_actors.types import Task, TaskResult


def make_proposer(task: Task, llm: LLMConfig | None = None) -> Any:
    """The proposer for one search of ``task``, from its domain's registration: an LLM
    proposer when ``llm`` is given, else the domain's offline proposer."""
    return require_domain(task.domain).make_proposer(task, llm)


def task_seed(seed: int, task_id: str) -> int:
    """The seed a task is searched with: derived from the run's seed and the task id, so
    answers do not depend on task order, concurrency or resumption."""
    digest = hashlib.blake2b(f"{seed}:{task_id}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big")


async def close_proposers() -> None:
    """Close the proposers shared per process (LLM connection pools); call at the end
    of a run."""
    await close_shared_proposers()


async def solve_task(
    task: Task,
    evaluator: Evaluator,
    *,
    config: MindEvolutionConfig | None = None,
    seed: int = 0,
    llm: LLMConfig | None = None,
    proposer: Proposer | None = None,
) -> TaskResult:
    """Search ``task`` with Mind Evolution and report the result.

    Bad input (a task that cannot be loaded, an unregistered domain) is reported in
    ``TaskResult.error`` rather than raised, so one bad task never stops a run.
    """
    start = time.monotonic()
    try:
        spec = get_domain(task.domain)
        if proposer is None:
            proposer = require_domain(task.domain).make_proposer(task, llm)
        search = MindEvolutionSearch(proposer, evaluator, config)
        result = await search.search(task, seed=seed)
        verifier = evaluator if isinstance(evaluator, Verifier) else None
        reporter = spec.reporter_fn() if spec is not None else None
        report = await _report(task, result, reporter, verifier)
    except AtlasError as e:
        return TaskResult(
            task_id=task.id,
            domain=task.domain,
            error=f"{type(e).__name__}: {e}",
            seconds=time.monotonic() - start,
        )
    pop_usage = getattr(proposer, "pop_usage", None)
    if pop_usage is not None:
        report.usage = dict(pop_usage(task.id).as_dict())
    report.seconds = time.monotonic() - start
    return report


def readable(solution: Any) -> str | None:
    """A solution as text (a domain's reporter may replace it with something better)."""
    if solution is None or isinstance(solution, str):
        return solution
    return json.dumps(solution)


async def _report(
    task: Task, result: SearchResult, reporter: Any, verifier: Verifier | None
) -> TaskResult:
    best = result.best
    out = TaskResult(
        task_id=task.id,
        domain=task.domain,
        evaluations=result.evaluations,
        generations=result.generations,
        stopped=result.stopped,
        seconds=result.seconds,
        strategy="evolutionary",
    )
    if best is None or best.outcome is None:
        out.feedback = "no candidate was evaluated"
        return out
    out.solution = best.solution
    out.program = readable(best.solution)
    out.feedback = best.outcome.feedback
    exact = best.outcome.exact_fraction
    out.train_fitness = float(exact if exact is not None else best.outcome.partial_score)
    if reporter is not None:
        await reporter(task, result.candidates, out, verifier)
    return out
