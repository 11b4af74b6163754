"""LocalEvaluator as a Stepper: stateless transitions from any state, one at a time per
task, rejected actions as observations, and the root state after reset."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from atlas_actors import InvalidSolutionError, LocalEvaluator, Outcome, Stepper, Task, TaskHolder


class Counter(TaskHolder):
    """An interactive toy: the state is a list of numbers; actions append to it."""

    def __init__(self) -> None:
        self._task = None
        self.items: list[int] = []
        self.busy = False

    async def reset(self, task: Task) -> str:
        self._task = task
        self.items = []
        return "start"

    async def verify(self, solution: Any) -> Outcome:
        ok = solution == self.task.context["goal"]
        return Outcome(success=ok, partial_score=float(ok))

    async def step(self, action: Any) -> tuple[str, float, bool, dict[str, Any]]:
        if not isinstance(action, int):
            raise InvalidSolutionError(f"an action is an int, got {action!r}")
        assert not self.busy, "two transitions interleaved"
        self.busy = True
        await anyio.sleep(0.01)  # a concurrent transition would interleave here
        self.items.append(action)
        self.busy = False
        return f"appended {action}", 0.0, False, {}

    @property
    def max_steps(self) -> int:
        return 10

    @property
    def is_deterministic(self) -> bool:
        return True

    async def get_state(self) -> dict[str, Any]:
        return {"items": list(self.items)}

    async def set_state(self, state: dict[str, Any]) -> None:
        self.items = list(state["items"])

    def solution_of(self, state: dict[str, Any]) -> Any:
        return state["items"]

    async def score(self, solutions: Sequence[Any]) -> list[Outcome]:
        return [await self.verify(s) for s in solutions]


TASK = Task(id="c", domain="toy", context={"goal": [1, 2]})


async def test_transitions_are_stateless_and_serialised() -> None:
    ev = LocalEvaluator(lambda task: Counter())
    assert isinstance(ev, Stepper)
    root = await ev.root(TASK)
    assert root.state == {"items": []} and root.solution == []
    # many transitions from different states at once: each sees only its own state
    results: dict[int, Any] = {}

    async def go(i: int) -> None:
        results[i] = await ev.transition(TASK, {"items": [i]}, i * 10)

    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(go, i)
    for i, t in results.items():
        assert t.state == {"items": [i, i * 10]} and t.solution == [i, i * 10]
        assert t.observation == f"appended {i * 10}"
    # the root is still the state right after reset
    assert (await ev.root(TASK)).state == {"items": []}
    t = await ev.transition(TASK, root.state, 1)
    t = await ev.transition(TASK, t.state, 2)
    [outcome] = await ev.evaluate(TASK, [t.solution])
    assert outcome.success and ev.transitions == 8


async def test_a_rejected_action_leaves_the_state_unchanged() -> None:
    ev = LocalEvaluator(lambda task: Counter())
    t = await ev.transition(TASK, {"items": [3]}, "not an int")
    assert t.state == {"items": [3]} and t.info == {"rejected": True}
    assert "action rejected" in t.observation and "'not an int'" in t.observation
    json.dumps(t.model_dump())  # JSON all the way


async def test_a_non_interactive_environment_cannot_be_stepped() -> None:
    from atlas_actors import PassthroughEnvironment

    ev = LocalEvaluator(lambda task: PassthroughEnvironment())
    with pytest.raises(InvalidSolutionError, match="not interactive"):
        await ev.root(TASK)
