"""The parts ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.parts import overlay_corners, place_halves
from tests.helpers.arc import G, ctx, gen, task_ctx


def test_cross_swap_generator() -> None:
    c = ctx([([[0, 8, 0], [3, 3, 3], [0, 8, 0]], [[0, 8, 0], [3, 8, 3], [0, 8, 0]])])
    assert gen("cross_swap", c) == [(0,)]
    c = ctx([([[0, 8, 0], [3, 3, 3], [0, 8, 0]], [[0, 8, 0], [3, 3, 3], [0, 8, 8]])])
    assert gen("cross_swap", c) == []


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        place_halves(G([[0, 1, 0, 1], [0, 0, 0, 0]]))  # one background

    with pytest.raises(ValueError):
        overlay_corners(G([[1, 0, 0, 0, 2]]), 1, 2, 0)  # the middle is not covered


def test_place_halves_generator() -> None:
    c = ctx([([[8, 1, 0, 0]], [[0, 0]])])
    assert gen("place_halves", c) == [()]
    assert gen("place_halves", ctx([([[8, 1, 0]], [[0, 0]])])) == []


def test_overlay_corners_generator() -> None:
    c = ctx([([[1, 0, 0], [0, 0, 0], [0, 0, 2]], [[1, 0], [0, 2]])])
    assert gen("overlay_corners", c) == [(2, 2, 0)]
    assert gen("overlay_corners", ctx([([[1, 0, 0, 0, 2]], [[1, 2]])])) == []


def test_generators_gate_on_shapes() -> None:
    quad = task_ctx([([[0] * 6] * 6, [[0, 0], [0, 0]])], [])
    assert list(GENERATORS["corner_quadrants"](quad)) == [(0,)]


def test_overlay_parts_infers_the_stacking_order() -> None:
    pairs = [
        ([[1, 1, 2, 0]], [[2, 1]]),  # part 1 (colour 2) shows over part 0
        ([[0, 1, 2, 2]], [[2, 2]]),
    ]
    got = list(GENERATORS["overlay_parts"](task_ctx(pairs, [[[1, 0, 0, 2]]])))
    assert ("h2", [1, 0], 0) in got
    clash = [([[1, 0, 2, 0]], [[1, 0]]), ([[1, 0, 2, 0]], [[2, 0]])]
    assert not any(a[0] == "h2" for a in GENERATORS["overlay_parts"](task_ctx(clash, [])))
