"""The Engine end to end on real ARC tasks: real environment actors (ARC verifiers),
the real Mind Evolution search with the offline DSL proposer, real Ray.

The engine's answers must be exactly the in-process answers (same seed), with and
without actors being killed during the run.
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest
import ray

from atlas_actors.actors import Engine
from atlas_actors.arc import DSLProposer
from atlas_actors.config import EngineConfig, MindEvolutionConfig
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.search.solve import solve_task, task_seed
from atlas_actors.types import Task, TaskResult
from tests.helpers.arc import ROW_SHIFT_PROGRAM, row_shift_task

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

IDS = ["007bbfb7", "0520fde7", "017c7c7b", "06df4c85", "05f2a901", "025d127b"]
SEARCH = MindEvolutionConfig(generations=2, population_size=8, islands=2, max_evaluations=200)


def arc(tid: str) -> Task:
    return Task(id=tid, domain="arc", context={"arc_task_id": tid})


@pytest.fixture(scope="module")
async def expected() -> dict[str, TaskResult]:
    ev = LocalEvaluator()
    out = {}
    for tid in IDS:
        out[tid] = await solve_task(
            arc(tid), ev, config=SEARCH, seed=task_seed(3, tid), proposer=DSLProposer()
        )
    await ev.aclose()
    return out


def key(r: TaskResult) -> tuple[Any, ...]:
    return (r.task_id, r.solved, r.train_fitness, r.evaluations, r.error, r.solution, r.attempts)


async def test_engine_matches_in_process_answers(
    ray_session: Any, expected: dict[str, TaskResult]
) -> None:
    # The coordinator runs the searches, several at once, and the actors evaluate.
    config = EngineConfig(workers=2, search=SEARCH, seed=3, batch_size=16, placement="coordinator")
    async with Engine(config) as engine:
        single = await engine.solve(arc(IDS[0]))
        results = {r.task_id: r async for r in engine.solve_many([arc(t) for t in IDS[1:]])}
        stats = await engine.stats()
    assert key(single) == key(expected[IDS[0]])
    assert single.solved is True and single.attempts
    assert single.solution == expected[IDS[0]].solution
    for tid in IDS[1:]:
        assert key(results[tid]) == key(expected[tid]), tid
    assert stats["evaluations"] == sum(r.evaluations for r in expected.values())


async def test_arc_run_with_actors_killed_gives_the_same_answers(
    ray_session: Any, expected: dict[str, TaskResult]
) -> None:
    config = EngineConfig(
        workers=2,
        search=SEARCH,
        seed=3,
        batch_size=4,
        max_retries=20,
        discriminators=0,
        placement="coordinator",
    )
    async with Engine(config) as engine:
        rng = random.Random(1)
        kills = 0
        results: dict[str, TaskResult] = {}

        async def killer() -> None:
            nonlocal kills
            while kills < 6:
                await anyio.sleep(1.5)
                ray.kill(rng.choice(await engine.environment_actors()), no_restart=kills % 2 == 1)
                kills += 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(killer)
            async for r in engine.solve_many([arc(t) for t in IDS]):
                results[r.task_id] = r
            tg.cancel_scope.cancel()
        stats = await engine.stats()
    assert kills >= 3, kills
    assert stats["retries"] >= 1, stats
    for tid in IDS:
        assert key(results[tid]) == key(expected[tid]), (tid, results[tid].error)
    assert stats["evaluations"] == sum(r.evaluations for r in expected.values())


async def test_searches_placed_on_actors_match_and_survive_kills(
    ray_session: Any, expected: dict[str, TaskResult]
) -> None:
    """``placement="actors"`` (the default for offline proposers): each task's whole
    search runs inside one environment actor, tasks in parallel, one per actor."""
    config = EngineConfig(workers=2, search=SEARCH, seed=3, discriminators=0, max_retries=10)
    async with Engine(config) as engine:
        results = {r.task_id: r async for r in engine.solve_many([arc(t) for t in IDS])}
        stats = await engine.stats()
        assert stats["max_concurrent_tasks"] == 2
        assert stats["evaluations"] == 0  # nothing went through the evaluation pool
        for tid in IDS:
            assert key(results[tid]) == key(expected[tid]), tid
        # An actor killed mid-search: the task is searched again elsewhere, same answer.
        async with anyio.create_task_group() as tg:

            async def kill_soon() -> None:
                await anyio.sleep(0.5)
                ray.kill((await engine.environment_actors())[0], no_restart=True)

            tg.start_soon(kill_soon)
            again = {r.task_id: r async for r in engine.solve_many([arc(t) for t in IDS[:2]])}
        stats = await engine.stats()
    assert stats["retries"] >= 1, stats
    for tid in IDS[:2]:
        assert key(again[tid]) == key(expected[tid]), tid


@pytest.mark.parametrize(
    ("llm", "arc_mode", "placement", "custom", "arc_where", "swe_where"),
    [
        (False, None, "auto", False, "actors", "actors"),  # offline: one task per core
        (True, None, "auto", False, "coordinator", "coordinator"),  # LLM: calls in flight
        (True, "llm", "auto", False, "coordinator", "coordinator"),
        (True, "hybrid", "auto", False, "actors", "coordinator"),  # the DSL every turn
        (True, "offline", "auto", False, "actors", "coordinator"),
        (False, None, "auto", True, "coordinator", "coordinator"),  # a custom solver
        (True, "hybrid", "coordinator", False, "coordinator", "coordinator"),  # as set
        (False, None, "actors", True, "actors", "actors"),
    ],
)
def test_where_a_task_is_searched(
    llm: bool,
    arc_mode: str | None,
    placement: str,
    custom: bool,
    arc_where: str,
    swe_where: str,
) -> None:
    from atlas_actors.actors.coordinator import task_placement
    from atlas_actors.config import LLMConfig

    config = EngineConfig(
        llm=LLMConfig(base_url="http://127.0.0.1:9/v1") if llm else None,
        placement=placement,  # type: ignore[arg-type]
        proposer_options={"arc": {"mode": arc_mode}} if arc_mode else {},
    )
    assert task_placement(config, "arc", custom) == arc_where
    assert task_placement(config, "swe", custom) == swe_where


async def test_hybrid_searches_run_on_the_actors_and_ask_the_llm_only_where_needed(
    ray_session: Any, tmp_path: Any
) -> None:
    """``--proposer hybrid`` through the engine: each task's search inside an
    environment actor (the DSL works on every turn), the LLM reached from there over
    loopback, and only for the task the DSL cannot fit."""
    from atlas_actors.arc import prompts
    from atlas_actors.config import LLMConfig
    from atlas_actors.llm.testing import ChatRequest, FakeLLMServer

    shift = Task(id="shift", domain="arc", context={"grids": row_shift_task()})
    right = ROW_SHIFT_PROGRAM

    def respond(req: ChatRequest) -> str:
        if req.system == prompts.CRITIC_SYSTEM:
            return "Add the row index to every cell, modulo 10."
        return f"```python\n{right}\n```"

    async with FakeLLMServer(respond) as server:
        config = EngineConfig(
            workers=2,
            search=MindEvolutionConfig(time_limit_s=30.0),
            llm=LLMConfig(base_url=server.base_url, api_key_env=None, cache_dir=str(tmp_path)),
            proposer_options={"arc": {"mode": "hybrid", "time_limit_s": 30.0}},
            discriminators=0,
        )
        async with Engine(config) as engine:
            results = {r.task_id: r async for r in engine.solve_many([arc(IDS[0]), shift])}
            stats = await engine.stats()
    assert stats["max_concurrent_tasks"] == 2 and stats["evaluations"] == 0  # on the actors
    assert results[IDS[0]].solved and results[IDS[0]].usage["calls"] == 0
    assert results["shift"].solved and results["shift"].solution == right
    assert results["shift"].usage["calls"] == server.requests > 0
