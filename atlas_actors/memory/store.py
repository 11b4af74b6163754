"""The experience store: one SQLite file shared by every actor and run on a machine.

Concurrency: the file is in WAL mode (readers never block the one writer), each process
and thread opens its own connection (``busy_timeout`` waits out another writer), and every
write is one short ``BEGIN IMMEDIATE`` transaction that only inserts rows whose features
were computed beforehand. Synchronous mode is FULL: a committed experience survives a
power cut, and a writer killed mid-transaction leaves the last committed state (SQLite
rolls the partial one back). The async methods run the blocking calls in a worker thread
(``anyio.to_thread``), and writes are shielded from cancellation.

WAL needs shared memory between the processes that open the file, so a store must live on
a local disk: on a Ray cluster, one process (the coordinator) should own the store and the
other nodes send their experiences to it.

Opening checks the file (``PRAGMA quick_check`` and the schema). A corrupt or unreadable
file raises :class:`~atlas_actors.errors.CorruptMemoryError` naming the file and the fixes;
with ``reset=True`` the bad file is moved aside (``<name>.corrupt-<timestamp>``) and a
fresh store starts, with a logged warning. Once open, a failed write never raises: the
experience is appended to ``<name>.unsaved.jsonl`` beside the store (imported at the next
open) and a warning is logged; a failed query logs a warning and returns nothing.

Queries: an experience whose task has the query's **fingerprint** (same content, any id)
has similarity 1.0; the others get the domain's feature similarity (see
:mod:`atlas_actors.memory.features`), at most 0.99. Features are parsed, prepared and
stacked once per process and refreshed with the rows added since, so a warm query scores
every stored experience of the domain in one vectorised pass (``scripts/bench_memory_query.py``
measures a cold and a warm query; the figures are in docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import numpy as np
from pydantic import ValidationError

from atlas_actors.errors import ConfigError, CorruptMemoryError, MemoryStoreError
from atlas_actors.memory.features import (
    domain_features,
    is_current,
    task_features,
    task_fingerprint,
)
from atlas_actors.types import Experience, Outcome, Strategy, Task, TaskResult

log = logging.getLogger(__name__)
_Array = np.ndarray[Any, Any]

SCHEMA_VERSION = 1
_META = "atlas_memory_meta"
_FIX = (
    "start a fresh store with --memory-reset (the old file is kept beside it as "
    "{name}.corrupt-<time>), choose another file with --memory PATH, or run with --no-memory"
)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {_META} (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO {_META} (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');
CREATE TABLE IF NOT EXISTS experiences (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    domain TEXT NOT NULL,
    task_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    success INTEGER NOT NULL,
    score REAL NOT NULL,
    strategy TEXT NOT NULL,
    created_at REAL NOT NULL,
    features TEXT NOT NULL,
    experience TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS experiences_domain ON experiences (domain, seq);
CREATE INDEX IF NOT EXISTS experiences_fingerprint ON experiences (fingerprint);
CREATE INDEX IF NOT EXISTS experiences_task ON experiences (domain, task_id);
"""
_COLUMNS = (
    "id, domain, task_id, fingerprint, success, score, strategy, created_at, features, experience"
)


def default_memory_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/atlas-actors/memory.sqlite3`` (``~/.cache`` when unset)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "atlas-actors" / "memory.sqlite3"


def experience_from_result(
    task: Task,
    result: TaskResult,
    *,
    strategy: Strategy | None = None,
    run_id: str | None = None,
    edit_families: Iterable[str] = (),
) -> Experience:
    """The experience of a finished task, from the line a run writes to results.jsonl.

    Success is what the search could check (``result.checks_passed``: every train pair,
    every visible test) and no error; never ``result.solved``, the verdict on hidden
    answers, which memory must not learn from (it is kept in ``outcome.details`` for
    reports). With ``run_id`` the id is ``<run_id>/<task id>``, so recording a retried
    task again is a no-op.
    """
    solved = result.checks_passed
    if not edit_families:
        edit_families = [
            step["source"].removeprefix("offline:")
            for step in result.path
            if step.get("source", "").startswith("offline:")
        ]
    chosen: Any = strategy or result.strategy
    if chosen not in ("direct", "adapt", "evolutionary", "mcts"):
        chosen = "evolutionary"
    extra: dict[str, Any] = {"run_id": run_id}
    if run_id is not None:
        extra["id"] = f"{run_id}/{task.id}"
    return Experience(
        task=task,
        solution=result.solution,
        alternatives=list(result.alternatives),
        outcome=Outcome(
            success=bool(solved) and result.error is None,
            partial_score=min(1.0, max(0.0, result.train_fitness)),
            feedback=result.error or result.feedback,
            doubts=result.doubts,
            details={"solved": result.solved},
        ),
        strategy=chosen,
        evaluations=max(0, result.evaluations),
        seconds=max(0.0, result.seconds),
        usage=dict(result.usage),
        edit_families=list(edit_families),
        settings=result.settings,
        stopped=result.stopped,
        **extra,
    )


@dataclass
class _Rows:
    """The scoring view of one domain's stored experiences, cached per process."""

    last_seq: int = 0
    seqs: _Array = field(default_factory=lambda: np.zeros(0, np.int64))
    success: _Array = field(default_factory=lambda: np.zeros(0, bool))
    score: _Array = field(default_factory=lambda: np.zeros(0))
    created: _Array = field(default_factory=lambda: np.zeros(0))
    by_fingerprint: dict[str, list[int]] = field(default_factory=dict)
    """Positions of each fingerprint's rows."""
    prepared: list[Any] = field(default_factory=list)
    """Prepared features of the rows in ``batch``."""
    batch: Any = None
    batch_index: _Array = field(default_factory=lambda: np.zeros(0, np.int64))
    """Positions of the rows in ``batch`` (rows whose features failed are not in it)."""


class MemorySystem:
    """A persistent experience store (SQLite); see the module docstring.

    ``MemorySystem(path=None, reset=False)``: ``path`` defaults to
    :func:`default_memory_path`. Sync methods end in ``_sync``; the async ones run them in
    a worker thread. Safe to use from many threads, processes and runs at once; picklable
    (a copy reopens the same file in the receiving process).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        reset: bool = False,
        busy_timeout_s: float = 60.0,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_memory_path()
        self.busy_timeout_s = float(busy_timeout_s)
        self.moved_aside: Path | None = None
        """Where ``reset=True`` moved a bad file, if it did."""
        self._local = threading.local()
        self._lock = threading.RLock()
        self._connections: list[sqlite3.Connection] = []
        self._rows: dict[str, _Rows] = {}
        self._closed = False
        try:
            self._open(reset)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ opening

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen, (str(self.path), self.busy_timeout_s))

    def __repr__(self) -> str:
        return f"MemorySystem({str(self.path)!r})"

    @property
    def unsaved_path(self) -> Path:
        """Where experiences go when the store cannot be written."""
        return self.path.with_name(self.path.name + ".unsaved.jsonl")

    def _problem(self, name: str, problem: str) -> CorruptMemoryError:
        return CorruptMemoryError(
            f"memory store {self.path} {problem}; " + _FIX.format(name=self.path.name)
        )

    def _open(self, reset: bool) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise MemoryStoreError(
                f"cannot create the folder of memory store {self.path}: {e}; choose another "
                "file with --memory PATH or run with --no-memory"
            ) from e
        with self._file_lock():
            problem = self._check()
            if problem is not None:
                if not reset or not self.path.is_file():  # only a file is moved aside
                    raise self._problem(self.path.name, problem)
                self.moved_aside = self._move_aside()
                log.warning(
                    "memory store %s %s: moved it to %s and started a fresh store",
                    self.path,
                    problem,
                    self.moved_aside,
                )
                problem = self._check()
                if problem is not None:
                    raise self._problem(self.path.name, problem)
            try:
                conn = self._conn()
                conn.execute("PRAGMA journal_mode=WAL")
                with self._write() as c:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            c.execute(statement)
            except sqlite3.Error as e:
                raise self._problem(self.path.name, f"cannot be initialised ({e})") from e
        self._recover_unsaved()

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """An exclusive lock beside the store, held while it is checked or reset."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise MemoryStoreError(
                f"cannot lock memory store {self.path} ({lock_path}: {e}); choose another "
                "file with --memory PATH or run with --no-memory"
            ) from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _check(self) -> str | None:
        """What is wrong with the file, or None (also when it does not exist yet)."""
        if not self.path.exists():
            return None
        if not self.path.is_file():
            return "is not a file"
        if not os.access(self.path, os.R_OK | os.W_OK):
            return "cannot be read and written (permissions)"
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s)
        except sqlite3.Error as e:
            return f"cannot be opened ({e})"
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
            check = [r[0] for r in conn.execute("PRAGMA quick_check")]
            if check != ["ok"]:
                return f"is corrupt (quick_check: {'; '.join(map(str, check[:3]))})"
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if not tables:
                return None
            if _META not in tables:
                return "is a SQLite database but not an atlas-actors memory store"
            row = conn.execute(f"SELECT value FROM {_META} WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                return f"was written by a newer atlas-actors (schema {version} > {SCHEMA_VERSION})"
        except (sqlite3.Error, ValueError) as e:
            return f"is not a readable SQLite database ({e})"
        finally:
            conn.close()
        return None

    def _move_aside(self) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
            n += 1
        try:
            os.replace(self.path, target)
            for suffix in ("-wal", "-shm", "-journal"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, target.with_name(target.name + suffix))
        except OSError as e:
            raise MemoryStoreError(
                f"cannot move the bad memory store {self.path} aside: {e}; choose another "
                "file with --memory PATH or run with --no-memory"
            ) from e
        return target

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (a new one after a fork)."""
        if self._closed:
            raise MemoryStoreError(f"memory store {self.path} is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA synchronous=FULL")
            self._local.conn, self._local.pid = conn, os.getpid()
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this object opened (in any thread)."""
        with self._lock:
            self._closed = True
            for conn in self._connections:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._connections.clear()
            self._rows.clear()

    def __enter__(self) -> MemorySystem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MemorySystem:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    def complete(self, experience: Experience) -> Experience:
        """``experience`` with its fingerprint and current features filled in."""
        update: dict[str, Any] = {}
        if not experience.fingerprint:
            update["fingerprint"] = task_fingerprint(experience.task)
        if not is_current(experience.features, experience.domain):
            update["features"] = task_features(experience.task, experience.solution, hindsight=True)
        return experience.model_copy(update=update) if update else experience

    @staticmethod
    def _row(e: Experience) -> tuple[Any, ...]:
        body = e.model_dump_json(exclude={"features"})
        return (
            e.id,
            e.domain,
            e.task.id,
            e.fingerprint,
            int(e.success),
            e.score,
            e.strategy,
            e.created_at.timestamp(),
            json.dumps(e.features, separators=(",", ":")),
            body,
        )

    def record_many_sync(self, experiences: Iterable[Experience]) -> int:
        """Store experiences in one transaction; returns how many were new (by id).

        Never raises for a store fault: what could not be written goes to
        :attr:`unsaved_path` (with a warning) and is imported at the next open.
        """
        done = [self.complete(e) for e in experiences]
        if not done:
            return 0
        try:
            with self._write() as c:
                before = c.total_changes
                c.executemany(
                    f"INSERT OR IGNORE INTO experiences ({_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [self._row(e) for e in done],
                )
                return c.total_changes - before
        except (sqlite3.Error, MemoryStoreError) as e:
            self._save_unsaved(done, e)
            return 0

    def record_sync(self, experience: Experience) -> Experience:
        """Store one experience (see :meth:`record_many_sync`); returns it completed."""
        done = self.complete(experience)
        self.record_many_sync([done])
        return done

    async def record(self, experience: Experience) -> Experience:
        """:meth:`record_sync` in a worker thread, shielded from cancellation."""
        with anyio.CancelScope(shield=True):
            done = await anyio.to_thread.run_sync(self.record_sync, experience)
        return done

    async def record_many(self, experiences: Iterable[Experience]) -> int:
        """:meth:`record_many_sync` in a worker thread, shielded from cancellation."""
        items = list(experiences)
        with anyio.CancelScope(shield=True):
            n = await anyio.to_thread.run_sync(self.record_many_sync, items)
        return n

    def _save_unsaved(self, experiences: list[Experience], error: Exception) -> None:
        lines = "".join(e.model_dump_json() + "\n" for e in experiences).encode("utf-8")
        try:
            fd = os.open(self.unsaved_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, lines)
            finally:
                os.close(fd)
        except OSError as e2:
            log.error(
                "memory store %s: could not record %d experience(s) (%s), nor save them to %s (%s)",
                self.path,
                len(experiences),
                error,
                self.unsaved_path,
                e2,
            )
            return
        log.warning(
            "memory store %s: could not record %d experience(s) (%s); saved them to %s, "
            "imported at the next open",
            self.path,
            len(experiences),
            error,
            self.unsaved_path,
        )

    def _recover_unsaved(self) -> None:
        if not self.unsaved_path.exists():
            return
        taken = self.unsaved_path.with_name(f"{self.unsaved_path.name}.{os.getpid()}")
        try:
            os.replace(self.unsaved_path, taken)
        except OSError:
            return  # another process took it
        try:
            n = self.import_jsonl_sync(taken)
        except (ConfigError, OSError) as e:
            log.warning("memory store %s: could not import %s: %s", self.path, taken, e)
            return
        taken.unlink(missing_ok=True)
        log.info("memory store %s: imported %d unsaved experience(s)", self.path, n)

    # ------------------------------------------------------------------ reading

    def _refresh(self, domain: str) -> _Rows:
        """The cached rows of ``domain``, with the rows stored since the last call."""
        rows = self._rows.setdefault(domain, _Rows())
        entry = domain_features(domain)
        new = (
            self._conn()
            .execute(
                "SELECT seq, fingerprint, success, score, created_at, features "
                "FROM experiences WHERE domain = ? AND seq > ? ORDER BY seq",
                (domain, rows.last_seq),
            )
            .fetchall()
        )
        if not new:
            return rows
        stale: list[tuple[str, int]] = []
        prepared: list[Any] = []
        index: list[int] = []
        for pos, (seq, fp, _, _, _, features_json) in enumerate(new, len(rows.seqs)):
            features = json.loads(features_json)
            if not is_current(features, domain):
                features = self._recompute(seq)
                stale.append((json.dumps(features, separators=(",", ":")), seq))
            rows.by_fingerprint.setdefault(fp, []).append(pos)
            if "error" not in features:
                prepared.append(entry.prepare(features))
                index.append(pos)
        cols = list(zip(*new, strict=True))
        rows.seqs = np.concatenate([rows.seqs, np.asarray(cols[0], np.int64)])
        rows.success = np.concatenate([rows.success, np.asarray(cols[2], bool)])
        rows.score = np.concatenate([rows.score, np.asarray(cols[3], np.float64)])
        rows.created = np.concatenate([rows.created, np.asarray(cols[4], np.float64)])
        rows.last_seq = int(new[-1][0])
        if prepared:
            if rows.batch is None:
                rows.batch = entry.stack(prepared)
                rows.prepared = prepared if entry.extend is None else []
            elif entry.extend is not None:
                rows.batch = entry.extend(rows.batch, prepared)
            else:
                rows.prepared.extend(prepared)
                rows.batch = entry.stack(rows.prepared)
            rows.batch_index = np.concatenate([rows.batch_index, np.asarray(index, np.int64)])
        if stale:
            with contextlib.suppress(sqlite3.Error), self._write() as c:
                c.executemany("UPDATE experiences SET features = ? WHERE seq = ?", stale)
        return rows

    def _recompute(self, seq: int) -> dict[str, Any]:
        """Current features of a stored row whose features are stale."""
        (body,) = (
            self._conn()
            .execute("SELECT experience FROM experiences WHERE seq = ?", (seq,))
            .fetchone()
        )
        exp = Experience.model_validate_json(body)
        return task_features(exp.task, exp.solution, hindsight=True)

    def query_sync(
        self,
        task: Task,
        k: int = 5,
        *,
        successful_only: bool = False,
        min_similarity: float = 0.0,
    ) -> list[tuple[Experience, float]]:
        """The ``k`` stored experiences of ``task``'s domain most similar to it, with their
        similarity in [0, 1], most similar first (ties: successful, higher score, newer).

        An exact repeat (same fingerprint) has 1.0. Returns [] on a store fault (logged).
        """
        if k <= 0:
            return []
        entry = domain_features(task.domain)
        fingerprint = task_fingerprint(task)
        features = task_features(task, None, hindsight=False)
        try:
            with self._lock:
                rows = self._refresh(task.domain)
                sims = np.zeros(len(rows.seqs))
                if "error" not in features and len(rows.batch_index):
                    sims[rows.batch_index] = entry.score(
                        entry.prepare(features), rows.batch, len(rows.batch_index)
                    )
                sims[rows.by_fingerprint.get(fingerprint, [])] = 1.0
                keep = sims >= min_similarity
                if successful_only:
                    keep &= rows.success
                pos = np.flatnonzero(keep)
                order = np.lexsort(
                    (
                        rows.seqs[pos],
                        rows.created[pos],
                        rows.score[pos],
                        rows.success[pos],
                        sims[pos],
                    )
                )
                top = pos[order[::-1][:k]]
                ranked = [(int(rows.seqs[i]), float(sims[i])) for i in top]
            if not ranked:
                return []
            found = self._load([seq for seq, _ in ranked])
        except (sqlite3.Error, ValueError) as e:  # ValueError: a damaged row
            log.warning("memory store %s: query for %s failed: %s", self.path, task.id, e)
            return []
        return [(found[seq], sim) for seq, sim in ranked if seq in found]

    async def query(
        self,
        task: Task,
        k: int = 5,
        *,
        successful_only: bool = False,
        min_similarity: float = 0.0,
    ) -> list[tuple[Experience, float]]:
        """:meth:`query_sync` in a worker thread."""
        return await anyio.to_thread.run_sync(
            partial(
                self.query_sync,
                task,
                k,
                successful_only=successful_only,
                min_similarity=min_similarity,
            )
        )

    def _load(self, seqs: list[int]) -> dict[int, Experience]:
        marks = ",".join("?" * len(seqs))
        rows = self._conn().execute(
            f"SELECT seq, features, experience FROM experiences WHERE seq IN ({marks})", seqs
        )
        return {seq: _experience(features, body) for seq, features, body in rows}

    def repeats_sync(self, task: Task) -> list[Experience]:
        """Stored experiences of exactly this task's content (any id), oldest first."""
        rows = self._conn().execute(
            "SELECT features, experience FROM experiences WHERE fingerprint = ? ORDER BY seq",
            (task_fingerprint(task),),
        )
        return [_experience(f, b) for f, b in rows]

    async def repeats(self, task: Task) -> list[Experience]:
        """:meth:`repeats_sync` in a worker thread."""
        return await anyio.to_thread.run_sync(self.repeats_sync, task)

    def get_sync(self, experience_id: str) -> Experience | None:
        """The experience stored under ``experience_id``, or None."""
        row = (
            self._conn()
            .execute("SELECT features, experience FROM experiences WHERE id = ?", (experience_id,))
            .fetchone()
        )
        return _experience(*row) if row else None

    def experiences_sync(self, domain: str | None = None) -> Iterator[Experience]:
        """Every stored experience (of ``domain``), oldest first."""
        where, args = ("WHERE domain = ?", (domain,)) if domain else ("", ())
        cursor = self._conn().execute(
            f"SELECT features, experience FROM experiences {where} ORDER BY seq", args
        )
        for features, body in cursor:
            yield _experience(features, body)

    def count_sync(self, domain: str | None = None) -> int:
        """How many experiences are stored (of ``domain``)."""
        where, args = ("WHERE domain = ?", (domain,)) if domain else ("", ())
        return int(
            self._conn().execute(f"SELECT count(*) FROM experiences {where}", args).fetchone()[0]
        )

    def __len__(self) -> int:
        return self.count_sync()

    async def count(self, domain: str | None = None) -> int:
        """:meth:`count_sync` in a worker thread."""
        return await anyio.to_thread.run_sync(self.count_sync, domain)

    # ------------------------------------------------------------------ JSONL

    def export_jsonl_sync(self, path: str | os.PathLike[str], domain: str | None = None) -> int:
        """Write every experience (of ``domain``), one JSON object a line, oldest first;
        atomic (a temporary file renamed into place). Returns how many."""
        target = Path(path)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        n = 0
        try:
            with tmp.open("w", encoding="utf-8") as f:
                for e in self.experiences_sync(domain):
                    f.write(e.model_dump_json() + "\n")
                    n += 1
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        return n

    def import_jsonl_sync(self, path: str | os.PathLike[str]) -> int:
        """Store the experiences of a JSONL file (ids already stored are skipped);
        returns how many were new. A bad line raises ConfigError naming file and line."""
        p = Path(path)
        items: list[Experience] = []
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"cannot read memory export {p}: {e}") from e
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(Experience.model_validate_json(line))
            except ValidationError as e:
                raise ConfigError(f"{p}, line {n}: not an experience: {e}") from None
        return self.record_many_sync(items)

    async def export_jsonl(self, path: str | os.PathLike[str], domain: str | None = None) -> int:
        """:meth:`export_jsonl_sync` in a worker thread."""
        return await anyio.to_thread.run_sync(self.export_jsonl_sync, path, domain)

    async def import_jsonl(self, path: str | os.PathLike[str]) -> int:
        """:meth:`import_jsonl_sync` in a worker thread, shielded from cancellation."""
        with anyio.CancelScope(shield=True):
            n = await anyio.to_thread.run_sync(self.import_jsonl_sync, path)
        return n


def _experience(features: str, body: str) -> Experience:
    return Experience.model_validate_json(body).model_copy(
        update={"features": json.loads(features)}
    )


def _reopen(path: str, busy_timeout_s: float) -> MemorySystem:
    return MemorySystem(path, busy_timeout_s=busy_timeout_s)
