"""The periodic ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops.periodic import extend_drift, palette_stripes
from tests.helpers.arc import G, ctx, gen


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        palette_stripes(G([[2, 0], [0, 0]]), "h", 0)  # a one-colour palette

    with pytest.raises(ValueError):
        extend_drift(G([[1, 0], [0, 2]]), "down", 4, 0)  # no line repeats


def test_extend_drift_generator() -> None:
    c = ctx([([[1, 0], [0, 1]], [[1, 0], [0, 1], [1, 0], [0, 1]])])
    assert gen("extend_drift", c) == [("down", 4, 0), ("up", 4, 0)]
    c2 = ctx([([[1, 2]], [[3, 1, 2]])])
    assert gen("extend_drift", c2) == [("left", 3, 0)]
    assert gen("extend_drift", ctx([([[1, 0]], [[1, 0], [5, 5]]), ([[1]], [[1], [1], [1]])])) == []


def test_palette_stripes_generator() -> None:
    c = ctx([([[2, 1], [0, 0], [0, 0]], [[2, 1], [2, 2], [1, 1]])])
    assert gen("palette_stripes", c) == [("h", 0)]
    assert gen("palette_stripes", ctx([([[2, 1], [0, 0]], [[2, 1], [3, 4]])])) == []
