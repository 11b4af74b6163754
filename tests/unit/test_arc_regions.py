"""DSL ops of :mod:`atlas_actors.arc.ops_regions`: primitives on hand-made grids
(compiled and as standalone Python) and their parameter generators on tiny hand-made
tasks (they fire with the right parameters, and stay quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case, check_registered, ctx, gen

from atlas_actors.arc import ops_regions as orr
from atlas_actors.arc.infer import Ctx

NEW_OPS = {
    "recolor_regions",
    "fill_windows",
    "hole_lines",
    "dot_lines_by_region",
    "spill_beam",
}

_BOX = [[1, 1, 1, 1, 1], [1, 0, 1, 0, 1], [1, 0, 1, 0, 0], [1, 1, 1, 1, 1]]
_BOX_RECT = [[1, 1, 1, 1, 1], [1, 4, 1, 0, 1], [1, 4, 1, 0, 0], [1, 1, 1, 1, 1]]
_WIN = [[0, 0, 0, 5], [0, 0, 5, 0], [5, 0, 0, 0]]
_WIN_OUT = [[2, 2, 0, 5], [2, 2, 5, 0], [5, 0, 0, 0]]
_BAND = [[4, 4, 4, 4], [4, 0, 4, 4], [4, 4, 4, 4], [8, 8, 8, 8]]
_BAND_OUT = [[4, 0, 4, 4], [4, 0, 4, 4], [4, 0, 4, 4], [8, 8, 8, 8]]
_DOTS = [[2, 2, 2, 8, 8], [2, 4, 2, 8, 8], [2, 2, 2, 8, 1], [2, 2, 2, 8, 8]]
_DOTS_OUT = [[4, 2, 4, 8, 8], [2, 4, 2, 1, 8], [4, 2, 4, 8, 1], [2, 2, 2, 1, 8]]
_CUP = [[0] * 5, [0] * 5, [0, 3, 0, 3, 0], [0, 3, 0, 3, 0], [0, 3, 3, 3, 0]]
_CUP_OUT = [[4, 0, 4, 0, 4], [0, 4, 4, 4, 0], [0, 3, 4, 3, 0], [0, 3, 4, 3, 0], [0, 3, 3, 3, 0]]

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # the solid-rectangle hole becomes 4, the L-shaped one stays
    (["recolor_regions", "x", "rect", [[0, 0], [1, 4]], 0], G(_BOX), _BOX_RECT),
    # the 2x1 hole is odd-sized, the L (3 cells) too: both 7
    (
        ["recolor_regions", "x", "size_par", [[0, 2], [1, 7]], 0],
        G(_BOX),
        [[1, 1, 1, 1, 1], [1, 2, 1, 7, 1], [1, 2, 1, 7, 7], [1, 1, 1, 1, 1]],
    ),
    # every other region from the left
    (
        ["recolor_regions", "x", "xrank_mod2", [[0, 3], [1, 0]], 0],
        G([[0, 1, 0, 1, 0]]),
        [[3, 1, 0, 1, 3]],
    ),
    # only the 2x2 block of 0s is big enough
    (["fill_windows", "x", 2, 2, 0, 2], G(_WIN), _WIN_OUT),
    # overlapping windows: their union is painted
    (["fill_windows", "x", 2, 2, 0, 2], G([[0, 0, 0], [0, 0, 0]]), [[2, 2, 2], [2, 2, 2]]),
    # the hole in the wide band becomes a column across it (the 8 band stops it)
    (["hole_lines", "x", 0], G(_BAND), _BAND_OUT),
    # the same in a tall band: a row
    (
        ["hole_lines", "x", 0],
        G([[4, 4, 8], [4, 4, 8], [0, 4, 8], [4, 4, 8]]),
        [[4, 4, 8], [4, 4, 8], [0, 0, 8], [4, 4, 8]],
    ),
    # the 4 dot in the 2 region and the 1 dot in the 8 region: diagonals recolour
    # 2 -> 4 and 8 -> 1 wherever they cross
    (["dot_lines_by_region", "x", "diag"], G(_DOTS), _DOTS_OUT),
    # the cup fills and shines up out of its opening, spreading diagonally
    (["spill_beam", "x", 4, 1, 0], G(_CUP), _CUP_OUT),
    (
        ["spill_beam", "x", 4, 0, 0],
        G(_CUP),
        [[0, 0, 4, 0, 0], [0, 0, 4, 0, 0], [0, 3, 4, 3, 0], [0, 3, 4, 3, 0], [0, 3, 3, 3, 0]],
    ),
    (
        ["dot_lines_by_region", "x", "hv"],
        G(_DOTS),
        [[2, 4, 2, 8, 1], [4, 4, 4, 1, 1], [4, 4, 4, 1, 1], [2, 4, 2, 8, 1]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_new_ops_registered_with_cases_and_generators() -> None:
    check_registered(orr, NEW_OPS, CASES)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        orr.recolor_regions(G(_BOX), "rect", [[1, 4]], 0)  # the L's value is missing
    with pytest.raises(ValueError):
        orr.recolor_regions(G([[1, 1]]), "rect", [[1, 4]], 0)  # no region
    with pytest.raises(ValueError):
        orr.fill_windows(G(_WIN), 3, 3, 0, 2)  # no 3x3 window
    with pytest.raises(ValueError):
        orr.hole_lines(G(_BAND), 3)  # no hole of colour 3
    with pytest.raises(ValueError):
        orr.dot_lines_by_region(G([[1, 1], [1, 1]]), "diag")  # no dot
    with pytest.raises(ValueError):
        orr.spill_beam(G([[3, 3, 3], [3, 0, 3], [3, 3, 3]]), 4, 1, 0)  # closed box
    with pytest.raises(ValueError):
        orr.dot_lines_by_region(G([[3, 2, 2, 2, 4]]), "hv")  # 2 taught both 3 and 4


def test_region_features() -> None:
    g = G(_BOX)
    regs = orr._bg_regions(g, 0)
    assert [orr.region_feature(g, ys, xs, "enc_rect") for ys, xs in regs] == [3, 0]
    assert [orr.region_feature(g, ys, xs, "boxed") for ys, xs in regs] == [1, 0]
    assert orr.region_values(g, regs, "yrank_mod3") == [0, 1]
    with pytest.raises(ValueError):
        orr.region_feature(g, *regs[0], "colour")


# ---------------------------------------------------------------- generators


def test_recolor_regions_generator() -> None:
    got = gen("recolor_regions", ctx([(_BOX, _BOX_RECT)]))
    assert got[0] == ("rect", [[0, 0], [1, 4]], 0)
    # half a region painted: quiet
    half = [[1, 1, 1, 1, 1], [1, 4, 1, 0, 1], [1, 0, 1, 0, 0], [1, 1, 1, 1, 1]]
    assert gen("recolor_regions", ctx([(_BOX, half)])) == []
    # a wall cell changes: quiet
    wall = [r[:] for r in _BOX_RECT]
    wall[0][0] = 2
    assert gen("recolor_regions", ctx([(_BOX, wall)])) == []
    # a test input whose region size is unseen: the size table does not cover it
    c = Ctx(
        [G([[0, 1, 0, 0]]), G([[0, 0, 0, 1, 0]])],
        [G([[3, 1, 0, 0]])],
        0,
    )
    assert all(f != "size" for f, _, _ in gen("recolor_regions", c))


def test_fill_windows_generator() -> None:
    assert gen("fill_windows", ctx([(_WIN, _WIN_OUT)])) == [(2, 2, 0, 2)]
    # a single cell painted: no window of 2
    assert gen("fill_windows", ctx([(_WIN, [[0, 0, 0, 5], [0, 0, 5, 2], [5, 0, 0, 0]])])) == []


def test_hole_lines_generator() -> None:
    assert gen("hole_lines", ctx([(_BAND, _BAND_OUT)])) == [(0,)]
    # painted with a colour that no state holds: quiet
    other = [[4, 3, 4, 4], [4, 0, 4, 4], [4, 3, 4, 4], [8, 8, 8, 8]]
    assert gen("hole_lines", ctx([(_BAND, other)])) == []


def test_dot_lines_by_region_generator() -> None:
    assert gen("dot_lines_by_region", ctx([(_DOTS, _DOTS_OUT)])) == [("diag",)]
    other = [r[:] for r in _DOTS_OUT]
    other[3][0] = 4
    assert gen("dot_lines_by_region", ctx([(_DOTS, other)])) == []


def test_spill_beam_generator() -> None:
    assert gen("spill_beam", ctx([(_CUP, _CUP_OUT)])) == [(4, 1, 0)]
    # only the inside filled: quiet
    inside = [r[:] for r in _CUP]
    inside[2][2] = inside[3][2] = 4
    assert gen("spill_beam", ctx([(_CUP, inside)])) == []
