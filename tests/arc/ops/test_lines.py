"""The lines ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops.lines import (
    dot_lines_by_region,
    extend_runs,
    extend_segments,
    hole_lines,
    line_staircase,
    lines_by_position,
    toggle_lines,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, with_cell

_SEG_H = case_want("extend_segments")
_SEG_V = case_want("extend_segments", 1)

_SEG_IN = G(case_grid("extend_segments"))

_TOGGLE_OUT = case_want("toggle_lines")

_TOGGLE_IN = G(case_grid("toggle_lines"))


_BAND = case_grid("hole_lines")

_BAND_OUT = case_want("hole_lines")

_DOTS = case_grid("dot_lines_by_region")

_DOTS_OUT = case_want("dot_lines_by_region")


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[1, 0], [0, 0]], [[1, 2], [2, 2]])])
    assert gen("fill_empty_lines", c) == [(0, 2, "full")]


def test_center_lines_generator() -> None:
    c = ctx([([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[0, 0, 0], [4, 5, 6], [0, 0, 0]])])
    assert gen("keep_center_line", c) == [("h", 0)]
    c = ctx([([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[0, 0, 0], [4, 5, 0], [0, 0, 0]])])
    assert gen("keep_center_line", c) == []


def test_complete_lines_generator() -> None:
    c = ctx(
        [
            (
                [[1, 0, 1, 1, 1], [0, 0, 0, 0, 1], [1, 0, 1, 0, 0], [1, 0, 0, 0, 1]],
                [[1, 2, 1, 1, 1], [2, 0, 0, 0, 1], [1, 0, 1, 0, 2], [1, 0, 0, 0, 1]],
            )
        ]
    )
    assert gen("complete_lines", c) == [(2, 2, 0)]
    c = ctx([([[1, 0, 1, 1, 1], [0, 0, 0, 0, 1]], [[1, 0, 1, 1, 1], [0, 2, 0, 0, 1]])])
    assert gen("complete_lines", c) == []


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        line_staircase(G([[1, 1], [1, 0]]), 8, 0)  # not a straight line
    with pytest.raises(ValueError):
        line_staircase(G([[1, 0, 0], [0, 0, 1]]), 8, 0)  # single cells only
    with pytest.raises(ValueError):
        line_staircase(G([[1, 1, 0], [0, 0, 1], [0, 0, 1]]), 8, 0)  # not parallel

    with pytest.raises(ValueError):
        extend_segments(G([[1, 0], [0, 2]]), "h", 0)  # single cells only

    with pytest.raises(ValueError):
        toggle_lines(G([[0, 0], [0, 0]]), 0)  # no marker
    with pytest.raises(ValueError):
        lines_by_position(G([[0, 5]]), [[0, 2]], "h", 0)  # index 1 not in the table
    with pytest.raises(ValueError):
        extend_runs(G([[1, 1, 0], [0, 0, 0], [2, 0, 3]]), "hv", 0)  # one colour, or not one run
    with pytest.raises(ValueError):
        hole_lines(G(_BAND), 3)  # no hole of colour 3
    with pytest.raises(ValueError):
        dot_lines_by_region(G([[1, 1], [1, 1]]), "diag")  # no dot

    with pytest.raises(ValueError):
        dot_lines_by_region(G([[3, 2, 2, 2, 4]]), "hv")  # 2 taught both 3 and 4


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


def test_extend_segments_generator() -> None:
    assert gen("extend_segments", ctx([(_SEG_IN.tolist(), _SEG_V)])) == [("v", 0)]
    assert gen("extend_segments", ctx([(_SEG_IN.tolist(), _SEG_IN.tolist())])) == []


def test_toggle_lines_generator() -> None:
    assert gen("toggle_lines", ctx([(_TOGGLE_IN.tolist(), _TOGGLE_OUT)])) == [(0,)]
    # the 1 (not below a marker) toggled too
    assert gen("toggle_lines", ctx([(_TOGGLE_IN.tolist(), with_cell(_TOGGLE_OUT, 1, 0, 0))])) == []


def test_extend_runs_generator() -> None:
    c = ctx([([[1, 2, 0, 0]], [[1, 2, 1, 2]])])
    assert gen("extend_runs", c) == [("hv", 0), ("h", 0), ("v", 0)]
    assert gen("extend_runs", ctx([([[1, 1, 0, 0]], [[1, 1, 1, 1]])])) == []


def test_lines_by_position_generator() -> None:
    c = Ctx(
        [G([[5, 0], [0, 5]]), G([[0, 5], [0, 5]])],
        [G([[2, 2], [3, 3]])],
        0,
    )
    assert gen("lines_by_position", c) == [([[0, 2], [1, 3]], "h", 0)]
    unseen = Ctx([G([[5, 0, 0], [0, 5, 0]]), G([[0, 0, 5]])], [G([[2, 2, 2], [3, 3, 3]])], 0)
    assert gen("lines_by_position", unseen) == []  # the test's index 2 is not covered


def test_hole_lines_generator() -> None:
    assert gen("hole_lines", ctx([(_BAND, _BAND_OUT)])) == [(0,)]
    # painted with a colour that no state holds: quiet
    other = [[4, 3, 4, 4], [4, 0, 4, 4], [4, 3, 4, 4], [8, 8, 8, 8]]
    assert gen("hole_lines", ctx([(_BAND, other)])) == []


def test_dot_lines_by_region_generator() -> None:
    assert gen("dot_lines_by_region", ctx([(_DOTS, _DOTS_OUT)])) == [("diag",)]
    other = [r[:] for r in _DOTS_OUT]
    other[3][0] = 4
    assert gen("dot_lines_by_region", ctx([(_DOTS, other)])) == []


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    a = [[0, 0, 0], [0, 1, 0], [0, 0, 0]]
    c = ctx([(a, [[0, 6, 0], [6, 1, 6], [0, 6, 0]])])
    assert gen("center_lines", c)[0] == (6, "hv", 0)

    recolour = ctx([([[1, 0]], [[2, 0]])])

    assert gen("center_lines", recolour) == []
