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
