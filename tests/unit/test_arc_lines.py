"""DSL ops of :mod:`atlas_actors.arc.ops_lines`: primitives on hand-made grids (compiled
and as standalone Python) and their parameter generators on tiny hand-made tasks (they
fire with the right parameters, and stay quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case, check_registered

from atlas_actors.arc import ops_lines as ol
from atlas_actors.arc.infer import Ctx

_IN = G([[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]])
_OUT = [[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]]

_HID = G([[0, 6, 0, 0, 1, 1], [6, 6, 0, 0, 1, 1], [0, 6, 6, 6, 6, 0]])
_SHOWN = [[0, 6, 0, 0, 6, 0], [6, 6, 0, 0, 6, 6], [0, 6, 6, 6, 6, 0]]

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # the 2x2 block holding the content is kron-ed with itself over the 4x4 grid
    (["kron_fill", "x", 0, 0], _IN, _OUT),
    # inverted: the block's background cell gets the copy
    (
        ["kron_fill", "x", 0, 1],
        _IN,
        [[0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
    ),
    # the solid 1 rectangle hides the right part of a left-right symmetric figure
    (["unocclude", "x", "h", 0], _HID, _SHOWN),
    # two colours (background included) -> the table's diagonal, cells not listed 0
    (
        ["count_colors_grid", "x", [[1000, 5], [2000, 5], [2003, 5]], 2, 2, 0],
        G([[3, 3], [3, 4]]),
        [[5, 0], [0, 5]],
    ),
]


def test_new_ops_registered_with_cases_and_generators() -> None:
    check_registered(ol, {"kron_fill", "count_colors_grid", "unocclude"}, CASES)


@pytest.mark.parametrize(("prog", "grid", "want"), CASES)
def test_cases(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_kron_fill_rejects() -> None:
    with pytest.raises(ValueError):
        ol.kron_fill(G([[1, 0, 0], [0, 0, 0]]), 0, 0)  # sides not squares
    spread = G([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    with pytest.raises(ValueError):
        ol.kron_fill(spread, 0, 0)  # content in two blocks


def test_g_kron_fill() -> None:
    test_in = G([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 2], [0, 0, 0, 2]])
    ctx = Ctx(states=[_IN, test_in], targets=[G(_OUT)], bg=0)
    assert list(ol.g_kron_fill(ctx)) == [(0, 0), (0, 1)]
    # content across blocks, or a target with nothing added: quiet
    spread = G([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    assert list(ol.g_kron_fill(Ctx(states=[spread], targets=[G(_OUT)], bg=0))) == []
    assert list(ol.g_kron_fill(Ctx(states=[_IN], targets=[_IN.copy()], bg=0))) == []


def test_count_colors_grid_rejects() -> None:
    with pytest.raises(ValueError):
        ol.count_colors_grid(G([[1, 2, 3]]), [[1000, 5]], 1, 1, 0)  # 3 colours: no entry


def _cc_task(test: np.ndarray[Any, Any]) -> Ctx:
    one, two = G([[3, 3], [3, 3]]), G([[3, 4], [4, 4]])
    row, diag = G([[5, 5], [0, 0]]), G([[5, 0], [0, 5]])
    return Ctx(states=[one, two, G([[2, 2], [2, 2]]), test], targets=[row, diag, row], bg=3)


def test_g_count_colors_grid() -> None:
    want = ([[1000, 5], [1001, 5], [2000, 5], [2003, 5]], 2, 2, 0)
    assert list(ol.g_count_colors_grid(_cc_task(G([[1, 1], [1, 2]])))) == [want]
    # a test input with an unseen colour count: quiet
    assert list(ol.g_count_colors_grid(_cc_task(G([[1, 2], [3, 3]])))) == []
    # one count per pair (a memorised answer): quiet
    one, two = G([[3, 3], [3, 3]]), G([[3, 4], [4, 4]])
    ctx = Ctx(states=[one, two, one], targets=[G([[5]]), G([[6]])], bg=3)
    assert list(ol.g_count_colors_grid(ctx)) == []


def test_unocclude_rejects() -> None:
    with pytest.raises(ValueError):
        ol.unocclude(G([[6, 6, 0], [6, 0, 0]]), "h", 0)  # no solid rectangle
    two = G([[1, 1, 0, 2, 2], [1, 1, 0, 2, 2], [0, 6, 6, 0, 0]])
    with pytest.raises(ValueError):
        ol.unocclude(two, "h", 0)  # two candidate occluders


def test_g_unocclude() -> None:
    ctx = Ctx(states=[_HID, _HID.copy()], targets=[G(_SHOWN)], bg=0)
    assert list(ol.g_unocclude(ctx)) == [(k, 0) for k in ("h", "v", "hv", "rot", "diag")]
    # the rectangle's colour is still in the target: not an occluder, quiet
    kept = G([[0, 6, 0, 0, 1, 1], [6, 6, 0, 0, 1, 1], [0, 6, 6, 6, 6, 0]])
    assert list(ol.g_unocclude(Ctx(states=[_HID], targets=[kept], bg=0))) == []
