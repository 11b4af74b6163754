"""The search coordinator: many searches at once on one asyncio loop.

:class:`SearchCoordinator` is a plain class; :data:`SearchCoordinatorActor` is it as
a Ray actor (``num_cpus=0``: it is I/O bound, it waits on environment actors and LLM
calls). It owns the environment and discriminator pools, runs ``solve_task`` for each
task under a bound on concurrent tasks (an anyio task group and a capacity limiter),
and streams each task's result back as it finishes (``solve_many`` is an async
generator, called as a Ray streaming generator; cancelling it cancels the searches and
their in-flight actor calls).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import AsyncIterator, Awaitable, Collection, Sequence
from typing import Any, Literal, Protocol

import anyio
import ray

from atlas_actors.actors.pool import DiscriminatorPool, EnvironmentPool
from atlas_actors.actors.workers import (
    EnvironmentFactory,
    ScorerFactory,
    llm_judge_factory,
    process_info,
)
from atlas_actors.config import EngineConfig, LLMConfig, MindEvolutionConfig
from atlas_actors.environments.base import Evaluator
from atlas_actors.errors import AtlasError
from atlas_actors.memory.session import MemorySession
from atlas_actors.search.solve import task_seed, task_strategy
from atlas_actors.types import Task, TaskResult


class Solver(Protocol):
    """What the coordinator runs per task (default: ``atlas_actors.search.solve.solve_task``).

    ``options`` are the tree-search settings the default solver takes (``mcts``,
    ``discriminator``, ``tree_dir``, ``progress``); other solvers may ignore them."""

    def __call__(
        self,
        task: Task,
        evaluator: Evaluator,
        *,
        config: MindEvolutionConfig,
        seed: int,
        llm: LLMConfig | None = None,
        **options: Any,
    ) -> Awaitable[TaskResult]: ...


def default_solver() -> Solver:
    from atlas_actors.search.solve import solve_task

    return solve_task  # type: ignore[return-value]  # a superset of Solver's keywords


def _cluster_cpus() -> float:
    return float(ray.cluster_resources().get("CPU", 1.0))  # type: ignore[no-untyped-call]


def worker_cpus(asked: float | None, workers: int, cluster_cpus: float) -> float:
    """CPUs each of ``workers`` environment actors reserves: ``asked``, else one, or a
    share of the cluster's CPUs when the actors outnumber them (otherwise the surplus
    is never placed and the engine waits for it)."""
    if asked is not None:
        return asked
    if workers <= cluster_cpus or cluster_cpus <= 0:
        return 1.0
    return math.floor(cluster_cpus / workers * 10_000) / 10_000  # Ray's resolution


def task_placement(
    config: EngineConfig, domain: str, custom_solver: bool = False
) -> Literal["actors", "coordinator"]:
    """Where a task of ``domain`` is searched: ``config.placement``, or for ``auto``,
    ``actors`` when its proposer does CPU-bound work on every turn (no LLM, or the
    domain's proposer ``mode`` is ``offline`` or ``hybrid``: a search in the
    coordinator would share one core with every other) and ``coordinator`` for an LLM
    alone (many calls in flight from one event loop) or a custom solver."""
    if config.placement != "auto":
        return config.placement
    if custom_solver:
        return "coordinator"
    mode = config.proposer_options.get(domain, {}).get("mode", "auto")
    return "actors" if config.llm is None or mode in ("offline", "hybrid") else "coordinator"


class SearchCoordinator:
    """Runs searches for many tasks concurrently against shared actor pools."""

    def __init__(
        self,
        config: EngineConfig,
        workers: int,
        *,
        environment_factory: EnvironmentFactory | None = None,
        scorer_factory: ScorerFactory | None = None,
        solver: Solver | None = None,
    ) -> None:
        self.config = config
        self.workers = workers
        self._solver = solver
        self.environments = EnvironmentPool(
            workers,
            factory=environment_factory,
            options=config.environment_options,
            cache_sizes=config.environment_cache,
            batch_size=config.batch_size,
            max_in_flight_per_actor=config.max_in_flight_per_actor,
            call_timeout_s=config.call_timeout_s,
            max_retries=config.max_retries,
            actor_options={
                "max_restarts": config.max_restarts,
                "num_cpus": worker_cpus(config.worker_cpus, workers, _cluster_cpus()),
            },
            sticky_domains=config.sticky_domains,
        )
        self.discriminators: DiscriminatorPool | None = None
        if config.discriminators:
            if scorer_factory is None and config.llm is not None:
                scorer_factory = functools.partial(llm_judge_factory, config.llm)
            self.discriminators = DiscriminatorPool(
                config.discriminators,
                factory=scorer_factory,
                call_timeout_s=config.call_timeout_s,
                max_retries=config.max_retries,
                actor_options={"max_restarts": config.max_restarts},
            )
        self._custom_solver = solver is not None
        # In "actors" placement a task occupies its actor's core: one task per actor.
        places = {task_placement(config, d, self._custom_solver) for d in config.proposer_options}
        places.add(task_placement(config, "", self._custom_solver))
        per_worker = 1 if "actors" in places else 2
        self.max_concurrent_tasks = config.max_concurrent_tasks or per_worker * workers
        self._limiter: anyio.CapacityLimiter | None = None
        self._running: dict[str, float] = {}
        self._search_stats: dict[str, dict[str, float]] = {}
        self.memory = MemorySession(
            config.memory, reset=config.memory_reset, router=config.router, run_id=config.run_id
        )
        """Routes every task; remembers finished ones when ``config.memory`` is set."""
        """Per task: the latest counters of its tree search (running and finished)."""
        self.finished = 0
        self.solved = 0
        self.failed = 0

    async def start(self) -> dict[str, Any]:
        """Open memory (if configured), start the actors; returns where everything runs."""
        await self.memory.open()
        self._limiter = anyio.CapacityLimiter(self.max_concurrent_tasks)
        envs = await self.environments.start()
        discs = await self.discriminators.start() if self.discriminators else []
        return {"coordinator": process_info(), "environments": envs, "discriminators": discs}

    def _solver_fn(self) -> Solver:
        if self._solver is None:
            self._solver = default_solver()
        return self._solver

    async def solve(self, task: Task) -> TaskResult:
        """Search one task; infrastructure faults become ``TaskResult.error``."""
        if self._limiter is None:
            raise AtlasError("the coordinator is not started")
        async with self._limiter:
            self._running[task.id] = time.monotonic()
            started = time.monotonic()
            seed = task_seed(self.config.seed, task.id)
            routing = None
            try:
                routing = await self.memory.route(task)
                # a tree search spreads its expansions over the environment actors, so it
                # runs here whatever the placement; a whole Mind Evolution search can run
                # inside one actor
                on_actor = task_placement(self.config, task.domain, self._custom_solver)
                if on_actor == "actors" and task_strategy(task) != "mcts":
                    result = await self._solve_on_actor(task, seed, routing)
                else:
                    result = await self._solver_fn()(
                        task,
                        self.environments,
                        config=self.config.search,
                        seed=seed,
                        llm=self.config.llm,
                        mcts=self.config.mcts,
                        discriminator=self.discriminators,
                        tree_dir=self.config.tree_dir,
                        progress=self._note_progress,
                        proposer_options=self.config.proposer_options.get(task.domain, {}),
                        routing=routing,
                    )
            except Exception as e:
                result = TaskResult(
                    task_id=task.id,
                    domain=task.domain,
                    seconds=time.monotonic() - started,
                    error=f"{type(e).__name__}: {e}",
                )
            finally:
                self._running.pop(task.id, None)
        await self.memory.remember(task, result)
        self.finished += 1
        self.solved += bool(result.solved)
        self.failed += result.error is not None
        return result

    def _note_progress(self, task_id: str, stats: Any) -> None:
        """A tree search's counters after an iteration (read by :meth:`stats`)."""
        self._search_stats[task_id] = {
            "expansions": stats.expansions,
            "nodes": stats.nodes,
            "evaluations": stats.evaluations,
            "llm_calls": stats.llm_calls,
            "llm_cost": stats.llm_cost,
        }

    async def _solve_on_actor(self, task: Task, seed: int, routing: Any = None) -> TaskResult:
        """The whole search inside one environment actor (retried elsewhere if it dies)."""
        search = self.config.search
        timeout = None
        if search.time_limit_s is not None:
            # the search itself stops at its time limit; past this the actor is hung
            timeout = max(self.config.call_timeout_s, 2 * search.time_limit_s + 60)
        elif search.max_evaluations is None:
            timeout = 24 * 3600.0  # unbounded search: only a day-long silence is a hang
        result: TaskResult = await self.environments.actors.call(
            "solve",
            task,
            search,
            seed,
            self.config.llm,
            routing,
            self.config.proposer_options.get(task.domain, {}),
            timeout_s=timeout,
        )
        return result

    async def solve_many(
        self, tasks: Sequence[Task], skip: Collection[str] = ()
    ) -> AsyncIterator[TaskResult]:
        """Search every task not in ``skip``; yield each result as it finishes."""
        todo = [t for t in tasks if t.id not in set(skip)]
        if not todo:
            return
        send, receive = anyio.create_memory_object_stream[TaskResult](math.inf)

        async def one(task: Task) -> None:
            await send.send(await self.solve(task))

        async with anyio.create_task_group() as tg, receive:
            # tasks start in order; the limiter in solve() bounds how many run at once
            for task in todo:
                tg.start_soon(one, task)
            for _ in range(len(todo)):
                yield await receive.receive()

    async def stats(self) -> dict[str, Any]:
        """Counters: tasks finished/solved/failed/running, evaluations, actor faults."""
        out: dict[str, Any] = {
            "tasks_finished": self.finished,
            "tasks_solved": self.solved,
            "tasks_failed": self.failed,
            "tasks_running": len(self._running),
            "max_concurrent_tasks": self.max_concurrent_tasks,
        }
        out.update(self.environments.stats())
        if self.discriminators is not None:
            out.update(self.discriminators.stats())
        for key in ("expansions", "nodes", "llm_calls", "llm_cost"):
            out[f"tree_{key}"] = sum(s[key] for s in self._search_stats.values())
        out["routes"] = dict(self.memory.routes)
        out["remembered"] = self.memory.recorded
        return out

    async def environment_actors(self) -> list[Any]:
        """Current environment actor handles (they change when actors are replaced)."""
        return self.environments.actors.actors

    async def discriminator_actors(self) -> list[Any]:
        """Current discriminator actor handles (empty without a discriminator pool)."""
        return self.discriminators.actors.actors if self.discriminators is not None else []

    async def health_check(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """Ping every actor, replacing dead or hung ones; returns their info."""
        envs = await self.environments.health_check(timeout_s)
        discs = (
            await self.discriminators.actors.health_check(timeout_s) if self.discriminators else []
        )
        return {"coordinator": process_info(), "environments": envs, "discriminators": discs}

    async def aclose(self) -> None:
        """Release the environments, kill the pools' actors, close memory."""
        await self.environments.aclose()
        if self.discriminators is not None:
            await self.discriminators.aclose()
        self.memory.close()


SearchCoordinatorActor = ray.remote(SearchCoordinator)
"""``SearchCoordinator`` as a Ray actor class (the Engine sets ``num_cpus=0``)."""
