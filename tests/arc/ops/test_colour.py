"""The colour ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc.ops.colour import (
    cycle_recolor,
    keep_top_colors,
    legend_recolor,
    recolor_by_dot,
    swap_other,
)
from atlas_actors.arc.solver import TaskSolver
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

_KEY_IN = G(case_grid("legend_recolor"))

_KEY_CHAIN = case_want("legend_recolor")

_KEY_ONCE = case_want("legend_recolor", 1)

_CYCLE_IN = G(case_grid("cycle_recolor"))

_CYCLE_ROWS = case_want("cycle_recolor")

_TOP_OUT = case_want("keep_top_colors")

_TOP_IN = G(case_grid("keep_top_colors"))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        swap_other(G([[1, 2, 3]]), 1, -1)  # two other colours

    with pytest.raises(ValueError):
        recolor_by_dot(G([[2, 0, 4], [0, 0, 0], [3, 0, 0]]), 0)  # three lone cells
    with pytest.raises(ValueError):
        legend_recolor(_KEY_IN[:2], 1, 0)  # a key of two rows is too short

    with pytest.raises(ValueError):
        cycle_recolor(G([[1, 1], [1, 0]]), [2, 8], "auto", 0)  # two in a row and a column
    with pytest.raises(ValueError):
        keep_top_colors(G([[1, 2]]), 2, 7)  # only two colours


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[4, 4, 4, 4]], [[6, 4, 4, 6]])])
    assert gen("stride_recolor", c)[0] == (4, 6, "cols", 3, 0)

    c = ctx([([[4, 5], [5, 5]], [[0, 4], [4, 4]]), ([[6, 6], [6, 5]], [[0, 0], [0, 6]])])
    assert gen("swap_other", c) == [(5, -1)]

    c = ctx([([[2, 1], [8, 2]], [[2, 5], [5, 2]]), ([[3, 3, 1]], [[3, 3, 5]])])
    assert (13, 5) in gen("recolor_except", c)

    c = ctx([([[0, 5, 0], [1, 0, 0]], [[0, 1, 0], [1, 0, 0]])])
    assert (5, "col", 0) in gen("recolor_nearest", c)


def test_merge_touching_generator() -> None:
    c = ctx([([[3, 2, 0, 3]], [[8, 0, 0, 3]])])
    assert gen("merge_touching", c) == [(3, 2, 8, 0)]
    c = ctx([([[3, 2, 0, 3]], [[8, 0, 0, 8]])])
    assert gen("merge_touching", c) == []


def test_legend_recolor_generator() -> None:
    assert gen("legend_recolor", ctx([(_KEY_IN.tolist(), _KEY_CHAIN)])) == [(1, 0)]
    assert gen("legend_recolor", ctx([(_KEY_IN.tolist(), _KEY_ONCE)])) == [(0, 0)]


def test_cycle_recolor_generator() -> None:
    assert gen("cycle_recolor", ctx([(_CYCLE_IN.tolist(), _CYCLE_ROWS)])) == [([2, 8], "rows", 0)]
    # three cells, three colours: no cycle shows
    assert (
        gen("cycle_recolor", ctx([(_CYCLE_IN.tolist(), [[0, 2, 0], [8, 0, 0], [0, 0, 5]])])) == []
    )


def test_keep_top_colors_generator() -> None:
    assert gen("keep_top_colors", ctx([(_TOP_IN.tolist(), _TOP_OUT)])) == [(2, 7)]
    two = [r[:] for r in _TOP_OUT]
    two[2][0] = 6
    assert gen("keep_top_colors", ctx([(_TOP_IN.tolist(), two)])) == []


def test_generators_stay_quiet_when_the_pairs_do_not_fit() -> None:
    grow = ctx([([[1, 0, 1]], [[1, 2, 1]])])

    assert gen("swap_other", grow) == []


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    c = ctx([([[2, 2, 0, 0], [0, 0, 0, 4]], [[4, 4, 0, 0], [0, 0, 0, 0]])])
    assert gen("recolor_by_dot", c) == [(0,)]

    recolour = ctx([([[1, 0]], [[2, 0]])])

    assert gen("recolor_by_dot", recolour) == []


def test_a_test_grid_with_another_background_is_answered_with_its_own() -> None:
    """Every train grid has the task's background, the test grid another: the program
    that reads each grid's commonest colour as its background answers it (the one
    with the task's background finds no key there and fails)."""
    test_in = np.where(_KEY_IN == 0, 6, _KEY_IN)
    solver = TaskSolver([(_KEY_IN, G(_KEY_CHAIN))], [test_in])
    solver.search(3000)
    got = [n.outs[1] for n in solver.solutions()[:2]]
    want = np.where(_KEY_IN == 0, 6, G(_KEY_CHAIN))
    assert any(np.array_equal(g, want) for g in got)
