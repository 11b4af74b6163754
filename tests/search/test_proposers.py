"""MixedSolutionProposer (several proposers into one Mind Evolution population) and the
proposer modes, with proposers written here and a real Mind Evolution search."""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest

from atlas_actors.config import MindEvolutionConfig
from atlas_actors.errors import ConfigError
from atlas_actors.llm.usage import Usage
from atlas_actors.search.base import Proposer
from atlas_actors.search.mind_evolution import MindEvolutionSearch
from atlas_actors.search.proposers import MixedSolutionProposer, check_mode
from atlas_actors.types import Candidate, Outcome, Task

TASK = Task(id="t", domain="toy")


class Part:
    """A proposer that names its solutions and records how it was called."""

    def __init__(
        self, name: str, per_call: int, one_at_a_time: bool = False, delay: float = 0.01
    ) -> None:
        self.name = name
        self.delay = delay
        self.proposals_per_call = per_call
        if one_at_a_time:
            self.max_concurrent_calls = 1
        self.calls: list[tuple[str, int]] = []
        self.active = 0
        self.most_active = 0
        self.fail = False

    async def _answer(self, kind: str, n: int, rng: random.Random) -> list[Any]:
        self.calls.append((kind, n))
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            await anyio.sleep(self.delay)
            if self.fail:
                raise RuntimeError(f"{self.name} is down")
            return [f"{self.name}:{kind}:{rng.randrange(10**6)}:{i}" for i in range(n)]
        finally:
            self.active -= 1

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        return await self._answer("initial", n, rng)

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        return await self._answer(f"mutate({parent.solution})", n, rng)

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        return await self._answer(f"crossover({a.solution},{b.solution})", n, rng)


class Metered(Part):
    """A part that keeps usage counters, as an LLM proposer does."""

    def __init__(self, name: str, per_call: int) -> None:
        super().__init__(name, per_call)
        self.usage = Usage(calls=3)

    def pop_usage(self, task_id: str) -> Usage:
        return self.usage

    def report(self, task_id: str) -> dict[str, float]:
        return {"llm_calls": 3.0}


async def test_the_lead_proposes_the_first_population_alone() -> None:
    dsl, llm = Part("dsl", 32, one_at_a_time=True), Part("llm", 1)
    mixed = MixedSolutionProposer([dsl, llm])
    assert isinstance(mixed, Proposer)
    got = await mixed.initial(TASK, 40, random.Random(0))
    assert dsl.calls == [("initial", 40)] and llm.calls == []
    assert len(got) == 40 and all(s.startswith("dsl:initial") for s in got)


async def test_without_a_lead_every_part_gets_a_share_interleaved() -> None:
    a, b = Part("a", 4), Part("b", 4)
    got = await MixedSolutionProposer([a, b], lead=False).initial(TASK, 5, random.Random(0))
    assert a.calls == [("initial", 3)] and b.calls == [("initial", 2)]
    assert [s.split(":")[0] for s in got] == ["a", "b", "a", "b", "a"]


async def test_mutation_asks_each_part_for_its_own_share_of_children() -> None:
    dsl, llm = Part("dsl", 32, one_at_a_time=True), Part("llm", 1, delay=0.0)
    mixed = MixedSolutionProposer([dsl, llm], lead=False)
    assert mixed.proposals_per_call == 33
    parent = Candidate(solution="p")
    got = await mixed.mutate(TASK, parent, 33, random.Random(1), 1.0)
    assert dsl.calls == [("mutate(p)", 32)] and llm.calls == [("mutate(p)", 1)]
    assert got[0].startswith("dsl:") and got[1].startswith("llm:") and len(got) == 33
    # asked for fewer, each part gives fewer in proportion (at least one)
    await mixed.crossover(TASK, parent, Candidate(solution="q"), 11, random.Random(1))
    assert dsl.calls[-1] == ("crossover(p,q)", 10) and llm.calls[-1] == ("crossover(p,q)", 1)


async def test_same_rng_same_children_and_duplicates_dropped() -> None:
    class Same(Part):
        async def mutate(self, *args: Any) -> list[Any]:
            return ["same", f"{self.name}-own"]

    mixed = MixedSolutionProposer([Same("a", 2, one_at_a_time=True), Same("b", 2, True)])
    assert await mixed.mutate(TASK, Candidate(solution=0), 4, random.Random(0), 1.0) == [
        "same",
        "a-own",
        "b-own",
    ]
    one = MixedSolutionProposer([Part("a", 2, True), Part("b", 1, True)])
    two = MixedSolutionProposer([Part("a", 2, True), Part("b", 1, True)])
    parent = Candidate(solution=0)
    assert await one.mutate(TASK, parent, 3, random.Random(7), 1.0) == await two.mutate(
        TASK, parent, 3, random.Random(7), 1.0
    )


async def test_a_cpu_bound_part_runs_one_call_at_a_time_the_others_concurrently() -> None:
    dsl, llm = Part("dsl", 4, one_at_a_time=True), Part("llm", 1)
    mixed = MixedSolutionProposer([dsl, llm], lead=False)
    assert mixed.max_concurrent_calls is None  # the search may overlap the turns
    parent = Candidate(solution="p")
    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(mixed.mutate, TASK, parent, 5, random.Random(i), 1.0)
    assert len(dsl.calls) == len(llm.calls) == 6
    assert dsl.most_active == 1 and llm.most_active == 6
    only_cpu = MixedSolutionProposer([Part("a", 1, True), Part("b", 1, True)])
    assert only_cpu.max_concurrent_calls == 1


async def test_a_turn_does_not_wait_for_the_llm_its_answer_comes_with_a_later_one() -> None:
    dsl, llm = Part("dsl", 2, one_at_a_time=True), Part("llm", 1, delay=0.3)
    mixed = MixedSolutionProposer([dsl, llm], lead=False, in_flight=1)
    parent = Candidate(solution="p")
    start = anyio.current_time()
    first = await mixed.mutate(TASK, parent, 3, random.Random(0), 1.0)
    assert anyio.current_time() - start < 0.25
    assert {s.split(":")[0] for s in first} == {"dsl"}
    second = await mixed.mutate(TASK, parent, 3, random.Random(1), 1.0)
    assert len(llm.calls) == 1  # one in flight at most: the second turn started none
    await anyio.sleep(0.35)
    third = await mixed.mutate(TASK, parent, 3, random.Random(2), 1.0)
    assert [s.split(":")[0] for s in third] == ["dsl", "llm", "dsl"]
    assert {s.split(":")[0] for s in second} == {"dsl"} and len(llm.calls) == 2
    # with background parts only, a turn waits for the first answer
    alone = MixedSolutionProposer([Part("llm", 1, delay=0.05)])
    got = await alone.mutate(TASK, parent, 1, random.Random(0), 1.0)
    assert len(got) == 1 and got[0].startswith("llm:mutate(p)")
    # the end of a search cancels what is still running (the third turn's call): its
    # answer never arrives
    mixed.report(TASK.id)
    await anyio.sleep(0.4)
    assert mixed._ready == {} and not mixed._flight


async def test_a_failing_part_is_counted_and_the_others_answers_kept() -> None:
    dsl, llm = Part("dsl", 2, one_at_a_time=True), Metered("llm", 1)
    llm.fail, llm.delay = True, 0.0
    mixed = MixedSolutionProposer([dsl, llm], lead=False)
    got = await mixed.mutate(TASK, Candidate(solution="p"), 3, random.Random(0), 1.0)
    assert [s.split(":")[0] for s in got] == ["dsl", "dsl"]
    assert mixed.report(TASK.id) == {"llm_calls": 3.0, "proposer_failures": 1.0}
    assert mixed.report(TASK.id) == {"llm_calls": 3.0}  # counted once
    assert mixed.pop_usage(TASK.id) is llm.usage
    dsl.fail = True
    with pytest.raises(RuntimeError, match="dsl is down"):
        await mixed.mutate(TASK, Candidate(solution="p"), 3, random.Random(0), 1.0)


async def test_the_time_limit_cancels_calls_in_flight_and_starts_none_after() -> None:
    class Slow(Part):
        async def mutate(self, *args: Any) -> list[Any]:
            self.calls.append(("mutate", 1))
            try:
                await anyio.sleep(30)
            except BaseException:
                self.calls.append(("cancelled", 0))
                raise
            return ["late"]

    dsl, llm = Part("dsl", 2, one_at_a_time=True), Slow("llm", 1)
    mixed = MixedSolutionProposer([dsl, llm], lead=False, time_limit=0.2)
    got = await mixed.mutate(TASK, Candidate(solution="p"), 3, random.Random(0), 1.0)
    assert [s.split(":")[0] for s in got] == ["dsl", "dsl"]
    await anyio.sleep(0.3)
    assert llm.calls == [("mutate", 1), ("cancelled", 0)]  # cut at the limit
    got = await mixed.mutate(TASK, Candidate(solution="p"), 3, random.Random(0), 1.0)
    assert got == [] and len(llm.calls) == 2 and len(dsl.calls) == 1  # neither asked
    assert mixed.report(TASK.id) == {}  # cut at the limit is not a failure


def test_modes_resolve_and_bad_ones_are_named() -> None:
    assert check_mode("auto", TASK, has_llm=True) == "llm"
    assert check_mode("auto", TASK, has_llm=False) == "offline"
    assert check_mode("hybrid", TASK, has_llm=True) == "hybrid"
    with pytest.raises(ConfigError, match="task t: the hybrid proposer needs an LLM endpoint"):
        check_mode("hybrid", TASK, has_llm=False)
    with pytest.raises(ConfigError, match="mode='both': allowed 'auto', 'offline', 'llm'"):
        check_mode("both", TASK, has_llm=True)


class Scored:
    """An evaluator of the parts' strings: the LLM's mutations of the lead's solutions
    are right."""

    async def evaluate(self, task: Task, solutions: list[Any]) -> list[Outcome]:
        out = []
        for s in solutions:
            right = s.startswith("llm:mutate(dsl:")
            score = 1.0 if right else 0.5 if s.startswith("dsl:") else 0.1
            out.append(Outcome(success=right, partial_score=score, feedback=""))
        return out


async def test_in_mind_evolution_the_llm_refines_the_leads_population() -> None:
    dsl, llm = Part("dsl", 4, one_at_a_time=True), Part("llm", 1)
    config = MindEvolutionConfig(
        islands=2, population_size=4, generations=10, conversations_per_island=2
    )
    result = await MindEvolutionSearch(
        MixedSolutionProposer([dsl, llm]),
        Scored(),  # type: ignore[arg-type]
        config,
    ).search(TASK, seed=0)
    assert result.best is not None and result.best.outcome is not None
    assert result.best.outcome.success
    assert str(result.best.solution).startswith("llm:mutate(dsl:")
    assert ("initial", 8) in dsl.calls
    # the model's first call for the task: programs of its own (after the first
    # population, which was the lead's alone); then refinements of the population's
    assert llm.calls[0] == ("initial", 4)
    assert all(
        kind.startswith("mutate") or kind.startswith("crossover") for kind, _ in llm.calls[1:]
    )


async def test_with_a_lead_a_background_part_starts_with_programs_of_its_own() -> None:
    dsl, llm = Part("dsl", 2, one_at_a_time=True), Part("llm", 1, delay=0.0)
    mixed = MixedSolutionProposer([dsl, llm])
    parent = Candidate(solution="p")
    first = await mixed.mutate(TASK, parent, 3, random.Random(0), 1.0)
    assert llm.calls == [("initial", 4)]
    assert [s.split(":")[1] for s in first if s.startswith("llm")] == ["initial"] * 4
    await mixed.mutate(TASK, parent, 3, random.Random(1), 1.0)
    assert llm.calls[1] == ("mutate(p)", 1)
    # a new task starts again with its own programs; the end of a search forgets it
    other = Task(id="u", domain="toy")
    await mixed.mutate(other, parent, 3, random.Random(2), 1.0)
    assert llm.calls[2] == ("initial", 4)
    mixed.report(TASK.id)
    await mixed.mutate(TASK, parent, 3, random.Random(3), 1.0)
    assert llm.calls[3] == ("initial", 4)


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="proposers: give at least one"):
        MixedSolutionProposer([])
    with pytest.raises(ValueError, match="in_flight: must be at least 1, got 0"):
        MixedSolutionProposer([Part("a", 1)], in_flight=0)
    with pytest.raises(ValueError, match="first_samples: must be at least 1, got -2"):
        MixedSolutionProposer([Part("a", 1)], first_samples=-2)


async def test_the_tree_mix_interleaves_shares_and_keeps_failures_as_problems() -> None:
    from atlas_actors.search.base import NodeView, ProposedAction
    from atlas_actors.search.proposers import MixedProposer

    class Actions:
        def __init__(self, names: list[str], fail: bool = False) -> None:
            self.names, self.fail, self.asked = names, fail, 0

        async def propose(
            self, task: Task, node: NodeView, k: int, rng: random.Random
        ) -> list[ProposedAction]:
            self.asked = k
            if self.fail:
                raise RuntimeError("endpoint down")
            return [ProposedAction(action={"kind": n}) for n in self.names[:k]]

    llm, offline = Actions(["a", "b", "c"]), Actions(["a", "x", "y"])
    node = NodeView(node_id="0", state={})
    got = await MixedProposer([llm, offline]).propose(TASK, node, 5, random.Random(0))
    assert (llm.asked, offline.asked) == (3, 2)  # the first part gets the remainder
    assert [p.action["kind"] for p in got] == ["a", "b", "x", "c"]  # "a" once
    assert got.problems == []
    down = MixedProposer([Actions([], fail=True), Actions(["x"])])
    assert [p.action["kind"] for p in await down.propose(TASK, node, 2, random.Random(0))] == ["x"]
    nothing = await MixedProposer([Actions([], fail=True)]).propose(TASK, node, 2, random.Random(0))
    assert nothing == [] and "endpoint down" in nothing.problems[0]
