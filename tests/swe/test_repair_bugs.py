"""The program-repair development bug set (``tests/data/repair_bugs/``).

Small repositories written for this project, one realistic bug each, stored as SWE-bench
instances in the bundled examples' format and made with ``scripts/make_repair_bug.py``.
``MANIFEST.json`` is the benchmark's answer key (kind, description, buggy lines).

The fast tests parse every instance with the project's parser, check it against the
manifest and materialise its repository; the slow ones run each instance in the
bubblewrap backend: the base fails every FAIL_TO_PASS test and passes every PASS_TO_PASS
test, the gold patch resolves it, and passes the bug's held-back tests
(``<bug>/heldout.py.txt``, which the search never sees), some of which fail at the base.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import (
    SWEInstance,
    example_names,
    git,
    load_example_instances,
    parse_instance,
)

BUGS = Path(__file__).resolve().parents[1] / "data" / "repair_bugs"
NAMES = example_names(BUGS)
KINDS = {"single", "two-edit", "hard", "trap", "hang", "missing"}


def _manifest() -> dict[str, dict[str, Any]]:
    data = json.loads((BUGS / "MANIFEST.json").read_text())
    return {b["name"]: b for b in data["bugs"]}


@pytest.fixture(scope="module")
def instances() -> dict[str, SWEInstance]:
    """Every bug's instance with ``local_repo`` set to a materialised checkout."""
    return {i.repo.split("/")[-1]: i for i in load_example_instances(root=BUGS)}


def test_the_manifest_lists_exactly_the_stored_instances() -> None:
    manifest = _manifest()
    assert sorted(manifest) == NAMES
    kinds = Counter(b["kind"] for b in manifest.values())
    assert set(kinds) == KINDS, kinds
    assert len(NAMES) >= 24
    for name, entry in manifest.items():
        assert entry["instance_id"] == f"atlas-bugs__{name}-1"
        assert entry["description"].strip()
        assert entry["buggy_lines"], name
        for where in entry["buggy_lines"]:
            path, _, line = where.rpartition(":")
            stored = BUGS / name / "repo" / f"{path}.txt"
            assert stored.is_file(), (name, where)
            assert 1 <= int(line) <= len(stored.read_text().splitlines()), (name, where)


@pytest.mark.parametrize("name", NAMES)
def test_instance_parses_in_the_examples_format(name: str) -> None:
    data = json.loads((BUGS / name / "instance.json").read_text())
    inst = parse_instance(data, where=f"repair bug {name}")
    assert inst.instance_id == f"atlas-bugs__{name}-1"
    assert inst.repo == f"atlas-bugs/{name}"
    assert inst.image == f"atlas-swe-eval/atlas-bugs__{name}-1:latest"
    assert inst.log_parser == "parse_log_pytest"
    assert inst.patch and inst.test_patch and inst.problem_statement.strip()
    assert 1 <= len(inst.FAIL_TO_PASS) <= 3
    assert len(inst.PASS_TO_PASS) >= 4
    assert not set(inst.FAIL_TO_PASS) & set(inst.PASS_TO_PASS)
    # Only tests the fix adds fail at the base: the buggy repository's own tests pass.
    added = set(re.findall(r"^\+\s*def (test\w+)", inst.test_patch, re.M))
    assert {t.rsplit("::", 1)[-1] for t in inst.FAIL_TO_PASS} <= added
    # The gold patch touches code only, the test patch tests only.
    touched = re.findall(r"^\+\+\+ b/(\S+)", inst.patch, re.M)
    assert touched and not any(p.startswith("tests/") for p in touched)
    assert all(
        p.startswith("tests/") for p in re.findall(r"^\+\+\+ b/(\S+)", inst.test_patch, re.M)
    )
    # Stored like the bundled examples: no machine-local fields, files as <path>.txt.
    assert "local_repo" not in data and "source_commit" not in data
    files = [p for p in (BUGS / name / "repo").rglob("*") if p.is_file()]
    assert files and all(p.suffix == ".txt" for p in files)


def test_repositories_materialise_at_their_base_commit(instances: dict[str, SWEInstance]) -> None:
    assert sorted(instances) == NAMES
    for inst in instances.values():
        assert inst.local_repo is not None
        assert git(inst.local_repo, "rev-parse", "HEAD").strip() == inst.base_commit
        for diff in (inst.patch, inst.test_patch):
            subprocess.run(
                ["git", "-C", inst.local_repo, "apply", "--check", "-"],
                input=diff.encode(),
                check=True,
                capture_output=True,
            )


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
@pytest.mark.parametrize("name", NAMES)
async def test_base_fails_and_gold_patch_resolves(
    name: str, instances: dict[str, SWEInstance]
) -> None:
    inst = instances[name]
    async with SWEEnvironment(backend="bubblewrap", eval_timeout_s=120) as env:
        await env.reset(inst.to_task())
        before = await env.verify("")
        after = await env.verify(inst.patch)
    assert not before.success
    status = before.details["tests_status"]
    assert status["FAIL_TO_PASS"]["success"] == [], before.feedback
    assert sorted(status["PASS_TO_PASS"]["success"]) == sorted(inst.PASS_TO_PASS), before.feedback
    assert after.success, after.feedback


def _make_repair_bug() -> Any:
    """``scripts/make_repair_bug.py`` as a module (its held-back test runner)."""
    path = BUGS.parents[2] / "scripts" / "make_repair_bug.py"
    spec = importlib.util.spec_from_file_location("make_repair_bug", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_every_bug_has_held_back_tests(name: str) -> None:
    source = (BUGS / name / "heldout.py.txt").read_text()
    tree = ast.parse(source)
    tests = [
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
    ]
    assert len(tests) >= 2, name
    imported = {
        (n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
    } | {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "tests" not in imported  # self-contained: the package, pytest, the standard library


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
@pytest.mark.parametrize("name", NAMES)
async def test_held_back_tests_pass_with_the_gold_patch_and_see_the_bug(
    name: str, instances: dict[str, SWEInstance]
) -> None:
    tool = _make_repair_bug()
    inst = instances[name]
    tests = BUGS / name / "heldout.py.txt"
    gold = await tool.run_heldout(inst.local_repo, tests, inst.patch)
    assert gold and set(gold.values()) == {"PASSED"}, gold
    # A hang bug's base run loops until its time limit (every test then ERROR); a short
    # limit for those sees the same; the others finish within the default one.
    hangs = _manifest()[name]["kind"] == "hang"
    base = await tool.run_heldout(
        inst.local_repo, tests, "", **({"timeout_s": 15} if hangs else {})
    )
    assert set(base) == set(gold)
    assert any(status != "PASSED" for status in base.values()), "no held-back test sees the bug"
