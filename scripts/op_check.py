#!/usr/bin/env python
"""How often one DSL op's generator, run on each task's inputs, proposes arguments that
give the right test answers: the precision and reach of a learned op on its own,
without the rest of the search.

For each task: the search's root state (the task's inputs, its background), the op's
generator on it, the first arguments it yields applied to the train inputs (counted as
train-exact when they give every train output) and to the test inputs (right when they
give every test output). Test outputs are read only for this report. Develop on
training tasks (a held-out copy, ``scripts/held_out_tasks.py``, or the fresh ones,
``scripts/fresh_training_tasks.py``); the evaluation splits are the measure.

    python scripts/held_out_tasks.py /tmp/held-out
    python scripts/op_check.py cell_tree /tmp/held-out
    python scripts/op_check.py cell_tree /tmp/fresh --solved runs/fresh/results.jsonl

With ``--solved``, a run's ``results.jsonl`` over the same tasks: the right answers the
op gives on tasks that run did not solve are listed (what the op adds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS, OPS
from atlas_actors.arc.solver import TaskSolver


def _grids(task: dict[str, Any]) -> tuple[list[tuple[Any, Any]], list[Any], list[Any]]:
    train = [(np.array(p["input"]), np.array(p["output"])) for p in task["train"]]
    tests = [np.array(p["input"]) for p in task["test"]]
    wants = [np.array(p["output"]) if "output" in p else None for p in task["test"]]
    return train, tests, wants


def check(op: str, task: dict[str, Any]) -> tuple[str, float]:
    """``(verdict, seconds)``: ``none`` (nothing proposed), ``fails`` (the arguments
    fail on some input), ``not-exact`` (wrong on a train pair), ``right``, ``wrong``
    or ``unknown`` (no test output)."""
    train, tests, wants = _grids(task)
    solver = TaskSolver(train, tests)
    root = solver.node_for("x")
    if root is None:
        return "none", 0.0
    start = time.process_time()
    args = next(iter(GENERATORS[op](Ctx(root.outs, solver.targets, solver.bg, 0))), None)
    seconds = time.process_time() - start
    if args is None:
        return "none", seconds
    fn = OPS[op].fn
    try:
        if not all(np.array_equal(fn(x, *args), y) for x, y in train):
            return "not-exact", seconds
        got = [fn(x, *args) for x in tests]
    except Exception:
        return "fails", seconds
    if any(w is None for w in wants):
        return "unknown", seconds
    ok = all(np.array_equal(g, w) for g, w in zip(got, wants, strict=True))
    return ("right" if ok else "wrong"), seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("op", help="an op with a generator, e.g. cell_tree")
    ap.add_argument("tasks", type=Path, help="a folder of ARC task files (JSON)")
    ap.add_argument("--solved", type=Path, help="a run's results.jsonl over the same tasks")
    args = ap.parse_args(argv)
    if args.op not in GENERATORS:
        ap.error(f"op {args.op!r} has no generator; ops with one: {', '.join(sorted(GENERATORS))}")
    files = sorted(args.tasks.glob("*.json"))
    if not files:
        ap.error(f"no task files (*.json) in {args.tasks}")
    solved: set[str] = set()
    if args.solved:
        for line in args.solved.read_text().splitlines():
            row = json.loads(line)
            if row.get("solved"):
                solved.add(row["task_id"])
    verdicts: dict[str, list[str]] = {}
    times: list[float] = []
    for f in files:
        verdict, seconds = check(args.op, json.loads(f.read_text()))
        verdicts.setdefault(verdict, []).append(f.stem)
        times.append(seconds)
    print(f"{args.op} on {len(files)} tasks in {args.tasks}")
    for verdict in ("right", "wrong", "unknown", "not-exact", "fails"):
        ids = verdicts.get(verdict, [])
        shown = f": {', '.join(ids)}" if ids and verdict != "right" else ""
        print(f"  {verdict:10} {len(ids):4}{shown}")
    print(f"  {'none':10} {len(verdicts.get('none', [])):4}")
    if args.solved:
        new = [t for t in verdicts.get("right", []) if t not in solved]
        listed = f": {', '.join(new)}" if new else ""
        print(f"  right where the run did not solve: {len(new)}{listed}")
    print(
        f"  generator CPU time per task: median {statistics.median(times) * 1000:.1f} ms,"
        f" max {max(times) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
