"""Memory's generic features: a domain's own features come from its spec; a domain
without any is compared by its text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.environments import (
    PassthroughEnvironment,
    register_domain,
    unregister_domain,
)
from atlas_actors.memory import DomainFeatures, MemorySystem
from atlas_actors.types import Task
from tests.helpers.memory import solved


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemorySystem]:
    with MemorySystem(tmp_path / "memory.sqlite3") as m:
        yield m


def test_a_user_domain_registers_its_own_features(memory: MemorySystem) -> None:
    def extract(task: Task, solution: Any, hindsight: bool) -> dict[str, Any]:
        return {"n": float(task.context["n"])}

    def sim(query: dict[str, Any], batch: list[dict[str, Any]]) -> list[float]:
        return [1.0 / (1.0 + abs(query["n"] - c["n"])) for c in batch]

    features = DomainFeatures("toy-numbers", "1", extract=extract, similarity=sim)
    register_domain("toy-numbers", environment=PassthroughEnvironment, features=features)
    try:
        _query_toy_numbers(memory)
    finally:
        unregister_domain("toy-numbers")


def _query_toy_numbers(memory: MemorySystem) -> None:
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
