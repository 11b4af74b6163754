"""Turned twins of the ops that work in one orientation only (``op_r(g, k) =
unrigid(op(rigid(g, k)), k)``): on each base case turned by any rigid transform the
twin gives that case's answer turned the same way, and its generator finds the
transform and the base parameters on the turned task."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case
from test_arc_objects import _KA, _KB

from atlas_actors.arc import OPS, compile_program, ops_turned
from atlas_actors.arc.infer import GENERATORS, Ctx
from atlas_actors.arc.prims import rigid

TWINS = {f"{t[0]}_r": t[0] for t in ops_turned._TWINS}
KS = {f"{t[0]}_r": t[3] for t in ops_turned._TWINS}
"""Each turned twin and the op it turns."""

INV = {1: 3, 2: 2, 3: 1, 4: 4, 5: 5, 6: 6, 7: 7}


# (base program, input, expected); the twins get these under every rigid transform
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
    (
        ["count_diag", "x", 8, 8, 0],
        [[1, 0, 0], [0, 0, 2], [0, 0, 0], [3, 3, 0]],
        [[8, 0, 0], [0, 8, 0], [0, 0, 8]],
    ),
    (
        ["palette_stripes", "x", "h", 0],
        [[2, 1, 4], [5, 5, 5], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]],
        [[2, 1, 4], [5, 5, 5], [2, 2, 2], [1, 1, 1], [4, 4, 4], [2, 2, 2]],
    ),
    (
        ["stripes", "x", 0],
        [[0, 1, 0, 2, 0, 0, 0, 0]],
        [[0, 1, 0, 2, 0, 1, 0, 2]],
    ),
    (
        ["fill_squares", "x", 2, 2, 0, 3],
        [[0, 0, 0], [0, 0, 0], [5, 0, 0]],
        [[3, 3, 0], [3, 3, 0], [5, 0, 0]],
    ),
    (
        ["alternate_cells", "x", 1, 2, 0],
        [[1, 1, 0], [0, 0, 0]],
        [[1, 2, 0], [0, 0, 0]],
    ),
    (
        ["panel_transforms", "x", [0, 4, 2], 0],
        [[1, 2, 5, 0, 0, 5, 0, 0], [3, 0, 5, 0, 0, 5, 0, 0]],
        [[1, 2, 5, 2, 1, 5, 0, 3], [3, 0, 5, 0, 3, 5, 2, 1]],
    ),
    (
        ["panel_colors", "x", sorted([[_KA, 4], [_KB, 6]]), "rows", 3, 0],
        [[1, 1, 0, 2, 2], [1, 0, 0, 2, 0]],
        [[4, 4, 4], [6, 6, 6]],
    ),
    (
        ["canvas", "x", 2, 2, 0],
        [[1, 2]],
        [[1, 2, 0, 0], [0, 0, 0, 0]],
    ),
]


def turn(rows: list[list[int]], k: int) -> list[list[int]]:
    return rigid(G(rows), k).tolist()  # type: ignore[no-any-return]


def test_unrigid_undoes_rigid() -> None:
    g = G([[1, 2, 3], [4, 5, 6]])
    for k in range(8):
        assert np.array_equal(ops_turned.unrigid(rigid(g, k), k), g)


CASES = [
    ([f"{p[0]}_r", "x", INV[j], *p[2:]], turn(g, j), turn(w, j))
    for p, g, w in BASE
    for j in range(1, 8)
    if INV[j] in KS[f"{p[0]}_r"]
]


@pytest.mark.parametrize(
    ("prog", "grid", "want"), CASES, ids=[f"{c[0][0]}-{c[0][2]}" for c in CASES]
)
def test_twin_on_a_turned_case(prog: Any, grid: list[list[int]], want: list[list[int]]) -> None:
    check_case(prog, G(grid), want)


@pytest.mark.parametrize(("prog", "grid", "want"), BASE, ids=[c[0][0] for c in BASE])
def test_the_base_op_misses_some_turned_case(
    prog: Any, grid: list[list[int]], want: list[list[int]]
) -> None:
    """The twin adds something: under some transform the base op alone is wrong."""
    missed = 0
    for j in range(1, 8):
        try:
            got = np.asarray(compile_program(prog)(rigid(G(grid), j)))
        except ValueError:
            missed += 1
            continue
        missed += not np.array_equal(got, rigid(G(want), j))
    assert missed > 0


def test_every_twin_is_registered_with_its_ops_kinds() -> None:
    assert set(TWINS) <= set(OPS) and set(TWINS) <= set(GENERATORS)
    assert {b[0][0] for b in BASE} == set(TWINS.values())
    for twin, base in TWINS.items():
        assert OPS[twin].kinds == ("g", "r", *OPS[base].kinds[1:])


@pytest.mark.parametrize(("prog", "grid", "want"), BASE, ids=[c[0][0] for c in BASE])
def test_twin_generator_finds_the_transform(
    prog: Any, grid: list[list[int]], want: list[list[int]]
) -> None:
    """On the task turned by j, the twin's generator yields the inverse of j with the
    base case's parameters, which is what the base op's generator yields upright."""
    op, args = prog[0], tuple(prog[2:])
    assert args in list(GENERATORS[op](Ctx([G(grid)], [G(want)], 0)))
    for j in range(1, 8):
        if INV[j] not in KS[f"{op}_r"]:
            continue
        turned = Ctx([G(turn(grid, j))], [G(turn(want, j))], 0)
        assert (INV[j], *args) in list(GENERATORS[f"{op}_r"](turned))
