#!/usr/bin/env python
"""ARC benchmark: tasks solved (pass@2) on the evaluation splits at a fixed time per task.

    .venv/bin/python scripts/bench_arc.py              # ARC-AGI-1 eval (400) + ARC-AGI-2 eval (120)
    .venv/bin/python scripts/bench_arc.py --quick      # first 50 and first 20 of those
    .venv/bin/python scripts/bench_arc.py --workers 1  # one environment actor (one core)

Runs through the actor engine (local Ray) unless --no-ray. Each split's results go to
OUT/<dataset>-<split>/ (results.jsonl, submission.json, summary.json) and the run can be
resumed with --resume. Prints, per split: tasks solved (pass@2, every test input right),
median and p90 seconds per task, candidate evaluations per second.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from atlas_actors.cli import main as cli_main

SPLITS = [
    ("arc", "eval", 400, 50, "ARC-AGI-1 eval"),
    ("kaggle2025", "eval", 120, 20, "ARC-AGI-2 eval"),
]


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="a fixed subset for day-to-day work")
    p.add_argument("--time-limit", type=float, default=15.0, help="seconds per task (default 15)")
    p.add_argument("--workers", type=int, help="environment actors (default: one per core)")
    p.add_argument("--no-ray", action="store_true", help="in process, one task at a time")
    p.add_argument("--only", choices=["arc", "kaggle2025"], help="run one dataset only")
    p.add_argument("--out", default="runs/bench-arc", help="output folder")
    p.add_argument("--resume", action="store_true", help="continue an interrupted benchmark")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

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
        ]
        if args.workers:
            argv += ["--workers", str(args.workers)]
        if args.no_ray:
            argv.append("--no-ray")
        if args.resume and (out / "results.jsonl").exists():
            argv.append("--resume")
        start = time.monotonic()
        code = cli_main(argv)
        if code != 0:
            return code
        s = json.loads((out / "summary.json").read_text())
        s["label"], s["wall"] = label, time.monotonic() - start
        rows.append(s)

    print()
    head = f"{'split':<16} {'solved (pass@2)':>20} {'median s':>9} {'p90 s':>7}"
    print(f"{head} {'evals/s':>9} {'wall s':>8}")
    for s in rows:
        pct = 100 * s["solved"] / max(1, s["verifiable"])
        print(
            f"{s['label']:<16} {s['solved']:>5} / {s['verifiable']:<4} ({pct:5.1f}%) "
            f"{s['median_seconds']:>9.2f} {s['p90_seconds']:>7.2f} "
            f"{s['evaluations_per_second']:>9.0f} {s['wall']:>8.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
