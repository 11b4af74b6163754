"""DSL ops of :mod:`atlas_actors.arc.ops_misc`: primitives on hand-made grids (compiled
and as standalone Python) and their parameter generators on tiny hand-made tasks (they
fire with the right parameters, and stay quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case, check_registered, ctx, gen

from atlas_actors.arc import ops_misc as om

NEW_OPS = {"line_staircase", "shift_by_count", "fill_rooms", "complete_by_analogy"}

_ROOM = [
    [0, 5, 5, 5, 0, 0],
    [0, 5, 0, 5, 5, 5],
    [0, 5, 5, 5, 0, 0],
    [0, 0, 0, 0, 0, 0],
    [5, 5, 5, 0, 0, 0],
]
_ROOM4 = [r[:] for r in _ROOM]
_ROOM4[1][2] = 4

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # a 7 line hanging from the top: copies 1 and 2 columns away, one and two cells
    # shorter, in 8 then 7
    (
        ["line_staircase", "x", 8, 0],
        G([[0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]]),
        [[7, 8, 7, 8, 7], [0, 8, 7, 8, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]],
    ),
    # a row touching the right edge grows from that end; copies leaving the grid are cut
    (
        ["line_staircase", "x", 5, 0],
        G([[0, 0, 0, 0], [0, 2, 2, 2], [0, 0, 0, 0]]),
        [[0, 0, 5, 5], [0, 2, 2, 2], [0, 0, 5, 5]],
    ),
    # two 5s: the rest moves two steps right, the 5s are gone
    (
        ["shift_by_count", "x", 5, "right", 0],
        G([[0, 1, 0, 5], [0, 1, 0, 5], [0, 0, 0, 0]]),
        [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]],
    ),
    # one 5: a cross moves down-left one step, its lines stay whole
    (
        ["shift_by_count", "x", 5, "dl", 0],
        G([[0, 3, 0, 5], [3, 3, 3, 3], [0, 3, 0, 0], [0, 3, 0, 0]]),
        [[3, 0, 0, 0], [3, 0, 0, 0], [3, 3, 3, 3], [3, 0, 0, 0]],
    ),
    # the boxed 0 (a line leaves its right wall mid-side) is a room; the 0s in the top
    # right corner lean on two grid sides, the rest is no rectangle
    (["fill_rooms", "x", 0, 4], G(_ROOM), _ROOM4),
    # a room on the grid's edge (walls on three sides)
    (
        ["fill_rooms", "x", 0, 2],
        G([[0, 5, 5], [0, 5, 0], [0, 5, 5]]),
        [[0, 5, 5], [0, 5, 2], [0, 5, 5]],
    ),
    # partial rows finish like the complete row above them, in their own colours
    (
        ["complete_by_analogy", "x", "h", 0],
        G([[1, 4, 1, 1, 4], [0, 0, 0, 0, 0], [2, 3, 0, 0, 0], [6, 0, 0, 0, 0]]),
        [[1, 4, 1, 1, 4], [0, 0, 0, 0, 0], [2, 3, 2, 2, 3], [6, 0, 0, 0, 0]],
    ),
    # columns, with the nearest earlier template (the second) for the last column
    (
        ["complete_by_analogy", "x", "v", 0],
        G([[1, 0, 5, 7], [2, 0, 6, 8], [1, 0, 6, 0], [2, 0, 5, 0]]),
        [[1, 0, 5, 7], [2, 0, 6, 8], [1, 0, 6, 8], [2, 0, 5, 7]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES)
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_new_ops_registered_with_cases_and_generators() -> None:
    check_registered(om, NEW_OPS, CASES)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        om.line_staircase(G([[1, 1], [1, 0]]), 8, 0)  # not a straight line
    with pytest.raises(ValueError):
        om.line_staircase(G([[1, 0, 0], [0, 0, 1]]), 8, 0)  # single cells only
    with pytest.raises(ValueError):
        om.line_staircase(G([[1, 1, 0], [0, 0, 1], [0, 0, 1]]), 8, 0)  # not parallel
    with pytest.raises(ValueError):
        # the wall runs on past the box's corner: no room
        om.fill_rooms(G([[5, 5, 5, 5], [5, 0, 5, 0], [5, 5, 5, 0]]), 0, 4)
    with pytest.raises(ValueError):
        # the drawn cells contradict the template (1 would be both 2 and 3)
        om.complete_by_analogy(G([[1, 4, 1], [2, 0, 3]]), "h", 0)


# ---------------------------------------------------------------- generators


def test_line_staircase_generator() -> None:
    c = ctx(
        [
            (
                [[0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]],
                [[7, 8, 7, 8, 7], [0, 8, 7, 8, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]],
            )
        ]
    )
    assert gen("line_staircase", c) == [(8, 0)]
    # two new colours: not a staircase
    c = ctx([([[0, 7, 0], [0, 7, 0]], [[8, 7, 9], [0, 7, 0]])])
    assert gen("line_staircase", c) == []
    # no line in the input
    c = ctx([([[7, 7, 0], [7, 7, 0]], [[7, 7, 8], [7, 7, 0]])])
    assert gen("line_staircase", c) == []


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


def test_fill_rooms_generator() -> None:
    assert gen("fill_rooms", ctx([(_ROOM, _ROOM4)])) == [(0, 4)]
    two = [r[:] for r in _ROOM4]
    two[3][0] = 6
    assert gen("fill_rooms", ctx([(_ROOM, two)])) == []


def test_complete_by_analogy_generator() -> None:
    src = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 0, 0]]
    want = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 2, 3]]
    assert gen("complete_by_analogy", ctx([(src, want)])) == [("h", 0)]
    # the gaps get a colour the template does not give: no analogy
    other = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 2, 2]]
    assert gen("complete_by_analogy", ctx([(src, other)])) == []
