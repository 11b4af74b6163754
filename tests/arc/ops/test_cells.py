"""The cells ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops.cells import (
    cell_broadcast,
    cell_expand,
    cell_key_place,
    cell_template_mark,
    fill_panels_by_place,
    panel_colors,
    panel_key,
    panel_transforms,
)
from tests.helpers.arc import G, ctx, gen

_KA = panel_key(G([[1, 1], [1, 0]]))

_KB = panel_key(G([[2, 2], [2, 0]]))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        cell_broadcast(G([[1, 5, 2]]), 0)  # two different patterns
    with pytest.raises(ValueError):
        cell_expand(G([[1, 5, 0], [5, 5, 5], [0, 5, 1]]), "min", 0)  # 1x1 cells, a tie
    with pytest.raises(ValueError):
        cell_template_mark(G([[1, 0, 5, 0, 1]]), -1, 0)  # two templates

    with pytest.raises(ValueError):
        cell_key_place(G([[4, 5, 4], [5, 5, 5], [0, 5, 0]]), 4, 0)  # two key cells
    with pytest.raises(ValueError):
        panel_transforms(G([[1, 2, 5, 0], [3, 0, 5, 0]]), [0, 1], 0)  # panels of different widths
    with pytest.raises(ValueError):
        fill_panels_by_place(G([[0, 5, 0]]), [[5, 2]], 0)  # no middle panel

    with pytest.raises(ValueError):
        panel_colors(G([[1, 1, 0, 3, 3], [1, 0, 0, 3, 0]]), [[_KA, 4]], "rows", 1, 0)


def test_cell_expand_generator() -> None:
    a = [[1, 0, 5, 1, 1], [0, 0, 5, 0, 1], [5, 5, 5, 5, 5], [2, 2, 5, 3, 3], [2, 0, 5, 3, 3]]
    b = [[1, 1, 5, 0, 0], [1, 1, 5, 0, 0], [5, 5, 5, 5, 5], [0, 0, 5, 0, 0], [0, 0, 5, 0, 0]]
    assert gen("cell_expand", ctx([(a, b)])) == [("min", 0)]
    assert gen("cell_expand", ctx([(a, a)])) == []


def test_cell_template_mark_generator() -> None:
    a, b = [[1, 1, 5, 0, 1], [1, 0, 5, 0, 0]], [[1, 1, 5, 5, 1], [1, 0, 5, 5, 0]]
    assert gen("cell_template_mark", ctx([(a, b)])) == [(-1, 0)]
    assert gen("cell_template_mark", ctx([(a, [[1, 1, 5, 2, 1], [1, 0, 5, 0, 0]])])) == []


def test_cell_key_place_generator() -> None:
    a = [[1, 0, 5, 0, 0], [0, 4, 5, 2, 0], [5, 5, 5, 5, 5], [3, 0, 5, 0, 0], [0, 0, 5, 0, 6]]
    b = [[0, 0, 5, 0, 0], [0, 0, 5, 0, 0], [5, 5, 5, 5, 5], [0, 0, 5, 1, 0], [0, 0, 5, 0, 4]]
    assert gen("cell_key_place", ctx([(a, b)])) == [(4, 0)]
    b[3][3] = 0
    assert gen("cell_key_place", ctx([(a, b)])) == []


def test_panel_transforms_generator() -> None:
    c = ctx(
        [
            ([[1, 2, 5, 0, 0], [3, 4, 5, 0, 0]], [[1, 2, 5, 2, 1], [3, 4, 5, 4, 3]]),
            ([[6, 0, 5, 0, 0], [6, 7, 5, 0, 0]], [[6, 0, 5, 0, 6], [6, 7, 5, 7, 6]]),
        ]
    )
    assert gen("panel_transforms", c) == [([0, 4], 0)]
    quiet = ctx([([[1, 2, 5, 0, 0], [3, 4, 5, 0, 0]], [[1, 2, 5, 9, 9], [3, 4, 5, 0, 0]])])
    assert gen("panel_transforms", quiet) == []


def test_panel_colors_generator() -> None:
    c = Ctx(
        [G([[1, 1, 0, 2, 2], [1, 0, 0, 2, 0]]), G([[2, 2, 0, 2, 2], [2, 0, 0, 2, 0]])],
        [G([[4, 4], [6, 6]])],
        0,
    )
    assert gen("panel_colors", c) == [(sorted([[_KA, 4], [_KB, 6]]), "rows", 2, 0)]
    unseen = Ctx(
        [G([[1, 1, 0, 2, 2], [1, 0, 0, 2, 0]]), G([[3, 3, 0, 2, 2], [3, 0, 0, 2, 0]])],
        [G([[4, 4], [6, 6]])],
        0,
    )
    assert gen("panel_colors", unseen) == []  # the test's 3-panel is not in the table


def test_fill_panels_by_place_generator() -> None:
    s = [[0, 5, 0], [5, 5, 5], [0, 5, 0]]
    c = ctx([(s, [[4, 5, 0], [5, 5, 5], [0, 5, 0]])])
    assert gen("fill_panels_by_place", c) == [([[0, 4]], 0)]
    quiet = ctx([(s, [[4, 5, 0], [5, 5, 5], [0, 5, 4]]), (s, [[4, 5, 0], [5, 5, 5], [0, 5, 0]])])
    assert gen("fill_panels_by_place", quiet) == []  # the last panel painted only once
    big = [[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]]
    wide = Ctx([G(s), G(big)], [G([[4, 5, 0], [5, 5, 5], [0, 5, 0]])], 0)
    assert gen("fill_panels_by_place", wide) == []  # the test's middle panel is unseen


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    a = [[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [2, 5, 0, 5, 2], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]]
    b = [[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [2, 5, 2, 5, 2], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]]
    assert gen("cell_connect", ctx([(a, b)])) == [(0,)]

    c = ctx([([[1, 0, 5, 0, 0], [0, 2, 5, 0, 0]], [[1, 0, 5, 1, 0], [0, 2, 5, 0, 2]])])
    assert gen("cell_broadcast", c) == [(0,)]

    c = ctx([([[1, 0, 5, 2, 2], [0, 0, 5, 0, 2]], [[0, 0, 5, 2, 2], [0, 0, 5, 2, 2]])])
    assert gen("cell_max_fill", c) == [(0,)]

    recolour = ctx([([[1, 0]], [[2, 0]])])

    assert gen("cell_connect", recolour) == []

    assert gen("cell_broadcast", recolour) == []
