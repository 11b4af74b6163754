"""The copies ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc import compile_program
from atlas_actors.arc.ops.copies import (
    complete_copies,
    march_copies,
    overlay_objects,
    recolor_matching,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

_OVER_IN = G(case_grid("overlay_objects"))

_PLUS_IN = G(case_grid("complete_copies"))

_PLUS_OUT = case_want("complete_copies")


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        recolor_matching(G([[1, 0, 2, 0, 3]]), "inner", 0, 0)  # no container
    with pytest.raises(ValueError):
        overlay_objects(G([[5, 5, 0, 5], [5, 5, 0, 0]]), 0)  # sizes differ
    with pytest.raises(ValueError):
        overlay_objects(G([[1, 2, 0, 3, 4]]), 0)  # 1 2 and 3 4 clash on both cells

    with pytest.raises(ValueError):
        complete_copies(G([[1, 1], [0, 1]]), 1, 0)  # one object: nothing to copy
    with pytest.raises(ValueError):
        # two placements of the 1 bar fit the 2 dot
        complete_copies(G([[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 2, 0]]), 1, 0)
    with pytest.raises(ValueError):
        march_copies(G([[1, 1, 0, 2]]), "marker", 0)  # the 2 is not beside the 1s
    with pytest.raises(ValueError):  # key and mask share their colour
        compile_program(["key_mask", "x", "up", 0])(G([[1, 1, 0, 1]]))


def test_repeat_toward_generator() -> None:
    a = [[1, 1, 0, 3, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0, 0]]
    b = [[1, 1, 0, 3, 3, 0, 3, 3, 0], [1, 1, 0, 3, 3, 0, 3, 3, 0]]
    assert gen("repeat_toward", ctx([(a, b)])) == [(0,)]
    b = [[1, 1, 0, 3, 3, 0, 0, 0, 0], [1, 1, 0, 3, 3, 0, 0, 0, 0]]
    assert gen("repeat_toward", ctx([(a, b)])) == []


def test_overlay_objects_generator() -> None:
    # the backgrounds differ by pair: only role 13 fits both
    other = np.where(_OVER_IN == 0, 7, _OVER_IN).tolist()
    c = ctx([(_OVER_IN.tolist(), [[5, 5], [2, 1]]), (other, [[5, 5], [2, 1]])])
    assert gen("overlay_objects", c) == [(13,)]
    assert gen("overlay_objects", ctx([(_OVER_IN.tolist(), [[5, 5], [1, 2]])])) == []


def test_complete_copies_generator() -> None:
    assert gen("complete_copies", ctx([(_PLUS_IN.tolist(), _PLUS_OUT)])) == [(1, 0)]
    # the second pair on a background of 7: only each grid's own background (role 13)
    # fits both
    on7 = [[7 if v == 0 else v for v in r] for r in _PLUS_OUT]
    c = ctx([(_PLUS_IN.tolist(), _PLUS_OUT), (np.where(_PLUS_IN == 0, 7, _PLUS_IN).tolist(), on7)])
    assert gen("complete_copies", c) == [(1, 13)]
    other = [r[:] for r in _PLUS_OUT]
    other[5][4], other[5][5] = 0, 2
    assert gen("complete_copies", ctx([(_PLUS_IN.tolist(), other)])) == []


def test_march_copies_generator() -> None:
    c = ctx([([[1, 2, 0, 0]], [[1, 2, 2, 2]])])
    assert gen("march_copies", c) == [("marker", 0), ("main", 0)]
    c8 = ctx([([[1, 2, 8, 8, 8]], [[1, 2, 2, 2, 2]]), ([[4, 4, 4, 1, 3]], [[4, 4, 4, 1, 3]])])
    assert gen("march_copies", c8) == [("marker", 13), ("main", 13)]
    assert gen("march_copies", ctx([([[1, 0, 2, 0]], [[1, 1, 2, 0]])])) == []


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    a = [[5, 5, 5, 0], [5, 2, 5, 0], [5, 5, 5, 0], [0, 0, 0, 1]]
    c = ctx([(a, [[5, 5, 5, 0], [5, 2, 5, 0], [5, 5, 5, 0], [0, 0, 0, 2]])])
    assert ("inner", 1, 0) in gen("recolor_matching", c)
    assert gen("recolor_matching", ctx([([[1, 0]], [[1, 2]])])) == []
