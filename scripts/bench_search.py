#!/usr/bin/env python
"""Cost of the DSL enumeration: where a fixed budget of op applications goes.

Runs :class:`atlas_actors.arc.solver.TaskSolver` (the enumeration inside the offline
DSL proposer) on every ``--step``-th ARC-AGI-1 training task with a fixed budget of op
applications, so the same states are visited on every run, and prints per run:
applications per CPU second, the share of applications that give a new state (the rest
are duplicates of a state already seen, or fail), new states per CPU second (what the
search gets for its time), and the ops that take the most time.
Reports medians over ``--runs`` runs (the machine is shared and noisy).

    .venv/bin/python scripts/bench_search.py              # every 8th task, 3000 apps, 3 runs
    .venv/bin/python scripts/bench_search.py --step 4 --budget 6000 --top 20
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from typing import Any

from benchkit import add_json_flag, print_table, write_json

from atlas_actors.arc import solver as S
from atlas_actors.arc.environment import dataset_task_ids, load_arc_task
from atlas_actors.types import Task


def run(step: int, budget: int) -> tuple[float, int, int, collections.Counter[str]]:
    """One pass over the tasks: (CPU seconds, applications, new states, seconds by op)."""
    by_op: collections.Counter[str] = collections.Counter()
    plain = S.TaskSolver._apply

    def timed(self: S.TaskSolver, node: S.Node, op: str, args: tuple[Any, ...]) -> Any:
        t0 = time.perf_counter()
        try:
            return plain(self, node, op, args)
        finally:
            by_op[op] += time.perf_counter() - t0

    S.TaskSolver._apply = timed  # type: ignore[method-assign]
    seconds = 0.0
    apps = new = 0
    try:
        for tid in dataset_task_ids("arc", "train")[::step]:
            data = load_arc_task(
                Task(id=tid, domain="arc", context={"arc_task_id": tid, "split": "train"}), "arc"
            )
            solver = S.TaskSolver(list(data.train), list(data.test_inputs))
            t0 = time.thread_time()
            solver.search(budget, max_seconds=1e9)
            seconds += time.thread_time() - t0
            apps += solver.applications
            new += len(solver.nodes)
    finally:
        S.TaskSolver._apply = plain  # type: ignore[method-assign]
    return seconds, apps, new, by_op


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--step", type=int, default=8, help="every STEP-th training task (default 8)")
    p.add_argument("--budget", type=int, default=3000, help="op applications per task")
    p.add_argument("--runs", type=int, default=3, help="runs to take the median of")
    p.add_argument("--top", type=int, default=10, help="ops to list by time")
    add_json_flag(p)
    args = p.parse_args()
    print(f"atlas_actors from {S.__file__.rsplit('/arc/', 1)[0]}")
    rates, shares, fresh = [], [], []
    total: collections.Counter[str] = collections.Counter()
    for i in range(args.runs):
        seconds, apps, new, by_op = run(args.step, args.budget)
        rates.append(apps / seconds)
        shares.append(new / apps)
        fresh.append(new / seconds)
        total.update(by_op)
        print(
            f"run {i + 1}: {apps} applications in {seconds:.1f} s CPU = {apps / seconds:.0f}/s, "
            f"{new / apps:.1%} new states"
        )
    print_table(
        ["runs", "applications/s", "new states", "new states/s"],
        [
            [
                f"median of {args.runs}",
                f"{statistics.median(rates):.0f}",
                f"{statistics.median(shares):.1%}",
                f"{statistics.median(fresh):.0f}",
            ]
        ],
    )
    spent = sum(total.values())
    print_table(
        ["op", "share of op time"],
        [[op, f"{t / spent:.1%}"] for op, t in total.most_common(args.top)],
        title=f"op time by op (all runs, {spent:.1f} s in op applications)",
    )
    write_json(
        args.json,
        {
            "applications_per_s": rates,
            "new_state_share": shares,
            "new_states_per_s": fresh,
            "op_seconds": dict(total.most_common()),
        },
    )


if __name__ == "__main__":
    main()
