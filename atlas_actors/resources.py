"""Objects that hold resources: a base whose ``async with`` closes them on exit, and the
objects shared per process (LLM proposers and clients, one per domain and endpoint, so
one concurrency limit, connection pool and response cache serve every task a process
searches)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from types import TracebackType
from typing import Any, Self


class AsyncResource:
    """Subclasses implement ``aclose()``; ``async with`` calls it on the way out."""

    async def aclose(self) -> None:
        """Release what the object holds (idempotent)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


_lock = threading.Lock()
_shared: dict[Hashable, Any] = {}


def shared_resource(key: Hashable, factory: Callable[[], Any]) -> Any:
    """The object kept under ``key`` in this process, made by ``factory`` on first use."""
    with _lock:
        proposer = _shared.get(key)
        if proposer is None:
            proposer = factory()
            _shared[key] = proposer
        return proposer


async def close_shared_resources() -> None:
    """Close the shared objects (their connection pools); call at the end of a run."""
    with _lock:
        proposers = list(_shared.values())
        _shared.clear()
    for proposer in proposers:
        close = getattr(proposer, "aclose", None)
        if close is not None:
            await close()
