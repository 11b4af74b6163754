"""The environment protocol, the passthrough environment and the factory.

Two tiers (after seed spec 002), with async methods because Docker-backed
environments are async by nature:

* :class:`MinimalEnvironment`: ``reset(task) -> str``, ``verify(solution) -> Outcome``
  and the ``task`` property.
* :class:`InteractiveEnvironment`: adds ``step(action)``, ``max_steps``,
  ``is_deterministic``, ``get_state()`` and ``set_state(state)``.

Searches do not call ``verify`` (which may look at hidden answers, e.g. ARC test
outputs). They call ``score(solutions)`` of a :class:`ScoringEnvironment`, the fitness
a search may see, through an :class:`Evaluator` that names the task per request, so
one evaluator (in process, or a pool of Ray actors) serves many searches at once.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.errors import EnvironmentNotReady
from atlas_actors.types import Outcome, Task


class _StaticProtocolMeta(type(Protocol)):  # type: ignore[misc]
    """``isinstance`` against these protocols looks attributes up statically.

    Python 3.11's runtime protocols call properties during ``isinstance``, so the
    ``task`` property (which raises before ``reset``) would make the check itself
    raise; 3.12 looks them up statically, and so does this on every version.
    """

    def __instancecheck__(cls, instance: object) -> bool:
        for attr in typing._get_protocol_attrs(cls):  # type: ignore[attr-defined]
            try:
                inspect.getattr_static(instance, attr)
            except AttributeError:
                return False
        return True


@runtime_checkable
class MinimalEnvironment(Protocol, metaclass=_StaticProtocolMeta):
    """Minimum environment for verification-based solving."""

    async def reset(self, task: Task) -> str:
        """Load ``task`` and return the initial observation."""
        ...

    async def verify(self, solution: Any) -> Outcome:
        """Judge a final solution against the task's criteria."""
        ...

    @property
    def task(self) -> Task:
        """The current task; raises :class:`EnvironmentNotReady` before ``reset``."""
        ...


@runtime_checkable
class InteractiveEnvironment(MinimalEnvironment, Protocol):
    """An environment a search can act in step by step and branch from."""

    async def step(self, action: Any) -> tuple[str, float, bool, dict[str, Any]]:
        """Apply ``action``; return ``(observation, reward, done, info)``."""
        ...

    @property
    def max_steps(self) -> int:
        """Steps allowed before an episode is cut off."""
        ...

    @property
    def is_deterministic(self) -> bool:
        """Whether the same actions always give the same observations."""
        ...

    async def get_state(self) -> dict[str, Any]:
        """Serialise the current state (JSON values only)."""
        ...

    async def set_state(self, state: dict[str, Any]) -> None:
        """Restore a state returned by :meth:`get_state`."""
        ...


@runtime_checkable
class ScoringEnvironment(MinimalEnvironment, Protocol):
    """An environment that can score candidate solutions for a search.

    ``score`` must use only what a solver may see (for ARC: the train pairs, never
    the test outputs). ``Outcome.partial_score`` is the search's fitness.
    """

    async def score(self, solutions: Sequence[Any]) -> list[Outcome]:
        """Score a batch of candidate solutions; one Outcome per solution, in order."""
        ...


@runtime_checkable
class Evaluator(Protocol):
    """Scores candidate solutions for a named task (in process or on actors)."""

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        """One Outcome per solution, in order."""
        ...


class TaskHolder:
    """The ``task`` property of an environment: the task given to ``reset``."""

    _task: Task | None = None

    @property
    def task(self) -> Task:
        """The current task; raises :class:`EnvironmentNotReady` before ``reset``."""
        if self._task is None:
            raise EnvironmentNotReady("no task set: call reset(task) first")
        return self._task


class PassthroughEnvironment(TaskHolder):
    """For tasks without a verifier: every solution is accepted.

    Verification is delegated to whoever supplied the solution.
    """

    def __init__(self) -> None:
        self._task: Task | None = None

    async def reset(self, task: Task) -> str:
        self._task = task
        return task.description

    async def verify(self, solution: Any) -> Outcome:
        _ = self.task  # raises before reset
        return Outcome(
            success=True,
            partial_score=1.0,
            feedback="accepted without verification (passthrough environment)",
        )

    async def score(self, solutions: Sequence[Any]) -> list[Outcome]:
        return [await self.verify(s) for s in solutions]


@runtime_checkable
class Verifier(Protocol):
    """Grades a final solution for a named task against everything the task has,
    hidden answers included (ARC test outputs, SWE-bench's FAIL_TO_PASS tests): used to
    report a result, never to guide a search."""

    async def verify(self, task: Task, solution: Any) -> Outcome:
        """The environment's ``verify`` of ``solution``."""
        ...


class Transition(BaseModel):
    """The result of one action from a state (see :class:`Stepper`)."""

    model_config = ConfigDict(extra="forbid")

    state: dict[str, Any]
    """The new state (JSON), restorable with the environment's ``set_state``."""
    solution: Any = None
    """The solution the new state stands for (SWE: the cumulative patch)."""
    observation: str = ""
    reward: float = 0.0
    done: bool = False
    info: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Stepper(Protocol):
    """Applies an action to a state of a named task's environment, statelessly: the
    environment is restored to ``state`` first (``set_state``), so any environment
    (in process, or any actor of a pool) can serve any node of a tree."""

    async def root(self, task: Task) -> Transition:
        """The task's initial state (as after ``reset``), its solution and observation."""
        ...

    async def transition(self, task: Task, state: dict[str, Any], action: Any) -> Transition:
        """Restore ``state``, apply ``action``, return the new state and observation.

        An action the environment rejects (malformed, an edit whose text is not in the
        file) is a transition whose observation says why and whose state is unchanged,
        not an exception."""
        ...


@runtime_checkable
class Toolbox(Protocol):
    """Calls a tool of a named task's environment: a method the environment lists in its
    ``tools`` attribute (SWE: ``localize``, ``try_candidates``, ``read_files``), so a
    proposer can use an environment that lives in an actor."""

    async def invoke(self, task: Task, tool: str, /, **kwargs: Any) -> Any:
        """``await env.<tool>(**kwargs)`` on ``task``'s environment; ``ConfigError`` for a
        tool the environment does not list."""
        ...
