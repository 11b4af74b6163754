"""The connect ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

from tests.helpers.arc import ctx, gen


def test_generators_read_parameters_off_the_pairs() -> None:
    c = ctx([([[1, 0, 1, 0, 0, 1]], [[1, 2, 1, 0, 0, 1]])])
    assert (-1, 2, "h", 1, 0) in gen("fill_gaps", c)

    c = ctx([([[8, 0, 0], [0, 0, 2]], [[8, 0, 0], [4, 4, 2]])])
    assert (8, 2, "v", 4, 0) in gen("connect_l", c)


def test_bridge_generator() -> None:
    c = ctx([([[2, 0, 0, 3], [2, 0, 0, 3]], [[2, 5, 5, 3], [2, 5, 5, 3]])])
    assert gen("bridge", c) == [(5, 0, 0)]
    c = ctx([([[2, 0, 0, 3], [2, 0, 0, 3]], [[2, 5, 0, 3], [2, 0, 0, 3]])])
    assert gen("bridge", c) == []


def test_meet_middle_generator() -> None:
    c = ctx([([[3], [0], [0], [0], [4]], [[3], [3], [5], [4], [4]])])
    assert gen("meet_middle", c) == [(5, "v", 0)]
    c = ctx([([[3], [0], [0], [0], [4]], [[3], [3], [5], [5], [4]])])
    assert gen("meet_middle", c) == []
