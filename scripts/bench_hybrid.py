#!/usr/bin/env python
"""What the hybrid ARC proposer costs: the offline DSL search and ``--proposer hybrid``
run side by side on the same tasks, the hybrid's LLM a loopback server that answers
after ``--latency`` seconds with a program that only copies its input (a model that
helps nowhere). So the figures are the price of the hybrid, not its gain: the tasks the
DSL solves with and without the LLM beside it, the LLM calls spent, and how many tasks
cost none (solved by the DSL's first population).

    python scripts/held_out_tasks.py /tmp/held-out
    python scripts/bench_hybrid.py --tasks /tmp/held-out --time-limit 5 --latency 2

Both arms run at once as ``atlas-actors arc --no-ray`` processes (one core each), with
no memory, the same seed and time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchkit import add_json_flag, print_table, write_json

from atlas_actors.llm.testing import FakeLLMServer

COPY = "```python\ndef transform(grid):\n    return [list(row) for row in grid]\n```"


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=Path, required=True, help="a folder of ARC JSON tasks")
    ap.add_argument("--limit", type=int, help="only the first N tasks (in id order)")
    ap.add_argument("--time-limit", type=float, default=5.0, help="seconds per task (default: 5)")
    ap.add_argument(
        "--latency", type=float, default=2.0, help="seconds the LLM takes per answer (default: 2)"
    )
    ap.add_argument("--out", type=Path, help="folder for the two runs (default: a temporary one)")
    add_json_flag(ap)
    return ap.parse_args()


async def run_arm(argv: list[str], log: Path) -> float:
    start = time.monotonic()
    with log.open("w") as f:
        proc = await asyncio.create_subprocess_exec(*argv, stdout=f, stderr=f)
        code = await proc.wait()
    if code != 0:
        sys.exit(f"{' '.join(argv)} failed with exit code {code}; see {log}")
    return time.monotonic() - start


def results(out: Path) -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in (out / "results.jsonl").read_text().splitlines())
    return {r["task_id"]: r for r in rows}


async def main() -> None:
    args = parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="bench-hybrid-"))
    root.mkdir(parents=True, exist_ok=True)
    base = [
        sys.executable, "-m", "atlas_actors.cli", "arc", "--no-ray", "--tasks", str(args.tasks),
        "--time-limit", str(args.time_limit), "--seed", "0", "--quiet", "--no-memory",
    ]  # fmt: skip
    if args.limit:
        base += ["--limit", str(args.limit)]
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    async with FakeLLMServer(lambda _req: COPY, latency=args.latency, record=False) as server:
        offline, hybrid = root / "offline", root / "hybrid"
        walls = await asyncio.gather(
            run_arm([*base, "--out", str(offline)], root / "offline.log"),
            run_arm(
                [*base, "--out", str(hybrid), "--proposer", "hybrid",
                 "--llm-base-url", server.base_url, "--max-concurrency", "16"],
                root / "hybrid.log",
            ),
        )  # fmt: skip
    a, b = results(offline), results(hybrid)
    calls = {t: int((r.get("usage") or {}).get("calls", 0)) for t, r in b.items()}
    solved_a = {t for t, r in a.items() if r["solved"]}
    solved_b = {t for t, r in b.items() if r["solved"]}
    rows = []
    for name, res, solved, wall in (
        ("offline", a, solved_a, walls[0]),
        ("hybrid", b, solved_b, walls[1]),
    ):
        secs = [r["seconds"] for r in res.values()]
        # the tasks that ran to the limit: how long, and how much the DSL did in them
        limit = [r for r in res.values() if r["stopped"] == "time"]
        ran = sorted(r["seconds"] for r in limit)
        ops = [r["stats"].get("op_applications", 0) for r in limit]
        rows.append(
            [
                name,
                f"{len(solved)} / {len(res)}",
                f"{statistics.median(secs):.2f}",
                len(limit),
                f"{statistics.median(ran):.2f}" if ran else "-",
                f"{ran[int(0.9 * (len(ran) - 1))]:.2f}" if ran else "-",
                f"{statistics.median(ops):,.0f}" if ops else "-",
                f"{wall:.0f}",
            ]
        )
    print_table(
        [
            "arm",
            "solved",
            "median s/task",
            "ran to the limit",
            "their median s",
            "p90 s",
            "their DSL ops (median)",
            "wall s",
        ],
        rows,
        title=f"ARC, {args.tasks}: {args.time_limit:g} s a task, LLM latency {args.latency:g} s",
    )
    free = {t for t in b if calls[t] == 0}
    paid = sorted(calls[t] for t in b if calls[t] > 0)
    print(
        f"\nhybrid LLM calls: {sum(paid)} in all; {len(free)} of {len(b)} tasks made none "
        f"({len(free & solved_b)} of them solved); the other {len(paid)}: median "
        f"{statistics.median(paid) if paid else 0:g} calls, max {max(paid) if paid else 0}"
    )
    print(
        f"solved by one arm only: offline {sorted(solved_a - solved_b)}, "
        f"hybrid {sorted(solved_b - solved_a)}"
    )
    write_json(
        args.json,
        {
            "tasks": str(args.tasks),
            "time_limit": args.time_limit,
            "latency": args.latency,
            "solved": {"offline": sorted(solved_a), "hybrid": sorted(solved_b)},
            "llm_calls": calls,
            "wall_seconds": {"offline": walls[0], "hybrid": walls[1]},
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
