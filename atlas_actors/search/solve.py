"""Solve one task end to end: proposer, search, report.

:func:`solve_task` is what the CLI, the :class:`~atlas_actors.actors.Engine` and the
search coordinator actor run for each task. It names no domain: the task's domain is
looked up in the registry (:mod:`atlas_actors.environments.registry`) for its proposer,
its reporter and its default strategy — Mind Evolution (``evolutionary``, ARC) or the
tree search (``mcts``, SWE). The search never sees hidden answers: it scores candidates
through the evaluator (the environment's ``score``: ARC's train pairs, SWE's visible
tests); the domain's reporter reads the hidden answers afterwards, only to report
whether the answer was right (``solved`` is None when they are unknown).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from atlas_actors.config import LLMConfig, MindEvolutionConfig, SWESearchConfig
from atlas_actors.environments.base import Evaluator, Stepper, Verifier
from atlas_actors.environments.registry import DomainSpec, get_domain, require_domain
from atlas_actors.errors import AtlasError, ConfigError
from atlas_actors.resources import close_shared_resources, shared_resource
from atlas_actors.search.base import Assessor, Proposer, Scorer
from atlas_actors.search.direct import DirectResult, DirectSolver
from atlas_actors.search.mind_evolution import MindEvolutionSearch
from atlas_actors.search.proposers import SeededProposer
from atlas_actors.types import (
    Candidate,
    Experience,
    RoutingDecision,
    Strategy,
    Task,
    TaskResult,
    solution_key,
)

ProgressFn = Callable[[str, Any], object]
"""``progress(task_id, stats)``: called by a tree search after every iteration."""


def make_proposer(task: Task, llm: LLMConfig | None = None, **options: Any) -> Any:
    """The proposer for one search of ``task``, from its domain's registration: an LLM
    proposer when ``llm`` is given, else the domain's offline proposer."""
    return require_domain(task.domain).make_proposer(task, llm, **options)


def _proposer_for(
    task: Task,
    spec: DomainSpec | None,
    llm: LLMConfig | None,
    options: dict[str, Any],
    **context: Any,
) -> Any:
    """The domain's proposer, given the user's ``options`` (checked by the domain's
    options model) and what the search adds (``context``)."""
    if spec is None:
        return make_proposer(task, llm, **options, **context)
    return spec.make_proposer(task, llm, **spec.check_options(options), **context)


def task_seed(seed: int, task_id: str) -> int:
    """The seed a task is searched with: derived from the run's seed and the task id, so
    answers do not depend on task order, concurrency or resumption."""
    digest = hashlib.blake2b(f"{seed}:{task_id}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big")


def tree_file(tree_dir: str | Path, task_id: str) -> Path:
    """Where a task's search tree is saved: ``<tree_dir>/<task id>.json`` (characters a
    file name cannot hold become ``_``)."""
    return Path(tree_dir) / (re.sub(r"[^A-Za-z0-9._-]", "_", task_id) + ".json")


async def close_proposers() -> None:
    """Close the proposers shared per process (LLM connection pools); call at the end
    of a run."""
    await close_shared_resources()


def task_strategy(task: Task, spec: DomainSpec | None = None) -> Strategy:
    """The search a task gets by default: its domain's registered strategy."""
    spec = spec if spec is not None else get_domain(task.domain)
    return spec.strategy if spec is not None else "evolutionary"


async def solve_task(
    task: Task,
    evaluator: Evaluator,
    *,
    config: MindEvolutionConfig | None = None,
    seed: int = 0,
    llm: LLMConfig | None = None,
    proposer: Any = None,
    strategy: Strategy | None = None,
    mcts: SWESearchConfig | None = None,
    discriminator: Scorer | Assessor | None = None,
    tree_dir: str | Path | None = None,
    progress: ProgressFn | None = None,
    proposer_options: dict[str, Any] | None = None,
    routing: RoutingDecision | None = None,
) -> TaskResult:
    """Search ``task`` and report the result.

    Args:
        evaluator: scores candidates as the search may see them; for a tree search it
            must also be a :class:`~atlas_actors.environments.base.Stepper` (a
            ``LocalEvaluator`` or an ``EnvironmentPool``); a
            :class:`~atlas_actors.environments.base.Verifier` lets the reporter grade
            the final answer.
        config: Mind Evolution settings; ``mcts``: tree-search settings.
        llm: an LLM endpoint for the domain's LLM proposer (None: its offline one).
        proposer: use this proposer instead of the domain's.
        strategy: ``evolutionary`` or ``mcts`` (default: the domain's).
        discriminator: the tree search's value backend (default: test evidence).
        tree_dir: save tree-search trees there (``<task id>.json``) and resume from them.
        progress: ``progress(task_id, stats)`` after every tree-search iteration.
        proposer_options: keyword options for the domain's proposer factory.
        routing: the router's decision (see :class:`~atlas_actors.search.router.
            EnhancedTaskRouter`): ``adapt``/``direct`` first try the remembered solutions
            (:class:`~atlas_actors.search.direct.DirectSolver`) and hand over to the
            domain's search when none succeeds; the remembered solutions also seed that
            search (Mind Evolution's ``memory_init_fraction``, the tree's first children).
            Its ``repeats`` (memory's experiences of exactly this task that did not pass
            its checks, or passed them with an answer the environment doubted) are
            *recalled* when one was searched under these settings (:func:`settings_digest`):
            its solutions are re-verified and reported without searching again, since
            the same search would spend its whole budget to find the same answer. A
            doubted repeat is recalled instead of adapted (other remembered solutions
            are still tried first, without variations).

    Bad input (a task that cannot be loaded, an unregistered domain) is reported in
    ``TaskResult.error`` rather than raised, so one bad task never stops a run.
    """
    start = time.monotonic()
    try:
        spec = get_domain(task.domain)
        chosen = strategy or task_strategy(task, spec)
        if routing is not None and strategy is None:
            chosen = routing.strategy
        remembered = _remembered(task, routing)
        search = chosen if chosen in ("evolutionary", "mcts") else task_strategy(task, spec)
        settings = settings_digest(
            search,
            mcts if search == "mcts" else config,
            llm,
            proposer,
            proposer_options,
            discriminator if search == "mcts" else None,
        )
        if search == "mcts":
            if proposer is None:
                context: dict[str, Any] = {"stepper": evaluator}
                if remembered:  # solved similar tasks: the domain may favour what fixed them
                    context["remembered"] = tuple(remembered)
                proposer = _proposer_for(task, spec, llm, proposer_options or {}, **context)
        elif search == "evolutionary":
            if proposer is None:
                proposer = _proposer_for(task, spec, llm, proposer_options or {})
        else:
            raise ConfigError(
                f"task {task.id}: strategy {search!r} cannot search by itself; "
                "allowed: 'evolutionary', 'mcts'"
            )
        recalled = _recall(routing, settings)
        direct: DirectResult | None = None
        if chosen in ("adapt", "direct") and remembered:
            if recalled is not None and recalled.success:
                # the repeat itself passed its checks with a doubted answer: adapting it
                # would only find that again; the other remembered solutions are tried,
                # without variations (the recalled search had those to start from)
                remembered = [e for e in remembered if not _same_task(e, recalled)]
            if remembered:
                direct = await DirectSolver(
                    proposer=proposer if recalled is None or not recalled.success else None
                ).solve(task, evaluator, remembered, seed=seed)
            if direct is not None and direct.solved:
                report = await _direct_report(task, direct, chosen, spec, evaluator)
                report.settings = settings
                return _routed(report, routing, start)
        if recalled is not None:
            assert routing is not None
            again = await DirectSolver().solve(task, evaluator, [recalled], seed=seed)
            report = await _direct_report(task, again, "direct", spec, evaluator)
            report.stopped = "recalled"
            report.settings = settings
            if direct is not None:
                report.evaluations += direct.evaluations
                report.stats["direct_evaluations"] += direct.evaluations
            routing = routing.model_copy(
                update={
                    "strategy": "direct",
                    "rule": "recall",
                    "reason": f"recall: an exact repeat of task {recalled.task.id}, searched "
                    f"under the same settings {_how_it_ended(recalled)} ({routing.reason})",
                }
            )
            return _routed(report, routing, start)
        if search == "mcts":
            seeds = [
                action
                for e in remembered
                if spec is not None and (action := spec.seed_action_of(e.solution)) is not None
            ]
            if seeds:
                proposer = SeededProposer(proposer, seeds)
            report = await _solve_mcts(
                task, evaluator, spec, seed, proposer, llm, mcts, discriminator, tree_dir, progress
            )
        else:
            initial = [e.solution for e in remembered]
            if direct is not None and direct.best is not None:
                initial.insert(0, direct.best.solution)
            report = await _solve_evolutionary(
                task, evaluator, spec, config, seed, proposer, initial
            )
        if direct is not None:
            report.evaluations += direct.evaluations
            report.stats["direct_evaluations"] = direct.evaluations
        report.settings = settings
    except AtlasError as e:
        return TaskResult(
            task_id=task.id,
            domain=task.domain,
            error=f"{type(e).__name__}: {e}",
            seconds=time.monotonic() - start,
        )
    return _routed(report, routing, start)


def settings_digest(
    search: str,
    config: Any,
    llm: LLMConfig | None,
    proposer: Any,
    proposer_options: dict[str, Any] | None,
    discriminator: Any,
) -> str:
    """A short digest of what decides a search's course besides the task and its seed:
    the strategy, its configuration (limits included), the model (endpoint, name,
    temperature; never the key), a given proposer's or discriminator's class and the
    proposer options. Memory recalls an unsolved exact repeat only under an equal one."""
    described = {
        "search": search,
        "config": config.model_dump(mode="json") if config is not None else None,
        "llm": [llm.base_url, llm.model, llm.temperature] if llm is not None else None,
        "proposer": type(proposer).__qualname__ if proposer is not None else None,
        "options": proposer_options or {},
        "discriminator": type(discriminator).__qualname__ if discriminator is not None else None,
    }
    text = json.dumps(described, sort_keys=True, default=repr)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _recall(routing: RoutingDecision | None, settings: str) -> Experience | None:
    """The newest exact repeat searched under ``settings`` to the end of its own limits
    (not cut by an error) that did not pass its checks, or passed them with an answer
    the environment doubted and found none it did not doubt (its search went on to its
    limits), with a solution to re-verify; None otherwise."""
    if routing is None:
        return None
    for e in routing.repeats:
        searched = e.stopped not in ("", "recalled") and e.solution is not None
        doubted = e.success and e.outcome.doubted and e.stopped != "success"
        if (not e.success or doubted) and searched and e.settings == settings:
            return e
    return None


def _same_task(a: Experience, b: Experience) -> bool:
    """``a`` and ``b`` are experiences of one task's content (or the same record)."""
    return a.id == b.id or (bool(a.fingerprint) and a.fingerprint == b.fingerprint)


def _how_it_ended(e: Experience) -> str:
    """How a recalled repeat's search ended, for the routing reason."""
    if not e.success:
        return "without passing its checks"
    doubts = sorted({d for answer in e.outcome.doubts or [] for d in answer})
    return (
        "to its limits: its answer passed every check but the environment doubted it "
        f"({', '.join(doubts)})"
    )


def _remembered(task: Task, routing: RoutingDecision | None) -> list[Experience]:
    """The routing's successful experiences of ``task``'s domain that have a solution."""
    if routing is None:
        return []
    return [
        e
        for e in routing.experiences
        if e.success and e.domain == task.domain and e.solution is not None
    ]


def _shared_judge(spec: DomainSpec | None, llm: LLMConfig) -> Any:
    """The domain's LLM value judge for ``llm``, on the process's shared client for it;
    None when the domain has none."""
    if spec is None or spec.judge is None:
        return None
    from atlas_actors.llm.client import shared_client  # the LLM SDK: only with an LLM

    client = shared_client(llm)
    return shared_resource(
        ("llm-judge", spec.name, llm.model_dump_json()),
        lambda: spec.make_judge(client, owns_client=False),
    )


def _routed(report: TaskResult, routing: RoutingDecision | None, start: float) -> TaskResult:
    """``report`` with the routing decision and the total time."""
    if routing is not None:
        report.routing = {
            "strategy": routing.strategy,
            "rule": routing.rule,
            "similarity": routing.similarity,
            "reason": routing.reason,
        }
    report.seconds = time.monotonic() - start
    return report


async def _direct_report(
    task: Task,
    direct: DirectResult,
    strategy: Strategy,
    spec: DomainSpec | None,
    evaluator: Evaluator,
) -> TaskResult:
    out = TaskResult(
        task_id=task.id,
        domain=task.domain,
        evaluations=direct.evaluations,
        stopped="success",
        seconds=direct.seconds,
        strategy=strategy,
        stats={"direct_evaluations": direct.evaluations, "experiences": direct.experiences},
    )
    await _finish(task, out, direct.best, direct.candidates, spec, evaluator)
    return out


async def _solve_evolutionary(
    task: Task,
    evaluator: Evaluator,
    spec: DomainSpec | None,
    config: MindEvolutionConfig | None,
    seed: int,
    proposer: Proposer,
    initial: list[Any],
) -> TaskResult:
    search = MindEvolutionSearch(proposer, evaluator, config)
    result = await search.search(task, seed=seed, initial=initial)
    out = TaskResult(
        task_id=task.id,
        domain=task.domain,
        evaluations=result.evaluations,
        generations=result.generations,
        stopped=result.stopped,
        seconds=result.seconds,
        strategy="evolutionary",
    )
    await _finish(task, out, result.best, result.candidates, spec, evaluator)
    _add_usage(out, proposer, task.id)
    return out


async def _solve_mcts(
    task: Task,
    evaluator: Evaluator,
    spec: DomainSpec | None,
    seed: int,
    proposer: Any,
    llm: LLMConfig | None,
    config: SWESearchConfig | None,
    backend: Scorer | Assessor | None,
    tree_dir: str | Path | None,
    progress: ProgressFn | None,
) -> TaskResult:
    from atlas_actors.search.discriminator import Discriminator
    from atlas_actors.search.mcts import SWESearch

    if not isinstance(evaluator, Stepper):
        raise ConfigError(
            f"task {task.id}: a tree search needs an evaluator that can also step the "
            f"environment (a Stepper: LocalEvaluator, EnvironmentPool), got "
            f"{type(evaluator).__name__}"
        )
    config = config or SWESearchConfig()
    discriminator = None
    if config.use_discriminator:
        if backend is None and llm is not None:
            backend = _shared_judge(spec, llm)  # with an LLM, the domain's judge values nodes
        discriminator = Discriminator(backend, threshold=config.discriminator_threshold)
    search = SWESearch(proposer, evaluator, evaluator, discriminator, config, progress=progress)
    path = tree_file(tree_dir, task.id) if tree_dir is not None else None
    result = await search.search(task, seed=seed, tree_path=path)
    stats = result.stats
    out = TaskResult(
        task_id=task.id,
        domain=task.domain,
        evaluations=stats.evaluations,
        generations=stats.iterations,
        stopped=result.stopped,
        stop_detail=result.why,
        seconds=stats.seconds,
        strategy="mcts",
        stats={
            "expansions": stats.expansions,
            "nodes": stats.nodes,
            "duplicates": stats.duplicates,
            "failures": stats.failures,
            "rollouts": stats.rollouts,
            "finished": len(result.finished),
            "llm_calls": stats.llm_calls,
        },
    )
    if result.best_node is not None:
        out.path = _path_to(result.tree.nodes, result.best_node)
    finished = [c for c in result.finished if c.outcome is not None and c.outcome.success]
    await _finish(task, out, result.best, finished, spec, evaluator)
    _add_usage(out, proposer, task.id)
    more = getattr(proposer, "alternatives", None)  # other passing patches a proposer found
    if callable(more):
        seen = {_answer_key(spec, out.solution), *(_answer_key(spec, a) for a in out.alternatives)}
        for alt in more(task.id):
            if len(out.alternatives) >= 3:
                break
            if _answer_key(spec, alt) not in seen:
                seen.add(_answer_key(spec, alt))
                out.alternatives.append(alt)
    if stats.llm_cost:
        out.usage["cost"] = max(out.usage.get("cost", 0.0), stats.llm_cost)
    return out


async def _finish(
    task: Task,
    out: TaskResult,
    best: Candidate | None,
    candidates: list[Candidate],
    spec: DomainSpec | None,
    evaluator: Evaluator,
) -> None:
    """The best candidate into ``out``, then the domain's reporter."""
    if best is None or best.outcome is None:
        out.feedback = "no candidate was evaluated"
        return
    out.solution = best.solution
    out.program = readable(best.solution)
    out.feedback = best.outcome.feedback
    out.checks_passed = best.outcome.success
    # alternatives: other solutions that pass every visible check, those that answer
    # differently first (ARC: the program behind the other attempt; when none passes,
    # ARC's reporter keeps the programs behind the attempts, for a recall)
    seen = {solution_key(best.solution)}
    passing = [c for c in candidates if c.outcome is not None and c.outcome.success]
    differ = [c for c in passing if c.outcome and c.outcome.answers != best.outcome.answers]
    for c in [*differ, *passing]:
        if len(out.alternatives) >= 3:
            break
        if solution_key(c.solution) not in seen:
            seen.add(solution_key(c.solution))
            out.alternatives.append(c.solution)
    exact = best.outcome.exact_fraction
    out.train_fitness = float(exact if exact is not None else best.outcome.partial_score)
    out.doubts = best.outcome.doubts
    reporter = spec.reporter_fn() if spec is not None else None
    if reporter is not None:
        verifier = evaluator if isinstance(evaluator, Verifier) else None
        await reporter(task, candidates, out, verifier)


def _answer_key(spec: DomainSpec | None, solution: Any) -> Hashable:
    """What makes ``solution`` the same answer as another: the domain's key (two diffs
    of one change), else its canonical JSON."""
    key = spec.key_of(solution) if spec is not None else None
    return key if key is not None else solution_key(solution)


def _path_to(nodes: list[Any], node_id: int) -> list[dict[str, str]]:
    """The actions from the root to node ``node_id``: ``{"label", "source"}`` each."""
    path: list[dict[str, str]] = []
    node = nodes[node_id]
    while node.parent is not None:
        path.append({"label": node.label, "source": node.source})
        node = nodes[node.parent]
    return path[::-1]


def _add_usage(out: TaskResult, proposer: Any, task_id: str) -> None:
    """The proposer's LLM usage and its own counters (``report``) for the task."""
    pop_usage = getattr(proposer, "pop_usage", None)
    if pop_usage is not None:
        usage = pop_usage(task_id)
        if usage is not None:
            out.usage = dict(usage.as_dict())
    report = getattr(proposer, "report", None)
    if callable(report):
        out.stats.update(report(task_id))


def readable(solution: Any) -> str | None:
    """A solution as text (a domain's reporter may replace it with something better)."""
    if solution is None or isinstance(solution, str):
        return solution
    return json.dumps(solution)
