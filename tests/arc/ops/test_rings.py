"""The rings ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.rings import extend_layers, nest_by_count, nest_colors, nest_complete
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, task_ctx

_RINGS = case_want("extend_rings")

_NEST_IN = G(case_grid("nest_by_count"))

_NEST_OUT = case_want("nest_by_count")

_MID = np.zeros((9, 9), dtype=np.int64)
_MID[4, 4] = _MID[4, 5] = _MID[5, 4] = 1
_MID[8, 8] = 2

_NESTED = case_want("nest_complete")

_CUT = case_grid("nest_complete")


def _same(pairs: list[list[list[int]]]) -> Ctx:
    return ctx([(p, p) for p in pairs])


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[1, 1], [1, 2]], [[2, 2], [2, 1]])])
    assert gen("ring_colors", c) == [("rev",), ("out",), ("in",)]


def test_extend_rings_generator() -> None:
    a = [[5 if y == x and y in (2, 4, 6) else 0 for x in range(9)] for y in range(9)]
    assert gen("extend_rings", ctx([(a, _RINGS)])) == [(0,)]
    b = [r[:] for r in _RINGS]
    b[0] = [0] * 9
    assert gen("extend_rings", ctx([(a, b)])) == []


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        nest_by_count(G([[1, 2]]), 0)  # equal counts
    with pytest.raises(ValueError):
        nest_colors(G([[2, 2, 0, 5]]), 0)  # a 2-wide box and a 1-wide box
    with pytest.raises(ValueError):
        extend_layers(G([[1, 2], [1, 2]]), 2, "tl", 0)  # columns, not layers
    with pytest.raises(ValueError):
        extend_layers(G([[0, 0], [0, 1]]), 2, "tl", 0)  # pattern not at the corner

    with pytest.raises(ValueError):
        nest_complete(G([[0, 1, 1], [0, 0, 0]]), 0)  # one colour only

    with pytest.raises(ValueError, match="completion"):  # not symmetric, not cut
        nest_complete(_MID, 0)


def test_nest_by_count_generator() -> None:
    assert gen("nest_by_count", ctx([(_NEST_IN.tolist(), _NEST_OUT)])) == [(0,)]
    # the rarest colour outermost: not by count
    flipped = [[{1: 3, 3: 1}.get(v, v) for v in r] for r in _NEST_OUT]
    assert gen("nest_by_count", ctx([(_NEST_IN.tolist(), flipped)])) == []


def test_nest_colors_generator() -> None:
    c = ctx(
        [([[2, 2, 2, 0, 0], [2, 0, 2, 0, 5], [2, 2, 2, 0, 0]], [[2, 2, 2], [2, 5, 2], [2, 2, 2]])]
    )
    assert list(GENERATORS["nest_colors"](c)) == [(0,)]
    c = ctx([([[2, 2, 2, 0, 0], [2, 0, 2, 0, 5]], [[2]])])
    assert list(GENERATORS["nest_colors"](c)) == []


def test_generators_gate_on_shapes() -> None:
    grow = task_ctx([([[5, 0, 0, 0]], [[5, 0, 0, 0], [5, 5, 0, 0]])], [])
    assert list(GENERATORS["grow_rows"](grow)) == [(0,)]


def test_extend_layers_generator() -> None:
    s = [[1, 2, 0], [2, 2, 0], [0, 0, 0]]
    c = ctx([(s, extend_layers(G(s), 2, "tl", 0).tolist())])
    assert gen("extend_layers", c) == [(2, "tl", 0)]
    r = np.fliplr(G(s))  # the same layers about the top-right corner
    c = ctx([(r.tolist(), extend_layers(r, 2, "tr", 0).tolist())])
    assert gen("extend_layers", c) == [(2, "tr", 0)]
    assert gen("extend_layers", ctx([(s, np.tile(G(s), (2, 2)).tolist())])) == []


def test_nest_complete_generator() -> None:
    assert gen("nest_complete", ctx([(_CUT, _NESTED)])) == [(0,)]
    assert gen("nest_complete", _same([_CUT])) == []
