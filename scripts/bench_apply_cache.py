#!/usr/bin/env python
"""The shared op-output cache (``ApplyCache``) against none, side by side.

    .venv/bin/python scripts/bench_apply_cache.py                # 40 training tasks, 3 rounds
    .venv/bin/python scripts/bench_apply_cache.py --tasks 80 --rounds 5

Per task (training split, tasks with three or more train pairs): the full search spends
``--search`` op applications, then ``--steps`` held-out steps of ``--step`` applications
each (the work a ``mutate`` call does while nothing fits). Both settings do the same
applications and find the same programs (checked); the figure is the CPU time each
takes, as the median over rounds of the per-round totals, with the share of
op-on-grid lookups the cache answered.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchkit import add_json_flag, print_table, write_json

from atlas_actors.arc.environment import dataset_task_ids
from atlas_actors.arc.proposer import task_grids
from atlas_actors.arc.solver import APPLY_CACHE_SIZE, ApplyCache, TaskSolver
from atlas_actors.types import Task


def run(tasks: list[Task], size: int, args: argparse.Namespace) -> tuple[float, list[Any], float]:
    """CPU seconds for all tasks, what was found, and the cache's hit share."""
    found: list[Any] = []
    spent = 0.0
    hits = lookups = 0
    for task in tasks:
        train, tests = task_grids(task)
        cache = ApplyCache(size)
        t = time.thread_time()
        s = TaskSolver(train, tests, cache=cache)
        s.search(args.search, max_seconds=1e9)
        near = []
        for _ in range(args.steps):
            near += s.held_out(args.step, max_seconds=1e9)
        spent += time.thread_time() - t
        hits += cache.hits
        lookups += cache.lookups
        found.append((len(s.exact), [str(n.expr) for n in near], s.held_out_applications()))
    return spent, found, hits / max(1, lookups)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=40, help="training tasks (3+ pairs) to run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--search", type=int, default=1500, help="full-search op applications")
    p.add_argument("--steps", type=int, default=4, help="held-out steps per task")
    p.add_argument("--step", type=int, default=1000, help="op applications per held-out step")
    add_json_flag(p)
    args = p.parse_args()
    tasks = []
    for tid in dataset_task_ids("arc", "train"):
        task = Task(id=tid, domain="arc", context={"arc_task_id": tid, "split": "train"})
        if len(task_grids(task)[0]) >= 3:
            tasks.append(task)
        if len(tasks) == args.tasks:
            break
    times: dict[str, list[float]] = {"off": [], "on": []}
    share = 0.0
    for r in range(args.rounds):
        order = [("off", 0), ("on", APPLY_CACHE_SIZE)]
        if r % 2:
            order.reverse()
        results = {}
        for name, size in order:
            spent, found, hit = run(tasks, size, args)
            times[name].append(spent)
            results[name] = found
            if size:
                share = hit
        if results["on"] != results["off"]:
            print("MISMATCH: the cache changed what the search found")
            return 1
        print(f"round {r + 1}: off {times['off'][-1]:.1f} s, on {times['on'][-1]:.1f} s")
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    print_table(
        ["tasks", "applications each", "no cache s", "cache s", "speed-up", "cache answers"],
        [
            [
                str(len(tasks)),
                f"{args.search} + {args.steps}x{args.step}",
                f"{off:.1f}",
                f"{on:.1f}",
                f"{off / on:.2f}x",
                f"{share:.0%}",
            ]
        ],
        title=f"op-output cache, CPU seconds (median of {args.rounds} rounds)",
    )
    write_json(
        args.json,
        {
            "tasks": len(tasks),
            "times": times,
            "off": off,
            "on": on,
            "ratio": off / on,
            "cache_share": share,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
