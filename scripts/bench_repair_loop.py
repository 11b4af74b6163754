#!/usr/bin/env python
"""Benchmark offline repair's fault localisation and fast candidate loop on the example
instances (medians of several runs).

    export DOCKER_HOST=$(scripts/docker-up)
    scripts/build-base-image && scripts/build-swe-examples
    python scripts/bench_repair_loop.py [--examples textkit exprcalc] [--runs 3]
        [--backend docker|bubblewrap] [--sizes 1 16 64] [--verify 5] [--json out.json]
        [--root tests/data/runtime]

``--root`` takes the instances from another folder in the examples' format: the test
instance ``measures`` in ``tests/data/runtime`` has a ``conftest.py`` that imports the
package, so every mutant changes code the prepared session imported (build its image
first: ``python -m atlas_actors.swe.build build-examples --root tests/data/runtime``).

Per example it prints:
  1. fault-localisation seconds (a fresh cache each run: coverage run + plain run) and the
     rank of the gold patch's line;
  2. candidate evaluations per second through ``BatchEvaluator.evaluate`` for each batch
     size, wall clock for the whole call (exec, worker start-up, every candidate), and per
     CPU-second spent in the workspace (every process of the execs: git, the worker's
     start-up, the test processes): what one dedicated core sustains, whatever else the
     machine runs;
  3. one full ``SWEEnvironment.verify`` per candidate for comparison (evaluations/s).

The candidates are single-token mutants of the ten most suspicious lines (comparison,
arithmetic and boolean operator swaps, constants off by one): like a repair search's,
most fail their first test, a few pass. The containers have one CPU (the default limits).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import EXAMPLES_DIR, SWEInstance, load_example_instances
from atlas_actors.swe.repair.batch import BatchEvaluator
from atlas_actors.swe.repair.localize import Localization, LocalizationCache, localize

SWAPS = [
    ("<=", "<"), ("<", "<="), (">=", ">"), (">", ">="), ("==", "!="), ("!=", "=="),
    (" and ", " or "), (" or ", " and "), (" + ", " - "), (" - ", " + "), (" * ", " / "),
    (" / ", " * "), ("/=", "*="), ("+ 1", "+ 2"), ("- 1", ""), ("0", "1"), ("1", "0"),
    ("4", "3"), ("not ", ""), ("if ", "if not "), ("return ", "return not "),
]  # fmt: skip


def mutants(inst: SWEInstance, loc: Localization, lines: int = 10) -> list[dict[str, str]]:
    """Distinct single-swap mutants of the ``lines`` most suspicious lines."""
    assert inst.local_repo
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for sus in loc.lines[:lines]:
        text = (Path(inst.local_repo) / sus.path).read_text()
        rows = text.splitlines(keepends=True)
        row = rows[sus.line - 1]
        for old, new in SWAPS:
            if old in row:
                changed = [*rows[: sus.line - 1], row.replace(old, new, 1), *rows[sus.line :]]
                body = "".join(changed)
                if body != text and body not in seen:
                    seen.add(body)
                    out.append({sus.path: body})
    return out


def diff_for(inst: SWEInstance, files: dict[str, str]) -> str:
    """A candidate as a git diff against the base commit (for verify)."""
    assert inst.local_repo
    with tempfile.TemporaryDirectory() as td:
        subprocess.run(["git", "clone", "-q", inst.local_repo, td], check=True, timeout=60)
        for rel, text in files.items():
            (Path(td) / rel).write_text(text)
        out = subprocess.run(
            ["git", "-C", td, "diff", inst.base_commit],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
    return out.stdout


def gold_rank(inst: SWEInstance, loc: Localization) -> int | None:
    path = ""
    removed: set[tuple[str, int]] = set()
    line = 0
    for text in inst.patch.splitlines():
        if text.startswith("--- a/"):
            path = text[6:]
        elif text.startswith("@@ -"):
            line = int(text[4:].split(",")[0].split(" ")[0])
        elif text.startswith("-") and not text.startswith("---"):
            removed.add((path, line))
            line += 1
        elif not text.startswith(("+", "diff", "index")):
            line += 1
    for i, sus in enumerate(loc.lines, 1):
        if (sus.path, sus.line) in removed:
            return i
    return None


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


async def bench_example(name: str, inst: SWEInstance, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"example": name}
    async with SWEEnvironment(backend=args.backend) as env:
        await env.reset(inst.to_task())
        fl_times: list[float] = []
        fl_cpu: list[float] = []
        loc: Localization | None = None
        for _ in range(args.runs):
            t = time.perf_counter()
            loc = await localize(env, cache=LocalizationCache())
            fl_times.append(time.perf_counter() - t)
            fl_cpu.append(loc.cpu_seconds)
        assert loc is not None
        row["fl_seconds"] = med(fl_times)
        row["fl_cpu_seconds"] = med(fl_cpu)
        row["fl_runs"] = fl_times
        row["gold_rank"] = gold_rank(inst, loc)
        pool = await anyio.to_thread.run_sync(mutants, inst, loc)
        row["mutants"] = len(pool)
        print(
            f"{name}: fault localisation {med(fl_times):.2f} s, {med(fl_cpu):.2f} CPU-s "
            f"(median of {args.runs}; runs {', '.join(f'{x:.2f}' for x in fl_times)}), "
            "gold line at rank "
            f"{row['gold_rank']}, {len(pool)} distinct mutants",
            flush=True,
        )
        ev = BatchEvaluator()
        row["batch"] = {}
        for size in args.sizes:
            cands = [pool[i % len(pool)] for i in range(size)]
            calls = max(1, args.min_evals // size)
            walls, cpus, passed = [], [], 0
            modes: Counter[str] = Counter()
            for _ in range(args.runs):
                t = time.perf_counter()
                cpu = 0.0
                for _ in range(calls):
                    results = await ev.evaluate(env, None, cands, baseline=loc)
                    cpu += ev.stats.cpu_seconds
                    passed = sum(r.passed for r in results)
                    modes.update(r.mode for r in results)
                walls.append(size * calls / (time.perf_counter() - t))
                cpus.append(size * calls / cpu if cpu else float("nan"))
            row["batch"][size] = {
                "evals_per_s": med(walls),
                "evals_per_cpu_s": med(cpus),
                "runs_evals_per_s": walls,
                "modes": dict(modes),
            }
            print(
                f"  batch {size:3d}: {med(walls):6.1f} evals/s wall, {med(cpus):6.1f} per "
                f"CPU-second (median of {args.runs}; {calls} call(s) of {size} per run; "
                f"{passed}/{size} passed; ran as "
                + ", ".join(f"{m} {n}" for m, n in modes.most_common())
                + ")",
                flush=True,
            )
        verify_times: list[float] = []
        diffs = [await anyio.to_thread.run_sync(diff_for, inst, c) for c in pool[: args.verify]]
        for _ in range(args.runs):
            for d in diffs:
                t = time.perf_counter()
                await env.verify(d)
                verify_times.append(time.perf_counter() - t)
        row["verify_evals_per_s"] = 1 / med(verify_times) if verify_times else None
        if verify_times:
            print(
                f"  full verify: {1 / med(verify_times):6.2f} evals/s "
                f"(median {med(verify_times):.2f} s of {len(verify_times)})",
                flush=True,
            )
    return row


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--examples", nargs="*", default=None, help="default: all four")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1, 16, 64])
    ap.add_argument("--min-evals", type=int, default=4, help="evaluations per run at size 1")
    ap.add_argument("--verify", type=int, default=5, help="full verifies per run")
    ap.add_argument("--backend", choices=["docker", "bubblewrap"], default="docker")
    add_json_flag(ap)
    ap.add_argument(
        "--root", type=Path, default=EXAMPLES_DIR, help="instances folder (default: examples)"
    )
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    rows = []
    instances = await anyio.to_thread.run_sync(
        lambda: load_example_instances(args.examples, root=args.root)
    )
    for inst in instances:
        rows.append(await bench_example(inst.repo.split("/")[-1], inst, args))
    print_table(
        ["example", "FL s", "FL CPU s", "gold rank", "mutants"]
        + [f"batch {n} evals/CPU-s" for n in args.sizes]
        + ["full verifies/s"],
        [
            [
                r["example"],
                f"{r['fl_seconds']:.2f}",
                f"{r['fl_cpu_seconds']:.2f}",
                r["gold_rank"],
                r["mutants"],
                *(f"{r['batch'][n]['evals_per_cpu_s']:.1f}" for n in args.sizes),
                f"{r['verify_evals_per_s']:.2f}" if r["verify_evals_per_s"] else None,
            ]
            for r in rows
        ],
        title=f"offline repair's fast screen (medians of {args.runs} runs)",
    )
    await anyio.to_thread.run_sync(write_json, args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
