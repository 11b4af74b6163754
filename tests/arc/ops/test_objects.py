"""The objects ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.objects import recolor_extremes, square_ticks
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, task_ctx, with_cell

_SQ_OUT = case_want("square_ticks")

_SQ_IN = G(case_grid("square_ticks"))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        recolor_extremes(G([[1, 0, 1]]), "size", 1, 2, 0, 0)  # no extremes
    with pytest.raises(ValueError):
        square_ticks(G([[1, 1, 1]]), 2, 0)  # no square outline
    with pytest.raises(ValueError):
        square_ticks(np.full((3, 3), 4), 2, 0)  # a filled square is no outline


def test_generators_read_parameters_off_the_pairs() -> None:
    a = [[5, 0, 5, 0, 5], [5, 0, 5, 0, 0], [5, 0, 0, 0, 0]]
    c = ctx([(a, [[1, 0, 0, 0, 2], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]])])
    assert gen("recolor_extremes", c)[0] == ("size", 1, 2, 0, 0)

    c = ctx(
        [([[5, 5, 0, 5], [0, 0, 0, 0], [5, 0, 0, 0]], [[3, 3, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]])]
    )
    assert ("size", [2], 3, 1, 8, 0) in gen("recolor_if", c)

    a = [[0, 0, 0, 0, 0], [0, 2, 2, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 2]]
    c = ctx([(a, [[3, 3, 3, 3, 0], [3, 2, 2, 3, 0], [3, 3, 3, 3, 0], [0, 0, 0, 0, 2]])])
    assert gen("halo_if", c) == [("size", [2], 3, 0)]


def test_square_ticks_generator() -> None:
    assert gen("square_ticks", ctx([(_SQ_IN.tolist(), _SQ_OUT)])) == [(2, 0)]
    # a tick missing: not the rule
    assert gen("square_ticks", ctx([(_SQ_IN.tolist(), with_cell(_SQ_OUT, 0, 1, 0))])) == []


def test_recolor_by_prefers_a_default_and_gates_full_tables() -> None:
    # size 2 -> 2, sizes 1 and 3 -> 1; the test has a size-4 object the table lacks
    pairs = [
        ([[5, 0, 5, 5, 0, 5, 5, 5]], [[1, 0, 2, 2, 0, 1, 1, 1]]),
        ([[5, 5, 0, 5]], [[2, 2, 0, 1]]),
    ]
    got = list(GENERATORS["recolor_by"](task_ctx(pairs, [[[5, 5, 5, 5, 0, 5, 5]]])))
    assert ("size", [[2, 2]], 1, 8, 1, 0) in got
    assert not any(a[2] == -1 and a[0] == "size" for a in got)


def test_one_cell_targets_learn_no_tables() -> None:
    pairs = [([[1, 1, 0, 2]], [[1]]), ([[3, 0, 4, 4]], [[4]])]
    ctx = task_ctx(pairs, [[[5, 5, 0, 6]]])
    assert ctx.tiny
    assert list(GENERATORS["recolor_by"](ctx)) == []
