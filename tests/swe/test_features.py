"""SWE's memory features: a repeat is 1, a neighbouring bug close, other repositories'
bugs near 0; a task being solved shows only what a solver sees."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.memory import (
    MAX_FEATURE_SIMILARITY,
    MemorySystem,
    similarity,
    task_features,
    task_fingerprint,
)
from atlas_actors.swe import features as F
from atlas_actors.swe.instances import EXAMPLES_DIR, example_names, parse_instance
from atlas_actors.types import Task
from tests.helpers.memory import sim_of, solved


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemorySystem]:
    with MemorySystem(tmp_path / "memory.sqlite3") as m:
        yield m


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
