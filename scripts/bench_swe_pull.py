#!/usr/bin/env python
"""Benchmark instance images on demand: what pulling a missing image costs a SWE run.

    export DOCKER_HOST=$(scripts/docker-up)
    scripts/build-base-image && scripts/build-swe-examples
    python scripts/bench_swe_pull.py [--runs 3] [--copies 2] [--json out.json]

Set-up (all on this machine): a private registry on 127.0.0.1 (Debian's docker-registry,
as the tests start it) gets the four example instance images from the main engine; a
second, empty dockerd (scripts/docker-up on its own socket and data-root) is the engine
that runs the benchmark, so a pull really downloads every layer (the 207 MB offline base
included), over loopback.

Prints, as medians of ``--runs`` runs:
  1. time to first verdict (reset + verify of the gold patch) when the image must be
     pulled first, against the image already present; the difference is the pull's
     overhead (the pull alone is timed too);
  2. graded instances per minute for a swe-eval-shaped run (images made present up front
     by RunImages in the driver, then an EnvironmentPool of 1 or 2 Ray actors grades the
     four examples x ``--copies``), with the images missing (cold: pulled) and present.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from atlas_actors.sandbox.docker import DockerClient, resolve_docker_host
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.evaluate import grade_predictions
from atlas_actors.swe.images import RunImages, ensure_image
from atlas_actors.swe.instances import SWEInstance, load_example_instances
from tests.swe.registry import LocalRegistry, free_port

ROOT = Path(__file__).resolve().parents[1]
BENCH_ENV = {
    "ATLAS_DOCKER_SOCK": "/run/atlas-bench-pull.sock",
    "ATLAS_DOCKER_ROOT": "/var/lib/atlas-bench-pull-docker",
    "ATLAS_DOCKER_LOG": "/var/log/atlas-bench-pull-dockerd.log",
}


def med(xs: list[float]) -> float:
    return statistics.median(xs)


async def push_examples(main_host: str, registry: str, insts: list[SWEInstance]) -> None:
    async with DockerClient(main_host) as docker:
        for inst in insts:
            name = f"{registry}/atlas-bench/{inst.instance_id.lower()}"
            await docker.api.images.tag(inst.image, repo=name, tag="1")
            async for msg in docker.api.images.push(f"{name}:1", stream=True):
                if "error" in msg:
                    raise RuntimeError(msg["error"])
            await docker.remove_image(f"{name}:1")


async def clear(host: str) -> None:
    """Remove every image from the bench engine (its layers go with them)."""
    async with DockerClient(host) as docker:
        for img in await docker.call("image list", docker.api.images.list(all=True)):
            for tag in img.get("RepoTags") or [img["Id"]]:
                if tag != "<none>:<none>":
                    await docker.remove_image(tag)
        await docker.call("image prune", docker.api.images.prune())
        left = await docker.call("image list", docker.api.images.list(all=True))
        assert not left, f"images still on the bench engine: {left}"


async def first_verdict(host: str, inst: SWEInstance) -> float:
    started = time.perf_counter()
    async with SWEEnvironment(docker_host=host) as env:
        await env.reset(inst.to_task())
        outcome = await env.verify(inst.patch)
    assert outcome.success, outcome.feedback
    return time.perf_counter() - started


async def bench_first_verdict(host: str, inst: SWEInstance, runs: int) -> dict[str, Any]:
    pulled, present, pull_only = [], [], []
    for _ in range(runs):
        await clear(host)
        pulled.append(await first_verdict(host, inst))  # reset pulls (pull="missing")
        present.append(await first_verdict(host, inst))
        await clear(host)
        async with DockerClient(host) as docker:
            t = time.perf_counter()
            assert await ensure_image(docker, inst.image) == "pulled"
            pull_only.append(time.perf_counter() - t)
    return {
        "first_verdict_pulled_s": med(pulled),
        "first_verdict_present_s": med(present),
        "pull_overhead_s": med(pulled) - med(present),
        "pull_alone_s": med(pull_only),
        "samples": {"pulled": pulled, "present": present, "pull": pull_only},
    }


async def bench_throughput(
    host: str, insts: list[SWEInstance], runs: int, workers: int
) -> dict[str, Any]:
    """swe-eval's shape: RunImages in the driver, then a fresh pool of ``workers`` actors
    grades (a fresh pool per run: actors keep containers, which pin their images)."""
    from atlas_actors.actors.pool import EnvironmentPool

    preds = [
        {"instance_id": i.instance_id, "model_name_or_path": "gold", "model_patch": i.patch}
        for i in insts
    ]
    out: dict[str, Any] = {}
    for cond in ("cold", "warm"):
        rates = []
        for _ in range(runs):
            if cond == "cold":
                await clear(host)
            pool = EnvironmentPool(
                workers,
                options={"swe": {"backend": "docker", "docker_host": host}},
                cache_sizes={"swe": 1},
                max_in_flight_per_actor=1,
                call_timeout_s=3600.0,
                actor_options={"num_cpus": 0},
            )
            await pool.start()  # not timed: actor start-up is not what is measured
            try:
                with tempfile.TemporaryDirectory() as td:
                    started = time.perf_counter()
                    async with DockerClient(host) as docker:
                        record = await RunImages(docker, {i.image for i in insts}).prepare()
                    report = await grade_predictions(insts, preds, td, pool, concurrency=workers)
                    took = time.perf_counter() - started
            finally:
                await pool.aclose()
            assert report["resolved_instances"] == len(insts), report
            if cond == "cold":
                assert len(record.pulled) == len({i.image for i in insts}), record
            rates.append(len(insts) / took * 60)
        out[cond] = {"per_min": med(rates), "samples": rates}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per figure (median; default 3)")
    ap.add_argument("--copies", type=int, default=2, help="copies of each example (default 2)")
    add_json_flag(ap)
    args = ap.parse_args()

    main_host = resolve_docker_host()
    examples = load_example_instances()
    reg = LocalRegistry(free_port(), Path(tempfile.mkdtemp(prefix="atlas-bench-registry-")))
    reg.start()
    bench_host = ""
    try:
        anyio.run(push_examples, main_host, reg.host, examples)
        up = subprocess.run(
            [str(ROOT / "scripts" / "docker-up")],
            env={**os.environ, **BENCH_ENV},
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        bench_host = up.stdout.strip().splitlines()[-1]
        pulled = [
            i.model_copy(update={"image": f"{reg.host}/atlas-bench/{i.instance_id.lower()}:1"})
            for i in examples
        ]
        figures: dict[str, Any] = {"runs": args.runs, "command": " ".join(sys.argv)}
        print(f"registry {reg.host}; bench engine {bench_host}; {args.runs} runs per figure")
        fv = anyio.run(bench_first_verdict, bench_host, pulled[0], args.runs)
        figures["first_verdict"] = fv
        print(
            f"first verdict ({pulled[0].instance_id}): pulled {fv['first_verdict_pulled_s']:.2f} s,"
            f" present {fv['first_verdict_present_s']:.2f} s -> pull overhead "
            f"{fv['pull_overhead_s']:.2f} s (pull alone {fv['pull_alone_s']:.2f} s)"
        )
        from atlas_actors.actors.engine import RayRuntime
        from atlas_actors.config import EngineConfig

        runtime = RayRuntime(EngineConfig(workers=2))
        runtime.start()
        try:
            many = [
                i.model_copy(update={"instance_id": f"{i.instance_id}-{c}"})
                for c in range(args.copies)
                for i in pulled
            ]
            figures["instances"] = len(many)
            for workers in (1, 2):
                tp = anyio.run(bench_throughput, bench_host, many, args.runs, workers)
                figures[f"actors_{workers}"] = tp
                print(
                    f"{workers} actor(s), {len(many)} instances: cold (pulled) "
                    f"{tp['cold']['per_min']:.1f}/min, warm (present) "
                    f"{tp['warm']['per_min']:.1f}/min"
                )
        finally:
            runtime.shutdown()
        print_table(
            ["actors", "instances", "cold (pulled) /min", "warm (present) /min"],
            [
                [
                    str(w),
                    str(len(many)),
                    f"{figures[f'actors_{w}']['cold']['per_min']:.1f}",
                    f"{figures[f'actors_{w}']['warm']['per_min']:.1f}",
                ]
                for w in (1, 2)
            ],
            title=f"graded instances per minute (median of {args.runs} runs)",
        )
        write_json(args.json, figures)
    finally:
        reg.stop()
        if bench_host:
            anyio.run(clear, bench_host)  # leave the bench engine's data-root empty
            pidfile = Path("/run") / (Path(BENCH_ENV["ATLAS_DOCKER_SOCK"]).stem + ".pid")
            if pidfile.exists():
                subprocess.run(["kill", pidfile.read_text().strip()], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
