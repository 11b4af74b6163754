"""Transposed twins of the ops that work in one orientation only (``op_t(g) =
op(g.T).T``): each run on its base case turned on its side gives that case's answer
turned on its side, and each generator finds its parameters on a transposed task
that the base op cannot fit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import check_case

from atlas_actors.arc import OPS, compile_program
from atlas_actors.arc.infer import GENERATORS, Ctx

TWINS = {
    "bounce_t": "bounce",
    "anchor_copy_t": "anchor_copy",
    "largest_bars_t": "largest_bars",
    "grow_rows_t": "grow_rows",
}
"""Each transposed twin and the op it turns on its side."""


def G(rows: list[list[int]]) -> np.ndarray[Any, Any]:
    return np.array(rows, dtype=np.int64)


def T(rows: list[list[int]]) -> list[list[int]]:
    return G(rows).T.tolist()  # type: ignore[no-any-return]


# (base program, input, expected): the twins get these turned on their side
BASE = [
    (
        ["bounce", "x", 0],
        [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0]],
        [[0, 1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]],
    ),
    (
        ["anchor_copy", "x", 3, 0],
        [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 3, 0], [0, 0, 0, 0, 0]],
        [[4, 3, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 3, 4], [0, 0, 0, 0, 4]],
    ),
    (
        ["largest_bars", "x", 8, 0],
        [[4, 0, 9, 0, 6], [4, 0, 9, 0, 6], [4, 0, 0, 0, 6]],
        [[4, 6], [4, 6], [4, 6]],
    ),
    (
        ["grow_rows", "x", 0],
        [[1, 2, 0, 0, 0, 0]],
        [[1, 2, 0, 0, 0, 0], [1, 2, 2, 0, 0, 0], [1, 2, 2, 2, 0, 0]],
    ),
]

CASES = [([f"{p[0]}_t", *p[1:]], T(g), T(w)) for p, g, w in BASE]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[c[0][0] for c in CASES])
def test_twin_on_a_transposed_case(prog: Any, grid: list[list[int]], want: list[list[int]]) -> None:
    check_case(prog, G(grid), want)


@pytest.mark.parametrize(("prog", "grid", "want"), BASE, ids=[c[0][0] for c in BASE])
def test_twin_differs_from_its_base(
    prog: Any, grid: list[list[int]], want: list[list[int]]
) -> None:
    """On the base case turned on its side, the base op does not give the answer (so
    the twin adds something), and on the base case the twin does not."""
    twin = [f"{prog[0]}_t", *prog[1:]]
    for p, g, w in ((prog, T(grid), T(want)), (twin, grid, want)):
        try:
            got = np.asarray(compile_program(p)(G(g)))
        except ValueError:
            continue
        assert not np.array_equal(got, G(w)), p


def test_every_twin_is_registered_with_a_case_and_a_generator() -> None:
    assert set(TWINS) <= set(OPS) and set(TWINS) <= set(GENERATORS)
    assert {c[0][0] for c in CASES} == set(TWINS)
    for twin, base in TWINS.items():
        assert OPS[twin].kinds == OPS[base].kinds


@pytest.mark.parametrize(("prog", "grid", "want"), BASE, ids=[c[0][0] for c in BASE])
def test_twin_generator_fits_the_transposed_task(
    prog: Any, grid: list[list[int]], want: list[list[int]]
) -> None:
    """The twin's generator yields the base case's parameters on the task turned on its
    side, as the base op's does on the task as it is (a generator that checks the fit
    stays quiet on the other orientation)."""
    op, args = prog[0], tuple(prog[2:])
    upright = Ctx([G(grid)], [G(want)], 0)
    turned = Ctx([G(T(grid))], [G(T(want))], 0)
    assert args in list(GENERATORS[f"{op}_t"](turned))
    assert args in list(GENERATORS[op](upright))
    if op != "bounce":  # bounce's generator only gates on the seeds, without a fit check
        assert args not in list(GENERATORS[f"{op}_t"](upright))
        assert args not in list(GENERATORS[op](turned))
