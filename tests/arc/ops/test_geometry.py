"""The geometry ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.geometry import shear
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, task_ctx

_L_OUT = case_want("turn_objects")

_L_IN = G(case_grid("turn_objects"))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        shear(np.zeros((20, 12), dtype=np.int64), "h+", 0)  # 31 columns


def test_turn_objects_generator() -> None:
    assert gen("turn_objects", ctx([(_L_IN.tolist(), _L_OUT)])) == [("ccw", 4, 0)]
    # a cell's colour changed: the colour counts differ, nothing is tried
    other = [r[:] for r in _L_OUT]
    other[1][2] = 4
    assert gen("turn_objects", ctx([(_L_IN.tolist(), other)])) == []


def test_shear_generator() -> None:
    # canvas colours read off the corners each skew leaves empty
    c = ctx([([[1, 2, 3], [4, 5, 6]], [[0, 1, 2, 3], [4, 5, 6, 0]])])
    assert gen("shear", c) == [("h+", 0), ("h-", 4)]
    assert gen("shear", ctx([([[1, 2], [3, 4]], [[1, 2], [3, 4]])])) == []


def test_generators_fire_on_matching_shapes() -> None:
    ping = task_ctx(
        [([[1], [2], [3]], [[1], [2], [3], [2], [1]]), ([[1], [2]], [[1], [2], [1]])], []
    )
    assert list(GENERATORS["pingpong"](ping)) == [("v", 2)]
