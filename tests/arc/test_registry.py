"""Declaring ops (atlas_actors.arc.registry): a declaration that does not fit its
function is refused at import, and the recorded order puts new ops last."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from atlas_actors.arc import OPS
from atlas_actors.arc.registry import K, OneOf, declared, in_order, op, spec_of


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
