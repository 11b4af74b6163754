#!/usr/bin/env python
"""Benchmark the actor engine: candidate evaluations per second, same workload.

Workload: ARC DSL programs from ``DSLProposer.initial`` (fixed seed) on the first
``--tasks`` ARC training tasks, scored against the train pairs. Optionally the same
programs as Python source (``Program.to_python``) through the bubblewrap runner.

Modes, one run, printed side by side as evaluations/s and ratios (medians of
``--repeats`` timed runs after one warm-up pass that loads the tasks):

* in-process: ``LocalEvaluator``, no Ray;
* 1 actor / one actor per core: ``EnvironmentPool`` on a local Ray;
* multi-raylet: ``ray.cluster_utils.Cluster`` with 2 nodes x 1 CPU (``--cluster``);
* coordinator overhead: Ray round trips per second for tiny batches on a trivial
  environment, the cost the coordinator pays per batch.

    python scripts/bench_engine.py                       # DSL programs, local modes
    python scripts/bench_engine.py --python --cluster    # + sandboxed source, + 2 raylets
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import anyio
import ray
from benchkit import add_json_flag, print_table, write_json

from atlas_actors.actors import EnvironmentPool
from atlas_actors.arc import DSLProposer, Program
from atlas_actors.arc.environment import dataset_task_ids
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.types import Task

Workload = list[tuple[Task, list[Any]]]


async def make_workload(n_tasks: int, per_task: int) -> Workload:
    proposer = DSLProposer()
    out: Workload = []
    for tid in dataset_task_ids("arc", "train")[:n_tasks]:
        task = Task(id=tid, domain="arc", context={"arc_task_id": tid})
        programs = await proposer.initial(task, per_task, random.Random(0))
        out.append((task, programs[:per_task]))
    return out


def as_python(work: Workload, per_task: int) -> Workload:
    return [(t, [Program.from_json(p).to_python() for p in ps[:per_task]]) for t, ps in work]


Evaluate = Callable[[Task, list[Any]], Coroutine[Any, Any, Any]]


@dataclass
class Mode:
    evaluate: Evaluate
    pids: list[int]
    """Processes doing the work besides this one (actors); their CPU is counted."""


_TICK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    return out


def _is_ray(pid: int) -> bool:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as f:
        return b"ray" in f.read().lower()
    return False


def _tree(pid: int, skip_ray: bool) -> list[int]:
    """``pid`` and its descendants; with ``skip_ray``, minus Ray's own processes
    (raylet, GCS, workers) and everything under them."""
    out = [pid]
    for child in _children(pid):
        if not (skip_ray and _is_ray(child)):
            out += _tree(child, skip_ray)
    return out


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
    return total


def cpu_seconds(pids: list[int]) -> tuple[float, float]:
    """User+system CPU of (this process with its sandboxes, the ``pids`` with theirs)."""
    mine = _cpu(_tree(os.getpid(), skip_ray=True))
    others = [q for pid in pids for q in _tree(pid, skip_ray=False)]
    return mine, _cpu(others)


async def run_all(evaluate: Evaluate, work: Workload) -> float:
    """Evaluate every task's batch concurrently (as concurrent searches would)."""
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for task, sols in work:
            tg.start_soon(evaluate, task, sols)
    return time.perf_counter() - start


async def rates(modes: dict[str, Mode], work: Workload, repeats: int) -> dict[str, Result]:
    """Per mode: evaluations/s (median of ``repeats``) and CPU ms per evaluation (all
    processes involved). Modes are interleaved round by round, so a change in the
    machine's load hits every mode alike."""
    n = sum(len(s) for _, s in work)
    for mode in modes.values():
        await run_all(mode.evaluate, work)  # warm-up: load tasks, start sandboxes
    times: dict[str, list[float]] = {name: [] for name in modes}
    cpu: dict[str, list[float]] = {name: [] for name in modes}
    caller: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(repeats):
        for name, mode in modes.items():
            me0, others0 = cpu_seconds(mode.pids)
            times[name].append(await run_all(mode.evaluate, work))
            me1, others1 = cpu_seconds(mode.pids)
            cpu[name].append(me1 - me0 + others1 - others0)
            caller[name].append(me1 - me0)
    return {
        name: Result(
            n / statistics.median(times[name]),
            1e3 * statistics.median(cpu[name]) / n,
            1e3 * statistics.median(caller[name]) / n,
        )
        for name in modes
    }


@dataclass
class Result:
    rate: float
    """Evaluations per second (wall clock)."""
    cpu_ms: float
    """CPU milliseconds per evaluation, summed over every process involved."""
    caller_ms: float
    """CPU milliseconds per evaluation in the calling process (the coordinator's share)."""


async def started_pool(
    size: int, batch_size: int, in_flight: int = 2
) -> tuple[EnvironmentPool, Mode]:
    pool = EnvironmentPool(size, batch_size=batch_size, max_in_flight_per_actor=in_flight)
    infos = await pool.start()
    return pool, Mode(pool.evaluate, [int(i["pid"]) for i in infos])


async def overhead(calls: int = 400) -> dict[str, float]:
    """Per-batch cost of the actor boundary: 1-solution batches on a passthrough env."""
    pool = EnvironmentPool(1, batch_size=1, max_in_flight_per_actor=1)
    await pool.start()
    task = Task(id="noop", domain="generic")
    try:
        await pool.evaluate(task, ["x"])
        start = time.perf_counter()
        for _ in range(calls):
            await pool.evaluate(task, ["x"])
        sequential = (time.perf_counter() - start) / calls
        # driver-side CPU per call: process time of this process while pipelining
        pool2 = EnvironmentPool(1, batch_size=1, max_in_flight_per_actor=8)
        await pool2.start()
        try:
            await pool2.evaluate(task, ["x"] * 8)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(calls // 8):
                await pool2.evaluate(task, ["x"] * 8)
            cpu = (time.process_time() - cpu0) / calls
            pipelined = (time.perf_counter() - wall0) / calls
        finally:
            await pool2.aclose()
    finally:
        await pool.aclose()
    return {
        "round_trip_ms": sequential * 1e3,
        "pipelined_ms": pipelined * 1e3,
        "caller_cpu_ms": cpu * 1e3,
    }


def row(name: str, r: Result, base: Result | None, one: Result | None) -> list[str]:
    """One mode's figures: rate, against in-process and one actor, CPU per evaluation."""
    return [
        name,
        f"{r.rate:.1f}",
        f"{r.rate / base.rate:.2f}x" if base else "",
        f"{r.rate / one.rate:.2f}x" if one else "",
        f"{r.cpu_ms:.2f}",
        f"{r.rate * r.cpu_ms / 1e3:.2f}",
        f"{r.cpu_ms / base.cpu_ms:.2f}x" if base else "",
    ]


async def bench(args: argparse.Namespace) -> None:
    cores = os.cpu_count() or 1
    work = await make_workload(args.tasks, args.programs)
    n = sum(len(s) for _, s in work)
    print(f"load average before: {os.getloadavg()[0]:.1f}; niceness {args.nice} (as Ray workers)")
    print(
        f"workload: {n} DSL programs on {len(work)} ARC training tasks; cores={cores}; "
        f"batch_size={args.batch_size}; in flight per actor={args.in_flight}; "
        f"median of {args.repeats}"
    )
    kinds: list[tuple[str, Workload]] = [] if args.python_only else [("dsl", work)]
    if args.python or args.python_only:
        kinds.append(("python", as_python(work, args.python_programs)))

    results: dict[str, dict[str, Result]] = {}
    # cores + 1 logical CPUs: the 1-actor and the per-core pools exist side by side
    # (only one is ever busy), so their runs can be interleaved
    ray.init(num_cpus=cores + 1, include_dashboard=False, log_to_driver=False)
    # Ray runs its workers (the actors) at nice 15; run this process (the in-process
    # baseline and the callers) at the same niceness so that on a shared machine every
    # mode competes for the CPUs alike. Ray's own daemons, started above, keep nice 0.
    os.nice(max(0, args.nice - os.nice(0)))
    try:
        one, one_mode = await started_pool(1, args.batch_size, args.in_flight)
        many, many_mode = await started_pool(cores, args.batch_size, args.in_flight)
        for kind, w in kinds:
            local = LocalEvaluator()
            results[kind] = await rates(
                {
                    "in-process": Mode(local.evaluate, []),
                    "1 actor": one_mode,
                    f"{cores} actors": many_mode,
                },
                w,
                args.repeats,
            )
            await local.aclose()
        await one.aclose()
        await many.aclose()
        ov = await overhead()
    finally:
        ray.shutdown()

    if args.cluster:
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
        for _ in range(2):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            pool, mode = await started_pool(2, args.batch_size, args.in_flight)
            nodes = {i.get("node_id") for i in await pool.health_check()}
            for kind, w in kinds:
                name = f"2 raylets x 1 actor ({len(nodes)} nodes)"
                results[kind].update(await rates({name: mode}, w, args.repeats))
            await pool.aclose()
        finally:
            ray.shutdown()
            cluster.shutdown()  # type: ignore[no-untyped-call]

    for kind, r in results.items():
        base, single = r["in-process"], r.get("1 actor")
        print_table(
            [
                "mode",
                "evals/s",
                "vs in-process",
                "vs 1 actor",
                "CPU ms/eval",
                "cores busy",
                "CPU vs in-process",
            ],
            [
                row(
                    name,
                    value,
                    base if name != "in-process" else None,
                    single if name not in ("in-process", "1 actor") else None,
                )
                for name, value in r.items()
            ],
            title=f"[{kind}] "
            + (
                "(Python source in the bubblewrap runner)"
                if kind == "python"
                else "(DSL programs, in the actor's process)"
            ),
        )
    write_json(
        args.json,
        {
            "results": {k: {n: vars(v) for n, v in r.items()} for k, r in results.items()},
            "actor_boundary": ov,
        },
    )
    print(
        f"\nactor boundary: round trip {ov['round_trip_ms']:.2f} ms per 1-solution batch "
        f"(sequential), {ov['pipelined_ms']:.2f} ms pipelined (8 in flight); "
        f"caller CPU {ov['caller_cpu_ms']:.2f} ms per batch"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if "dsl" not in results:
        return
    dsl = results["dsl"]
    actor_ms = dsl["1 actor"].cpu_ms - dsl["1 actor"].caller_ms
    caller_ms = dsl["1 actor"].caller_ms
    feed = actor_ms / max(caller_ms, 1e-6)
    print(
        f"model (DSL, batches of {args.batch_size}): an actor spends {actor_ms:.2f} CPU ms per "
        f"evaluation, the caller (coordinator) {caller_ms:.3f} ms (call overhead + "
        f"unpickling outcomes), so one coordinator core saturates at about {feed:.0f} "
        f"busy environment actors on this workload"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=10)
    p.add_argument("--programs", type=int, default=200, help="DSL programs per task")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--python", action="store_true", help="also Python source (sandboxed)")
    p.add_argument("--python-programs", type=int, default=20, help="sources per task")
    p.add_argument("--cluster", action="store_true", help="also 2 raylets x 1 CPU")
    p.add_argument("--in-flight", type=int, default=2, help="max_in_flight_per_actor")
    p.add_argument(
        "--nice", type=int, default=15, help="niceness of this process (Ray workers: 15)"
    )
    p.add_argument("--python-only", action="store_true", help="only the Python-source workload")
    add_json_flag(p)
    anyio.run(bench, p.parse_args())


if __name__ == "__main__":
    main()
