"""DSL ops of :mod:`atlas_actors.arc.ops_misc`: primitives on hand-made grids (compiled
and as standalone Python) and their parameter generators on tiny hand-made tasks (they
fire with the right parameters, and stay quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case, check_registered, ctx, gen

from atlas_actors.arc import ops_misc as om
from atlas_actors.arc.solver import TaskSolver

NEW_OPS = {
    "line_staircase",
    "shift_by_count",
    "fill_rooms",
    "complete_by_analogy",
    "move_by_count",
    "turn_objects",
    "extend_segments",
    "erase_contained",
    "dot_paint_touching",
    "shear",
    "mirror_cross",
    "overlay_objects",
    "wall_gravity",
    "block_pixels",
    "connect_corners_diag",
    "shift_by_color",
    "kron_own",
    "complete_copies",
    "legend_recolor",
    "mirror_line",
    "cycle_recolor",
    "keep_top_colors",
    "trim_objects",
    "square_ticks",
    "nest_by_count",
    "step_to_marker",
    "dot_to_corner",
    "reverse_path",
    "roll_by_key",
    "toggle_lines",
}

_ROOM = [
    [0, 5, 5, 5, 0, 0],
    [0, 5, 0, 5, 5, 5],
    [0, 5, 5, 5, 0, 0],
    [0, 0, 0, 0, 0, 0],
    [5, 5, 5, 0, 0, 0],
]
_ROOM4 = [r[:] for r in _ROOM]
_ROOM4[1][2] = 4

_FALL_IN = G([[1, 1, 0], [0, 0, 2], [0, 0, 0], [0, 0, 0], [3, 3, 3]])
_FALL_OUT = [[0, 0, 0], [0, 0, 0], [1, 1, 2], [0, 0, 0], [3, 3, 3]]
_L_IN = G([[0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 3, 0, 0, 0], [0, 3, 3, 0, 0], [0, 0, 0, 0, 0]])
_L_OUT = [[0, 0, 0, 0, 0], [0, 0, 3, 0, 0], [3, 3, 3, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
_SEG_IN = G([[0, 0, 0, 0, 0], [0, 4, 4, 0, 0], [0, 0, 0, 6, 0], [0, 0, 0, 6, 0], [2, 0, 0, 0, 0]])
_SEG_H = [[0, 0, 0, 6, 0], [4, 4, 4, 4, 4], [0, 0, 0, 6, 0], [0, 0, 0, 6, 0], [2, 0, 0, 6, 0]]
_SEG_V = [[*r[:3], 6, *r[4:]] for r in _SEG_H]
_CROSS_IN = G([[1, 0, 8, 0, 0], [3, 0, 8, 0, 0], [8, 8, 8, 8, 8], [0, 0, 8, 0, 0], [0, 0, 8, 0, 0]])
_CROSS_OUT = [[1, 0, 8, 0, 1], [3, 0, 8, 0, 3], [8, 8, 8, 8, 8], [3, 0, 8, 0, 3], [1, 0, 8, 0, 1]]
_OVER_IN = G([[5, 5, 0, 0, 0], [5, 1, 0, 5, 5], [0, 0, 0, 2, 5]])
_WALLS_IN = G([[1, 0, 0, 0, 0, 2], [1, 0, 0, 1, 0, 2], [1, 2, 0, 0, 3, 2], [1, 0, 1, 1, 0, 2]])
_WALLS_OUT = [[1, 0, 0, 0, 0, 2], [1, 1, 0, 0, 0, 2], [1, 0, 0, 2, 3, 2], [1, 1, 1, 0, 0, 2]]
_PATCH_IN = G([[0, 0, 0, 0, 0], [0, 3, 3, 4, 4], [0, 3, 0, 4, 4], [0, 5, 5, 6, 0], [0, 5, 5, 6, 6]])
_DIAG_IN = G([[2, 2, 0, 0, 0], [2, 2, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [3, 0, 0, 0, 2]])
_DIAG_OUT = [[2, 2, 0, 0, 0], [2, 2, 0, 0, 0], [0, 0, 2, 0, 0], [0, 0, 0, 2, 0], [3, 0, 0, 0, 2]]
# colour 1 one step down ((1 + 30) * 61 + 30), colour 2 two steps right (30 * 61 + 32)
_BY_COLOR = [[1921, 1], [1862, 2]]
_SHIFT_IN = G([[0, 1, 0], [0, 0, 0], [2, 0, 0]])
_SHIFT_OUT = [[0, 0, 0], [0, 1, 0], [0, 0, 2]]
_KRON_IN = G([[1, 2], [0, 1]])
_KRON_OUT = [[1, 0, 0, 2], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
_PLUS_IN = G(
    [
        [0, 1, 0, 0, 0, 0],
        [1, 1, 1, 0, 0, 0],
        [0, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 2, 0],
        [0, 0, 0, 2, 2, 2],
        [0, 0, 0, 0, 0, 0],
    ]
)
_PLUS_OUT = _PLUS_IN.tolist()
_PLUS_OUT[5][4] = 2
_KEY_IN = G([[1, 2, 0, 1, 1, 0], [3, 4, 0, 3, 0, 2], [2, 5, 0, 0, 0, 0], [0, 0, 0, 2, 1, 3]])
_KEY_CHAIN = [[1, 2, 0, 5, 5, 0], [3, 4, 0, 4, 0, 5], [2, 5, 0, 0, 0, 0], [0, 0, 0, 5, 5, 4]]
_KEY_ONCE = [[1, 2, 0, 2, 2, 0], [3, 4, 0, 4, 0, 5], [2, 5, 0, 0, 0, 0], [0, 0, 0, 5, 2, 4]]
_DIAG_MIRROR_IN = G([[1, 0, 3, 2], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
_DIAG_MIRROR_OUT = [[1, 0, 3, 2], [0, 1, 0, 0], [3, 0, 1, 0], [0, 0, 0, 1]]
_CYCLE_IN = G([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
_CYCLE_ROWS = [[0, 2, 0], [8, 0, 0], [0, 0, 2]]
_TOP_IN = G([[1, 1, 1, 2], [1, 1, 2, 3], [4, 1, 2, 1]])
_TOP_OUT = [[1, 1, 1, 2], [1, 1, 2, 7], [7, 1, 2, 1]]
_TRIM_IN = G([[0, 3, 3, 3], [0, 3, 3, 3], [5, 5, 0, 0]])
_TRIM_LEFT = [[0, 0, 3, 3], [0, 0, 3, 3], [0, 5, 0, 0]]

_SQ_IN = G(
    [
        [0, 0, 0, 0, 5, 5, 5],
        [0, 1, 1, 0, 0, 0, 0],
        [0, 1, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 3, 3, 3, 0],
        [0, 0, 0, 3, 0, 3, 0],
        [0, 0, 0, 3, 3, 3, 0],
    ]
)
_SQ_OUT = [
    [0, 2, 2, 0, 5, 5, 5],
    [2, 1, 1, 2, 0, 0, 0],
    [2, 1, 1, 2, 0, 0, 0],
    [0, 2, 2, 2, 0, 2, 0],
    [0, 0, 2, 3, 3, 3, 2],
    [0, 0, 0, 3, 0, 3, 0],
    [0, 0, 2, 3, 3, 3, 2],
]
_NEST_IN = G([[1, 1, 1], [2, 2, 0], [3, 0, 0]])
_NEST_OUT = [
    [1, 1, 1, 1, 1],
    [1, 2, 2, 2, 1],
    [1, 2, 3, 2, 1],
    [1, 2, 2, 2, 1],
    [1, 1, 1, 1, 1],
]
_STEP_IN = G([[0, 0, 0, 0, 0], [0, 4, 4, 0, 0], [0, 4, 8, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
_STEP_OUT = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 4, 4, 0], [0, 0, 4, 4, 0], [0, 0, 0, 0, 0]]
_DOTS_IN = G([[0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 5, 0], [7, 7, 0, 0, 0]])
_DOTS_OUT = [[3, 3, 0, 0, 0], [3, 3, 0, 0, 0], [0, 0, 0, 5, 5], [7, 7, 0, 5, 5]]
_PATH_IN = G([[1, 2, 3, 0], [0, 0, 4, 0], [5, 0, 0, 0]])
_PATH_OUT = [[4, 3, 2, 0], [0, 0, 1, 0], [5, 0, 0, 0]]
_ROLL_IN = G([[5, 1, 2], [5, 3, 4], [9, 6, 7], [5, 8, 0]])
_ROLL_OUT = [[6, 7], [8, 0], [1, 2], [3, 4]]
_TOGGLE_IN = G([[0, 3, 0, 2], [1, 3, 0, 0], [0, 0, 0, 2]])
_TOGGLE_OUT = [[0, 3, 0, 2], [1, 0, 0, 2], [0, 3, 0, 0]]

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # a 7 line hanging from the top: copies 1 and 2 columns away, one and two cells
    # shorter, in 8 then 7
    (
        ["line_staircase", "x", 8, 0],
        G([[0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]]),
        [[7, 8, 7, 8, 7], [0, 8, 7, 8, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]],
    ),
    # a row touching the right edge grows from that end; copies leaving the grid are cut
    (
        ["line_staircase", "x", 5, 0],
        G([[0, 0, 0, 0], [0, 2, 2, 2], [0, 0, 0, 0]]),
        [[0, 0, 5, 5], [0, 2, 2, 2], [0, 0, 5, 5]],
    ),
    # two 5s: the rest moves two steps right, the 5s are gone
    (
        ["shift_by_count", "x", 5, "right", 0],
        G([[0, 1, 0, 5], [0, 1, 0, 5], [0, 0, 0, 0]]),
        [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]],
    ),
    # one 5: a cross moves down-left one step, its lines stay whole
    (
        ["shift_by_count", "x", 5, "dl", 0],
        G([[0, 3, 0, 5], [3, 3, 3, 3], [0, 3, 0, 0], [0, 3, 0, 0]]),
        [[3, 0, 0, 0], [3, 0, 0, 0], [3, 3, 3, 3], [3, 0, 0, 0]],
    ),
    # the boxed 0 (a line leaves its right wall mid-side) is a room; the 0s in the top
    # right corner lean on two grid sides, the rest is no rectangle
    (["fill_rooms", "x", 0, 4], G(_ROOM), _ROOM4),
    # a room on the grid's edge (walls on three sides)
    (
        ["fill_rooms", "x", 0, 2],
        G([[0, 5, 5], [0, 5, 0], [0, 5, 5]]),
        [[0, 5, 5], [0, 5, 2], [0, 5, 5]],
    ),
    # partial rows finish like the complete row above them, in their own colours
    (
        ["complete_by_analogy", "x", "h", 0],
        G([[1, 4, 1, 1, 4], [0, 0, 0, 0, 0], [2, 3, 0, 0, 0], [6, 0, 0, 0, 0]]),
        [[1, 4, 1, 1, 4], [0, 0, 0, 0, 0], [2, 3, 2, 2, 3], [6, 0, 0, 0, 0]],
    ),
    # columns, with the nearest earlier template (the second) for the last column
    (
        ["complete_by_analogy", "x", "v", 0],
        G([[1, 0, 5, 7], [2, 0, 6, 8], [1, 0, 6, 0], [2, 0, 5, 0]]),
        [[1, 0, 5, 7], [2, 0, 6, 8], [1, 0, 6, 8], [2, 0, 5, 7]],
    ),
    # each object falls by its cell count; the full-width floor stays
    (
        ["move_by_count", "x", "down", 0],
        _FALL_IN,
        _FALL_OUT,
    ),
    # cells moved past the edge are lost: the 3-cell 4 rises 3, the 5 rises 1
    (
        ["move_by_count", "x", "up", 0],
        G([[0, 0], [4, 0], [4, 0], [4, 5]]),
        [[4, 0], [0, 0], [0, 5], [0, 0]],
    ),
    # an L turned a quarter anticlockwise about its box's centre (half cell: up-left)
    (["turn_objects", "x", "ccw", 4, 0], _L_IN, _L_OUT),
    # a bar turned clockwise about its middle cell
    (
        ["turn_objects", "x", "cw", 8, 0],
        G([[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 7, 7, 7, 0], [0, 0, 0, 0, 0]]),
        [[0, 0, 0, 0, 0], [0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 7, 0, 0]],
    ),
    # segments become full lines (rows painted last); the single cell stays
    (["extend_segments", "x", "h", 0], _SEG_IN, _SEG_H),
    (["extend_segments", "x", "v", 0], _SEG_IN, _SEG_V),
    # the 2 inside the 1 frame's box goes; the 3 outside stays
    (
        ["erase_contained", "x", 0],
        G([[1, 1, 1, 1, 0], [1, 0, 2, 1, 0], [1, 1, 1, 1, 3], [0, 0, 0, 0, 0]]),
        [[1, 1, 1, 1, 0], [1, 0, 0, 1, 0], [1, 1, 1, 1, 3], [0, 0, 0, 0, 0]],
    ),
    # the 2 repaints the 5 pair it touches; the 3 touches nothing; both dots go
    (
        ["dot_paint_touching", "x", 5, 0],
        G([[5, 5, 0, 0], [0, 2, 0, 5], [0, 0, 0, 5], [3, 0, 0, 0]]),
        [[2, 2, 0, 0], [0, 0, 0, 5], [0, 0, 0, 5], [0, 0, 0, 0]],
    ),
    # the top row shifted furthest right
    (
        ["shear", "x", "h+", 0],
        G([[1, 2, 3], [4, 5, 6]]),
        [[0, 1, 2, 3], [4, 5, 6, 0]],
    ),
    # columns: column j shifted down by j, on a canvas of 9
    (
        ["shear", "x", "v-", 9],
        G([[1, 2], [3, 4], [5, 6]]),
        [[1, 9], [3, 2], [5, 4], [9, 6]],
    ),
    # reflected across the 8 row, the 8 column and both
    (["mirror_cross", "x", 0], _CROSS_IN, _CROSS_OUT),
    # two same-size objects stacked, 5 (the commonest) showing through
    (["overlay_objects", "x", 0], _OVER_IN, [[5, 5], [2, 1]]),
    # role 13: each grid's commonest colour is its background
    (["overlay_objects", "x", 13], np.where(_OVER_IN == 0, 7, _OVER_IN), [[5, 5], [2, 1]]),
    # 1s slide to the left wall, 2s to the right, nearest first; the 2 stops at the 3,
    # which has no wall and stays
    (["wall_gravity", "x", 8, 0], _WALLS_IN, _WALLS_OUT),
    # a wall on the bottom row: the lower 4 lands first and the upper one on it; the 5
    # (no wall) stays
    (
        ["wall_gravity", "x", 4, 0],
        G([[4, 0, 0], [0, 0, 0], [4, 0, 5], [0, 0, 0], [4, 4, 4]]),
        [[0, 0, 0], [0, 0, 0], [4, 0, 5], [4, 0, 0], [4, 4, 4]],
    ),
    # four noisy blocks (a hole in the 3 block, one in the 6 block), one cell each
    (["block_pixels", "x", 0], _PATCH_IN, [[3, 4], [5, 6]]),
    # the 2 block and the 2 dot face each other on a diagonal; the 3 is another colour
    (["connect_corners_diag", "x", 0], _DIAG_IN, _DIAG_OUT),
    (["shift_by_color", "x", _BY_COLOR, 0], _SHIFT_IN, _SHIFT_OUT),
    # every cell becomes a block showing where its own colour is
    (["kron_own", "x", 0], _KRON_IN, _KRON_OUT),
    # the 2 plus lacks its bottom arm: the one placement of the 1 plus's shape covering
    # it finishes it
    (["complete_copies", "x", 1, 0], _PLUS_IN, _PLUS_OUT),
    # the key 1->2, 3->4, 2->5 (left two columns) recolours the rest: chained, 1 ends
    # as 5; once, 1 becomes 2
    (["legend_recolor", "x", 1, 0], _KEY_IN, _KEY_CHAIN),
    (["legend_recolor", "x", 0, 0], _KEY_IN, _KEY_ONCE),
    # the diagonal of 1s mirrors the 3 (not the 2)
    (["mirror_line", "x", 1, 3, 0], _DIAG_MIRROR_IN, _DIAG_MIRROR_OUT),
    # a column of 8s; the image falling off the grid is dropped
    (
        ["mirror_line", "x", 8, 4, 0],
        G([[4, 0, 8, 0, 0, 0], [0, 0, 8, 0, 0, 4]]),
        [[4, 0, 8, 0, 4, 0], [0, 0, 8, 0, 0, 4]],
    ),
    # one cell per row: reading order; by columns the first two swap
    (["cycle_recolor", "x", [2, 8], "auto", 0], _CYCLE_IN, _CYCLE_ROWS),
    (["cycle_recolor", "x", [2, 8], "cols", 0], _CYCLE_IN, [[0, 8, 0], [2, 0, 0], [0, 0, 2]]),
    # 1 and 2 are the commonest; 3 and 4 become 7
    (["keep_top_colors", "x", 2, 7], _TOP_IN, _TOP_OUT),
    # each object loses its leftmost column
    (["trim_objects", "x", "left", 1, 0], _TRIM_IN, _TRIM_LEFT),
    (["trim_objects", "x", "down", 1, 0], _TRIM_IN, [[0, 3, 3, 3], [0, 0, 0, 0], [0, 0, 0, 0]]),
    # moved past the edge: lost
    (["shift_by_color", "x", _BY_COLOR, 0], G([[0, 0, 2], [0, 0, 1]]), [[0, 0, 0], [0, 0, 0]]),
    # the 2x2 block and the 3x3 ring are square outlines (ticks off the grid dropped);
    # the 5 bar is not
    (["square_ticks", "x", 2, 0], _SQ_IN, _SQ_OUT),
    # three 1s, two 2s, one 3: 1 outermost
    (["nest_by_count", "x", 0], _NEST_IN, _NEST_OUT),
    # the 8 in the 4s' bottom-right corner: the 4s, the 8 made a 4, step down-right
    (["step_to_marker", "x", 8, 0], _STEP_IN, _STEP_OUT),
    # the 3 grows to the top-left corner, the 5 to the bottom-right; the 7 pair is no dot
    (["dot_to_corner", "x", 0], _DOTS_IN, _DOTS_OUT),
    # 1-2-3-4 read from one end to the other becomes 4-3-2-1; the lone 5 stays
    (["reverse_path", "x", 0], _PATH_IN, _PATH_OUT),
    # the key column's odd cell is at index 2: the rest rolls down by 2
    (["roll_by_key", "x"], _ROLL_IN, _ROLL_OUT),
    # a key row (the first column has no single odd cell): the rest rolls right by 1
    (["roll_by_key", "x"], G([[4, 6, 4], [1, 2, 3], [7, 8, 9]]), [[3, 1, 2], [9, 7, 8]]),
    # markers 3 and 2 on the top row: in their columns 3s become 0 and 0s become 3
    (["toggle_lines", "x", 0], _TOGGLE_IN, _TOGGLE_OUT),
    # an empty top row: the marker is on the first column and claims its row
    (
        ["toggle_lines", "x", 0],
        G([[0, 0, 0], [4, 0, 4], [0, 1, 0]]),
        [[0, 0, 0], [4, 4, 0], [0, 1, 0]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES)
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_new_ops_registered_with_cases_and_generators() -> None:
    check_registered(om, NEW_OPS, CASES)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        om.line_staircase(G([[1, 1], [1, 0]]), 8, 0)  # not a straight line
    with pytest.raises(ValueError):
        om.line_staircase(G([[1, 0, 0], [0, 0, 1]]), 8, 0)  # single cells only
    with pytest.raises(ValueError):
        om.line_staircase(G([[1, 1, 0], [0, 0, 1], [0, 0, 1]]), 8, 0)  # not parallel
    with pytest.raises(ValueError):
        # the wall runs on past the box's corner: no room
        om.fill_rooms(G([[5, 5, 5, 5], [5, 0, 5, 0], [5, 5, 5, 0]]), 0, 4)
    with pytest.raises(ValueError):
        # the drawn cells contradict the template (1 would be both 2 and 3)
        om.complete_by_analogy(G([[1, 4, 1], [2, 0, 3]]), "h", 0)
    with pytest.raises(ValueError):
        om.move_by_count(G([[1, 1, 1], [0, 0, 0]]), "down", 0)  # only a floor: nothing moves
    with pytest.raises(ValueError):
        om.extend_segments(G([[1, 0], [0, 2]]), "h", 0)  # single cells only
    with pytest.raises(ValueError):
        om.erase_contained(G([[1, 0, 2]]), 0)  # nothing inside anything
    with pytest.raises(ValueError):
        om.dot_paint_touching(G([[5, 5], [5, 5]]), 5, 0)  # no dot
    with pytest.raises(ValueError):
        om.mirror_cross(G([[8, 8, 8], [0, 0, 8], [1, 0, 0]]), 0)  # no full column
    with pytest.raises(ValueError):
        om.overlay_objects(G([[5, 5, 0, 5], [5, 5, 0, 0]]), 0)  # sizes differ
    with pytest.raises(ValueError):
        om.overlay_objects(G([[1, 2, 0, 3, 4]]), 0)  # 1 2 and 3 4 clash on both cells
    with pytest.raises(ValueError):
        om.shear(np.zeros((20, 12), dtype=np.int64), "h+", 0)  # 31 columns
    with pytest.raises(ValueError):
        om.wall_gravity(G([[1, 0], [0, 1]]), 8, 0)  # no border line of one colour
    with pytest.raises(ValueError):
        om.wall_gravity(G([[1, 0, 0], [1, 0, 3], [1, 0, 0]]), 8, 0)  # nothing of colour 1
    with pytest.raises(ValueError):
        om.block_pixels(G([[0, 0], [0, 0]]), 0)  # empty
    with pytest.raises(ValueError):
        om.connect_corners_diag(G([[2, 0, 0], [0, 0, 0], [0, 0, 3]]), 0)  # colours differ
    with pytest.raises(ValueError):
        om.shift_by_color(G([[0, 5]]), _BY_COLOR, 0)  # 5 has no offset
    with pytest.raises(ValueError):
        om.kron_own(np.ones((6, 6), dtype=np.int64), 0)  # 36 x 36
    with pytest.raises(ValueError):
        om.complete_copies(G([[1, 1], [0, 1]]), 1, 0)  # one object: nothing to copy
    with pytest.raises(ValueError):
        # two placements of the 1 bar fit the 2 dot
        om.complete_copies(G([[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 2, 0]]), 1, 0)
    with pytest.raises(ValueError):
        om.legend_recolor(_KEY_IN[:2], 1, 0)  # a key of two rows is too short
    with pytest.raises(ValueError):
        om.mirror_line(G([[1, 0], [0, 3]]), 2, 3, 0)  # no line of 2
    with pytest.raises(ValueError):
        om.cycle_recolor(G([[1, 1], [1, 0]]), [2, 8], "auto", 0)  # two in a row and a column
    with pytest.raises(ValueError):
        om.keep_top_colors(G([[1, 2]]), 2, 7)  # only two colours
    with pytest.raises(ValueError):
        om.trim_objects(G([[0, 0]]), "left", 1, 0)  # no object
    with pytest.raises(ValueError):
        om.square_ticks(G([[1, 1, 1]]), 2, 0)  # no square outline
    with pytest.raises(ValueError):
        om.square_ticks(np.full((3, 3), 4), 2, 0)  # a filled square is no outline
    with pytest.raises(ValueError):
        om.nest_by_count(G([[1, 2]]), 0)  # equal counts
    with pytest.raises(ValueError):
        om.step_to_marker(G([[8, 0, 0], [0, 0, 4]]), 8, 0)  # the 8 is on no corner
    with pytest.raises(ValueError):
        om.dot_to_corner(G([[0, 0, 0], [0, 3, 0], [0, 0, 0]]), 0)  # as near all four
    with pytest.raises(ValueError):
        om.reverse_path(G([[1, 0], [0, 2]]), 0)  # single cells, no path
    with pytest.raises(ValueError):
        om.roll_by_key(G([[1, 2], [3, 4]]))  # no key line
    with pytest.raises(ValueError):
        om.toggle_lines(G([[0, 0], [0, 0]]), 0)  # no marker


# ---------------------------------------------------------------- generators


def test_line_staircase_generator() -> None:
    c = ctx(
        [
            (
                [[0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]],
                [[7, 8, 7, 8, 7], [0, 8, 7, 8, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]],
            )
        ]
    )
    assert gen("line_staircase", c) == [(8, 0)]
    # two new colours: not a staircase
    c = ctx([([[0, 7, 0], [0, 7, 0]], [[8, 7, 9], [0, 7, 0]])])
    assert gen("line_staircase", c) == []
    # no line in the input
    c = ctx([([[7, 7, 0], [7, 7, 0]], [[7, 7, 8], [7, 7, 0]])])
    assert gen("line_staircase", c) == []


def test_shift_by_count_generator() -> None:
    c = ctx(
        [
            ([[0, 1, 0, 0, 5], [0, 0, 0, 0, 0]], [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0]]),
            ([[0, 1, 0, 5, 5], [0, 0, 0, 0, 0]], [[0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]),
        ]
    )
    assert gen("shift_by_count", c) == [(5, "right", 0)]
    # the tally is the same in every pair: a plain shift, left to other ops
    c = ctx(
        [
            ([[0, 1, 0, 0, 5], [0, 0, 0, 0, 0]], [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0]]),
            ([[1, 0, 0, 0, 5], [0, 0, 0, 0, 0]], [[0, 1, 0, 0, 0], [0, 0, 0, 0, 0]]),
        ]
    )
    assert gen("shift_by_count", c) == []


def test_fill_rooms_generator() -> None:
    assert gen("fill_rooms", ctx([(_ROOM, _ROOM4)])) == [(0, 4)]
    two = [r[:] for r in _ROOM4]
    two[3][0] = 6
    assert gen("fill_rooms", ctx([(_ROOM, two)])) == []


def test_complete_by_analogy_generator() -> None:
    src = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 0, 0]]
    want = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 2, 3]]
    assert gen("complete_by_analogy", ctx([(src, want)])) == [("h", 0)]
    # the gaps get a colour the template does not give: no analogy
    other = [[1, 4, 1, 4], [0, 0, 0, 0], [2, 3, 2, 2]]
    assert gen("complete_by_analogy", ctx([(src, other)])) == []


def test_move_by_count_generator() -> None:
    assert gen("move_by_count", ctx([(_FALL_IN.tolist(), _FALL_OUT)])) == [("down", 0)]
    # a cell painted on: not a move
    more = [r[:] for r in _FALL_OUT]
    more[0][0] = 9
    assert gen("move_by_count", ctx([(_FALL_IN.tolist(), more)])) == []


def test_turn_objects_generator() -> None:
    assert gen("turn_objects", ctx([(_L_IN.tolist(), _L_OUT)])) == [("ccw", 4, 0)]
    # a cell's colour changed: the colour counts differ, nothing is tried
    other = [r[:] for r in _L_OUT]
    other[1][2] = 4
    assert gen("turn_objects", ctx([(_L_IN.tolist(), other)])) == []


def test_extend_segments_generator() -> None:
    assert gen("extend_segments", ctx([(_SEG_IN.tolist(), _SEG_V)])) == [("v", 0)]
    assert gen("extend_segments", ctx([(_SEG_IN.tolist(), _SEG_IN.tolist())])) == []


def test_erase_contained_generator() -> None:
    src = [[1, 1, 1, 0], [1, 2, 1, 0], [1, 1, 1, 3]]
    want = [[1, 1, 1, 0], [1, 0, 1, 0], [1, 1, 1, 3]]
    assert gen("erase_contained", ctx([(src, want)])) == [(0,)]
    # the wrong object erased
    wrong = [[1, 1, 1, 0], [1, 2, 1, 0], [1, 1, 1, 0]]
    assert gen("erase_contained", ctx([(src, wrong)])) == []


def test_dot_paint_touching_generator() -> None:
    src = [[5, 5, 0], [0, 2, 0], [4, 4, 0]]
    assert gen("dot_paint_touching", ctx([(src, [[2, 2, 0], [0, 0, 0], [2, 2, 0]])])) == []
    assert gen("dot_paint_touching", ctx([(src, [[2, 2, 0], [0, 0, 0], [4, 4, 0]])])) == [(5, 0)]


def test_shear_generator() -> None:
    # canvas colours read off the corners each skew leaves empty
    c = ctx([([[1, 2, 3], [4, 5, 6]], [[0, 1, 2, 3], [4, 5, 6, 0]])])
    assert gen("shear", c) == [("h+", 0), ("h-", 4)]
    assert gen("shear", ctx([([[1, 2], [3, 4]], [[1, 2], [3, 4]])])) == []


def test_mirror_cross_generator() -> None:
    assert gen("mirror_cross", ctx([(_CROSS_IN.tolist(), _CROSS_OUT)])) == [(0,)]
    half = [r[:] for r in _CROSS_OUT]
    half[4][4] = 0
    assert gen("mirror_cross", ctx([(_CROSS_IN.tolist(), half)])) == []


def test_overlay_objects_generator() -> None:
    # the backgrounds differ by pair: only role 13 fits both
    other = np.where(_OVER_IN == 0, 7, _OVER_IN).tolist()
    c = ctx([(_OVER_IN.tolist(), [[5, 5], [2, 1]]), (other, [[5, 5], [2, 1]])])
    assert gen("overlay_objects", c) == [(13,)]
    assert gen("overlay_objects", ctx([(_OVER_IN.tolist(), [[5, 5], [1, 2]])])) == []


def test_wall_gravity_generator() -> None:
    assert gen("wall_gravity", ctx([(_WALLS_IN.tolist(), _WALLS_OUT)])) == [(8, 0)]
    # the 3 moved too: not what the walls do
    other = [r[:] for r in _WALLS_OUT]
    other[2][3:5] = [3, 2]
    assert gen("wall_gravity", ctx([(_WALLS_IN.tolist(), other)])) == []


def test_block_pixels_generator() -> None:
    assert gen("block_pixels", ctx([(_PATCH_IN.tolist(), [[3, 4], [5, 6]])])) == [(0,)]
    # mirrored: the summary is a step away (a flip follows)
    assert gen("block_pixels", ctx([(_PATCH_IN.tolist(), [[4, 3], [6, 5]])])) == [(0,)]
    assert gen("block_pixels", ctx([(_PATCH_IN.tolist(), [[3, 4], [5, 5]])])) == []


def test_connect_corners_diag_generator() -> None:
    assert gen("connect_corners_diag", ctx([(_DIAG_IN.tolist(), _DIAG_OUT)])) == [(0,)]
    other = [r[:] for r in _DIAG_OUT]
    other[3][3] = 3
    assert gen("connect_corners_diag", ctx([(_DIAG_IN.tolist(), other)])) == []


def test_shift_by_color_generator() -> None:
    assert gen("shift_by_color", ctx([(_SHIFT_IN.tolist(), _SHIFT_OUT)])) == [(_BY_COLOR, 0)]
    # one offset for every colour is a plain shift, left to `shift`
    moved = [[0, 0, 1], [0, 0, 0], [0, 2, 0]]
    assert gen("shift_by_color", ctx([(_SHIFT_IN.tolist(), moved)])) == []


def test_kron_own_generator() -> None:
    assert gen("kron_own", ctx([(_KRON_IN.tolist(), _KRON_OUT)])) == [(0,)]
    # no 0 in the grid (its commonest colour, 1, is the task's background): the empty
    # blocks are 0
    full = [[1, 2], [1, 1]]
    out = [[1, 0, 0, 2], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]]
    assert gen("kron_own", ctx([(full, out)], bg=1)) == [(0,)]
    # each cell a copy of the whole grid: kron_self, not this
    whole = [[1, 2, 1, 2], [0, 1, 0, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    assert gen("kron_own", ctx([(_KRON_IN.tolist(), whole)])) == []


def test_complete_copies_generator() -> None:
    assert gen("complete_copies", ctx([(_PLUS_IN.tolist(), _PLUS_OUT)])) == [(1, 0)]
    # the second pair on a background of 7: only each grid's own background (role 13)
    # fits both
    on7 = [[7 if v == 0 else v for v in r] for r in _PLUS_OUT]
    c = ctx([(_PLUS_IN.tolist(), _PLUS_OUT), (np.where(_PLUS_IN == 0, 7, _PLUS_IN).tolist(), on7)])
    assert gen("complete_copies", c) == [(1, 13)]
    other = [r[:] for r in _PLUS_OUT]
    other[5][4], other[5][5] = 0, 2
    assert gen("complete_copies", ctx([(_PLUS_IN.tolist(), other)])) == []


def test_legend_recolor_generator() -> None:
    assert gen("legend_recolor", ctx([(_KEY_IN.tolist(), _KEY_CHAIN)])) == [(1, 0)]
    assert gen("legend_recolor", ctx([(_KEY_IN.tolist(), _KEY_ONCE)])) == [(0, 0)]


def test_a_test_grid_with_another_background_is_answered_with_its_own() -> None:
    """Every train grid has the task's background, the test grid another: the program
    that reads each grid's commonest colour as its background answers it (the one
    with the task's background finds no key there and fails)."""
    test_in = np.where(_KEY_IN == 0, 6, _KEY_IN)
    solver = TaskSolver([(_KEY_IN, G(_KEY_CHAIN))], [test_in])
    solver.search(3000)
    got = [n.outs[1] for n in solver.solutions()[:2]]
    want = np.where(_KEY_IN == 0, 6, G(_KEY_CHAIN))
    assert any(np.array_equal(g, want) for g in got)


def test_mirror_line_generator() -> None:
    got = gen("mirror_line", ctx([(_DIAG_MIRROR_IN.tolist(), _DIAG_MIRROR_OUT)]))
    assert got and got[0] == (1, 3, 0)
    # the 2 mirrored as well: no single colour does that
    both = [r[:] for r in _DIAG_MIRROR_OUT]
    both[3][0] = 2
    assert gen("mirror_line", ctx([(_DIAG_MIRROR_IN.tolist(), both)])) == []


def test_cycle_recolor_generator() -> None:
    assert gen("cycle_recolor", ctx([(_CYCLE_IN.tolist(), _CYCLE_ROWS)])) == [([2, 8], "rows", 0)]
    # three cells, three colours: no cycle shows
    assert (
        gen("cycle_recolor", ctx([(_CYCLE_IN.tolist(), [[0, 2, 0], [8, 0, 0], [0, 0, 5]])])) == []
    )


def test_keep_top_colors_generator() -> None:
    assert gen("keep_top_colors", ctx([(_TOP_IN.tolist(), _TOP_OUT)])) == [(2, 7)]
    two = [r[:] for r in _TOP_OUT]
    two[2][0] = 6
    assert gen("keep_top_colors", ctx([(_TOP_IN.tolist(), two)])) == []


def test_trim_objects_generator() -> None:
    assert gen("trim_objects", ctx([(_TRIM_IN.tolist(), _TRIM_LEFT)])) == [("left", 1, 0)]
    # a cell painted, not only erased
    other = [r[:] for r in _TRIM_LEFT]
    other[2][0] = 4
    assert gen("trim_objects", ctx([(_TRIM_IN.tolist(), other)])) == []


def _with(grid: list[list[int]], y: int, x: int, v: int) -> list[list[int]]:
    out = [r[:] for r in grid]
    out[y][x] = v
    return out


def test_square_ticks_generator() -> None:
    assert gen("square_ticks", ctx([(_SQ_IN.tolist(), _SQ_OUT)])) == [(2, 0)]
    # a tick missing: not the rule
    assert gen("square_ticks", ctx([(_SQ_IN.tolist(), _with(_SQ_OUT, 0, 1, 0))])) == []


def test_nest_by_count_generator() -> None:
    assert gen("nest_by_count", ctx([(_NEST_IN.tolist(), _NEST_OUT)])) == [(0,)]
    # the rarest colour outermost: not by count
    flipped = [[{1: 3, 3: 1}.get(v, v) for v in r] for r in _NEST_OUT]
    assert gen("nest_by_count", ctx([(_NEST_IN.tolist(), flipped)])) == []


def test_step_to_marker_generator() -> None:
    assert gen("step_to_marker", ctx([(_STEP_IN.tolist(), _STEP_OUT)])) == [(8, 0)]
    # moved away from the marker instead
    away = [[4, 4, 0, 0, 0], [4, 4, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0] * 5]
    assert gen("step_to_marker", ctx([(_STEP_IN.tolist(), away)])) == []


def test_dot_to_corner_generator() -> None:
    assert gen("dot_to_corner", ctx([(_DOTS_IN.tolist(), _DOTS_OUT)])) == [(0,)]
    assert gen("dot_to_corner", ctx([(_DOTS_IN.tolist(), _with(_DOTS_OUT, 0, 0, 0))])) == []


def test_reverse_path_generator() -> None:
    assert gen("reverse_path", ctx([(_PATH_IN.tolist(), _PATH_OUT)])) == [(0,)]
    # the ends swapped, the middle kept: not a reversal
    swapped = [[4, 2, 3, 0], [0, 0, 1, 0], [5, 0, 0, 0]]
    assert gen("reverse_path", ctx([(_PATH_IN.tolist(), swapped)])) == []


def test_roll_by_key_generator() -> None:
    assert gen("roll_by_key", ctx([(_ROLL_IN.tolist(), _ROLL_OUT)])) == [()]
    # the last two rows swapped: no roll
    assert gen("roll_by_key", ctx([(_ROLL_IN.tolist(), [[1, 2], [3, 4], [8, 0], [6, 7]])])) == []


def test_toggle_lines_generator() -> None:
    assert gen("toggle_lines", ctx([(_TOGGLE_IN.tolist(), _TOGGLE_OUT)])) == [(0,)]
    # the 1 (not below a marker) toggled too
    assert gen("toggle_lines", ctx([(_TOGGLE_IN.tolist(), _with(_TOGGLE_OUT, 1, 0, 0))])) == []
