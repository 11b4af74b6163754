"""EnhancedTaskRouter: one case per rule, then the router on a real memory."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from atlas_actors.config import RouterConfig
from atlas_actors.environments import PassthroughEnvironment, register_domain, unregister_domain
from atlas_actors.errors import ConfigError, MemoryStoreError
from atlas_actors.memory import MemorySystem
from atlas_actors.search.router import EnhancedTaskRouter
from atlas_actors.types import Experience, Outcome, Strategy, Task


def exp(name: str, strategy: Strategy = "evolutionary", success: bool = True) -> Experience:
    return Experience(
        id=name,
        task=Task(id=name, domain="arc"),
        outcome=Outcome(success=success, partial_score=1.0 if success else 0.4),
        strategy=strategy,
    )


@dataclass
class FakeMemory:
    """Returns fixed experiences (what a MemorySystem query would), recording the calls."""

    found: list[tuple[Experience, float]]
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: Exception | None = None

    def query_sync(
        self, task: Task, k: int = 5, *, successful_only: bool = False, min_similarity: float = 0.0
    ) -> list[tuple[Experience, float]]:
        self.calls.append({"task": task.id, "k": k, "successful_only": successful_only})
        if self.error:
            raise self.error
        hits = [(e, s) for e, s in self.found if e.success or not successful_only]
        return sorted(hits, key=lambda es: es[1], reverse=True)[:k]

    async def query(
        self, task: Task, k: int = 5, *, successful_only: bool = False, min_similarity: float = 0.0
    ) -> list[tuple[Experience, float]]:
        return self.query_sync(task, k, successful_only=successful_only)


CASES: list[tuple[str, str, list[tuple[Experience, float]], dict[str, Any], str, str, str]] = [
    # (case, domain, memory finds, RouterConfig fields, strategy, rule, in the reason)
    ("similar and solved: adapt", "arc", [(exp("a", "evolutionary"), 0.93)], {}, "adapt",
     "adapt", "0.93 similar to solved task a"),
    ("exact repeat: adapt", "swe", [(exp("r", "mcts"), 1.0), (exp("o"), 0.4)], {}, "adapt",
     "adapt", "exact repeat of solved task r"),
    ("similar but failed: not adapted", "arc", [(exp("f", success=False), 0.97)], {},
     "evolutionary", "domain", "no similar solved task"),
    ("threshold is configurable", "arc", [(exp("a"), 0.93)], {"similarity_threshold": 0.95},
     "evolutionary", "domain", "best similar solved task a at 0.93"),
    ("solved directly before: direct", "arc",
     [(exp("d1", "adapt"), 0.8), (exp("d2", "direct"), 0.7), (exp("d3", "adapt"), 0.65)], {},
     "direct", "strategy_match", "(d1, d2, d3; best 0.80) used adapt/direct"),
    ("solved by one strategy: that strategy", "arc",
     [(exp("m1", "mcts"), 0.85), (exp("m2", "mcts"), 0.62)], {}, "mcts", "strategy_match",
     "used mcts"),
    ("strategies disagree: domain", "swe",
     [(exp("e1", "evolutionary"), 0.8), (exp("m1", "mcts"), 0.7)], {}, "mcts", "domain",
     "domain swe -> mcts"),
    ("one voter is no match: domain", "arc", [(exp("m1", "mcts"), 0.85)], {}, "evolutionary",
     "domain", "domain arc -> evolutionary"),
    ("voters below the match threshold: domain", "arc",
     [(exp("m1", "mcts"), 0.55), (exp("m2", "mcts"), 0.5)], {}, "evolutionary", "domain",
     "best similar solved task m1 at 0.55"),
    ("ARC: evolutionary", "arc", [], {}, "evolutionary", "domain", "no similar solved task"),
    ("SWE: mcts", "swe", [], {}, "mcts", "domain", "domain swe -> mcts"),
    ("unknown domain: default", "essay", [], {}, "evolutionary", "default",
     "default -> evolutionary (domain essay"),
    ("unknown domain: configured default", "essay", [], {"default_strategy": "mcts"}, "mcts",
     "default", "default -> mcts"),
    ("domain routing off: default", "swe", [], {"use_domain_routing": False,
     "default_strategy": "direct"}, "direct", "default", "domain routing off"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "domain", "found", "settings", "strategy", "rule", "reason"),
    CASES,
    ids=[c[0] for c in CASES],
)
async def test_rules(
    case: str,
    domain: str,
    found: list[tuple[Experience, float]],
    settings: dict[str, Any],
    strategy: str,
    rule: str,
    reason: str,
) -> None:
    memory = FakeMemory(found)
    router = EnhancedTaskRouter(memory, RouterConfig(**settings))
    task = Task(id="new", domain=domain)
    decision = await router.route(task, memory)
    assert (decision.strategy, decision.rule) == (strategy, rule)
    assert reason in decision.reason and "\n" not in decision.reason
    solved = [(e, s) for e, s in found if e.success]
    assert decision.similarity == max((s for _, s in solved), default=0.0)
    assert memory.calls[0]["successful_only"] and memory.calls[0]["k"] >= 5
    assert router.route_sync(task) == decision


def test_the_decision_hands_over_the_similar_solved_experiences() -> None:
    found = [
        (exp("low", "mcts"), 0.2),
        (exp("b", "mcts"), 0.5),
        (exp("a", "evolutionary"), 0.7),
        (exp("fail", success=False), 0.9),
        *((exp(f"x{i}", "mcts"), 0.4) for i in range(6)),
    ]
    decision = EnhancedTaskRouter(FakeMemory(found)).route_sync(Task(id="t", domain="arc"))
    assert decision.rule == "domain"  # a (0.7) and b (0.5): only one at >= 0.6
    assert [e.id for e in decision.experiences] == ["a", "b", "x0", "x1", "x2"]
    assert decision.similarities == [0.7, 0.5, 0.4, 0.4, 0.4]
    few = EnhancedTaskRouter(
        FakeMemory(found), RouterConfig(max_experiences=1, min_seed_similarity=0.6)
    ).route_sync(Task(id="t", domain="arc"))
    assert [e.id for e in few.experiences] == ["a"]
    adapt = EnhancedTaskRouter(
        FakeMemory([(exp("r"), 1.0)]), RouterConfig(max_experiences=0)
    ).route_sync(Task(id="t", domain="arc"))
    assert adapt.strategy == "adapt" and [e.id for e in adapt.experiences] == ["r"]


def test_unsolved_exact_repeats_go_with_the_decision_newest_first() -> None:
    from datetime import UTC, datetime, timedelta

    old, new, solved = exp("old", success=False), exp("new", success=False), exp("ok")
    old.created_at = datetime(2026, 1, 1, tzinfo=UTC)
    new.created_at = old.created_at + timedelta(days=1)
    other_domain = exp("swe", success=False).model_copy(
        update={"task": Task(id="swe", domain="swe")}
    )
    router = EnhancedTaskRouter()
    task = Task(id="t", domain="arc")
    decision = router.decide(task, [(exp("a"), 0.5)], repeats=[old, new, solved, other_domain])
    assert [e.id for e in decision.repeats] == ["new", "old"]  # unsolved, same domain
    # a successful exact repeat is adapted: nothing to recall
    adapt = router.decide(task, [(solved, 1.0)], repeats=[old, new, solved])
    assert adapt.rule == "adapt" and adapt.repeats == []
    off = EnhancedTaskRouter(config=RouterConfig(recall_unsolved=False))
    assert off.decide(task, [], repeats=[old, new]).repeats == []


def test_an_exact_repeat_solved_with_doubts_goes_with_the_decision() -> None:
    """A repeat that passed its checks with an answer the environment doubted is adapted
    (rule 1) and handed over for recall too; one solved without doubts is not."""
    doubted = exp("doubted").model_copy(
        update={"outcome": Outcome(success=True, partial_score=1.0, doubts=[["unchanged"]])}
    )
    clean = exp("clean").model_copy(
        update={"outcome": Outcome(success=True, partial_score=1.0, doubts=[[]])}
    )
    router = EnhancedTaskRouter()
    task = Task(id="t", domain="arc")
    decision = router.decide(task, [(doubted, 1.0)], repeats=[doubted])
    assert decision.rule == "adapt" and [e.id for e in decision.repeats] == ["doubted"]
    settled = router.decide(task, [(clean, 1.0), (doubted, 1.0)], repeats=[doubted, clean])
    assert settled.rule == "adapt" and settled.repeats == []


def test_without_memory_the_domain_decides() -> None:
    router = EnhancedTaskRouter()
    d = router.route_sync(Task(id="t", domain="swe"))
    assert (d.strategy, d.similarity, d.experiences) == ("mcts", 0.0, [])
    assert "no memory" in d.reason


def test_a_failing_memory_does_not_stop_routing(caplog: pytest.LogCaptureFixture) -> None:
    memory = FakeMemory([], error=MemoryStoreError("disk gone"))
    with caplog.at_level(logging.WARNING, logger="atlas_actors.search.router"):
        d = EnhancedTaskRouter(memory).route_sync(Task(id="t", domain="arc"))
    assert d.strategy == "evolutionary" and "disk gone" in caplog.text


def test_the_domain_rule_reads_the_registry() -> None:
    task = Task(id="t", domain="essay")
    assert EnhancedTaskRouter().route_sync(task).rule == "default"
    own = EnhancedTaskRouter(domain_strategies={"essay": "direct", "swe": "evolutionary"})
    assert own.route_sync(task).strategy == "direct"
    assert own.route_sync(Task(id="s", domain="swe")).strategy == "evolutionary"
    register_domain("essay", environment=PassthroughEnvironment, strategy="mcts")
    try:
        d = EnhancedTaskRouter().route_sync(task)
        assert (d.strategy, d.rule) == ("mcts", "domain")
    finally:
        unregister_domain("essay")
    with pytest.raises(ConfigError, match="domain_strategies\\['x'\\]"):
        EnhancedTaskRouter(domain_strategies={"x": "guess"})  # type: ignore[dict-item]
    with pytest.raises(ValidationError, match="default_strategy"):
        RouterConfig(default_strategy="guess")  # type: ignore[arg-type]


async def test_routing_on_a_real_memory(tmp_path: Path) -> None:
    arc = Task(id="3c9b0459", domain="arc", context={"arc_task_id": "3c9b0459"})
    async with MemorySystem(tmp_path / "memory.sqlite3") as memory:
        await memory.record(
            Experience(
                task=arc,
                solution=["rot180", "x"],
                outcome=Outcome(success=True, partial_score=1.0),
                strategy="evolutionary",
                evaluations=300,
            )
        )
        router = EnhancedTaskRouter(memory)
        repeat = Task(id="same-task-again", domain="arc", context={"arc_task_id": "3c9b0459"})
        d = await router.route(repeat)
        assert (d.strategy, d.rule, d.similarity) == ("adapt", "adapt", 1.0)
        assert d.experiences[0].solution == ["rot180", "x"]
        other = await router.route(Task(id="o", domain="arc", context={"arc_task_id": "007bbfb7"}))
        assert (other.strategy, other.rule) == ("evolutionary", "domain")
        assert other.similarity < 0.3
        swe = await router.route(Task(id="s", domain="swe", description="wrap() breaks lines"))
        assert (swe.strategy, swe.similarity) == ("mcts", 0.0)
