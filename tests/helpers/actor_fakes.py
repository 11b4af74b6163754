"""Test doubles for the actor tests: a tiny deterministic environment and solver.

Pickled *by value* into the Ray workers (``register_pickle_by_value``), since the
workers cannot import this test folder.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from atlas_actors.config import LLMConfig, MindEvolutionConfig
from atlas_actors.environments.base import Evaluator
from atlas_actors.types import Outcome, Task, TaskResult


def stable_score(task_id: str, solution: Any) -> float:
    digest = hashlib.sha256(f"{task_id}|{solution}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


class FakeEnvironment:
    """Scores a solution by a hash (deterministic), with knobs for fault tests.

    * ``delay_s``: seconds of async sleep per call (keeps a run busy for kill tests);
    * a solution ``"hang"`` blocks the actor's whole process (``time.sleep``) the first
      time it is seen (a marker file in ``state_dir`` remembers it), like a wedged
      verifier;
    * a solution ``"slow"`` sleeps (cancellably) for a minute, writing ``start`` /
      ``end`` / ``cancelled`` lines to ``state_dir/calls.log``.
    """

    def __init__(self, state_dir: str | None = None, delay_s: float = 0.0) -> None:
        self.state_dir = Path(state_dir) if state_dir else None
        self.delay_s = delay_s
        self._task: Task | None = None

    async def reset(self, task: Task) -> str:
        self._task = task
        return task.description

    async def verify(self, solution: Any) -> Outcome:
        return (await self.score([solution]))[0]

    async def score(self, solutions: Sequence[Any]) -> list[Outcome]:
        assert self._task is not None
        if self.delay_s:
            await anyio.sleep(self.delay_s)
        for s in solutions:
            if s == "hang" and self.state_dir is not None:
                marker = self.state_dir / "hung-once"
                if not marker.exists():
                    marker.write_text(str(os.getpid()))
                    time.sleep(3600)
            if s == "slow" and self.state_dir is not None:
                await self._slow()
        out = []
        for s in solutions:
            v = stable_score(self._task.id, s)
            out.append(Outcome(success=v > 0.999, partial_score=v, feedback=f"{s}"))
        return out

    async def _slow(self) -> None:
        assert self.state_dir is not None
        log = self.state_dir / "calls.log"
        with log.open("a") as f:
            f.write(f"start {os.getpid()}\n")
        try:
            await anyio.sleep(60)
        except BaseException:
            with log.open("a") as f:
                f.write(f"cancelled {os.getpid()}\n")
            raise
        with log.open("a") as f:
            f.write(f"end {os.getpid()}\n")

    @property
    def task(self) -> Task:
        assert self._task is not None
        return self._task


class FakeFactory:
    """Picklable ``Task -> FakeEnvironment`` factory."""

    def __init__(self, state_dir: str | None = None, delay_s: float = 0.0) -> None:
        self.state_dir = state_dir
        self.delay_s = delay_s

    def __call__(self, task: Task) -> FakeEnvironment:
        return FakeEnvironment(self.state_dir, self.delay_s)


async def fake_solver(
    task: Task,
    evaluator: Evaluator,
    *,
    config: MindEvolutionConfig,
    seed: int,
    llm: LLMConfig | None = None,
    **options: Any,
) -> TaskResult:
    """A deterministic 'search': generations of solutions named by seed and index.

    ``task.context`` may hold ``generations``, ``batch`` and ``extra`` (solutions
    added to the first generation, e.g. ``["hang"]``).
    """
    generations = int(task.context.get("generations", 3))
    batch = int(task.context.get("batch", 16))
    best: tuple[float, Any] = (-1.0, None)
    evaluations = 0
    start = time.monotonic()
    for g in range(generations):
        solutions: list[Any] = [f"s{seed}-g{g}-{i}" for i in range(batch)]
        if g == 0:
            solutions += list(task.context.get("extra", []))
        outcomes = await evaluator.evaluate(task, solutions)
        assert len(outcomes) == len(solutions)
        evaluations += len(outcomes)
        for s, o in zip(solutions, outcomes, strict=True):
            best = max(best, (o.partial_score, s), key=lambda x: x[0])
    return TaskResult(
        task_id=task.id,
        domain=task.domain,
        train_fitness=best[0],
        solution=best[1],
        evaluations=evaluations,
        generations=generations,
        seconds=time.monotonic() - start,
        stopped="generations",
    )


async def failing_solver(
    task: Task,
    evaluator: Evaluator,
    *,
    config: MindEvolutionConfig,
    seed: int,
    llm: LLMConfig | None = None,
    **options: Any,
) -> TaskResult:
    if task.id.startswith("bad"):
        raise ValueError(f"cannot search {task.id}")
    return await fake_solver(task, evaluator, config=config, seed=seed, llm=llm)
