"""The stamps ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import pytest

from atlas_actors.arc.ops.stamps import motif_key, role_stamp, seed_motif, stamp_markers
from tests.helpers.arc import G, ctx, gen


def K(dy: int, dx: int, s: int, own: int) -> int:
    return motif_key(dy, dx, s, own)


# a zigzag below each seed: the seed's own colour, period two rows down
_ZIG = [[K(1, -1, 1, 1), 0], [K(1, 1, 1, 1), 0], [K(0, 0, 1, 1), 0]]


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        stamp_markers(G([[2, 3, 0, 1]]), 1, 0)  # even template width
    with pytest.raises(ValueError):
        role_stamp(G([[2, 3]]), [[16, 0]], 0)  # no centre cell
    with pytest.raises(ValueError):
        seed_motif(G([[0, 0]]), _ZIG, 2, 0, -1, 0)  # no seed
    with pytest.raises(ValueError):
        seed_motif(G([[1] * 13]), _ZIG, 2, 0, -1, 0)  # too many seeds


def test_stamp_markers_generator() -> None:
    a = [[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 0, 1, 0], [0, 0, 0, 5, 0, 0, 1]]
    b = [[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 2, 3, 4], [0, 0, 0, 5, 0, 2, 3]]
    assert gen("stamp_markers", ctx([(a, b)])) == [(1, 0)]
    b = [[2, 3, 4, 5, 0, 0, 0], [0, 0, 0, 5, 2, 3, 4], [0, 0, 0, 5, 0, 0, 1]]
    assert gen("stamp_markers", ctx([(a, b)])) == []


def test_role_stamp_generator() -> None:
    a = [[0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 6, 0]]
    b = [[0, 3, 0, 0, 0], [3, 3, 3, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 6, 0], [0, 0, 6, 6, 6]]
    assert gen("role_stamp", ctx([(a, b)])) == [([[17, 0], [23, 0], [25, 0], [31, 0]], 0)]
    b[0][0] = 3  # a cell that the 6 does not grow
    assert gen("role_stamp", ctx([(a, b)])) == []


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
    out = seed_motif(G([[0, 6, 0]] + [[0, 0, 0]] * 4), table, vy, vx, m, bg)
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
    out = seed_motif(G([z, z, [0, 0, 0, 0, 0, 6, 0]]), table, vy, vx, m, bg)
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
