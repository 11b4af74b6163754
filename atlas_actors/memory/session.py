"""A run's use of memory: route each task, remember each finished one.

:class:`MemorySession` is what the search coordinator (and a ``--no-ray`` run) holds: it
opens the experience store once, asks the router for every task, and records every
finished task. Without a store it still routes, by domain.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio.to_thread

from atlas_actors.config import RouterConfig
from atlas_actors.search.router import EnhancedTaskRouter
from atlas_actors.types import RoutingDecision, Task, TaskResult


class MemorySession:
    """Routing and remembering for one run.

    Args:
        path: the experience store (None: no memory; tasks are routed by domain).
        reset: move an unreadable store aside and start a fresh one.
        router: routing thresholds.
        run_id: identifies this run's experiences (recording a task twice is a no-op).
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        reset: bool = False,
        router: RouterConfig | None = None,
        run_id: str | None = None,
    ) -> None:
        self.path = path
        self.reset = reset
        self.run_id = run_id
        self.memory: Any = None
        self.router = EnhancedTaskRouter(None, router)
        self.routes: dict[str, int] = {}
        """Tasks per routed strategy."""
        self.recorded = 0

    async def open(self) -> MemorySession:
        """Open the store (a corrupt one raises a clear error unless ``reset``)."""
        if self.path is not None and self.memory is None:
            from atlas_actors.memory.store import MemorySystem

            self.memory = await anyio.to_thread.run_sync(
                functools.partial(MemorySystem, self.path, reset=self.reset)
            )
            self.router.memory = self.memory
        return self

    async def route(self, task: Task) -> RoutingDecision:
        """The router's decision for ``task`` (by domain when there is no memory)."""
        decision = await self.router.route(task)
        self.routes[decision.strategy] = self.routes.get(decision.strategy, 0) + 1
        return decision

    async def remember(self, task: Task, result: TaskResult) -> None:
        """Record a finished task (a failed write is kept aside by the store, logged,
        and never loses the result)."""
        if self.memory is None or result.error is not None:
            return
        from atlas_actors.memory.store import experience_from_result

        await self.memory.record(experience_from_result(task, result, run_id=self.run_id))
        self.recorded += 1

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None
