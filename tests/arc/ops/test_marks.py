"""The marks ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.marks import border_marks, mark_crossings
from tests.helpers.arc import G, ctx, gen, task_ctx


def test_corner_marks_generator() -> None:
    c = ctx(
        [([[0, 0, 0, 0], [0, 5, 5, 0], [0, 0, 0, 0]], [[1, 0, 0, 2], [0, 5, 5, 0], [3, 0, 0, 4]])]
    )
    assert ("dot", "fixed", [1, 2, 3, 4], 0) in gen("corner_marks", c)
    c = ctx(
        [([[0, 0, 0, 0], [0, 5, 5, 0], [0, 0, 0, 0]], [[0, 0, 0, 0], [0, 5, 5, 0], [0, 0, 0, 1]])]
    )
    assert gen("corner_marks", c) == []


def test_midpoint_mark_generator() -> None:
    c = ctx([([[1, 0, 0, 0, 1]], [[1, 0, 4, 0, 1]])])
    assert gen("midpoint_mark", c) == [("dot", 4, 0)]
    c = ctx([([[1, 0, 0, 0, 1]], [[1, 4, 0, 0, 1]])])
    assert gen("midpoint_mark", c) == []


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        border_marks(G([[1, 1, 0]]), "down", 4, 0)  # no object with a centre
    with pytest.raises(ValueError):
        mark_crossings(G([[1, 1], [0, 0]]), 4, 0)  # no full column


def test_border_marks_and_crossings_generators() -> None:
    a = [[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [0, 0, 0, 0, 0, 0]]
    b = [[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [0, 4, 0, 0, 0, 0]]
    assert gen("border_marks", ctx([(a, b)])) == [("down", 4, 0)]
    b = [[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [4, 0, 0, 0, 0, 0]]
    assert gen("border_marks", ctx([(a, b)])) == []
    a = [[0, 3, 0, 0], [2, 2, 2, 2], [0, 3, 0, 0], [0, 3, 0, 0]]
    b = [[4, 4, 4, 0], [4, 2, 4, 2], [4, 4, 4, 0], [0, 3, 0, 0]]
    assert gen("mark_crossings", ctx([(a, b)])) == [(4, 0)]
    b = [[4, 4, 4, 0], [4, 2, 4, 2], [4, 4, 4, 0], [0, 4, 0, 0]]
    assert gen("mark_crossings", ctx([(a, b)])) == []


def test_diag_marks_generator() -> None:
    diag = [([[0, 0, 0], [0, 1, 0], [0, 0, 0]], [[8, 0, 0], [0, 1, 0], [0, 0, 0]])]
    assert list(GENERATORS["diag_marks"](task_ctx(diag, []))) == [(8, 0)]
    side = [([[0, 0, 0], [0, 1, 0], [0, 0, 0]], [[0, 8, 0], [0, 1, 0], [0, 0, 0]])]
    assert list(GENERATORS["diag_marks"](task_ctx(side, []))) == []
