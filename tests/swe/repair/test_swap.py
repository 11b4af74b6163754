"""The fast screen's ``swap`` mode, on the host: the batch worker (``atlas_batch.py``,
run as a workspace runs it without the runtime) on a small package whose conftest
imports it. A candidate that changes only function bodies gives the function objects
the new code; anything else that changed is rebound; either way the verdicts are a
fresh interpreter's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import atlas_actors.swe.repair
from atlas_actors.sandbox.runtime import INCONTAINER

BATCH = Path(atlas_actors.swe.repair.__file__).with_name("incontainer") / "atlas_batch.py"

CORE = """\
import functools
import sys

LIMIT = 10


def _deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def _build():
    return {"a": 1}


TABLE = _build()


def _hook():
    return "h"


HOOKS = {"h": _hook}  # held only by a registry the walk does not search
del _hook


def add(a, b=0):
    return a + b


def where():
    return sys._getframe().f_lineno


class Box:
    SIZE = 3

    def __init__(self, v):
        self._v = v

    def get(self):
        return self._v

    @staticmethod
    def twice(x):
        return 2 * x

    @classmethod
    def make(cls):
        return cls(1)

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        self._v = value

    @_deco
    def wrapped(self):
        return "w"
"""

TESTS = """\
from pkgx import core
from pkgx.core import HOOKS, LIMIT, TABLE, Box
from pkgx.user import use


def test_use():
    assert use() == 3


def test_where():
    lines = open(core.__file__).read().splitlines()
    assert core.where() == 1 + next(i for i, x in enumerate(lines) if "f_lineno" in x)


def test_box():
    b = Box(4)
    assert b.get() == 4 and Box.twice(2) == 4 and Box.make().get() == 1
    b.v = 5
    assert b.v == 5 and b.wrapped() == "w" and Box.SIZE == 3


def test_constants():
    assert LIMIT == 10 and TABLE == {"a": 1} and HOOKS["h"]() == "h"
"""

SELECTED = [f"tests/test_core.py::test_{n}" for n in ("use", "where", "box", "constants")]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package (``user.py`` imports ``add`` by name), its tests, a conftest that
    imports it."""
    root = tmp_path_factory.mktemp("swap") / "repo"
    files = {
        "pkgx/__init__.py": "from . import core\n",
        "pkgx/core.py": CORE,
        "pkgx/user.py": "from .core import add\n\n\ndef use():\n    return add(1, 2)\n",
        "conftest.py": "import pkgx\n",
        "tests/test_core.py": TESTS,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def run_batch(root: Path, tmp: Path, texts: list[str], *, fresh: bool) -> list[dict[str, Any]]:
    """The worker's result per candidate (each a new ``pkgx/core.py``), in order."""
    job = {
        "nonce": "t",
        "root": str(root),
        "tests": SELECTED,
        "timeouts": [30.0] * len(SELECTED),
        "collect_timeout": 60.0,
        "fail_fast": False,
        "pytest_args": ["-p", "no:cacheprovider", "-p", "no:randomly"],
        "file_limit_bytes": 1 << 30,
        "memory_bytes": 0,
        "force_fresh": fresh,
        "tmp": str(tmp / ("fresh" if fresh else "warm")),
        "pycache": str(tmp / "pycache"),
        "candidates": [{"index": i, "files": {"pkgx/core.py": t}} for i, t in enumerate(texts)],
    }
    spec = tmp / f"job-{fresh}.json"
    spec.write_text(json.dumps(job))
    env = {**os.environ, "PYTHONPATH": f"{INCONTAINER}:{BATCH.parent}"}
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(
        [sys.executable, str(BATCH), str(spec)],
        cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    results = [
        json.loads(line.split(" ", 1)[1])
        for line in proc.stdout.splitlines()
        if line.startswith("@@atlas:t:result ")
    ]
    assert len(results) == len(texts), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (root / "pkgx" / "core.py").read_text() == CORE  # put back
    return results


def verdicts(r: dict[str, Any]) -> list[tuple[str, str]]:
    return [(t["test"].rsplit("::", 1)[1], t["outcome"]) for t in r["tests"]]


def edit(old: str, new: str) -> str:
    assert CORE.count(old) == 1, old
    return CORE.replace(old, new)


SWAPPED = {
    # a function imported by name into another module (pkgx.user) sees the new code
    "imported by name": edit("return a + b\n", "return a + b + 1\n"),
    "method": edit("return self._v\n\n    @static", "return -self._v\n\n    @static"),
    "staticmethod": edit("return 2 * x", "return 3 * x"),
    "classmethod": edit("return cls(1)", "return cls(2)"),
    "property getter": edit("return self._v\n\n    @v.setter", "return 0\n\n    @v.setter"),
    "property setter": edit("self._v = value", "self._v = -value"),
    "wrapped by functools.wraps": edit('return "w"', 'return "x"'),
    # every function after the new lines gets their line numbers
    "lines shifted": edit("LIMIT = 10\n", "LIMIT = 10\n\n\n\n"),
    "fixed": CORE,
}

REBOUND = {
    "a default": (edit("b=0", "b=1"), "runs at import"),
    "a decorator": (edit("    @_deco\n", "    @functools.lru_cache()\n"), "runs at import"),
    "a module constant": (edit("LIMIT = 10", "LIMIT = 11"), "runs at import"),
    "a class attribute": (edit("SIZE = 3", "SIZE = 4"), "runs at import"),
    "an added function": (CORE + "\n\ndef extra():\n    return 1\n", "runs at import"),
    "the closure variables": (
        edit("return fn(*args, **kwargs)", "return _deco(*args, **kwargs)"),
        "ran while the session was prepared",
    ),
    "code that ran at import": (edit('return {"a": 1}', 'return {"a": 2}'), "ran while"),
    "a function not found on the module": (edit('return "h"', 'return "i"'), "not found"),
    "the parameters": (edit("def where():", "def where(*args):"), "parameters"),
}


@pytest.mark.slow
def test_body_only_edits_are_swapped_others_rebound_all_as_a_fresh_interpreter(
    repo: Path, tmp_path: Path
) -> None:
    texts = [*SWAPPED.values(), *(t for t, _ in REBOUND.values())]
    warm = run_batch(repo, tmp_path, texts, fresh=False)
    fresh = run_batch(repo, tmp_path, texts, fresh=True)
    names = [*SWAPPED, *REBOUND]
    assert [verdicts(r) for r in warm] == [verdicts(r) for r in fresh], names
    assert all(r["mode"] == "fresh" for r in fresh)
    for name, r in zip(names, warm, strict=True):
        if name in SWAPPED:
            assert r["mode"] == "swap" and r["why"] == "", (name, r)
        else:
            assert r["mode"] == "rebind" and REBOUND[name][1] in r["why"], (name, r)
    outcomes = {name: dict(verdicts(r)) for name, r in zip(names, warm, strict=True)}
    # Each swapped edit changes what a test sees (the swap is not a no-op).
    assert set(outcomes["fixed"].values()) == {"passed"}
    assert outcomes["imported by name"]["test_use"] == "failed"
    for name in ("method", "staticmethod", "classmethod", "property getter", "property setter"):
        assert outcomes[name]["test_box"] == "failed", name
    assert outcomes["wrapped by functools.wraps"]["test_box"] == "failed"
    assert outcomes["lines shifted"]["test_where"] == "passed"
    assert outcomes["a module constant"]["test_constants"] == "failed"
    assert outcomes["code that ran at import"]["test_constants"] == "failed"
    assert outcomes["a function not found on the module"]["test_constants"] == "failed"
