"""The moves ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops.moves import (
    move_by_count,
    move_by_size,
    roll_by_key,
    shift_by_color,
    step_to_marker,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

# colour 1 one step down ((1 + 30) * 61 + 30), colour 2 two steps right (30 * 61 + 32)
_BY_COLOR = [[1921, 1], [1862, 2]]

_FALL_IN = G(case_grid("move_by_count"))

_FALL_OUT = case_want("move_by_count")

_SHIFT_IN = G(case_grid("shift_by_color"))

_SHIFT_OUT = case_want("shift_by_color")

_STEP_OUT = case_want("step_to_marker")

_STEP_IN = G(case_grid("step_to_marker"))

_ROLL_OUT = case_want("roll_by_key")

_ROLL_IN = G(case_grid("roll_by_key"))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        move_by_size(G([[1, 0]]), "up", 0)  # leaves the grid
    with pytest.raises(ValueError):
        move_by_count(G([[1, 1, 1], [0, 0, 0]]), "down", 0)  # only a floor: nothing moves

    with pytest.raises(ValueError):
        shift_by_color(G([[0, 5]]), _BY_COLOR, 0)  # 5 has no offset

    with pytest.raises(ValueError):
        step_to_marker(G([[8, 0, 0], [0, 0, 4]]), 8, 0)  # the 8 is on no corner

    with pytest.raises(ValueError):
        roll_by_key(G([[1, 2], [3, 4]]))  # no key line


def test_stretch_to_dot_generator() -> None:
    a = [[1, 1, 0, 8], [1, 1, 0, 0]]
    c = ctx([(a, [[1, 1, 1, 8], [1, 1, 1, 0]])])
    assert gen("stretch_to_dot", c) == []
    c = ctx([([[1, 2, 0, 0, 8]], [[1, 1, 1, 1, 2]])])
    assert gen("stretch_to_dot", c) == [(0,)]


def test_step_toward_generator() -> None:
    c = ctx([([[3, 0, 0, 4]], [[0, 3, 0, 4]])])
    assert gen("step_toward", c) == [(3, 4, 0)]
    c = ctx([([[3, 0, 0, 4]], [[0, 0, 3, 4]])])
    assert gen("step_toward", c) == []


def test_shift_by_count_generator() -> None:
    c = ctx(
        [
            ([[0, 1, 0, 0, 5], [0, 0, 0, 0, 0]], [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0]]),
            ([[0, 1, 0, 5, 5], [0, 0, 0, 0, 0]], [[0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]),
        ]
    )
    assert gen("shift_by_count", c) == [(5, "right", 0)]
    # the tally is the same in every pair: a plain shift, left to other ops
    c = ctx(
        [
            ([[0, 1, 0, 0, 5], [0, 0, 0, 0, 0]], [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0]]),
            ([[1, 0, 0, 0, 5], [0, 0, 0, 0, 0]], [[0, 1, 0, 0, 0], [0, 0, 0, 0, 0]]),
        ]
    )
    assert gen("shift_by_count", c) == []


def test_move_by_count_generator() -> None:
    assert gen("move_by_count", ctx([(_FALL_IN.tolist(), _FALL_OUT)])) == [("down", 0)]
    # a cell painted on: not a move
    more = [r[:] for r in _FALL_OUT]
    more[0][0] = 9
    assert gen("move_by_count", ctx([(_FALL_IN.tolist(), more)])) == []


def test_shift_by_color_generator() -> None:
    assert gen("shift_by_color", ctx([(_SHIFT_IN.tolist(), _SHIFT_OUT)])) == [(_BY_COLOR, 0)]
    # one offset for every colour is a plain shift, left to `shift`
    moved = [[0, 0, 1], [0, 0, 0], [0, 2, 0]]
    assert gen("shift_by_color", ctx([(_SHIFT_IN.tolist(), moved)])) == []


def test_step_to_marker_generator() -> None:
    assert gen("step_to_marker", ctx([(_STEP_IN.tolist(), _STEP_OUT)])) == [(8, 0)]
    # moved away from the marker instead
    away = [[4, 4, 0, 0, 0], [4, 4, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0] * 5]
    assert gen("step_to_marker", ctx([(_STEP_IN.tolist(), away)])) == []


def test_roll_by_key_generator() -> None:
    assert gen("roll_by_key", ctx([(_ROLL_IN.tolist(), _ROLL_OUT)])) == [()]
    # the last two rows swapped: no roll
    assert gen("roll_by_key", ctx([(_ROLL_IN.tolist(), [[1, 2], [3, 4], [8, 0], [6, 7]])])) == []


def test_generators_stay_quiet_when_the_pairs_do_not_fit() -> None:
    grow = ctx([([[1, 0, 1]], [[1, 2, 1]])])

    assert gen("move_by_size", grow) == []
