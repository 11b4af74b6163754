"""The regions ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops.regions import (
    bg_regions,
    fill_largest_rect,
    fill_rooms,
    fill_windows,
    recolor_regions,
    region_feature,
    region_values,
    spill_beam,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen

_ROOM = case_grid("fill_rooms")

_ROOM4 = case_want("fill_rooms")

_BOX = case_grid("recolor_regions")

_WIN = case_grid("fill_windows")

_BOX_RECT = case_want("recolor_regions")

_WIN_OUT = case_want("fill_windows")

_CUP = case_grid("spill_beam")

_CUP_OUT = case_want("spill_beam")


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[0, 0, 5], [0, 0, 5]], [[4, 4, 5], [4, 4, 5]])], bg=5)
    assert gen("fill_squares", c)[0] == (2, 2, 0, 4)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        fill_largest_rect(G([[0, 1], [1, 0]]), 0, 6, 2)  # no 2x2 rectangle
    with pytest.raises(ValueError):
        # the wall runs on past the box's corner: no room
        fill_rooms(G([[5, 5, 5, 5], [5, 0, 5, 0], [5, 5, 5, 0]]), 0, 4)
    with pytest.raises(ValueError):
        recolor_regions(G(_BOX), "rect", [[1, 4]], 0)  # the L's value is missing
    with pytest.raises(ValueError):
        recolor_regions(G([[1, 1]]), "rect", [[1, 4]], 0)  # no region
    with pytest.raises(ValueError):
        fill_windows(G(_WIN), 3, 3, 0, 2)  # no 3x3 window

    with pytest.raises(ValueError):
        spill_beam(G([[3, 3, 3], [3, 0, 3], [3, 3, 3]]), 4, 1, 0)  # closed box


def test_fill_largest_rect_generator() -> None:
    c = ctx(
        [
            (
                [[0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 1, 1, 1, 1], [1, 0, 0, 1, 0, 1, 1]],
                [[0, 6, 6, 0, 0, 0, 0], [1, 6, 6, 1, 1, 1, 1], [1, 6, 6, 1, 0, 1, 1]],
            ),
        ]
    )
    assert gen("fill_largest_rect", c) == [(0, 6, 2)]
    c = ctx([([[0, 0, 1], [0, 1, 0]], [[6, 6, 1], [0, 1, 6]])])
    assert gen("fill_largest_rect", c) == []


def test_spill_cups_generator() -> None:
    a = [[0, 0, 0, 0, 0], [0, 1, 0, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]]
    b = [[0, 2, 2, 2, 0], [0, 1, 2, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]]
    assert gen("spill_cups", ctx([(a, b)])) == [(0,)]
    b = [[0, 0, 0, 0, 0], [0, 1, 2, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]]
    assert gen("spill_cups", ctx([(a, b)])) == []


def test_fill_rooms_generator() -> None:
    assert gen("fill_rooms", ctx([(_ROOM, _ROOM4)])) == [(0, 4)]
    two = [r[:] for r in _ROOM4]
    two[3][0] = 6
    assert gen("fill_rooms", ctx([(_ROOM, two)])) == []


def test_region_features() -> None:
    g = G(_BOX)
    regs = bg_regions(g, 0)
    assert [region_feature(g, ys, xs, "enc_rect") for ys, xs in regs] == [3, 0]
    assert [region_feature(g, ys, xs, "boxed") for ys, xs in regs] == [1, 0]
    assert region_values(g, regs, "yrank_mod3") == [0, 1]
    with pytest.raises(ValueError):
        region_feature(g, *regs[0], "colour")


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


def test_spill_beam_generator() -> None:
    assert gen("spill_beam", ctx([(_CUP, _CUP_OUT)])) == [(4, 1, 0)]
    # only the inside filled: quiet
    inside = [r[:] for r in _CUP]
    inside[2][2] = inside[3][2] = 4
    assert gen("spill_beam", ctx([(_CUP, inside)])) == []
