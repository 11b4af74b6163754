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
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

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


def create_environment(task: Task, **options: Any) -> MinimalEnvironment:
    """Create the environment for ``task.domain``: ``arc``, ``swe``, else passthrough.

    ``options`` go to the environment's constructor (e.g. ``dataset="kaggle2025"``).
    The environment is not reset; call ``await env.reset(task)``.
    """
    if task.domain == "arc":
        from atlas_actors.environments.arc import ARCEnvironment

        return ARCEnvironment(**options)
    if task.domain == "swe":
        from atlas_actors.environments.swe import SWEEnvironment

        return SWEEnvironment(**options)
    return PassthroughEnvironment()


class LocalEvaluator:
    """An :class:`Evaluator` that keeps one environment per task, in this process.

    Environments are created by ``factory`` (default :func:`create_environment`),
    reset once, and kept in an LRU cache of ``max_tasks`` entries.
    """

    def __init__(
        self,
        factory: Callable[[Task], MinimalEnvironment] = create_environment,
        max_tasks: int = 64,
    ) -> None:
        self._factory = factory
        self._max_tasks = max_tasks
        self._envs: OrderedDict[str, MinimalEnvironment] = OrderedDict()
        self.evaluations = 0
        """Solutions scored so far."""

    async def environment(self, task: Task) -> MinimalEnvironment:
        """The (cached, reset) environment for ``task``."""
        env = self._envs.get(task.id)
        if env is not None:
            self._envs.move_to_end(task.id)
            return env
        env = self._factory(task)
        await env.reset(task)
        self._envs[task.id] = env
        while len(self._envs) > self._max_tasks:
            _, old = self._envs.popitem(last=False)
            close = getattr(old, "aclose", None)
            if close is not None:
                await close()
        return env

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        env = await self.environment(task)
        if isinstance(env, ScoringEnvironment):
            outcomes = await env.score(solutions)
        else:
            outcomes = [await env.verify(s) for s in solutions]
        self.evaluations += len(outcomes)
        return outcomes

    async def aclose(self) -> None:
        """Close every cached environment that holds resources."""
        envs = list(self._envs.values())
        self._envs.clear()
        for env in envs:
            close = getattr(env, "aclose", None)
            if close is not None:
                await close()
