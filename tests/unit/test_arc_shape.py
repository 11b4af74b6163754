"""Shape-changing ARC DSL ops (atlas_actors.arc.ops_shape) and generalisation gates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import check_case

from atlas_actors.arc import compile_program
from atlas_actors.arc.infer import GENERATORS, Ctx
from atlas_actors.arc.solver import TaskSolver


def G(rows: list[list[int]]) -> np.ndarray[Any, Any]:
    return np.array(rows, dtype=np.int64)


CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    (
        ["kron_eq", "x", 1, 0],
        G([[1, 2], [0, 1]]),
        [[1, 2, 0, 0], [0, 1, 0, 0], [0, 0, 1, 2], [0, 0, 0, 1]],
    ),
    (  # role 13: the commonest colour (here 3), fill 0
        ["kron_eq", "x", 13, 0],
        G([[3, 4], [3, 3]]),
        [[3, 4, 0, 0], [3, 3, 0, 0], [3, 4, 3, 4], [3, 3, 3, 3]],
    ),
    (
        ["crop_most", "x", 2, 1, 8, 0],
        G([[1, 2, 0, 2, 2], [1, 1, 0, 2, 1], [0, 0, 0, 0, 0], [1, 1, 0, 0, 0]]),
        [[2, 2], [2, 1]],
    ),
    (
        ["crop_most", "x", 2, 0, 8, 0],
        G([[1, 2, 0, 2, 2], [1, 1, 0, 2, 1], [0, 0, 0, 0, 0], [1, 1, 0, 0, 0]]),
        [[1, 1]],
    ),
    (
        ["histogram", "x", "v", -1],
        G([[2, 2, 1], [2, 3, 1], [1, 1, 1]]),
        [[1, 2, 3], [1, 2, 0], [1, 2, 0], [1, 0, 0], [1, 0, 0]],
    ),
    (["histogram", "x", "h", 0], G([[0, 5, 0], [4, 5, 0]]), [[5, 5], [4, 0]]),
    (  # separator split: 2x2 key, 4x4 mask -> key scaled up through the mask
        ["key_mask", "x", "up", 0],
        G(
            [
                [1, 2, 8, 0, 0, 0, 0],
                [3, 4, 8, 0, 0, 0, 0],
                [8, 8, 8, 8, 8, 8, 8],
                [0, 0, 8, 5, 0, 0, 5],
                [0, 0, 8, 0, 5, 5, 0],
                [0, 0, 8, 0, 5, 0, 0],
                [0, 0, 8, 5, 5, 0, 5],
            ]
        ),
        [[1, 0, 0, 2], [0, 1, 2, 0], [0, 3, 0, 0], [3, 3, 0, 4]],
    ),
    (  # objects: a multicolour key and a blocky one-colour mask scaled down to it
        ["key_mask", "x", "down", 0],
        G(
            [
                [5, 5, 0, 0, 0, 0],
                [5, 5, 0, 0, 0, 0],
                [0, 0, 5, 5, 0, 0],
                [0, 0, 5, 5, 0, 0],
                [0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 1, 2],
                [0, 0, 0, 0, 3, 4],
            ]
        ),
        [[1, 0], [0, 4]],
    ),
    (  # halves: key left, mask right; one mask copy per key cell in its colour
        ["key_mask", "x", "kron", 0],
        G([[1, 0, 7, 0], [0, 2, 7, 7]]),
        [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 2, 0], [0, 0, 2, 2]],
    ),
    (
        ["downscale_auto", "x"],
        G([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 0, 0], [3, 3, 0, 0]]),
        [[1, 2], [3, 0]],
    ),
    (["downscale_auto", "x"], G([[1, 1, 1, 2, 2, 2]]), [[1, 2]]),
    (
        ["count_diag", "x", 8, 8, 0],
        G([[1, 0, 0], [0, 0, 2], [0, 0, 0], [3, 3, 0]]),
        [[8, 0, 0], [0, 8, 0], [0, 0, 8]],
    ),
    (["color_order", "x", "auto", -1], G([[4, 2, 2, 8], [4, 4, 2, 8]]), [[4, 2, 8]]),
    (["color_order", "x", "auto", 0], G([[3, 3], [0, 0], [6, 0]]), [[3], [6]]),
    (  # quadrants 0..3 in reading order; part 2 on top, then 0, 3, 1
        ["overlay_parts", "x", "q4", [2, 0, 3, 1], 0],
        G([[1, 1, 0, 5], [0, 0, 5, 5], [6, 0, 0, 0], [0, 0, 9, 9]]),
        [[6, 1], [9, 9]],
    ),
    (
        ["overlay_parts", "x", "h2", [1, 0], 0],
        G([[1, 1, 0, 2], [0, 0, 0, 0]]),
        [[1, 2], [0, 0]],
    ),
    (  # blocks between empty rows/columns (noise 0 inside blocks is fine)
        ["block_summary", "x", 0],
        G([[1, 0, 1, 0, 0, 2], [1, 1, 1, 0, 0, 2], [0, 0, 0, 0, 0, 0], [3, 3, 3, 0, 4, 0]]),
        [[1, 2], [3, 4]],
    ),
    (  # the object with the fewest cells per bounding-box cell: the ring
        ["object_color", "x", "sparsest", 8, 1, 0],
        G([[2, 2, 2, 0, 3], [2, 0, 2, 0, 3], [2, 2, 2, 0, 0], [0, 0, 0, 0, 4]]),
        [[2]],
    ),
    (  # pieces gathered around each 5
        ["overlay_windows", "x", 5, 3, 3, 0],
        G([[6, 0, 0, 0, 0], [0, 5, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 5, 7], [0, 0, 0, 0, 0]]),
        [[6, 0, 0], [0, 5, 7], [0, 0, 0]],
    ),
    (["pingpong", "x", "v", 3], G([[1, 2], [3, 4]]), [[1, 2], [3, 4], [1, 2], [3, 4]]),
    (["pingpong", "x", "h", 2], G([[1, 2, 3]]), [[1, 2, 3, 2, 1]]),
    (
        ["crop_marked", "x", 4, 1, 0],
        G([[4, 0, 0, 4], [0, 2, 0, 0], [0, 2, 2, 0], [4, 0, 0, 4]]),
        [[4, 0], [4, 4]],
    ),
    (
        ["crop_marked", "x", 4, 0, 0],
        G([[4, 0, 0, 4], [0, 2, 0, 0], [0, 2, 2, 0], [4, 0, 0, 4]]),
        [[2, 0], [2, 2]],
    ),
    (  # the 1x2 shape scaled by 2 into the 2x4 inside of the frame
        ["fit_in_frame", "x", 0],
        G(
            [
                [2, 2, 2, 2, 2, 2, 0, 0, 0],
                [2, 0, 0, 0, 0, 2, 0, 0, 0],
                [2, 0, 0, 0, 0, 2, 0, 0, 0],
                [2, 2, 2, 2, 2, 2, 0, 0, 0],
                [0, 0, 0, 0, 0, 0, 0, 3, 5],
            ]
        ),
        [[2, 2, 2, 2, 2, 2], [2, 3, 3, 5, 5, 2], [2, 3, 3, 5, 5, 2], [2, 2, 2, 2, 2, 2]],
    ),
    (
        ["lookup_grid", "x", "top_color", [[1001, 5], [2000, 7]], 1, 2, 0],
        G([[1, 1, 0]]),
        [[0, 5]],
    ),
    (  # role 10 of the input ("common": 3, the commonest non-background colour) over a crop
        ["paint_fg", ["crop_color", "x", 1], "x", "common", 0],
        G([[3, 3, 0, 1], [3, 0, 0, 1]]),
        [[3], [3]],
    ),
    (  # the input colour the state lost (2)
        ["paint_fg", ["keep_color", "x", 1, 0], "x", "lost", 0],
        G([[1, 2], [0, 1]]),
        [[2, 0], [0, 2]],
    ),
    (
        ["pad_extend", "x", 0],
        G([[1, 2], [3, 8]]),
        [[0, 1, 2, 0], [1, 1, 2, 2], [3, 3, 8, 8], [0, 3, 8, 0]],
    ),
    (  # cells by column: 3 (x0), 1 (x1), 8 (x2), 6 (x3), 7 (x4); second row reversed
        ["snake_colors", "x", 2, 3, "h", 0],
        G([[0, 1, 0, 6, 0], [3, 0, 8, 0, 7]]),
        [[3, 1, 8], [0, 7, 6]],
    ),
    (
        ["snake_colors", "x", 1, 3, "v", 0],
        G([[0, 5], [4, 0]]),
        [[5, 4, 0]],
    ),
    (  # the two 3-cell objects (4 left, 6 right); the 2-cell 9 is dropped
        ["largest_bars", "x", 8, 0],
        G([[4, 0, 9, 0, 6], [4, 0, 9, 0, 6], [4, 0, 0, 0, 6]]),
        [[4, 6], [4, 6], [4, 6]],
    ),
    (  # corner key 2/3/4/6; frame of 1s; each quadrant of the 2x2 inside takes a corner
        ["corner_quadrants", "x", 0],
        G(
            [
                [2, 1, 1, 1, 1, 3],
                [1, 1, 1, 1, 1, 1],
                [1, 1, 8, 0, 1, 1],
                [1, 1, 8, 8, 1, 1],
                [1, 1, 1, 1, 1, 1],
                [4, 1, 1, 1, 1, 6],
            ]
        ),
        [[2, 0], [4, 6]],
    ),
    (  # vertical lines 1 (x0), 2 (x2); the 5 block is no line
        ["line_colors", "x", 0],
        G([[1, 0, 2, 5, 5], [1, 0, 2, 5, 5], [1, 0, 2, 0, 0]]),
        [[1, 2], [1, 2]],
    ),
    (
        ["line_colors", "x", 0],
        G([[3, 3, 3], [0, 0, 0], [4, 4, 0]]),
        [[3, 3], [4, 4]],
    ),
    (  # two 1-dots in the 8 region, one in the 4 region
        ["most_dotted", "x", 1],
        G([[4, 4, 8, 8, 8], [4, 1, 8, 1, 8], [4, 4, 8, 8, 1]]),
        [[8]],
    ),
    (  # an L of 3s and a piece of 7s fill a 2x3 rectangle
        ["join_pieces", "x", 0],
        G([[3, 3, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 0, 7], [0, 0, 0, 7, 7]]),
        [[3, 3, 7], [3, 7, 7]],
    ),
    (
        ["grow_rows", "x", 0],
        G([[1, 2, 0, 0, 0, 0]]),
        [[1, 2, 0, 0, 0, 0], [1, 2, 2, 0, 0, 0], [1, 2, 2, 2, 0, 0]],
    ),
    (  # coloured cells on the odd rows and columns
        ["sample_lattice", "x", 2, 0],
        G([[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 4, 0, 3]]),
        [[2, 0], [4, 3]],
    ),
    (  # four L pieces, each to the corner its filled corner points at
        ["corner_assemble", "x", 0],
        G(
            [
                [0, 2, 2, 0, 8, 8, 0],
                [0, 0, 2, 0, 8, 0, 0],
                [0, 0, 0, 0, 0, 0, 0],
                [3, 0, 0, 0, 0, 0, 1],
                [3, 3, 0, 0, 0, 1, 1],
            ]
        ),
        [[8, 8, 2, 2], [8, 0, 0, 2], [3, 0, 0, 1], [3, 3, 1, 1]],
    ),
    (  # the 5s' box plus one row above and below
        ["crop_margin", "x", 5, 1, 0],
        G([[0, 8, 0, 8], [0, 5, 0, 5], [0, 8, 0, 8], [0, 0, 0, 0]]),
        [[8, 0, 8], [5, 0, 5], [8, 0, 8]],
    ),
    (  # the 3 slides towards the 2 only, not to the nearer 7
        ["attract_to", "x", 3, 2, 0, 0],
        G([[3, 0, 0, 2], [0, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]]),
        [[0, 0, 3, 2], [0, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]],
    ),
    (  # vertical rays of 8 from the 2, passing the 5
        ["rays_paint", "x", 2, 8, "v", 0, 0],
        G([[2, 0, 0], [5, 5, 0], [0, 0, 0]]),
        [[2, 0, 0], [5, 5, 0], [8, 0, 0]],
    ),
    (  # a horizontal ray stopped by the 5
        ["rays_paint", "x", 2, 8, "h", 1, 0],
        G([[2, 0, 5, 0]]),
        [[2, 8, 5, 0]],
    ),
    (
        ["diag_marks", "x", 8, 0],
        G([[0, 0, 0], [0, 1, 0], [0, 0, 0]]),
        [[8, 0, 8], [0, 1, 0], [8, 0, 8]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_failures_raise() -> None:
    tie = G([[2, 0, 2]])
    with pytest.raises(ValueError):
        compile_program(["crop_most", "x", 2, 1, 8, 0])(tie)
    with pytest.raises(ValueError):
        compile_program(["downscale_auto", "x"])(G([[1, 2], [3, 4]]))
    with pytest.raises(ValueError):
        compile_program(["lookup_grid", "x", "top_color", [[1001, 5]], 1, 2, 0])(G([[2]]))
    with pytest.raises(ValueError):  # key and mask share their colour
        compile_program(["key_mask", "x", "up", 0])(G([[1, 1, 0, 1]]))


def _ctx(pairs: list[tuple[Any, Any]], tests: list[Any], bg: int = 0, depth: int = 0) -> Ctx:
    return Ctx(
        [G(i) for i, _ in pairs] + [G(t) for t in tests], [G(o) for _, o in pairs], bg, depth
    )


def test_generators_fire_on_matching_shapes() -> None:
    kron = _ctx([([[1, 0], [0, 1]], [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])], [])
    assert (1, 0) in list(GENERATORS["kron_eq"](kron))
    assert list(GENERATORS["kron_eq"](_ctx([([[1, 2]], [[1, 2]])], []))) == []
    diag = _ctx([([[1, 0, 2]], [[4, 0], [0, 4]]), ([[3]], [[4]])], [])
    assert list(GENERATORS["count_diag"](diag)) == [(4, 8, 0), (4, 4, 0)]
    row = _ctx([([[1, 2], [0, 0]], [[1, 2]]), ([[0, 3], [0, 0]], [[3]])], [])
    assert ("auto", 0) in list(GENERATORS["color_order"](row))
    ping = _ctx([([[1], [2], [3]], [[1], [2], [3], [2], [1]]), ([[1], [2]], [[1], [2], [1]])], [])
    assert list(GENERATORS["pingpong"](ping)) == [("v", 2)]
    blocky = _ctx([([[1, 1], [1, 1]], [[1]])], [])
    assert list(GENERATORS["downscale_auto"](blocky)) == [()]


def test_new_generators_gate_on_shapes() -> None:
    pad = _ctx([([[1, 2]], [[0, 1, 2, 0], [1, 1, 2, 2], [0, 1, 2, 0]])], [])
    assert list(GENERATORS["pad_extend"](pad)) == [(0,)]
    assert list(GENERATORS["pad_extend"](_ctx([([[1, 2]], [[1, 2]])], []))) == []
    snake = _ctx([([[0, 1, 0, 6], [3, 0, 0, 0], [0, 0, 0, 0]], [[3, 1], [0, 6]])], [])
    assert list(GENERATORS["snake_colors"](snake)) == [(2, 2, "h", 0), (2, 2, "v", 0)]
    bars = _ctx([([[4, 0, 6], [4, 0, 6], [0, 0, 0]], [[4, 6], [4, 6]])], [])
    assert list(GENERATORS["largest_bars"](bars)) == [(8, 0), (4, 0)]
    assert list(GENERATORS["paint_fg"](bars)) == []
    lines = _ctx([([[1, 0, 2], [1, 0, 2], [1, 0, 2]], [[1, 2], [1, 2]])], [])
    assert list(GENERATORS["line_colors"](lines)) == [(0,)]
    assert list(GENERATORS["line_colors"](pad)) == []
    dots = _ctx([([[4, 1, 8, 8]], [[8]]), ([[4, 4, 1, 8]], [[4]])], [])
    assert list(GENERATORS["most_dotted"](dots)) == [(12,), (1,)]
    join = _ctx([([[3, 0, 0], [0, 0, 7]], [[3, 7]])], [])
    assert list(GENERATORS["join_pieces"](join)) == [(0,)]
    grow = _ctx([([[5, 0, 0, 0]], [[5, 0, 0, 0], [5, 5, 0, 0]])], [])
    assert list(GENERATORS["grow_rows"](grow)) == [(0,)]
    lat = _ctx([([[0, 0, 0, 0], [0, 2, 0, 3]], [[2, 2, 3, 3]])], [])
    assert list(GENERATORS["sample_lattice"](lat)) == [(2, 0)]
    margin = _ctx([([[0, 8, 8], [0, 5, 5], [0, 8, 8]], [[8, 8], [5, 5], [8, 8]])], [])
    assert (5, 1, 0) in list(GENERATORS["crop_margin"](margin))
    quad = _ctx([([[0] * 6] * 6, [[0, 0], [0, 0]])], [])
    assert list(GENERATORS["corner_quadrants"](quad)) == [(0,)]


def test_paint_fg_finisher_recolours_with_an_input_role() -> None:
    # crop the 1s; the answer takes the colour of the other (the largest) object
    pairs = [
        ([[3, 3, 3, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 1, 1]], [[0, 3], [3, 3]]),
        ([[4, 4, 4, 4, 0], [1, 1, 0, 0, 0], [0, 1, 0, 0, 0]], [[4, 4], [0, 4]]),
    ]
    s = TaskSolver([(G(i), G(o)) for i, o in pairs], [G([[6, 6, 6, 0], [0, 0, 0, 1]])])
    s.search(400, 5.0)
    assert any(n.expr[0] == "paint_fg" for n in s.solutions())


def test_scale_lookahead_finishes_a_wrong_sized_state() -> None:
    # crop, then upscale by 2: the look-ahead finishes the crop state at once
    pairs = [([[0, 0, 0], [0, 1, 2]], [[1, 1, 2, 2], [1, 1, 2, 2]])]
    s = TaskSolver([(G(i), G(o)) for i, o in pairs], [G([[3, 0], [0, 0]])])
    node = s._apply(s.node_for("x"), "crop_nonbg", (0,))  # type: ignore[arg-type]
    assert node is not None
    s._check(node)
    assert any(n.expr[0] == "upscale" for n in s.exact)


def test_lookup_grid_needs_a_shared_key_and_test_coverage() -> None:
    pairs = [([[1]], [[1, 0]]), ([[1, 1]], [[1, 0]]), ([[2]], [[0, 2]])]
    got = list(GENERATORS["lookup_grid"](_ctx(pairs, [[[2, 2]]])))
    assert ("top_color", [[1000, 1], [2001, 2]], 1, 2, 0) in got
    assert not any(a[0] == "top_color" for a in GENERATORS["lookup_grid"](_ctx(pairs, [[[3]]])))
    one_each = [([[1]], [[1, 0]]), ([[2]], [[0, 2]])]  # one key per pair: memorised
    assert list(GENERATORS["lookup_grid"](_ctx(one_each, [[[2]]]))) == []


def test_recolor_by_prefers_a_default_and_gates_full_tables() -> None:
    # size 2 -> 2, sizes 1 and 3 -> 1; the test has a size-4 object the table lacks
    pairs = [
        ([[5, 0, 5, 5, 0, 5, 5, 5]], [[1, 0, 2, 2, 0, 1, 1, 1]]),
        ([[5, 5, 0, 5]], [[2, 2, 0, 1]]),
    ]
    got = list(GENERATORS["recolor_by"](_ctx(pairs, [[[5, 5, 5, 5, 0, 5, 5]]])))
    assert ("size", [[2, 2]], 1, 8, 1, 0) in got
    assert not any(a[2] == -1 and a[0] == "size" for a in got)


def test_ops_that_only_act_on_the_test_never_make_a_solution() -> None:
    # erasing colour 9 changes nothing on train, only on the test
    s = TaskSolver([(G([[1, 0]]), G([[1, 0]]))], [G([[9, 1]])])
    node = s.node_for("x")
    assert node is not None
    child = s._apply(node, "erase_color", (9, 0))
    assert child is not None and child.tainted
    s._check(child)
    assert child not in s.exact
    grand = s._apply(child, "flip_h", ())
    assert grand is not None and grand.tainted


def _finished_by_cmap(s: TaskSolver) -> bool:
    s.search(200, 5.0)
    return any(n.expr[0] == "recolor" and n.expr[1] == "x" for n in s.solutions())


def test_colour_map_finisher_and_unseen_test_colours() -> None:
    # every train colour is changed: nothing says what colour 7 becomes
    assert not _finished_by_cmap(TaskSolver([(G([[1, 2, 0]]), G([[3, 4, 0]]))], [G([[1, 7]])]))
    # colours 1 and 3 both become 5: the unseen 7 may as well
    many_to_one = TaskSolver([(G([[1, 3, 2, 0]]), G([[5, 5, 2, 0]]))], [G([[1, 7]])])
    assert not _finished_by_cmap(many_to_one)
    # colour 2 is kept as it is: keeping the unseen 7 too is the rule shown
    assert _finished_by_cmap(TaskSolver([(G([[1, 2, 0]]), G([[3, 2, 0]]))], [G([[1, 7]])]))


def test_overlay_parts_infers_the_stacking_order() -> None:
    pairs = [
        ([[1, 1, 2, 0]], [[2, 1]]),  # part 1 (colour 2) shows over part 0
        ([[0, 1, 2, 2]], [[2, 2]]),
    ]
    got = list(GENERATORS["overlay_parts"](_ctx(pairs, [[[1, 0, 0, 2]]])))
    assert ("h2", [1, 0], 0) in got
    clash = [([[1, 0, 2, 0]], [[1, 0]]), ([[1, 0, 2, 0]], [[2, 0]])]
    assert not any(a[0] == "h2" for a in GENERATORS["overlay_parts"](_ctx(clash, [])))


def test_one_cell_targets_learn_no_tables() -> None:
    pairs = [([[1, 1, 0, 2]], [[1]]), ([[3, 0, 4, 4]], [[4]])]
    ctx = _ctx(pairs, [[[5, 5, 0, 6]]])
    assert ctx.tiny
    assert list(GENERATORS["recolor_by"](ctx)) == []
    assert ("largest", 8, 1, 0) in list(GENERATORS["object_color"](ctx))


def test_every_shape_op_has_a_case_and_a_generator() -> None:
    from atlas_actors.arc import ops_shape

    names = {row[0] for row in ops_shape.OP_TABLE}
    assert names - {c[0][0] for c in CASES} == set()
    assert names - set(GENERATORS) == set()


def test_attract_to_rays_paint_and_diag_marks_generators() -> None:
    moved = [
        (
            [[3, 0, 0, 2], [0, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]],
            [[0, 0, 3, 2], [0, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]],
        )
    ]
    assert (3, 2, 0, 0) in list(GENERATORS["attract_to"](_ctx(moved, [])))
    rays = [([[0, 2, 0], [0, 0, 0]], [[0, 2, 0], [0, 8, 0]])]
    got = list(GENERATORS["rays_paint"](_ctx(rays, [])))
    assert (2, 8, "v", 0, 0) in got
    assert not any(a[0] == 2 and a[2] != "v" for a in got)
    diag = [([[0, 0, 0], [0, 1, 0], [0, 0, 0]], [[8, 0, 0], [0, 1, 0], [0, 0, 0]])]
    assert list(GENERATORS["diag_marks"](_ctx(diag, []))) == [(8, 0)]
    side = [([[0, 0, 0], [0, 1, 0], [0, 0, 0]], [[0, 8, 0], [0, 1, 0], [0, 0, 0]])]
    assert list(GENERATORS["diag_marks"](_ctx(side, []))) == []


def test_second_attempt_prefers_a_structurally_different_program() -> None:
    from atlas_actors.arc.solver import _similar

    first = ("rays", ("fill_bbox", "x", 8, 8, 0, 0), 8, "v", 1, 0)
    # same last step on another input, or the first program with a step added: similar
    assert _similar(("rays", ("connect_diag", "x", 5, 8, 0), 8, "v", 1, 0), first)
    assert _similar(("erase_color", first, 5, 0), first)
    # another direction for the last step: a different program
    assert not _similar(("rays", ("fill_bbox", "x", 8, 8, 0, 0), 8, "hv", 1, 0), first)


def test_rays_take_colour_roles_when_the_states_backgrounds_differ() -> None:
    from atlas_actors.arc.infer import g_rays

    # cropped states: one has background 3 and a dot of 5, the other background 5 and
    # a dot of 3; the targets draw a cross of the dot's colour
    states = [G([[3, 3, 3], [3, 5, 3], [3, 3, 3]]), G([[5, 5, 5], [5, 3, 5], [5, 5, 5]])]
    targets = [G([[3, 5, 3], [5, 5, 5], [3, 5, 3]]), G([[5, 3, 5], [3, 3, 3], [5, 3, 5]])]
    args = list(g_rays(Ctx(states, targets, 0, 1)))
    assert (12, "hv", 1, 13) in args
    prog = ["rays", "x", 12, "hv", 1, 13]
    assert all(
        compile_program(prog)(s).tolist() == t.tolist()
        for s, t in zip(states, targets, strict=True)
    )
    # on the task's own input (depth 0) the task background holds: no roles
    assert not any(a[3] == 13 for a in g_rays(Ctx(states, targets, 0, 0)))


def test_rays_all_take_the_background_as_a_role_when_it_differs() -> None:
    from atlas_actors.arc.infer import g_rays_all

    states = [G([[3, 3, 3], [3, 5, 3], [3, 3, 3]]), G([[5, 5, 5], [5, 3, 5], [5, 5, 5]])]
    targets = [G([[3, 5, 3], [5, 5, 5], [3, 5, 3]]), G([[5, 3, 5], [3, 3, 3], [5, 3, 5]])]
    assert ("hv", 1, 13) in list(g_rays_all(Ctx(states, targets, 0, 1)))
    prog = ["rays_all", "x", "hv", 1, 13]
    assert all(
        compile_program(prog)(s).tolist() == t.tolist()
        for s, t in zip(states, targets, strict=True)
    )
    assert not any(a[2] == 13 for a in g_rays_all(Ctx(states, targets, 0, 0)))
