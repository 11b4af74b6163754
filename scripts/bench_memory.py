"""What experience memory buys on ARC, each part side by side in one invocation.

(a) **Repeat**: ARC-AGI-1 training solved once with a fresh memory, then again with
    its own memory: solved and candidate evaluations per solved task, first run against
    second (target: >= 10x fewer evaluations, as many solved).
(b) **Transfer**: with the memory built in (a), ARC-AGI-1 evaluation with and without
    it at the same time limit: solved, and evaluations per solved task.
(c) **The seed's criterion** ("Mind Evolution improves over DirectSolver"), at an equal
    evaluation budget on the same evaluation tasks: DirectSolver alone (remembered
    training programs and their local mutations, nothing else), Mind Evolution without
    memory, Mind Evolution with memory (half its initial population from remembered
    programs), and the DSL enumeration alone (the offline proposer's initial programs,
    no evolutionary loop).

Everything runs in this process on ``--processes`` worker processes (one task each at
a time), with the offline DSL proposer and no LLM; memory learns only from what the
search could check (train pairs), never from test outputs::

    python scripts/bench_memory.py --train 400 --eval 400 --seconds 5 --budget 1000 \\
        --json runs/bench_memory.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atlas_actors.arc.environment import dataset_task_ids  # noqa: E402
from atlas_actors.config import MindEvolutionConfig  # noqa: E402
from atlas_actors.types import Task, TaskResult  # noqa: E402


def arc_task(tid: str, split: str) -> Task:
    return Task(id=tid, domain="arc", context={"arc_task_id": tid, "split": split})


# -- one task, in a worker process ---------------------------------------------------------


def _run(job: dict[str, Any]) -> dict[str, Any]:
    return anyio.run(_run_async, job)


async def _run_async(job: dict[str, Any]) -> dict[str, Any]:
    from atlas_actors.environments.local import LocalEvaluator
    from atlas_actors.memory.session import MemorySession
    from atlas_actors.search.direct import DirectSolver
    from atlas_actors.search.solve import solve_task, task_seed

    task = arc_task(job["id"], job["split"])
    evaluator = LocalEvaluator(max_tasks=1)
    session = MemorySession(job.get("memory"), run_id=job.get("run_id"))
    await session.open()
    try:
        mode = job["mode"]
        seed = task_seed(0, task.id)
        config = MindEvolutionConfig(
            time_limit_s=job.get("seconds"), max_evaluations=job.get("budget")
        )
        options = {"cpu_limits": job.get("budget") is None}
        if mode == "direct":
            decision = await session.route(task)
            out = await DirectSolver().solve(task, evaluator, decision.experiences, seed=seed)
            result = TaskResult(task_id=task.id, evaluations=out.evaluations)
            if out.best is not None and out.solved:
                result.solution = out.best.solution
                from atlas_actors.arc.domain import report

                await report(task, out.candidates, result, None)
        elif mode == "enumeration":
            from atlas_actors.arc.domain import report
            from atlas_actors.arc.proposer import DSLProposer
            from atlas_actors.search.mind_evolution import derive_rng
            from atlas_actors.types import Candidate

            inf = float("inf")
            proposer = DSLProposer(
                initial_seconds=inf, step_seconds=inf, second_seconds=inf,
                initial_budget=20 * int(job["budget"]),
            )  # fmt: skip
            sols = await proposer.initial(task, int(job["budget"]), derive_rng(seed, "init"))
            sols = sols[: int(job["budget"])]
            outcomes = await evaluator.evaluate(task, sols)
            cands = sorted(
                (
                    Candidate(solution=s, outcome=o, fitness=o.partial_score)
                    for s, o in zip(sols, outcomes, strict=True)
                ),
                key=lambda c: -c.fitness,
            )
            result = TaskResult(task_id=task.id, evaluations=len(sols))
            if cands:
                result.solution = cands[0].solution
                await report(task, cands, result, None)
        else:  # "search": Mind Evolution, routed by memory when there is one
            routing = await session.route(task) if job.get("memory") else None
            result = await solve_task(
                task, evaluator, config=config, seed=seed, routing=routing,
                proposer_options=options,
            )  # fmt: skip
            if job.get("record"):
                await session.remember(task, result)
    finally:
        await evaluator.aclose()
        session.close()
    return {
        "id": task.id,
        "solved": bool(result.solved),
        "evaluations": result.evaluations,
        "seconds": result.seconds,
        "route": (result.routing or {}).get("strategy"),
        "rule": (result.routing or {}).get("rule"),
    }


def run_all(jobs: list[dict[str, Any]], processes: int) -> list[dict[str, Any]]:
    with ProcessPoolExecutor(processes) as pool:
        return list(pool.map(_run, jobs))


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    solved = [r for r in rows if r["solved"]]
    return {
        "tasks": len(rows),
        "solved": len(solved),
        "evaluations_per_solved": statistics.mean(r["evaluations"] for r in solved)
        if solved
        else None,
        "median_evaluations_solved": statistics.median(r["evaluations"] for r in solved)
        if solved
        else None,
        "routes": {k: sum(r["route"] == k for r in rows) for k in {r["route"] for r in rows}},
        "rules": {k: sum(r.get("rule") == k for r in rows) for k in {r.get("rule") for r in rows}},
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", type=int, default=400, help="training tasks (first N in id order)")
    p.add_argument("--eval", type=int, default=400, help="evaluation tasks for (b)")
    p.add_argument("--criterion", type=int, default=100, help="evaluation tasks for (c)")
    p.add_argument("--seconds", type=float, default=5.0, help="time limit per task, (a) (b)")
    p.add_argument("--budget", type=int, default=1000, help="evaluations per task, (c)")
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--parts", default="abc", help="which parts to run (default: abc)")
    add_json_flag(p)
    args = p.parse_args()
    out: dict[str, Any] = {"args": vars(args) | {"json": str(args.json)}}
    train = dataset_task_ids("arc", "train")[: args.train]
    evals = dataset_task_ids("arc", "eval")
    with tempfile.TemporaryDirectory() as td:
        memory = str(Path(td) / "memory.sqlite3")
        base = {"split": "train", "seconds": args.seconds, "memory": memory, "run_id": "a1"}
        started = time.monotonic()
        first = run_all([{**base, "id": t, "mode": "search", "record": True} for t in train],
                        args.processes)  # fmt: skip
        second = run_all([{**base, "id": t, "mode": "search", "run_id": "a2"} for t in train],
                         args.processes)  # fmt: skip
        out["a"] = {"first": totals(first), "second": totals(second)}
        out["rows_a"] = {"first": first, "second": second}
        a1, a2 = out["a"]["first"], out["a"]["second"]
        if a1["evaluations_per_solved"] and a2["evaluations_per_solved"]:
            out["a"]["ratio"] = a1["evaluations_per_solved"] / a2["evaluations_per_solved"]
        out["a"]["wall_s"] = time.monotonic() - started
        print("a", json.dumps(out["a"]), flush=True)
        if "b" in args.parts:
            ev = {"split": "eval", "seconds": args.seconds, "mode": "search"}
            cold = run_all([{**ev, "id": t} for t in evals[: args.eval]], args.processes)
            warm = run_all(
                [{**ev, "id": t, "memory": memory} for t in evals[: args.eval]], args.processes
            )
            out["b"] = {"without_memory": totals(cold), "with_memory": totals(warm)}
            print("b", json.dumps(out["b"]), flush=True)
        if "c" in args.parts:
            ids = evals[: args.criterion]
            cb = {"split": "eval", "budget": args.budget}
            arms = {
                "direct_solver": [{**cb, "id": t, "mode": "direct", "memory": memory} for t in ids],
                "mind_evolution": [{**cb, "id": t, "mode": "search"} for t in ids],
                "mind_evolution_memory": [
                    {**cb, "id": t, "mode": "search", "memory": memory} for t in ids
                ],
                "enumeration": [{**cb, "id": t, "mode": "enumeration"} for t in ids],
            }
            out["c"] = {name: totals(run_all(jobs, args.processes)) for name, jobs in arms.items()}
            print("c", json.dumps(out["c"]), flush=True)
    arms = [("a", "first", out["a"]["first"]), ("a", "second", out["a"]["second"])]
    arms += [("b", name, t) for name, t in out.get("b", {}).items()]
    arms += [("c", name, t) for name, t in out.get("c", {}).items()]
    print_table(
        ["part", "arm", "tasks", "solved", "evaluations per solved", "median evaluations"],
        [
            [
                part,
                name,
                t["tasks"],
                t["solved"],
                t["evaluations_per_solved"],
                t["median_evaluations_solved"],
            ]
            for part, name, t in arms
        ],
        title=f"experience memory (part a: {out['a'].get('ratio') or 0:.1f}x fewer evaluations "
        "per solved task the second time)",
    )
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
