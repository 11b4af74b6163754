"""DirectSolver and memory in the solve path: a remembered program solves an exact repeat
with a handful of evaluations; a near neighbour is adapted by a local mutation; a
remembered patch becomes a tree's first child; nothing in memory comes from hidden
answers."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from atlas_actors.arc.environment import load_arc_task
from atlas_actors.config import MindEvolutionConfig
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
