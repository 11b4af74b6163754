#!/usr/bin/env python
"""ARC benchmark: tasks solved (pass@2) on the evaluation splits at a fixed time per task.

    .venv/bin/python scripts/bench_arc.py              # ARC-AGI-1 eval (400) + ARC-AGI-2 eval (120)
    .venv/bin/python scripts/bench_arc.py --quick      # first 50 and first 20 of those
    .venv/bin/python scripts/bench_arc.py --workers 1  # one environment actor (one core)
    .venv/bin/python scripts/bench_arc.py --processes 2  # task-parallel: 2 in-process shards
    .venv/bin/python scripts/bench_arc.py --proposer hybrid --llm-base-url URL --model NAME
                                                       # other options go to atlas-actors arc

Runs through the actor engine (local Ray) unless --no-ray. Each split's results go to
OUT/<dataset>-<split>/ (results.jsonl, submission.json, summary.json) and the run can be
resumed with --resume. Prints, per split: tasks solved (pass@2, every test input right),
median and p90 seconds per task, candidate evaluations per second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchkit import add_json_flag, print_table, write_json

from atlas_actors.arc.environment import dataset_task_ids
from atlas_actors.cli import main as cli_main
from atlas_actors.cli import summarize
from atlas_actors.types import TaskResult

SPLITS = [
    ("arc", "eval", 400, 50, "ARC-AGI-1 eval"),
    ("kaggle2025", "eval", 120, 20, "ARC-AGI-2 eval"),
]


def run_shards(args: argparse.Namespace, argv: list[str], ids: list[str], out: Path) -> dict:
    """Solve ``ids`` in ``args.processes`` concurrent in-process CLI runs; merged summary."""
    start = time.monotonic()
    procs = []
    for i in range(args.processes):
        shard = ids[i :: args.processes]
        shard_out = out / f"shard-{i}"
        own = [a for a in argv if a not in ("--quiet", "--resume", "--no-ray")]
        cmd = [sys.executable, "-m", "atlas_actors.cli", *own, "--no-ray"]
        cmd[cmd.index("--out") + 1] = str(shard_out)
        cmd += ["--ids", ",".join(shard), "--quiet"]
        if (shard_out / "results.jsonl").exists() and "--resume" not in cmd:
            cmd.append("--resume")
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL))
    if any(p.wait() != 0 for p in procs):
        raise SystemExit("a shard failed")
    results = []
    for i in range(args.processes):
        lines = (out / f"shard-{i}" / "results.jsonl").read_text().splitlines()
        results += [TaskResult.model_validate_json(line) for line in lines]
    summary = summarize(results, time.monotonic() - start)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary))
    return summary


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="a fixed subset for day-to-day work")
    p.add_argument("--time-limit", type=float, default=15.0, help="seconds per task (default 15)")
    p.add_argument("--workers", type=int, help="environment actors (default: one per core)")
    p.add_argument("--no-ray", action="store_true", help="in process, one task at a time")
    p.add_argument(
        "--processes",
        type=int,
        help="task-parallel: split the tasks into N shards, each solved in its own process "
        "(in process, no Ray), one task at a time per shard",
    )
    p.add_argument("--only", choices=["arc", "kaggle2025"], help="run one dataset only")
    p.add_argument("--out", default="runs/bench-arc", help="output folder")
    p.add_argument("--resume", action="store_true", help="continue an interrupted benchmark")
    p.add_argument("--seed", type=int, default=0)
    add_json_flag(p)
    args, extra = p.parse_known_args()  # the rest go to ``atlas-actors arc``

    rows = []
    for dataset, split, full, quick, label in SPLITS:
        if args.only and dataset != args.only:
            continue
        limit = quick if args.quick else full
        out = Path(args.out) / f"{dataset}-{split}{'-quick' if args.quick else ''}"
        argv = [
            "arc",
            "--dataset",
            dataset,
            "--split",
            split,
            "--limit",
            str(limit),
            "--time-limit",
            str(args.time_limit),
            "--seed",
            str(args.seed),
            "--out",
            str(out),
            "--quiet",
            "--no-memory",  # each task searched cold: a benchmark measures the search
        ]
        argv += extra
        if args.workers:
            argv += ["--workers", str(args.workers)]
        if args.no_ray:
            argv.append("--no-ray")
        if args.resume and (out / "results.jsonl").exists():
            argv.append("--resume")
        start = time.monotonic()
        if args.processes:
            ids = dataset_task_ids(dataset, split)[:limit]
            s = run_shards(args, argv, ids, out)
        else:
            code = cli_main(argv)
            if code != 0:
                return code
            s = json.loads((out / "summary.json").read_text())
        s["label"], s["wall"] = label, time.monotonic() - start
        rows.append(s)

    table = []
    for s in rows:
        pct = 100 * s["solved"] / max(1, s["verifiable"])
        table.append(
            [
                s["label"],
                f"{s['solved']} / {s['verifiable']} ({pct:.1f}%)",
                f"{s['median_seconds']:.2f}",
                f"{s['p90_seconds']:.2f}",
                f"{s['evaluations_per_second']:.0f}",
                f"{s['wall']:.0f}",
            ]
        )
    print_table(["split", "solved (pass@2)", "median s", "p90 s", "evals/s", "wall s"], table)
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
