"""Tree-search throughput through the actor engine, with a scripted model on loopback.

Two measurements, side by side in one run:

1. **Scaling with environment actors.** The four bundled example instances are searched
   by ``SWESearch`` through the Engine (``atlas-actors swe``'s path) with 1, 2 and 4
   environment actors (each actor runs one test at a time: ``max_in_flight_per_actor``
   1), a scripted model at a fixed latency proposing ``--wrong`` harmless wrong edits
   per instance before the fix. Reported: nodes expanded per minute (from the moment
   the engine's actors are up; with their start-up too as a second figure), test runs per
   resolved instance, the ratio to one actor (target on 2 cores: 2 actors >= 1.8x), and
   the CPU seconds per node: this benchmark's own (its process tree, Ray included, and its
   containers, counted in a cgroup of its own: ``benchcpu.CpuMeter``) plus the Docker
   daemons' (shared with anyone else using the engine), and how busy the whole machine
   was (``/proc/stat``: other people's work counts there). The actor counts run
   interleaved (1, 2, 1, 2, ...), so a change in the machine's load falls on all of them.
2. **LLM calls in flight.** The same four instances with a model latency of ``--latency``
   (1 s by default) and parallel expansions: the peak number of requests the loopback
   server saw in flight at once (target: >= 16; the search must not wait on one call at
   a time), and the time-weighted mean from the first request to the last answer.

With ``--pipeline`` both parts run the pipelined search (``SWESearchConfig.pipeline``:
the next node is selected as each expansion's proposals arrive, not after the whole
batch).

Both parts let a node take as many children as a batch has expansions (``max_children``
= ``--parallel``, at least 3), so a fresh root fills a whole batch.

Medians of ``--runs`` runs. Needs a Docker engine (``scripts/docker-up``) and the
example images (``scripts/build-swe-examples``; the missing ones are named and nothing
runs), or ``--backend bubblewrap``::

    python scripts/bench_mcts.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from benchcpu import CpuMeter
from benchkit import add_json_flag, print_table, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atlas_actors.actors import Engine  # noqa: E402
from atlas_actors.config import EngineConfig, LLMConfig, SWESearchConfig  # noqa: E402
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer  # noqa: E402
from atlas_actors.swe.instances import SWEInstance, load_example_instances  # noqa: E402


def scripted(instances: list[SWEInstance], wrong: int) -> Any:
    """Per instance: ``wrong`` harmless wrong edits (a comment on the buggy line), then
    the fix as an edit of the buggy line (the gold patch's one removed line becomes its
    added lines), which applies from any node, after any of the wrong edits."""
    calls: dict[str, int] = {}

    def reply(req: ChatRequest) -> str:
        inst = next(i for i in instances if i.problem_statement.splitlines()[0] in req.text)
        n = calls[inst.instance_id] = calls.get(inst.instance_id, 0) + 1
        path = inst.patch.split("+++ b/", 1)[1].split("\n", 1)[0]
        bug = next(
            line[1:]
            for line in inst.patch.splitlines()
            if line.startswith("-") and not line.startswith("---")
        )
        if n <= wrong:
            action = {"kind": "edit", "path": path, "old": bug, "new": f"{bug}  # try {n}"}
        else:
            fixed = "\n".join(
                line[1:]
                for line in inst.patch.splitlines()
                if line.startswith("+") and not line.startswith("+++")
            )
            action = {"kind": "edit", "path": path, "old": bug, "new": fixed}
        return "```json\n" + json.dumps([{**action, "label": f"try {n}"}]) + "\n```"

    return reply


async def one_run(
    instances: list[SWEInstance],
    *,
    actors: int,
    latency: float,
    wrong: int,
    parallel: int,
    backend: str,
    meter: CpuMeter,
    pipeline: bool = False,
) -> dict[str, float]:
    env: dict[str, Any] = {"backend": backend, "eval_timeout_s": 300}
    if meter.cgroup_parent and backend == "docker":
        env["cgroup_parent"] = meter.cgroup_parent
    async with FakeLLMServer(scripted(instances, wrong), latency=latency) as server:
        with tempfile.TemporaryDirectory() as trees:
            config = EngineConfig(
                workers=actors,
                discriminators=1,
                llm=LLMConfig(base_url=server.base_url, api_key_env=None, max_concurrency=64),
                mcts=SWESearchConfig(
                    max_expansions=wrong + 4,
                    parallel_expansions=parallel,
                    max_children=max(3, parallel),  # a fresh root can take a whole batch
                    pipeline=pipeline,
                    children_per_expansion=1,
                    rollout_depth=0,
                ),
                environment_options={"swe": env},
                proposer_options={"swe": {"mode": "llm"}},
                max_in_flight_per_actor=1,
                max_concurrent_tasks=len(instances),
                tree_dir=trees,
                call_timeout_s=600,
                placement="coordinator",
            )
            started = time.monotonic()
            async with Engine(config) as engine:
                ready = time.monotonic()  # actors up: the search's time starts here
                before = meter.sample()
                results = [r async for r in engine.solve_many([i.to_task() for i in instances])]
                wall = time.monotonic() - ready
                cpu = meter.sample() - before
            total = time.monotonic() - started
        peak = server.max_in_flight
        mean = server.mean_in_flight
    expansions = sum(r.stats.get("expansions", 0) for r in results)
    if not expansions:
        errors = "; ".join(sorted({str(r.error or r.stats.get("stopped")) for r in results}))
        raise SystemExit(f"no node was expanded ({actors} actors): {errors}")
    resolved = sum(bool(r.solved) for r in results)
    test_runs = sum(r.evaluations for r in results)
    ours = cpu.ours if cpu.ours is not None else float("nan")
    return {
        "wall_s": wall,
        "with_startup_s": total,
        "expansions": expansions,
        "nodes_per_minute": 60 * expansions / wall,
        "nodes_per_minute_with_startup": 60 * expansions / total,
        "resolved": resolved,
        "test_runs_per_resolved": test_runs / resolved if resolved else float("inf"),
        "llm_in_flight_peak": peak,
        "llm_in_flight_mean": mean,
        "machine_busy_cores": cpu.machine / wall,
        "our_cores": (ours + cpu.daemons) / wall,
        "cpu_s_per_node": (ours + cpu.daemons) / expansions,
        "our_cpu_s_per_node": ours / expansions,
        "daemon_cpu_s_per_node": cpu.daemons / expansions,
    }


async def missing_images(instances: list[SWEInstance]) -> list[str]:
    """The instances' images the Docker engine does not have."""
    from atlas_actors.sandbox.docker import DockerClient

    async with DockerClient() as docker:
        return [i.image for i in instances if not await docker.image_exists(i.image)]


def median_of(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    import ray

    instances = load_example_instances()
    if args.backend == "docker":
        missing = await missing_images(instances)
        if missing:
            raise SystemExit(
                f"missing images: {', '.join(missing)} (build them with "
                "scripts/build-swe-examples, or use --backend bubblewrap)"
            )
    meter: CpuMeter = args.meter
    if meter.note:
        print(meter.note, flush=True)
    ray.init(include_dashboard=False, log_to_driver=False)
    out: dict[str, Any] = {"scaling": {}, "in_flight": {}}
    try:
        rows: dict[int, list[dict[str, float]]] = {a: [] for a in args.actors}
        for run in range(args.runs):
            for actors in args.actors:  # interleaved: a change of load falls on each
                row = await one_run(
                    instances,
                    actors=actors,
                    latency=args.scaling_latency,
                    wrong=args.wrong,
                    parallel=4,
                    backend=args.backend,
                    meter=meter,
                    pipeline=args.pipeline,
                )
                rows[actors].append(row)
                print(f"run {run + 1}, actors {actors}: {json.dumps(row)}", flush=True)
        for actors in args.actors:
            out["scaling"][actors] = median_of(rows[actors])
        base = out["scaling"][args.actors[0]]["nodes_per_minute"]
        for actors in args.actors:
            row = out["scaling"][actors]
            row["ratio_to_first"] = row["nodes_per_minute"] / base
        if args.skip_in_flight:
            return out
        in_flight = [
            await one_run(
                instances,
                actors=2,
                latency=args.latency,
                wrong=args.wrong,
                parallel=args.parallel,
                backend=args.backend,
                meter=meter,
                pipeline=args.pipeline,
            )
            for _ in range(args.runs)
        ]
        out["in_flight"] = median_of(in_flight)
    finally:
        ray.shutdown()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--wrong", type=int, default=6, help="wrong edits per instance first")
    p.add_argument("--scaling-latency", type=float, default=0.2, help="model latency, part 1")
    p.add_argument("--latency", type=float, default=1.0, help="model latency, part 2")
    p.add_argument("--parallel", type=int, default=4, help="parallel expansions, part 2")
    p.add_argument("--backend", choices=["docker", "bubblewrap"], default="docker")
    p.add_argument(
        "--pipeline",
        action="store_true",
        help="pipelined tree search (SWESearchConfig.pipeline) in both parts",
    )
    add_json_flag(p)
    p.add_argument(
        "--skip-in-flight", action="store_true", help="only part 1 (scaling with actors)"
    )
    args = p.parse_args()
    with CpuMeter("atlas-bench-mcts") as args.meter:
        out = anyio.run(main_async, args)
    print_table(
        [
            "actors",
            "nodes/min",
            "x first",
            "test runs/resolved",
            "resolved",
            "CPU s/node (ours + daemons)",
            "our cores",
            "machine busy cores",
        ],
        [
            [
                str(actors),
                f"{row['nodes_per_minute']:.1f}",
                f"{row['ratio_to_first']:.2f}",
                f"{row['test_runs_per_resolved']:.1f}",
                f"{row['resolved']:.0f}/4",
                f"{row['cpu_s_per_node']:.3f} ({row['our_cpu_s_per_node']:.3f} + "
                f"{row['daemon_cpu_s_per_node']:.3f})",
                f"{row['our_cores']:.2f}",
                f"{row['machine_busy_cores']:.2f}",
            ]
            for actors, row in out["scaling"].items()
        ],
        title=f"nodes expanded per minute (median of {args.runs} runs, interleaved)",
    )
    if not args.skip_in_flight:
        f = out["in_flight"]
        print_table(
            ["LLM latency s", "parallel", "peak in flight", "mean in flight", "resolved"],
            [
                [
                    f"{args.latency:g}",
                    str(args.parallel),
                    f"{f['llm_in_flight_peak']:.0f}",
                    f"{f['llm_in_flight_mean']:.1f}",
                    f"{f['resolved']:.0f}/4",
                ]
            ],
            title="LLM requests in flight (4 instances)",
        )
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
