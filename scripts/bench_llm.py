#!/usr/bin/env python
"""Benchmark the async LLM client against the fake OpenAI-compatible server.

The server (``atlas_actors.llm.testing``) runs in its own process on 127.0.0.1 and
answers every request after a fixed latency L, so with C requests in flight the best
possible rate is C / L. This measures, for each scenario, the rate the client
achieves as a fraction of C / L, whether every request completed, the client
process's CPU time per request (the server's CPU is not counted) and the request
rate one core could sustain at that cost. Medians over ``--runs`` runs. It also prints
the server process's CPU per request, the share of a core the client used, and the
machine's load average: on a shared machine the achieved rate is bounded by the CPU
the two processes get, not by the client's design.

    python scripts/bench_llm.py                       # C=64, L=200 ms, 2,000 requests
    python scripts/bench_llm.py --runs 5 --c1000      # add C=1000 in flight (L=1 s)
    python scripts/bench_llm.py --backends direct     # only the default path
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from benchkit import add_json_flag, print_table, write_json

from atlas_actors.config import LLMConfig
from atlas_actors.llm.client import LLMClient


@dataclass
class Scenario:
    name: str
    concurrency: int
    latency: float
    requests: int
    rate_429: float = 0.0
    retry_after: float = 0.1
    backend: str = "direct"


@dataclass
class RunResult:
    seconds: float
    completed: int
    failed: int
    cpu_s: float
    retries: int
    server: dict[str, Any]
    server_cpu_s: float
    load: float


async def _start_server(s: Scenario) -> tuple[Process, str, TextReceiveStream]:
    cmd = [
        sys.executable,
        "-m",
        "atlas_actors.llm.testing",
        "--latency",
        str(s.latency),
        "--rate-429",
        str(s.rate_429),
        "--retry-after",
        str(s.retry_after),
        "--exit-on-eof",  # dies with this process even if it is killed
    ]
    proc = await anyio.open_process(cmd)
    assert proc.stdout is not None
    lines = TextReceiveStream(proc.stdout)
    buf = ""
    with anyio.fail_after(30):
        while "\n" not in buf:
            buf += await lines.receive()
    first, _ = buf.split("\n", 1)
    if not first.startswith("READY "):
        raise RuntimeError(f"server did not start: {first!r}")
    return proc, first.split(" ", 1)[1].strip(), lines


async def _stop_server(proc: Process, lines: TextReceiveStream) -> dict[str, Any]:
    proc.terminate()
    out = ""
    with anyio.move_on_after(10):
        async for chunk in lines:
            out += chunk
    await proc.wait()
    for line in out.splitlines():
        if line.startswith("STATS "):
            stats: dict[str, Any] = json.loads(line[6:])
            return stats
    return {}


async def run_once(s: Scenario) -> RunResult:
    load = os.getloadavg()[0]
    proc, url, lines = await _start_server(s)
    try:
        cfg = LLMConfig(
            base_url=url,
            api_key_env=None,
            max_concurrency=s.concurrency,
            max_retries=20,
            timeout_s=60.0,
            http_backend=s.backend,
        )
        failed = 0
        async with LLMClient(cfg) as client:
            messages = [{"role": "user", "content": "benchmark request"}]

            async def one(i: int) -> None:
                nonlocal failed
                try:
                    await client.complete(messages, sample_index=i)
                except Exception:
                    failed += 1

            cpu0, t0 = time.process_time(), time.perf_counter()
            async with anyio.create_task_group() as tg:
                for i in range(s.requests):
                    tg.start_soon(one, i)
            seconds = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            usage = client.usage
    finally:
        with anyio.CancelScope(shield=True):
            stats = await _stop_server(proc, lines)
    server_cpu = float(stats.get("cpu_s", 0.0))
    return RunResult(seconds, usage.calls, failed, cpu, usage.retries, stats, server_cpu, load)


async def bench(scenarios: list[Scenario], runs: int) -> list[dict[str, Any]]:
    # Interleaved (run 1 of every scenario, then run 2, ...) so that scenarios compared
    # side by side see the same background load on a shared machine.
    by_scenario: list[list[RunResult]] = [[] for _ in scenarios]
    for k in range(runs):
        for i, s in enumerate(scenarios):
            by_scenario[i].append(await run_once(s))
            print(f"# run {k + 1}/{runs} {s.name} {s.backend} done", file=sys.stderr, flush=True)
    rows: list[dict[str, Any]] = []
    for s, results in zip(scenarios, by_scenario, strict=True):
        limit = s.concurrency / s.latency
        rate = statistics.median(r.completed / r.seconds for r in results)
        cpu_ms = statistics.median(1000 * r.cpu_s / s.requests for r in results)
        row = {
            "scenario": s.name,
            "backend": s.backend,
            "C": s.concurrency,
            "L_ms": round(1000 * s.latency),
            "requests": s.requests,
            "req_per_s": round(rate, 1),
            "limit_C_over_L": round(limit, 1),
            "fraction": round(rate / limit, 3),
            "completed_all": all(r.completed == s.requests and r.failed == 0 for r in results),
            "retries": statistics.median(r.retries for r in results),
            "server_429s": statistics.median(
                int(r.server.get("statuses", {}).get("429", 0)) for r in results
            ),
            "server_max_in_flight": max(int(r.server.get("max_in_flight", 0)) for r in results),
            "client_cpu_ms_per_req": round(cpu_ms, 3),
            "max_req_per_s_per_core": round(1000 / cpu_ms) if cpu_ms > 0 else None,
            "client_cpu_share": round(statistics.median(r.cpu_s / r.seconds for r in results), 2),
            "server_cpu_ms_per_req": round(
                statistics.median(1000 * r.server_cpu_s / s.requests for r in results), 3
            ),
            "load_avg_1m": round(statistics.median(r.load for r in results), 1),
            "runs": runs,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


COLUMNS = (
    "scenario",
    "backend",
    "C",
    "L_ms",
    "requests",
    "req_per_s",
    "limit_C_over_L",
    "fraction",
    "completed_all",
    "retries",
    "server_max_in_flight",
    "client_cpu_ms_per_req",
    "max_req_per_s_per_core",
    "client_cpu_share",
    "server_cpu_ms_per_req",
    "load_avg_1m",
)
"""The figures of a scenario the table shows (the JSON output has them all)."""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="runs per scenario (medians printed)")
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    p.add_argument("--rate-429", type=float, default=0.1)
    p.add_argument("--retry-after", type=float, default=0.1)
    p.add_argument("--c1000", action="store_true", help="also run C=1000 in flight")
    p.add_argument(
        "--slow-latency",
        type=float,
        default=1.0,
        help="also run C requests at this latency (10*C requests; 0: skip)",
    )
    p.add_argument("--c1000-latency", type=float, default=1.0)
    p.add_argument("--c1000-requests", type=int, default=5000)
    p.add_argument(
        "--backends",
        default="direct,aiohttp",
        help="HTTP paths to compare (http_backend: direct, aiohttp, httpx)",
    )
    add_json_flag(p)
    args = p.parse_args()
    c, lat, n = args.concurrency, args.latency, args.requests
    scenarios: list[Scenario] = []
    for backend in args.backends.split(","):
        scenarios += [
            Scenario(f"C={c} no faults", c, lat, n, backend=backend),
            Scenario(
                f"C={c} {args.rate_429:.0%} 429",
                c,
                lat,
                n,
                rate_429=args.rate_429,
                retry_after=args.retry_after,
                backend=backend,
            ),
        ]
        if args.slow_latency:
            # same C, a latency at which CPU is not the limit on a busy machine
            slow = args.slow_latency
            scenarios.append(
                Scenario(f"C={c} L={slow:g}s", c, slow, max(c * 10, 1), backend=backend)
            )
        if args.c1000:
            scenarios.append(
                Scenario(
                    "C=1000 no faults",
                    1000,
                    args.c1000_latency,
                    args.c1000_requests,
                    backend=backend,
                )
            )
    rows = anyio.run(bench, scenarios, args.runs)
    print_table(COLUMNS, [[str(r[name]) for name in COLUMNS] for r in rows])
    write_json(args.json, rows)


if __name__ == "__main__":
    main()
