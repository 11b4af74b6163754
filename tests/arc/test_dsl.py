"""DSL programs as data (atlas_actors.arc.dsl): validation with messages that name the
problem, colour roles, the compile cache, and standalone Python that carries the helpers
its ops need (each op's own cases run in ``ops/test_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from atlas_actors.arc import Program, compile_program
from atlas_actors.errors import InvalidSolutionError
from tests.helpers.arc import G


def test_nested_program_str_and_python() -> None:
    p = Program.from_json(["recolor", ["crop_object", "x", "largest", 4, 0, 0, 1], [[1, 2]]])
    assert str(p) == "recolor(crop_object(x, 'largest', 4, 0, 0, 1), [[1, 2]])"
    assert p.size() == 2
    assert "def transform(grid" in p.to_python()
    with pytest.raises(AttributeError):
        p.expr = "x"


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (["nope", "x"], "unknown op 'nope'"),
        (["rot90"], "takes 1 arguments"),
        (["keep_color", "x", 14, 0], "0..13"),
        (["crop_object", "x", "biggest", 4, 0, 0, 1], "expected one of"),
        (["crop_object", "x", "largest", 5, 0, 0, 1], "connectivity 4 or 8"),
        (["recolor", "x", [[1, 2, 3]]], "pairs"),
        (42, 'expected "x"'),
        (["rot90", "y"], 'expected "x"'),
        (["upscale", "x", 0, 2], "1..30"),
        (["halo", "x", 2, 3, 0], "0..2"),
        (["keep_color", "x", True, 0], "integer"),
    ],
)
def test_invalid_programs_name_the_problem(bad: Any, needle: str) -> None:
    with pytest.raises(InvalidSolutionError, match=None) as ei:
        compile_program(bad)
    assert needle in str(ei.value)


def test_colour_roles_resolve_per_grid() -> None:
    # 12 = least common colour other than the most common one, resolved on the input
    p = Program.from_json(["keep_color", "x", 12, 0])
    assert p(G([[1, 1, 2, 0, 0, 0]])).tolist() == [[0, 0, 2, 0, 0, 0]]
    assert p(G([[3, 4, 4, 0, 0, 0]])).tolist() == [[3, 0, 0, 0, 0, 0]]
    assert "role_color(x, 12)" in str(p)
    ns: dict[str, Any] = {}
    exec(p.to_python(), ns)
    assert ns["transform"](G([[3, 4, 4, 0, 0, 0]])).tolist() == [[3, 0, 0, 0, 0, 0]]


def test_compile_program_is_cached_and_accepts_program() -> None:
    a = compile_program(["flip_h", "x"])
    b = compile_program(["flip_h", "x"])
    c = compile_program(Program.from_json(["flip_h", "x"]))
    assert a is b is c


def test_grid_level_errors_raise() -> None:
    with pytest.raises(ValueError, match="empty"):
        compile_program(["crop_nonbg", "x", 0])(G([[0, 0]]))
    with pytest.raises(ValueError, match="divide"):
        compile_program(["downscale", "x", 2, 2])(G([[1, 2, 3]]))


def test_standalone_python_copies_the_helpers_of_the_ops_family_module() -> None:
    # an op whose primitive calls helpers of grids and of its own family module: the
    # standalone script defines them all and runs without atlas_actors
    p = Program.from_json(["downscale_auto", "x"])
    src = p.to_python()
    assert "import atlas_actors" not in src and "from atlas_actors" not in src
    assert "def block_factors(" in src  # the op's own module's helper
    ns: dict[str, Any] = {}
    exec(src, ns)
    g = G([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 0, 0], [3, 3, 0, 0]])
    assert ns["transform"](g).tolist() == p(g).tolist() == [[1, 2], [3, 0]]
