"""The public async entry point: :class:`Engine`.

::

    async with Engine(EngineConfig(workers=4)) as engine:
        result = await engine.solve(task)                 # -> TaskResult
        async for result in engine.solve_many(tasks):     # results as they finish
            ...

The engine starts a local Ray instance on all cores when none is running, or joins
one (``EngineConfig.address``, else ``RAY_ADDRESS``), shipping this package to the
cluster's workers; it shuts down only what it started. It needs no event loop of its
own (works in Jupyter, FastAPI, pytest-asyncio). Cancelling ``solve`` or leaving
``solve_many`` early cancels the remote searches and their actor calls.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import anyio
import ray
from ray.exceptions import RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from atlas_actors.actors.coordinator import SearchCoordinatorActor, Solver
from atlas_actors.actors.workers import EnvironmentFactory, ScorerFactory
from atlas_actors.config import EngineConfig
from atlas_actors.errors import ActorError, ConfigError
from atlas_actors.resources import AsyncResource
from atlas_actors.types import Task, TaskResult

log = logging.getLogger(__name__)


def package_dir() -> str:
    """The ``atlas_actors`` package directory (shipped to clusters as a py_module)."""
    return str(Path(__file__).resolve().parent.parent)


class RayRuntime:
    """Starts or joins Ray; shuts down only an instance it started (or connected).

    A local Ray is started from a thread of its own that lives until :meth:`shutdown`:
    Ray's processes get SIGKILL when the thread that started them ends, and a worker
    thread of a pool (anyio's) ends when it has been idle a while. Beside a local Ray
    runs a watcher (:mod:`atlas_actors.watchdog`) that ends the Ray session's processes
    if this process dies without shutting it down (SIGKILL leaves Ray's agents behind
    otherwise).
    """

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.started = False
        """True when this runtime called ``ray.init`` (and so will ``ray.shutdown``)."""
        self.address: str | None = None
        self.session_dir: str | None = None
        """The local Ray's session folder (None when joining a cluster)."""
        self._host: _RayHost | None = None
        self._watcher: subprocess.Popen[bytes] | None = None

    def runtime_env(self, remote: bool) -> dict[str, Any] | None:
        env: dict[str, Any] = dict(self.config.runtime_env or {})
        if remote and self.config.ship_package:
            modules = list(env.get("py_modules", []))
            if package_dir() not in modules:
                modules.append(package_dir())
            env["py_modules"] = modules
        return env or None

    def start(self) -> None:
        """Blocking: call from a worker thread (``await anyio.to_thread.run_sync``)."""
        if ray.is_initialized():
            return  # someone else's Ray (a notebook, the test session): use it, leave it
        self.address = self.config.address or os.environ.get("RAY_ADDRESS") or None
        kwargs: dict[str, Any] = {"log_to_driver": False, "ignore_reinit_error": True}
        if self.config.namespace:
            kwargs["namespace"] = self.config.namespace
        env = self.runtime_env(remote=self.address is not None)
        if env:
            kwargs["runtime_env"] = env
        if self.address is not None:
            try:
                ray.init(address=self.address, **kwargs)
            except ConnectionError as e:
                raise ConfigError(
                    f"address: no Ray cluster reachable at {self.address!r} ({e}); start one "
                    "(`ray start --head`, `ray up ray_cluster.yaml`) or leave address unset "
                    "to run a local Ray"
                ) from e
        else:
            self._host = _RayHost(
                {"num_cpus": os.cpu_count() or 1, "include_dashboard": False, **kwargs}
            )
            context = self._host.start()
            self.session_dir = context.address_info.get("session_dir")
            if self.session_dir:
                from atlas_actors.watchdog import start_watcher

                self._watcher = start_watcher(self.session_dir)
        self.started = True

    def shutdown(self) -> None:
        """Blocking: shut down what :meth:`start` started, then release the watcher."""
        if self.started and ray.is_initialized():
            if self._host is not None:
                self._host.stop()
            else:
                ray.shutdown()
        self._host = None
        if self._watcher is not None:
            from atlas_actors.watchdog import stop_watcher

            stop_watcher(self._watcher)
            self._watcher = None
        self.started = False


class _RayHost:
    """The thread a local Ray is started from and shut down by (see :class:`RayRuntime`)."""

    def __init__(self, init_kwargs: dict[str, Any]) -> None:
        self._kwargs = init_kwargs
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self._context: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="atlas-ray-host", daemon=True)

    def start(self) -> Any:
        """Start Ray in the thread; its context (``ray.init``'s return value)."""
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self._context

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            self._context = ray.init(**self._kwargs)
        except BaseException as e:
            self._error = e
            return
        finally:
            self._ready.set()
        self._stopping.wait()
        ray.shutdown()


@dataclass
class Progress:
    """What the engine has done so far (cumulative over calls)."""

    submitted: int = 0
    """Tasks handed to the coordinator."""
    skipped: int = 0
    """Tasks skipped because they were already done (``skip=``)."""
    done: int = 0
    solved: int = 0
    errors: int = 0
    evaluations: int = 0
    """Candidate evaluations reported by finished tasks."""
    started_at: float = field(default_factory=time.monotonic)

    @property
    def running(self) -> int:
        return self.submitted - self.done

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started_at

    def record(self, result: TaskResult) -> None:
        self.done += 1
        self.solved += bool(result.solved)
        self.errors += result.error is not None
        self.evaluations += result.evaluations


class Engine(AsyncResource):
    """Ray actors for environments and discriminators, a search coordinator, one API.

    ``environment_factory`` (picklable ``Task -> environment``), ``scorer_factory`` and
    ``solver`` replace the defaults (the registered domains' environments, the
    discriminator's test-evidence scorer — the LLM judge when ``config.llm`` is set — and
    ``solve_task``): for custom domains and for tests.
    """

    def __init__(
        self,
        config: EngineConfig | None = None,
        *,
        environment_factory: EnvironmentFactory | None = None,
        scorer_factory: ScorerFactory | None = None,
        solver: Solver | None = None,
    ) -> None:
        self.config = config or EngineConfig()
        self._environment_factory = environment_factory
        self._scorer_factory = scorer_factory
        self._solver = solver
        self._runtime = RayRuntime(self.config)
        self._coordinator: Any = None
        self._replace_lock = anyio.Lock()
        self.coordinator_restarts = 0
        """New coordinators started after one died."""
        self.workers = 0
        """Environment actors in use (resolved at start)."""
        self.info: dict[str, Any] = {}
        """Where the actors run (filled at start)."""
        self.progress = Progress()

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> Engine:
        if self._coordinator is not None:
            return self
        await anyio.to_thread.run_sync(self._runtime.start)
        try:
            cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
            self.workers = self.config.workers or max(1, int(cpus))
            await self._spawn_coordinator()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.aclose()
            raise
        self.progress = Progress()
        return self

    async def _spawn_coordinator(self) -> None:
        # the coordinator is I/O bound (num_cpus=0) and lives beside the driver (on a
        # cluster: normally the head node), not on a worker that may go away
        here = ray.get_runtime_context().get_node_id()
        opts: dict[str, Any] = {
            "num_cpus": 0,
            "max_concurrency": 10_000,
            "scheduling_strategy": NodeAffinitySchedulingStrategy(here, soft=True),
        }
        if self.config.namespace:
            opts["namespace"] = self.config.namespace
        self._coordinator = SearchCoordinatorActor.options(**opts).remote(
            self.config,
            self.workers,
            environment_factory=self._environment_factory,
            scorer_factory=self._scorer_factory,
            solver=self._solver,
        )
        self.info = await self._coordinator.start.remote()

    async def _replace_coordinator(self, dead: Any, error: RayActorError) -> None:
        """Start a new coordinator in place of ``dead`` (once, however many callers saw
        it die), or raise :class:`ActorError` when the restarts are used up."""
        async with self._replace_lock:
            if self._coordinator is not dead:
                self._coord()  # already replaced by another caller (or closed)
                return
            if self.coordinator_restarts >= self.config.coordinator_restarts:
                raise ActorError(
                    f"the search coordinator died (restarted {self.coordinator_restarts} "
                    f"time(s), coordinator_restarts={self.config.coordinator_restarts}): "
                    f"{error}"
                ) from error
            self.coordinator_restarts += 1
            log.warning(
                "the search coordinator died; starting a new one (%d/%d): %s",
                self.coordinator_restarts,
                self.config.coordinator_restarts,
                error,
            )
            with contextlib.suppress(Exception):
                ray.kill(dead, no_restart=True)
            self._coordinator = None
            await self._spawn_coordinator()

    async def aclose(self) -> None:
        """Stop the actors; shut Ray down if this engine started it."""
        coordinator, self._coordinator = self._coordinator, None
        with anyio.CancelScope(shield=True):
            if coordinator is not None:
                with anyio.move_on_after(30):
                    try:
                        await coordinator.aclose.remote()
                    except Exception:
                        log.debug("coordinator close failed", exc_info=True)
                try:
                    ray.kill(coordinator, no_restart=True)
                except Exception:
                    log.debug("coordinator kill failed", exc_info=True)
            if self._runtime.started:
                await anyio.to_thread.run_sync(self._runtime.shutdown)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    def _coord(self) -> Any:
        if self._coordinator is None:
            raise ConfigError("the engine is not started: use `async with Engine(...)`")
        return self._coordinator

    # -- solving ---------------------------------------------------------------------

    async def solve(self, task: Task) -> TaskResult:
        """Search one task on the actors; cancelling this cancels the remote search.

        If the coordinator dies, a new one is started and the task searched again (up
        to ``coordinator_restarts`` times)."""
        self.progress.submitted += 1
        while True:
            coordinator = self._coord()
            ref = coordinator.solve.remote(task)
            try:
                result: TaskResult = await ref
                break
            except anyio.get_cancelled_exc_class():
                ray.cancel(ref)
                self.progress.submitted -= 1
                raise
            except RayActorError as e:
                try:
                    await self._replace_coordinator(coordinator, e)
                except BaseException:
                    self.progress.submitted -= 1
                    raise
        self.progress.record(result)
        return result

    async def solve_many(
        self, tasks: Iterable[Task], *, skip: Collection[str] = ()
    ) -> AsyncIterator[TaskResult]:
        """Search many tasks concurrently; yield each result as it finishes.

        Tasks whose id is in ``skip`` (e.g. those already in a results file) are not
        searched. Leaving the loop early (``break``, an exception, cancellation)
        cancels the remaining searches; wrap in ``contextlib.aclosing`` to make that
        immediate rather than at garbage collection. If the coordinator dies, a new one
        is started and the tasks whose results had not arrived are submitted again (up
        to ``coordinator_restarts`` times): each task's result is yielded once.
        """
        tasks = list(tasks)
        ids = [t.id for t in tasks]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ConfigError(f"tasks: duplicate task ids {dup[:5]} (ids must be unique)")
        done = set(skip)
        todo = sum(t.id not in done for t in tasks)
        self.progress.skipped += len(tasks) - todo
        if todo == 0:
            return
        self.progress.submitted += todo
        received = 0
        try:
            while received < todo:
                coordinator = self._coord()
                gen = coordinator.solve_many.options(num_returns="streaming").remote(
                    tasks, set(done)
                )
                died: RayActorError | None = None
                try:
                    async for ref in gen:
                        result: TaskResult = await ref
                        received += 1
                        done.add(result.task_id)
                        self.progress.record(result)
                        yield result
                except RayActorError as e:
                    died = e
                finally:
                    if died is None and received < todo:
                        ray.cancel(gen)  # left early: stop the remote searches
                if died is not None:
                    await self._replace_coordinator(coordinator, died)
        finally:
            if received < todo:
                self.progress.submitted -= todo - received

    # -- introspection ----------------------------------------------------------------

    async def stats(self) -> dict[str, Any]:
        """Coordinator counters: tasks, evaluations, actor retries and replacements."""
        stats: dict[str, Any] = await self._coord().stats.remote()
        return stats

    async def health_check(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """Ping every actor (replacing dead or hung ones); where each one runs."""
        info: dict[str, Any] = await self._coord().health_check.remote(timeout_s)
        return info

    async def environment_actors(self) -> list[Any]:
        """The current environment actor handles."""
        actors: list[Any] = await self._coord().environment_actors.remote()
        return actors

    async def discriminator_actors(self) -> list[Any]:
        """The current discriminator actor handles."""
        actors: list[Any] = await self._coord().discriminator_actors.remote()
        return actors

    @property
    def coordinator(self) -> Any:
        """The coordinator actor handle."""
        return self._coord()
