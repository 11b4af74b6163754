"""The SQLite experience store: persistence, concurrency, crashes, corruption, JSONL."""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import random
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from atlas_actors.environments import PassthroughEnvironment, register_domain, unregister_domain
from atlas_actors.errors import AtlasError, ConfigError, CorruptMemoryError
from atlas_actors.memory import (
    DomainFeatures,
    MemorySystem,
    default_memory_path,
    experience_from_result,
)
from atlas_actors.types import Experience, Outcome, Task, TaskResult
from tests.helpers.memory_workers import make_experience, write_forever, write_many

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "memory.sqlite3"


@pytest.fixture
def memory(path: Path) -> Iterator[MemorySystem]:
    with MemorySystem(path) as m:
        yield m


def quick_check(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("PRAGMA quick_check")]
    finally:
        conn.close()


def test_default_path_is_in_the_user_cache_folder() -> None:
    assert default_memory_path({"XDG_CACHE_HOME": "/srv/cache"}) == Path(
        "/srv/cache/atlas-actors/memory.sqlite3"
    )
    assert default_memory_path({}) == Path.home() / ".cache" / "atlas-actors" / "memory.sqlite3"


def test_record_and_query(memory: MemorySystem) -> None:
    stored = memory.record_sync(make_experience("w", 1))
    assert stored.fingerprint.startswith("generic:") and stored.features["v"] == "generic:1"
    memory.record_sync(make_experience("w", 2))
    memory.record_sync(make_experience("w", 1))  # same id: kept once
    assert len(memory) == 2 and memory.count_sync("generic") == 2 and memory.count_sync("arc") == 0
    assert memory.get_sync("w-1") == stored
    found = memory.query_sync(stored.task, k=5)
    assert (found[0][0].id, found[0][1]) == ("w-1", 1.0)
    assert found[1][0].id == "w-2" and 0.5 < found[1][1] < 0.99  # same words, another number
    assert [e.id for e, _ in memory.query_sync(stored.task, successful_only=True)] == ["w-2"]
    assert [e.id for e, _ in memory.query_sync(stored.task, min_similarity=0.999)] == ["w-1"]
    assert memory.query_sync(Task(id="x", domain="arc", context={"arc_task_id": "007bbfb7"})) == []


def test_an_exact_repeat_ranks_a_success_first(memory: MemorySystem) -> None:
    task = Task(id="t", description="count the sheep")
    memory.record_sync(Experience(id="old-fail", task=task, outcome=Outcome(success=False)))
    memory.record_sync(Experience(id="win", task=task, outcome=Outcome(success=True)))
    memory.record_sync(Experience(id="new-fail", task=task, outcome=Outcome(success=False)))
    renamed = task.model_copy(update={"id": "another-id"})
    assert [(e.id, s) for e, s in memory.query_sync(renamed, k=3)] == [
        ("win", 1.0),
        ("new-fail", 1.0),
        ("old-fail", 1.0),
    ]
    assert [e.id for e in memory.repeats_sync(renamed)] == ["old-fail", "win", "new-fail"]


def test_the_store_survives_a_restart(path: Path) -> None:
    with MemorySystem(path) as m:
        m.record_many_sync(make_experience("run1", i) for i in range(5))
    with MemorySystem(path) as m:
        assert len(m) == 5
        assert m.query_sync(make_experience("run1", 3).task, k=1)[0][0].id == "run1-3"
        m.record_sync(make_experience("run2", 0))
    with MemorySystem(path) as m:
        assert {e.id for e in m.experiences_sync()} == {*(f"run1-{i}" for i in range(5)), "run2-0"}


def test_concurrent_writers_in_processes_and_two_stores_lose_nothing(path: Path) -> None:
    MemorySystem(path).close()  # created once, as a run would
    n, writers = 30, 4
    start = SPAWN.Event()
    procs = [
        SPAWN.Process(target=write_many, args=(str(path), f"p{w}", n, start))
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    a, b = MemorySystem(path), MemorySystem(path)  # two stores open at once in this process

    def local(store: MemorySystem, name: str) -> None:
        for i in range(n):
            store.record_sync(make_experience(name, i))

    threads = [threading.Thread(target=local, args=(s, f"t{k}")) for k, s in enumerate((a, b))]
    start.set()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        p.join(timeout=240)
        assert p.exitcode == 0
    expected = {
        f"{w}-{i}" for w in [*(f"p{k}" for k in range(writers)), "t0", "t1"] for i in range(n)
    }
    assert {e.id for e in a.experiences_sync()} == expected
    assert len(b) == len(expected) == (writers + 2) * n
    assert not a.unsaved_path.exists()
    a.close()
    b.close()
    assert quick_check(path) == ["ok"]


def test_a_writer_killed_mid_write_leaves_a_readable_store(path: Path) -> None:
    MemorySystem(path).close()
    rng = random.Random(3)
    kib = 512
    for round_ in range(3):
        writer = f"killed{round_}"
        committed = SPAWN.Value("i", 0)
        child = SPAWN.Process(target=write_forever, args=(str(path), writer, committed, kib))
        child.start()
        deadline = time.monotonic() + 120
        while committed.value < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.05))  # somewhere inside a later transaction
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join()
        assert child.exitcode == -signal.SIGKILL
        done = committed.value
        assert done >= 3
        with MemorySystem(path) as m:  # opens without a reset
            mine = [e for e in m.experiences_sync() if e.id.startswith(f"{writer}-")]
            assert len(mine) >= done  # every finished write is there, whole
            for e in mine:
                i = e.id.split("-")[1]
                assert e.solution == f"{i}:" + "x" * (kib * 1024)
        assert quick_check(path) == ["ok"]
    with MemorySystem(path) as m:
        m.record_sync(make_experience("after", 0))
        assert m.get_sync("after-0") is not None


def test_a_corrupt_file_gives_a_clear_error(path: Path) -> None:
    path.write_bytes(b"this is not a database, just some bytes " * 100)
    with pytest.raises(CorruptMemoryError) as info:
        MemorySystem(path)
    message = str(info.value)
    assert str(path) in message and "--memory-reset" in message and "--memory PATH" in message
    assert isinstance(info.value, AtlasError) and isinstance(info.value, RuntimeError)
    assert path.read_bytes().startswith(b"this is not")  # untouched


def test_a_damaged_store_is_detected(path: Path) -> None:
    with MemorySystem(path) as m:
        m.record_many_sync(make_experience("w", i, payload="y" * 20000) for i in range(20))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(2 * page, len(data), 3 * page):  # scribble over b-tree pages
        data[offset : offset + 64] = os.urandom(64)
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptMemoryError, match="memory-reset"):
        MemorySystem(path)


def test_other_bad_files(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE invoices (n INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(CorruptMemoryError, match="not an atlas-actors memory store"):
        MemorySystem(other)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(CorruptMemoryError, match="is not a file"):
        MemorySystem(folder)
    with pytest.raises(CorruptMemoryError, match="is not a file"):
        MemorySystem(folder, reset=True)  # a folder is never moved aside
    assert folder.is_dir()


def test_reset_moves_the_bad_file_aside_and_starts_fresh(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    garbage = b"\x00garbage\xff" * 500
    path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING, logger="atlas_actors.memory.store"):
        m = MemorySystem(path, reset=True)
    try:
        assert m.moved_aside is not None and m.moved_aside.name.startswith(
            "memory.sqlite3.corrupt-"
        )
        assert m.moved_aside.read_bytes() == garbage  # the old file is kept
        assert len(m) == 0
        m.record_sync(make_experience("fresh", 0))
        assert len(m) == 1
        assert any("moved it to" in r.getMessage() for r in caplog.records)
    finally:
        m.close()
    with MemorySystem(path, reset=True) as again:  # a healthy store is not reset
        assert again.moved_aside is None and len(again) == 1


def test_a_failed_write_is_kept_and_recovered(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    m = MemorySystem(path, busy_timeout_s=0.2)
    m.record_sync(make_experience("before", 0))
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the store
    try:
        with caplog.at_level(logging.WARNING, logger="atlas_actors.memory.store"):
            stored = m.record_sync(make_experience("blocked", 0))  # does not raise
        assert stored.fingerprint
        assert m.unsaved_path.exists() and "blocked-0" in m.unsaved_path.read_text()
        assert any("saved them to" in r.getMessage() for r in caplog.records)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    m.close()
    with MemorySystem(path) as again:
        assert again.get_sync("blocked-0") is not None and len(again) == 2
        assert not again.unsaved_path.exists()


def test_jsonl_export_import_round_trips(memory: MemorySystem, tmp_path: Path) -> None:
    arc = Task(id="a1", domain="arc", context={"arc_task_id": "3c9b0459"})
    swe = Task(id="s1", domain="swe", description="fix it", context={"repo": "o/r"})
    items = [
        Experience(
            task=arc,
            solution=["rot180", "x"],
            outcome=Outcome(success=True, partial_score=1.0),
            strategy="evolutionary",
            evaluations=120,
            seconds=3.5,
            usage={"calls": 2.0, "cost": 0.01},
        ),
        Experience(
            task=swe,
            solution="diff --git a/m.py b/m.py\n+++ b/m.py\n",
            outcome=Outcome(success=False, partial_score=0.5, feedback="1 test still fails"),
            strategy="mcts",
            edit_families=["boundary", "operator"],
            run_id="run-7",
        ),
        make_experience("g", 3),
    ]
    memory.record_many_sync(items)
    first, second = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert memory.export_jsonl_sync(first) == 3
    with MemorySystem(tmp_path / "other.sqlite3") as other:
        assert other.import_jsonl_sync(first) == 3
        assert other.import_jsonl_sync(first) == 0  # ids already there
        assert other.export_jsonl_sync(second) == 3
        assert [e for e in other.experiences_sync()] == list(memory.experiences_sync())
        assert other.query_sync(arc, k=1)[0][1] == 1.0
    assert first.read_bytes() == second.read_bytes()
    assert memory.export_jsonl_sync(tmp_path / "arc.jsonl", domain="arc") == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(first.read_text().splitlines()[0] + "\n{not json}\n")
    with pytest.raises(ConfigError, match=r"bad.jsonl, line 2"):
        memory.import_jsonl_sync(bad)


def test_stale_features_are_recomputed(memory: MemorySystem) -> None:
    def sim(query: dict[str, Any], batch: list[dict[str, Any]]) -> list[float]:
        return [1.0 if c.get("k") == query.get("k") else 0.0 for c in batch]

    def v1(task: Task, solution: Any, hindsight: bool) -> dict[str, Any]:
        return {"k": "old"}

    def v2(task: Task, solution: Any, hindsight: bool) -> dict[str, Any]:
        return {"k": task.description}

    def register(extract: Any, version: str) -> None:
        features = DomainFeatures("toy-versions", version, extract=extract, similarity=sim)
        register_domain(
            "toy-versions", environment=PassthroughEnvironment, features=features, replace=True
        )

    register(v1, "1")
    memory.record_sync(
        Experience(
            id="e",
            task=Task(id="t", domain="toy-versions", description="blue"),
            outcome=Outcome(success=True),
        )
    )
    assert memory.get_sync("e").features == {"k": "old", "v": "toy-versions:1"}  # type: ignore[union-attr]
    register(v2, "2")
    try:
        query = Task(id="q", domain="toy-versions", description="blue", context={"other": 1})
        found = memory.query_sync(query)  # not a repeat: another context
        assert found[0][1] == pytest.approx(0.99)
        assert memory.get_sync("e").features == {"k": "blue", "v": "toy-versions:2"}  # type: ignore[union-attr]
    finally:
        unregister_domain("toy-versions")


def test_picklable_and_usable_in_another_thread(memory: MemorySystem) -> None:
    memory.record_sync(make_experience("w", 0))
    copy = pickle.loads(pickle.dumps(memory))
    try:
        assert copy.path == memory.path and len(copy) == 1
    finally:
        copy.close()
    out: list[int] = []
    t = threading.Thread(target=lambda: out.append(len(memory)))
    t.start()
    t.join()
    assert out == [1]
    memory.close()
    with pytest.raises(AtlasError, match="closed"):
        len(memory)


async def test_async_api_runs_in_worker_threads(path: Path) -> None:
    async with MemorySystem(path) as m:
        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(m.record, make_experience("async", i))
        assert await m.count() == 20
        assert await m.record_many([make_experience("async", i) for i in range(18, 25)]) == 5
        found = await m.query(make_experience("async", 4).task, k=2, successful_only=True)
        assert found[0] == (m.get_sync("async-4"), 1.0)
        assert await m.export_jsonl(path.with_suffix(".jsonl")) == 25
        assert await m.import_jsonl(path.with_suffix(".jsonl")) == 0


def test_experience_from_result() -> None:
    task = Task(id="t9", domain="arc", context={"arc_task_id": "3c9b0459"})
    result = TaskResult(
        task_id="t9",
        domain="arc",
        solved=None,
        checks_passed=True,
        train_fitness=1.0,
        evaluations=40,
        seconds=2.0,
        strategy="evolutionary",
        solution=["rot180", "x"],
        usage={"cost": 0.5},
    )
    e = experience_from_result(task, result, run_id="r1")
    assert e.id == "r1/t9" and e.success and e.score == 1.0 and e.llm_cost == 0.5
    assert e.solution == ["rot180", "x"] and e.evaluations == 40 and e.run_id == "r1"
    # memory learns from what the search could check, never from the hidden verdict
    hidden = experience_from_result(task, result.model_copy(update={"solved": False}))
    assert hidden.success and hidden.outcome.details == {"solved": False}
    wrong = experience_from_result(task, result.model_copy(update={"checks_passed": False}))
    assert not wrong.success and wrong.id != e.id
    failed = experience_from_result(task, result.model_copy(update={"error": "boom"}))
    assert not failed.success and failed.outcome.feedback == "boom"
    swe = experience_from_result(
        task,
        result.model_copy(update={"strategy": "something-else"}),
        strategy="mcts",
        edit_families=["guard"],
    )
    assert swe.strategy == "mcts" and swe.edit_families == ["guard"]
