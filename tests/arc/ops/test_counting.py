"""The counting ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import compile_program
from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.counting import count_colors_grid, g_count_colors_grid
from tests.helpers.arc import G, task_ctx


def _cc_task(test: np.ndarray[Any, Any]) -> Ctx:
    one, two = G([[3, 3], [3, 3]]), G([[3, 4], [4, 4]])
    row, diag = G([[5, 5], [0, 0]]), G([[5, 0], [0, 5]])
    return Ctx(states=[one, two, G([[2, 2], [2, 2]]), test], targets=[row, diag, row], bg=3)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        compile_program(["lookup_grid", "x", "top_color", [[1001, 5]], 1, 2, 0])(G([[2]]))


def test_generators_fire_on_matching_shapes() -> None:
    diag = task_ctx([([[1, 0, 2]], [[4, 0], [0, 4]]), ([[3]], [[4]])], [])
    assert list(GENERATORS["count_diag"](diag)) == [(4, 8, 0), (4, 4, 0)]
    row = task_ctx([([[1, 2], [0, 0]], [[1, 2]]), ([[0, 3], [0, 0]], [[3]])], [])
    assert ("auto", 0) in list(GENERATORS["color_order"](row))


def test_generators_gate_on_shapes() -> None:
    pad = task_ctx([([[1, 2]], [[0, 1, 2, 0], [1, 1, 2, 2], [0, 1, 2, 0]])], [])

    snake = task_ctx([([[0, 1, 0, 6], [3, 0, 0, 0], [0, 0, 0, 0]], [[3, 1], [0, 6]])], [])
    assert list(GENERATORS["snake_colors"](snake)) == [(2, 2, "h", 0), (2, 2, "v", 0)]
    bars = task_ctx([([[4, 0, 6], [4, 0, 6], [0, 0, 0]], [[4, 6], [4, 6]])], [])
    assert list(GENERATORS["largest_bars"](bars)) == [(8, 0), (4, 0)]

    lines = task_ctx([([[1, 0, 2], [1, 0, 2], [1, 0, 2]], [[1, 2], [1, 2]])], [])
    assert list(GENERATORS["line_colors"](lines)) == [(0,)]
    assert list(GENERATORS["line_colors"](pad)) == []
    dots = task_ctx([([[4, 1, 8, 8]], [[8]]), ([[4, 4, 1, 8]], [[4]])], [])
    assert list(GENERATORS["most_dotted"](dots)) == [(12,), (1,)]


def test_lookup_grid_needs_a_shared_key_and_test_coverage() -> None:
    pairs = [([[1]], [[1, 0]]), ([[1, 1]], [[1, 0]]), ([[2]], [[0, 2]])]
    got = list(GENERATORS["lookup_grid"](task_ctx(pairs, [[[2, 2]]])))
    assert ("top_color", [[1000, 1], [2001, 2]], 1, 2, 0) in got
    assert not any(a[0] == "top_color" for a in GENERATORS["lookup_grid"](task_ctx(pairs, [[[3]]])))
    one_each = [([[1]], [[1, 0]]), ([[2]], [[0, 2]])]  # one key per pair: memorised
    assert list(GENERATORS["lookup_grid"](task_ctx(one_each, [[[2]]]))) == []


def test_count_colors_grid_rejects() -> None:
    with pytest.raises(ValueError):
        count_colors_grid(G([[1, 2, 3]]), [[1000, 5]], 1, 1, 0)  # 3 colours: no entry


def test_g_count_colors_grid() -> None:
    want = ([[1000, 5], [1001, 5], [2000, 5], [2003, 5]], 2, 2, 0)
    assert list(g_count_colors_grid(_cc_task(G([[1, 1], [1, 2]])))) == [want]
    # a test input with an unseen colour count: quiet
    assert list(g_count_colors_grid(_cc_task(G([[1, 2], [3, 3]])))) == []
    # one count per pair (a memorised answer): quiet
    one, two = G([[3, 3], [3, 3]]), G([[3, 4], [4, 4]])
    ctx = Ctx(states=[one, two, one], targets=[G([[5]]), G([[6]])], bg=3)
    assert list(g_count_colors_grid(ctx)) == []
