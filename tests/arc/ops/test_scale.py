"""The scale ops beyond their declared cases (which ``test_cases.py`` runs):
their parameter generators on small tasks (they fire on a fit, stay quiet on a near
miss), the grids the ops refuse, and what needs more than one case."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc import compile_program
from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.scale import (
    block_pixels,
    canvas_count,
    g_kron_fill,
    g_tile_t,
    g_upscale,
    kron_fill,
    kron_own,
    repeat_count,
)
from tests.helpers.arc import G, case_grid, case_want, ctx, gen, task_ctx

_PATCH_IN = G(case_grid("block_pixels"))

_KRON_IN = G(case_grid("kron_eq"))

_KRON_OUT = case_want("kron_own")


def _same(pairs: list[list[list[int]]]) -> Ctx:
    return ctx([(p, p) for p in pairs])


_OUT = case_want("kron_fill")

_IN = G(case_grid("kron_fill"))


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        block_pixels(G([[0, 0], [0, 0]]), 0)  # empty

    with pytest.raises(ValueError):
        kron_own(np.ones((6, 6), dtype=np.int64), 0)  # 36 x 36
    with pytest.raises(ValueError):
        compile_program(["downscale_auto", "x"])(G([[1, 2], [3, 4]]))
    with pytest.raises(ValueError):
        repeat_count(G([[0, 0]]), "ncells", "row", 0)  # nothing to count
    with pytest.raises(ValueError):
        repeat_count(G([[1, 2, 3]]), "ncells", "side_nbg", 0)  # no background tiles

    with pytest.raises(ValueError):
        canvas_count(G([[1] * 10]), "ncells", "square", "tl", 0)  # 100 x 100


def test_block_pixels_generator() -> None:
    assert gen("block_pixels", ctx([(_PATCH_IN.tolist(), [[3, 4], [5, 6]])])) == [(0,)]
    # mirrored: the summary is a step away (a flip follows)
    assert gen("block_pixels", ctx([(_PATCH_IN.tolist(), [[4, 3], [6, 5]])])) == [(0,)]
    assert gen("block_pixels", ctx([(_PATCH_IN.tolist(), [[3, 4], [5, 5]])])) == []


def test_kron_own_generator() -> None:
    assert gen("kron_own", ctx([(_KRON_IN.tolist(), _KRON_OUT)])) == [(0,)]
    # no 0 in the grid (its commonest colour, 1, is the task's background): the empty
    # blocks are 0
    full = [[1, 2], [1, 1]]
    out = [[1, 0, 0, 2], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]]
    assert gen("kron_own", ctx([(full, out)], bg=1)) == [(0,)]
    # each cell a copy of the whole grid: kron_self, not this
    whole = [[1, 2, 1, 2], [0, 1, 0, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    assert gen("kron_own", ctx([(_KRON_IN.tolist(), whole)])) == []


def test_generators_fire_on_matching_shapes() -> None:
    kron = task_ctx(
        [([[1, 0], [0, 1]], [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])], []
    )
    assert (1, 0) in list(GENERATORS["kron_eq"](kron))
    assert list(GENERATORS["kron_eq"](task_ctx([([[1, 2]], [[1, 2]])], []))) == []

    blocky = task_ctx([([[1, 1], [1, 1]], [[1]])], [])
    assert list(GENERATORS["downscale_auto"](blocky)) == [()]


def test_generators_gate_on_shapes() -> None:
    pad = task_ctx([([[1, 2]], [[0, 1, 2, 0], [1, 1, 2, 2], [0, 1, 2, 0]])], [])
    assert list(GENERATORS["pad_extend"](pad)) == [(0,)]
    assert list(GENERATORS["pad_extend"](task_ctx([([[1, 2]], [[1, 2]])], []))) == []

    lat = task_ctx([([[0, 0, 0, 0], [0, 2, 0, 3]], [[2, 2, 3, 3]])], [])
    assert list(GENERATORS["sample_lattice"](lat)) == [(2, 0)]


def test_repeat_count_generator() -> None:
    one = repeat_count(G([[1, 0], [0, 0]]), "ncells", "side_nbg", 0).tolist()
    two = repeat_count(G([[1, 2], [0, 0]]), "ncells", "side_nbg", 0).tolist()
    c = ctx([([[1, 0], [0, 0]], one), ([[1, 2], [0, 0]], two)])
    assert ("ncells", "side_nbg", 0) in gen("repeat_count", c)
    assert gen("repeat_count", _same([[[1, 0]], [[0, 2]]])) == []
    # a constant ratio is a plain tile's job
    assert gen("repeat_count", ctx([([[1]], [[1, 1]]), ([[2]], [[2, 2]])])) == []


def test_canvas_count_generator() -> None:
    a, b = [[1, 2]], [[3, 0, 0]]
    c = ctx(
        [
            (a, canvas_count(G(a), "ncells", "square", "bl", 0).tolist()),
            (b, [[0, 0, 0], [0, 0, 0], [3, 0, 0]]),
        ]
    )
    got = gen("canvas_count", c)
    assert ("ncells", "square", "bl", 0) in got
    assert all(g[2] == "bl" for g in got)
    assert gen("canvas_count", _same([a, b])) == []


def test_kron_fill_rejects() -> None:
    with pytest.raises(ValueError):
        kron_fill(G([[1, 0, 0], [0, 0, 0]]), 0, 0)  # sides not squares
    spread = G([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    with pytest.raises(ValueError):
        kron_fill(spread, 0, 0)  # content in two blocks


def test_g_kron_fill() -> None:
    test_in = G([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 2], [0, 0, 0, 2]])
    ctx = Ctx(states=[_IN, test_in], targets=[G(_OUT)], bg=0)
    assert list(g_kron_fill(ctx)) == [(0, 0), (0, 1)]
    # content across blocks, or a target with nothing added: quiet
    spread = G([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    assert list(g_kron_fill(Ctx(states=[spread], targets=[G(_OUT)], bg=0))) == []
    assert list(g_kron_fill(Ctx(states=[_IN], targets=[_IN.copy()], bg=0))) == []


def test_upscale_and_tile_t_generators_infer_factors_and_transforms() -> None:
    x = np.array([[1, 2], [3, 4]])
    ctx = Ctx([x, x], [np.kron(x, np.ones((3, 2), dtype=int))], 0)
    assert list(g_upscale(ctx)) == [(3, 2)]
    mirrored = np.concatenate([x, x[:, ::-1]], axis=1)
    ctx = Ctx([x], [mirrored], 0)
    assert list(g_tile_t(ctx)) == [(1, 2, [0, 4])]
