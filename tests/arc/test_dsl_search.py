"""DSLProposer against the real ARCEnvironment: its proposals score as the env sees them."""

from __future__ import annotations

import random

import pytest

from atlas_actors.arc import DSLProposer
from atlas_actors.types import Candidate, Task

pytest.importorskip("atlas_actors.arc.environment")


@pytest.mark.parametrize("tid", ["3c9b0459", "0520fde7", "05f2a901"])
async def test_proposals_score_in_the_environment_and_solve(tid: str) -> None:
    from atlas_actors.arc.environment import ARCEnvironment

    task = Task(id=tid, domain="arc", context={"arc_task_id": tid, "split": "train"})
    prop = DSLProposer()
    rng = random.Random(0)
    async with ARCEnvironment() as env:
        await env.reset(task)
        sols = await prop.initial(task, 80, rng)
        assert all(not isinstance(s, str) for s in sols)  # a str would mean Python source
        outs = await env.score(sols)
        assert all(o.checks for o in outs)  # every proposal is a valid program
        pool = [
            Candidate(solution=s, outcome=o, fitness=o.partial_score)
            for s, o in zip(sols, outs, strict=True)
        ]
        for _ in range(5):
            if any(c.outcome and c.outcome.success for c in pool):
                break
            pool.sort(key=lambda c: -c.fitness)
            kids = await prop.mutate(task, pool[0], prop.proposals_per_call, rng, 0.3)
            kouts = await env.score(kids)
            pool += [
                Candidate(solution=s, outcome=o, fitness=o.partial_score, origin="mutation")
                for s, o in zip(kids, kouts, strict=True)
            ]
        best = next(c for c in pool if c.outcome and c.outcome.success)
        assert best.outcome is not None
        verdict = await env.verify(best.outcome.answers)
        assert verdict.success, verdict.feedback
