"""The templates ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops.templates import anchor_copy, copy_to_match
from tests.helpers.arc import G, ctx, gen

_S5 = [5] * 7  # a separator row


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        anchor_copy(G([[4, 3, 0, 0, 5]]), -1, 0)  # the lone 5 anchors nothing
    with pytest.raises(ValueError):
        copy_to_match(G([[2, 0, 2, 1]]), 2)  # key found nowhere else


def test_anchor_copy_generator() -> None:
    a = [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 3, 0], [0, 0, 0, 0, 0]]
    b = [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 4, 3, 0], [0, 0, 4, 0, 0]]
    assert gen("anchor_copy", ctx([(a, b)])) == [(-1, 0)]
    b = [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 4, 3, 0], [0, 0, 0, 0, 0]]
    assert gen("anchor_copy", ctx([(a, b)])) == []


def test_fit_templates_generator() -> None:
    a = [[2, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0]]
    b = [[2, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 2, 1], [0, 0, 0, 0, 1]]
    assert gen("fit_templates", ctx([(a, b)])) == [("id", "copy", 0)]
    a = [[5, 6, 0, 0, 0], [0, 7, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 6, 5], [0, 0, 0, 0, 0]]
    b = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 7, 0], [0, 0, 0, 6, 5], [0, 0, 0, 0, 0]]
    assert gen("fit_templates", ctx([(a, b)])) == [("d4", "move", 0)]
    b[2][3] = 0
    assert gen("fit_templates", ctx([(a, b)])) == []


def test_cell_fit_templates_generator() -> None:
    a = [[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 2, 5, 0]]
    b = [[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 2, 5, 1]]
    assert gen("cell_fit_templates", ctx([(a, b)])) == [("id", 0)]
    b = [[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 1, 5, 2, 5, 0]]
    assert gen("cell_fit_templates", ctx([(a, b)])) == []


def test_copy_to_match_generator() -> None:
    c = ctx([([[2, 0, 2, 1, 0, 1]], [[2, 0, 2, 2, 0, 2]])])
    assert gen("copy_to_match", c) == [(2,)]
    two = ctx(
        [
            ([[2, 0, 2, 1, 0, 1]], [[2, 0, 2, 2, 0, 2]]),
            ([[1, 0, 1, 1, 8, 0, 8]], [[8, 0, 8, 1, 8, 0, 8]]),
        ]
    )
    assert gen("copy_to_match", two) == [(12,)]  # the least common colour
    assert gen("copy_to_match", ctx([([[2, 0, 1]], [[2, 3, 1]])])) == []  # new colour
