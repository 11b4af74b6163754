"""Shape-changing ARC DSL ops (atlas_actors.arc.ops_shape) and generalisation gates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import Program, compile_program
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
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_primitive_outputs(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    assert compile_program(prog)(grid).tolist() == want


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_standalone_python(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    src = Program.from_json(prog).to_python()
    assert "atlas_actors" not in src.split('"""', 2)[2]
    ns: dict[str, Any] = {}
    exec(src, ns)
    assert np.asarray(ns["transform"](grid)).tolist() == want


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
