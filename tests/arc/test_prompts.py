"""ARC's prompts and the judge's reading of an answer (no network)."""

from __future__ import annotations

import numpy as np

from atlas_actors.arc.judge import FALLBACK_SCORE, score_from_text
from atlas_actors.arc.prompts import render_feedback, render_grid, render_program, render_task
from atlas_actors.llm.extract import parse_score
from atlas_actors.types import Check, Outcome


def test_unparseable_score_falls_back_with_reason() -> None:
    assert parse_score("no idea, sorry") is None
    score, reason = score_from_text("no idea, sorry")
    assert score == FALLBACK_SCORE
    assert reason.startswith("unparseable: ")
    assert "no idea" in reason
    assert score_from_text("")[0] == FALLBACK_SCORE


# -- prompts ---------------------------------------------------------------------------------


def test_render_grid_is_compact() -> None:
    assert render_grid(np.array([[0, 1, 2], [3, 4, 5]])) == "012\n345"
    assert render_grid([[7]]) == "7"


def test_render_task_shows_train_pairs_and_test_inputs_only() -> None:
    train = [(np.array([[1, 2]]), np.array([[2, 1]]))]
    text = render_task(train, [np.array([[3, 4]])])
    assert "train 0 input (1x2)\n12" in text
    assert "train 0 output (1x2)\n21" in text
    assert "test 0 input (1x2)\n34" in text
    assert "test 0 output" not in text


def test_render_feedback_includes_pairs_outputs_and_verifier_text() -> None:
    train = [
        (np.array([[1, 2]]), np.array([[2, 1]])),
        (np.array([[3, 4]]), np.array([[4, 3]])),
    ]
    outcome = Outcome(
        success=False,
        partial_score=0.4,
        feedback="train 0: exact\ntrain 1: 2 of 2 cells wrong (0% similar)",
        checks=[
            Check(name="train 0", passed=True, similarity=1.0, output=[[2, 1]]),
            Check(name="train 1", passed=False, similarity=0.0, output=[[3, 4]]),
        ],
    )
    text = render_feedback(outcome, train)
    assert "1 of 2 train examples exactly right" in text
    assert "- train 0: correct" in text
    assert "- train 1: wrong (right shape, 0% of cells match)" in text
    assert outcome.feedback in text
    assert "train 1: the program returned (1x2):\n34" in text
    assert "train 1: expected (1x2):\n43" in text
    errored = Outcome(
        success=False,
        checks=[Check(name="train 0", passed=False, error="ZeroDivisionError")],
    )
    assert "train 0: ERROR: ZeroDivisionError" in render_feedback(errored)
    assert "not been run" in render_feedback(None)


def test_a_dsl_program_is_shown_as_the_python_it_compiles_to() -> None:
    shown = render_program(["rot180", ["color_list", "x", "desc", "h", 7]])
    assert shown.startswith("```python\n") and shown.endswith("\n```")
    assert "def transform(grid" in shown and "def color_list(" in shown
    assert "rot180(color_list(x, 'desc', 'h', 7))" in shown
    assert render_program("def transform(grid):\n    return grid\n") == (
        "```python\ndef transform(grid):\n    return grid\n```"
    )
    assert render_program({"not": "a program"}) == '```json\n{"not": "a program"}\n```'
