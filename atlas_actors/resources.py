"""A base for objects that hold resources: ``async with obj:`` closes them on exit."""

from __future__ import annotations

from types import TracebackType
from typing import Self


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
