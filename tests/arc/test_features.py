"""ARC's memory features: a repeat is 1, a re-coloured or turned copy close, an unrelated
task near 0; programs' ops count when both sides have one."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from atlas_actors.arc import features as F
from atlas_actors.arc.environment import dataset_task_ids, load_arc_task
from atlas_actors.memory import (
    MAX_FEATURE_SIMILARITY,
    MemorySystem,
    domain_features,
    similarity,
    task_features,
    task_fingerprint,
)
from atlas_actors.types import Task
from tests.helpers.memory import sim_of, solved

ARC_IDS = ["007bbfb7", "0d3d703e", "1cf80156", "3c9b0459", "6150a2bd", "a85d4709"]
"""Training tasks of different kinds: fractal tiling, colour mapping, crop, rotation..."""


def arc_task(tid: str, task_id: str | None = None) -> Task:
    return Task(id=task_id or tid, domain="arc", context={"arc_task_id": tid})


def arc_variant(tid: str, fn: Callable[[np.ndarray], np.ndarray], task_id: str) -> Task:
    """The task with every grid transformed by ``fn`` (inline grids, no test outputs)."""
    data = load_arc_task(arc_task(tid))
    grids = {
        "train": [{"input": fn(i).tolist(), "output": fn(o).tolist()} for i, o in data.train],
        "test": [{"input": fn(i).tolist()} for i in data.test_inputs],
    }
    return Task(id=task_id, domain="arc", context={"grids": grids})


def recolour(g: np.ndarray) -> np.ndarray:
    perm = np.array([0, 5, 8, 1, 9, 2, 7, 3, 6, 4])  # background stays 0, colours swap
    return perm[g]


def transpose(g: np.ndarray) -> np.ndarray:
    return g.T.copy()


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemorySystem]:
    with MemorySystem(tmp_path / "memory.sqlite3") as m:
        yield m


def test_arc_fingerprint_is_content_not_id_nor_test_outputs() -> None:
    by_id = arc_task("007bbfb7")
    data = load_arc_task(by_id)
    inline = {
        "train": [{"input": i.tolist(), "output": o.tolist()} for i, o in data.train],
        "test": [{"input": i.tolist()} for i in data.test_inputs],  # no test outputs
    }
    renamed = Task(id="somewhere-else", domain="arc", context={"grids": inline})
    assert task_fingerprint(by_id) == task_fingerprint(renamed)
    assert task_features(by_id) == task_features(renamed)
    assert task_fingerprint(by_id) != task_fingerprint(arc_task("0d3d703e"))
    assert task_fingerprint(by_id) != task_fingerprint(arc_variant("007bbfb7", recolour, "r"))


def test_arc_repeat_is_1_neighbour_lower_unrelated_near_0(memory: MemorySystem) -> None:
    tid = "007bbfb7"
    original = arc_task(tid)
    recoloured = arc_variant(tid, recolour, "recoloured")
    # 13x5 -> 6x5 (combine the two halves): transposed, the halves stand side by side
    split = arc_task("3428a4f5")
    transposed = arc_variant("3428a4f5", transpose, "transposed")
    others = [arc_task(t) for t in ARC_IDS if t != tid]
    memory.record_many_sync([solved(original), solved(split), *(solved(t) for t in others)])

    repeat = arc_task(tid, task_id="a-repeat-under-another-id")
    assert sim_of(memory, repeat, original) == 1.0
    assert memory.query_sync(repeat, k=1)[0][0].task.id == tid

    s_recoloured = sim_of(memory, recoloured, original)
    assert 0.8 < s_recoloured < MAX_FEATURE_SIMILARITY
    s_transposed = sim_of(memory, transposed, split)
    assert 0.5 < s_transposed < 0.9
    assert memory.query_sync(transposed, k=1)[0][0].task.id == split.id
    # the re-coloured copy's best match is its original, far ahead of the others
    (best, s_best), (_, s_second) = memory.query_sync(recoloured, k=2)
    assert best.task.id == tid and s_best == s_recoloured and s_second < s_best - 0.2

    for other in others:
        assert sim_of(memory, other, original) < 0.2, other.id


def test_arc_unrelated_training_tasks_are_near_0() -> None:
    ids = dataset_task_ids("arc", "train")
    rng = random.Random(7)
    sample = rng.sample(ids, 60)
    feats = {t: task_features(arc_task(t)) for t in sample}
    sims = [
        similarity("arc", feats[a], feats[b])
        for a, b in zip(sample[::2], sample[1::2], strict=True)
    ]
    assert statistics.median(sims) < 0.05
    assert sum(s < 0.3 for s in sims) >= 0.8 * len(sims)


def test_arc_features_describe_the_grids() -> None:
    f = task_features(arc_task("007bbfb7"))  # 3x3 -> 9x9 fractal, one colour
    assert {"up", "up:3x3", "larger", "out_fixed", "in_fixed"} <= set(f["shape"])
    assert f["pal_in"] == f["pal_out"] and f["added"] == [] and f["removed"] == []
    assert f["size"][:2] == [3.0, 3.0] and f["size"][2:] == [9.0, 9.0]
    crop = task_features(arc_task("1cf80156"))  # crop the object
    assert {"crop", "smaller"} <= set(crop["shape"])
    mapping = task_features(arc_task("0d3d703e"))  # colour mapping, same shape
    assert "same" in mapping["shape"] and mapping["change"][0] == 1.0  # every cell recoloured
    assert mapping["ncol"][:2] == [3.0, 3.0]
    assert f["v"] == domain_features("arc").tag


def test_arc_program_ops_count_when_both_sides_have_a_program(memory: MemorySystem) -> None:
    assert F.program_ops(["recolor", ["crop_object", "x", "largest", 4, 0, 0, 1], [[1, 2]]]) == [
        "crop_object",
        "recolor",
    ]
    assert F.program_ops({"program": ["rot90", "x"]}) == ["rot90"]
    assert F.program_ops("def transform(g):\n    return np.rot90(flip(g))\n") == [
        "py:flip",
        "py:rot90",
    ]
    a = task_features(arc_task("3c9b0459"), ["rot180", "x"])
    b_same = task_features(arc_variant("3c9b0459", transpose, "t"), ["rot180", "x"])
    b_other = task_features(arc_variant("3c9b0459", transpose, "t"), ["flip_h", ["flip_v", "x"]])
    assert a["ops"] == ["rot180"]
    assert similarity("arc", a, b_same) > similarity("arc", a, b_other)
    # a query (no program) is compared on the grids alone
    plain = task_features(arc_variant("3c9b0459", transpose, "t"))
    assert "ops" not in plain
    assert similarity("arc", plain, a) == similarity("arc", plain, {**a, "ops": ["other"]})


def test_a_task_without_features_is_still_found_as_a_repeat(memory: MemorySystem) -> None:
    broken = Task(id="broken", domain="arc", context={"arc_task_id": "ffffffff"})
    f = task_features(broken)
    assert "error" in f and "ffffffff" in f["error"]
    memory.record_sync(solved(broken))
    again = Task(id="broken-again", domain="arc", context={"arc_task_id": "ffffffff"})
    assert memory.query_sync(again, k=1)[0][1] == 1.0
    assert memory.query_sync(arc_task("007bbfb7"), k=1) == [
        (memory.get_sync(memory.query_sync(again, k=1)[0][0].id), 0.0)
    ]
