"""The gravity ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc import compile_program
from atlas_actors.arc.grids import components
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.gravity import (
    center_in,
    gather_dots,
    object_gravity,
    snap_to_line,
    snap_to_wall,
    sort_stack,
    wall_gravity,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, task_ctx

_WALLS_IN = G(case_grid("wall_gravity"))

_WALLS_OUT = case_want("wall_gravity")


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        snap_to_line(G([[1, 0, 2]]), 0, 0)  # no lines

    with pytest.raises(ValueError):
        snap_to_wall(G([[3, 0], [3, 0], [5, 5]]), 0)  # no single cells
    with pytest.raises(ValueError):
        wall_gravity(G([[1, 0], [0, 1]]), 8, 0)  # no border line of one colour
    with pytest.raises(ValueError):
        wall_gravity(G([[1, 0, 0], [1, 0, 3], [1, 0, 0]]), 8, 0)  # nothing of colour 1
    with pytest.raises(ValueError):
        center_in(G([[3, 0, 3], [0, 0, 0]]), 3, 0)  # nothing to move
    with pytest.raises(ValueError):
        center_in(G([[3, 2, 0, 3]]), 3, 0)  # half-cell centre

    with pytest.raises(ValueError):
        sort_stack(G([[1, 1, 1]]), "down", "end", 0)  # one object

    with pytest.raises(ValueError):
        gather_dots(G([[0, 1, 0], [0, 0, 0], [8, 0, 8], [8, 8, 8]]), 0)  # tie below the dot


def test_wall_gravity_generator() -> None:
    assert gen("wall_gravity", ctx([(_WALLS_IN.tolist(), _WALLS_OUT)])) == [(8, 0)]
    # the 3 moved too: not what the walls do
    other = [r[:] for r in _WALLS_OUT]
    other[2][3:5] = [3, 2]
    assert gen("wall_gravity", ctx([(_WALLS_IN.tolist(), other)])) == []


def test_center_in_generator() -> None:
    c = ctx([([[3, 2, 0, 3]], [[3, 0, 2, 3]])])  # 3 stays, 2 moves
    assert gen("center_in", c) == [(3, 0)]
    assert gen("center_in", ctx([([[3, 2, 0, 3]], [[3, 2, 2, 3]])])) == []  # cells added


def test_sort_stack_generator() -> None:
    c = ctx([([[2, 2, 0], [0, 0, 0], [3, 3, 3]], [[0, 0, 0], [0, 2, 2], [3, 3, 3]])])
    got = gen("sort_stack", c)
    assert ("down", "end", 0) in got and ("up", "start", 0) not in got
    assert gen("sort_stack", ctx([([[2, 0]], [[2, 2]])])) == []


def test_gather_dots_generator() -> None:
    c = ctx([([[1, 0, 8, 8]], [[0, 0, 1, 0]])])
    assert gen("gather_dots", c) == [(0,)]
    assert gen("gather_dots", ctx([([[1, 0, 8, 8]], [[1, 1, 8, 8]])])) == []


def test_attract_to_generator() -> None:
    moved = [
        (
            [[3, 0, 0, 2], [0, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]],
            [[0, 0, 3, 2], [0, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]],
        )
    ]
    assert (3, 2, 0, 0) in list(GENERATORS["attract_to"](task_ctx(moved, [])))


def test_generators_stay_quiet_when_the_pairs_do_not_fit() -> None:
    grow = ctx([([[1, 0, 1]], [[1, 2, 1]])])

    assert gen("snap_to_line", grow) == []


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    c = ctx([([[3, 0], [0, 0], [5, 5]], [[0, 0], [5, 0], [5, 5]])])
    assert gen("snap_to_wall", c) == [(0,)]
    assert gen("snap_to_wall", ctx([([[3, 0], [5, 5]], [[3, 3], [5, 5]])])) == []


def test_attract_slides_the_whole_width_of_a_wide_grid() -> None:
    # a 2x9 grid: the 1 must travel 6 columns (more than the grid's height) to the 2
    g = G([[1, 0, 0, 0, 0, 0, 0, 2, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]])
    got = compile_program(["attract", "x", 1, 0, 0])(g)
    assert got.tolist() == [[0, 0, 0, 0, 0, 0, 1, 2, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]]


def _gravity_by_steps(g: np.ndarray, conn: int, bg: int) -> np.ndarray:
    """Reference: drop each object (lowest first) one row at a time."""
    a = g.copy()
    h = a.shape[0]
    objs = sorted(components(a, conn, 0, bg), key=lambda o: -int(o[0].max()))
    for ys, xs in objs:
        vals = a[ys, xs].copy()
        a[ys, xs] = bg
        step = 0
        while ys.max() + step + 1 < h and (a[ys + step + 1, xs] == bg).all():
            step += 1
        a[ys + step, xs] = vals
    return a


def test_object_gravity_matches_a_step_by_step_reference() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(1, 11, 2))
        g = np.where(rng.random((h, w)) < 0.3, rng.integers(1, 4, (h, w)), 0)
        if len(components(g, 8, 0, 0)) <= 60:
            for conn in (4, 8):
                got = object_gravity(g, "down", conn, 0)
                assert (got == _gravity_by_steps(g, conn, 0)).all(), (g, conn)
