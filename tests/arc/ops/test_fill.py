"""The fill ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc import compile_program
from atlas_actors.arc.ops.fill import dot_to_corner, fill_corners, halo, recolor_in_box
from atlas_actors.arc.solver import TaskSolver
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, with_cell

_DOTS_OUT = case_want("dot_to_corner")

_DOTS_IN = G(case_grid("dot_to_corner"))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        fill_corners(G([[4, 0, 4], [0, 0, 0]]), 2, 0)  # no rectangle
    with pytest.raises(ValueError):
        recolor_in_box(G([[1, 0]]), 8, 1, 3, 0, 0)  # no box colour
    with pytest.raises(ValueError):
        dot_to_corner(G([[0, 0, 0], [0, 3, 0], [0, 0, 0]]), 0)  # as near all four


def test_generators_read_parameters_off_the_pairs() -> None:
    a = [[0, 0, 0, 0, 0], [0, 2, 2, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 2]]
    c = ctx([(a, [[3, 3, 3, 3, 0], [3, 2, 2, 3, 0], [3, 3, 3, 3, 0], [0, 0, 0, 0, 2]])])

    assert gen("fill_holes", c) == []  # the outline is not in a hole
    c = ctx([([[5, 5, 5], [5, 0, 5], [5, 5, 5]], [[5, 5, 5], [5, 2, 5], [5, 5, 5]])])
    assert ("square", 2, 0) in gen("fill_holes", c)


def test_frame_in_markers_generator() -> None:
    c = ctx([([[0, 0, 0, 0, 2]], [[0, 0, 0, 0, 2]])])
    assert gen("frame_in_markers", c) == []


def test_recolor_in_box_generator() -> None:
    c = ctx(
        [
            ([[8, 1, 8, 1], [1, 1, 0, 0]], [[8, 3, 8, 1], [3, 3, 0, 0]]),
            ([[1, 8, 0], [1, 8, 1]], [[1, 8, 0], [1, 8, 1]]),
        ]
    )
    assert gen("recolor_in_box", c) == []  # the second pair changes nothing
    c = ctx(
        [([[8, 1, 8, 1], [1, 1, 0, 0], [0, 8, 0, 1]], [[8, 3, 8, 1], [3, 3, 0, 0], [0, 8, 0, 1]])]
    )
    assert gen("recolor_in_box", c) == [(8, 1, 3, 2, 0)]
    # a change the boxes cannot explain (the far 1 changes too)
    c = ctx([([[8, 1, 8, 1], [1, 1, 0, 0]], [[8, 3, 8, 3], [3, 3, 0, 0]])])
    assert gen("recolor_in_box", c) == []


def test_dot_to_corner_generator() -> None:
    assert gen("dot_to_corner", ctx([(_DOTS_IN.tolist(), _DOTS_OUT)])) == [(0,)]
    assert gen("dot_to_corner", ctx([(_DOTS_IN.tolist(), with_cell(_DOTS_OUT, 0, 0, 0))])) == []


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    c = ctx([([[4, 0, 4], [0, 0, 0], [4, 0, 4]], [[4, 0, 4], [0, 2, 0], [4, 0, 4]])])
    assert gen("fill_corners", c) == [(2, 0)]

    a = [[8, 8, 8, 8], [2, 3, 0, 0], [8, 8, 8, 8]]
    c = ctx([(a, [[8, 8, 8, 8], [2, 3, 2, 3], [8, 8, 8, 8]])])
    assert gen("flood_alternate", c) == [(0,)]

    recolour = ctx([([[1, 0]], [[2, 0]])])

    assert gen("fill_corners", recolour) == []

    assert gen("flood_alternate", recolour) == []


def test_search_finds_a_diagonal_halo_after_a_tile() -> None:
    """Targets: the input tiled 2x2, with colour 8 on the background cells diagonal to
    a coloured one (and not on side neighbours): needs halo's diagonal-only mode."""
    rng = np.random.default_rng(3)
    grids = []
    for h, w, c in ((2, 4, 5), (4, 4, 6), (3, 5, 4), (5, 3, 2)):
        g = np.zeros((h, w), dtype=np.int64)
        g[rng.integers(0, h), rng.integers(0, w)] = c
        grids.append(g)
    pairs = [(g, halo(np.tile(g, (2, 2)), 8, 2, 0)) for g in grids[:3]]
    s = TaskSolver(pairs, [grids[3]])
    s.search(4000, max_seconds=20.0)
    assert s.exact
    fn = compile_program(s.solutions()[0].expr)
    want = halo(np.tile(grids[3], (2, 2)), 8, 2, 0)
    assert (fn(grids[3]) == want).all()
    assert (want == 8).sum() > 0 and (
        (want == 8) != (halo(np.tile(grids[3], (2, 2)), 8, 1, 0) == 8)
    ).any()
