"""The check every ARC DSL op case goes through, and the small helpers the test_arc_*
modules share."""

from __future__ import annotations

import json
import types
from typing import Any

import numpy as np

from atlas_actors.arc import OPS, Program, compile_program
from atlas_actors.arc.infer import GENERATORS, Ctx


def G(rows: list[list[int]]) -> np.ndarray[Any, Any]:
    return np.array(rows, dtype=np.int64)


def ctx(pairs: list[tuple[list[list[int]], list[list[int]]]], bg: int = 0) -> Ctx:
    """A generator context of train pairs (state, target) and no test input."""
    return Ctx([G(a) for a, _ in pairs], [G(b) for _, b in pairs], bg)


def gen(op: str, c: Ctx) -> list[Any]:
    """Everything ``op``'s parameter generator yields on ``c``, each checked to make a
    valid program (the proposer drops a program its op's signature rejects, so a
    generator yielding such arguments would lose every fit it finds)."""
    out = list(GENERATORS[op](c))
    for args in out:
        Program((op, "x", *args))
    return out


def check_registered(module: types.ModuleType, names: set[str], cases: list[Any]) -> None:
    """``module`` adds exactly the ops ``names``, each with a generator, each registered
    into the DSL, and each with a case in ``cases``."""
    assert {n for n, _fn, _kinds in module.OP_TABLE} == names
    assert set(module.GENERATORS) == names
    assert names <= set(OPS)
    assert names - {c[0][0] for c in cases} == set()


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
