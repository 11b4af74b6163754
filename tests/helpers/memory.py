"""What the memory feature tests share: a solved experience, the similarity a store
gives one stored task for a query."""

from __future__ import annotations

from typing import Any

from atlas_actors.memory import MemorySystem
from atlas_actors.types import Experience, Outcome, Task


def solved(task: Task, solution: Any = None) -> Experience:
    return Experience(task=task, solution=solution, outcome=Outcome(success=True, partial_score=1))


def sim_of(memory: MemorySystem, query: Task, stored: Task) -> float:
    """The similarity the store gives ``stored`` for ``query``."""
    for e, s in memory.query_sync(query, k=50):
        if e.task.id == stored.id:
            return s
    raise AssertionError(f"{stored.id} not returned")
