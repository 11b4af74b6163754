"""DSL ops of :mod:`atlas_actors.arc.ops_moves`: primitives on hand-made grids
(compiled and as standalone Python) and their parameter generators on tiny
hand-made tasks (they fire with the right parameters, and stay quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case, check_registered, ctx, gen

from atlas_actors.arc import ops_moves as om

NEW_OPS = {"ray_detour"}

_DETOUR_IN = G([[0, 0, 0, 0], [0, 5, 0, 0], [0, 0, 0, 0], [0, 2, 0, 2]])

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # rays go up; the left one meets the 5 and steps right, then goes on up
    (
        ["ray_detour", "x", 2, "up", 1, 0],
        _DETOUR_IN,
        [[0, 0, 2, 2], [0, 5, 2, 2], [0, 2, 2, 2], [0, 2, 0, 2]],
    ),
    # side -1: it steps left instead
    (
        ["ray_detour", "x", 2, "up", -1, 0],
        _DETOUR_IN,
        [[2, 0, 0, 2], [2, 5, 0, 2], [2, 2, 0, 2], [0, 2, 0, 2]],
    ),
    # side 0: plain rays that stop at the obstacle
    (
        ["ray_detour", "x", 2, "up", 0, 0],
        _DETOUR_IN,
        [[0, 0, 0, 2], [0, 5, 0, 2], [0, 2, 0, 2], [0, 2, 0, 2]],
    ),
    # a ray whose side cell is blocked too ends there; heading right, side 1 is down
    (
        ["ray_detour", "x", 3, "right", 1, 0],
        G([[3, 0, 0, 4], [0, 0, 4, 0], [3, 0, 0, 0]]),
        [[3, 3, 3, 4], [0, 0, 4, 0], [3, 3, 3, 3]],
    ),
    # side 2: the ray turns right at the 5 and goes on to the edge
    (
        ["ray_detour", "x", 2, "up", 2, 0],
        G([[0, 0, 0], [5, 0, 0], [0, 0, 0], [2, 0, 0]]),
        [[0, 0, 0], [5, 0, 0], [2, 2, 2], [2, 0, 0]],
    ),
    # -1: every cell shoots in its own colour (the 5, blocked by nothing, too)
    (
        ["ray_detour", "x", -1, "up", -1, 0],
        G([[0, 0, 0], [0, 5, 0], [0, 0, 0], [0, 3, 0]]),
        [[3, 5, 0], [3, 5, 0], [3, 3, 0], [0, 3, 0]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES)
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_new_ops_registered_with_cases_and_generators() -> None:
    check_registered(om, NEW_OPS, CASES)


def test_ray_detour_generator() -> None:
    a = [[0, 0, 0, 0], [0, 5, 0, 0], [0, 0, 0, 0], [0, 2, 0, 2]]
    b = [[0, 0, 2, 2], [0, 5, 2, 2], [0, 2, 2, 2], [0, 2, 0, 2]]
    assert gen("ray_detour", ctx([(a, b)])) == [(2, "up", 1, 0)]
    # plain rays (no obstacle met): left to the plain rays op
    a2 = [[0, 0, 0], [0, 0, 0], [2, 0, 2]]
    b2 = [[2, 0, 2], [2, 0, 2], [2, 0, 2]]
    assert gen("ray_detour", ctx([(a2, b2)])) == []
    # a cell erased: quiet
    b3 = [[0, 0, 2, 2], [0, 0, 2, 2], [0, 2, 2, 2], [0, 2, 0, 2]]
    assert gen("ray_detour", ctx([(a, b3)])) == []
    # two colours painted, each ray its source's colour
    a4 = [[0, 0, 0], [0, 5, 0], [0, 0, 0], [0, 3, 0]]
    b4 = [[3, 5, 0], [3, 5, 0], [3, 3, 0], [0, 3, 0]]
    assert gen("ray_detour", ctx([(a4, b4)])) == [(-1, "up", -1, 0)]
