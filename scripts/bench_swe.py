#!/usr/bin/env python
"""Benchmark the SWE environment on the example instances (medians of several runs).

    export DOCKER_HOST=$(scripts/docker-up)
    scripts/build-base-image && scripts/build-swe-examples
    python scripts/bench_swe.py [--runs 7] [--rounds 2] [--no-pool] [--no-bubblewrap]

Prints:
  1. container start-to-ready latency (create + start + first exec);
  2. verify latency (reset tree, apply patch, run the eval script, grade) against running
     the same test command directly in an already running container; the ratio is the
     environment's overhead (target <= 1.3x). Same for the bubblewrap backend;
  3. graded instances per minute with 1 vs 2 concurrent environments: Ray
     EnvironmentPool actors (1 vs 2) when available, else in-process LocalEvaluators.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from atlas_actors.environments.base import Evaluator
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.sandbox.docker import ContainerLimits, DockerClient
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.evaluate import grade_predictions
from atlas_actors.swe.instances import SWEInstance, load_example_instances
from atlas_actors.swe.workspace import DockerWorkspace, reset_command

TEST_CMD = "python3 -m pytest -rA -p no:cacheprovider {files}"


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def timing_row(name: str, xs: list[float]) -> list[str]:
    """A latency figure: median, min and max in ms, and the number of runs."""
    return [name, f"{med(xs) * 1000:.0f}", f"{min(xs) * 1000:.0f}", f"{max(xs) * 1000:.0f}",
            str(len(xs))]  # fmt: skip


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    t = time.perf_counter()
    await fn()
    return time.perf_counter() - t


async def bench_start(inst: SWEInstance, runs: int) -> list[float]:
    out = []
    async with DockerClient() as client:
        for i in range(runs):
            ws = DockerWorkspace(
                client, inst.image, run=f"bench-start-{i}", limits=ContainerLimits()
            )
            try:
                out.append(await timed(ws.start))
            finally:
                await ws.close()
    return out


async def bench_verify(
    inst: SWEInstance, backend: str, runs: int
) -> tuple[list[float], list[float]]:
    """(verify latencies, direct test-command latencies) on the same instance."""
    files = " ".join(
        f for f in inst.eval_script.split() if f.startswith("tests/") and f.endswith(".py")
    )
    files = " ".join(dict.fromkeys(files.split()))
    verify_t: list[float] = []
    direct_t: list[float] = []
    async with SWEEnvironment(backend=backend) as env:  # type: ignore[arg-type]
        await env.reset(inst.to_task())
        assert (await env.verify(inst.patch)).success  # warm-up
        for _ in range(runs):
            t = time.perf_counter()
            outcome = await env.verify(inst.patch)
            verify_t.append(time.perf_counter() - t)
            assert outcome.success, outcome.feedback
        ws = env.workspace
        await ws.write_file("/atlas_io/gold.diff", inst.patch.encode())
        await ws.write_file("/atlas_io/tests.diff", inst.test_patch.encode())
        r = await ws.run(
            f"{reset_command(inst.base_commit)} && "
            "git apply /atlas_io/gold.diff && git apply /atlas_io/tests.diff",
            timeout_s=60,
        )
        assert r.ok, r.output
        cmd = TEST_CMD.format(files=files)
        await ws.run(cmd, timeout_s=120)  # warm-up
        for _ in range(runs):
            t = time.perf_counter()
            r = await ws.run(cmd, timeout_s=120)
            direct_t.append(time.perf_counter() - t)
            assert r.exit_code == 0, r.output[-2000:]
    return verify_t, direct_t


async def bench_throughput(
    insts: list[SWEInstance],
    rounds: int,
    make: Callable[[int], Awaitable[tuple[Any, Callable[[], Awaitable[None]]]]],
    workers: int,
) -> float:
    """Graded instances per minute for one configuration (one run)."""
    preds = [
        {"instance_id": i.instance_id, "model_name_or_path": "gold", "model_patch": i.patch}
        for i in insts
    ]
    ev, close = await make(workers)
    try:
        total = 0
        t = time.perf_counter()
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as td:  # fresh out dir: no resume
                report = await grade_predictions(insts, preds, td, ev, concurrency=workers)
            assert report["resolved_instances"] == len(insts), report
            total += len(insts)
        return total / (time.perf_counter() - t) * 60
    finally:
        await close()


async def local_evaluators(workers: int) -> tuple[Any, Callable[[], Awaitable[None]]]:
    evs = [LocalEvaluator(factory=lambda t: SWEEnvironment(), max_tasks=1) for _ in range(workers)]

    async def close() -> None:
        for ev in evs:
            await ev.aclose()

    return evs, close


def pool_factory() -> Callable[[int], Awaitable[tuple[Any, Callable[[], Awaitable[None]]]]] | None:
    try:
        import ray

        from atlas_actors.actors.pool import EnvironmentPool
    except ImportError:
        return None

    if not ray.is_initialized():
        ray.init(
            num_cpus=max(2, os.cpu_count() or 2),
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"DOCKER_HOST": os.environ.get("DOCKER_HOST", "")}},
        )

    async def make(workers: int) -> tuple[Any, Callable[[], Awaitable[None]]]:
        pool = EnvironmentPool(
            workers,
            options={"swe": {"docker_host": os.environ.get("DOCKER_HOST")}},
            cache_sizes={"swe": 1},
            max_in_flight_per_actor=1,
            call_timeout_s=600,
            actor_options={"num_cpus": 0},
        )
        await pool.start()
        ev: Evaluator = pool
        return ev, pool.aclose

    return make


async def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=7, help="timed runs per latency figure")
    ap.add_argument(
        "--rounds", type=int, default=2, help="passes over the 4 examples per throughput run"
    )
    ap.add_argument("--repeats", type=int, default=3, help="throughput runs per configuration")
    ap.add_argument("--no-pool", action="store_true", help="use LocalEvaluators, not Ray actors")
    ap.add_argument("--no-bubblewrap", action="store_true")
    add_json_flag(ap)
    args = ap.parse_args()

    insts = load_example_instances()
    textkit = next(i for i in insts if i.repo.endswith("textkit"))
    print(f"SWE benchmark on the example instances ({len(insts)}), {os.cpu_count()} cores")

    figures: dict[str, Any] = {}
    start = await bench_start(textkit, args.runs)
    figures["container_start_s"] = start
    timings = [timing_row("container start-to-ready", start)]

    backends = ["docker"] + ([] if args.no_bubblewrap else ["bubblewrap"])
    overheads = []
    for backend in backends:
        v, d = await bench_verify(textkit, backend, args.runs)
        figures[backend] = {"verify_s": v, "direct_s": d, "overhead": med(v) / med(d)}
        timings += [
            timing_row(f"[{backend}] verify (gold patch)", v),
            timing_row(f"[{backend}] same tests, direct", d),
        ]
        overheads.append([backend, f"{med(v) / med(d):.2f}x"])
    print_table(["latency", "median ms", "min ms", "max ms", "runs"], timings)
    print_table(["backend", "verify / direct (target <= 1.3x)"], overheads)

    make = None if args.no_pool else pool_factory()
    kind = "Ray EnvironmentPool actors" if make is not None else "in-process LocalEvaluators"
    if make is None:
        make = local_evaluators
    rates: dict[int, list[float]] = {}
    for workers in (1, 2):
        rates[workers] = [
            await bench_throughput(insts, args.rounds, make, workers) for _ in range(args.repeats)
        ]
    r1, r2 = med(rates[1]), med(rates[2])
    n = args.rounds * len(insts)
    print_table(
        ["environments", "graded instances/min", "speed-up"],
        [["1", f"{r1:.1f}", ""], ["2", f"{r2:.1f}", f"{r2 / r1:.2f}x"]],
        title=f"throughput ({kind}; medians of {args.repeats} runs of {n} gradings)",
    )
    figures["throughput"] = {"kind": kind, "per_min": rates, "gradings_per_run": n}
    write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
