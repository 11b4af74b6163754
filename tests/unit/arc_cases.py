"""The check every ARC DSL op case goes through (imported by the test_arc_* modules)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from atlas_actors.arc import Program, compile_program


def check_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    """``prog`` on ``grid`` gives ``want`` compiled and as its standalone Python, and
    round-trips through JSON."""
    assert compile_program(prog)(grid).tolist() == want
    p = Program.from_json(prog)
    assert Program.from_json(json.loads(json.dumps(p.to_json()))) == p
    src = p.to_python()
    assert "import atlas_actors" not in src and "from atlas_actors" not in src
    ns: dict[str, Any] = {}
    exec(src, ns)
    assert np.asarray(ns["transform"](grid)).tolist() == want
