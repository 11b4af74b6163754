"""The domain registry: built-in domains load lazily, a user's own domain plugs in and
is searched end to end, and bad registrations get clear errors."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from atlas_actors import (
    Candidate,
    ConfigError,
    LocalEvaluator,
    MindEvolutionConfig,
    Outcome,
    PassthroughEnvironment,
    Task,
    TaskHolder,
    create_environment,
    domain_names,
    register_domain,
    solve_task,
)
from atlas_actors.environments import get_domain, require_domain, unregister_domain


class EchoEnvironment(TaskHolder):
    """The README's example domain: the answer is a number in the task's context."""

    async def reset(self, task: Task) -> str:
        self._task = task
        return task.description

    async def verify(self, solution: Any) -> Outcome:
        target = self.task.context["answer"]
        ok = solution == target
        close = max(0.0, 1.0 - abs(int(solution) - target) / 100)
        return Outcome(success=ok, partial_score=1.0 if ok else close * 0.99, feedback="")


class CountingProposer:
    """Proposes numbers near its parents (a proposer for the echo domain)."""

    proposals_per_call = 4

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        return [rng.randrange(100) for _ in range(n)]

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        return [int(parent.solution) + rng.randint(-5, 5) for _ in range(n)]

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        return [(int(a.solution) + int(b.solution)) // 2 for _ in range(n)]


def make_counting_proposer(task: Task, llm: Any = None) -> CountingProposer:
    return CountingProposer()


async def report_echo(task: Task, candidates: list[Candidate], result: Any, verifier: Any) -> None:
    result.solved = (await verifier.verify(task, result.solution)).success


@pytest.fixture
def echo_domain() -> Iterator[str]:
    register_domain(
        "echo",
        environment=EchoEnvironment,
        proposer=make_counting_proposer,
        reporter=report_echo,
    )
    yield "echo"
    unregister_domain("echo")


def test_builtin_domains_are_registered_without_importing_them() -> None:
    code = (
        "import sys, atlas_actors\n"
        "from atlas_actors.environments import domain_names\n"
        "assert {'arc', 'swe'} <= set(domain_names()), domain_names()\n"
        "heavy = [m for m in ('atlas_actors.arc', 'atlas_actors.swe.environment', 'ray')"
        " if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_create_environment_looks_the_domain_up() -> None:
    from atlas_actors.arc.environment import ARCEnvironment

    assert isinstance(create_environment(Task(id="a", domain="arc")), ARCEnvironment)
    env = create_environment(Task(id="a", domain="arc"), dataset="kaggle2025")
    assert isinstance(env, ARCEnvironment)
    assert isinstance(create_environment(Task(id="a", domain="nobody")), PassthroughEnvironment)
    assert get_domain("arc") is not None and get_domain("arc").strategy == "evolutionary"  # type: ignore[union-attr]
    assert require_domain("swe").strategy == "mcts"


async def test_a_users_domain_is_searched_end_to_end(echo_domain: str) -> None:
    assert echo_domain in domain_names()
    task = Task(id="e1", domain="echo", description="say 42", context={"answer": 42})
    evaluator = LocalEvaluator()
    result = await solve_task(
        task, evaluator, config=MindEvolutionConfig(max_evaluations=2000), seed=1
    )
    await evaluator.aclose()
    assert result.error is None
    assert result.solution == 42 and result.solved is True
    assert result.train_fitness == 1.0


async def test_an_unregistered_domain_without_a_proposer_is_a_clear_error() -> None:
    result = await solve_task(Task(id="n", domain="nobody"), LocalEvaluator())
    assert result.error is not None
    assert "'nobody' is not registered" in result.error and "arc" in result.error


def test_registering_twice_needs_replace(echo_domain: str) -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_domain("echo", environment=PassthroughEnvironment)
    register_domain("echo", environment=PassthroughEnvironment, replace=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "bad name!", "environment": PassthroughEnvironment}, "domain name"),
        (
            {"name": "x", "environment": PassthroughEnvironment, "strategy": "greedy"},
            "allowed: 'evolutionary', 'mcts'",
        ),
    ],
)
def test_bad_registrations_name_the_problem(kwargs: dict[str, Any], message: str) -> None:
    name = kwargs.pop("name")
    with pytest.raises(ConfigError, match=message):
        register_domain(name, **kwargs)


def test_a_string_reference_that_does_not_resolve_is_a_clear_error() -> None:
    register_domain("ghost", environment="atlas_actors.nowhere:Env")
    try:
        with pytest.raises(ConfigError, match="cannot import module 'atlas_actors.nowhere'"):
            create_environment(Task(id="g", domain="ghost"))
        register_domain("ghost", environment="atlas_actors.types:Nope", replace=True)
        with pytest.raises(ConfigError, match="has no 'Nope'"):
            create_environment(Task(id="g", domain="ghost"))
    finally:
        unregister_domain("ghost")
