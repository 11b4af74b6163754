"""Declaring ops (atlas_actors.arc.registry): a declaration that does not fit its
function is refused at import, the conditions declared on an op gate its generator,
case grids may be compact text, and the recorded order puts new ops last."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import OPS
from atlas_actors.arc.infer import Ctx
from atlas_actors.arc.registry import (
    Case,
    Fitting,
    K,
    OneOf,
    declared,
    grid_of,
    guarded,
    in_order,
    op,
    spec_of,
)


def _g(ctx: Any) -> Iterator[tuple[Any, ...]]:
    yield ()


def test_a_declaration_must_fit_its_function() -> None:
    def two(g: Any, c: int) -> Any:
        return g

    with pytest.raises(ValueError, match="1 parameter kinds for 0 parameters"):
        op(params=(K.COLOR,), generator=_g)(lambda g: g)
    with pytest.raises(ValueError, match="0 parameter kinds for 1 parameters"):
        op(generator=_g)(two)
    with pytest.raises(ValueError, match="not both"):
        op(params=(K.COLOR,))(two)  # neither a generator nor a reason
    with pytest.raises(ValueError, match="not both"):
        op(params=(K.COLOR,), generator=_g, no_generator="why")(two)
    with pytest.raises(TypeError, match="Kind or OneOf"):
        op(params=("c",), generator=_g)(two)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="conditions of the generator"):
        op(params=(K.COLOR,), no_generator="why", only_if=lambda ctx: True)(two)
    with pytest.raises(ValueError, match="declared twice"):
        op(params=(K.COLOR,), generator=_g, name="rot90")(two)
    assert "two" not in declared()


def test_one_of_takes_strings() -> None:
    assert OneOf("h", "v").values == ("h", "v")
    with pytest.raises(TypeError):
        OneOf()
    with pytest.raises(TypeError):
        OneOf(1)  # type: ignore[arg-type]


def test_the_recorded_order_holds_and_new_names_follow_in_their_own_order() -> None:
    history = ["b", "a", "c"]
    assert in_order(["z", "a", "y", "b"], history) == ["b", "a", "z", "y"]


def test_spec_of_finds_an_op_by_its_function() -> None:
    spec = OPS["flip_h"]
    assert spec_of(spec.fn) is spec
    assert spec.family == "geometry"
    assert spec.doc == "Mirror left-right."
    with pytest.raises(KeyError):
        spec_of(test_spec_of_finds_an_op_by_its_function)


def test_case_grids_may_be_compact_text() -> None:
    case = Case((0,), "120 034", [[1], [2]])
    assert case.grid == [[1, 2, 0], [0, 3, 4]]
    assert case.want == [[1], [2]]
    assert grid_of("7") == [[7]]
    with pytest.raises(ValueError, match="digits with a space between rows"):
        grid_of("12,34")


def test_only_if_checks_run_in_order_before_the_generator() -> None:
    seen: list[str] = []

    def gen(ctx: Any) -> Iterator[tuple[Any, ...]]:
        seen.append("gen")
        yield (1,)

    def check(name: str, ok: bool) -> Any:
        def run(ctx: Any) -> bool:
            seen.append(name)
            return ok

        return run

    assert list(guarded(gen, (check("a", True), check("b", False), check("c", True)))(None)) == []
    assert seen == ["a", "b"]
    seen.clear()
    assert list(guarded(gen, (check("a", True), check("b", True)))(None)) == [(1,)]
    assert seen == ["a", "b", "gen"]


def _one_pair(grid: Any, want: Any) -> Ctx:
    return Ctx([np.asarray(grid, dtype=np.int64)], [np.asarray(want, dtype=np.int64)], 0)


def test_declared_conditions_gate_the_generator() -> None:
    """spill_cups yields the background only where the op itself gives the target
    (only_if=OnSelf(fits)); snap_to_wall only where no target gains cells."""
    case = OPS["spill_cups"].cases[0]
    assert list(OPS["spill_cups"].arguments(_one_pair(case.grid, case.want))) == [(0,)]
    more = np.asarray(case.want)
    more[np.nonzero(more == 0)[0][0], np.nonzero(more == 0)[1][0]] = 2  # painted, but wrongly
    assert list(OPS["spill_cups"].arguments(_one_pair(case.grid, more))) == []
    case = OPS["snap_to_wall"].cases[0]
    assert list(OPS["snap_to_wall"].arguments(_one_pair(case.grid, case.want))) == [(0,)]
    gains = [[9] * len(row) for row in case.want]
    assert list(OPS["snap_to_wall"].arguments(_one_pair(case.grid, gains))) == []


def test_fitting_yields_the_candidates_with_which_the_op_itself_fits() -> None:
    """The test gets the context, the op's own function and each candidate tuple."""
    seen: list[tuple[Any, ...]] = []

    def test(ctx: Any, fn: Any, *args: Any) -> bool:
        seen.append(args)
        return bool(fn(*args))

    def candidates(ctx: Any) -> Iterator[tuple[Any, ...]]:
        yield from [(0,), (1,), (2,), (3,)]

    def odd(k: int) -> bool:
        return k % 2 == 1

    assert list(Fitting(test, candidates).of(odd)(None)) == [(1,), (3,)]
    assert seen == [(0,), (1,), (2,), (3,)]
    seen.clear()
    assert list(Fitting(test, candidates, first=True).of(odd)(None)) == [(1,)]
    assert seen == [(0,), (1,)]
