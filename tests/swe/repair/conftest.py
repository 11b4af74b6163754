"""Fixtures for the offline-repair tests.

* Both workspace backends and helpers to write candidates (fault localisation and the
  batch loop). The real Docker engine and the example images come from the SWE tests'
  session fixtures (``tests/swe/conftest.py``); Docker-backed tests are marked
  ``docker``; without root or Docker they skip (under CI=true they fail).
* The edit-operator helpers, as fixtures: ``generate`` runs :func:`generate_edits` and
  checks, on every candidate, the contract every family must keep: it compiles, its key
  is the normalised key of its text and differs from the original's and from every other
  candidate's, its diff applies to the original and gives its text, the lines before and
  after its changed block are the original's, and the list is sorted by prior.
  ``check_edits``, ``apply_diff``, ``dedent`` and ``data_dir`` are the helpers themselves.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.repair.analysis.ast_keys import DigestTree, normalised_key
from atlas_actors.swe.repair.operators import CandidateEdit, generate_edits
from atlas_actors.swe.repair.patch import split_lines

EXAMPLES = ("datecalc", "exprcalc", "intervals", "textkit")


@pytest.fixture(params=["docker", "bubblewrap"])
def backend(request: pytest.FixtureRequest) -> str:
    """Both workspace backends (docker sets the engine up; bubblewrap needs a pids cgroup
    to contain fork bombs, so without one it skips)."""
    if request.param == "docker":
        request.getfixturevalue("docker_host")
    else:
        from atlas_actors.sandbox import _bwrap

        if _bwrap._pids_cgroup_base() is None:
            pytest.skip("no writable pids cgroup: bubblewrap cannot cap processes as root")
    return str(request.param)


@pytest.fixture
def env_factory(
    examples: dict[str, SWEInstance],
) -> Callable[[str, str], AsyncIterator[SWEEnvironment]]:
    """``async with env_factory(name, backend) as env``: an environment reset to example
    ``name``, closed afterwards."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def make(name: str, backend: str) -> AsyncIterator[SWEEnvironment]:
        async with SWEEnvironment(backend=backend, eval_timeout_s=120) as env:  # type: ignore[arg-type]
            await env.reset(examples[name].to_task())
            yield env

    return make  # type: ignore[return-value]


DATA = Path(__file__).parent / "data"

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_diff(original: str, diff: str, lines: list[str] | None = None) -> str:
    """Apply a one-file unified diff (as :mod:`patch` writes them) to ``original``
    (``lines``: its lines, if already split)."""
    lines = split_lines(original) if lines is None else lines
    rows = diff.splitlines(keepends=True)
    assert rows[0].startswith("diff --git a/"), rows[0]
    assert rows[1].startswith("--- a/") and rows[2].startswith("+++ b/")
    out: list[str] = []
    cursor = 0
    k = 3
    while k < len(rows):
        match = _HUNK.match(rows[k])
        assert match, rows[k]
        old_start = int(match.group(1))
        old_count = int(match.group(2) or "1")
        start = old_start - 1 if old_count else old_start
        out.extend(lines[cursor:start])
        cursor = start
        k += 1
        while k < len(rows) and not rows[k].startswith("@@"):
            row = rows[k]
            k += 1
            no_newline = k < len(rows) and rows[k].startswith("\\ No newline")
            if no_newline:
                k += 1
            body = row[1:]
            if no_newline:
                body = body[:-1]
            if row[0] in " -":
                assert lines[cursor] == body, (cursor, lines[cursor], body)
                cursor += 1
            if row[0] in " +":
                out.append(body)
    out.extend(lines[cursor:])
    return "".join(out)


def check_edits(source: str, edits: Sequence[CandidateEdit], every: int = 1) -> None:
    """The contract every candidate keeps (see the module docstring). ``every > 1`` runs
    the costly checks (a full parse and compile) on every ``every``-th candidate only."""
    original_key = normalised_key(source)
    old = split_lines(source)
    keys = set()
    for k, edit in enumerate(edits):
        if k % every == 0:
            tree = ast.parse(edit.new_text)
            compile(tree, edit.path, "exec", dont_inherit=True)
            assert edit.key == DigestTree(tree).key, edit.label
        assert edit.key != original_key, edit.label
        assert edit.key not in keys, edit.label
        keys.add(edit.key)
        assert apply_diff(source, edit.diff, old) == edit.new_text, edit.label
        first, removed, added = edit.hunk
        new = split_lines(edit.new_text)
        assert old[: first - 1] == new[: first - 1], edit.label
        assert old[first - 1 + removed :] == new[first - 1 + added :], edit.label
        assert removed + added > 0
        assert edit.original is source
        assert edit.label.endswith(f" at {edit.path}:{edit.line}")
    priors = [e.prior for e in edits]
    assert priors == sorted(priors, reverse=True)


def _dedent(source: str) -> str:
    """Snippets are written indented in the tests."""
    return textwrap.dedent(source).lstrip("\n")


Generate = Callable[..., list[CandidateEdit]]


@pytest.fixture
def generate() -> Generate:
    """``generate(source, lines=None, **kwargs)``: the checked candidates of ``source``
    (dedented) with ``lines`` suspicious (a mapping, a list of lines at 1.0, or every
    line), path ``m.py``."""

    def run(
        source: str,
        lines: Mapping[int, float] | Sequence[int] | None = None,
        **kwargs: Any,
    ) -> list[CandidateEdit]:
        text = _dedent(source)
        if lines is None:
            susp: Mapping[int, float] = dict.fromkeys(range(1, text.count("\n") + 2), 1.0)
        elif isinstance(lines, Mapping):
            susp = lines
        else:
            susp = dict.fromkeys(lines, 1.0)
        edits = generate_edits(text, "m.py", susp, **kwargs)
        check_edits(text, edits)
        return edits

    return run


@pytest.fixture
def dedent() -> Callable[[str], str]:
    """``dedent(snippet)``: a snippet as ``generate`` sees it."""
    return _dedent


@pytest.fixture(name="check_edits")
def check_edits_fixture() -> Callable[..., None]:
    """``check_edits(source, edits, every=1)``: the contract (see the module docstring)."""
    return check_edits


@pytest.fixture(name="apply_diff")
def apply_diff_fixture() -> Callable[[str, str], str]:
    """``apply_diff(original, diff)``: the text a one-file diff gives."""
    return apply_diff


@pytest.fixture
def data_dir() -> Path:
    """Source files written for these tests."""
    return DATA
