"""The domain registry: built-in domains load lazily, a user's own domains plug in with
every part a domain has and are searched end to end (the two examples of
docs/extending.md, the same code), and bad registrations get clear errors."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from atlas_actors import (
    Candidate,
    ConfigError,
    EngineConfig,
    Experience,
    LocalEvaluator,
    MindEvolutionConfig,
    Outcome,
    PassthroughEnvironment,
    RoutingDecision,
    SWESearchConfig,
    Task,
    TaskHolder,
    create_environment,
    domain_names,
    register_domain,
    solve_task,
)
from atlas_actors.actors.workers import cache_size
from atlas_actors.config import LLMConfig
from atlas_actors.environments import get_domain, require_domain, unregister_domain
from atlas_actors.llm.client import LLMClient, shared_client
from atlas_actors.llm.extract import parse_score
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer
from atlas_actors.memory import DomainFeatures, MemorySystem
from atlas_actors.resources import close_shared_resources
from atlas_actors.search.base import NodeView, ProposedAction

# ------------------------------------------------ docs/extending.md: a domain, end to end


class EchoEnvironment(TaskHolder):
    """The example domain: the answer is a number in the task's context."""

    async def reset(self, task: Task) -> str:
        self._task = task
        return task.description

    async def verify(self, solution: Any) -> Outcome:
        target = self.task.context["answer"]
        ok = solution == target
        close = max(0.0, 1.0 - abs(int(solution) - target) / 100)
        return Outcome(success=ok, partial_score=1.0 if ok else close * 0.99, feedback="")


class EchoOptions(BaseModel):
    """The echo proposer's options (``EngineConfig.proposer_options["echo"]``)."""

    model_config = ConfigDict(extra="forbid")

    step: int = 5
    """How far a mutation moves a number, at most."""


class CountingProposer:
    """Proposes numbers near its parents."""

    proposals_per_call = 4

    def __init__(self, step: int) -> None:
        self.step = step

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        return [rng.randrange(100) for _ in range(n)]

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        return [int(parent.solution) + rng.randint(-self.step, self.step) for _ in range(n)]

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        return [(int(a.solution) + int(b.solution)) // 2 for _ in range(n)]


def make_counting_proposer(task: Task, llm: Any = None, *, step: int = 5) -> CountingProposer:
    return CountingProposer(step)


async def report_echo(task: Task, candidates: list[Candidate], result: Any, verifier: Any) -> None:
    result.solved = (await verifier.verify(task, result.solution)).success


def echo_features(task: Task, solution: Any, hindsight: bool) -> dict[str, Any]:
    return {"answer": float(task.context["answer"])}


def echo_similarity(query: dict[str, Any], batch: list[dict[str, Any]]) -> list[float]:
    return [1.0 / (1.0 + abs(query["answer"] - c["answer"])) for c in batch]


def register_echo() -> None:
    register_domain(
        "echo",
        environment=EchoEnvironment,
        proposer=make_counting_proposer,
        options=EchoOptions,
        reporter=report_echo,
        features=DomainFeatures("echo", "1", extract=echo_features, similarity=echo_similarity),
        environment_cache=1000,  # an echo environment is tiny: keep many tasks ready
    )


# ----------------------------------- docs/extending.md: a tree-search domain with an LLM


class CounterEnvironment(TaskHolder):
    """Reach the task's target from 0 by adding numbers; the state is the count."""

    max_steps = 20
    is_deterministic = True

    async def reset(self, task: Task) -> str:
        self._task = task
        self.n = 0
        return task.description

    async def step(self, action: Any) -> tuple[str, float, bool, dict[str, Any]]:
        self.n += int(action["add"])
        return f"at {self.n}", 0.0, False, {}

    async def get_state(self) -> dict[str, Any]:
        return {"n": self.n}

    async def set_state(self, state: dict[str, Any]) -> None:
        self.n = int(state["n"])

    def solution_of(self, state: dict[str, Any]) -> int:
        return int(state["n"])

    async def verify(self, solution: Any) -> Outcome:
        gap = abs(int(solution) - self.task.context["target"])
        return Outcome(success=gap == 0, partial_score=1.0 if gap == 0 else 0.99 / (1 + gap))


class StepProposer:
    """The offline proposer: the steps not yet tried from a node, those that end nearest
    the target first."""

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        tried = {a["add"] for a in node.tried}
        gap = task.context["target"] - node.solution
        steps = sorted((d for d in (10, 5, 1, -1, -5, -10) if d not in tried),
                       key=lambda d: abs(gap - d))  # fmt: skip
        return [ProposedAction(action={"add": d}, label=f"+{d}") for d in steps[:k]]


class AskingProposer:
    """The LLM proposer: asks the model which number to add next."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        question = f"{task.description}. The count is {node.solution}: what should I add?"
        answer = await self.client.complete(
            [{"role": "user", "content": question}], sample_index=rng.getrandbits(20)
        )
        numbers = [int(x) for x in re.findall(r"-?\d+", answer.text)][:k]
        return [ProposedAction(action={"add": n}, label=f"+{n}", source="llm") for n in numbers]


class CounterJudge:
    """The value rubric: the model's score out of 10 for how close a count is."""

    def __init__(self, client: LLMClient, *, owns_client: bool = True) -> None:
        self.client = client
        self.owns_client = owns_client

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        question = f"{task.description}. How close is {candidate.solution}? Score: N/10"
        answer = await self.client.complete([{"role": "user", "content": question}])
        return parse_score(answer.text) or (0.5, "no score")

    async def aclose(self) -> None:
        if self.owns_client:
            await self.client.aclose()


def make_step_proposer(task: Task, llm: Any = None, **context: Any) -> StepProposer:
    return StepProposer()


def make_asking_proposer(task: Task, llm: LLMConfig, **context: Any) -> AskingProposer:
    return AskingProposer(shared_client(llm))


def remembered_count(solution: Any) -> ProposedAction:
    return ProposedAction(action={"add": int(solution)}, label="remembered", source="memory")


def register_counter() -> None:
    register_domain(
        "counter",
        environment=CounterEnvironment,
        proposer=make_step_proposer,
        llm_proposer=make_asking_proposer,
        judge=CounterJudge,
        strategy="mcts",
        seed_action=remembered_count,
        solution_key=int,
    )


# --------------------------------------------------------------------------------- tests


@pytest.fixture
def echo_domain() -> Iterator[str]:
    register_echo()
    yield "echo"
    unregister_domain("echo")


@pytest.fixture
def counter_domain() -> Iterator[str]:
    register_counter()
    yield "counter"
    unregister_domain("counter")


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
        task,
        evaluator,
        config=MindEvolutionConfig(max_evaluations=2000),
        seed=1,
        proposer_options={"step": 3},
    )
    await evaluator.aclose()
    assert result.error is None
    assert result.solution == 42 and result.solved is True
    assert result.train_fitness == 1.0


async def test_a_domains_options_are_checked_by_its_model(echo_domain: str) -> None:
    with pytest.raises(ValueError, match=r"stp: Extra inputs are not permitted \(allowed: step\)"):
        EngineConfig(proposer_options={"echo": {"stp": 3}})
    assert EngineConfig(proposer_options={"echo": {"step": "3"}}).proposer_options == {
        "echo": {"step": 3}
    }
    task = Task(id="e2", domain="echo", description="say 7", context={"answer": 7})
    result = await solve_task(task, LocalEvaluator(), proposer_options={"step": "far"})
    assert result.error is not None and "step: Input should be a valid integer" in result.error


def test_a_domains_features_compare_its_tasks_in_memory(echo_domain: str, tmp_path: Any) -> None:
    def solved(n: int) -> Experience:
        task = Task(id=f"say-{n}", domain="echo", context={"answer": n})
        return Experience(task=task, solution=n, outcome=Outcome(success=True, partial_score=1))

    with MemorySystem(tmp_path / "memory.sqlite3") as memory:
        memory.record_many_sync([solved(10), solved(40), solved(90)])
        query = Task(id="q", domain="echo", context={"answer": 12})
        found = memory.query_sync(query, k=3)
    assert [e.task.id for e, _ in found] == ["say-10", "say-40", "say-90"]
    assert found[0][1] == pytest.approx(1 / 3)


def test_a_domains_pool_preferences(echo_domain: str) -> None:
    assert cache_size("echo", {}) == 1000
    assert cache_size("echo", {"echo": 3}) == 3  # the engine's setting wins
    assert cache_size("swe", {}) == 4 and require_domain("swe").sticky
    assert cache_size("nobody", {}) == 64
    assert not require_domain("echo").sticky


def _counter_task(target: int = 27) -> Task:
    return Task(id=f"reach-{target}", domain="counter", description=f"reach {target}",
                context={"target": target})  # fmt: skip


TREE = SWESearchConfig(max_expansions=40, children_per_expansion=2, max_children=2)


async def test_a_tree_search_domain_is_searched_offline(counter_domain: str) -> None:
    evaluator = LocalEvaluator()
    result = await solve_task(_counter_task(), evaluator, mcts=TREE, seed=0)
    await evaluator.aclose()
    assert result.error is None and result.strategy == "mcts"
    assert result.solution == 27 and result.checks_passed
    assert sum(int(step["label"]) for step in result.path) == 27


async def test_with_an_llm_the_domains_llm_proposer_and_judge_are_used(
    counter_domain: str,
) -> None:
    def answer(request: ChatRequest) -> str:
        text = request.messages[-1]["content"]
        if "what should I add" in text:
            target, count = (int(x) for x in re.findall(r"-?\d+", text)[:2])
            return f"Add {target - count}."
        return "Score: 9/10, nearly there."

    async with FakeLLMServer(answer) as server:
        llm = LLMConfig(base_url=server.base_url, api_key_env=None)
        evaluator = LocalEvaluator()
        try:
            result = await solve_task(_counter_task(), evaluator, mcts=TREE, llm=llm, seed=0)
        finally:
            await evaluator.aclose()
            await close_shared_resources()
        asked = [r.messages[-1]["content"] for r in server.log]
    assert result.error is None
    assert result.solution == 27 and result.checks_passed
    assert result.path == [{"label": "+27", "source": "llm"}]
    assert any("what should I add" in q for q in asked)  # the LLM proposer
    assert any("How close is" in q for q in asked)  # the judge valued the nodes


async def test_a_remembered_solution_is_the_first_action(counter_domain: str) -> None:
    old = Task(id="reach-27-before", domain="counter", context={"target": 27})
    remembered = Experience(task=old, solution=27, outcome=Outcome(success=True, partial_score=1))
    routing = RoutingDecision(strategy="mcts", experiences=[remembered], similarities=[0.9])
    evaluator = LocalEvaluator()
    result = await solve_task(_counter_task(), evaluator, mcts=TREE, routing=routing, seed=0)
    await evaluator.aclose()
    assert result.checks_passed
    assert result.path == [{"label": "remembered", "source": "memory"}]
    assert result.stats["expansions"] == 1


def test_a_domains_solution_key_says_when_two_answers_are_one(counter_domain: str) -> None:
    assert require_domain("counter").key_of("27") == require_domain("counter").key_of(27)
    swe = require_domain("swe")
    one = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    moved = one.replace("@@ -1 +1 @@", "@@ -3 +3 @@")
    assert swe.key_of(one) == swe.key_of(moved) != swe.key_of(one.replace("a = 2", "a = 3"))
    assert require_domain("arc").key_of(["flip_h", "x"]) is None  # canonical JSON decides


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


def test_the_extending_guide_runs_as_written() -> None:
    """docs/extending.md's code blocks, run as a reader would paste them (a fresh
    process): the echo domain answers 42, the counter domain registers."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), re.DOTALL)
    assert len(blocks) == 2
    check = (
        "\nfrom atlas_actors.environments import require_domain\n"
        "spec = require_domain('counter')\n"
        "assert spec.strategy == 'mcts' and spec.judge is not None, spec\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "\n".join(blocks) + check],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "42 True"
