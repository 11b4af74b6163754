"""Core data types shared by environments, searches, actors and the CLI.

Every type is a pydantic v2 model: JSON round-trips with ``model_dump_json`` /
``model_validate_json`` and pickles (so it crosses Ray actor boundaries).

Solutions are plain JSON values (a DSL program as nested lists, Python source as a
string, a patch as a string), so candidates serialise without custom encoders.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Strategy = Literal["direct", "adapt", "evolutionary", "mcts"]
"""Search strategies the router can pick."""

Origin = Literal["init", "mutation", "crossover", "memory", "migration", "manual"]
"""How a candidate came to be."""


def new_id() -> str:
    """A short random identifier for candidates and runs."""
    return uuid.uuid4().hex[:12]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Task(_Model):
    """A problem to solve in some domain."""

    id: str = Field(min_length=1)
    """Unique identifier (an ARC task id, a SWE-bench instance id, ...)."""
    domain: str = "generic"
    """Which environment verifies it: ``arc``, ``swe`` or anything else (passthrough)."""
    description: str = ""
    """Human-readable statement of the problem."""
    context: dict[str, Any] = Field(default_factory=dict)
    """Domain data: ``arc_task_id``/``grids`` for ARC, the instance fields for SWE."""


class Outcome(_Model):
    """The verdict of an environment on one solution.

    A failed verification is an Outcome with ``success=False``, never an exception.
    """

    success: bool
    """True when the solution fully solves the task (as far as the verifier can tell)."""
    partial_score: float = Field(default=0.0, ge=0.0, le=1.0)
    """How close the solution is, in [0, 1]; searches use it as fitness."""
    feedback: str = ""
    """Text a person or an LLM can act on: what was wrong and where."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Machine-readable extras (per-pair results, predictions, test lists, ...)."""


class Candidate(_Model):
    """One solution a search produced, with its provenance and verdict."""

    id: str = Field(default_factory=new_id)
    solution: Any
    """The solution itself, a JSON value (DSL program, Python source, patch)."""
    outcome: Outcome | None = None
    """The evaluator's verdict, once evaluated."""
    fitness: float = 0.0
    """Fitness used for ranking (the outcome's ``partial_score``)."""
    origin: Origin = "init"
    parents: list[str] = Field(default_factory=list)
    """Ids of the candidates this one was derived from."""
    generation: int = 0
    island: int = 0
    cost: dict[str, float] = Field(default_factory=dict)
    """Resources spent producing it (``evaluations``, ``llm_calls``, ``tokens_in`` ...)."""


class Experience(_Model):
    """A solved (or attempted) task remembered for later routing and seeding."""

    task: Task
    solution: Any = None
    outcome: Outcome
    strategy: Strategy = "evolutionary"
    evaluations: int = 0
    seconds: float = 0.0


class RoutingDecision(_Model):
    """Which strategy to use for a task, and why."""

    strategy: Strategy
    reason: str = ""
    similarity: float = Field(default=0.0, ge=0.0, le=1.0)
    """Highest similarity to a remembered experience."""
    experiences: list[Experience] = Field(default_factory=list)
    """Remembered experiences the strategy may start from."""


class TaskResult(_Model):
    """What a run reports for one task (one line of ``results.jsonl``)."""

    task_id: str
    domain: str = "generic"
    solved: bool | None = None
    """Verified against the hidden answers; None when they are unknown."""
    train_fitness: float = 0.0
    """Fraction of what the search could check that the best solution gets right
    (ARC: train pairs exactly right; 1.0 = all)."""
    evaluations: int = 0
    """Candidate evaluations spent."""
    seconds: float = 0.0
    generations: int = 0
    stopped: str = ""
    """Why the search stopped: ``success``, ``evaluations``, ``time``, ``generations``."""
    strategy: str = "evolutionary"
    program: str | None = None
    """The best solution, readable (ARC: Python source of the program)."""
    solution: Any = None
    """The best solution as data."""
    attempts: list[dict[str, Any]] | None = None
    """ARC: one ``{"attempt_1": grid, "attempt_2": grid}`` per test input."""
    feedback: str = ""
    usage: dict[str, float] = Field(default_factory=dict)
    """LLM usage: calls, tokens_in, tokens_out, retries, cost."""
    error: str | None = None
    """Set when the task could not be searched (bad input, infrastructure fault)."""
