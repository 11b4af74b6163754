"""DSL ops of :mod:`atlas_actors.arc.ops_stamps` (stamps and periodic patterns):
primitives on hand-made grids (compiled and as standalone Python) and their parameter
generators on tiny hand-made tasks (they fire with the right parameters, and stay
quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case, check_registered, ctx, gen

from atlas_actors.arc import ops_stamps as ost


def K(dy: int, dx: int, s: int, own: int) -> int:
    return ost._motif_key(dy, dx, s, own)


NEW_OPS = {"seed_motif"}

# a zigzag below each seed: the seed's own colour, period two rows down
_ZIG = [[K(1, -1, 1, 1), 0], [K(1, 1, 1, 1), 0], [K(0, 0, 1, 1), 0]]

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    (
        ["seed_motif", "x", _ZIG, 2, 0, -1, 0],
        G([[0, 2, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]),
        [[0, 2, 0, 0, 0], [2, 0, 2, 0, 0], [0, 2, 0, 0, 0], [2, 0, 2, 0, 0]],
    ),
    # two seeds of two colours; the motif is clipped at the edges
    (
        ["seed_motif", "x", _ZIG, 2, 0, -1, 0],
        G([[3, 0, 0, 4], [0, 0, 0, 0], [0, 0, 0, 0]]),
        [[3, 0, 0, 4], [0, 3, 4, 0], [3, 0, 0, 4]],
    ),
    # a fixed colour 5 both ways along a diagonal step, and a one-off cell of 1
    (
        [
            "seed_motif",
            "x",
            [[K(0, 0, 1, 0), 5], [K(0, 0, -1, 0), 5], [K(0, 1, 0, 0), 1]],
            1,
            1,
            -1,
            0,
        ],
        G([[0, 0, 0, 0], [0, 8, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]),
        [[5, 0, 0, 0], [0, 8, 1, 0], [0, 0, 5, 0], [0, 0, 0, 5]],
    ),
    # only the 2s are seeds: the 5 wall stays and blocks nothing but its own cell
    (
        ["seed_motif", "x", [[K(0, 0, 1, 1), 0]], 0, 2, 2, 0],
        G([[2, 0, 5, 0, 0], [0, 0, 0, 0, 0]]),
        [[2, 0, 5, 0, 2], [0, 0, 0, 0, 0]],
    ),
    # no step: a plain stamp
    (
        ["seed_motif", "x", [[K(-1, 0, 0, 1), 0], [K(1, 0, 0, 0), 7]], 0, 0, -1, 0],
        G([[0, 0], [6, 0], [0, 0]]),
        [[6, 0], [6, 0], [7, 0]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES)
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_new_ops_registered_with_cases_and_generators() -> None:
    check_registered(ost, NEW_OPS, CASES)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        ost.seed_motif(G([[0, 0]]), _ZIG, 2, 0, -1, 0)  # no seed
    with pytest.raises(ValueError):
        ost.seed_motif(G([[1] * 13]), _ZIG, 2, 0, -1, 0)  # too many seeds


def test_seed_motif_generator() -> None:
    c = ctx(
        [
            (
                [[0, 2, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]],
                [[0, 2, 0, 0, 0], [2, 0, 2, 0, 0], [0, 2, 0, 0, 0], [2, 0, 2, 0, 0]],
            ),
            (
                [[0, 0, 0, 4], [0, 0, 0, 0], [0, 0, 0, 0]],
                [[0, 0, 0, 4], [0, 0, 4, 0], [0, 0, 0, 4]],
            ),
        ]
    )
    [(table, vy, vx, m, bg)] = gen("seed_motif", c)
    assert (vy, vx, m, bg) == (2, 0, -1, 0)
    assert sorted(map(tuple, table)) == sorted(map(tuple, _ZIG))
    # the found program continues the zigzag on a taller grid
    out = ost.seed_motif(G([[0, 6, 0]] + [[0, 0, 0]] * 4), table, vy, vx, m, bg)
    assert out.tolist() == [[0, 6, 0], [6, 0, 6], [0, 6, 0], [6, 0, 6], [0, 6, 0]]


def test_seed_motif_generator_seed_colour() -> None:
    # two walls of 5 (too many cells to be seeds); the 3s shoot dotted rays right
    wall = [5, 5, 5, 5, 5, 5, 5]
    c = ctx(
        [
            ([wall, [3, 0, 0, 0, 0, 0, 0], wall], [wall, [3, 0, 3, 0, 3, 0, 3], wall]),
            ([wall, [0, 3, 0, 0, 0, 0, 0], wall], [wall, [0, 3, 0, 3, 0, 3, 0], wall]),
        ]
    )
    assert gen("seed_motif", c) == [([[K(0, 0, 1, 1), 0]], 0, 2, 3, 0)]


def test_seed_motif_generator_one_sided() -> None:
    # two dotted rows grow rightwards only from each seed (nothing to its left)
    z = [0] * 7
    c = ctx(
        [
            ([z, [0, 0, 4, 0, 0, 0, 0]], [[0, 0, 4, 0, 4, 0, 4], [0, 0, 4, 0, 4, 0, 4]]),
            ([z, [0, 0, 0, 2, 0, 0, 0]], [[0, 0, 0, 2, 0, 2, 0], [0, 0, 0, 2, 0, 2, 0]]),
        ]
    )
    [(table, vy, vx, m, bg)] = gen("seed_motif", c)
    assert (vy, vx, m, bg) == (0, 2, -1, 0)
    assert sorted(map(tuple, table)) == sorted([(K(-1, 0, 1, 1), 0), (K(0, 0, 1, 1), 0)])
    out = ost.seed_motif(G([z, z, [0, 0, 0, 0, 0, 6, 0]]), table, vy, vx, m, bg)
    assert out.tolist() == [z, [0, 0, 0, 0, 0, 6, 0], [0, 0, 0, 0, 0, 6, 0]]


def test_seed_motif_generator_no_cut_stamp() -> None:
    # a halo of 7 around the 5, on 5 x 5 grids
    z = [0] * 5
    full = (
        [z, z, [0, 0, 5, 0, 0], z, z],
        [z, [0, 7, 7, 7, 0], [0, 7, 5, 7, 0], [0, 7, 7, 7, 0], z],
    )
    cut = ([[5, 0, 0, 0, 0], z, z, z, z], [[5, 7, 0, 0, 0], [7, 7, 0, 0, 0], z, z, z])
    [(table, vy, vx, m, bg)] = gen("seed_motif", ctx([full, full, full]))
    assert (len(table), vy, vx, m, bg) == (8, 0, 0, -1, 0)
    # a plain stamp cut by the grid's edge is not trusted (and no step fits)
    assert gen("seed_motif", ctx([full, full, cut])) == []
    # too few painted cells for the motif's size
    assert gen("seed_motif", ctx([full])) == []


def test_seed_motif_generator_quiet() -> None:
    # the painted colour follows no rule (3 next to one seed, 4 next to the other)
    c = ctx(
        [
            ([[0, 2, 0], [0, 0, 0]], [[0, 2, 0], [0, 3, 0]]),
            ([[0, 2, 0], [0, 0, 0]], [[0, 2, 0], [0, 4, 0]]),
        ]
    )
    assert gen("seed_motif", c) == []
    # a cell is erased: not a painting task
    c = ctx([([[0, 2, 1], [0, 0, 0]], [[0, 2, 0], [0, 2, 0]])])
    assert gen("seed_motif", c) == []
