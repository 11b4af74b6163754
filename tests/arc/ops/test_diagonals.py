"""The diagonals ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops.diagonals import connect_corners_diag, diag_bounce, obj_diag_ray
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

_DIAG_IN = G(case_grid("connect_corners_diag"))

_DIAG_OUT = case_want("connect_corners_diag")


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        obj_diag_ray(G([[1, 0]]), 3, "ul", 0)  # colour absent
    with pytest.raises(ValueError):
        diag_bounce(G([[1, 1, 0]]), 3, 0)  # no diagonal segment
    with pytest.raises(ValueError):
        connect_corners_diag(G([[2, 0, 0], [0, 0, 0], [0, 0, 3]]), 0)  # colours differ


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[0, 0], [1, 0]], [[0, 1], [1, 0]])])
    assert gen("bounce", c) == [(0,)]


def test_diag_bounce_generator() -> None:
    a = [[0, 0, 0, 2], [0, 0, 0, 2], [0, 0, 0, 2], [0, 8, 0, 2], [8, 0, 0, 2]]
    b = [[3, 0, 0, 2], [0, 3, 0, 2], [0, 0, 3, 2], [0, 8, 0, 2], [8, 0, 0, 2]]
    assert gen("diag_bounce", ctx([(a, b)])) == [(3, 0)]
    b[0][0] = 0
    assert gen("diag_bounce", ctx([(a, b)])) == []


def test_connect_corners_diag_generator() -> None:
    assert gen("connect_corners_diag", ctx([(_DIAG_IN.tolist(), _DIAG_OUT)])) == [(0,)]
    other = [r[:] for r in _DIAG_OUT]
    other[3][3] = 3
    assert gen("connect_corners_diag", ctx([(_DIAG_IN.tolist(), other)])) == []


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    a = [[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]]
    c = ctx([(a, [[0, 0, 0, 1], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]])])
    assert gen("corner_rays", c) == [("empty", "own", 0)]
    assert (1, "ur", 0) in gen("obj_diag_ray", c)
    assert (1, "dl", 0) not in gen("obj_diag_ray", c)

    c = ctx([([[1, 0, 0], [2, 0, 0], [3, 0, 0]], [[1, 2, 3], [2, 3, 1], [3, 1, 2]])])
    assert gen("diag_period_fill", c) == [(0,)]

    recolour = ctx([([[1, 0]], [[2, 0]])])
    assert gen("corner_rays", recolour) == []
    assert gen("obj_diag_ray", recolour) == []

    assert gen("diag_period_fill", recolour) == []
