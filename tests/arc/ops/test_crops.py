"""The crops ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc import compile_program
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.crops import crop_lines, crop_solid_rect
from tests.helpers.arc import G, ctx, gen, task_ctx


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        crop_lines(G([[1, 1, 0], [0, 0, 0]]), 0, 0)  # one line only

    with pytest.raises(ValueError):
        crop_solid_rect(G([[1, 2], [3, 4]]))  # no block
    tie = G([[2, 0, 2]])
    with pytest.raises(ValueError):
        compile_program(["crop_most", "x", 2, 1, 8, 0])(tie)


def test_crop_lines_generator() -> None:
    c = ctx([([[1, 1, 1], [0, 5, 0], [1, 1, 1]], [[1, 1, 1], [0, 5, 0]])])
    assert gen("crop_lines", c) == [(0, 0), (1, 0)]
    assert gen("crop_lines", ctx([([[1, 5]], [[1, 5], [1, 5]])])) == []


def test_crop_solid_rect_generator() -> None:
    c = ctx([([[1, 2, 3], [4, 4, 5], [4, 4, 6]], [[4, 4], [4, 4]])])
    assert gen("crop_solid_rect", c) == [()]
    assert gen("crop_solid_rect", ctx([([[1, 2, 3], [4, 4, 5]], [[4]])])) == []


def test_generators_gate_on_shapes() -> None:
    margin = task_ctx([([[0, 8, 8], [0, 5, 5], [0, 8, 8]], [[8, 8], [5, 5], [8, 8]])], [])
    assert (5, 1, 0) in list(GENERATORS["crop_margin"](margin))


def test_one_cell_targets_learn_no_tables() -> None:
    pairs = [([[1, 1, 0, 2]], [[1]]), ([[3, 0, 4, 4]], [[4]])]
    ctx = task_ctx(pairs, [[[5, 5, 0, 6]]])

    assert ("largest", 8, 1, 0) in list(GENERATORS["object_color"](ctx))
