"""The rays ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc import compile_program
from atlas_actors.arc.grids import DIRS
from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.rays import g_rays, g_rays_all, pointer_ray, ray_to_wall, rays, wall_rays
from tests.helpers.arc import G, ctx, gen, task_ctx


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        wall_rays(G([[5, 5], [5, 5]]), 2, 1, 0)  # two walls
    with pytest.raises(ValueError):
        pointer_ray(G([[1, 0, 2]]), -1, "away", "line", "marker", 0)  # one colour each
    with pytest.raises(ValueError):
        ray_to_wall(G([[1, 0, 1], [0, 0, 0]]), 0)  # no walls


def test_pointer_ray_generator() -> None:
    c = ctx(
        [
            (
                [[0, 2, 0, 0, 0], [1, 2, 2, 0, 0], [0, 2, 0, 0, 0]],
                [[0, 2, 0, 0, 0], [1, 2, 2, 1, 1], [0, 2, 0, 0, 0]],
            ),
        ]
    )
    assert gen("pointer_ray", c) == [(-1, "away", "line", "marker", 0)]
    c = ctx([([[0, 2, 0], [1, 2, 0]], [[0, 2, 0], [1, 2, 4]])])
    assert gen("pointer_ray", c) == []


def test_ray_to_wall_generator() -> None:
    c = ctx([([[1, 0, 0, 1]], [[1, 1, 1, 1]])])
    assert gen("ray_to_wall", c) == [(0,)]
    assert gen("ray_to_wall", ctx([([[1, 0, 0, 1]], [[0, 0, 0, 1]])])) == []


def test_rays_paint_generator() -> None:
    rays = [([[0, 2, 0], [0, 0, 0]], [[0, 2, 0], [0, 8, 0]])]
    got = list(GENERATORS["rays_paint"](task_ctx(rays, [])))
    assert (2, 8, "v", 0, 0) in got
    assert not any(a[0] == 2 and a[2] != "v" for a in got)


def test_rays_take_colour_roles_when_the_states_backgrounds_differ() -> None:
    # cropped states: one has background 3 and a dot of 5, the other background 5 and
    # a dot of 3; the targets draw a cross of the dot's colour
    states = [G([[3, 3, 3], [3, 5, 3], [3, 3, 3]]), G([[5, 5, 5], [5, 3, 5], [5, 5, 5]])]
    targets = [G([[3, 5, 3], [5, 5, 5], [3, 5, 3]]), G([[5, 3, 5], [3, 3, 3], [5, 3, 5]])]
    args = list(g_rays(Ctx(states, targets, 0, 1)))
    assert (12, "hv", 1, 13) in args
    prog = ["rays", "x", 12, "hv", 1, 13]
    assert all(
        compile_program(prog)(s).tolist() == t.tolist()
        for s, t in zip(states, targets, strict=True)
    )
    # on the task's own input (depth 0) the task background holds: no roles
    assert not any(a[3] == 13 for a in g_rays(Ctx(states, targets, 0, 0)))


def test_rays_all_take_the_background_as_a_role_when_it_differs() -> None:
    states = [G([[3, 3, 3], [3, 5, 3], [3, 3, 3]]), G([[5, 5, 5], [5, 3, 5], [5, 5, 5]])]
    targets = [G([[3, 5, 3], [5, 5, 5], [3, 5, 3]]), G([[5, 3, 5], [3, 3, 3], [5, 3, 5]])]
    assert ("hv", 1, 13) in list(g_rays_all(Ctx(states, targets, 0, 1)))
    prog = ["rays_all", "x", "hv", 1, 13]
    assert all(
        compile_program(prog)(s).tolist() == t.tolist()
        for s, t in zip(states, targets, strict=True)
    )
    assert not any(a[2] == 13 for a in g_rays_all(Ctx(states, targets, 0, 0)))


def test_ray_detour_generator() -> None:
    a = [[0, 0, 0, 0], [0, 5, 0, 0], [0, 0, 0, 0], [0, 2, 0, 2]]
    b = [[0, 0, 2, 2], [0, 5, 2, 2], [0, 2, 2, 2], [0, 2, 0, 2]]
    assert gen("ray_detour", ctx([(a, b)])) == [(2, "up", 1, 0)]
    # plain rays (no obstacle met): left to the plain rays op
    a2 = [[0, 0, 0], [0, 0, 0], [2, 0, 2]]
    b2 = [[2, 0, 2], [2, 0, 2], [2, 0, 2]]
    assert gen("ray_detour", ctx([(a2, b2)])) == []
    # a cell erased: quiet
    b3 = [[0, 0, 2, 2], [0, 0, 2, 2], [0, 2, 2, 2], [0, 2, 0, 2]]
    assert gen("ray_detour", ctx([(a, b3)])) == []
    # two colours painted, each ray its source's colour
    a4 = [[0, 0, 0], [0, 5, 0], [0, 0, 0], [0, 3, 0]]
    b4 = [[3, 5, 0], [3, 5, 0], [3, 3, 0], [0, 3, 0]]
    assert gen("ray_detour", ctx([(a4, b4)])) == [(-1, "up", -1, 0)]


def test_generators_fire_on_a_fit_and_not_on_a_recolouring() -> None:
    c = ctx([([[3, 0, 0, 0, 0]], [[3, 5, 3, 5, 3]])])
    assert gen("dashed_rays", c) == [("right", 5, 0)]

    c = ctx([([[2, 1], [0, 0], [5, 5], [0, 1]], [[2, 1], [2, 0], [5, 5], [0, 1]])])
    assert gen("wall_rays", c) == [(2, 1, 0)]

    recolour = ctx([([[1, 0]], [[2, 0]])])

    assert gen("dashed_rays", recolour) == []

    assert gen("wall_rays", recolour) == []


def _rays_by_steps(g: np.ndarray, c: int, dirs: str, stop: int, bg: int) -> np.ndarray:
    """Reference: walk every ray cell by cell."""
    h, w = g.shape
    out = g.copy()
    for y, x in zip(*np.nonzero(g == c), strict=True):
        for dy, dx in DIRS[dirs]:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w:
                if g[ny, nx] == bg:
                    out[ny, nx] = c
                elif stop:
                    break
                ny, nx = ny + dy, nx + dx
    return out


def test_rays_match_a_step_by_step_reference() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(1, 11, 2))
        g = np.where(rng.random((h, w)) < 0.3, rng.integers(1, 4, (h, w)), 0)
        if int((g == 1).sum()) <= 40:
            for dirs in DIRS:
                for stop in (0, 1):
                    want = _rays_by_steps(g, 1, dirs, stop, 0)
                    assert (rays(g, 1, dirs, stop, 0) == want).all(), (g, dirs, stop)
