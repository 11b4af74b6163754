"""The search over DSL programs (atlas_actors.arc.solver): its finishers (colour map,
paint with an input role, one scaling step), taint of test-only changes, the second
attempt, and the grids it accepts."""

from __future__ import annotations

import time

import numpy as np
import pytest

from atlas_actors.arc.solver import ApplyCache, TaskSolver, _similar, _valid
from tests.helpers.arc import G


def _finished_by_cmap(s: TaskSolver) -> bool:
    s.search(200, 5.0)
    return any(n.expr[0] == "recolor" and n.expr[1] == "x" for n in s.solutions())


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


def test_colour_map_finisher_and_unseen_test_colours() -> None:
    # every train colour is changed: nothing says what colour 7 becomes
    assert not _finished_by_cmap(TaskSolver([(G([[1, 2, 0]]), G([[3, 4, 0]]))], [G([[1, 7]])]))
    # colours 1 and 3 both become 5: the unseen 7 may as well
    many_to_one = TaskSolver([(G([[1, 3, 2, 0]]), G([[5, 5, 2, 0]]))], [G([[1, 7]])])
    assert not _finished_by_cmap(many_to_one)
    # colour 2 is kept as it is: keeping the unseen 7 too is the rule shown
    assert _finished_by_cmap(TaskSolver([(G([[1, 2, 0]]), G([[3, 2, 0]]))], [G([[1, 7]])]))


def test_second_attempt_prefers_a_structurally_different_program() -> None:

    first = ("rays", ("fill_bbox", "x", 8, 8, 0, 0), 8, "v", 1, 0)
    # same last step on another input, or the first program with a step added: similar
    assert _similar(("rays", ("connect_diag", "x", 5, 8, 0), 8, "v", 1, 0), first)
    assert _similar(("erase_color", first, 5, 0), first)
    # another direction for the last step: a different program
    assert not _similar(("rays", ("fill_bbox", "x", 8, 8, 0, 0), 8, "hv", 1, 0), first)


def test_a_swap_map_finishes_a_test_input_with_the_missing_half() -> None:
    # the train pairs show 1 <-> 2 and 3 -> 4; the test input has a 4, which no train
    # input has: the solver's colour-map finisher swaps it back to 3
    train = [
        (np.array([[1, 2, 3]]), np.array([[2, 1, 4]])),
        (np.array([[2, 3]]), np.array([[1, 4]])),
    ]
    s = TaskSolver(train, [np.array([[4, 1]])])
    s.search(2000, max_seconds=5.0)
    assert s.exact
    best = s.solutions()[0]
    assert best.outs[-1].tolist() == [[3, 2]]


@pytest.mark.parametrize(
    ("grid", "ok"),
    [
        (np.array([[0, 9], [3, 4]]), True),
        (np.array([[1, -1]]), False),  # negative: huge once read as unsigned
        (np.array([[10]]), False),
        (np.array([[-128]], dtype=np.int8), False),
        (np.array([[7]], dtype=np.uint8), True),
        (np.array([[1, 2], [3, -4]]).T, False),  # a non-contiguous view
        (np.array([[1, 2], [3, 4]])[:, ::-1], True),
        (np.zeros((31, 2), dtype=np.int64), False),
        (np.zeros((0, 2), dtype=np.int64), False),
        (np.zeros((2, 2)), False),  # floats are not grids
        ([[1]], False),
    ],
)
def test_valid_grids(grid: object, ok: bool) -> None:
    assert _valid(grid) is ok


def _small_solver(**kw: object) -> TaskSolver:
    pairs = [([[1, 0, 0], [0, 2, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0], [3, 3, 3]])]
    return TaskSolver([(G(i), G(o)) for i, o in pairs], [G([[0, 1], [2, 0]])], **kw)  # type: ignore[arg-type]


def test_the_depth_limit_rises_with_the_budget() -> None:
    fixed = _small_solver(max_depth=1, deepen_after=None)
    fixed.search(3000, 1e9)
    assert max(n.depth for n in fixed.nodes) == 1
    assert not fixed.open()  # depth 1 exhausted, nothing more to do
    growing = _small_solver(max_depth=1, deepen_after=200)
    growing.search(3000, 1e9)
    assert growing.depth_limit >= 2
    assert max(n.depth for n in growing.nodes) >= 2
    assert growing.applications > fixed.applications


def test_a_budgeted_search_finds_the_same_states_whatever_the_clock() -> None:
    runs = []
    for _ in range(2):
        s = _small_solver(deepen_after=300)
        s.search(2000, 1e9)
        runs.append([str(n.expr) for n in s.nodes])
    assert runs[0] == runs[1]


def test_a_passed_wall_deadline_stops_a_search_step() -> None:
    s = _small_solver()
    s.search(2000, 1e9, deadline=time.monotonic() - 1)
    assert s.applications == 0


def test_an_answer_that_breaks_a_view_kept_on_train_ranks_after_one_that_keeps_it() -> None:
    # train: colours 1 and 2 only; the test input also has 5
    s = TaskSolver([(G([[1, 2], [0, 0]]), G([[2, 1], [0, 0]]))], [G([[5, 1], [0, 3]])])
    flip = s.node_for(("flip_h", "x"))
    erase = s.node_for(("erase_color", ("flip_h", "x"), 5, 0))
    assert flip is not None and erase is not None
    # both fit the train pair; cycling the colours commutes with both on the train
    # input, and with erasing 5 not on the test input (its 4 would become 5)
    assert s.view_breaks(flip) == 0
    assert s.view_breaks(erase) >= 1
    longer = s.node_for(("flip_v", ("flip_v", ("flip_h", "x"))))  # flip's answer, 3 ops
    assert longer is not None and s.view_breaks(longer) == 0
    s.exact = [longer, erase]
    assert s.solutions()[0] is erase  # simplest first
    s.check_views = True
    assert s.solutions()[0] is longer


def test_queued_states_are_packed_and_give_back_the_same_grids() -> None:
    s = _small_solver()
    s.search(1500, 1e9)
    packed = [n for n in s.nodes if n.packed]
    assert len(packed) > len(s.nodes) // 2  # the open states keep bytes, not arrays
    for node in packed[:300]:
        again = s.run_expr(node.expr)  # computed afresh from the program
        assert again is not None
        assert [(o.dtype, o.shape, o.tolist()) for o in node.outs] == [
            (a.dtype, a.shape, a.tolist()) for a in again
        ]
    node = packed[0]
    node.outs[0][0, 0] = 7  # each read is a fresh array: the state is not changed
    assert node.outs[0].tolist() == s.run_expr(node.expr)[0].tolist()  # type: ignore[index]


def test_a_long_search_keeps_at_most_max_states_and_still_finds_the_program() -> None:
    # the small task's answer (rays down from the bottom row) needs a few ops; with a
    # low cap the search prunes its worst open states several times and still gets there
    free = _small_solver()
    free.search(20000, 1e9)
    capped = _small_solver(max_states=600)
    capped.search(20000, 1e9)
    assert capped.pruned > 0 and len(capped.nodes) <= 600 + 200  # one expansion past the cap
    assert len(free.nodes) > 600 and free.pruned == 0
    assert capped.frontier and all(e[2] in capped.nodes for e in capped.frontier[:50])
    assert free.exact and capped.solutions()[0].expr == free.solutions()[0].expr


def test_the_apply_cache_starts_over_at_its_byte_bound() -> None:
    s = _small_solver(cache=ApplyCache(max_bytes=20_000))
    s.search(1500, 1e9)
    assert 0 < s.cache.bytes < 20_000 + 2_000
    same = _small_solver()
    same.search(1500, 1e9)
    assert [str(n.expr) for n in s.nodes] == [str(n.expr) for n in same.nodes]
