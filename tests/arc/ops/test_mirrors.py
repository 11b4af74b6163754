"""The mirrors ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops.mirrors import (
    mirror_across,
    mirror_cross,
    mirror_line,
    mirror_marker,
    mirror_to_markers,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

_CROSS_OUT = case_want("mirror_cross")

_CROSS_IN = G(case_grid("mirror_cross"))

_DIAG_MIRROR_IN = G(case_grid("mirror_line"))

_DIAG_MIRROR_OUT = case_want("mirror_line")


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        mirror_marker(G([[4, 4, 2]]), 0)  # the mirror leaves the grid
    with pytest.raises(ValueError):
        mirror_cross(G([[8, 8, 8], [0, 0, 8], [1, 0, 0]]), 0)  # no full column

    with pytest.raises(ValueError):
        mirror_line(G([[1, 0], [0, 3]]), 2, 3, 0)  # no line of 2
    with pytest.raises(ValueError):
        mirror_across(G([[5, 0, 2]]), 2, 0, 0)  # mirror image off the grid
    with pytest.raises(ValueError):
        mirror_across(G([[5, 0, 0]]), 2, 0, 0)  # no wall

    with pytest.raises(ValueError):
        mirror_to_markers(G([[1, 1, 0, 2]]), 0)  # the 2 is not beside the body


def test_mirror_marker_generator() -> None:
    a = [[0, 4, 0, 0, 0], [4, 4, 2, 0, 0], [0, 4, 2, 0, 0]]
    b = [[3, 4, 4, 3, 3], [4, 4, 4, 4, 3], [3, 4, 4, 3, 3]]  # and the background -> 3
    assert gen("mirror_marker", ctx([(a, b)])) == [(0,)]
    assert gen("mirror_marker", ctx([(a, a)])) == []


def test_mirror_cross_generator() -> None:
    assert gen("mirror_cross", ctx([(_CROSS_IN.tolist(), _CROSS_OUT)])) == [(0,)]
    half = [r[:] for r in _CROSS_OUT]
    half[4][4] = 0
    assert gen("mirror_cross", ctx([(_CROSS_IN.tolist(), half)])) == []


def test_mirror_line_generator() -> None:
    got = gen("mirror_line", ctx([(_DIAG_MIRROR_IN.tolist(), _DIAG_MIRROR_OUT)]))
    assert got and got[0] == (1, 3, 0)
    # the 2 mirrored as well: no single colour does that
    both = [r[:] for r in _DIAG_MIRROR_OUT]
    both[3][0] = 2
    assert gen("mirror_line", ctx([(_DIAG_MIRROR_IN.tolist(), both)])) == []


def test_mirror_across_generator() -> None:
    c = ctx([([[0, 2, 0, 5]], [[5, 2, 0, 0]])])
    assert gen("mirror_across", c) == [(2, 0, 0)]
    c = ctx([([[0, 2, 0, 5]], [[5, 2, 0, 5]])])
    assert (2, 1, 0) in gen("mirror_across", c)
    assert gen("mirror_across", ctx([([[0, 2, 0, 5]], [[3, 2, 0, 0]])])) == []


def test_mirror_to_markers_generator() -> None:
    c = ctx([([[1, 2, 0]], [[1, 2, 2]])])
    assert gen("mirror_to_markers", c) == [(0,)]
    assert gen("mirror_to_markers", ctx([([[1, 2, 0]], [[1, 0, 2]])])) == []  # moved
