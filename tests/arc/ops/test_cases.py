"""Every op of the DSL as declared (atlas_actors.arc.ops): its cases run compiled, through
JSON and as standalone Python; its declaration is complete; its generator yields valid
arguments; and the search order is the recorded one."""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import OPS, Program, compile_program
from atlas_actors.arc.grids import clear_caches
from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.ops import FAMILIES, GENERATORS, RANK
from atlas_actors.arc.registry import Case
from tests.helpers.arc import G

CASES: list[tuple[str, int, Case]] = [
    (name, i, case) for name, spec in OPS.items() for i, case in enumerate(spec.cases)
]


def _random_grids() -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    out = []
    for _ in range(6):
        h, w = rng.integers(2, 8, size=2)
        g = rng.integers(0, 4, size=(h, w))
        g[rng.random((h, w)) < 0.5] = 0
        out.append(g)
    return out


RANDOM = _random_grids()


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    # every case starts from empty memos, as its standalone script does
    clear_caches()


@pytest.mark.parametrize(
    ("name", "case"), [c[::2] for c in CASES], ids=[f"{n}-{i}" for n, i, _ in CASES]
)
def test_case_compiled_through_json_and_standalone(name: str, case: Case) -> None:
    """The case's program gives its output compiled and as standalone Python (which
    imports nothing of atlas_actors), on its grid and on random grids (where it gives
    what the compiled program gives, or fails where that fails), and its JSON form
    round-trips."""
    prog = case.program_for(name)
    grid = G(case.grid)
    assert compile_program(prog)(grid).tolist() == case.want
    p = Program.from_json(prog)
    q = Program.from_json(json.loads(json.dumps(p.to_json())))
    assert p == q and hash(p) == hash(q)
    assert p.to_json() == prog
    src = p.to_python()
    assert "import atlas_actors" not in src and "from atlas_actors" not in src
    assert "@op(" not in src  # declarations stay behind
    ns: dict[str, Any] = {}
    exec(src, ns)
    assert np.asarray(ns["transform"](grid)).tolist() == case.want
    for g in RANDOM:
        try:
            expected = p(g)
        except Exception:
            with pytest.raises(Exception):  # noqa: B017 - the same failure standalone
                ns["transform"](g)
            continue
        assert np.array_equal(ns["transform"](g), expected)


@pytest.mark.parametrize("name", list(OPS))
def test_op_is_declared_completely(name: str) -> None:
    """Cases; a generator or the reason for none; a family module that holds it."""
    spec = OPS[name]
    assert spec.cases, f"{name} has no case"
    assert (spec.generator is None) != (not spec.no_generator), name
    assert spec.fn.__module__ == f"atlas_actors.arc.ops.{spec.family}"
    assert spec.doc, f"{name}'s function has no docstring"
    assert (name in GENERATORS) == (spec.generator is not None)
    assert not spec.when or spec.generator is not None


@pytest.mark.parametrize("name", [n for n in OPS if n in GENERATORS])
def test_generator_yields_valid_arguments_on_the_cases(name: str) -> None:
    """On each case as a one-pair task (its input the state, its output the target),
    every argument tuple the op's generator yields makes a valid program: the proposer
    drops a program its op's signature rejects, so a generator yielding such arguments
    would lose every fit it finds."""
    for case in OPS[name].cases:
        if case.program is not None:
            continue  # the op is not applied to the input itself
        c = Ctx([G(case.grid)], [G(case.want)], 0)
        for args in GENERATORS[name](c):
            Program((name, "x", *args))


def test_generators_of_shape_keeping_ops_stay_quiet_when_the_grid_shrinks() -> None:
    """An op whose every case keeps the grid's shape has nothing to offer a task whose
    target is smaller than its input, so its generator yields nothing there; the ten
    below are cheap and do not gate on shapes (the search's fitness drops their
    children)."""
    shrink = Ctx([G([[1, 0]])], [G([[1]])], 0)
    ungated = {
        "rot180", "flip_h", "flip_v", "keep_color", "erase_color", "majority_recolor",
        "minority_recolor", "crop_color", "keep_extreme", "remove_extreme",
    }  # fmt: skip
    keeping = [
        n
        for n, spec in OPS.items()
        if spec.generator is not None
        and all(np.shape(c.grid) == np.shape(c.want) for c in spec.cases)
    ]
    assert len(keeping) >= 170
    for name in keeping:
        got = list(GENERATORS[name](shrink))
        assert (got != []) == (name in ungated), name


# the recorded rank's digest: a changed RANK changes the search
RANK_DIGEST = "3f34da3fdb0e7cfc"


def _digest(names: list[str]) -> str:
    return hashlib.sha256(" ".join(names).encode()).hexdigest()[:16]


def test_search_order_is_the_recorded_rank() -> None:
    """The search expands ops in GENERATORS order under a budget: it keeps the rank
    recorded when the ops moved into families (a new op goes after all of them),
    whatever module an op lives in, and OPS lists the ops in the same order."""
    assert _digest(RANK) == RANK_DIGEST, "RANK changed: the search order would change"
    assert len(set(RANK)) == len(RANK)
    assert list(GENERATORS)[: len(RANK)] == RANK
    assert list(OPS)[: len(RANK)] == RANK


def test_family_modules_hold_every_op() -> None:
    assert {spec.family for spec in OPS.values()} == {
        m.__name__.rpartition(".")[2] for m in FAMILIES
    }


def test_no_op_changes_the_object_lists_components_memoises() -> None:
    # components() hands every caller the same memoised list and arrays: an op that
    # reorders or edits them (sort_stack once sorted the list) makes later results
    # depend on what ran before. Run every case and random grid, then check each
    # memoised list is still in reading order with its cells in reading order.
    from atlas_actors.arc import grids

    clear_caches()
    for name, _, case in CASES:
        for g in [G(case.grid), *RANDOM]:
            with contextlib.suppress(Exception):
                compile_program(case.program_for(name))(g)
        for objs in grids._CACHE_CC.values():
            firsts = [(int(ys[0]), int(xs[0])) for ys, xs in objs]
            assert firsts == sorted(firsts), name
            for ys, xs in objs:
                cells = list(zip(ys.tolist(), xs.tolist(), strict=True))
                assert cells == sorted(cells), name
        clear_caches()
