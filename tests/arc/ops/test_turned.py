"""Turned twins of the ops that work in one orientation only (``op_r(g, k) =
unrigid(op(rigid_transform(g, k)), k)``): each twin's cases are one case of its op under every
transform it tries (``test_cases.py`` runs them); here the twin adds something its op
alone misses, has its op's kinds after the transform, and its generator finds the
transform and the op's parameters on the turned task."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import OPS, compile_program
from atlas_actors.arc.grids import rigid_transform
from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import GENERATORS
from atlas_actors.arc.ops.turned import INVERSE, unrigid
from atlas_actors.arc.registry import K
from tests.helpers.arc import G

TWINS = {name: name.removesuffix("_r") for name, spec in OPS.items() if spec.family == "turned"}
"""Each turned twin and the op it turns."""


def base_case(twin: str) -> tuple[tuple[Any, ...], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The op's case the twin's cases are made of: (op arguments, grid, answer)."""
    case = OPS[twin].cases[0]
    k = case.args[0]
    return case.args[1:], rigid_transform(G(case.grid), k), rigid_transform(G(case.want), k)


def transforms(twin: str) -> set[int]:
    """The transforms the twin tries (one case each)."""
    return {case.args[0] for case in OPS[twin].cases}


def test_unrigid_undoes_rigid() -> None:
    g = G([[1, 2, 3], [4, 5, 6]])
    for k in range(8):
        assert np.array_equal(unrigid(rigid_transform(g, k), k), g)
        assert np.array_equal(rigid_transform(unrigid(g, k), k), g)


def test_every_twin_is_registered_with_its_ops_kinds() -> None:
    assert len(TWINS) == 12
    for twin, base in TWINS.items():
        assert OPS[twin].kinds == (K.GRID, K.RIGID, *OPS[base].kinds[1:])
        assert twin in GENERATORS
        assert len(OPS[twin].cases) == len(transforms(twin))


@pytest.mark.parametrize("twin", list(TWINS))
def test_the_base_op_misses_some_turned_case(twin: str) -> None:
    """The twin adds something: under some transform the base op alone is wrong."""
    args, grid, want = base_case(twin)
    prog = [TWINS[twin], "x", *args]
    assert compile_program(prog)(grid).tolist() == want.tolist()
    missed = 0
    for j in range(1, 8):
        try:
            got = np.asarray(compile_program(prog)(rigid_transform(grid, j)))
        except ValueError:
            missed += 1
            continue
        missed += not np.array_equal(got, rigid_transform(want, j))
    assert missed > 0


@pytest.mark.parametrize("twin", list(TWINS))
def test_twin_generator_finds_the_transform(twin: str) -> None:
    """On the task turned by j, the twin's generator yields the inverse of j with the
    base case's parameters, which is what the base op's generator yields upright."""
    args, grid, want = base_case(twin)
    assert args in list(GENERATORS[TWINS[twin]](Ctx([grid], [want], 0)))
    for j in range(1, 8):
        if INVERSE[j] not in transforms(twin):
            continue
        turned = Ctx([rigid_transform(grid, j)], [rigid_transform(want, j)], 0)
        assert (INVERSE[j], *args) in list(GENERATORS[twin](turned))
