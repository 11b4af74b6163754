"""DSL ops of :mod:`atlas_actors.arc.ops_cells`: primitives on hand-made grids, their
parameter generators on tiny hand-made tasks, and standalone Python for each."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import check_case
from test_arc_cells4 import NEW_OPS

from atlas_actors.arc import OPS
from atlas_actors.arc import ops_cells as oc
from atlas_actors.arc.infer import Ctx


def G(rows: list[list[int]]) -> np.ndarray[Any, Any]:
    return np.array(rows, dtype=np.int64)


# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # the 2 dot moves left to touch the 2 wall; the 5 dot has no 5 line and goes
    (
        ["snap_to_line", "x", 0, 0],
        G([[2, 0, 0, 0, 0], [2, 0, 0, 2, 0], [2, 0, 5, 0, 0]]),
        [[2, 0, 0, 0, 0], [2, 2, 0, 0, 0], [2, 0, 0, 0, 0]],
    ),
    (
        ["snap_to_line", "x", 1, 0],
        G([[2, 0, 0, 0, 0], [2, 0, 0, 2, 0], [2, 0, 5, 0, 0]]),
        [[2, 0, 0, 0, 0], [2, 2, 0, 0, 0], [2, 0, 5, 0, 0]],
    ),
    # each 5 takes the colour of the nearest other colour in its row
    (
        ["recolor_nearest", "x", 5, "row", 0],
        G([[1, 0, 5, 5, 3], [2, 5, 0, 0, 0]]),
        [[1, 0, 1, 3, 3], [2, 2, 0, 0, 0]],
    ),
    # the 5 block takes the colour of the cell above one of its columns
    (
        ["recolor_nearest", "x", 5, "ocol", 0],
        G([[0, 4, 0, 7], [0, 0, 0, 0], [5, 5, 0, 0]]),
        [[0, 4, 0, 7], [0, 0, 0, 0], [4, 4, 0, 0]],
    ),
    (
        ["recolor_nearest", "x", 5, "any", 0],
        G([[6, 0, 0, 0], [0, 0, 0, 5], [0, 0, 0, 8]]),
        [[6, 0, 0, 0], [0, 0, 0, 8], [0, 0, 0, 8]],
    ),
    (
        ["bounce", "x", 0],
        G([[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0]]),
        [[0, 1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]],
    ),
    # gaps of one cell between equal colours get 2; the wider gap stays open
    (
        ["fill_gaps", "x", -1, 2, "h", 1, 0],
        G([[1, 0, 1, 0, 0, 1], [3, 0, 3, 0, 4, 0]]),
        [[1, 2, 1, 0, 0, 1], [3, 2, 3, 0, 4, 0]],
    ),
    (
        ["fill_gaps", "x", 3, -1, "v", 5, 0],
        G([[3, 1], [0, 0], [3, 1]]),
        [[3, 1], [3, 0], [3, 1]],
    ),
    # greedy 2x2 windows of 0 in reading order, never overlapping
    (
        ["fill_squares", "x", 2, 2, 0, 4],
        G([[0, 0, 0, 5], [0, 0, 0, 5], [5, 0, 0, 5]]),
        [[4, 4, 0, 5], [4, 4, 0, 5], [5, 0, 0, 5]],
    ),
    (
        ["stride_recolor", "x", 4, 6, "cols", 3, 0],
        G([[4, 4, 4, 4, 4], [0, 4, 0, 4, 0]]),
        [[6, 4, 4, 6, 4], [0, 4, 0, 6, 0]],
    ),
    (
        ["stride_recolor", "x", 5, 3, "cols", 2, 1],
        G([[5, 5, 5, 5]]),
        [[5, 3, 5, 3]],
    ),
    (
        ["denoise", "x", "iso8", 0],
        G([[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2]]),
        [[0, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2]],
    ),
    (
        ["denoise", "x", "iso4", 0],
        G([[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2]]),
        [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    ),
    (
        ["denoise", "x", "sq2", 0],
        G([[3, 3, 0, 3], [3, 3, 3, 0], [0, 0, 0, 0]]),
        [[3, 3, 0, 0], [3, 3, 0, 0], [0, 0, 0, 0]],
    ),
    # tallest bar -> 1, shortest -> 2, the rest erased
    (
        ["recolor_extremes", "x", "height", 1, 2, 0, 0],
        G([[5, 0, 0, 0, 0], [5, 0, 5, 0, 0], [5, 0, 5, 0, 5]]),
        [[1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 2]],
    ),
    # objects of size 2 -> 3, others -> 1
    (
        ["recolor_if", "x", "size", [2], 3, 1, 8, 0],
        G([[5, 5, 0, 5], [0, 0, 0, 5], [5, 0, 0, 5]]),
        [[3, 3, 0, 1], [0, 0, 0, 1], [1, 0, 0, 1]],
    ),
    (
        ["move_by_size", "x", "up", 0],
        G([[0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0], [1, 0, 2]]),
        [[0, 0, 0], [1, 0, 0], [1, 0, 0], [0, 0, 2], [0, 0, 0]],
    ),
    (
        ["recolor_except", "x", 2, 5],
        G([[2, 1, 8], [2, 2, 0]]),
        [[2, 5, 5], [2, 2, 5]],
    ),
    (
        ["fill_empty_lines", "x", 0, 2, "full"],
        G([[1, 0, 1], [0, 0, 0], [1, 0, 0]]),
        [[1, 2, 1], [2, 2, 2], [1, 2, 0]],
    ),
    (
        ["fill_empty_lines", "x", 0, 3, "inner"],
        G([[8, 8, 8, 8], [8, 0, 0, 2], [8, 0, 2, 2]]),
        [[8, 8, 8, 8], [8, 3, 3, 2], [8, 0, 2, 2]],
    ),
    # the 4 . 4 pair and the lone 8 are completed to copies of the 4 8 4 template
    (
        ["complete_templates", "x", 0],
        G([[4, 8, 4, 0, 0], [0, 0, 0, 0, 0], [4, 0, 4, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 8, 0]]),
        [[4, 8, 4, 0, 0], [0, 0, 0, 0, 0], [4, 8, 4, 0, 0], [0, 0, 0, 0, 0], [0, 0, 4, 8, 4]],
    ),
    (
        ["hollow", "x", 0],
        G([[3, 3, 3, 0], [3, 3, 3, 0], [3, 3, 3, 0]]),
        [[3, 3, 3, 0], [3, 0, 3, 0], [3, 3, 3, 0]],
    ),
    # columns drawn over rows, or rows over columns
    (
        ["connect_layered", "x", "v", 0],
        G([[0, 2, 0], [3, 0, 3], [0, 2, 0]]),
        [[0, 2, 0], [3, 2, 3], [0, 2, 0]],
    ),
    (
        ["connect_layered", "x", "h", 0],
        G([[0, 2, 0], [3, 0, 3], [0, 2, 0]]),
        [[0, 2, 0], [3, 3, 3], [0, 2, 0]],
    ),
    (
        ["ring_colors", "x", "rev"],
        G([[1, 1, 1], [1, 2, 1], [1, 1, 1]]),
        [[2, 2, 2], [2, 1, 2], [2, 2, 2]],
    ),
    # colours from the outside in: 8 0 5 -> each takes the one before (5 8 0)
    (
        ["ring_colors", "x", "out"],
        G([[8, 8, 8, 8, 8], [8, 0, 0, 0, 8], [8, 0, 5, 0, 8], [8, 0, 0, 0, 8], [8, 8, 8, 8, 8]]),
        [[5, 5, 5, 5, 5], [5, 8, 8, 8, 5], [5, 8, 0, 8, 5], [5, 8, 8, 8, 5], [5, 5, 5, 5, 5]],
    ),
    (
        ["ring_colors", "x", "in"],
        G([[8, 8, 8], [8, 0, 8], [8, 8, 8]]),
        [[0, 0, 0], [0, 8, 0], [0, 0, 0]],
    ),
    # the diagonal tail of the square is continued to the edge
    (
        ["extend_ends", "x", 0],
        G([[3, 3, 0, 0], [3, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 0]]),
        [[3, 3, 0, 0], [3, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 3]],
    ),
    # from the 8 down its column to the 2's row, then across to the 2
    (
        ["connect_l", "x", 8, 2, "v", 4, 0],
        G([[8, 0, 0], [0, 0, 0], [0, 0, 2]]),
        [[8, 0, 0], [4, 0, 0], [4, 4, 2]],
    ),
    (
        ["connect_l", "x", 8, 2, "h", 4, 0],
        G([[8, 0, 0], [0, 0, 0], [0, 0, 2]]),
        [[8, 4, 4], [0, 0, 4], [0, 0, 2]],
    ),
    # the square hole is filled, the L-shaped one is not
    (
        ["fill_holes", "x", "square", 2, 0],
        G(
            [
                [5, 5, 5, 5, 5, 5, 5],
                [5, 0, 5, 0, 0, 5, 0],
                [5, 5, 5, 0, 5, 5, 0],
                [0, 0, 5, 5, 5, 0, 0],
            ]
        ),
        [
            [5, 5, 5, 5, 5, 5, 5],
            [5, 2, 5, 0, 0, 5, 0],
            [5, 5, 5, 0, 5, 5, 0],
            [0, 0, 5, 5, 5, 0, 0],
        ],
    ),
    (
        ["fill_holes", "x", "even", 2, 0],
        G([[1, 1, 1, 1, 1, 1, 1], [1, 0, 0, 1, 0, 1, 0], [1, 1, 1, 1, 1, 1, 0]]),
        [[1, 1, 1, 1, 1, 1, 1], [1, 2, 2, 1, 0, 1, 0], [1, 1, 1, 1, 1, 1, 0]],
    ),
    # only the domino gets an outline
    (
        ["halo_if", "x", "size", [2], 3, 0],
        G([[0, 0, 0, 0, 0], [0, 2, 2, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 2]]),
        [[3, 3, 3, 3, 0], [3, 2, 2, 3, 0], [3, 3, 3, 3, 0], [0, 0, 0, 0, 2]],
    ),
    # the 6 marks the block cell it faces; the 9 faces nothing
    (
        ["mark_contact", "x", 0],
        G([[0, 0, 0, 0], [6, 0, 8, 8], [0, 0, 8, 8], [9, 0, 0, 0]]),
        [[0, 0, 0, 0], [6, 0, 6, 8], [0, 0, 8, 8], [9, 0, 0, 0]],
    ),
    (
        ["swap_other", "x", 5, -1],
        G([[4, 5], [5, 5]]),
        [[5, 4], [4, 4]],
    ),
    # the L's empty bounding-box corner shoots a ray outward
    (
        ["corner_rays", "x", "empty", "own", 0],
        G([[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]]),
        [[0, 0, 0, 1], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]],
    ),
    # the 5 container shoots rays of its content's colour (2) from its corners
    (
        ["corner_rays", "x", "full", "inside", 0],
        G([[0, 0, 0, 0], [0, 5, 2, 0], [0, 5, 5, 0], [0, 0, 0, 0]]),
        [[2, 0, 0, 2], [0, 5, 2, 0], [0, 5, 5, 0], [2, 0, 0, 2]],
    ),
    (
        ["obj_diag_ray", "x", 3, "ul", 0],
        G([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 3, 3], [0, 0, 3, 3]]),
        [[3, 0, 0, 0], [0, 3, 0, 0], [0, 0, 3, 3], [0, 0, 3, 3]],
    ),
    # 3 x 3 cells cut by 5 lines: the two 2 cells of the middle row are joined
    (
        ["cell_connect", "x", 0],
        G([[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [2, 5, 0, 5, 2], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]]),
        [[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [2, 5, 2, 5, 2], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]],
    ),
    (
        ["dashed_rays", "x", "right", 5, 0],
        G([[3, 0, 0, 0, 0]]),
        [[3, 5, 3, 5, 3]],
    ),
    (
        ["center_lines", "x", 6, "hv", 0],
        G([[0, 0, 0, 0, 0], [0, 1, 1, 1, 0], [0, 1, 0, 1, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 0]]),
        [[0, 0, 6, 0, 0], [0, 1, 1, 1, 0], [6, 1, 6, 1, 6], [0, 1, 1, 1, 0], [0, 0, 6, 0, 0]],
    ),
    (
        ["fill_corners", "x", 2, 0],
        G([[4, 0, 0, 4], [0, 0, 0, 0], [4, 0, 0, 4], [0, 3, 0, 0]]),
        [[4, 0, 0, 4], [0, 2, 2, 0], [4, 0, 0, 4], [0, 3, 0, 0]],
    ),
    # two cells cut by a 5 column: the empty one gets the other's pattern
    (
        ["cell_broadcast", "x", 0],
        G([[1, 0, 5, 0, 0], [0, 2, 5, 0, 0]]),
        [[1, 0, 5, 1, 0], [0, 2, 5, 0, 2]],
    ),
    # colours repeat along anti-diagonals with period 3
    (
        ["diag_period_fill", "x", 0],
        G([[1, 0, 0], [2, 0, 0], [3, 0, 0]]),
        [[1, 2, 3], [2, 3, 1], [3, 1, 2]],
    ),
    # the cell with the most cells (the right one) is filled, the left one cleared
    (
        ["cell_max_fill", "x", 0],
        G([[1, 0, 5, 2, 2], [0, 0, 5, 0, 2]]),
        [[0, 0, 5, 2, 2], [0, 0, 5, 2, 2]],
    ),
    # single cells move to the 5 wall and turn 5; two in one column pile up
    (
        ["snap_to_wall", "x", 0],
        G([[3, 0, 0, 0], [0, 0, 0, 0], [5, 5, 5, 5], [0, 0, 0, 0], [0, 0, 0, 4]]),
        [[0, 0, 0, 0], [5, 0, 0, 0], [5, 5, 5, 5], [0, 0, 0, 5], [0, 0, 0, 0]],
    ),
    (
        ["snap_to_wall", "x", 0],
        G([[3, 0], [2, 0], [0, 0], [5, 5]]),
        [[0, 0], [5, 0], [5, 0], [5, 5]],
    ),
    # the lone 4 cell is the palette: the 2 shape turns 4 and the 4 cell goes
    (
        ["recolor_by_dot", "x", 0],
        G([[2, 2, 0, 0], [0, 2, 0, 0], [0, 0, 0, 4]]),
        [[4, 4, 0, 0], [0, 4, 0, 0], [0, 0, 0, 0]],
    ),
    # the 2 bar in the 5 frame is the template: the matching 1 bar turns 2
    (
        ["recolor_matching", "x", "inner", 1, 0],
        G([[5, 5, 5, 5, 0], [5, 2, 2, 5, 0], [5, 5, 5, 5, 0], [0, 0, 0, 0, 0], [1, 1, 0, 1, 0]]),
        [[5, 5, 5, 5, 0], [5, 2, 2, 5, 0], [5, 5, 5, 5, 0], [0, 0, 0, 0, 0], [2, 2, 0, 1, 0]],
    ),
    (
        ["recolor_matching", "x", "frame", 0, 0],
        G([[5, 5, 5, 5, 0], [5, 2, 2, 5, 0], [5, 5, 5, 5, 0], [0, 0, 0, 0, 0], [1, 1, 0, 1, 0]]),
        [[5, 5, 5, 5, 0], [5, 2, 2, 5, 0], [5, 5, 5, 5, 0], [0, 0, 0, 0, 0], [5, 5, 0, 1, 0]],
    ),
    # the 2/3 seeds flood their corridor (walled by 8) as a checkerboard
    (
        ["flood_alternate", "x", 0],
        G([[8, 8, 8, 8, 8], [2, 3, 0, 0, 8], [8, 8, 8, 8, 8], [0, 0, 0, 0, 8]]),
        [[8, 8, 8, 8, 8], [2, 3, 2, 3, 8], [8, 8, 8, 8, 8], [0, 0, 0, 0, 8]],
    ),
    # the 5 row is the wall: 2 cells reach it, 1 cells run away from it
    (
        ["wall_rays", "x", 2, 1, 0],
        G([[2, 1], [0, 0], [5, 5], [0, 0], [0, 2]]),
        [[2, 1], [2, 0], [5, 5], [0, 2], [0, 2]],
    ),
    (
        ["wall_rays", "x", 1, 0, 0],
        G([[0, 0, 5, 1, 0], [0, 0, 5, 0, 0]]),
        [[0, 0, 5, 1, 1], [0, 0, 5, 0, 0]],
    ),
    # each object gets its four outer diagonal corners marked
    (
        ["corner_marks", "x", "dot", "fixed", [1, 2, 3, 4], 0],
        G([[0, 0, 0, 0], [0, 5, 5, 0], [0, 0, 0, 0]]),
        [[1, 0, 0, 2], [0, 5, 5, 0], [3, 0, 0, 4]],
    ),
    (
        ["corner_marks", "x", "same", "opp", [0], 0],
        G([[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0], [0, 0, 0, 0]]),
        [[4, 0, 0, 3], [0, 1, 2, 0], [0, 3, 4, 0], [2, 0, 0, 1]],
    ),
    # a plus of 3 halfway between the two 1s in a row
    (
        ["midpoint_mark", "x", "plus", 3, 0],
        G([[0, 0, 0, 0, 0], [1, 0, 0, 0, 1], [0, 0, 0, 0, 0]]),
        [[0, 0, 3, 0, 0], [1, 3, 3, 3, 1], [0, 0, 3, 0, 0]],
    ),
    # the 2 block and the 7 block face each other: a band of 8, one cell in from each side
    (
        ["bridge", "x", 8, 1, 0],
        G([[2, 2, 2, 0], [0, 0, 0, 0], [0, 0, 0, 0], [7, 7, 7, 7]]),
        [[2, 2, 2, 0], [0, 8, 0, 0], [0, 8, 0, 0], [7, 7, 7, 7]],
    ),
    # the 3 row band lies on top of the 8 column band: the 8 band goes on top
    (
        ["cross_swap", "x", 0],
        G([[0, 8, 0], [3, 3, 3], [0, 8, 0]]),
        [[0, 8, 0], [3, 8, 3], [0, 8, 0]],
    ),
    # 1 and 2 grow toward each other and meet at a 5
    (
        ["meet_middle", "x", 5, "h", 0],
        G([[1, 0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0, 0]]),
        [[1, 1, 1, 5, 2, 2, 2], [0, 0, 0, 0, 0, 0, 0]],
    ),
    # the lower half of each bar turns 8; the odd middle cell stays
    (
        ["half_recolor", "x", "down", 8, 0],
        G([[2, 0, 0], [2, 0, 2], [2, 0, 2], [2, 0, 2]]),
        [[2, 0, 0], [2, 0, 2], [8, 0, 2], [8, 0, 8]],
    ),
    # an outline of the object's colour one cell inside the four markers
    (
        ["frame_in_markers", "x", -1, 0],
        G(
            [
                [0, 0, 5, 0, 0, 0],
                [0, 0, 0, 0, 0, 0],
                [5, 0, 0, 0, 0, 5],
                [0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 0],
                [0, 0, 5, 0, 3, 3],
            ]
        ),
        [
            [0, 0, 5, 0, 0, 0],
            [0, 3, 3, 3, 3, 0],
            [5, 3, 0, 0, 3, 5],
            [0, 3, 0, 0, 3, 0],
            [0, 3, 3, 3, 3, 0],
            [0, 0, 5, 0, 3, 3],
        ],
    ),
    # the box stretches down to the 8 marker, its middle row repeating
    (
        ["stretch_to_dot", "x", 0],
        G([[1, 1, 1], [1, 6, 1], [1, 1, 1], [0, 0, 0], [0, 8, 0]]),
        [[1, 1, 1], [1, 6, 1], [1, 6, 1], [1, 6, 1], [1, 1, 1]],
    ),
    # the 3 steps diagonally toward the 4
    (
        ["step_toward", "x", 3, 4, 0],
        G([[3, 0, 0], [0, 0, 0], [0, 0, 4]]),
        [[0, 0, 0], [0, 3, 0], [0, 0, 4]],
    ),
    (
        ["keep_center_line", "x", "v", 0],
        G([[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
        [[0, 2, 0], [0, 5, 0], [0, 8, 0]],
    ),
    # every second cell of the diagonal line turns 4
    (
        ["alternate_cells", "x", 10, 4, 0],
        G([[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2]]),
        [[2, 0, 0, 0], [0, 4, 0, 0], [0, 0, 2, 0], [0, 0, 0, 4]],
    ),
    # the 3 touching a 2 turns 8 and the 2 goes; the lone 3 stays
    (
        ["merge_touching", "x", 3, 2, 8, 0],
        G([[3, 2, 0], [0, 0, 0], [3, 0, 2]]),
        [[8, 0, 0], [0, 0, 0], [3, 0, 2]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_every_cells_op_has_a_case_and_a_generator() -> None:
    names = {n for n, _, _ in oc.OP_TABLE}
    assert names <= set(OPS)
    assert names - NEW_OPS - {c[0][0] for c in CASES} == set()  # NEW_OPS: in test_arc_cells4
    assert names <= set(oc.GENERATORS)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        oc.snap_to_line(G([[1, 0, 2]]), 0, 0)  # no lines
    with pytest.raises(ValueError):
        oc.swap_other(G([[1, 2, 3]]), 1, -1)  # two other colours
    with pytest.raises(ValueError):
        oc.move_by_size(G([[1, 0]]), "up", 0)  # leaves the grid
    with pytest.raises(ValueError):
        oc.recolor_extremes(G([[1, 0, 1]]), "size", 1, 2, 0, 0)  # no extremes
    with pytest.raises(ValueError):
        oc.fill_corners(G([[4, 0, 4], [0, 0, 0]]), 2, 0)  # no rectangle
    with pytest.raises(ValueError):
        oc.cell_broadcast(G([[1, 5, 2]]), 0)  # two different patterns
    with pytest.raises(ValueError):
        oc.obj_diag_ray(G([[1, 0]]), 3, "ul", 0)  # colour absent
    with pytest.raises(ValueError):
        oc.snap_to_wall(G([[3, 0], [3, 0], [5, 5]]), 0)  # no single cells
    with pytest.raises(ValueError):
        oc.recolor_matching(G([[1, 0, 2, 0, 3]]), "inner", 0, 0)  # no container
    with pytest.raises(ValueError):
        oc.wall_rays(G([[5, 5], [5, 5]]), 2, 1, 0)  # two walls
    with pytest.raises(ValueError):
        oc.recolor_by_dot(G([[2, 0, 4], [0, 0, 0], [3, 0, 0]]), 0)  # three lone cells


# ---------------------------------------------------------------- generators


def ctx(pairs: list[tuple[list[list[int]], list[list[int]]]], bg: int = 0) -> Ctx:
    states = [G(a) for a, _ in pairs]
    return Ctx(states, [G(b) for _, b in pairs], bg)


def gen(op: str, c: Ctx) -> list[Any]:
    return list(oc.GENERATORS[op](c))


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[1, 0, 1, 0, 0, 1]], [[1, 2, 1, 0, 0, 1]])])
    assert (-1, 2, "h", 1, 0) in gen("fill_gaps", c)

    c = ctx([([[0, 0, 5], [0, 0, 5]], [[4, 4, 5], [4, 4, 5]])], bg=5)
    assert gen("fill_squares", c)[0] == (2, 2, 0, 4)

    c = ctx([([[4, 4, 4, 4]], [[6, 4, 4, 6]])])
    assert gen("stride_recolor", c)[0] == (4, 6, "cols", 3, 0)

    a = [[5, 0, 5, 0, 5], [5, 0, 5, 0, 0], [5, 0, 0, 0, 0]]
    c = ctx([(a, [[1, 0, 0, 0, 2], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]])])
    assert gen("recolor_extremes", c)[0] == ("size", 1, 2, 0, 0)

    c = ctx(
        [([[5, 5, 0, 5], [0, 0, 0, 0], [5, 0, 0, 0]], [[3, 3, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]])]
    )
    assert ("size", [2], 3, 1, 8, 0) in gen("recolor_if", c)

    c = ctx([([[4, 5], [5, 5]], [[0, 4], [4, 4]]), ([[6, 6], [6, 5]], [[0, 0], [0, 6]])])
    assert gen("swap_other", c) == [(5, -1)]

    c = ctx([([[2, 1], [8, 2]], [[2, 5], [5, 2]]), ([[3, 3, 1]], [[3, 3, 5]])])
    assert (13, 5) in gen("recolor_except", c)

    c = ctx([([[1, 0], [0, 0]], [[1, 2], [2, 2]])])
    assert gen("fill_empty_lines", c) == [(0, 2, "full")]

    c = ctx([([[0, 5, 0], [1, 0, 0]], [[0, 1, 0], [1, 0, 0]])])
    assert (5, "col", 0) in gen("recolor_nearest", c)

    c = ctx([([[0, 0], [1, 0]], [[0, 1], [1, 0]])])
    assert gen("bounce", c) == [(0,)]

    c = ctx([([[8, 0, 0], [0, 0, 2]], [[8, 0, 0], [4, 4, 2]])])
    assert (8, 2, "v", 4, 0) in gen("connect_l", c)

    a = [[0, 0, 0, 0, 0], [0, 2, 2, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 2]]
    c = ctx([(a, [[3, 3, 3, 3, 0], [3, 2, 2, 3, 0], [3, 3, 3, 3, 0], [0, 0, 0, 0, 2]])])
    assert gen("halo_if", c) == [("size", [2], 3, 0)]
    assert gen("fill_holes", c) == []  # the outline is not in a hole
    c = ctx([([[5, 5, 5], [5, 0, 5], [5, 5, 5]], [[5, 5, 5], [5, 2, 5], [5, 5, 5]])])
    assert ("square", 2, 0) in gen("fill_holes", c)

    c = ctx([([[1, 1], [1, 2]], [[2, 2], [2, 1]])])
    assert gen("ring_colors", c) == [("rev",), ("out",), ("in",)]

    c = ctx([([[3, 3, 3], [3, 3, 3], [3, 3, 3]], [[3, 3, 3], [3, 0, 3], [3, 3, 3]])])
    assert gen("hollow", c) == [(0,)]


def test_generators_stay_quiet_when_the_pairs_do_not_fit() -> None:
    grow = ctx([([[1, 0, 1]], [[1, 2, 1]])])
    same = ctx([([[1, 0, 1]], [[1, 0, 1]])])
    assert gen("denoise", grow) == []
    assert gen("move_by_size", grow) == []
    assert gen("snap_to_line", grow) == []
    assert gen("denoise", same) == []
    assert gen("swap_other", grow) == []
    shape = Ctx([G([[1, 0]])], [G([[1]])], 0)
    for op in oc.GENERATORS:
        assert gen(op, shape) == [], op


def test_ray_and_lattice_generators() -> None:
    a = [[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]]
    c = ctx([(a, [[0, 0, 0, 1], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]])])
    assert gen("corner_rays", c) == [("empty", "own", 0)]
    assert (1, "ur", 0) in gen("obj_diag_ray", c)
    assert (1, "dl", 0) not in gen("obj_diag_ray", c)

    a = [[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [2, 5, 0, 5, 2], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]]
    b = [[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [2, 5, 2, 5, 2], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]]
    assert gen("cell_connect", ctx([(a, b)])) == [(0,)]

    c = ctx([([[3, 0, 0, 0, 0]], [[3, 5, 3, 5, 3]])])
    assert gen("dashed_rays", c) == [("right", 5, 0)]

    a = [[0, 0, 0], [0, 1, 0], [0, 0, 0]]
    c = ctx([(a, [[0, 6, 0], [6, 1, 6], [0, 6, 0]])])
    assert gen("center_lines", c)[0] == (6, "hv", 0)
    c = ctx([([[4, 0, 4], [0, 0, 0], [4, 0, 4]], [[4, 0, 4], [0, 2, 0], [4, 0, 4]])])
    assert gen("fill_corners", c) == [(2, 0)]
    c = ctx([([[1, 0, 5, 0, 0], [0, 2, 5, 0, 0]], [[1, 0, 5, 1, 0], [0, 2, 5, 0, 2]])])
    assert gen("cell_broadcast", c) == [(0,)]

    c = ctx([([[1, 0, 0], [2, 0, 0], [3, 0, 0]], [[1, 2, 3], [2, 3, 1], [3, 1, 2]])])
    assert gen("diag_period_fill", c) == [(0,)]

    c = ctx([([[1, 0, 5, 2, 2], [0, 0, 5, 0, 2]], [[0, 0, 5, 2, 2], [0, 0, 5, 2, 2]])])
    assert gen("cell_max_fill", c) == [(0,)]
    c = ctx([([[3, 0], [0, 0], [5, 5]], [[0, 0], [5, 0], [5, 5]])])
    assert gen("snap_to_wall", c) == [(0,)]
    assert gen("snap_to_wall", ctx([([[3, 0], [5, 5]], [[3, 3], [5, 5]])])) == []

    c = ctx([([[2, 2, 0, 0], [0, 0, 0, 4]], [[4, 4, 0, 0], [0, 0, 0, 0]])])
    assert gen("recolor_by_dot", c) == [(0,)]

    a = [[5, 5, 5, 0], [5, 2, 5, 0], [5, 5, 5, 0], [0, 0, 0, 1]]
    c = ctx([(a, [[5, 5, 5, 0], [5, 2, 5, 0], [5, 5, 5, 0], [0, 0, 0, 2]])])
    assert ("inner", 1, 0) in gen("recolor_matching", c)
    assert gen("recolor_matching", ctx([([[1, 0]], [[1, 2]])])) == []

    a = [[8, 8, 8, 8], [2, 3, 0, 0], [8, 8, 8, 8]]
    c = ctx([(a, [[8, 8, 8, 8], [2, 3, 2, 3], [8, 8, 8, 8]])])
    assert gen("flood_alternate", c) == [(0,)]

    c = ctx([([[2, 1], [0, 0], [5, 5], [0, 1]], [[2, 1], [2, 0], [5, 5], [0, 1]])])
    assert gen("wall_rays", c) == [(2, 1, 0)]

    recolour = ctx([([[1, 0]], [[2, 0]])])
    new_ops = ("corner_rays", "obj_diag_ray", "cell_connect", "dashed_rays", "center_lines")
    more = ("fill_corners", "cell_broadcast", "diag_period_fill", "recolor_by_dot")
    for op in (*new_ops, *more, "flood_alternate", "wall_rays"):
        assert gen(op, recolour) == [], op


def test_corner_marks_generator() -> None:
    c = ctx(
        [([[0, 0, 0, 0], [0, 5, 5, 0], [0, 0, 0, 0]], [[1, 0, 0, 2], [0, 5, 5, 0], [3, 0, 0, 4]])]
    )
    assert ("dot", "fixed", [1, 2, 3, 4], 0) in gen("corner_marks", c)
    c = ctx(
        [([[0, 0, 0, 0], [0, 5, 5, 0], [0, 0, 0, 0]], [[0, 0, 0, 0], [0, 5, 5, 0], [0, 0, 0, 1]])]
    )
    assert gen("corner_marks", c) == []


def test_midpoint_mark_generator() -> None:
    c = ctx([([[1, 0, 0, 0, 1]], [[1, 0, 4, 0, 1]])])
    assert gen("midpoint_mark", c) == [("dot", 4, 0)]
    c = ctx([([[1, 0, 0, 0, 1]], [[1, 4, 0, 0, 1]])])
    assert gen("midpoint_mark", c) == []


def test_bridge_generator() -> None:
    c = ctx([([[2, 0, 0, 3], [2, 0, 0, 3]], [[2, 5, 5, 3], [2, 5, 5, 3]])])
    assert gen("bridge", c) == [(5, 0, 0)]
    c = ctx([([[2, 0, 0, 3], [2, 0, 0, 3]], [[2, 5, 0, 3], [2, 0, 0, 3]])])
    assert gen("bridge", c) == []


def test_cross_swap_generator() -> None:
    c = ctx([([[0, 8, 0], [3, 3, 3], [0, 8, 0]], [[0, 8, 0], [3, 8, 3], [0, 8, 0]])])
    assert gen("cross_swap", c) == [(0,)]
    c = ctx([([[0, 8, 0], [3, 3, 3], [0, 8, 0]], [[0, 8, 0], [3, 3, 3], [0, 8, 8]])])
    assert gen("cross_swap", c) == []


def test_meet_middle_generator() -> None:
    c = ctx([([[3], [0], [0], [0], [4]], [[3], [3], [5], [4], [4]])])
    assert gen("meet_middle", c) == [(5, "v", 0)]
    c = ctx([([[3], [0], [0], [0], [4]], [[3], [3], [5], [5], [4]])])
    assert gen("meet_middle", c) == []


def test_half_recolor_generator() -> None:
    c = ctx([([[2, 2, 2, 2], [0, 0, 0, 0]], [[8, 8, 2, 2], [0, 0, 0, 0]])])
    assert gen("half_recolor", c) == [("left", 8, 0)]
    c = ctx([([[2, 2, 2, 2], [0, 0, 0, 0]], [[8, 2, 2, 2], [0, 0, 0, 0]])])
    assert gen("half_recolor", c) == []


def test_frame_and_stretch_generators() -> None:
    c = ctx([([[0, 0, 0, 0, 2]], [[0, 0, 0, 0, 2]])])
    assert gen("frame_in_markers", c) == []
    a = [[1, 1, 0, 8], [1, 1, 0, 0]]
    c = ctx([(a, [[1, 1, 1, 8], [1, 1, 1, 0]])])
    assert gen("stretch_to_dot", c) == []
    c = ctx([([[1, 2, 0, 0, 8]], [[1, 1, 1, 1, 2]])])
    assert gen("stretch_to_dot", c) == [(0,)]


def test_step_and_center_generators() -> None:
    c = ctx([([[3, 0, 0, 4]], [[0, 3, 0, 4]])])
    assert gen("step_toward", c) == [(3, 4, 0)]
    c = ctx([([[3, 0, 0, 4]], [[0, 0, 3, 4]])])
    assert gen("step_toward", c) == []
    c = ctx([([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[0, 0, 0], [4, 5, 6], [0, 0, 0]])])
    assert gen("keep_center_line", c) == [("h", 0)]
    c = ctx([([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[0, 0, 0], [4, 5, 0], [0, 0, 0]])])
    assert gen("keep_center_line", c) == []


def test_alternate_and_merge_generators() -> None:
    c = ctx([([[2, 2, 2, 0, 0, 0]], [[2, 4, 2, 0, 0, 0]]), ([[0, 9, 9, 0, 0]], [[0, 9, 4, 0, 0]])])
    assert gen("alternate_cells", c) == [(10, 4, 0)]
    c = ctx([([[2, 2, 2]], [[4, 2, 2]])])
    assert gen("alternate_cells", c) == []
    c = ctx([([[3, 2, 0, 3]], [[8, 0, 0, 3]])])
    assert gen("merge_touching", c) == [(3, 2, 8, 0)]
    c = ctx([([[3, 2, 0, 3]], [[8, 0, 0, 8]])])
    assert gen("merge_touching", c) == []
