"""What the ``atlas-actors`` commands share: argument types, the engine and LLM flags,
the run folder (``results.jsonl`` appended as tasks finish, atomic JSON files), and
the progress bar.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas_actors.config import EngineConfig, LLMConfig, RouterConfig
from atlas_actors.errors import ConfigError
from atlas_actors.types import TaskResult

if TYPE_CHECKING:
    from atlas_actors.memory.session import MemorySession


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def add_engine_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine")
    g.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="environment actors (default: one per CPU)",
    )
    g.add_argument(
        "--address",
        metavar="ADDR",
        help="Ray cluster to join, e.g. auto or ray://head:10001 "
        "(default: $RAY_ADDRESS, else a local Ray on this machine)",
    )
    g.add_argument(
        "--no-ray",
        action="store_true",
        help="run in this process without Ray (one task at a time; for debugging)",
    )


def add_memory_flags(p: argparse.ArgumentParser) -> None:
    """The experience-memory flags (see ``atlas_actors.memory``)."""
    g = p.add_argument_group("memory")
    g.add_argument(
        "--memory",
        metavar="PATH",
        help="experience store (SQLite) that routes tasks and remembers solutions "
        "(default: $XDG_CACHE_HOME/atlas-actors/memory.sqlite3, else "
        "~/.cache/atlas-actors/memory.sqlite3)",
    )
    g.add_argument(
        "--no-memory",
        action="store_true",
        help="no memory: every task starts cold and nothing is remembered",
    )
    g.add_argument(
        "--memory-reset",
        action="store_true",
        help="if the store is unreadable or corrupt, move it aside (NAME.corrupt-TIME) "
        "and start a fresh one (otherwise that is an error naming the file)",
    )
    g.add_argument(
        "--retry-unsolved",
        action="store_true",
        help="search again a task memory holds as searched without success (or with an "
        "answer the environment doubted) under the same settings (default: answer it from "
        "memory, re-verifying its best solutions)",
    )


def router_config(args: argparse.Namespace) -> RouterConfig:
    """The routing the memory flags choose."""
    return RouterConfig(recall_unsolved=not getattr(args, "retry_unsolved", False))


def memory_path(args: argparse.Namespace) -> str | None:
    """The experience store the flags choose, or None with ``--no-memory``."""
    if args.no_memory:
        if args.memory:
            raise ConfigError("--memory and --no-memory: choose one")
        return None
    if args.memory:
        return str(args.memory)
    from atlas_actors.memory import default_memory_path

    return str(default_memory_path())


def routes_of(results: Sequence[TaskResult]) -> dict[str, int]:
    """Tasks per routed strategy (``adapt``, ``direct``, ``evolutionary``, ``mcts``)."""
    routes: dict[str, int] = {}
    for r in results:
        if r.routing:
            key = str(r.routing.get("strategy"))
            routes[key] = routes.get(key, 0) + 1
    return routes


def run_id(out_dir: Path) -> str:
    """A run's id in memory: its output folder (a resumed run records under the same id,
    so a task is never remembered twice)."""
    return str(out_dir.resolve())


def session_of(config: EngineConfig) -> MemorySession:
    """The memory session a ``--no-ray`` run routes and remembers with (with Ray, the
    search coordinator holds one made the same way)."""
    from atlas_actors.memory.session import MemorySession

    return MemorySession(
        config.memory, reset=config.memory_reset, router=config.router, run_id=config.run_id
    )


def add_llm_flags(p: argparse.ArgumentParser, *, offline: str) -> None:
    """The flags of an OpenAI-compatible LLM endpoint (``offline``: what runs without)."""
    llm = p.add_argument_group("LLM (optional)")
    llm.add_argument(
        "--llm-base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM) "
        f"or http://127.0.0.1:11434/v1 (Ollama); without it {offline} is used",
    )
    llm.add_argument("--model", default="default", help="model name at the endpoint")
    llm.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default: OPENAI_API_KEY)",
    )
    llm.add_argument(
        "--max-concurrency",
        type=positive_int,
        default=16,
        metavar="N",
        help="LLM requests in flight at once (default: 16)",
    )
    llm.add_argument(
        "--llm-cache",
        metavar="DIR",
        help="on-disk response cache (default: DIR/llm-cache under --out)",
    )


def proposer_mode(args: argparse.Namespace) -> str:
    """``--proposer``, or its default: ``llm`` with ``--llm-base-url``, else ``offline``;
    ``llm`` and ``hybrid`` without an endpoint are a ``ConfigError`` naming the flag."""
    proposer = str(args.proposer or ("llm" if args.llm_base_url else "offline"))
    if proposer in ("llm", "hybrid") and not args.llm_base_url:
        raise ConfigError(f"--proposer {proposer} needs --llm-base-url (an LLM endpoint)")
    return proposer


def llm_config(args: argparse.Namespace, out_dir: Path) -> LLMConfig | None:
    """The LLM endpoint the flags name, or None without ``--llm-base-url``."""
    if not args.llm_base_url:
        return None
    return LLMConfig(
        base_url=args.llm_base_url,
        model=args.model,
        api_key_env=args.api_key_env,
        max_concurrency=args.max_concurrency,
        cache_dir=args.llm_cache or str(out_dir / "llm-cache"),
    )


def split_ids(values: Sequence[str]) -> list[str]:
    """``--ids`` values (repeatable, comma-separated) as one list."""
    return [i.strip() for chunk in values for i in chunk.split(",") if i.strip()]


class ResultsLog:
    """``results.jsonl`` in a run folder: one line per finished task, appended as it ends.

    Each line is written with a single ``write`` in append mode and flushed to disk, so
    a killed run leaves at most one partial last line, which :meth:`load` drops.
    """

    def __init__(self, out_dir: Path) -> None:
        self.dir = out_dir
        self.path = out_dir / "results.jsonl"

    def load(self) -> list[TaskResult]:
        if not self.path.exists():
            return []
        results: list[TaskResult] = []
        good_bytes = 0
        with self.path.open("rb") as f:
            for raw in f:
                try:
                    results.append(TaskResult.model_validate_json(raw))
                except ValueError:
                    break  # a line cut short by a kill: everything after it is redone
                good_bytes += len(raw)
        if good_bytes != self.path.stat().st_size:
            with self.path.open("r+b") as f:
                f.truncate(good_bytes)
        return results

    def append(self, result: TaskResult) -> None:
        line = (result.model_dump_json() + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)


def prepare_out_dir(out_dir: Path, resume: bool) -> ResultsLog:
    """Create the run folder; refuse to mix a new run into an old one's results."""
    log = ResultsLog(out_dir)
    if log.path.exists() and not resume:
        raise ConfigError(
            f"--out: {out_dir} already holds results.jsonl; add --resume to continue that run "
            "or choose another --out"
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out: {out_dir} exists and is not a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    return log


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    pos = q * (len(values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


class RunProgress:
    """Progress of a run: a rich progress bar in a terminal (tasks done, solved so far,
    rate, elapsed and remaining time); outside one (a CI log, ``| tee``), where a bar
    would be cut to the console's guessed width, one plain line per finished task, and
    the running note (:meth:`note`) at most every ``note_every_s`` seconds."""

    def __init__(
        self,
        console: Any,
        total: int,
        already: int,
        results: list[TaskResult],
        label: str = "tasks",
        *,
        note_every_s: float = 30.0,
    ) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self.results = results
        self.label = label
        self.total = total
        self.done = already
        self.start = time.monotonic()
        self.new = 0
        self.lines = not console.is_terminal
        """Plain lines instead of the bar (not a terminal)."""
        self.note_every_s = note_every_s
        self._noted_at = -math.inf
        self.bar = Progress(
            TextColumn(f"[bold]{label}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("solved {task.fields[solved]}"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=console.quiet or self.lines,
        )
        self.task = self.bar.add_task(
            "tasks", total=total, completed=already, solved=self._solved(), rate="", note=""
        )

    def _solved(self) -> str:
        known = [r for r in self.results if r.solved is not None]
        return f"{sum(1 for r in known if r.solved)}/{len(known)}"

    def __enter__(self) -> RunProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)

    def note(self, text: str) -> None:
        """Show ``text`` after the rate (e.g. a search's running counters)."""
        self.bar.update(self.task, note=text)
        now = time.monotonic()
        if self.lines and now - self._noted_at >= self.note_every_s:
            self._noted_at = now
            self._line(text)

    def _rate(self) -> str:
        """Tasks finished per minute in this run."""
        return f"{self.new / max(1e-9, time.monotonic() - self.start) * 60:.1f} tasks/min"

    def __call__(self, result: TaskResult) -> None:
        self.new += 1
        self.done += 1
        self.bar.update(self.task, advance=1, solved=self._solved(), rate=self._rate())
        if self.lines:
            self._line(f"{result.task_id}: {_verdict(result)} in {result.seconds:.1f} s")

    def _line(self, tail: str) -> None:
        """One progress line (the counts, the rate, elapsed and remaining time, ``tail``)."""
        if self.console.quiet:
            return
        elapsed = time.monotonic() - self.start
        parts = [f"{self.label} {self.done}/{self.total}", f"solved {self._solved()}"]
        if self.new:
            parts.append(self._rate())
        parts.append(f"elapsed {_clock(elapsed)}")
        if self.new:
            left = elapsed / self.new * (self.total - self.done)
            parts.append(f"remaining ~{_clock(left)}")
        parts.append(tail)
        self.console.print("  ".join(parts), markup=False, highlight=False, soft_wrap=True)


def _verdict(result: TaskResult) -> str:
    if result.error is not None:
        return "error"
    if result.solved is not None:
        return "solved" if result.solved else "not solved"
    return "checks passed" if result.checks_passed else "checks failed"


def _clock(seconds: float) -> str:
    """``H:MM:SS``."""
    s = int(max(0.0, seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
