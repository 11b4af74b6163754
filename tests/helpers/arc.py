"""Small builders for the ARC DSL's tests (grids, generator contexts, declared cases)."""

from __future__ import annotations

from typing import Any

import numpy as np

from atlas_actors.arc import OPS, Program
from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS

Rows = list[list[int]]


def G(rows: Any) -> np.ndarray[Any, Any]:
    """A grid (int64) from nested lists."""
    return np.array(rows, dtype=np.int64)


def ctx(pairs: list[tuple[Rows, Rows]], bg: int = 0) -> Ctx:
    """A generator context of train pairs (state, target) and no test input."""
    return Ctx([G(a) for a, _ in pairs], [G(b) for _, b in pairs], bg)


def task_ctx(
    pairs: list[tuple[Any, Any]],
    tests: list[Any],
    bg: int = 0,
    depth: int = 0,
    inputs: list[Any] | None = None,
) -> Ctx:
    """A generator context of train pairs (state, target) and test inputs, at ``depth``,
    with the task's train ``inputs`` the states came from when given."""
    return Ctx(
        [G(i) for i, _ in pairs] + [G(t) for t in tests],
        [G(o) for _, o in pairs],
        bg,
        depth,
        inputs=None if inputs is None else [G(i) for i in inputs],
    )


def gen(op: str, c: Ctx) -> list[Any]:
    """Everything ``op``'s parameter generator yields on ``c``, each checked to make a
    valid program (the proposer drops a program its op's signature rejects, so a
    generator yielding such arguments would lose every fit it finds)."""
    out = list(GENERATORS[op](c))
    for args in out:
        Program((op, "x", *args))
    return out


def case_grid(op: str, i: int = 0) -> Rows:
    """The input grid of ``op``'s ``i``-th declared case."""
    rows: Rows = np.asarray(OPS[op].cases[i].grid).tolist()
    return rows


def case_want(op: str, i: int = 0) -> Rows:
    """The expected output of ``op``'s ``i``-th declared case."""
    return [list(r) for r in OPS[op].cases[i].want]


def with_cell(grid: Rows, y: int, x: int, v: int) -> Rows:
    """A copy of ``grid`` with cell (y, x) set to ``v``."""
    out = [r[:] for r in grid]
    out[y][x] = v
    return out


def below_two(g: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A per-cell rule for the learned ops' tests: under a 2, background becomes 3 and
    a 1 becomes 4."""
    out = g.copy()
    up = np.full_like(g, -1)
    up[1:] = g[:-1]
    out[(g == 0) & (up == 2)] = 3
    out[(g == 1) & (up == 2)] = 4
    return out


def below_two_grids() -> list[np.ndarray[Any, Any]]:
    """Four random 6x7 grids of 0, 1 and 2 (fixed seed): three train inputs for
    :func:`below_two`, then a test input."""
    rng = np.random.default_rng(0)
    return [
        np.where(rng.random((6, 7)) < 0.3, 1, np.where(rng.random((6, 7)) < 0.2, 2, 0))
        for _ in range(4)
    ]


ROW_SHIFT_PROGRAM = (
    "def transform(grid):\n    return [[(v + i) % 10 for v in row] for i, row in enumerate(grid)]"
)
"""The Python program that solves :func:`row_shift_task`."""


def row_shift_task() -> dict[str, Any]:
    """An ARC task (JSON grids) no DSL program fits: each cell plus its row index, mod
    10, on random grids; the first such task whose test answer the environment has no
    doubt about (so a search that finds the program stops on it)."""
    from atlas_actors.arc.environment import TrainInvariants

    def pair(rng: np.random.Generator, h: int, w: int) -> tuple[Any, Any]:
        x = rng.integers(0, 10, (h, w))
        return x, (x + np.arange(h)[:, None]) % 10

    for seed in range(100):
        rng = np.random.default_rng(seed)
        train = [pair(rng, 6, 6), pair(rng, 5, 7), pair(rng, 7, 5)]
        test_in, test_out = pair(rng, 6, 4)
        if not TrainInvariants.of(train).doubts(test_in, test_out):
            break
    return {
        "train": [{"input": x.tolist(), "output": y.tolist()} for x, y in train],
        "test": [{"input": test_in.tolist(), "output": test_out.tolist()}],
    }
