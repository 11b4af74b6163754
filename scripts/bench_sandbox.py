#!/usr/bin/env python3
"""Benchmark: ARC program executions per second, three ways, in one run.

A "program execution" (job) = apply one program's ``transform`` to 4 grids of 10x10
(like an ARC task's train inputs). Every job gets a *distinct* source (a counter comment),
as in a search where every candidate is a new program, so no compile cache helps.

* ``exec``      - plain in-process ``compile`` + ``exec`` + 4 calls: the unsafe upper bound.
* ``runner``    - :class:`ProgramRunner`: one sandboxed worker, a forked child per job.
* ``bwrap``     - a fresh :func:`run_in_bubblewrap_sync` (new sandbox + interpreter) per job.

Prints the median jobs/s of several repetitions and the ratios.

    python scripts/bench_sandbox.py [--reps 5] [--jobs 300] [--bwrap-jobs 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from benchkit import add_json_flag, print_table, write_json

from atlas_actors.sandbox import ProgramRunner, run_in_bubblewrap_sync

SOURCE = "def transform(grid):\n    return [row[::-1] for row in grid]\n"
GRIDS = [[[(r * 10 + c + k) % 10 for c in range(10)] for r in range(10)] for k in range(4)]
BWRAP_SCRIPT = """
import json, sys
src = open('/work/program.py').read()
ns = {}
exec(compile(src, '<program>', 'exec'), ns)
grids = json.load(open('/work/grids.json'))
print(json.dumps([ns['transform'](g) for g in grids]))
"""


def bench_exec(n: int) -> float:
    t = time.perf_counter()
    for i in range(n):
        ns: dict[str, object] = {}
        exec(compile(f"{SOURCE}# {i}\n", "<program>", "exec"), ns)
        fn = ns["transform"]
        out = [fn([list(row) for row in g]) for g in GRIDS]  # type: ignore[operator]
        assert out[0][0][0] == GRIDS[0][0][-1]
    return n / (time.perf_counter() - t)


def bench_runner(runner: ProgramRunner, n: int) -> float:
    t = time.perf_counter()
    for i in range(n):
        res = runner.run_sync(f"{SOURCE}# {i}\n", GRIDS)
        assert all(r.ok for r in res), res
    return n / (time.perf_counter() - t)


def bench_bwrap(work: Path, n: int) -> float:
    t = time.perf_counter()
    for i in range(n):
        (work / "program.py").write_text(f"{SOURCE}# {i}\n")
        res = run_in_bubblewrap_sync(work, work / "run.py", timeout_s=30)
        assert res.ok, res.stderr
        assert json.loads(res.stdout)[0][0][0] == GRIDS[0][0][-1]
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description="ARC program executions per second, three ways.")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (median is reported)")
    ap.add_argument("--jobs", type=int, default=300, help="jobs per repetition (exec, runner)")
    ap.add_argument("--bwrap-jobs", type=int, default=10, help="jobs per repetition (bwrap)")
    add_json_flag(ap)
    a = ap.parse_args()
    rates: dict[str, list[float]] = {"exec": [], "runner": [], "bwrap": []}
    with tempfile.TemporaryDirectory() as tmp, ProgramRunner(timeout_s=2.0) as runner:
        work = Path(tmp)
        (work / "run.py").write_text(BWRAP_SCRIPT)
        (work / "grids.json").write_text(json.dumps(GRIDS))
        runner.start()
        bench_runner(runner, 20)  # warm-up
        for _ in range(a.reps):  # interleaved, so load changes hit all three alike
            rates["exec"].append(bench_exec(a.jobs * 10))
            rates["runner"].append(bench_runner(runner, a.jobs))
            rates["bwrap"].append(bench_bwrap(work, a.bwrap_jobs))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print_table(
        ["mode", "jobs/s", "ms/job", "all repetitions (jobs/s)"],
        [
            [k, f"{v:.1f}", f"{1000 / v:.3f}", ", ".join(f"{x:.0f}" for x in rates[k])]
            for k, v in med.items()
        ],
        title=f"jobs of {len(GRIDS)} grids 10x10, median of {a.reps} repetitions",
    )
    print(f"exec / runner  = {med['exec'] / med['runner']:.1f}x  (goal <= 3x)")
    print(f"runner / bwrap = {med['runner'] / med['bwrap']:.1f}x  (goal >= 20x)")
    write_json(a.json, {"median_jobs_per_s": med, "repetitions": rates})


if __name__ == "__main__":
    main()
