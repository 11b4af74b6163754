#!/usr/bin/env python
"""Cost of the DSL enumeration: op applications per CPU second, side by side with
another build.

Runs :class:`atlas_actors.arc.solver.TaskSolver` (the enumeration inside the offline
DSL proposer) on every ``--step``-th ARC-AGI-1 training task with a fixed budget of op
applications, so the same states are visited on every run, and prints per run:
applications per CPU second, the share of applications that give a new state, new
states per CPU second, and the peak resident memory of the process.

``--against DIR`` runs a second checkout (e.g. a ``git worktree`` of an older commit)
in the same way, the two builds alternating run by run, and prints the ratio of their
medians. It also checks that both builds found the same states in the same order
(a digest of every new state's program and every exact program, per task): a faster
core must not change what a budget finds. Each run is a fresh process, so memory and
caches do not carry over.

    .venv/bin/python scripts/bench_search.py                    # every 8th task, 3000 apps, 3 runs
    .venv/bin/python scripts/bench_search.py --against /tmp/old --runs 3
    .venv/bin/python scripts/bench_search.py --budget 60000 --step 40   # long searches: memory
    .venv/bin/python scripts/bench_search.py --profile          # where the time goes (cProfile)
    .venv/bin/python scripts/bench_search.py --top-ops 10       # the split: ops, inference, rest

Tables and ``--json FILE`` come from ``benchkit`` like every bench script's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchkit import add_json_flag, print_table, write_json

ROOT = Path(__file__).resolve().parent.parent

WORKER = r"""
import hashlib, json, resource, sys, time
from atlas_actors.arc import solver as S
from atlas_actors.arc.environment import dataset_task_ids, load_arc_task
from atlas_actors.types import Task

step, budget, depth, by_op = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], {}
if sys.argv[4:] == ["by-op"]:  # CPU time of each op application (slows the run a little)
    plain = S.TaskSolver._apply
    def timed(self, node, op, args):
        t0 = time.thread_time()
        try:
            return plain(self, node, op, args)
        finally:
            by_op[op] = by_op.get(op, 0.0) + time.thread_time() - t0
    S.TaskSolver._apply = timed
    # and the parameter inference: each op's generator, run to the end as expand does
    for spec in S.GENERATED:
        def timed_gen(ctx, plain_gen=spec.generator, key="(inference) " + spec.name):
            t0 = time.thread_time()
            try:
                return list(plain_gen(ctx))
            finally:
                by_op[key] = by_op.get(key, 0.0) + time.thread_time() - t0
        object.__setattr__(spec, "generator", timed_gen)
tasks = []
for tid in dataset_task_ids("arc", "train")[::step]:
    task = Task(id=tid, domain="arc", context={"arc_task_id": tid, "split": "train"})
    data = load_arc_task(task, "arc")
    tasks.append((tid, list(data.train), list(data.test_inputs)))
seconds = 0.0
apps = new = 0
digest = hashlib.sha256()
depths = {}
for tid, train, tests in tasks:
    kw = {}
    if depth != "default":  # a fixed depth limit
        if "deepen_after" in S.TaskSolver.__dataclass_fields__:
            kw = {"max_depth": int(depth), "deepen_after": None}
        else:  # a build from before the depth rule
            S.MAX_DEPTH = int(depth)
    t0 = time.thread_time()
    solver = S.TaskSolver(train, tests, **kw)
    solver.search(budget, max_seconds=1e9)
    seconds += time.thread_time() - t0
    apps += solver.applications
    new += len(solver.nodes)
    digest.update(tid.encode())
    for node in solver.nodes:
        digest.update(repr(node.expr).encode())
        depths[node.depth] = depths.get(node.depth, 0) + 1
    for node in solver.exact:
        digest.update(b"exact" + repr(node.expr).encode())
print(json.dumps({
    "file": S.__file__, "seconds": seconds, "applications": apps, "new": new,
    "digest": digest.hexdigest(), "depths": depths, "by_op": by_op,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run_build(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One fresh process of the build at ``root``: its figures as a dict."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    out = subprocess.run(
        [sys.executable, "-c", WORKER, str(args.step), str(args.budget), args.depth,
         *(["by-op"] if args.top_ops else [])],
        env=env, cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def profile(args: argparse.Namespace) -> None:
    """Where one pass's CPU time goes, by category (cProfile, this checkout)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    code = WORKER.replace("import hashlib", "import hashlib", 1)
    sys.argv = ["worker", str(args.step), str(args.budget), args.depth]
    prof.enable()
    exec(compile(code, "bench_search_worker", "exec"), {"__name__": "__worker__"})
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(args.top)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--step", type=int, default=8, help="every STEP-th training task (default 8)")
    p.add_argument("--budget", type=int, default=3000, help="op applications per task")
    p.add_argument("--runs", type=int, default=3, help="runs to take the median of")
    p.add_argument(
        "--depth",
        default="default",
        help="a fixed depth limit for both builds (default: each build's own depth rule)",
    )
    p.add_argument("--against", type=Path, help="another checkout to run side by side")
    p.add_argument("--profile", action="store_true", help="cProfile one pass instead")
    p.add_argument("--top", type=int, default=30, help="functions to list with --profile")
    p.add_argument("--top-ops", type=int, default=0, help="also list the N ops taking most time")
    add_json_flag(p)
    args = p.parse_args()
    if args.profile:
        profile(args)
        return 0
    builds = {"this": ROOT}
    if args.against is not None:
        builds["against"] = args.against.resolve()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
    for i in range(args.runs):
        order = list(builds.items())
        if i % 2:
            order.reverse()
        for name, root in order:
            r = run_build(root, args)
            rows[name].append(r)
            print(
                f"run {i + 1} {name:8s}: {r['applications']} applications in "
                f"{r['seconds']:.1f} s CPU = {r['applications'] / r['seconds']:.0f}/s, "
                f"{r['new'] / r['applications']:.1%} new states, peak RSS {r['rss_mb']:.0f} MB",
                flush=True,
            )
    summary: dict[str, Any] = {}
    for name, rs in rows.items():
        by_op: dict[str, float] = {}
        for r in rs:
            for op, t in r.get("by_op", {}).items():
                by_op[op] = by_op.get(op, 0.0) + t
        summary[name] = {
            "root": str(builds[name]),
            "applications_per_s": statistics.median(r["applications"] / r["seconds"] for r in rs),
            "new_states_per_s": statistics.median(r["new"] / r["seconds"] for r in rs),
            "new_share": statistics.median(r["new"] / r["applications"] for r in rs),
            "peak_rss_mb": max(r["rss_mb"] for r in rs),
            "depths": rs[0]["depths"],
            "digest": rs[0]["digest"],
            "deterministic": len({r["digest"] for r in rs}) == 1,
            "op_seconds": dict(sorted(by_op.items(), key=lambda kv: -kv[1])),
        }
    builds_summary = dict(summary)
    print_table(
        ["build", "applications/s", "new states/s", "new", "peak RSS MB", "same every run"],
        [
            [
                name,
                f"{s['applications_per_s']:.0f}",
                f"{s['new_states_per_s']:.0f}",
                f"{s['new_share']:.1%}",
                f"{s['peak_rss_mb']:.0f}",
                str(s["deterministic"]),
            ]
            for name, s in builds_summary.items()
        ],
        title=f"median of {args.runs} runs, budget {args.budget}, every {args.step}th task",
    )
    for name, s in builds_summary.items():
        print(f"{name}: {s['root']}; states by depth {s['depths']}")
        if args.top_ops and s["op_seconds"]:
            by_gen = {
                op[len("(inference) ") :]: s["op_seconds"].pop(op)
                for op in list(s["op_seconds"])
                if op.startswith("(inference) ")
            }
            inference = sum(by_gen.values())
            spent = sum(s["op_seconds"].values())
            total = sum(r["seconds"] for r in rows[name])
            print(
                f"{name}: of {total:.1f} s (all runs, timers on), op applications "
                f"{spent / total:.0%}, parameter inference {inference / total:.0%}, "
                f"the rest (queue, scoring, finishers, timers) "
                f"{(total - spent - inference) / total:.0%}"
            )
            print_table(
                ["op", "share of op time"],
                [
                    [op, f"{t / spent:.1%}"]
                    for op, t in list(s["op_seconds"].items())[: args.top_ops]
                ],
                title=f"op time by op ({name}, all runs, {spent:.1f} s in op applications)",
            )
            if by_gen:
                print_table(
                    ["op", "share of inference time"],
                    [
                        [op, f"{t / inference:.1%}"]
                        for op, t in sorted(by_gen.items(), key=lambda kv: -kv[1])[: args.top_ops]
                    ],
                    title=f"parameter inference by op ({name}, {inference:.1f} s)",
                )
    if "against" in summary:
        a, b = summary["this"], summary["against"]
        summary["speedup"] = a["applications_per_s"] / b["applications_per_s"]
        summary["same_states"] = a["digest"] == b["digest"]
        print(
            f"speed-up {summary['speedup']:.2f}x; same states in the same order: "
            f"{summary['same_states']}"
        )
    write_json(args.json, summary)
    ok = all(s["deterministic"] for s in builds_summary.values())
    return 0 if ok and summary.get("same_states", True) else 1


if __name__ == "__main__":
    raise SystemExit(main())
