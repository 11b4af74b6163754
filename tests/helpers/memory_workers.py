"""Child-process writers for the store's concurrency tests (imported by spawned children)."""

from __future__ import annotations

from typing import Any

from atlas_actors.memory import MemorySystem
from atlas_actors.types import Experience, Outcome, Task


def make_experience(writer: str, i: int, payload: str = "") -> Experience:
    """Experience ``i`` of ``writer`` (a generic-domain task; ``payload`` makes it big)."""
    return Experience(
        id=f"{writer}-{i}",
        task=Task(id=f"{writer}-task-{i}", description=f"writer {writer} writes task number {i}"),
        solution=payload or f"solution {i}",
        outcome=Outcome(success=i % 2 == 0, partial_score=(i % 10) / 10),
        evaluations=i,
    )


def write_many(path: str, writer: str, n: int, start: Any) -> None:
    """Open the store, wait for the start signal, record ``n`` experiences one by one."""
    memory = MemorySystem(path)
    start.wait()
    for i in range(n):
        memory.record_sync(make_experience(writer, i))
        if i % 7 == 0:
            memory.query_sync(make_experience(writer, i).task, k=3)
    memory.close()


def write_forever(path: str, writer: str, committed: Any, payload_kib: int) -> None:
    """Record big experiences until killed; ``committed`` counts the finished writes."""
    memory = MemorySystem(path)
    payload = "x" * (payload_kib * 1024)
    i = 0
    while True:
        memory.record_sync(make_experience(writer, i, payload=f"{i}:{payload}"))
        i += 1
        committed.value = i
