"""Core data types shared by environments, searches, actors and the CLI.

Every type is a pydantic v2 model: JSON round-trips with ``model_dump_json`` /
``model_validate_json`` and pickles (so it crosses Ray actor boundaries).

Solutions are plain JSON values (a DSL program as nested lists, Python source as a
string, a patch as a string), so candidates serialise without custom encoders.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Strategy = Literal["direct", "adapt", "evolutionary", "mcts"]
"""Search strategies the router can pick."""

Origin = Literal["init", "mutation", "crossover", "memory", "migration", "manual"]
"""How a candidate came to be."""


def new_id() -> str:
    """A short random identifier for candidates and runs."""
    return uuid.uuid4().hex[:12]


def solution_key(solution: Any) -> str:
    """A canonical key for a JSON-able solution (for de-duplication)."""
    if isinstance(solution, str):
        text = solution
    else:
        text = json.dumps(solution, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


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


class Check(_Model):
    """One check a verifier ran that the search may see: an ARC train pair, a test."""

    name: str
    """What was checked (``train 0``, ``tests/test_x.py::test_y``)."""
    passed: bool
    """Exactly right."""
    similarity: float = Field(default=0.0, ge=0.0, le=1.0)
    """How close when not exactly right (ARC: the share of cells right); 1.0 when passed."""
    well_formed: bool = True
    """The output had the expected form (ARC: the grid has the target's shape)."""
    error: str | None = None
    """The solution failed to produce an output here (an exception, a timeout)."""
    output: Any = None
    """What the solution produced, when a critic may read it (ARC: the grid of a Python
    program); None when not kept."""


class TestReport(_Model):
    """Test evidence for a code patch: which of the graded tests pass and fail.

    The search sees only the groups the environment makes visible (see
    ``SWEEnvironment(visible_tests=...)``); a hidden group is empty and counted in
    ``hidden``.
    """

    __test__ = False  # not a pytest test class

    patch_applied: bool = True
    timed_out: bool = False
    fail_to_pass_passed: list[str] = Field(default_factory=list)
    """Tests the patch must fix that now pass."""
    fail_to_pass_failed: list[str] = Field(default_factory=list)
    """Tests the patch must fix that still fail."""
    pass_to_pass_passed: list[str] = Field(default_factory=list)
    """Tests that passed before and still pass."""
    pass_to_pass_failed: list[str] = Field(default_factory=list)
    """Tests that passed before and now fail (regressions)."""
    hidden: int = Field(default=0, ge=0)
    """Graded tests whose result the search may not see."""
    log_trusted: bool = True
    """False when the test log was rejected (tampering, unparseable): nothing passes."""

    @property
    def graded(self) -> int:
        """Visible graded tests."""
        return (
            len(self.fail_to_pass_passed)
            + len(self.fail_to_pass_failed)
            + len(self.pass_to_pass_passed)
            + len(self.pass_to_pass_failed)
        )

    @property
    def passing(self) -> int:
        """Visible graded tests that pass."""
        return len(self.fail_to_pass_passed) + len(self.pass_to_pass_passed)


class Outcome(_Model):
    """The verdict of an environment on one solution.

    A failed verification is an Outcome with ``success=False``, never an exception.
    What a search reads is typed: ``partial_score`` (fitness), ``checks`` (per-check
    feedback), ``answers`` and ``doubts`` (the solution's answers to inputs whose
    expected output the search may not see), ``tests`` (test evidence for a patch).
    ``details`` holds extras for people and logs only; no search reads it.
    """

    success: bool
    """True when the solution fully solves the task (as far as the verifier can tell)."""
    partial_score: float = Field(default=0.0, ge=0.0, le=1.0)
    """How close the solution is, in [0, 1]; searches use it as fitness."""
    feedback: str = ""
    """Text a person or an LLM can act on: what was wrong and where."""
    checks: list[Check] = Field(default_factory=list)
    """The checks the search may see, in order (ARC: one per train pair)."""
    answers: list[Any] | None = None
    """The solution's answers for inputs with hidden expected outputs (ARC: the grid
    predicted for each test input, None where it failed); None when not applicable."""
    doubts: list[list[str]] | None = None
    """Per answer, the reasons the environment doubts it (ARC: a property every train
    pair has that the prediction breaks); an empty list means no doubt."""
    tests: TestReport | None = None
    """Test evidence when the solution is a code patch."""
    size: int | None = Field(default=None, ge=0)
    """How big the solution is in the domain's own measure (a patch: the lines it
    removes and adds); of two equal answers a search prefers the smaller. None: the
    search measures the solution's text."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Extras for people and logs (timings, raw logs); not read by searches."""

    @property
    def exact_fraction(self) -> float | None:
        """Share of ``checks`` exactly right; None when there are no checks."""
        if not self.checks:
            return None
        return sum(c.passed for c in self.checks) / len(self.checks)

    @property
    def doubted(self) -> bool:
        """Whether the environment doubts any of the answers."""
        return any(self.doubts or ())


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
    """A finished task remembered for later routing, adaptation and seeding.

    The store (:class:`atlas_actors.memory.MemorySystem`) fills ``fingerprint`` and
    ``features`` when they are empty or stale, and keeps one row per ``id`` (recording the
    same id twice keeps the first), so give a retried task's experience the same id.
    """

    id: str = Field(default_factory=new_id)
    """Unique id; recording an experience with a stored id is a no-op."""
    task: Task
    solution: Any = None
    """The best solution as data: a DSL program's JSON, Python source, a patch."""
    alternatives: list[Any] = Field(default_factory=list)
    """Other solutions that passed every check the search could see (ARC: the programs
    behind the other attempt), tried after ``solution`` when the task is adapted."""
    outcome: Outcome
    """Its verdict: ``success`` and ``partial_score`` are what routing reads."""
    strategy: Strategy = "evolutionary"
    """The strategy that produced ``solution``."""
    evaluations: int = Field(default=0, ge=0)
    """Candidate evaluations spent on the task."""
    seconds: float = Field(default=0.0, ge=0.0)
    """Wall-clock seconds spent on the task."""
    usage: dict[str, float] = Field(default_factory=dict)
    """LLM usage: calls, tokens_in, tokens_out, cost (as in ``TaskResult.usage``)."""
    edit_families: list[str] = Field(default_factory=list)
    """SWE: the edit families / labels of the winning patch, when known."""
    settings: str = ""
    """The digest of the search settings it was found under (``TaskResult.settings``)."""
    stopped: str = ""
    """Why its search stopped (``TaskResult.stopped``)."""
    fingerprint: str = ""
    """Hash of the task's content (not its id): equal for an exact repeat."""
    features: dict[str, Any] = Field(default_factory=dict)
    """Similarity features of the task and solution (``atlas_actors.memory.features``)."""
    run_id: str | None = None
    """The run that recorded it, when known."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    """When it was recorded (UTC)."""

    @property
    def domain(self) -> str:
        """The task's domain."""
        return self.task.domain

    @property
    def success(self) -> bool:
        """Whether the remembered solution solved the task."""
        return self.outcome.success

    @property
    def score(self) -> float:
        """The solution's partial score in [0, 1]."""
        return self.outcome.partial_score

    @property
    def llm_cost(self) -> float:
        """LLM cost spent on the task (``usage["cost"]``; 0 when unknown)."""
        return float(self.usage.get("cost", 0.0))


class RoutingDecision(_Model):
    """Which strategy to use for a task, and why."""

    strategy: Strategy
    reason: str = ""
    """One line: which rule fired and on what evidence."""
    similarity: float = Field(default=0.0, ge=0.0, le=1.0)
    """Highest similarity to a remembered successful experience (0 without memory)."""
    experiences: list[Experience] = Field(default_factory=list)
    """Remembered experiences the strategy may start from, most similar first."""
    similarities: list[float] = Field(default_factory=list)
    """The similarity of each of ``experiences``, in the same order."""
    rule: str = ""
    """The rule that fired: ``adapt``, ``strategy_match``, ``domain`` or ``default``."""
    repeats: list[Experience] = Field(default_factory=list)
    """Remembered experiences of exactly this task (same content) that did not pass its
    checks, or passed them with an answer the environment doubted, newest first: the
    search recalls one searched under the same settings instead of searching again
    (``RouterConfig.recall_unsolved``)."""


class TaskResult(_Model):
    """What a run reports for one task (one line of ``results.jsonl``)."""

    task_id: str
    domain: str = "generic"
    solved: bool | None = None
    """Verified against the hidden answers; None when they are unknown."""
    checks_passed: bool = False
    """The best solution passed every check the search could see (ARC: every train
    pair; SWE: every visible graded test). Unlike ``solved`` this uses no hidden answer,
    so it is what memory learns from."""
    train_fitness: float = 0.0
    """Fraction of what the search could check that the best solution gets right
    (ARC: train pairs exactly right; 1.0 = all)."""
    doubts: list[list[str]] | None = None
    """Per answer of the best solution, why the environment doubts it (its
    ``Outcome.doubts``; ARC: properties every train pair has that a prediction breaks);
    None when the environment says nothing about doubts. A search does not stop on a
    success it doubts, so memory recalls such a task's repeat rather than search again."""
    evaluations: int = 0
    """Candidate evaluations spent."""
    seconds: float = 0.0
    generations: int = 0
    stopped: str = ""
    """Why the search stopped: ``success``, ``evaluations``, ``time``, ``generations``."""
    stop_detail: str = ""
    """Why, in words, when a search says (a tree search: its budget or tree, and the notes
    its nodes gathered most often, e.g. "fault localisation found no suspicious line")."""
    strategy: str = "evolutionary"
    program: str | None = None
    """The best solution, readable (ARC: Python source of the program)."""
    solution: Any = None
    """The best solution as data."""
    alternatives: list[Any] = Field(default_factory=list)
    """Other distinct solutions that passed every check the search could see (at most
    three, best first): what memory keeps besides ``solution``."""
    attempts: list[dict[str, Any]] | None = None
    """ARC: one ``{"attempt_1": grid, "attempt_2": grid}`` per test input."""
    feedback: str = ""
    usage: dict[str, float] = Field(default_factory=dict)
    """LLM usage: calls, tokens_in, tokens_out, retries, cost."""
    path: list[dict[str, str]] = Field(default_factory=list)
    """Tree search: the actions from the root to the answer, each ``{"label", "source"}``
    (``source`` ``offline:<family>`` for the repair operators, ``llm``, ``memory``)."""
    routing: dict[str, Any] | None = None
    """The router's decision: ``strategy``, ``rule``, ``similarity``, ``reason``."""
    stats: dict[str, float] = Field(default_factory=dict)
    """The search's own counters (tree search: expansions, nodes, duplicates,
    failures, rollouts, finished nodes, LLM calls)."""
    settings: str = ""
    """A digest of the search's settings (strategy, limits, proposer, model): memory
    recalls an unsolved exact repeat only when they are the same."""
    error: str | None = None
    """Set when the task could not be searched (bad input, infrastructure fault)."""
