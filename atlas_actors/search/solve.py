"""Solve one task end to end: proposer, search, answer, report.

:func:`solve_task` is what the CLI, the :class:`~atlas_actors.actors.Engine` and the
search coordinator actor run for each task. It never lets the search see hidden
answers: the search scores candidates through the evaluator (train pairs only, for
ARC); the test outputs are read afterwards, only to report whether the answer was
right (``solved`` is None when they are unknown).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from atlas_actors.config import LLMConfig, MindEvolutionConfig
from atlas_actors.environments.base import Evaluator
from atlas_actors.errors import AtlasError, ConfigError
from atlas_actors.search.base import Proposer
from atlas_actors.search.mind_evolution import MindEvolutionSearch, SearchResult
from atlas_actors.types import Candidate, Task, TaskResult

_lock = threading.Lock()
_proposers: dict[str, Proposer] = {}


def make_proposer(task: Task, llm: LLMConfig | None = None) -> Proposer:
    """The proposer for ``task``: an LLM when ``llm`` is given, else the offline one.

    Proposers are shared per process (one per LLM endpoint), so a single concurrency
    limit and cache serve every task searched at once.
    """
    if task.domain != "arc":
        raise ConfigError(
            f"task {task.id}: no proposer for domain {task.domain!r} yet (supported: 'arc')"
        )
    key = "dsl" if llm is None else "llm:" + llm.model_dump_json()
    with _lock:
        proposer = _proposers.get(key)
        if proposer is None:
            if llm is None:
                from atlas_actors.arc import DSLProposer

                proposer = DSLProposer()
            else:
                from atlas_actors.llm import make_llm_proposer

                proposer = make_llm_proposer(llm)
            _proposers[key] = proposer
        return proposer


async def close_proposers() -> None:
    """Close the shared proposers (LLM connection pools); call at the end of a run."""
    with _lock:
        proposers = list(_proposers.values())
        _proposers.clear()
    for proposer in proposers:
        close = getattr(proposer, "aclose", None)
        if close is not None:
            await close()


def pick_attempts(candidates: list[Candidate], n_tests: int) -> list[dict[str, Any]]:
    """Two attempts per test input: the test predictions of the best candidate and of
    the next-best candidate whose predictions differ (ARC Prize format)."""
    preds = [
        c.outcome.details.get("test_predictions")
        for c in candidates
        if c.outcome is not None and c.outcome.details.get("test_predictions")
    ]
    first = next((p for p in preds if all(g is not None for g in p)), preds[0] if preds else None)
    second = next((p for p in preds if p != first), first)
    attempts = []
    for i in range(n_tests):
        a1 = _grid_or_blank(first, i)
        a2 = _grid_or_blank(second, i)
        attempts.append({"attempt_1": a1, "attempt_2": a2})
    return attempts


def _grid_or_blank(pred: list[Any] | None, i: int) -> list[list[int]]:
    if pred is not None and i < len(pred) and pred[i] is not None:
        return [list(map(int, row)) for row in pred[i]]
    return [[0]]


def readable(solution: Any) -> str | None:
    """A solution as text a person can read (DSL programs as Python)."""
    if solution is None:
        return None
    if isinstance(solution, str):
        return solution
    try:
        from atlas_actors.arc import Program

        return str(Program.from_json(solution).to_python())
    except Exception:  # not a DSL program: show the data
        import json

        return json.dumps(solution)


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

    Bad input (a task that cannot be loaded, an unsupported domain) is reported in
    ``TaskResult.error`` rather than raised, so one bad task never stops a run.
    """
    start = time.monotonic()
    try:
        proposer = proposer or make_proposer(task, llm)
        search = MindEvolutionSearch(proposer, evaluator, config)
        result = await search.search(task, seed=seed)
        report = await _report(task, result)
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


async def _report(task: Task, result: SearchResult) -> TaskResult:
    best = result.best
    out = TaskResult(
        task_id=task.id,
        domain=task.domain,
        evaluations=result.evaluations,
        generations=result.generations,
        stopped=result.stopped,
        seconds=result.seconds,
    )
    if best is None or best.outcome is None:
        out.feedback = "no candidate was evaluated"
        return out
    out.solution = best.solution
    out.program = readable(best.solution)
    out.feedback = best.outcome.feedback
    out.train_fitness = float(best.outcome.details.get("train_exact", best.outcome.partial_score))
    if task.domain == "arc":
        from atlas_actors.environments.arc import ARCEnvironment

        # Reporting only: a fresh environment reads the test outputs after the search.
        env = ARCEnvironment()
        await env.reset(task)
        out.attempts = pick_attempts(result.candidates, len(env.test_inputs))
        if env.has_test_outputs:
            verdict = await env.verify_attempts(
                [[a["attempt_1"], a["attempt_2"]] for a in out.attempts]
            )
            out.solved = verdict.success
    return out
