"""DSL ops added to :mod:`atlas_actors.arc.ops_cells` in round 4: primitives on
hand-made grids (compiled and as standalone Python) and their parameter generators on
tiny hand-made tasks (they fire with the right parameters, and stay quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import check_case

from atlas_actors.arc import OPS
from atlas_actors.arc import ops_cells as oc
from atlas_actors.arc.infer import Ctx


def G(rows: list[list[int]]) -> np.ndarray[Any, Any]:
    return np.array(rows, dtype=np.int64)


NEW_OPS = {
    "recolor_in_box",
    "pointer_ray",
    "symmetrize_mark",
    "fill_largest_rect",
    "complete_lines",
    "cell_expand",
    "cell_template_mark",
    "diag_bounce",
    "cell_key_place",
    "mirror_marker",
    "checker_interior",
    "border_marks",
    "mark_crossings",
    "stamp_markers",
    "role_stamp",
    "anchor_copy",
    "fit_templates",
    "repeat_toward",
    "cell_fit_templates",
    "pieces_into_holes",
    "spill_cups",
    "extend_rings",
}

_S5 = [5] * 7  # a separator row
_R0, _R1 = [5] * 9, [5, 0, 0, 0, 0, 0, 0, 0, 5]
_R2, _R3 = [5, 0, 5, 5, 5, 5, 5, 0, 5], [5, 0, 5, 0, 0, 0, 5, 0, 5]
_RINGS = [_R0, _R1, _R2, _R3, [5, 0, 5, 0, 5, 0, 5, 0, 5], _R3, _R2, _R1, _R0]

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # the 1s inside the box of the 8s (one gap allowed) become 3; the 1 outside stays
    (
        ["recolor_in_box", "x", 8, 1, 3, 2, 0],
        G([[8, 1, 8, 1], [1, 1, 0, 0], [0, 8, 0, 1]]),
        [[8, 3, 8, 1], [3, 3, 0, 0], [0, 8, 0, 1]],
    ),
    # without the gap the two 8 groups are boxed apart (one cell each): nothing changes
    (
        ["recolor_in_box", "x", 8, 1, 3, 1, 0],
        G([[8, 1, 8], [1, 1, 1]]),
        [[8, 1, 8], [1, 1, 1]],
    ),
    # -1: every colour but the box colour and the background
    (
        ["recolor_in_box", "x", 2, -1, 4, 2, 0],
        G([[2, 5, 7], [0, 6, 2], [5, 5, 5]]),
        [[2, 4, 4], [0, 4, 2], [5, 5, 5]],
    ),
    # the odd cell (1) of the 2 shape points through it: a ray of 1 leaves the far side
    (
        ["pointer_ray", "x", -1, "away", "line", "marker", 0],
        G([[0, 2, 0, 0, 0], [1, 2, 2, 0, 0], [0, 2, 0, 0, 0]]),
        [[0, 2, 0, 0, 0], [1, 2, 2, 1, 1], [0, 2, 0, 0, 0]],
    ),
    # the 2 corner of the block points up-right: the block sweeps that way in its colour
    (
        ["pointer_ray", "x", 2, "toward", "sweep", "main", 0],
        G([[0, 0, 0, 0], [0, 0, 0, 0], [4, 2, 0, 0], [4, 4, 0, 0]]),
        [[0, 0, 4, 4], [0, 4, 4, 4], [4, 4, 4, 0], [4, 4, 0, 0]],
    ),
    # a line stops at another object
    (
        ["pointer_ray", "x", -1, "toward", "line", "marker", 0],
        G([[3, 3, 5, 0, 0, 7, 0]]),
        [[3, 3, 5, 5, 5, 7, 0]],
    ),
    # left-right mirror of the whole grid; the added cells are painted 2
    (
        ["symmetrize_mark", "x", "h", "grid", 2, 0],
        G([[1, 0, 0, 0], [1, 1, 0, 0]]),
        [[1, 0, 0, 2], [1, 1, 2, 2]],
    ),
    # fitted left-right mirror axis (column 2): the missing right cells copy their mirror
    (
        ["symmetrize_mark", "x", "h", "fit", -1, 0],
        G([[0, 5, 6, 5, 0, 0], [0, 5, 6, 0, 0, 0]]),
        [[0, 5, 6, 5, 0, 0], [0, 5, 6, 5, 0, 0]],
    ),
    # fitted quarter-turn centre: the shape's missing arm is painted 2
    (
        ["symmetrize_mark", "x", "rot", "fit", 2, 0],
        G([[0, 0, 1, 0], [0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]]),
        [[0, 0, 1, 0], [0, 1, 1, 1], [0, 0, 2, 0], [0, 0, 0, 0]],
    ),
    # the biggest all-0 rectangle at least 2 wide and 2 tall (a longer 1-row strip loses)
    (
        ["fill_largest_rect", "x", 0, 6, 2],
        G([[0, 0, 0, 0, 0], [1, 0, 0, 1, 1], [1, 0, 0, 1, 0]]),
        [[0, 6, 6, 0, 0], [1, 6, 6, 1, 1], [1, 6, 6, 1, 0]],
    ),
    (
        ["fill_largest_rect", "x", 0, 6, 1],
        G([[0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 1, 1, 1, 1], [1, 0, 0, 1, 0, 1, 1]]),
        [[6, 6, 6, 6, 6, 6, 6], [1, 0, 0, 1, 1, 1, 1], [1, 0, 0, 1, 0, 1, 1]],
    ),
    # the top row and both side columns are more than half filled: their gaps get 2;
    # the middle row (one cell of five) stays open
    (
        ["complete_lines", "x", 2, 2, 0],
        G([[1, 0, 1, 1, 1], [0, 0, 0, 0, 1], [1, 0, 1, 0, 0], [1, 0, 0, 0, 1]]),
        [[1, 2, 1, 1, 1], [2, 0, 0, 0, 1], [1, 0, 1, 0, 2], [1, 0, 0, 0, 1]],
    ),
    (
        ["complete_lines", "x", -1, 1, 0],
        G([[3, 3, 0, 3], [0, 0, 0, 0], [0, 0, 0, 0]]),
        [[3, 3, 0, 3], [0, 0, 0, 0], [0, 0, 0, 0]],
    ),
    # 2 x 2 cells of 2 x 2: the emptiest cell (top left) is blown up over the grid
    (
        ["cell_expand", "x", "min", 0],
        G(
            [
                [1, 0, 5, 1, 1],
                [0, 0, 5, 0, 1],
                [5, 5, 5, 5, 5],
                [2, 2, 5, 3, 3],
                [2, 0, 5, 3, 3],
            ]
        ),
        [[1, 1, 5, 0, 0], [1, 1, 5, 0, 0], [5, 5, 5, 5, 5], [0, 0, 5, 0, 0], [0, 0, 5, 0, 0]],
    ),
    # the fullest cell (left) is the template: the other cell gets its missing cells in
    # the separator colour (5)
    (
        ["cell_template_mark", "x", -1, 0],
        G([[1, 1, 5, 0, 1], [1, 0, 5, 0, 0]]),
        [[1, 1, 5, 5, 1], [1, 0, 5, 5, 0]],
    ),
    # the 8 segment continues up-right in 3, bounces off the 2 wall and goes up-left
    (
        ["diag_bounce", "x", 3, 0],
        G([[0, 0, 0, 2], [0, 0, 0, 2], [0, 0, 0, 2], [0, 8, 0, 2], [8, 0, 0, 2]]),
        [[3, 0, 0, 2], [0, 3, 0, 2], [0, 0, 3, 2], [0, 8, 0, 2], [8, 0, 0, 2]],
    ),
    # the cell holding the 4 (top left, the 4 at its bottom right) moves to the bottom
    # right cell; the rest is cleared
    (
        ["cell_key_place", "x", 4, 0],
        G(
            [
                [1, 0, 5, 0, 0],
                [0, 4, 5, 2, 0],
                [5, 5, 5, 5, 5],
                [3, 0, 5, 0, 0],
                [0, 0, 5, 0, 6],
            ]
        ),
        [[0, 0, 5, 0, 0], [0, 0, 5, 0, 0], [5, 5, 5, 5, 5], [0, 0, 5, 1, 0], [0, 0, 5, 0, 4]],
    ),
    # the 2 marker sits right of the 4 shape: the shape is mirrored across its right side
    (
        ["mirror_marker", "x", 0],
        G([[0, 4, 0, 0, 0], [4, 4, 2, 0, 0], [0, 4, 2, 0, 0]]),
        [[0, 4, 4, 0, 0], [4, 4, 4, 4, 0], [0, 4, 4, 0, 0]],
    ),
    # the interior of the 3 x 6 bar (the middle row but its ends) gets holes at even
    # offsets from the bar's corner
    (
        ["checker_interior", "x", 0, 0, 0],
        G([[4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4]]),
        [[4, 4, 4, 4, 4, 4], [4, 0, 4, 0, 4, 4], [4, 4, 4, 4, 4, 4]],
    ),
    (
        ["checker_interior", "x", 1, 2, 0],
        G([[4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4]]),
        [[4, 4, 4, 4, 4, 4], [4, 4, 2, 4, 2, 4], [4, 4, 4, 4, 4, 4]],
    ),
    # each cup drops a 4 onto the bottom row below its centre; the 2-wide bar has none
    (
        ["border_marks", "x", "down", 4, 0],
        G([[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [0, 0, 0, 0, 0, 0]]),
        [[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [0, 4, 0, 0, 0, 0]],
    ),
    # a full row of 2 crosses a full column of 3: a ring of 4 around the crossing
    (
        ["mark_crossings", "x", 4, 0],
        G([[0, 3, 0, 0], [2, 2, 2, 2], [0, 3, 0, 0], [0, 3, 0, 0]]),
        [[4, 4, 4, 0], [4, 2, 4, 2], [4, 4, 4, 0], [0, 3, 0, 0]],
    ),
    # fitted diagonal mirrors (both diagonals through the 1): the corner cells fill in
    (
        ["symmetrize_mark", "x", "diag", "fit", -1, 0],
        G([[0, 0, 0], [0, 1, 2], [0, 0, 3]]),
        [[3, 2, 0], [2, 1, 2], [0, 2, 3]],
    ),
    # the 1 x 3 template (left of the 5 separator) is stamped centred on each 1
    (
        ["stamp_markers", "x", 1, 0],
        G([[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 0, 1, 0], [0, 0, 0, 5, 0, 0, 1]]),
        [[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 2, 3, 4], [0, 0, 0, 5, 0, 2, 3]],
    ),
    # each object grows diagonal corners in its centre's colour and a cell two to the
    # right in its other colour (the colours differ per object; the lone 5 has none)
    (
        ["role_stamp", "x", [[16, 0], [32, 0], [26, 1]], 0],
        G(
            [
                [0, 0, 0, 0, 0, 0, 0],
                [0, 2, 7, 2, 0, 0, 0],
                [0, 0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 5, 0],
            ]
        ),
        [
            [0, 7, 0, 0, 0, 0, 0],
            [0, 2, 7, 2, 2, 0, 0],
            [0, 0, 0, 7, 0, 0, 0],
            [0, 0, 0, 0, 5, 0, 0],
            [0, 0, 0, 0, 0, 5, 0],
        ],
    ),
    # the 3-anchored template is copied onto the lone 3, anchors aligned
    (
        ["anchor_copy", "x", -1, 0],
        G([[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 3, 0], [0, 0, 0, 0, 0]]),
        [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 4, 3, 0], [0, 0, 4, 0, 0]],
    ),
    # mirrored left-right when the anchor colour is the flip colour
    (
        ["anchor_copy", "x", 3, 0],
        G([[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 3, 0], [0, 0, 0, 0, 0]]),
        [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 3, 4], [0, 0, 0, 0, 4]],
    ),
    # the lone 2 (found once in the template) gets a copy of the template
    (
        ["fit_templates", "x", "id", "copy", 0],
        G([[2, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0]]),
        [[2, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 2, 1], [0, 0, 0, 0, 1]],
    ),
    # scaled by 2, the template's 3 recoloured 4 like the marker's block
    (
        ["fit_templates", "x", "id", "copy", 0],
        G([[3, 3, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 4, 4, 1, 1], [0, 0, 4, 4, 1, 1]]),
        [[3, 3, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0], [4, 4, 4, 4, 1, 1], [4, 4, 4, 4, 1, 1]],
    ),
    # turned (half a turn) to fit the 6 5 marker, and moved there
    (
        ["fit_templates", "x", "d4", "move", 0],
        G([[5, 6, 0, 0, 0], [0, 7, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 6, 5], [0, 0, 0, 0, 0]]),
        [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 7, 0], [0, 0, 0, 6, 5], [0, 0, 0, 0, 0]],
    ),
    # without turns nothing fits
    (
        ["fit_templates", "x", "id", "move", 0],
        G([[5, 6, 0], [0, 7, 0], [0, 0, 0], [6, 5, 0]]),
        [[5, 6, 0], [0, 7, 0], [0, 0, 0], [6, 5, 0]],
    ),
    # the 1 block repeats toward the 3, in colour 3, every 3 columns to the edge
    (
        ["repeat_toward", "x", 0],
        G([[1, 1, 0, 3, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0, 0]]),
        [[1, 1, 0, 3, 3, 0, 3, 3, 0], [1, 1, 0, 3, 3, 0, 3, 3, 0]],
    ),
    # diagonal step
    (
        ["repeat_toward", "x", 0],
        G([[4, 4, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0]]),
        [[4, 4, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 2, 2], [0, 0, 0, 2, 0]],
    ),
    # in cell space (cells cut by 5 lines) the lone 2 cell gets the 2 1 template
    (
        ["cell_fit_templates", "x", "id", 0],
        G([[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 2, 5, 0]]),
        [[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 2, 5, 1]],
    ),
    # the lone 2 moves into the one-cell hole of the 5 ring
    (
        ["pieces_into_holes", "x", "id", 0],
        G([[5, 5, 5, 0, 0, 0], [5, 0, 5, 0, 2, 0], [5, 5, 5, 0, 0, 0]]),
        [[5, 5, 5, 0, 0, 0], [5, 2, 5, 0, 0, 0], [5, 5, 5, 0, 0, 0]],
    ),
    # two 1 x 2 pieces: the 7 has other objects (noise), so the 6 goes in
    (
        ["pieces_into_holes", "x", "id", 0],
        G([[5, 5, 5, 5, 0, 7], [5, 0, 0, 5, 0, 0], [5, 5, 5, 5, 0, 0], [7, 7, 0, 6, 6, 0]]),
        [[5, 5, 5, 5, 0, 7], [5, 6, 6, 5, 0, 0], [5, 5, 5, 5, 0, 0], [7, 7, 0, 0, 0, 0]],
    ),
    # turned: the upright 1 x 2 piece fills the flat 1 x 2 hole
    (
        ["pieces_into_holes", "x", "d4", 0],
        G([[5, 5, 5, 5, 0], [5, 0, 0, 5, 3], [5, 5, 5, 5, 3]]),
        [[5, 5, 5, 5, 0], [5, 3, 3, 5, 0], [5, 5, 5, 5, 0]],
    ),
    # shifted only: the flat 4 4 piece fits, the upright 3 3 piece does not
    (
        ["pieces_into_holes", "x", "id", 0],
        G([[5, 5, 5, 5, 0], [5, 0, 0, 5, 3], [5, 5, 5, 5, 3], [0, 0, 0, 4, 4]]),
        [[5, 5, 5, 5, 0], [5, 4, 4, 5, 3], [5, 5, 5, 5, 3], [0, 0, 0, 0, 0]],
    ),
    # the cup open at the top fills with 2 and spills one row above it
    (
        ["spill_cups", "x", 0],
        G([[0, 0, 0, 0, 0], [0, 1, 0, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]]),
        [[0, 2, 2, 2, 0], [0, 1, 2, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]],
    ),
    # open on the right
    (
        ["spill_cups", "x", 0],
        G([[1, 1, 1, 0], [1, 3, 0, 0], [1, 1, 1, 0]]),
        [[1, 1, 1, 3], [1, 3, 3, 3], [1, 1, 1, 3]],
    ),
    # three 5s two apart on a diagonal: rings every 2 cells around the middle one
    (
        ["extend_rings", "x", 0],
        G([[5 if y == x and y in (2, 4, 6) else 0 for x in range(9)] for y in range(9)]),
        _RINGS,
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_new_ops_registered_with_cases_and_generators() -> None:
    assert set(OPS) >= NEW_OPS
    assert {n for n, _, _ in oc.OP_TABLE} >= NEW_OPS
    assert NEW_OPS - {c[0][0] for c in CASES} == set()
    assert set(oc.GENERATORS) >= NEW_OPS


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        oc.recolor_in_box(G([[1, 0]]), 8, 1, 3, 0, 0)  # no box colour
    with pytest.raises(ValueError):
        oc.pointer_ray(G([[1, 0, 2]]), -1, "away", "line", "marker", 0)  # one colour each
    with pytest.raises(ValueError):
        oc.symmetrize_mark(G([[1, 0, 1]]), "h", "grid", 2, 0)  # already symmetric
    with pytest.raises(ValueError):
        oc.symmetrize_mark(G([[1, 2]]), "diag", "fit", 2, 0)  # mirror leaves the grid
    with pytest.raises(ValueError):
        oc.fill_largest_rect(G([[0, 1], [1, 0]]), 0, 6, 2)  # no 2x2 rectangle
    with pytest.raises(ValueError):
        oc.cell_expand(G([[1, 5, 0], [5, 5, 5], [0, 5, 1]]), "min", 0)  # 1x1 cells, a tie
    with pytest.raises(ValueError):
        oc.cell_template_mark(G([[1, 0, 5, 0, 1]]), -1, 0)  # two templates
    with pytest.raises(ValueError):
        oc.diag_bounce(G([[1, 1, 0]]), 3, 0)  # no diagonal segment
    with pytest.raises(ValueError):
        oc.cell_key_place(G([[4, 5, 4], [5, 5, 5], [0, 5, 0]]), 4, 0)  # two key cells
    with pytest.raises(ValueError):
        oc.mirror_marker(G([[4, 4, 2]]), 0)  # the mirror leaves the grid
    with pytest.raises(ValueError):
        oc.checker_interior(G([[4, 4], [4, 4]]), 0, 0, 0)  # no interior
    with pytest.raises(ValueError):
        oc.border_marks(G([[1, 1, 0]]), "down", 4, 0)  # no object with a centre
    with pytest.raises(ValueError):
        oc.mark_crossings(G([[1, 1], [0, 0]]), 4, 0)  # no full column
    with pytest.raises(ValueError):
        oc.stamp_markers(G([[2, 3, 0, 1]]), 1, 0)  # even template width
    with pytest.raises(ValueError):
        oc.role_stamp(G([[2, 3]]), [[16, 0]], 0)  # no centre cell
    with pytest.raises(ValueError):
        oc.anchor_copy(G([[4, 3, 0, 0, 5]]), -1, 0)  # the lone 5 anchors nothing


# ---------------------------------------------------------------- generators


def ctx(pairs: list[tuple[list[list[int]], list[list[int]]]], bg: int = 0) -> Ctx:
    return Ctx([G(a) for a, _ in pairs], [G(b) for _, b in pairs], bg)


def gen(op: str, c: Ctx) -> list[Any]:
    return list(oc.GENERATORS[op](c))


def test_recolor_in_box_generator() -> None:
    c = ctx(
        [
            ([[8, 1, 8, 1], [1, 1, 0, 0]], [[8, 3, 8, 1], [3, 3, 0, 0]]),
            ([[1, 8, 0], [1, 8, 1]], [[1, 8, 0], [1, 8, 1]]),
        ]
    )
    assert gen("recolor_in_box", c) == []  # the second pair changes nothing
    c = ctx(
        [([[8, 1, 8, 1], [1, 1, 0, 0], [0, 8, 0, 1]], [[8, 3, 8, 1], [3, 3, 0, 0], [0, 8, 0, 1]])]
    )
    assert gen("recolor_in_box", c) == [(8, 1, 3, 2, 0)]
    # a change the boxes cannot explain (the far 1 changes too)
    c = ctx([([[8, 1, 8, 1], [1, 1, 0, 0]], [[8, 3, 8, 3], [3, 3, 0, 0]])])
    assert gen("recolor_in_box", c) == []


def test_pointer_ray_generator() -> None:
    c = ctx(
        [
            (
                [[0, 2, 0, 0, 0], [1, 2, 2, 0, 0], [0, 2, 0, 0, 0]],
                [[0, 2, 0, 0, 0], [1, 2, 2, 1, 1], [0, 2, 0, 0, 0]],
            ),
        ]
    )
    assert gen("pointer_ray", c) == [(-1, "away", "line", "marker", 0)]
    c = ctx([([[0, 2, 0], [1, 2, 0]], [[0, 2, 0], [1, 2, 4]])])
    assert gen("pointer_ray", c) == []


def test_symmetrize_mark_generator() -> None:
    c = ctx([([[1, 0, 0, 0], [1, 1, 0, 0]], [[1, 0, 0, 2], [1, 1, 2, 2]])])
    assert gen("symmetrize_mark", c) == [("h", "grid", 2, 0)]
    c = ctx([([[1, 0, 0, 0], [1, 1, 0, 0]], [[1, 0, 0, 2], [1, 1, 0, 2]])])
    assert gen("symmetrize_mark", c) == []


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


def test_complete_lines_generator() -> None:
    c = ctx(
        [
            (
                [[1, 0, 1, 1, 1], [0, 0, 0, 0, 1], [1, 0, 1, 0, 0], [1, 0, 0, 0, 1]],
                [[1, 2, 1, 1, 1], [2, 0, 0, 0, 1], [1, 0, 1, 0, 2], [1, 0, 0, 0, 1]],
            )
        ]
    )
    assert gen("complete_lines", c) == [(2, 2, 0)]
    c = ctx([([[1, 0, 1, 1, 1], [0, 0, 0, 0, 1]], [[1, 0, 1, 1, 1], [0, 2, 0, 0, 1]])])
    assert gen("complete_lines", c) == []


def test_cell_expand_generator() -> None:
    a = [[1, 0, 5, 1, 1], [0, 0, 5, 0, 1], [5, 5, 5, 5, 5], [2, 2, 5, 3, 3], [2, 0, 5, 3, 3]]
    b = [[1, 1, 5, 0, 0], [1, 1, 5, 0, 0], [5, 5, 5, 5, 5], [0, 0, 5, 0, 0], [0, 0, 5, 0, 0]]
    assert gen("cell_expand", ctx([(a, b)])) == [("min", 0)]
    assert gen("cell_expand", ctx([(a, a)])) == []


def test_cell_template_mark_generator() -> None:
    a, b = [[1, 1, 5, 0, 1], [1, 0, 5, 0, 0]], [[1, 1, 5, 5, 1], [1, 0, 5, 5, 0]]
    assert gen("cell_template_mark", ctx([(a, b)])) == [(-1, 0)]
    assert gen("cell_template_mark", ctx([(a, [[1, 1, 5, 2, 1], [1, 0, 5, 0, 0]])])) == []


def test_diag_bounce_generator() -> None:
    a = [[0, 0, 0, 2], [0, 0, 0, 2], [0, 0, 0, 2], [0, 8, 0, 2], [8, 0, 0, 2]]
    b = [[3, 0, 0, 2], [0, 3, 0, 2], [0, 0, 3, 2], [0, 8, 0, 2], [8, 0, 0, 2]]
    assert gen("diag_bounce", ctx([(a, b)])) == [(3, 0)]
    b[0][0] = 0
    assert gen("diag_bounce", ctx([(a, b)])) == []


def test_cell_key_place_generator() -> None:
    a = [[1, 0, 5, 0, 0], [0, 4, 5, 2, 0], [5, 5, 5, 5, 5], [3, 0, 5, 0, 0], [0, 0, 5, 0, 6]]
    b = [[0, 0, 5, 0, 0], [0, 0, 5, 0, 0], [5, 5, 5, 5, 5], [0, 0, 5, 1, 0], [0, 0, 5, 0, 4]]
    assert gen("cell_key_place", ctx([(a, b)])) == [(4, 0)]
    b[3][3] = 0
    assert gen("cell_key_place", ctx([(a, b)])) == []


def test_mirror_marker_generator() -> None:
    a = [[0, 4, 0, 0, 0], [4, 4, 2, 0, 0], [0, 4, 2, 0, 0]]
    b = [[3, 4, 4, 3, 3], [4, 4, 4, 4, 3], [3, 4, 4, 3, 3]]  # and the background -> 3
    assert gen("mirror_marker", ctx([(a, b)])) == [(0,)]
    assert gen("mirror_marker", ctx([(a, a)])) == []


def test_checker_interior_generator() -> None:
    a = [[4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4]]
    b = [[4, 4, 4, 4, 4, 4], [4, 0, 4, 0, 4, 4], [4, 4, 4, 4, 4, 4]]
    assert gen("checker_interior", ctx([(a, b)])) == [(0, 0, 0)]
    b = [[4, 4, 4, 4, 4, 4], [4, 0, 0, 4, 4, 4], [4, 4, 4, 4, 4, 4]]
    assert gen("checker_interior", ctx([(a, b)])) == []


def test_border_marks_and_crossings_generators() -> None:
    a = [[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [0, 0, 0, 0, 0, 0]]
    b = [[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [0, 4, 0, 0, 0, 0]]
    assert gen("border_marks", ctx([(a, b)])) == [("down", 4, 0)]
    b = [[6, 6, 6, 0, 3, 3], [6, 0, 6, 0, 0, 0], [4, 0, 0, 0, 0, 0]]
    assert gen("border_marks", ctx([(a, b)])) == []
    a = [[0, 3, 0, 0], [2, 2, 2, 2], [0, 3, 0, 0], [0, 3, 0, 0]]
    b = [[4, 4, 4, 0], [4, 2, 4, 2], [4, 4, 4, 0], [0, 3, 0, 0]]
    assert gen("mark_crossings", ctx([(a, b)])) == [(4, 0)]
    b = [[4, 4, 4, 0], [4, 2, 4, 2], [4, 4, 4, 0], [0, 4, 0, 0]]
    assert gen("mark_crossings", ctx([(a, b)])) == []


def test_stamp_markers_generator() -> None:
    a = [[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 0, 1, 0], [0, 0, 0, 5, 0, 0, 1]]
    b = [[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 2, 3, 4], [0, 0, 0, 5, 0, 2, 3]]
    assert gen("stamp_markers", ctx([(a, b)])) == [(1, 0)]
    b = [[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 2, 3, 4], [0, 0, 0, 5, 0, 0, 1]]
    assert gen("stamp_markers", ctx([(a, b)])) == []


def test_role_stamp_generator() -> None:
    a = [[0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 6, 0]]
    b = [[0, 3, 0, 0, 0], [3, 3, 3, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 6, 0], [0, 0, 6, 6, 6]]
    assert gen("role_stamp", ctx([(a, b)])) == [([[17, 0], [23, 0], [25, 0], [31, 0]], 0)]
    b[0][0] = 3  # a cell that the 6 does not grow
    assert gen("role_stamp", ctx([(a, b)])) == []


def test_anchor_copy_generator() -> None:
    a = [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 3, 0], [0, 0, 0, 0, 0]]
    b = [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 4, 3, 0], [0, 0, 4, 0, 0]]
    assert gen("anchor_copy", ctx([(a, b)])) == [(-1, 0)]
    b = [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 4, 3, 0], [0, 0, 0, 0, 0]]
    assert gen("anchor_copy", ctx([(a, b)])) == []


def test_fit_templates_generator() -> None:
    a = [[2, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0]]
    b = [[2, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 2, 1], [0, 0, 0, 0, 1]]
    assert gen("fit_templates", ctx([(a, b)])) == [("id", "copy", 0)]
    a = [[5, 6, 0, 0, 0], [0, 7, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 6, 5], [0, 0, 0, 0, 0]]
    b = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 7, 0], [0, 0, 0, 6, 5], [0, 0, 0, 0, 0]]
    assert gen("fit_templates", ctx([(a, b)])) == [("d4", "move", 0)]
    b[2][3] = 0
    assert gen("fit_templates", ctx([(a, b)])) == []


def test_repeat_toward_generator() -> None:
    a = [[1, 1, 0, 3, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0, 0]]
    b = [[1, 1, 0, 3, 3, 0, 3, 3, 0], [1, 1, 0, 3, 3, 0, 3, 3, 0]]
    assert gen("repeat_toward", ctx([(a, b)])) == [(0,)]
    b = [[1, 1, 0, 3, 3, 0, 0, 0, 0], [1, 1, 0, 3, 3, 0, 0, 0, 0]]
    assert gen("repeat_toward", ctx([(a, b)])) == []


def test_cell_fit_templates_generator() -> None:
    a = [[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 2, 5, 0]]
    b = [[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 2, 5, 1]]
    assert gen("cell_fit_templates", ctx([(a, b)])) == [("id", 0)]
    b = [[2, 5, 1, 5, 0, 5, 0], _S5, [0, 5, 0, 5, 0, 5, 0], _S5, [0, 5, 1, 5, 2, 5, 0]]
    assert gen("cell_fit_templates", ctx([(a, b)])) == []


def test_pieces_into_holes_generator() -> None:
    a = [[5, 5, 5, 0, 0, 0], [5, 0, 5, 0, 2, 0], [5, 5, 5, 0, 0, 0]]
    b = [[5, 5, 5, 0, 0, 0], [5, 2, 5, 0, 0, 0], [5, 5, 5, 0, 0, 0]]
    assert gen("pieces_into_holes", ctx([(a, b)])) == [("id", 0)]
    b = [[5, 5, 5, 0, 0, 0], [5, 0, 5, 0, 0, 0], [5, 5, 5, 0, 2, 0]]
    assert gen("pieces_into_holes", ctx([(a, b)])) == []


def test_spill_cups_generator() -> None:
    a = [[0, 0, 0, 0, 0], [0, 1, 0, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]]
    b = [[0, 2, 2, 2, 0], [0, 1, 2, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]]
    assert gen("spill_cups", ctx([(a, b)])) == [(0,)]
    b = [[0, 0, 0, 0, 0], [0, 1, 2, 1, 0], [0, 1, 2, 1, 0], [0, 1, 1, 1, 0]]
    assert gen("spill_cups", ctx([(a, b)])) == []


def test_extend_rings_generator() -> None:
    a = [[5 if y == x and y in (2, 4, 6) else 0 for x in range(9)] for y in range(9)]
    assert gen("extend_rings", ctx([(a, _RINGS)])) == [(0,)]
    b = [r[:] for r in _RINGS]
    b[0] = [0] * 9
    assert gen("extend_rings", ctx([(a, b)])) == []
