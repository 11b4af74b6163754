"""Protocols the searches depend on: proposers and discriminators.

A proposer makes candidate solutions (the offline ARC DSL proposer, the offline
code-repair proposer, or an LLM); an evaluator (see
:class:`atlas_actors.environments.base.Evaluator`) scores them. Searches only ever talk
to these protocols, so an actor pool is just another implementation.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.environments.base import Stepper, Transition
from atlas_actors.types import Candidate, Outcome, Task


@runtime_checkable
class Proposer(Protocol):
    """Makes candidate solutions for a task.

    Every method gets its own ``rng`` (seeded by the search), so the same seed gives
    the same proposals however many calls run concurrently. Methods return JSON-able
    solutions; they may return fewer than asked (or more, for ``initial``), never
    invalid ones.
    """

    proposals_per_call: int
    """How many children one mutate/crossover call should ask for (1 for LLMs;
    more for cheap offline proposers)."""

    # Optional: ``initial_with_examples(task, n, rng, examples)``: ``initial`` shown the
    # remembered solutions of similar tasks (Mind Evolution calls it when memory has
    # any; the LLM proposer puts them in its first prompt).
    # Optional: ``max_concurrent_calls: int | None``. A CPU-bound proposer sets it to 1:
    # the search then runs its calls one at a time and checks the time limit between
    # them, so a deadline is overrun by at most one call. LLM proposers leave it unset.

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        """Initial solutions for ``task``, about ``n`` of them."""
        ...

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        """Variations of ``parent``, guided by ``parent.outcome`` feedback."""
        ...

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        """Children combining ``a`` and ``b``."""
        ...


@runtime_checkable
class Scorer(Protocol):
    """Scores a candidate in [0, 1] without running it (a discriminator backend)."""

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        """Return ``(score, reason)``."""
        ...


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ValueEstimate(_Model):
    """A discriminator's judgement of one candidate (a tree node's value)."""

    value: float = Field(ge=0.0, le=1.0)
    """How good the candidate is, in [0, 1] (1: resolves the task)."""
    explanation: str = ""
    """Why, in words (an LLM judge's reasoning, the test evidence read)."""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    """How much to trust ``value`` (0: a fallback, e.g. an unreadable judge answer)."""
    source: str = ""
    """Who judged: ``tests``, ``partial_score``, ``llm``, ``fallback``, ``scorer``."""


@runtime_checkable
class Assessor(Protocol):
    """A :class:`Scorer` that also says how sure it is (a discriminator backend)."""

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        """The value estimate of ``candidate``; raises only infrastructure faults."""
        ...


# ---------------------------------------------------------------- tree search (MCTS)


class ProposedAction(_Model):
    """One action a proposer suggests from a tree node."""

    action: Any
    """The action, a JSON value the environment's ``step`` accepts (SWE: an ``edit``,
    ``apply_patch`` or ``submit`` action as a dict)."""
    prior: float = Field(default=1.0, ge=0.0)
    """The proposer's preference (PUCT prior; normalised among siblings by the search)."""
    label: str = ""
    """A short description for trees and logs (``"< -> <= at wrap.py:18"``)."""
    source: str = ""
    """Who proposed it (``"llm"``, ``"offline:comparison"``, ``"memory"``)."""


class NodeView(_Model):
    """What a proposer sees of a tree node when asked for its children."""

    node_id: str
    state: dict[str, Any]
    """The environment state at the node (SWE: ``{"patch": ...}``, the cumulative patch)."""
    solution: Any = None
    """The solution the state stands for (SWE: the cumulative patch)."""
    depth: int = 0
    actions: list[Any] = Field(default_factory=list)
    """The actions from the root to this node, in order."""
    observation: str = ""
    """What the environment answered to the last action."""
    outcome: Outcome | None = None
    """The verifier's verdict on ``solution`` (what the search may see), if run."""
    tried: list[Any] = Field(default_factory=list)
    """Actions already expanded from this node: propose others."""
    feedback: list[str] = Field(default_factory=list)
    """What came of this node's earlier expansions that made no child (a rejected
    action and why, an action that led to an already-seen state, a proposer error),
    oldest first."""
    slot: int = 0
    """Other expansions of this node running at the same time, picked before this one
    (0 normally): they may propose the likeliest actions, so propose alternatives."""
    time_left: float | None = None
    """Seconds left of the search's time limit when the call was made (None: no time
    limit): a proposer that works in steps can offer what it has before the limit."""


@runtime_checkable
class ActionProposer(Protocol):
    """Proposes child actions for a tree node (an LLM, the offline repair operators)."""

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        """About ``k`` distinct actions not in ``node.tried``, best first; fewer (or
        none) when it has no more ideas."""
        ...


class Proposals(list[ProposedAction]):
    """A proposer's answer: the proposals, best first, and why (part of) the answer could
    not be used (``problems``). An empty list with problems is a failed expansion (the
    node is asked again); an empty list without is "no more ideas". ``notes`` say what
    is not a problem, e.g. why there are no more ideas (they become the node's feedback
    and may explain why a search stopped)."""

    def __init__(
        self,
        items: Sequence[ProposedAction] = (),
        problems: Sequence[str] = (),
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__(items)
        self.problems: list[str] = list(problems)
        self.notes: list[str] = list(notes)


def coerce_proposals(raw: object) -> tuple[list[ProposedAction], list[str]]:
    """The valid proposals in a proposer's answer, and what was wrong with the rest.

    A proposer may answer :class:`ProposedAction` objects or dicts of their fields;
    anything else (None, a string, a dict with unknown fields) is reported, not raised,
    and so are the reasons a proposer attaches as the list's ``problems`` attribute.
    """
    if not isinstance(raw, list | tuple):
        return [], [f"the proposer answered {type(raw).__name__}, not a list of actions"]
    good: list[ProposedAction] = []
    # a proposer may report why an answer gave no (or fewer) actions: a list with a
    # ``problems`` attribute (an LLM answer that could not be parsed is a failed
    # expansion with those reasons as feedback, not "no more ideas")
    reported = getattr(raw, "problems", None)
    problems: list[str] = [str(p) for p in reported] if isinstance(reported, list) else []
    for i, item in enumerate(raw):
        if isinstance(item, ProposedAction):
            good.append(item)
            continue
        try:
            good.append(ProposedAction.model_validate(item))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            text = " ".join(str(exc).split())
            problems.append(f"proposal {i} is not an action: {text[:300]}")
    return good, problems


__all__ = [
    "ActionProposer",
    "Assessor",
    "NodeView",
    "Proposals",
    "ProposedAction",
    "Proposer",
    "Scorer",
    "Stepper",
    "Transition",
    "ValueEstimate",
    "coerce_proposals",
]
