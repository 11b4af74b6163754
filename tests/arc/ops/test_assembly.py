"""The assembly ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.assembly import assemble_by_mark, fill_marked_box
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, task_ctx

_BOX = G(case_grid("fill_marked_box", 2))

_BOX_OUT = case_want("fill_marked_box", 2)


def _same(pairs: list[list[list[int]]]) -> Ctx:
    return ctx([(p, p) for p in pairs])


_PIECES = case_grid("assemble_by_mark")

_PICTURE = case_want("assemble_by_mark")


def test_pieces_into_holes_generator() -> None:
    a = [[5, 5, 5, 0, 0, 0], [5, 0, 5, 0, 2, 0], [5, 5, 5, 0, 0, 0]]
    b = [[5, 5, 5, 0, 0, 0], [5, 2, 5, 0, 0, 0], [5, 5, 5, 0, 0, 0]]
    assert gen("pieces_into_holes", ctx([(a, b)])) == [("id", 0)]
    b = [[5, 5, 5, 0, 0, 0], [5, 0, 5, 0, 0, 0], [5, 5, 5, 0, 2, 0]]
    assert gen("pieces_into_holes", ctx([(a, b)])) == []


def test_generators_gate_on_shapes() -> None:
    bars = task_ctx([([[4, 0, 6], [4, 0, 6], [0, 0, 0]], [[4, 6], [4, 6]])], [])

    assert list(GENERATORS["paint_fg"](bars)) == []

    join = task_ctx([([[3, 0, 0], [0, 0, 7]], [[3, 7]])], [])
    assert list(GENERATORS["join_pieces"](join)) == [(0,)]


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        fill_marked_box(G([[4, 0, 4], [0, 0, 0], [4, 0, 4]]), "id", 0)  # no shape
    with pytest.raises(ValueError):
        fill_marked_box(G([[4, 0, 4, 0], [0] * 4, [4, 0, 4, 0], [1] * 4]), "id", 0)  # no room

    with pytest.raises(ValueError):
        assemble_by_mark(G([[5, 5, 0, 1, 5], [5, 4, 0, 5, 5], [0] * 5, [5, 5, 1, 5, 0]]), 0)
    with pytest.raises(ValueError):  # two pieces point at the same corner
        assemble_by_mark(
            G([[1, 5, 0, 1, 5], [5, 5, 0, 5, 5], [0] * 5, [5, 2, 5, 5, 0], [5, 5, 3, 5, 0]]), 0
        )


def test_fill_marked_box_generator() -> None:
    c = ctx([(_BOX.tolist(), _BOX_OUT)])
    assert gen("fill_marked_box", c) == [("flips", 0)]
    assert gen("fill_marked_box", _same([_BOX.tolist()])) == []


def test_assemble_by_mark_generator() -> None:
    assert gen("assemble_by_mark", ctx([(_PIECES, _PICTURE)])) == [(0,)]
    assert gen("assemble_by_mark", _same([_PIECES])) == []
