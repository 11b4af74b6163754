#!/usr/bin/env python
"""Query time of the experience store with thousands of stored ARC experiences.

    .venv/bin/python scripts/bench_memory_query.py              # 5,000 experiences
    .venv/bin/python scripts/bench_memory_query.py --n 20000 --queries 50

Stores ``--n`` solved ARC experiences in a fresh SQLite file: the 400 ARC-AGI-1 training
tasks, then re-coloured copies of them (every copy a distinct task with its own grids,
fingerprint and features), each with a small DSL program. Then, like a new run would:
opens the file again and times ``query_sync(task, k=5)`` for tasks that are not stored
(a re-coloured copy under a colour permutation not used), the first query (cold: parses
and prepares every stored row) and ``--queries`` more (warm), as wall and CPU time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from benchkit import add_json_flag, print_table, write_json

from atlas_actors.arc.environment import dataset_task_ids, load_arc_task
from atlas_actors.memory import MemorySystem
from atlas_actors.types import Experience, Outcome, Task


def recoloured(tid: str, seed: int) -> Task:
    """Training task ``tid`` with its colours 1-9 permuted by ``seed`` (0: unchanged)."""
    data = load_arc_task(Task(id=tid, domain="arc", context={"arc_task_id": tid}))
    perm = np.arange(10)
    if seed:
        perm[1:] = np.random.default_rng(seed).permutation(np.arange(1, 10))
    grids = {
        "train": [{"input": perm[i].tolist(), "output": perm[o].tolist()} for i, o in data.train],
        "test": [{"input": perm[i].tolist()} for i in data.test_inputs],
    }
    return Task(id=f"{tid}-c{seed}", domain="arc", context={"grids": grids})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="experiences stored")
    ap.add_argument("--queries", type=int, default=20, help="warm queries timed")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the store file")
    add_json_flag(ap)
    args = ap.parse_args()

    ids = dataset_task_ids("arc", "train")
    folder = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    path = folder / "memory.sqlite3"
    t0 = time.perf_counter()
    with MemorySystem(path) as memory:
        batch: list[Experience] = []
        for n in range(args.n):
            task = recoloured(ids[n % len(ids)], n // len(ids))
            batch.append(
                Experience(
                    task=task,
                    solution=["recolor", ["rot90", "x"], [[1, 2]]],
                    outcome=Outcome(success=n % 3 != 0, partial_score=1.0),
                    evaluations=100 + n % 50,
                )
            )
            if len(batch) == 500:
                memory.record_many_sync(batch)
                batch = []
        memory.record_many_sync(batch)
    stored_s = time.perf_counter() - t0
    size_mb = path.stat().st_size / 1e6

    queries = [recoloured(ids[(7 * q) % len(ids)], 10_000 + q) for q in range(args.queries + 1)]
    with MemorySystem(path) as memory:
        count = len(memory)
        w, c = time.perf_counter(), time.process_time()
        memory.query_sync(queries[0], k=args.k)
        cold = (time.perf_counter() - w, time.process_time() - c)
        warm: list[tuple[float, float]] = []
        for q in queries[1:]:
            w, c = time.perf_counter(), time.process_time()
            found = memory.query_sync(q, k=args.k)
            warm.append((time.perf_counter() - w, time.process_time() - c))
        best = found[0][1] if found else 0.0
    if not args.keep:
        shutil.rmtree(folder)
    warm_wall = statistics.median(x[0] for x in warm)
    warm_cpu = statistics.median(x[1] for x in warm)
    print_table(
        ["query", "wall ms", "CPU ms"],
        [
            ["cold (the first in a process)", f"{cold[0] * 1000:.0f}", f"{cold[1] * 1000:.0f}"],
            [f"warm (median of {len(warm)})", f"{warm_wall * 1000:.1f}", f"{warm_cpu * 1000:.1f}"],
        ],
        title=f"stored {count} ARC experiences in {stored_s:.1f} s ({size_mb:.1f} MB); "
        f"last query's best similarity {best:.2f}",
    )
    write_json(
        args.json,
        {
            "experiences": count,
            "store_seconds": stored_s,
            "store_mb": size_mb,
            "cold": {"wall_s": cold[0], "cpu_s": cold[1]},
            "warm": {"wall_s": warm_wall, "cpu_s": warm_cpu, "queries": len(warm)},
            "best_similarity": best,
        },
    )


if __name__ == "__main__":
    main()
