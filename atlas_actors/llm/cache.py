"""On-disk response cache: a rerun costs nothing and replays identically.

One JSON file per sample, named by the SHA-256 of ``(model, messages, parameters,
sample index)`` and sharded by its first two hex digits. Writes go to a temporary
file in the same directory and are renamed into place (atomic on POSIX), so
concurrent writers and readers never see a partial entry; two writers of the same
key write the same kind of record and the last rename wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio.to_thread

CACHE_VERSION = 1


def cache_key(
    model: str, messages: list[dict[str, Any]], params: dict[str, Any], sample_index: int
) -> str:
    """The cache key of one sample: a hex SHA-256 of its canonical JSON."""
    material = json.dumps(
        {
            "v": CACHE_VERSION,
            "model": model,
            "messages": messages,
            "params": params,
            "sample": sample_index,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class ResponseCache:
    """A directory of cached completions (see module docs)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get_sync(self, key: str) -> dict[str, Any] | None:
        """The record stored under ``key``, or None (missing or unreadable)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("text"), str) else None

    def put_sync(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` under ``key`` atomically."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    async def get_many(self, keys: list[str]) -> list[dict[str, Any] | None]:
        """Look up several keys in one worker-thread hop."""
        return await anyio.to_thread.run_sync(lambda: [self.get_sync(k) for k in keys])

    async def put_many(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        """Store several records in one worker-thread hop (not cancelled midway)."""

        def write() -> None:
            for key, record in items:
                self.put_sync(key, record)

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(write)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("??/*.json")) if self.directory.exists() else 0
