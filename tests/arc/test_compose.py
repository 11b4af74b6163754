"""Composition in the ARC solver: target-shaped states layered over a base state."""

from __future__ import annotations

from typing import Any

import numpy as np

from atlas_actors.arc import compile_program, solver
from atlas_actors.arc.solver import TaskSolver

Grid = np.ndarray[Any, Any]


def G(rows: list[list[int]]) -> Grid:
    return np.array(rows, dtype=np.int64)


def _mirror_task() -> tuple[list[tuple[Grid, Grid]], list[Grid]]:
    """Each target is its input with the left-right and the up-down mirror drawn on."""
    inputs = [
        G([[1, 0, 0], [0, 0, 0], [0, 0, 0]]),
        G([[0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]),
        G([[0, 0], [3, 0], [0, 0], [0, 0]]),
    ]
    pairs = []
    for g in inputs:
        t = g.copy()
        for m in (g[:, ::-1], g[::-1, :]):
            t = np.where(m != 0, m, t)
        pairs.append((g, t))
    return pairs, [G([[0, 0, 4], [0, 0, 0]])]


def _offer(s: TaskSolver, *exprs: Any) -> None:
    for e in exprs:
        node = s.node_for(e)
        assert node is not None
        s._check(node)


def test_two_mirror_layers_over_the_input_fit_every_pair() -> None:
    pairs, tests = _mirror_task()
    s = TaskSolver(pairs, tests)
    _offer(s, ("flip_h", "x"), ("flip_v", "x"))
    assert not s.exact  # neither mirror alone fits
    s.compose()
    assert s.exact
    prog = s.exact[0].expr
    assert prog[0] == "layer"
    fn = compile_program(prog)
    for g, t in pairs:
        assert (fn(g) == t).all()
    assert fn(tests[0]).tolist() == [[4, 0, 4], [0, 0, 4]]


def test_a_layer_with_a_wrong_cell_is_never_used() -> None:
    pairs, tests = _mirror_task()
    s = TaskSolver(pairs, tests)
    # rot180 paints the opposite corner, which no target has: not a piece
    _offer(s, ("flip_h", "x"), ("rigid", "x", 2))
    s.compose()
    assert s.exact == []


def test_long_compositions_are_refused(monkeypatch: Any) -> None:
    pairs, tests = _mirror_task()
    long_pieces = (
        ("flip_h", ("flip_h", ("flip_h", "x"))),
        ("flip_v", ("flip_h", ("flip_h", "x"))),
    )  # the same pieces, each behind two steps that cancel out: 8 ops in all
    s = TaskSolver(pairs, tests)
    _offer(s, *long_pieces)
    s.compose()
    assert s.exact == []
    monkeypatch.setattr(solver, "MAX_DEPTH", 10)
    s = TaskSolver(pairs, tests)
    _offer(s, *long_pieces)
    s.compose()
    assert s.exact  # refused for its length alone
