"""The shapes ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops.shapes import (
    checker_interior,
    dot_paint_touching,
    erase_contained,
    recolor_topology,
    reverse_path,
    topology_key,
    trim_objects,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

_TRIM_LEFT = case_want("trim_objects")

_TRIM_IN = G(case_grid("trim_objects"))

_PATH_OUT = case_want("reverse_path")

_PATH_IN = G(case_grid("reverse_path"))


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[3, 3, 3], [3, 3, 3], [3, 3, 3]], [[3, 3, 3], [3, 0, 3], [3, 3, 3]])])
    assert gen("hollow", c) == [(0,)]


def test_half_recolor_generator() -> None:
    c = ctx([([[2, 2, 2, 2], [0, 0, 0, 0]], [[8, 8, 2, 2], [0, 0, 0, 0]])])
    assert gen("half_recolor", c) == [("left", 8, 0)]
    c = ctx([([[2, 2, 2, 2], [0, 0, 0, 0]], [[8, 2, 2, 2], [0, 0, 0, 0]])])
    assert gen("half_recolor", c) == []


def test_alternate_cells_generator() -> None:
    c = ctx([([[2, 2, 2, 0, 0, 0]], [[2, 4, 2, 0, 0, 0]]), ([[0, 9, 9, 0, 0]], [[0, 9, 4, 0, 0]])])
    assert gen("alternate_cells", c) == [(10, 4, 0)]
    c = ctx([([[2, 2, 2]], [[4, 2, 2]])])
    assert gen("alternate_cells", c) == []


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        checker_interior(G([[4, 4], [4, 4]]), 0, 0, 0)  # no interior
    with pytest.raises(ValueError):
        erase_contained(G([[1, 0, 2]]), 0)  # nothing inside anything
    with pytest.raises(ValueError):
        dot_paint_touching(G([[5, 5], [5, 5]]), 5, 0)  # no dot

    with pytest.raises(ValueError):
        trim_objects(G([[0, 0]]), "left", 1, 0)  # no object

    with pytest.raises(ValueError):
        reverse_path(G([[1, 0], [0, 2]]), 0)  # single cells, no path
    with pytest.raises(ValueError):
        recolor_topology(G([[1, 0] * 41]), [[0, 2]], 0)  # too many objects


def test_checker_interior_generator() -> None:
    a = [[4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4]]
    b = [[4, 4, 4, 4, 4, 4], [4, 0, 4, 0, 4, 4], [4, 4, 4, 4, 4, 4]]
    assert gen("checker_interior", ctx([(a, b)])) == [(0, 0, 0)]
    b = [[4, 4, 4, 4, 4, 4], [4, 0, 0, 4, 4, 4], [4, 4, 4, 4, 4, 4]]
    assert gen("checker_interior", ctx([(a, b)])) == []


def test_erase_contained_generator() -> None:
    src = [[1, 1, 1, 0], [1, 2, 1, 0], [1, 1, 1, 3]]
    want = [[1, 1, 1, 0], [1, 0, 1, 0], [1, 1, 1, 3]]
    assert gen("erase_contained", ctx([(src, want)])) == [(0,)]
    # the wrong object erased
    wrong = [[1, 1, 1, 0], [1, 2, 1, 0], [1, 1, 1, 0]]
    assert gen("erase_contained", ctx([(src, wrong)])) == []


def test_dot_paint_touching_generator() -> None:
    src = [[5, 5, 0], [0, 2, 0], [4, 4, 0]]
    assert gen("dot_paint_touching", ctx([(src, [[2, 2, 0], [0, 0, 0], [2, 2, 0]])])) == []
    assert gen("dot_paint_touching", ctx([(src, [[2, 2, 0], [0, 0, 0], [4, 4, 0]])])) == [(5, 0)]


def test_trim_objects_generator() -> None:
    assert gen("trim_objects", ctx([(_TRIM_IN.tolist(), _TRIM_LEFT)])) == [("left", 1, 0)]
    # a cell painted, not only erased
    other = [r[:] for r in _TRIM_LEFT]
    other[2][0] = 4
    assert gen("trim_objects", ctx([(_TRIM_IN.tolist(), other)])) == []


def test_reverse_path_generator() -> None:
    assert gen("reverse_path", ctx([(_PATH_IN.tolist(), _PATH_OUT)])) == [(0,)]
    # the ends swapped, the middle kept: not a reversal
    swapped = [[4, 2, 3, 0], [0, 0, 1, 0], [5, 0, 0, 0]]
    assert gen("reverse_path", ctx([(_PATH_IN.tolist(), swapped)])) == []


def test_topology_key() -> None:
    u = G([[1, 0, 1], [1, 1, 1]])
    assert topology_key(*np.nonzero(u)) == 22
    t = G([[1, 1, 1], [0, 1, 0]])
    assert topology_key(*np.nonzero(t)) == 30


def test_recolor_topology_generator() -> None:
    c = ctx([([[3, 0, 3], [3, 0, 3], [3, 3, 0]], [[1, 0, 2], [1, 0, 2], [1, 1, 0]])])
    assert gen("recolor_topology", c) == [([[20, 2], [21, 1]], 0)]
    # the test state holds a shape with an unseen key
    c = Ctx(
        [G([[3, 0, 3], [3, 0, 3], [3, 3, 0]]), G([[3, 3, 3]])],
        [G([[1, 0, 2], [1, 0, 2], [1, 1, 0]])],
        0,
    )
    assert gen("recolor_topology", c) == [([[20, 2], [21, 1]], 0)]
    c = Ctx(
        [G([[3, 0, 3], [3, 0, 3], [3, 3, 0]]), G([[3, 3, 3], [0, 3, 0]])],
        [G([[1, 0, 2], [1, 0, 2], [1, 1, 0]])],
        0,
    )
    assert gen("recolor_topology", c) == []


def test_generators_stay_quiet_when_the_pairs_do_not_fit() -> None:
    grow = ctx([([[1, 0, 1]], [[1, 2, 1]])])
    same = ctx([([[1, 0, 1]], [[1, 0, 1]])])
    assert gen("denoise", grow) == []

    assert gen("denoise", same) == []
