"""Solve one task end to end: proposer, search, answer, report.

:func:`solve_task` is what the CLI, the :class:`~atlas_actors.actors.Engine` and the
search coordinator actor run for each task. It never lets the search see hidden
answers: the search scores candidates through the evaluator (train pairs only, for
ARC); the test outputs are read afterwards, only to report whether the answer was
right (``solved`` is None when they are unknown).
"""

from __future__ import annotations

import hashlib
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
    """The proposer for one search of ``task``: an LLM when ``llm`` is given, else the
    offline DSL proposer.

    The DSL proposer keeps per-search state (what it has proposed so far), so each
    search gets a fresh one: the same seed then gives the same result however many
    searches ran before or run beside it. LLM proposers are shared per process (one per
    endpoint), so one concurrency limit, connection pool and cache serve every task.
    """
    if task.domain != "arc":
        raise ConfigError(
            f"task {task.id}: no proposer for domain {task.domain!r} yet (supported: 'arc')"
        )
    if llm is None:
        from atlas_actors.arc import DSLProposer

        return DSLProposer()
    key = llm.model_dump_json()
    with _lock:
        proposer = _proposers.get(key)
        if proposer is None:
            from atlas_actors.llm import make_llm_proposer

            proposer = make_llm_proposer(llm)
            _proposers[key] = proposer
        return proposer


def task_seed(seed: int, task_id: str) -> int:
    """The seed a task is searched with: derived from the run's seed and the task id, so
    answers do not depend on task order, concurrency or resumption."""
    digest = hashlib.blake2b(f"{seed}:{task_id}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big")


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
    """Two attempts per test input (ARC Prize format): going down the ranked candidates,
    the first program's prediction for that input, then the next program's prediction
    that differs from it. Programs that failed on an input are skipped for that input;
    an input no program could answer gets ``[[0]]``.

    Among programs that get the same number of train pairs exactly right, a prediction
    the environment has doubts about (``test_doubts``: it breaks a property every train
    pair has, see ``environments.arc.TrainInvariants``) goes after those it has none
    about; a program with more train pairs right still goes first. A doubt demotes the
    top program's prediction to the second attempt, never further: the property may be
    the train pairs' coincidence (every pair changes something, and this test input
    needs no change)."""
    rows: list[tuple[float, list[Any], list[Any]]] = []
    for c in candidates:
        details = c.outcome.details if c.outcome is not None else {}
        preds = details.get("test_predictions")
        if preds:
            doubts = details.get("test_doubts") or []
            rows.append((float(details.get("train_exact", 0.0)), list(preds), list(doubts)))
    attempts: list[dict[str, Any]] = []
    for i in range(n_tests):
        options = [
            (-exact, bool(doubts[i]) if i < len(doubts) else False, rank, p[i])
            for rank, (exact, p, doubts) in enumerate(rows)
            if i < len(p) and p[i] is not None
        ]
        top = min(options, key=lambda o: (o[0], o[2]))[3] if options else None
        options.sort(key=lambda o: o[:3])
        grids = [o[3] for o in options]
        first = grids[0] if grids else [[0]]
        if top is not None and top != first:
            second = top  # a doubted top prediction: demoted to the second attempt
        else:
            second = next((g for g in grids if g != first), first)
        attempts.append({"attempt_1": _plain(first), "attempt_2": _plain(second)})
    return attempts


def _plain(grid: Any) -> list[list[int]]:
    return [[int(v) for v in row] for row in grid]


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
