"""DSL ops of :mod:`atlas_actors.arc.ops_objects`: primitives on hand-made grids, their
parameter generators on tiny hand-made tasks, and standalone Python for each."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import OPS, Program, compile_program
from atlas_actors.arc import ops_objects as oo
from atlas_actors.arc.infer import Ctx


def G(rows: list[list[int]]) -> np.ndarray[Any, Any]:
    return np.array(rows, dtype=np.int64)


_KA = oo.panel_key(G([[1, 1], [1, 0]]))
_KB = oo.panel_key(G([[2, 2], [2, 0]]))

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # the 2 shape moves to the centre of the box of the 3 markers
    (
        ["center_in", "x", 3, 0],
        G([[3, 2, 0, 0, 3], [0, 2, 0, 0, 0], [0, 2, 0, 0, 0], [0, 0, 0, 0, 0], [3, 0, 0, 0, 3]]),
        [[3, 0, 0, 0, 3], [0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [3, 0, 0, 0, 3]],
    ),
    # the 2 frame around a 0 is copied onto the other 0 ringed by 1s; the 0 next to the
    # 1 at the edge has no room
    (
        ["copy_to_match", "x", 2],
        G(
            [
                [2, 2, 2, 1, 1, 1],
                [2, 0, 2, 1, 0, 1],
                [2, 2, 2, 1, 1, 1],
                [1, 1, 1, 1, 1, 0],
            ]
        ),
        [
            [2, 2, 2, 2, 2, 2],
            [2, 0, 2, 2, 0, 2],
            [2, 2, 2, 2, 2, 2],
            [1, 1, 1, 1, 1, 0],
        ],
    ),
    # the least common colour (role 12) is the template's
    (
        ["copy_to_match", "x", 12],
        G([[5, 0, 5, 1], [1, 1, 1, 1], [1, 0, 1, 1]]),
        [[5, 0, 5, 1], [1, 1, 1, 1], [5, 0, 5, 1]],
    ),
    # the 5 below the 2 wall is reflected across it; the 7 has no wall spanning its
    # columns and stays
    (
        ["mirror_across", "x", 2, 0, 0],
        G([[0, 0, 0, 0], [0, 0, 0, 0], [2, 2, 2, 0], [0, 0, 0, 0], [5, 5, 0, 7]]),
        [[5, 5, 0, 0], [0, 0, 0, 0], [2, 2, 2, 0], [0, 0, 0, 0], [0, 0, 0, 7]],
    ),
    (
        ["mirror_across", "x", 2, 1, 0],
        G([[0, 0, 0, 0, 0], [0, 0, 2, 0, 3], [0, 0, 2, 0, 0]]),
        [[0, 0, 0, 0, 0], [3, 0, 2, 0, 3], [0, 0, 2, 0, 0]],
    ),
    # each dot lands on the nearest cell of the 8 block, the rest of the block goes
    (
        ["gather_dots", "x", 0],
        G(
            [
                [1, 0, 0, 0, 0],
                [0, 0, 0, 0, 0],
                [0, 0, 8, 8, 0],
                [0, 0, 8, 8, 0],
                [0, 0, 0, 0, 0],
                [0, 0, 0, 0, 2],
            ]
        ),
        [
            [0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 0, 2, 0],
            [0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0],
        ],
    ),
    # the 2 ring and the 5 dot nest concentrically
    (
        ["nest_colors", "x", 0],
        G([[2, 2, 2, 0, 0], [2, 0, 2, 0, 5], [2, 2, 2, 0, 0]]),
        [[2, 2, 2], [2, 5, 2], [2, 2, 2]],
    ),
    # the 1 body is mirrored to the right in 2 (marker beside it) and over the top-left
    # corner in 3 (diagonal marker)
    (
        ["mirror_to_markers", "x", 0],
        G(
            [
                [0, 0, 0, 0, 0, 0, 0],
                [0, 3, 0, 0, 0, 0, 0],
                [0, 0, 1, 1, 2, 0, 0],
                [0, 0, 1, 0, 0, 0, 0],
            ]
        ),
        [
            [0, 3, 0, 0, 0, 0, 0],
            [3, 3, 0, 0, 0, 0, 0],
            [0, 0, 1, 1, 2, 2, 0],
            [0, 0, 1, 0, 0, 2, 0],
        ],
    ),
    # the rectangle between the two 1 rows and the 3 and 4 columns (a 2 noise cell
    # does not break the 1 row)
    (
        ["crop_lines", "x", 0, 0],
        G(
            [
                [0, 3, 0, 0, 4, 0],
                [1, 1, 1, 2, 1, 1],
                [0, 3, 5, 0, 4, 0],
                [1, 1, 1, 1, 1, 1],
                [0, 3, 0, 0, 4, 0],
            ]
        ),
        [[1, 1, 2, 1], [3, 5, 0, 4], [1, 1, 1, 1]],
    ),
    (
        ["crop_lines", "x", 1, 0],
        G([[0, 3, 0, 0, 4, 0], [0, 3, 5, 0, 4, 0], [0, 3, 0, 0, 4, 0]]),
        [[0, 0], [5, 0], [0, 0]],
    ),
    # the 2 cell extends down to the 2 wall, the 1 cell left to the 1 wall; the 5
    # has no wall of its colour
    (
        ["ray_to_wall", "x", 0],
        G(
            [
                [1, 0, 0, 0, 0],
                [1, 0, 2, 0, 0],
                [1, 0, 0, 1, 5],
                [1, 0, 0, 0, 0],
                [2, 2, 2, 2, 2],
            ]
        ),
        [
            [1, 0, 0, 0, 0],
            [1, 0, 2, 0, 0],
            [1, 1, 2, 1, 5],
            [1, 0, 2, 0, 0],
            [2, 2, 2, 2, 2],
        ],
    ),
    # the L (2 ends, 1 bend) becomes 1, the straight bar (2 ends, 0 bends) 2
    (
        ["recolor_topology", "x", [[20, 2], [21, 1]], 0],
        G([[3, 0, 3], [3, 0, 3], [3, 3, 0]]),
        [[1, 0, 2], [1, 0, 2], [1, 1, 0]],
    ),
    # the 3 x 3 block of 4 (with a stray 1 inside) hidden in noise
    (
        ["crop_solid_rect", "x"],
        G(
            [
                [1, 2, 3, 5, 6],
                [7, 4, 4, 4, 2],
                [3, 4, 1, 4, 9],
                [8, 4, 4, 4, 1],
                [2, 6, 1, 3, 5],
            ]
        ),
        [[4, 4, 4], [4, 1, 4], [4, 4, 4]],
    ),
    # the 1-2 template of the left half moves onto the loose 2 of the right half
    (
        ["place_halves", "x"],
        G([[8, 8, 8, 8, 0, 0, 0, 0], [8, 1, 2, 8, 0, 0, 0, 0], [8, 8, 8, 8, 0, 0, 0, 2]]),
        [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 2]],
    ),
    # bars sorted by size, stacked at the bottom, right-aligned
    (
        ["sort_stack", "x", "down", "end", 0],
        G([[0, 2, 2, 0], [0, 0, 0, 0], [3, 0, 0, 0], [4, 4, 4, 0]]),
        [[0, 0, 0, 0], [0, 0, 0, 3], [0, 0, 2, 2], [0, 4, 4, 4]],
    ),
    # columns sorted by size, stacked at the left, top-aligned
    (
        ["sort_stack", "x", "left", "start", 0],
        G([[0, 0, 5], [1, 0, 5], [0, 0, 5]]),
        [[5, 1, 0], [5, 0, 0], [5, 0, 0]],
    ),
    # the 1 diamond is stamped in the marker's colour 2 toward the marker, with the
    # smallest step (2) that clears it, until off the grid
    (
        ["march_copies", "x", "marker", 0],
        G(
            [
                [0, 1, 0, 0, 0, 0],
                [1, 0, 1, 0, 0, 0],
                [0, 1, 0, 2, 0, 0],
                [0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 0],
            ]
        ),
        [
            [0, 1, 0, 0, 0, 0],
            [1, 0, 1, 0, 0, 0],
            [0, 1, 0, 2, 0, 0],
            [0, 0, 2, 0, 2, 0],
            [0, 0, 0, 2, 0, 2],
            [0, 0, 0, 0, 2, 0],
        ],
    ),
    # background by role (13, the commonest colour 8): a bar repeated to the right
    (
        ["march_copies", "x", "marker", 13],
        G([[1, 8, 8, 8], [1, 3, 8, 8], [1, 8, 8, 8]]),
        [[1, 3, 3, 3], [1, 3, 3, 3], [1, 3, 3, 3]],
    ),
    # copies in the shape's own colour (the marker cell itself is kept)
    (
        ["march_copies", "x", "main", 0],
        G([[1, 0, 0, 0], [1, 3, 0, 0], [1, 0, 0, 0]]),
        [[1, 1, 1, 1], [1, 3, 1, 1], [1, 1, 1, 1]],
    ),
    # the four 2 x 2 corner windows of a 3 x 3 grid overlaid (they share the middle)
    (
        ["overlay_corners", "x", 2, 2, 0],
        G([[1, 0, 0], [0, 0, 0], [0, 0, 2]]),
        [[1, 0], [0, 2]],
    ),
    (
        ["overlay_corners", "x", 2, 3, 0],
        G([[0, 8, 0, 0, 8], [8, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 3, 0]]),
        [[0, 8, 8], [8, 3, 0]],
    ),
    # panels cut by the 5 column: the second is the first mirrored left-right, the
    # third the first turned a half turn
    (
        ["panel_transforms", "x", [0, 4, 2], 0],
        G([[1, 2, 5, 0, 0, 5, 0, 0], [3, 0, 5, 0, 0, 5, 0, 0]]),
        [[1, 2, 5, 2, 1, 5, 0, 3], [3, 0, 5, 0, 3, 5, 2, 1]],
    ),
    # two panels cut by the 0 column (0 also inside them): each panel's content looked
    # up (1-panel -> 4, 2-panel -> 6) and written as a row of 3
    (
        ["panel_colors", "x", [[_KA, 4], [_KB, 6]], "rows", 3, 0],
        G([[1, 1, 0, 2, 2], [1, 0, 0, 2, 0]]),
        [[4, 4, 4], [6, 6, 6]],
    ),
    (
        ["panel_colors", "x", [[_KA, 4], [_KB, 6]], "cols", 1, 0],
        G([[2, 2, 0, 1, 1], [2, 0, 0, 1, 0]]),
        [[6, 4]],
    ),
    # a staircase (period 2 rows, drifting one column right) continued to 5 rows
    (
        ["extend_drift", "x", "down", 5, 0],
        G([[1, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 1, 1, 0, 0]]),
        [
            [1, 1, 0, 0, 0],
            [0, 1, 0, 0, 0],
            [0, 1, 1, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 1, 1, 0],
        ],
    ),
    # the same sideways: columns continued to the right; a diagonal continued leftward
    (
        ["extend_drift", "x", "right", 5, 0],
        G([[1, 0, 0], [1, 1, 1], [0, 0, 1], [0, 0, 0], [0, 0, 0]]),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 0, 1, 1, 1],
            [0, 0, 0, 0, 1],
            [0, 0, 0, 0, 0],
        ],
    ),
    (
        ["extend_drift", "x", "left", 5, 0],
        G([[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, 0]]),
        [[0, 0, 0, 0, 1], [0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0]],
    ),
    # the 1 2 run in row 1 and the 3 1 run in column 1 repeated along their lines
    (
        ["extend_runs", "x", "hv", 0],
        G([[0, 3, 0, 0, 0], [0, 1, 2, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]),
        [[0, 3, 0, 0, 0], [2, 1, 2, 1, 2], [0, 3, 0, 0, 0], [0, 1, 0, 0, 0]],
    ),
    (
        ["extend_runs", "x", "h", 0],
        G([[0, 3, 0, 0, 0], [0, 1, 2, 0, 0], [0, 0, 0, 0, 0]]),
        [[0, 3, 0, 0, 0], [2, 1, 2, 1, 2], [0, 0, 0, 0, 0]],
    ),
    # two markers on one shape: copies toward each (step 3 clears the bar)
    (
        ["march_copies", "x", "marker", 0],
        G([[0, 0], [0, 2], [0, 1], [0, 1], [0, 1], [0, 2], [0, 0]]),
        [[0, 2], [0, 2], [0, 1], [0, 1], [0, 1], [0, 2], [0, 2]],
    ),
    # each row's single 5 picks its row's colour by its column (0 -> 2, 2 -> 3); the
    # empty row stays
    (
        ["lines_by_position", "x", [[0, 2], [2, 3]], "h", 0],
        G([[5, 0, 0], [0, 0, 5], [0, 0, 0]]),
        [[2, 2, 2], [3, 3, 3], [0, 0, 0]],
    ),
    (
        ["lines_by_position", "x", [[1, 4]], "v", 0],
        G([[0, 0], [1, 0]]),
        [[4, 0], [4, 0]],
    ),
    # the header row 2 1 4 (above a 5 rule) painted as cycling full-row stripes below
    (
        ["palette_stripes", "x", "h", 0],
        G([[2, 1, 4], [5, 5, 5], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]),
        [[2, 1, 4], [5, 5, 5], [2, 2, 2], [1, 1, 1], [4, 4, 4], [2, 2, 2]],
    ),
    (
        ["palette_stripes", "x", "v", 0],
        G([[3, 0, 0], [6, 0, 0]]),
        [[3, 3, 6], [6, 3, 6]],
    ),
    # 3 x 3 panels cut by 5 lines: the first panel painted 1, the middle one 2, the
    # last one 3 (keys 4 * row class + column class)
    (
        ["fill_panels_by_place", "x", [[0, 1], [5, 2], [10, 3]], 0],
        G([[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [0, 5, 7, 5, 0]]),
        [[1, 5, 0, 5, 0], [5, 5, 5, 5, 5], [0, 5, 2, 5, 0], [5, 5, 5, 5, 5], [0, 5, 7, 5, 3]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_primitive_outputs(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    assert compile_program(prog)(grid).tolist() == want


def test_every_objects_op_has_a_case_and_a_generator() -> None:
    names = {n for n, _, _ in oo.OP_TABLE}
    assert names <= set(OPS)
    assert names - {c[0][0] for c in CASES} == set()
    assert names <= set(oo.GENERATORS)


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_standalone_python(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    src = Program.from_json(prog).to_python()
    assert "import atlas_actors" not in src and "from atlas_actors" not in src
    ns: dict[str, Any] = {}
    exec(src, ns)
    assert ns["transform"](grid).tolist() == want


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        oo.center_in(G([[3, 0, 3], [0, 0, 0]]), 3, 0)  # nothing to move
    with pytest.raises(ValueError):
        oo.center_in(G([[3, 2, 0, 3]]), 3, 0)  # half-cell centre
    with pytest.raises(ValueError):
        oo.copy_to_match(G([[2, 0, 2, 1]]), 2)  # key found nowhere else
    with pytest.raises(ValueError):
        oo.sort_stack(G([[1, 1, 1]]), "down", "end", 0)  # one object
    with pytest.raises(ValueError):
        oo.mirror_across(G([[5, 0, 2]]), 2, 0, 0)  # mirror image off the grid
    with pytest.raises(ValueError):
        oo.mirror_across(G([[5, 0, 0]]), 2, 0, 0)  # no wall
    with pytest.raises(ValueError):
        oo.gather_dots(G([[0, 1, 0], [0, 0, 0], [8, 0, 8], [8, 8, 8]]), 0)  # tie below the dot
    with pytest.raises(ValueError):
        oo.mirror_to_markers(G([[1, 1, 0, 2]]), 0)  # the 2 is not beside the body
    with pytest.raises(ValueError):
        oo.crop_lines(G([[1, 1, 0], [0, 0, 0]]), 0, 0)  # one line only
    with pytest.raises(ValueError):
        oo.ray_to_wall(G([[1, 0, 1], [0, 0, 0]]), 0)  # no walls
    with pytest.raises(ValueError):
        oo.recolor_topology(G([[1, 0] * 41]), [[0, 2]], 0)  # too many objects
    with pytest.raises(ValueError):
        oo.crop_solid_rect(G([[1, 2], [3, 4]]))  # no block
    with pytest.raises(ValueError):
        oo.place_halves(G([[0, 1, 0, 1], [0, 0, 0, 0]]))  # one background
    with pytest.raises(ValueError):
        oo.nest_colors(G([[2, 2, 0, 5]]), 0)  # a 2-wide box and a 1-wide box
    with pytest.raises(ValueError):
        oo.march_copies(G([[1, 1, 0, 2]]), "marker", 0)  # the 2 is not beside the 1s
    with pytest.raises(ValueError):
        oo.overlay_corners(G([[1, 0, 0, 0, 2]]), 1, 2, 0)  # the middle is not covered
    with pytest.raises(ValueError):
        oo.panel_transforms(
            G([[1, 2, 5, 0], [3, 0, 5, 0]]), [0, 1], 0
        )  # panels of different widths
    with pytest.raises(ValueError):
        oo.fill_panels_by_place(G([[0, 5, 0]]), [[5, 2]], 0)  # no middle panel
    with pytest.raises(ValueError):
        oo.palette_stripes(G([[2, 0], [0, 0]]), "h", 0)  # a one-colour palette
    with pytest.raises(ValueError):
        oo.lines_by_position(G([[0, 5]]), [[0, 2]], "h", 0)  # index 1 not in the table
    with pytest.raises(ValueError):
        oo.extend_runs(G([[1, 1, 0], [0, 0, 0], [2, 0, 3]]), "hv", 0)  # one colour, or not one run
    with pytest.raises(ValueError):
        oo.extend_drift(G([[1, 0], [0, 2]]), "down", 4, 0)  # no line repeats
    with pytest.raises(ValueError):
        oo.panel_colors(G([[1, 1, 0, 3, 3], [1, 0, 0, 3, 0]]), [[_KA, 4]], "rows", 1, 0)


# ---------------------------------------------------------------- generators


def ctx(pairs: list[tuple[list[list[int]], list[list[int]]]], bg: int = 0) -> Ctx:
    states = [G(a) for a, _ in pairs]
    return Ctx(states, [G(b) for _, b in pairs], bg)


def gen(op: str, c: Ctx) -> list[Any]:
    return list(oo.GENERATORS[op](c))


def test_center_in_generator() -> None:
    c = ctx([([[3, 2, 0, 3]], [[3, 0, 2, 3]])])  # 3 stays, 2 moves
    assert gen("center_in", c) == [(3, 0)]
    assert gen("center_in", ctx([([[3, 2, 0, 3]], [[3, 2, 2, 3]])])) == []  # cells added


def test_copy_to_match_generator() -> None:
    c = ctx([([[2, 0, 2, 1, 0, 1]], [[2, 0, 2, 2, 0, 2]])])
    assert gen("copy_to_match", c) == [(2,)]
    two = ctx(
        [
            ([[2, 0, 2, 1, 0, 1]], [[2, 0, 2, 2, 0, 2]]),
            ([[1, 0, 1, 1, 8, 0, 8]], [[8, 0, 8, 1, 8, 0, 8]]),
        ]
    )
    assert gen("copy_to_match", two) == [(12,)]  # the least common colour
    assert gen("copy_to_match", ctx([([[2, 0, 1]], [[2, 3, 1]])])) == []  # new colour


def test_sort_stack_generator() -> None:
    c = ctx([([[2, 2, 0], [0, 0, 0], [3, 3, 3]], [[0, 0, 0], [0, 2, 2], [3, 3, 3]])])
    got = gen("sort_stack", c)
    assert ("down", "end", 0) in got and ("up", "start", 0) not in got
    assert gen("sort_stack", ctx([([[2, 0]], [[2, 2]])])) == []


def test_mirror_across_generator() -> None:
    c = ctx([([[0, 2, 0, 5]], [[5, 2, 0, 0]])])
    assert gen("mirror_across", c) == [(2, 0, 0)]
    c = ctx([([[0, 2, 0, 5]], [[5, 2, 0, 5]])])
    assert (2, 1, 0) in gen("mirror_across", c)
    assert gen("mirror_across", ctx([([[0, 2, 0, 5]], [[3, 2, 0, 0]])])) == []


def test_gather_dots_generator() -> None:
    c = ctx([([[1, 0, 8, 8]], [[0, 0, 1, 0]])])
    assert gen("gather_dots", c) == [(0,)]
    assert gen("gather_dots", ctx([([[1, 0, 8, 8]], [[1, 1, 8, 8]])])) == []


def test_nest_colors_generator() -> None:
    c = ctx(
        [([[2, 2, 2, 0, 0], [2, 0, 2, 0, 5], [2, 2, 2, 0, 0]], [[2, 2, 2], [2, 5, 2], [2, 2, 2]])]
    )
    assert list(oo.GENERATORS["nest_colors"](c)) == [(0,)]
    c = ctx([([[2, 2, 2, 0, 0], [2, 0, 2, 0, 5]], [[2]])])
    assert list(oo.GENERATORS["nest_colors"](c)) == []


def test_mirror_to_markers_generator() -> None:
    c = ctx([([[1, 2, 0]], [[1, 2, 2]])])
    assert gen("mirror_to_markers", c) == [(0,)]
    assert gen("mirror_to_markers", ctx([([[1, 2, 0]], [[1, 0, 2]])])) == []  # moved


def test_crop_lines_and_ray_to_wall_generators() -> None:
    c = ctx([([[1, 1, 1], [0, 5, 0], [1, 1, 1]], [[1, 1, 1], [0, 5, 0]])])
    assert gen("crop_lines", c) == [(0, 0), (1, 0)]
    assert gen("crop_lines", ctx([([[1, 5]], [[1, 5], [1, 5]])])) == []
    c = ctx([([[1, 0, 0, 1]], [[1, 1, 1, 1]])])
    assert gen("ray_to_wall", c) == [(0,)]
    assert gen("ray_to_wall", ctx([([[1, 0, 0, 1]], [[0, 0, 0, 1]])])) == []


def test_topology_key() -> None:
    u = G([[1, 0, 1], [1, 1, 1]])
    assert oo.topology_key(*np.nonzero(u)) == 22
    t = G([[1, 1, 1], [0, 1, 0]])
    assert oo.topology_key(*np.nonzero(t)) == 30


def test_recolor_topology_generator() -> None:
    c = ctx([([[3, 0, 3], [3, 0, 3], [3, 3, 0]], [[1, 0, 2], [1, 0, 2], [1, 1, 0]])])
    assert gen("recolor_topology", c) == [([[20, 2], [21, 1]], 0)]
    # the test state holds a shape with an unseen key
    c = Ctx(
        [G([[3, 0, 3], [3, 0, 3], [3, 3, 0]]), G([[3, 3, 3]])],
        [G([[1, 0, 2], [1, 0, 2], [1, 1, 0]])],
        0,
    )
    assert gen("recolor_topology", c) == [([[20, 2], [21, 1]], 0)]
    c = Ctx(
        [G([[3, 0, 3], [3, 0, 3], [3, 3, 0]]), G([[3, 3, 3], [0, 3, 0]])],
        [G([[1, 0, 2], [1, 0, 2], [1, 1, 0]])],
        0,
    )
    assert gen("recolor_topology", c) == []


def test_crop_solid_rect_generator() -> None:
    c = ctx([([[1, 2, 3], [4, 4, 5], [4, 4, 6]], [[4, 4], [4, 4]])])
    assert gen("crop_solid_rect", c) == [()]
    assert gen("crop_solid_rect", ctx([([[1, 2, 3], [4, 4, 5]], [[4]])])) == []


def test_place_halves_generator() -> None:
    c = ctx([([[8, 1, 0, 0]], [[0, 0]])])
    assert gen("place_halves", c) == [()]
    assert gen("place_halves", ctx([([[8, 1, 0]], [[0, 0]])])) == []


def test_march_copies_generator() -> None:
    c = ctx([([[1, 2, 0, 0]], [[1, 2, 2, 2]])])
    assert gen("march_copies", c) == [("marker", 0), ("main", 0)]
    c8 = ctx([([[1, 2, 8, 8, 8]], [[1, 2, 2, 2, 2]]), ([[4, 4, 4, 1, 3]], [[4, 4, 4, 1, 3]])])
    assert gen("march_copies", c8) == [("marker", 13), ("main", 13)]
    assert gen("march_copies", ctx([([[1, 0, 2, 0]], [[1, 1, 2, 0]])])) == []


def test_overlay_corners_generator() -> None:
    c = ctx([([[1, 0, 0], [0, 0, 0], [0, 0, 2]], [[1, 0], [0, 2]])])
    assert gen("overlay_corners", c) == [(2, 2, 0)]
    assert gen("overlay_corners", ctx([([[1, 0, 0, 0, 2]], [[1, 2]])])) == []


def test_panel_transforms_generator() -> None:
    c = ctx(
        [
            ([[1, 2, 5, 0, 0], [3, 4, 5, 0, 0]], [[1, 2, 5, 2, 1], [3, 4, 5, 4, 3]]),
            ([[6, 0, 5, 0, 0], [6, 7, 5, 0, 0]], [[6, 0, 5, 0, 6], [6, 7, 5, 7, 6]]),
        ]
    )
    assert gen("panel_transforms", c) == [([0, 4], 0)]
    quiet = ctx([([[1, 2, 5, 0, 0], [3, 4, 5, 0, 0]], [[1, 2, 5, 9, 9], [3, 4, 5, 0, 0]])])
    assert gen("panel_transforms", quiet) == []


def test_panel_colors_generator() -> None:
    c = Ctx(
        [G([[1, 1, 0, 2, 2], [1, 0, 0, 2, 0]]), G([[2, 2, 0, 2, 2], [2, 0, 0, 2, 0]])],
        [G([[4, 4], [6, 6]])],
        0,
    )
    assert gen("panel_colors", c) == [(sorted([[_KA, 4], [_KB, 6]]), "rows", 2, 0)]
    unseen = Ctx(
        [G([[1, 1, 0, 2, 2], [1, 0, 0, 2, 0]]), G([[3, 3, 0, 2, 2], [3, 0, 0, 2, 0]])],
        [G([[4, 4], [6, 6]])],
        0,
    )
    assert gen("panel_colors", unseen) == []  # the test's 3-panel is not in the table


def test_extend_drift_generator() -> None:
    c = ctx([([[1, 0], [0, 1]], [[1, 0], [0, 1], [1, 0], [0, 1]])])
    assert gen("extend_drift", c) == [("down", 4, 0), ("up", 4, 0)]
    c2 = ctx([([[1, 2]], [[3, 1, 2]])])
    assert gen("extend_drift", c2) == [("left", 3, 0)]
    assert gen("extend_drift", ctx([([[1, 0]], [[1, 0], [5, 5]]), ([[1]], [[1], [1], [1]])])) == []


def test_extend_runs_generator() -> None:
    c = ctx([([[1, 2, 0, 0]], [[1, 2, 1, 2]])])
    assert gen("extend_runs", c) == [("hv", 0), ("h", 0), ("v", 0)]
    assert gen("extend_runs", ctx([([[1, 1, 0, 0]], [[1, 1, 1, 1]])])) == []


def test_lines_by_position_generator() -> None:
    c = Ctx(
        [G([[5, 0], [0, 5]]), G([[0, 5], [0, 5]])],
        [G([[2, 2], [3, 3]])],
        0,
    )
    assert gen("lines_by_position", c) == [([[0, 2], [1, 3]], "h", 0)]
    unseen = Ctx([G([[5, 0, 0], [0, 5, 0]]), G([[0, 0, 5]])], [G([[2, 2, 2], [3, 3, 3]])], 0)
    assert gen("lines_by_position", unseen) == []  # the test's index 2 is not covered


def test_palette_stripes_generator() -> None:
    c = ctx([([[2, 1], [0, 0], [0, 0]], [[2, 1], [2, 2], [1, 1]])])
    assert gen("palette_stripes", c) == [("h", 0)]
    assert gen("palette_stripes", ctx([([[2, 1], [0, 0]], [[2, 1], [3, 4]])])) == []


def test_fill_panels_by_place_generator() -> None:
    s = [[0, 5, 0], [5, 5, 5], [0, 5, 0]]
    c = ctx([(s, [[4, 5, 0], [5, 5, 5], [0, 5, 0]])])
    assert gen("fill_panels_by_place", c) == [([[0, 4]], 0)]
    quiet = ctx([(s, [[4, 5, 0], [5, 5, 5], [0, 5, 4]]), (s, [[4, 5, 0], [5, 5, 5], [0, 5, 0]])])
    assert gen("fill_panels_by_place", quiet) == []  # the last panel painted only once
    big = [[0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0], [5, 5, 5, 5, 5], [0, 5, 0, 5, 0]]
    wide = Ctx([G(s), G(big)], [G([[4, 5, 0], [5, 5, 5], [0, 5, 0]])], 0)
    assert gen("fill_panels_by_place", wide) == []  # the test's middle panel is unseen
