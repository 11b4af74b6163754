"""Environments kept in this process for many tasks: :class:`LocalEvaluator`.

It implements the interfaces a search and its report need, for any domain:
:class:`~atlas_actors.environments.base.Evaluator` (score candidates as the search may
see them), :class:`~atlas_actors.search.base.Stepper` (apply an action to a state, for
tree search) and :class:`~atlas_actors.environments.base.Verifier` (grade a final
answer), and :class:`~atlas_actors.environments.base.Toolbox` (an environment's tools,
for proposers). An environment actor holds one per domain; ``--no-ray`` runs use one
directly.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from atlas_actors.environments.base import InteractiveEnvironment, MinimalEnvironment, Transition
from atlas_actors.environments.base import ScoringEnvironment as _Scoring
from atlas_actors.environments.registry import create_environment
from atlas_actors.errors import ConfigError, InvalidSolutionError
from atlas_actors.types import Outcome, Task


def solution_of(env: Any, state: dict[str, Any]) -> Any:
    """The solution a state stands for: the environment's ``solution_of(state)`` when it
    has one (SWE: the cumulative patch), else the state itself."""
    fn = getattr(env, "solution_of", None)
    return fn(state) if fn is not None else state


async def score_with(env: MinimalEnvironment, solutions: Sequence[Any]) -> list[Outcome]:
    """Score ``solutions`` on ``env`` as a search may see them (``score``, else ``verify``)."""
    if isinstance(env, _Scoring):
        return await env.score(solutions)
    return [await env.verify(s) for s in solutions]


async def step_from(env: InteractiveEnvironment, state: dict[str, Any], action: Any) -> Transition:
    """Restore ``state`` on ``env``, apply ``action``, read the new state (the caller keeps
    other actions off ``env`` meanwhile). A rejected action (or a state that cannot be
    restored) is an unchanged state with the reason as its observation."""
    try:
        await env.set_state(state)
        observation, reward, done, info = await env.step(action)
        new_state = await env.get_state()
    except InvalidSolutionError as e:
        return Transition(
            state=state,
            solution=solution_of(env, state),
            observation=f"action rejected: {e}",
            info={"rejected": True},
        )
    return Transition(
        state=new_state,
        solution=solution_of(env, new_state),
        observation=observation,
        reward=reward,
        done=done,
        info=info,
    )


class EnvironmentStepper:
    """One interactive environment, already reset, as a
    :class:`~atlas_actors.environments.base.Stepper` and an
    :class:`~atlas_actors.environments.base.Evaluator` for its task (what a rollout from
    the seed's ``estimate_with_rollout(task, candidate, env)`` acts with). Its root is
    the state it stood at when made; actions run one at a time."""

    def __init__(self, env: InteractiveEnvironment, root: dict[str, Any]) -> None:
        self.env = env
        self._root = root
        self._lock = anyio.Lock()

    async def root(self, task: Task) -> Transition:
        return Transition(
            state=self._root, solution=solution_of(self.env, self._root), observation=""
        )

    async def transition(self, task: Task, state: dict[str, Any], action: Any) -> Transition:
        async with self._lock:
            return await step_from(self.env, state, action)

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        async with self._lock:
            return await score_with(self.env, solutions)


class LocalEvaluator:
    """Keeps one environment per task, in this process (an LRU of ``max_tasks``).

    Environments are created by ``factory`` (default: the registered domain's, see
    :func:`~atlas_actors.environments.registry.create_environment`) and reset once.
    Transitions on one task's environment run one at a time (restore, act, read the new
    state), so concurrent tree-search expansions never see each other's half-states.
    """

    def __init__(
        self,
        factory: Callable[[Task], MinimalEnvironment] = create_environment,
        max_tasks: int = 64,
    ) -> None:
        self._factory = factory
        self._max_tasks = max_tasks
        self._envs: OrderedDict[str, MinimalEnvironment] = OrderedDict()
        self._locks: dict[str, anyio.Lock] = {}
        self._roots: dict[str, dict[str, Any]] = {}
        self._creating = anyio.Lock()
        self.evaluations = 0
        """Solutions scored so far."""
        self.transitions = 0
        """Actions applied so far."""

    def holds(self, task: Task) -> bool:
        """Whether ``task``'s environment is ready here (created and reset)."""
        return task.id in self._envs

    async def environment(self, task: Task) -> MinimalEnvironment:
        """The (cached, reset) environment for ``task``."""
        env = self._envs.get(task.id)
        if env is not None:
            self._envs.move_to_end(task.id)
            return env
        async with self._creating:
            env = self._envs.get(task.id)
            if env is not None:
                return env
            env = self._factory(task)
            await env.reset(task)
            if isinstance(env, InteractiveEnvironment):
                self._roots[task.id] = await env.get_state()
            self._envs[task.id] = env
            while len(self._envs) > self._max_tasks:
                old_id, old = self._envs.popitem(last=False)
                self._locks.pop(old_id, None)
                self._roots.pop(old_id, None)
                close = getattr(old, "aclose", None)
                if close is not None:
                    await close()
        return env

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        """Score ``solutions`` as the search may see them (``score``, else ``verify``)."""
        outcomes = await score_with(await self.environment(task), solutions)
        self.evaluations += len(outcomes)
        return outcomes

    async def verify(self, task: Task, solution: Any) -> Outcome:
        """The environment's full ``verify`` (hidden answers included): for reports."""
        env = await self.environment(task)
        return await env.verify(solution)

    async def _interactive(self, task: Task) -> InteractiveEnvironment:
        env = await self.environment(task)
        if not isinstance(env, InteractiveEnvironment):
            raise InvalidSolutionError(
                f"task {task.id}: the {task.domain!r} environment ({type(env).__name__}) is "
                "not interactive (no step/get_state/set_state): it cannot be tree-searched"
            )
        return env

    async def root(self, task: Task) -> Transition:
        """The task's initial state: the environment's state right after ``reset``."""
        env = await self._interactive(task)
        state = self._roots[task.id]
        return Transition(
            state=state, solution=solution_of(env, state), observation=task.description
        )

    async def transition(self, task: Task, state: dict[str, Any], action: Any) -> Transition:
        """Restore ``state``, apply ``action``, read the new state. A rejected action (or
        a state that cannot be restored) is an unchanged state with the reason as its
        observation."""
        env = await self._interactive(task)
        lock = self._locks.setdefault(task.id, anyio.Lock())
        async with lock:
            self.transitions += 1
            return await step_from(env, state, action)

    async def invoke(self, task: Task, tool: str, /, **kwargs: Any) -> Any:
        """Call ``tool`` (a method the environment lists in ``tools``) on ``task``'s
        environment (a :class:`~atlas_actors.environments.base.Toolbox`)."""
        env = await self.environment(task)
        allowed: frozenset[str] = getattr(env, "tools", frozenset())
        if tool not in allowed:
            raise ConfigError(
                f"task {task.id}: {type(env).__name__} has no tool {tool!r} "
                f"(tools: {', '.join(sorted(allowed)) or 'none'})"
            )
        return await getattr(env, tool)(**kwargs)

    async def aclose(self) -> None:
        """Close every cached environment that holds resources."""
        envs = list(self._envs.values())
        self._envs.clear()
        self._locks.clear()
        self._roots.clear()
        for env in envs:
            close = getattr(env, "aclose", None)
            if close is not None:
                await close()
