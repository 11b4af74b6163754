"""Mind Evolution on a toy problem: find a hidden bit string.

Solutions are lists of 0/1; fitness is the fraction of bits right, success when all
are. The proposer flips bits (mutation) and splices (crossover), so the search must
actually evolve to succeed: random initial strings of 24 bits are almost never right.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from atlas_actors.config import MindEvolutionConfig
from atlas_actors.search.base import Proposer
from atlas_actors.search.mind_evolution import MindEvolutionSearch
from atlas_actors.types import Candidate, Outcome, Task, solution_key

TARGET = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0]
TASK = Task(id="bits", domain="toy")


class BitsEvaluator:
    def __init__(self, delay: float = 0.0) -> None:
        self.calls: list[int] = []
        self.evaluated: list[str] = []
        self.delay = delay

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        self.calls.append(len(solutions))
        if self.delay:
            # Different delays per call make concurrent conversations finish out of order.
            await anyio.sleep(self.delay * (len(self.calls) % 3))
        out = []
        for s in solutions:
            self.evaluated.append(solution_key(s))
            right = sum(int(a == b) for a, b in zip(s, TARGET, strict=True))
            out.append(
                Outcome(
                    success=right == len(TARGET),
                    partial_score=right / len(TARGET),
                    feedback=f"{len(TARGET) - right} bits wrong",
                )
            )
        return out


class BitsProposer:
    proposals_per_call = 4

    def __init__(self) -> None:
        self.mutations = 0
        self.crossovers = 0
        self.initials = 0

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        self.initials += 1
        return [[rng.randint(0, 1) for _ in TARGET] for _ in range(n)]

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        self.mutations += 1
        assert parent.outcome is not None  # the search always hands over evaluated parents
        out = []
        for _ in range(n):
            child = list(parent.solution)
            i = rng.randrange(len(child))
            child[i] = 1 - child[i]
            out.append(child)
        return out

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        self.crossovers += 1
        cut = rng.randrange(1, len(TARGET))
        return [list(a.solution[:cut]) + list(b.solution[cut:]) for _ in range(n)]


def small_config(**kw: Any) -> MindEvolutionConfig:
    base: dict[str, Any] = {
        "islands": 3,
        "population_size": 6,
        "conversations_per_island": 2,
        "turns_per_conversation": 3,
        "generations": 40,
        "migration_size": 2,
    }
    base.update(kw)
    return MindEvolutionConfig(**base)


def test_proposers_satisfy_the_protocol() -> None:
    assert isinstance(BitsProposer(), Proposer)


async def test_evolves_to_the_target_and_stops_on_success() -> None:
    proposer = BitsProposer()
    search = MindEvolutionSearch(proposer, BitsEvaluator(), small_config())
    result = await search.search(TASK, seed=1)
    assert result.stopped == "success"
    assert result.best is not None and result.best.solution == TARGET
    assert result.best.outcome is not None and result.best.outcome.success
    assert proposer.mutations > 0 and proposer.crossovers > 0
    # Fitness never goes down from one generation to the next (elites survive).
    assert all(b >= a for a, b in zip(result.history, result.history[1:], strict=False))
    assert result.history[-1] == 1.0 > result.history[0]


async def test_same_seed_same_result_despite_out_of_order_evaluations() -> None:
    runs = []
    for _ in range(2):
        ev = BitsEvaluator(delay=0.001)
        res = await MindEvolutionSearch(BitsProposer(), ev, small_config()).search(TASK, seed=7)
        runs.append((res, ev))
    (a, ev_a), (b, ev_b) = runs
    assert [c.solution for c in a.candidates] == [c.solution for c in b.candidates]
    assert a.evaluations == b.evaluations and a.generations == b.generations
    assert sorted(ev_a.evaluated) == sorted(ev_b.evaluated)
    other = await MindEvolutionSearch(BitsProposer(), BitsEvaluator(), small_config()).search(
        TASK, seed=8
    )
    assert other.evaluations != a.evaluations or [c.solution for c in other.candidates] != [
        c.solution for c in a.candidates
    ]


async def test_evaluation_budget_is_exact_and_nothing_is_scored_twice() -> None:
    ev = BitsEvaluator()
    cfg = small_config(max_evaluations=50, generations=100)
    result = await MindEvolutionSearch(BitsProposer(), ev, cfg).search(TASK, seed=3)
    assert result.stopped == "evaluations"
    assert result.evaluations == 50
    assert result.evaluator_calls == sum(ev.calls) <= 50
    assert len(ev.evaluated) == len(set(ev.evaluated)), "a solution was evaluated twice"


async def test_time_limit_stops_the_search() -> None:
    ev = BitsEvaluator(delay=0.02)
    cfg = small_config(time_limit_s=0.3, generations=1000)

    class Never(BitsProposer):
        async def mutate(
            self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
        ) -> list[Any]:
            return [[rng.randint(0, 1) for _ in TARGET] for _ in range(n)]

    with anyio.fail_after(5):
        result = await MindEvolutionSearch(Never(), ev, cfg).search(TASK, seed=0)
    assert result.stopped in ("time", "success")
    assert result.seconds < 2.0


async def test_generations_limit_and_ranking() -> None:
    cfg = small_config(generations=2, stop_on_success=False)
    result = await MindEvolutionSearch(BitsProposer(), BitsEvaluator(), cfg).search(TASK, seed=0)
    assert result.generations == 2 and result.stopped == "generations"
    fits = [c.fitness for c in result.candidates]
    assert fits == sorted(fits, reverse=True)
    assert len({solution_key(c.solution) for c in result.candidates}) == len(result.candidates)


async def test_memory_solutions_seed_the_population() -> None:
    ev = BitsEvaluator()
    cfg = small_config(memory_init_fraction=0.5)
    result = await MindEvolutionSearch(BitsProposer(), ev, cfg).search(
        TASK, seed=0, initial=[TARGET]
    )
    assert result.stopped == "success" and result.generations == 0
    assert result.best is not None and result.best.origin == "memory"


class DoubtingEvaluator(BitsEvaluator):
    """Any string with at most one bit wrong succeeds, but the environment doubts the
    answer of every such string except the target (as an ARC environment doubts a
    prediction that breaks a property of every train pair)."""

    def __init__(self, doubts: bool) -> None:
        super().__init__()
        self.doubts = doubts

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        out = await super().evaluate(task, solutions)
        for s, o in zip(solutions, out, strict=True):
            o.success = o.partial_score >= 1 - 1.5 / len(TARGET)
            if self.doubts and o.success and list(s) != TARGET:
                o.doubts = [["unchanged"]]
        return out


async def test_a_doubted_success_does_not_stop_the_search() -> None:
    near = [1 - TARGET[0], *TARGET[1:]]  # one bit off: a success here
    cfg = small_config(memory_init_fraction=0.5)
    plain = await MindEvolutionSearch(BitsProposer(), DoubtingEvaluator(False), cfg).search(
        TASK, seed=0, initial=[near]
    )
    # without doubts the first success stops the search at once
    assert plain.stopped == "success" and plain.generations == 0
    doubted = await MindEvolutionSearch(BitsProposer(), DoubtingEvaluator(True), cfg).search(
        TASK, seed=0, initial=[near]
    )
    # with them it searches on until it meets a success it has no doubts about
    assert doubted.stopped == "success" and doubted.generations > 0
    assert doubted.best is not None and doubted.best.solution == TARGET
    assert any(c.solution == near for c in doubted.candidates)  # the doubted one is kept
    # a search that never meets an undoubted success runs out its budget, doubted
    # successes and all
    cfg = small_config(memory_init_fraction=0.5, max_evaluations=30)
    capped = await MindEvolutionSearch(BitsProposer(), DoubtingEvaluator(True), cfg).search(
        TASK, seed=0, initial=[near]
    )
    assert capped.stopped == "evaluations"


async def test_islands_reset_every_interval_with_fresh_proposals() -> None:
    proposer = BitsProposer()
    cfg = small_config(generations=6, reset_interval=3, reset_islands=1, stop_on_success=False)
    await MindEvolutionSearch(proposer, BitsEvaluator(), cfg).search(TASK, seed=0)
    # one initial call, then one per reset island at generations 3 and 6
    assert proposer.initials == 1 + 2


async def test_migration_moves_the_best_around_the_ring() -> None:
    search = MindEvolutionSearch(BitsProposer(), BitsEvaluator(), small_config(migration_size=1))
    good = Candidate(solution=TARGET, fitness=1.0)
    islands = [
        [good, Candidate(solution=[0] * 24, fitness=0.1)],
        [Candidate(solution=[1] * 24, fitness=0.2)],
        [Candidate(solution=[0, 1] * 12, fitness=0.3)],
    ]
    search._migrate(islands)
    assert any(c.solution == TARGET for c in islands[1])
    assert not any(c.solution == TARGET for c in islands[2])


def test_boltzmann_tournament_prefers_fitter_parents() -> None:
    search = MindEvolutionSearch(BitsProposer(), BitsEvaluator(), small_config())
    pop = [Candidate(solution=[i], fitness=f) for i, f in enumerate([0.9, 0.5, 0.1])]
    rng = random.Random(0)
    picks = [search._tournament(pop, rng).solution[0] for _ in range(2000)]
    assert picks.count(0) > picks.count(1) > picks.count(2) > 0


@pytest.mark.parametrize("field", ["islands", "population_size", "generations"])
def test_config_rejects_nonsense(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        MindEvolutionConfig(**{field: 0})


class CpuBoundProposer(BitsProposer):
    """Mutation burns ~0.1 s of CPU in a worker thread, holding the GIL, like the DSL."""

    proposals_per_call = 1

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        def burn() -> None:
            import time as _t

            t0 = _t.thread_time()
            while _t.thread_time() - t0 < 0.1:
                pass

        await anyio.to_thread.run_sync(burn)
        return [[rng.randint(0, 1) for _ in TARGET] for _ in range(n)]


class CpuBoundOneAtATime(CpuBoundProposer):
    max_concurrent_calls = 1


async def test_time_limit_is_kept_with_a_cpu_bound_proposer() -> None:
    cfg = small_config(
        time_limit_s=0.5,
        generations=1000,
        islands=4,
        conversations_per_island=5,
        crossover_rate=0.0,
    )
    limited = await MindEvolutionSearch(CpuBoundOneAtATime(), BitsEvaluator(), cfg).search(
        TASK, seed=0
    )
    # At most one proposer call (0.1 s of CPU) runs past the deadline.
    assert limited.seconds < 0.5 + 0.8, limited.seconds
    assert limited.stopped == "time"
    # Control: 20 conversations calling it at once overrun by a whole round of calls.
    unlimited = await MindEvolutionSearch(CpuBoundProposer(), BitsEvaluator(), cfg).search(
        TASK, seed=0
    )
    assert unlimited.seconds > limited.seconds + 0.5


def _cand(preds: list[Any], fitness: float) -> Candidate:
    return Candidate(
        solution=fitness,
        fitness=fitness,
        outcome=Outcome(success=False, answers=preds),
    )


def test_pick_attempts_per_test_input() -> None:
    from atlas_actors.arc.domain import pick_attempts

    a, b, c = [[1]], [[2]], [[3]]
    ranked = [_cand([a, None], 0.9), _cand([a, b], 0.8), _cand([c, c], 0.7)]
    assert pick_attempts(ranked, 2) == [
        {"attempt_1": a, "attempt_2": c},  # the best, then the next *different* prediction
        {"attempt_1": b, "attempt_2": c},  # the best program failed here: skipped
    ]
    same = [_cand([a], 0.9), _cand([a], 0.8)]
    assert pick_attempts(same, 1) == [{"attempt_1": a, "attempt_2": a}]
    assert pick_attempts([], 1) == [{"attempt_1": [[0]], "attempt_2": [[0]]}]


class OneRightProposer(BitsProposer):
    """The first mutation call returns the target at once; the others take a while and
    return wrong strings."""

    def __init__(self, sequential: bool) -> None:
        super().__init__()
        if sequential:
            self.max_concurrent_calls = 1

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        self.mutations += 1
        if self.mutations == 1:
            return [list(TARGET)]
        await anyio.sleep(0.02)
        return [[1 - b for b in TARGET]]


@pytest.mark.parametrize(
    ("sequential", "ends", "calls"),
    [
        # concurrent calls (an LLM's) with end_generation_on_success: the turns in
        # flight finish (at most one per conversation), no new turn starts
        (False, True, range(1, 7)),
        # without it, every other conversation takes its three turns: the search stays
        # fixed by its seed (the successful conversation stops after its first turn)
        (False, False, [1 + 5 * 3]),
        # one call at a time, in a fixed order: every conversation takes its turns
        (True, True, [1 + 5 * 3]),
    ],
)
async def test_a_success_ends_the_generations_other_conversations(
    sequential: bool, ends: bool, calls: Sequence[int]
) -> None:
    # 3 islands x 2 conversations x 3 turns
    cfg = small_config(crossover_rate=0.0, end_generation_on_success=ends)
    proposer = OneRightProposer(sequential)
    result = await MindEvolutionSearch(proposer, BitsEvaluator(), cfg).search(TASK, seed=1)
    assert result.stopped == "success" and result.generations == 1
    assert proposer.mutations in calls
