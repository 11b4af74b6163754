"""A reusable conformance check for environments (ours and users' own).

``await check_environment(env, task, good, bad)`` exercises the protocol the searches
rely on and raises ``AssertionError`` naming the first violation.
"""

from __future__ import annotations

import inspect
import pickle
from typing import Any

from atlas_actors.environments.base import (
    InteractiveEnvironment,
    MinimalEnvironment,
    ScoringEnvironment,
)
from atlas_actors.errors import EnvironmentNotReady
from atlas_actors.types import Outcome, Task


async def check_environment(
    env: Any, task: Task, good: Any, bad: Any, *, good_program: Any = None
) -> None:
    """Check ``env`` against the environment protocol.

    Args:
        env: a fresh (not yet reset) environment.
        task: a task it can load.
        good: a solution ``verify`` must accept; ``bad``: one it must reject.
        good_program: for a :class:`ScoringEnvironment`, a candidate ``score`` must rate
            a perfect 1.0 (defaults to ``good``).
    """
    assert isinstance(env, MinimalEnvironment), f"{type(env).__name__} is not a MinimalEnvironment"
    for name in ("reset", "verify"):
        assert inspect.iscoroutinefunction(getattr(env, name)), f"{name}() must be async"
    try:
        _ = env.task
    except EnvironmentNotReady:
        pass
    else:
        raise AssertionError("task before reset() must raise EnvironmentNotReady")
    observation = await env.reset(task)
    assert isinstance(observation, str), "reset() must return an observation string"
    assert env.task == task, "task property must return the task given to reset()"

    ok = await env.verify(good)
    assert isinstance(ok, Outcome) and ok.success, f"good solution rejected: {ok}"
    assert ok.partial_score == 1.0, "a successful outcome must have partial_score 1.0"
    no = await env.verify(bad)
    assert isinstance(no, Outcome) and not no.success, f"bad solution accepted: {no}"
    assert 0.0 <= no.partial_score < 1.0
    assert no.feedback, "a failed outcome must say what was wrong"
    for outcome in (ok, no):
        assert Outcome.model_validate_json(outcome.model_dump_json()) == outcome
        assert pickle.loads(pickle.dumps(outcome)) == outcome

    if isinstance(env, ScoringEnvironment):
        program = good if good_program is None else good_program
        scored = await env.score([program, program])
        assert len(scored) == 2 and all(isinstance(o, Outcome) for o in scored)
        assert scored[0].partial_score == 1.0 and scored[0].success, f"score(good) = {scored[0]}"
        assert scored[0] == scored[1], "score() must be deterministic"
        assert await env.score([]) == []

    if isinstance(env, InteractiveEnvironment):
        assert isinstance(env.max_steps, int) and env.max_steps > 0
        assert isinstance(env.is_deterministic, bool)
        state = await env.get_state()
        assert isinstance(state, dict)
        await env.set_state(state)
        assert await env.get_state() == state, "set_state(get_state()) must round-trip"
