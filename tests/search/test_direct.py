"""DirectSolver and memory in the solve path: a remembered program solves an exact repeat
with a handful of evaluations; a near neighbour is adapted by a local mutation; a
remembered patch becomes a tree's first child; nothing in memory comes from hidden
answers."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from atlas_actors.arc.environment import load_arc_task
from atlas_actors.config import MindEvolutionConfig, RouterConfig
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.memory.session import MemorySession
from atlas_actors.search.base import NodeView, ProposedAction
from atlas_actors.search.direct import DirectSolver
from atlas_actors.search.proposers import SeededProposer
from atlas_actors.search.solve import solve_task
from atlas_actors.types import Experience, Outcome, Task

ROT = "3c9b0459"  # ARC-AGI-1 training: the output is the input turned 180 degrees


def arc_task(task_id: str, arc_id: str = ROT) -> Task:
    """An ARC task given inline (a copy under another id is an exact repeat)."""
    data = load_arc_task(Task(id=arc_id, domain="arc", context={"arc_task_id": arc_id}))
    outputs = data.test_outputs or []
    grids = {
        "train": [{"input": a.tolist(), "output": b.tolist()} for a, b in data.train],
        "test": [
            {"input": a.tolist(), "output": b.tolist()}
            for a, b in zip(data.test_inputs, outputs, strict=True)
        ],
    }
    return Task(id=task_id, domain="arc", context={"grids": grids})


def remembered(solution: Any, task: Task | None = None) -> Experience:
    return Experience(
        task=task or arc_task("old"),
        solution=solution,
        outcome=Outcome(success=True, partial_score=1.0),
    )


async def test_a_remembered_program_solves_a_repeat_in_one_evaluation() -> None:
    evaluator = LocalEvaluator()
    out = await DirectSolver().solve(
        arc_task("new"), evaluator, [remembered(["flip_h", "x"]), remembered(["rot180", "x"])]
    )
    await evaluator.aclose()
    assert out.solved and out.best is not None and out.best.solution == ["rot180", "x"]
    assert out.evaluations == 2 and out.experiences == 2


async def test_a_repeat_is_settled_by_the_most_similar_experience_alone() -> None:
    evaluator = LocalEvaluator()
    right = remembered(["rot180", "x"])
    right.alternatives = [["flip_h", ["flip_v", "x"]]]  # the other attempt's program
    others = [remembered(["transpose", "x"]), remembered(["flip_h", "x"])]
    out = await DirectSolver().solve(arc_task("new"), evaluator, [right, *others])
    await evaluator.aclose()
    assert out.solved and out.best is not None and out.best.solution == ["rot180", "x"]
    # the solution and its alternative (kept for the second attempt), not the others
    assert out.evaluations == 2
    assert sorted(map(str, (c.solution for c in out.candidates))) == sorted(
        map(str, (["rot180", "x"], ["flip_h", ["flip_v", "x"]]))
    )


class _Mutator:
    """Mutates a program by wrapping it in each of a few ops (one of them right)."""

    async def mutate(self, task: Task, parent: Any, n: int, rng: random.Random, t: float) -> Any:
        return [["flip_v", parent.solution], ["flip_h", parent.solution]][:n]


async def test_a_near_miss_is_adapted_by_a_local_mutation() -> None:
    evaluator = LocalEvaluator()
    solver = DirectSolver(proposer=_Mutator(), mutations=2)
    # flip_h, then flip_v of it, is rot180
    out = await solver.solve(arc_task("new"), evaluator, [remembered(["flip_h", "x"])])
    await evaluator.aclose()
    assert out.solved and out.best is not None
    assert out.best.solution == ["flip_v", ["flip_h", "x"]] and out.best.origin == "mutation"
    assert out.evaluations == 3


async def test_nothing_to_reuse_hands_over() -> None:
    evaluator = LocalEvaluator()
    other = Experience(
        task=Task(id="s", domain="swe"), solution="diff", outcome=Outcome(success=True)
    )
    out = await DirectSolver().solve(arc_task("new"), evaluator, [other])
    assert not out.solved and out.best is None and out.evaluations == 0


async def test_seeded_proposer_offers_remembered_actions_at_the_root_first() -> None:
    class Inner:
        calls = 0

        async def propose(self, task: Task, node: NodeView, k: int, rng: Any) -> Any:
            Inner.calls += 1
            return [ProposedAction(action={"kind": "submit"}, label="inner")][:k]

    seed = ProposedAction(action={"kind": "apply_patch", "patch": "p"}, source="memory")
    proposer = SeededProposer(Inner(), [seed])
    task = Task(id="t", domain="swe")
    root = NodeView(node_id="0", state={}, depth=0)
    assert await proposer.propose(task, root, 1, random.Random(0)) == [seed]
    assert Inner.calls == 0
    tried = NodeView(node_id="0", state={}, depth=0, tried=[seed.action])
    assert [p.label for p in await proposer.propose(task, tried, 1, random.Random(0))] == ["inner"]
    deeper = NodeView(node_id="1", state={}, depth=1)
    assert [p.label for p in await proposer.propose(task, deeper, 2, random.Random(0))] == ["inner"]


async def test_memory_makes_a_repeat_far_cheaper(tmp_path: Path) -> None:
    """Solve a task with memory; its exact repeat (another id) is routed to ``adapt``
    and solved directly with far fewer evaluations; memory records what the search
    could check, not the hidden verdict."""
    config = MindEvolutionConfig(max_evaluations=4000)
    session = await MemorySession(str(tmp_path / "m.sqlite3"), run_id="r").open()
    evaluator = LocalEvaluator()
    try:
        first_task = arc_task("first")
        first = await solve_task(
            first_task, evaluator, config=config, routing=await session.route(first_task)
        )
        await session.remember(first_task, first)
        repeat = arc_task("repeat")
        decision = await session.route(repeat)
        second = await solve_task(repeat, evaluator, config=config, routing=decision)
    finally:
        await evaluator.aclose()
        session.close()
    assert first.routing is not None and first.routing["strategy"] == "evolutionary"
    assert first.solved and first.checks_passed
    assert decision.strategy == "adapt" and decision.similarity == 1.0
    assert second.solved and second.strategy == "adapt" and second.stopped == "success"
    assert second.solution == first.solution
    assert second.evaluations <= 4 and first.evaluations >= 10 * second.evaluations
    assert session.routes == {"evolutionary": 1, "adapt": 1}


HARD = "3bd67248"  # ARC-AGI-1 training: unsolved by the DSL within 60 evaluations


async def test_an_unsolved_repeat_is_recalled_under_the_same_settings(tmp_path: Path) -> None:
    """A task searched to the end of its budget without passing its checks is remembered
    with its settings; its exact repeat under the same settings is answered from memory
    (the best solutions re-verified: a few evaluations, the same attempts), and searched
    again under other settings or with recall off."""
    config = MindEvolutionConfig(max_evaluations=60)
    options = {"cpu_limits": False}
    path = str(tmp_path / "m.sqlite3")
    session = await MemorySession(path, run_id="r").open()
    evaluator = LocalEvaluator()
    try:
        first_task = arc_task("first", HARD)
        first = await solve_task(
            first_task,
            evaluator,
            config=config,
            routing=await session.route(first_task),
            proposer_options=options,
        )
        await session.remember(first_task, first)
        repeat = arc_task("repeat", HARD)
        decision = await session.route(repeat)
        second = await solve_task(
            repeat, evaluator, config=config, routing=decision, proposer_options=options
        )
        # other settings (a larger budget): searched again
        more = MindEvolutionConfig(max_evaluations=80)
        third = await solve_task(
            repeat, evaluator, config=more, routing=decision, proposer_options=options
        )
        # recall off: searched again
        off = await MemorySession(path, router=RouterConfig(recall_unsolved=False)).open()
        try:
            no_recall = await off.route(repeat)
        finally:
            off.close()
        fourth = await solve_task(
            repeat, evaluator, config=config, routing=no_recall, proposer_options=options
        )
    finally:
        await evaluator.aclose()
        session.close()
    assert not first.checks_passed and first.stopped == "evaluations"
    assert first.settings and first.alternatives  # the programs behind other attempts
    assert [e.task.id for e in decision.repeats] == ["first"]
    assert decision.repeats[0].settings == first.settings
    assert second.stopped == "recalled" and second.strategy == "direct"
    assert second.routing is not None and second.routing["rule"] == "recall"
    assert second.evaluations == 1 + len(first.alternatives)
    assert second.attempts == first.attempts and second.solution == first.solution
    assert third.stopped == "evaluations" and third.evaluations == 80
    assert third.settings != first.settings
    assert no_recall.repeats == [] and fourth.stopped == "evaluations"
    assert fourth.evaluations == 60


def mirror_task(task_id: str, seed: int = 0) -> Task:
    """A synthetic ARC task: every output is its input mirrored left to right, and the
    test input is its own mirror image, so the program that fits every train pair
    answers it unchanged, which the environment doubts (every train output differs from
    its input)."""
    rng = random.Random(seed)
    train = []
    for _ in range(4):
        grid = [[rng.randrange(10) for _ in range(6)] for _ in range(5)]
        train.append({"input": grid, "output": [row[::-1] for row in grid]})
    half = [[rng.randrange(10) for _ in range(3)] for _ in range(5)]
    test = [row + row[::-1] for row in half]
    return Task(
        id=task_id, domain="arc", context={"grids": {"train": train, "test": [{"input": test}]}}
    )


class MirrorProposer:
    """DSL programs of which only ``flip_h`` fits the mirror tasks: turns first, then
    colour swaps (none fits), so a search never meets a fit it does not doubt."""

    proposals_per_call = 4

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        return [[op, "x"] for op in ("flip_h", "flip_v", "rot90", "rot180", "transpose")]

    async def mutate(
        self, task: Task, parent: Any, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        return [["recolor", "x", [[rng.randrange(10), rng.randrange(10)]]] for _ in range(n)]

    async def crossover(self, task: Task, a: Any, b: Any, n: int, rng: random.Random) -> Any:
        return await self.mutate(task, a, n, rng, 1.0)


async def test_a_repeat_whose_answer_was_doubted_is_recalled(tmp_path: Path) -> None:
    """A search whose fitting program's answer the environment doubts runs to its
    budget; memory keeps the doubts, and the task's exact repeat under the same settings
    is recalled (its programs re-verified, the same attempts) instead of adapted and
    searched again; with recall off it is searched again."""
    config = MindEvolutionConfig(max_evaluations=60)
    path = str(tmp_path / "m.sqlite3")
    session = await MemorySession(path, run_id="r").open()
    evaluator = LocalEvaluator()

    async def solve(task: Task, routing: Any) -> Any:
        return await solve_task(
            task, evaluator, config=config, routing=routing, proposer=MirrorProposer()
        )

    try:
        first_task = mirror_task("first")
        first = await solve(first_task, await session.route(first_task))
        await session.remember(first_task, first)
        repeat = mirror_task("repeat")
        decision = await session.route(repeat)
        second = await solve(repeat, decision)
        off = await MemorySession(path, router=RouterConfig(recall_unsolved=False)).open()
        try:
            no_recall = await off.route(repeat)
        finally:
            off.close()
        third = await solve(repeat, no_recall)
    finally:
        await evaluator.aclose()
        session.close()
    # the first search: a fit on every train pair, doubted, so it ran out its budget
    assert first.checks_passed and first.solution == ["flip_h", "x"]
    assert first.doubts == [["unchanged"]] and first.stopped == "evaluations"
    assert first.evaluations == 60
    # memory routes the repeat to adapt (a success at similarity 1) and hands the
    # doubted repeat over for recall
    assert decision.rule == "adapt" and [e.task.id for e in decision.repeats] == ["first"]
    assert decision.repeats[0].outcome.doubts == [["unchanged"]]
    assert second.stopped == "recalled" and second.strategy == "direct"
    assert second.routing is not None and second.routing["rule"] == "recall"
    assert "doubted it (unchanged)" in second.routing["reason"]
    assert second.evaluations == 1 + len(first.alternatives) <= 4
    assert second.attempts == first.attempts and second.solution == first.solution
    # recall off: adapted (the doubted program does not settle it), then searched again
    assert no_recall.repeats == [] and third.stopped == "evaluations"
    assert third.evaluations > 60
