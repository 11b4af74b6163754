"""Doubts about test predictions (properties every train pair has) and how they order
the two attempts."""

from __future__ import annotations

from typing import Any

import numpy as np

from atlas_actors import Task
from atlas_actors.arc.domain import pick_attempts
from atlas_actors.arc.environment import ARCEnvironment, TrainInvariants
from atlas_actors.types import Candidate, Check, Outcome


def g(rows: list[list[int]]) -> np.ndarray:
    return np.asarray(rows, dtype=np.int64)


# Recolour 1 -> 2 where it touches nothing: outputs keep the shape, change something,
# bring in colour 2 and lose colour 1.
RECOLOR = [
    (g([[1, 0], [0, 3]]), g([[2, 0], [0, 3]])),
    (g([[0, 1, 1]]), g([[0, 2, 2]])),
]


def test_invariants_are_read_off_the_train_pairs() -> None:
    inv = TrainInvariants.of(RECOLOR)
    assert inv.same_shape and inv.changed and inv.several_colors
    assert inv.new_colors == frozenset({2})
    assert not inv.keeps_colors  # colour 1 disappears
    # one pair that changes shape, one that stays the same: no such invariant
    mixed = TrainInvariants.of([*RECOLOR, (g([[1]]), g([[2, 2]]))])
    assert not mixed.same_shape and not mixed.several_colors


def test_each_broken_invariant_is_named() -> None:
    inv = TrainInvariants.of(RECOLOR)
    x = g([[1, 0, 3]])
    assert inv.doubts(x, g([[2, 0, 3]])) == []  # what the rule would answer
    assert inv.doubts(x, g([[2, 0], [0, 3]])) == ["shape"]
    assert inv.doubts(x, g([[5, 0, 3]])) == ["new_color"]  # 5: not in x, new in no pair
    assert inv.doubts(x, x) == ["unchanged"]
    assert inv.doubts(x, g([[0, 0, 0]])) == ["one_color"]
    assert inv.doubts(x, g([[2, 2, 3]])) == []  # RECOLOR loses colours: not an invariant
    keep = TrainInvariants.of([(g([[1, 0]]), g([[0, 1]])), (g([[3, 0]]), g([[0, 3]]))])
    assert keep.keeps_colors
    assert keep.doubts(g([[3, 0, 4]]), g([[4, 3, 3]])) == ["lost_color"]  # 0 is gone


async def test_the_environment_reports_doubts_per_test_prediction() -> None:
    # Flip left-right: a right answer can still break an invariant (a test input that
    # is its own mirror image comes out unchanged), which is why doubts only reorder.
    grids = {
        "train": [
            {"input": [[1, 0], [2, 3]], "output": [[0, 1], [3, 2]]},
            {"input": [[5, 5, 0]], "output": [[0, 5, 5]]},
        ],
        "test": [{"input": [[1, 2, 3]]}, {"input": [[7], [8]]}],
    }
    env = ARCEnvironment()
    await env.reset(Task(id="flip", domain="arc", context={"grids": grids}))
    [flip] = await env.score([["flip_h", "x"]])
    assert flip.success
    assert flip.answers == [[[3, 2, 1]], [[7], [8]]]
    assert flip.doubts == [[], ["unchanged"]]
    [same] = await env.score([["transpose", ["transpose", "x"]]])
    assert same.doubts == [["unchanged"], ["unchanged"]]
    await env.aclose()


def _cand(preds: list[Any], exact: float, doubts: list[list[str]] | None = None) -> Candidate:
    # ``exact`` as a share of 4 train pairs (the tests use 0, 0.25, ..., 1)
    n_exact = round(exact * 4)
    checks = [Check(name=f"train {i}", passed=i < n_exact) for i in range(4)]
    outcome = Outcome(success=False, checks=checks, answers=preds, doubts=doubts)
    return Candidate(solution=preds, fitness=exact, outcome=outcome)


def test_doubted_predictions_go_after_undoubted_ones_of_the_same_tier() -> None:
    a, b, c, d = [[1]], [[2]], [[3]], [[4]]
    ranked = [
        _cand([a, a], 1.0, [["new_color"], []]),
        _cand([b, b], 1.0, [[], []]),
        _cand([c, c], 0.5, [["unchanged"], []]),
        _cand([d, d], 0.5, [[], []]),
    ]
    assert pick_attempts(ranked, 2) == [
        # input 0: the undoubted exact program first, then the doubted one: more train
        # pairs right still beats no doubts
        {"attempt_1": b, "attempt_2": a},
        # input 1: no doubts, the ranking as it was
        {"attempt_1": a, "attempt_2": b},
    ]
    # among partial programs alone, the doubted one moves behind
    assert pick_attempts(ranked[2:], 1) == [{"attempt_1": d, "attempt_2": c}]
    # candidates without doubts (other environments, older results) keep their order
    plain = [_cand([c], 0.5), _cand([d], 0.5)]
    assert pick_attempts(plain, 1) == [{"attempt_1": c, "attempt_2": d}]


def test_a_doubted_top_program_keeps_the_second_attempt() -> None:
    # the top program leaves the test input as it is, which no train pair does; two
    # other exact programs answer without doubts: the first of them goes first, and
    # the top program's answer is still the second attempt (not the other one's)
    a, b, c = [[1]], [[2]], [[3]]
    ranked = [
        _cand([a], 1.0, [["unchanged"]]),
        _cand([b], 1.0, [[]]),
        _cand([c], 1.0, [[]]),
    ]
    assert pick_attempts(ranked, 1) == [{"attempt_1": b, "attempt_2": a}]
    # the same when the top program's answer is doubted among partial programs
    partial = [_cand([a], 0.5, [["shape"]]), _cand([b], 0.5), _cand([c], 0.5)]
    assert pick_attempts(partial, 1) == [{"attempt_1": b, "attempt_2": a}]
