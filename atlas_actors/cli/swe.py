"""``atlas-actors swe``: search for patches that resolve SWE-bench instances (MCTS).

Each instance gets a tree search (:class:`~atlas_actors.search.mcts.SWESearch`) whose
nodes are patches, proposed by the offline repair operators, an LLM, or both, tested in
containers by the environment actors and valued by the discriminator actors. The run
folder holds, written as instances finish::

    predictions.jsonl   SWE-bench predictions (instance_id, model_name_or_path, model_patch)
    results.jsonl       one TaskResult per instance (resumable with --resume)
    trees/<id>.json     each search tree, saved after every iteration (resumed from)
    summary.json        totals (also printed as a table)
    grade/              with --grade: swe-eval's report of the predictions
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from atlas_actors.cli.common import (
    RunProgress,
    add_engine_flags,
    add_llm_flags,
    add_memory_flags,
    llm_config,
    memory_path,
    positive_float,
    positive_int,
    prepare_out_dir,
    proposer_mode,
    quantile,
    router_config,
    routes_of,
    run_id,
    session_of,
    split_ids,
    write_json_atomic,
)
from atlas_actors.cli.swe_eval import (
    add_swe_data_flags,
    load_swe_instances,
    run_swe_eval,
    swe_run_of,
)
from atlas_actors.config import EngineConfig, LLMConfig, SWESearchConfig
from atlas_actors.errors import ConfigError
from atlas_actors.types import Task, TaskResult

MODEL_NAME = "atlas-actors"
DEFAULT_TIME_LIMIT_S = 900.0
"""Seconds of search per instance unless ``--time-limit`` says otherwise: an instance
whose tests hang cannot hold a batch."""
"""``model_name_or_path`` of the predictions this command writes."""


def add_parser(sub: Any) -> None:
    """The ``swe`` subcommand and its flags."""
    p = sub.add_parser(
        "swe",
        help="search for patches that resolve SWE-bench instances (MCTS)",
        description="Search for patches that resolve SWE-bench-format instances with "
        "SWE-Search-style MCTS: the offline repair operators propose edits by default, an "
        "OpenAI-compatible LLM with --llm-base-url, or both with --proposer hybrid.",
    )
    add_swe_data_flags(p)
    src = p.add_argument_group("selection")
    src.add_argument(
        "--ids",
        action="append",
        metavar="ID[,ID...]",
        help="only these instance ids (repeatable or comma-separated)",
    )
    src.add_argument("--limit", type=positive_int, metavar="N", help="only the first N instances")

    s = p.add_argument_group("search")
    s.add_argument(
        "--proposer",
        choices=["offline", "llm", "hybrid"],
        help="who proposes edits: the offline repair operators, the LLM, or both in one "
        "tree (default: llm with --llm-base-url, else offline)",
    )
    s.add_argument(
        "--tests",
        choices=["visible", "hidden"],
        help="visible: the search may run the FAIL_TO_PASS tests (test-suite-based "
        "program repair: the failing tests come with the bug); hidden: it sees only "
        "PASS_TO_PASS results, as in SWE-bench, and the final patch is graded on all "
        "(default: visible for the offline and hybrid proposers, hidden for llm)",
    )
    s.add_argument(
        "--max-expansions",
        type=positive_int,
        default=100,
        metavar="N",
        help="node expansions per instance (default: 100)",
    )
    s.add_argument(
        "--time-limit",
        type=positive_float,
        default=DEFAULT_TIME_LIMIT_S,
        metavar="S",
        help=f"seconds of search per instance; the summary says how many it cut "
        f"(default: {DEFAULT_TIME_LIMIT_S:g}, raise it for slow instances)",
    )
    s.add_argument(
        "--children",
        type=positive_int,
        metavar="N",
        help="actions asked per expansion (default: 1 for llm, 4 for offline and hybrid)",
    )
    s.add_argument(
        "--parallel",
        type=positive_int,
        default=4,
        metavar="N",
        help="nodes expanded and tested at once per instance (default: 4)",
    )
    s.add_argument(
        "--pipeline",
        action="store_true",
        help="keep --parallel proposer calls running, selecting the next node as each "
        "expansion's proposals arrive (more in flight; the tree then depends on timing: a "
        "seeded run is not reproducible)",
    )
    s.add_argument(
        "--rollout-depth",
        type=int,
        metavar="N",
        help="steps of a rollout from a promising node (default: 5 for llm, as SWE-Search; "
        "0 for offline and hybrid, whose fast screen already looks ahead)",
    )
    s.add_argument(
        "--max-cost",
        type=float,
        metavar="X",
        help="LLM cost cap per instance, in the usage's cost unit (default: none)",
    )
    s.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")

    env = p.add_argument_group("environment")
    env.add_argument(
        "--backend",
        choices=["docker", "bubblewrap"],
        default="docker",
        help="where tests run: instance images in Docker, or the instances' local_repo "
        "checkouts in a bubblewrap sandbox (default: docker)",
    )
    env.add_argument(
        "--eval-timeout",
        type=positive_float,
        default=300.0,
        metavar="S",
        help="limit for one test run (default: 300)",
    )
    env.add_argument(
        "--localize-timeout",
        type=positive_float,
        default=120.0,
        metavar="S",
        help="limit for the offline proposer's fault localisation of an instance (its "
        "coverage run and its plain run share it; the failing tests run first, and a run "
        "cut short ranks what finished, or falls back to the failing tests' tracebacks) "
        "(default: 120)",
    )

    out = p.add_argument_group("output")
    out.add_argument(
        "--out",
        default="runs/swe",
        metavar="DIR",
        help="run folder: predictions.jsonl, results.jsonl, trees/ (default: runs/swe)",
    )
    out.add_argument(
        "--resume",
        action="store_true",
        help="continue a run in --out: finished instances are skipped, unfinished trees "
        "resume where they stopped",
    )
    out.add_argument(
        "--grade",
        action="store_true",
        help="grade the predictions at the end as swe-eval does (into DIR/grade)",
    )
    out.add_argument("--quiet", action="store_true", help="no progress display")
    add_engine_flags(p)
    add_memory_flags(p)
    add_llm_flags(p, offline="the offline repair proposer")


def select_instances(args: argparse.Namespace, instances: list[Any]) -> list[Any]:
    """The instances a run works on (``--ids``, ``--limit``), in the source's order."""
    if args.ids:
        wanted = split_ids(args.ids)
        known = {i.instance_id for i in instances}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise ConfigError(f"--ids: not in {args.instances}: {', '.join(missing)}")
        order = {i: n for n, i in enumerate(wanted)}
        instances = sorted(
            (i for i in instances if i.instance_id in order), key=lambda i: order[i.instance_id]
        )
    if args.limit:
        instances = instances[: args.limit]
    if args.backend == "bubblewrap":
        no_repo = [i.instance_id for i in instances if not i.local_repo]
        if no_repo:
            raise ConfigError(
                f"--backend bubblewrap needs each instance's local_repo (a checkout at its "
                f"base commit); missing for: {', '.join(no_repo[:5])}"
            )
    return instances


def resolve_proposer(args: argparse.Namespace) -> tuple[str, str]:
    """``(proposer, tests)``: the proposer mode and the test visibility the flags ask for."""
    proposer = proposer_mode(args)
    tests = args.tests or ("hidden" if proposer == "llm" else "visible")
    if tests == "hidden" and proposer in ("offline", "hybrid"):
        raise ConfigError(
            f"--proposer {proposer} needs --tests visible: the offline repair operators "
            "localise and check edits with the failing tests (use --proposer llm for "
            "SWE-bench's hidden-test protocol)"
        )
    return proposer, tests


def search_settings(args: argparse.Namespace, proposer: str) -> SWESearchConfig:
    children = args.children or (1 if proposer == "llm" else 4)
    rollout = args.rollout_depth
    if rollout is None:
        rollout = 5 if proposer == "llm" else 0
    if rollout < 0:
        raise ConfigError(f"--rollout-depth {rollout}: must be 0 or more")
    return SWESearchConfig(
        rollout_depth=rollout,
        max_expansions=args.max_expansions,
        time_limit_s=args.time_limit,
        children_per_expansion=children,
        max_children=max(3, children),
        parallel_expansions=args.parallel,
        pipeline=args.pipeline,
        max_cost=args.max_cost,
    )


def engine_config(
    args: argparse.Namespace, out_dir: Path, proposer: str, tests: str, llm: LLMConfig | None
) -> EngineConfig:
    from atlas_actors.sandbox.docker import resolve_docker_host

    options: dict[str, Any] = {
        "backend": args.backend,
        "eval_timeout_s": args.eval_timeout,
        "localize_timeout_s": args.localize_timeout,
        "visible_tests": "all" if tests == "visible" else "pass_to_pass",
    }
    if args.backend == "docker":
        options["docker_host"] = resolve_docker_host()
    return EngineConfig(
        workers=args.workers,
        address=args.address,
        seed=args.seed,
        llm=llm,
        memory=memory_path(args),
        memory_reset=args.memory_reset,
        router=router_config(args),
        run_id=run_id(out_dir),
        mcts=search_settings(args, proposer),
        environment_options={"swe": options},
        proposer_options={"swe": {"mode": proposer}},
        tree_dir=str(out_dir / "trees"),
        call_timeout_s=args.eval_timeout + 120.0,
        placement="coordinator",
    )


async def search_all(
    tasks: list[Task],
    config: EngineConfig,
    args: argparse.Namespace,
    on_result: Callable[[TaskResult], None],
    on_stats: Callable[[dict[str, float]], None],
) -> None:
    """Search ``tasks`` through the actor engine (or in this process with ``--no-ray``),
    calling ``on_result`` as each finishes and ``on_stats`` with the tree searches'
    running totals (nodes, test runs, LLM cost) every few seconds."""
    if args.no_ray:
        from atlas_actors.environments.local import LocalEvaluator
        from atlas_actors.environments.registry import create_environment
        from atlas_actors.search.solve import close_proposers, solve_task, task_seed

        options = config.environment_options.get("swe", {})
        evaluator = LocalEvaluator(lambda t: create_environment(t, **options), max_tasks=1)
        memory = await session_of(config).open()
        finished: dict[str, float] = {}
        live: dict[str, float] = {}

        def note(task_id: str, stats: Any) -> None:
            live.update(
                tree_nodes=stats.nodes,
                tree_expansions=stats.expansions,
                evaluations=stats.evaluations,
                tree_llm_cost=stats.llm_cost,
            )
            on_stats({k: finished.get(k, 0.0) + v for k, v in live.items()})

        try:
            for task in tasks:
                result = await solve_task(
                    task,
                    evaluator,
                    seed=task_seed(config.seed, task.id),
                    llm=config.llm,
                    mcts=config.mcts,
                    tree_dir=config.tree_dir,
                    progress=note,
                    proposer_options=config.proposer_options.get("swe", {}),
                    routing=await memory.route(task),
                )
                await memory.remember(task, result)
                for k, v in live.items():
                    finished[k] = finished.get(k, 0.0) + v
                live.clear()
                on_result(result)
        finally:
            await evaluator.aclose()
            await close_proposers()
            memory.close()
        return
    from atlas_actors.actors import Engine

    async with Engine(config) as engine, anyio.create_task_group() as tg:

        async def poll() -> None:
            while True:
                await anyio.sleep(2.0)
                with contextlib.suppress(Exception):  # progress is best effort
                    on_stats(await engine.stats())

        tg.start_soon(poll)
        async for result in engine.solve_many(tasks):
            on_result(result)
        tg.cancel_scope.cancel()


def prediction_of(result: TaskResult) -> dict[str, Any]:
    """SWE-bench's prediction row for a result (an empty patch when none was found)."""
    patch = result.solution if isinstance(result.solution, str) else ""
    return {"instance_id": result.task_id, "model_name_or_path": MODEL_NAME, "model_patch": patch}


async def run_swe(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(stderr=True, quiet=args.quiet)
    out_dir = Path(args.out)
    proposer, tests = resolve_proposer(args)
    instances = select_instances(args, await load_swe_instances(args))
    log = prepare_out_dir(out_dir, args.resume)
    llm = llm_config(args, out_dir)
    config = engine_config(args, out_dir, proposer, tests, llm)
    (out_dir / "trees").mkdir(exist_ok=True)
    tasks = [i.to_task() for i in instances]
    ids = {t.id for t in tasks}
    done = [r for r in (log.load() if args.resume else []) if r.task_id in ids]
    done_ids = {r.task_id for r in done}
    todo = [t for t in tasks if t.id not in done_ids]
    record = {k: v for k, v in vars(args).items() if k != "command"}
    record.update(instances=len(tasks), proposer=proposer, tests=tests)
    write_json_atomic(out_dir / "run.json", record)
    if done_ids:
        console.print(f"resuming: {len(done_ids)} of {len(tasks)} instances already done")
    results = list(done)
    predictions = out_dir / "predictions.jsonl"
    started = time.monotonic()
    with RunProgress(console, len(tasks), len(done), results, label="SWE") as progress:

        def on_result(result: TaskResult) -> None:
            log.append(result)
            results.append(result)
            _write_predictions(predictions, results)
            progress(result)

        def on_stats(stats: dict[str, float]) -> None:
            progress.note(
                f"nodes {stats.get('tree_nodes', 0):g}  test runs "
                f"{stats.get('evaluations', 0):g}  llm cost {stats.get('tree_llm_cost', 0):.4g}"
            )

        async with swe_run_of(args, instances, out_dir=out_dir, progress=progress.bar) as run:
            # images present (pulled once each, up front), containers labelled and reaped
            options = {**config.environment_options.get("swe", {}), **run.environment_options}
            config = config.model_copy(
                update={"environment_options": {**config.environment_options, "swe": options}}
            )
            await search_all(todo, config, args, on_result, on_stats)
    _write_predictions(predictions, results)
    summary = summarize(results, time.monotonic() - started, proposer=proposer, tests=tests)
    summary["time_limit_seconds"] = args.time_limit
    write_json_atomic(out_dir / "summary.json", summary)
    if args.grade:
        summary["graded"] = await _grade(args, instances, predictions, out_dir / "grade")
        write_json_atomic(out_dir / "summary.json", summary)
    _print_summary(console, summary, out_dir)
    return 0


def _write_predictions(path: Path, results: Sequence[TaskResult]) -> None:
    """All predictions so far (one per instance, in finishing order), written atomically."""
    text = "".join(json.dumps(prediction_of(r)) + "\n" for r in results)
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text(text)
    tmp.replace(path)


async def _grade(
    args: argparse.Namespace, instances: list[Any], predictions: Path, out: Path
) -> dict[str, Any]:
    """Grade the predictions as ``swe-eval`` does; the report's counts."""
    # swe-eval's own flags, as this run was given them (instances, images, engine)
    grade_args = argparse.Namespace(
        **{**vars(args), "predictions": str(predictions), "out": str(out)}
    )
    await run_swe_eval(grade_args)
    report = json.loads((out / "report.json").read_text())
    return {
        k: report[k]
        for k in ("resolved_instances", "submitted_instances", "unresolved_instances")
        if k in report
    }


def summarize(
    results: Sequence[TaskResult], wall_seconds: float, *, proposer: str, tests: str
) -> dict[str, Any]:
    """Totals of a run: resolved, tree-search counters, time per instance, LLM usage."""
    secs = sorted(r.seconds for r in results)
    usage: dict[str, float] = {}
    counters: dict[str, float] = {}
    for r in results:
        for k, v in r.usage.items():
            usage[k] = usage.get(k, 0.0) + v
        for k, v in r.stats.items():
            counters[k] = counters.get(k, 0.0) + v
    return {
        "instances": len(results),
        "resolved": sum(1 for r in results if r.solved),
        "with_patch": sum(1 for r in results if isinstance(r.solution, str) and r.solution),
        "errors": sum(1 for r in results if r.error),
        "cut_by_time_limit": sum(1 for r in results if r.stopped == "time"),
        "stopped": dict(sorted(Counter(r.stopped or "unknown" for r in results).items())),
        "why_stopped": {
            r.task_id: r.stop_detail or r.error or r.stopped or "unknown"
            for r in results
            if not r.solved
        },
        "proposer": proposer,
        "tests": tests,
        "test_runs": sum(r.evaluations for r in results),
        "search": counters,
        "median_seconds": quantile(secs, 0.5),
        "p90_seconds": quantile(secs, 0.9),
        "wall_seconds": wall_seconds,
        "usage": usage,
        "routes": routes_of(results),
    }


def _print_summary(console: Any, s: dict[str, Any], out_dir: Path) -> None:
    from rich.table import Table

    table = Table(title="atlas-actors swe", show_header=False)
    table.add_row("instances", str(s["instances"]))
    n = s["instances"]
    pct = 100 * s["resolved"] / n if n else 0.0
    table.add_row("resolved (all graded tests)", f"{s['resolved']} / {n} ({pct:.1f}%)")
    table.add_row("with a patch", str(s["with_patch"]))
    if s["errors"]:
        table.add_row("errors", str(s["errors"]))
    if s.get("cut_by_time_limit"):
        table.add_row(
            "stopped by --time-limit",
            f"{s['cut_by_time_limit']} (at {s.get('time_limit_seconds', 0):g} s each; "
            "raise --time-limit to let them run on)",
        )
    if s.get("stopped"):
        table.add_row("stopped", ", ".join(f"{k} {v}" for k, v in s["stopped"].items()))
    for task_id, why in sorted(s.get("why_stopped", {}).items()):
        table.add_row(f"  {task_id}", why[:300])
    table.add_row("proposer / tests", f"{s['proposer']} / {s['tests']}")
    table.add_row("test runs", str(s["test_runs"]))
    if s["routes"]:
        table.add_row("routed", ", ".join(f"{k} {v}" for k, v in sorted(s["routes"].items())))
    for k in ("expansions", "nodes", "duplicates", "rollouts"):
        if k in s["search"]:
            table.add_row(k, f"{s['search'][k]:g}")
    table.add_row(
        "seconds per instance", f"median {s['median_seconds']:.1f}, p90 {s['p90_seconds']:.1f}"
    )
    for k, v in s["usage"].items():
        table.add_row(f"llm {k}", f"{v:g}")
    if "graded" in s:
        g = s["graded"]
        table.add_row(
            "graded (swe-eval)",
            f"{g.get('resolved_instances', 0)} / {g.get('submitted_instances', 0)}",
        )
    table.add_row("written to", str(out_dir))
    if console.quiet:
        print(json.dumps(s))
    else:
        console.print(table)
