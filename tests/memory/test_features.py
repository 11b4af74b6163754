"""Similarity features: a repeat is 1, a neighbour lower, an unrelated task near 0."""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from atlas_actors.arc.environment import dataset_task_ids, load_arc_task
from atlas_actors.memory import (
    MAX_FEATURE_SIMILARITY,
    MemorySystem,
    domain_features,
    register_features,
    similarity,
    task_features,
    task_fingerprint,
)
from atlas_actors.memory import features as F
from atlas_actors.swe.instances import EXAMPLES_DIR, example_names, parse_instance
from atlas_actors.types import Experience, Outcome, Task

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


def solved(task: Task, solution: Any = None) -> Experience:
    return Experience(task=task, solution=solution, outcome=Outcome(success=True, partial_score=1))


def sim_of(memory: MemorySystem, query: Task, stored: Task) -> float:
    """The similarity the store gives ``stored`` for ``query``."""
    for e, s in memory.query_sync(query, k=50):
        if e.task.id == stored.id:
            return s
    raise AssertionError(f"{stored.id} not returned")


# ------------------------------------------------------------------------------ ARC


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


# ------------------------------------------------------------------------------ SWE


def swe_task(name: str, **changes: Any) -> Task:
    data = json.loads((EXAMPLES_DIR / name / "instance.json").read_text())
    data.update(changes)
    return parse_instance(data).to_task()


def test_swe_repeat_neighbour_unrelated(memory: MemorySystem) -> None:
    names = example_names()
    assert set(names) >= {"datecalc", "exprcalc", "intervals", "textkit"}
    tasks = {n: swe_task(n) for n in names}
    memory.record_many_sync(
        [solved(t, solution=t.context["patch"]) for t in tasks.values()]  # remembered patches
    )
    date = tasks["datecalc"]

    repeat = swe_task("datecalc", instance_id="fork__datecalc-99")
    assert repeat.id != date.id and task_fingerprint(repeat) == task_fingerprint(date)
    assert sim_of(memory, repeat, date) == 1.0

    neighbour = swe_task(
        "datecalc",
        instance_id="atlas-examples__datecalc-2",
        base_commit="0123456789abcdef",
        problem_statement=(
            "days_in_month() gives 29 days for February of century years\n\n"
            "    >>> days_in_month(2100, 2)\n    29\n\n"
            "2100 is not a leap year, so February 2100 has 28 days.\n"
        ),
        FAIL_TO_PASS=["tests/test_calendar.py::test_february_2100_has_28_days"],
    )
    s_neighbour = sim_of(memory, neighbour, date)
    assert 0.4 < s_neighbour < MAX_FEATURE_SIMILARITY
    for name, other in tasks.items():
        if name != "datecalc":
            assert sim_of(memory, neighbour, other) < 0.15, name
            assert sim_of(memory, date, other) < 0.15, name
    assert memory.query_sync(neighbour, k=1)[0][0].task.id == date.id


def test_swe_features() -> None:
    calc = swe_task("exprcalc")
    f = task_features(calc)
    assert f["repo"] == "atlas-examples/exprcalc"
    assert set(f["exceptions"]) >= {"ZeroDivisionError", "CalcError"}
    assert "calc" in f["terms"] and "division" in f["terms"]
    # a task being solved sees neither its gold patch nor its (hidden) failing tests;
    # a remembered one sees both
    assert f["patch_files"] == [] and f["tests"] == [] and "parser" not in f["files"]
    hindsight = task_features(calc, hindsight=True)
    assert hindsight["patch_files"] == ["exprcalc/parser.py"]
    assert "exprcalc" in hindsight["files"] and "parser" in hindsight["files"]
    assert hindsight["tests"]
    remembered = task_features(calc, "diff --git a/x/y.py b/x/y.py\n+++ b/x/y.py\n")
    assert remembered["patch_files"] == ["x/y.py"]
    assert F.path_tokens(["tests/test_calendar.py", "datecalc/calendar.py"]) == [
        "calendar",
        "datecalc",
    ]


def test_sparse_swe_tasks_compare_on_what_they_have() -> None:
    def bare(description: str) -> dict[str, Any]:
        return task_features(Task(id="x", domain="swe", description=description))

    wrap = bare("wrap() breaks lines that fit exactly")
    assert similarity("swe", wrap, bare("Division by zero escapes as ZeroDivisionError")) < 0.05
    assert similarity("swe", wrap, bare("wrap() breaks lines of exactly width characters")) > 0.4


# ------------------------------------------------------------------------------ registry


def test_a_user_domain_registers_its_own_features(memory: MemorySystem) -> None:
    def extract(task: Task, solution: Any, hindsight: bool) -> dict[str, Any]:
        return {"n": float(task.context["n"])}

    def sim(query: dict[str, Any], batch: list[dict[str, Any]]) -> list[float]:
        return [1.0 / (1.0 + abs(query["n"] - c["n"])) for c in batch]

    register_features("toy-numbers", extract=extract, similarity=sim)
    tasks = [Task(id=f"n{n}", domain="toy-numbers", context={"n": n}) for n in (1, 5, 40)]
    memory.record_many_sync(solved(t) for t in tasks)
    found = memory.query_sync(Task(id="q", domain="toy-numbers", context={"n": 4}), k=3)
    assert [e.task.id for e, _ in found] == ["n5", "n1", "n40"]
    assert found[0][1] == pytest.approx(0.5)
    assert memory.query_sync(Task(id="again", domain="toy-numbers", context={"n": 40}), k=1)[0] == (
        memory.get_sync(memory.query_sync(tasks[2], k=1)[0][0].id),
        1.0,
    )


def test_unknown_domains_compare_their_text(memory: MemorySystem) -> None:
    a = Task(id="a", domain="essay", description="Sort the list of invoices by due date")
    b = Task(id="b", domain="essay", description="Translate the poem into French verse")
    memory.record_many_sync([solved(a), solved(b)])
    q = Task(id="q", domain="essay", description="sort invoices by their due date, newest first")
    (top, s_top), (_, s_other) = memory.query_sync(q, k=2)
    assert top.task.id == "a" and s_top > 0.3 and s_other < 0.05


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
