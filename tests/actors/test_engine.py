"""The Engine on a real local Ray: API, streaming, faults, hangs, cancellation.

Uses the session's Ray (``ray_session``) and a tiny deterministic environment and
solver (``tests/helpers/actor_fakes.py``), so each test checks the engine's behaviour,
not a search's.
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path
from typing import Any

import anyio
import pytest
import ray
import ray.cloudpickle

from atlas_actors.actors import DiscriminatorPool, Engine, EnvironmentPool
from atlas_actors.actors.coordinator import worker_cpus
from atlas_actors.config import EngineConfig
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.errors import ActorError
from atlas_actors.search.discriminator import TestEvidenceScorer
from atlas_actors.search.solve import task_seed
from atlas_actors.types import Candidate, Outcome, Task, TaskResult
from tests.helpers import actor_fakes
from tests.helpers.actor_fakes import FakeFactory, failing_solver, fake_solver

ray.cloudpickle.register_pickle_by_value(actor_fakes)

pytestmark = pytest.mark.timeout(240)


def tasks(n: int, **context: Any) -> list[Task]:
    return [Task(id=f"t{i}", domain="fake", context=dict(context)) for i in range(n)]


async def local_results(ts: list[Task], seed: int = 0) -> dict[str, TaskResult]:
    """The undisturbed answers, in process, no Ray."""
    ev = LocalEvaluator(FakeFactory())
    cfg = EngineConfig()
    return {
        t.id: await fake_solver(t, ev, config=cfg.search, seed=task_seed(seed, t.id)) for t in ts
    }


def same(a: TaskResult, b: TaskResult) -> bool:
    keys = ("task_id", "train_fitness", "solution", "evaluations", "error")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


async def test_solve_and_stream_results_as_they_finish(ray_session: Any) -> None:
    slow = Task(id="slow", domain="fake", context={"generations": 8})
    fast = Task(id="fast", domain="fake", context={"generations": 1})
    mid = Task(id="mid", domain="fake", context={"generations": 3})
    expected = await local_results([slow, fast, mid])
    config = EngineConfig(workers=2, batch_size=4, max_concurrent_tasks=3)
    async with Engine(
        config, environment_factory=FakeFactory(delay_s=0.15), solver=fake_solver
    ) as engine:
        assert ray.is_initialized()
        one = await engine.solve(mid)
        assert same(one, expected["mid"])
        order = [r.task_id async for r in engine.solve_many([slow, fast, mid])]
        assert order == ["fast", "mid", "slow"]  # as they finish, not as submitted
        stats = await engine.stats()
        # every solution counted exactly once
        assert stats["evaluations"] == 2 * expected["mid"].evaluations + sum(
            r.evaluations for r in expected.values() if r.task_id != "mid"
        )
        assert engine.progress.done == 4 and engine.progress.running == 0
        # skip: already-done ids are not searched again (the CLI's --resume)
        again = [r.task_id async for r in engine.solve_many([slow, fast, mid], skip={"slow"})]
        assert sorted(again) == ["fast", "mid"]
        assert engine.progress.skipped == 1
        # batches were split across both actors
        info = await engine.health_check()
        assert len({e["pid"] for e in info["environments"]}) == 2
        assert all(e["ok"] for e in info["environments"])
    # the engine did not own the session's Ray: it is still up
    assert ray.is_initialized()


def test_actors_share_the_cpus_when_they_outnumber_them() -> None:
    assert worker_cpus(None, 2, 4.0) == 1.0
    assert worker_cpus(None, 4, 2.0) == 0.5
    assert worker_cpus(None, 3, 2.0) == 0.6666  # rounded down to Ray's resolution
    assert worker_cpus(0.25, 1, 8.0) == 0.25  # asked for: taken as is


async def test_more_workers_than_cpus_all_start_and_serve(ray_session: Any) -> None:
    cpus = int(ray.cluster_resources()["CPU"])
    config = EngineConfig(workers=2 * cpus, batch_size=4, discriminators=0)
    tasks = [Task(id=f"t{i}", domain="fake", context={"generations": 2}) for i in range(3)]
    expected = await local_results(tasks)
    with anyio.fail_after(120):
        async with Engine(
            config, environment_factory=FakeFactory(delay_s=0.05), solver=fake_solver
        ) as engine:
            results = {r.task_id: r async for r in engine.solve_many(tasks)}
            info = await engine.health_check()
    assert all(same(results[t.id], expected[t.id]) for t in tasks)
    assert len(info["environments"]) == 2 * cpus and all(e["ok"] for e in info["environments"])


async def test_search_errors_become_results(ray_session: Any) -> None:
    config = EngineConfig(workers=1, discriminators=0)
    async with Engine(config, environment_factory=FakeFactory(), solver=failing_solver) as engine:
        results = {
            r.task_id: r
            async for r in engine.solve_many(
                [Task(id="bad-1", domain="fake"), Task(id="ok-1", domain="fake")]
            )
        }
    assert results["bad-1"].error == "ValueError: cannot search bad-1"
    assert results["ok-1"].error is None and results["ok-1"].evaluations == 48


async def test_killing_actors_20_times_loses_and_double_counts_nothing(
    ray_session: Any,
) -> None:
    ts = tasks(12, generations=6, batch=12)
    expected = await local_results(ts)
    config = EngineConfig(workers=2, batch_size=4, max_retries=10, discriminators=0)
    async with Engine(
        config, environment_factory=FakeFactory(delay_s=0.05), solver=fake_solver
    ) as engine:
        rng = random.Random(7)
        kills = 0
        results: dict[str, TaskResult] = {}

        async def run() -> None:
            async for r in engine.solve_many(ts):
                results[r.task_id] = r

        async def killer() -> None:
            nonlocal kills
            while kills < 20:
                await anyio.sleep(0.25)
                actor = rng.choice(await engine.environment_actors())
                # half: Ray restarts it in place; half: gone for good, the pool replaces it
                ray.kill(actor, no_restart=kills % 2 == 0)
                kills += 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(killer)
            await run()
            # keep the run going until all kills happened (they must hit a live run)
            while kills < 20:
                await run_again(engine, ts, results)
            tg.cancel_scope.cancel()
        stats = await engine.stats()
    assert kills == 20
    assert stats["retries"] >= 1 and stats["replacements"] >= 1, stats
    for t in ts:
        assert same(results[t.id], expected[t.id]), (results[t.id], expected[t.id])
    total = sum(r.evaluations for r in expected.values())
    assert stats["evaluations"] % total == 0, (stats["evaluations"], total)
    assert stats["evaluations"] == total * stats["tasks_finished"] // len(ts)


async def test_a_dead_coordinator_is_replaced_and_every_result_arrives_once(
    ray_session: Any,
) -> None:
    ts = tasks(8, generations=4, batch=8)
    expected = await local_results(ts)
    config = EngineConfig(workers=2, batch_size=4, max_concurrent_tasks=2, discriminators=0)
    async with Engine(
        config, environment_factory=FakeFactory(delay_s=0.1), solver=fake_solver
    ) as engine:
        first = engine.coordinator
        old_actors = await engine.environment_actors()
        got: list[TaskResult] = []
        with anyio.fail_after(120):
            async for r in engine.solve_many(ts):
                got.append(r)
                if len(got) == 2:  # mid-run: some done, some running, some queued
                    ray.kill(first, no_restart=True)
        assert engine.coordinator_restarts == 1
        assert engine.coordinator is not first
        assert sorted(r.task_id for r in got) == sorted(t.id for t in ts)  # each once
        assert all(same(r, expected[r.task_id]) for r in got)
        assert engine.progress.done == 8 and engine.progress.running == 0
        # the old coordinator's environment actors died with it; new ones serve
        new_actors = await engine.environment_actors()
        assert {a._actor_id for a in new_actors}.isdisjoint({a._actor_id for a in old_actors})
        # solve() recovers the same way
        ray.kill(engine.coordinator, no_restart=True)
        assert same(await engine.solve(ts[0]), expected[ts[0].id])
        assert engine.coordinator_restarts == 2
        # restarts used up: the next death is an ActorError naming the setting
        ray.kill(engine.coordinator, no_restart=True)
        with pytest.raises(ActorError, match="coordinator_restarts=2"):
            await engine.solve(ts[1])
        assert engine.progress.running == 0


async def run_again(engine: Engine, ts: list[Task], results: dict[str, TaskResult]) -> None:
    async for r in engine.solve_many(ts):
        assert same(r, results[r.task_id])


async def test_hung_actor_is_detected_and_replaced(ray_session: Any, tmp_path: Path) -> None:
    task = Task(id="h", domain="fake", context={"generations": 2, "extra": ["hang"]})
    expected = await local_results(
        [Task(id="h", domain="fake", context={"generations": 2, "extra": ["hang!"]})]
    )
    config = EngineConfig(workers=2, batch_size=64, call_timeout_s=4, discriminators=0)
    async with Engine(
        config, environment_factory=FakeFactory(str(tmp_path)), solver=fake_solver
    ) as engine:
        before = {e["pid"] for e in (await engine.health_check())["environments"]}
        with anyio.fail_after(60):
            result = await engine.solve(task)
        stats = await engine.stats()
        after = {e["pid"] for e in (await engine.health_check())["environments"]}
    hung_pid = int((tmp_path / "hung-once").read_text())
    assert hung_pid in before and hung_pid not in after  # the hung actor was replaced
    assert stats["timeouts"] == 1 and stats["replacements"] == 1
    assert result.error is None
    assert result.evaluations == expected["h"].evaluations
    assert stats["evaluations"] == result.evaluations  # the retried chunk counted once


def calls(log: Path) -> dict[str, int]:
    counts = {"start": 0, "end": 0, "cancelled": 0}
    if log.exists():
        for line in log.read_text().splitlines():
            counts[line.split()[0]] += 1
    return counts


async def wait_for(pred: Any, timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not pred():
            await anyio.sleep(0.05)


async def test_cancelling_solve_leaves_no_orphan_work(ray_session: Any, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    config = EngineConfig(workers=2, batch_size=1, discriminators=0)
    async with Engine(
        config, environment_factory=FakeFactory(str(tmp_path)), solver=fake_solver
    ) as engine:
        # 1. cancel a single solve() while its evaluations are running remotely
        task = Task(id="c", domain="fake", context={"extra": ["slow"], "batch": 1})
        async with anyio.create_task_group() as tg:
            tg.start_soon(engine.solve, task)
            await wait_for(lambda: calls(log)["start"] == 1)
            tg.cancel_scope.cancel()
        await wait_for(lambda: calls(log)["cancelled"] == 1)
        # 2. leave solve_many early: the other searches stop too
        ts = [
            Task(id=f"m{i}", domain="fake", context={"extra": ["slow"], "batch": 1})
            for i in range(3)
        ]
        quick = Task(id="quick", domain="fake", context={"batch": 1})
        async with contextlib.aclosing(engine.solve_many([*ts, quick])) as stream:
            async for first in stream:
                assert first.task_id == "quick"
                await wait_for(lambda: calls(log)["start"] == 4)
                break
        await wait_for(lambda: calls(log)["cancelled"] == 4)
        await anyio.sleep(1.0)
        c = calls(log)
        assert c == {"start": 4, "end": 0, "cancelled": 4}
        stats = await engine.stats()
        assert stats["in_flight"] == 0 and stats["tasks_running"] == 0
        # the engine still works after cancellations
        assert (await engine.solve(Task(id="after", domain="fake"))).error is None


async def test_pools_directly_from_async_python(ray_session: Any) -> None:
    """The pools are Evaluator / Scorer implementations usable without the Engine."""
    pool = EnvironmentPool(2, factory=FakeFactory(), batch_size=8)
    await pool.start()
    task = Task(id="p", domain="fake")
    sols = [f"x{i}" for i in range(50)]
    try:
        got = await pool.evaluate(task, sols)
        want = await LocalEvaluator(FakeFactory()).evaluate(task, sols)
        assert got == want
        assert pool.chunks(50) == [(i, min(50, i + 8)) for i in range(0, 50, 8)]
        assert pool.chunks(6) == [(0, 3), (3, 6)]  # small batches still use both actors
        assert pool.evaluations == 50 and pool.calls == 7
        assert await pool.evaluate(task, []) == []
    finally:
        await pool.aclose()

    scorers = DiscriminatorPool(2)
    await scorers.start()
    try:
        cand = Candidate(
            solution="s", fitness=0.25, outcome=Outcome(success=False, partial_score=0.75)
        )
        want = await TestEvidenceScorer().score(task, cand)  # the default backend
        assert want[0] == pytest.approx(0.75, abs=0.02)
        ray.kill(scorers.actors.actors[0])  # a dead discriminator is replaced
        results = [await scorers.score(task, cand) for _ in range(4)]
        assert all(r == want for r in results)
        assert scorers.actors.replacements == 1
    finally:
        await scorers.aclose()
