"""The symmetry ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops.symmetry import (
    complete_by_analogy,
    g_unocclude,
    symmetrize_mark,
    unocclude,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

_SHOWN = case_want("unocclude")

_HID = G(case_grid("unocclude"))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        symmetrize_mark(G([[1, 0, 1]]), "h", "grid", 2, 0)  # already symmetric
    with pytest.raises(ValueError):
        symmetrize_mark(G([[1, 2]]), "diag", "fit", 2, 0)  # mirror leaves the grid
    with pytest.raises(ValueError):
        # the drawn cells contradict the template (1 would be both 2 and 3)
        complete_by_analogy(G([[1, 4, 1], [2, 0, 3]]), "h", 0)


def test_symmetrize_mark_generator() -> None:
    c = ctx([([[1, 0, 0, 0], [1, 1, 0, 0]], [[1, 0, 0, 2], [1, 1, 2, 2]])])
    assert gen("symmetrize_mark", c) == [("h", "grid", 2, 0)]
    c = ctx([([[1, 0, 0, 0], [1, 1, 0, 0]], [[1, 0, 0, 2], [1, 1, 0, 2]])])
    assert gen("symmetrize_mark", c) == []


def test_complete_by_analogy_generator() -> None:
    src = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 0, 0]]
    want = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 2, 3]]
    assert gen("complete_by_analogy", ctx([(src, want)])) == [("h", 0)]
    # the gaps get a colour the template does not give: no analogy
    other = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 2, 2]]
    assert gen("complete_by_analogy", ctx([(src, other)])) == []


def test_unocclude_rejects() -> None:
    with pytest.raises(ValueError):
        unocclude(G([[6, 6, 0], [6, 0, 0]]), "h", 0)  # no solid rectangle
    two = G([[1, 1, 0, 2, 2], [1, 1, 0, 2, 2], [0, 6, 6, 0, 0]])
    with pytest.raises(ValueError):
        unocclude(two, "h", 0)  # two candidate occluders


def test_g_unocclude() -> None:
    ctx = Ctx(states=[_HID, _HID.copy()], targets=[G(_SHOWN)], bg=0)
    assert list(g_unocclude(ctx)) == [(k, 0) for k in ("h", "v", "hv", "rot", "diag")]
    # the rectangle's colour is still in the target: not an occluder, quiet
    kept = G([[0, 6, 0, 0, 1, 1], [6, 6, 0, 0, 1, 1], [0, 6, 6, 6, 6, 0]])
    assert list(g_unocclude(Ctx(states=[_HID], targets=[kept], bg=0))) == []
