"""SWE instance loading (errors name the field, the line and the file), the example
instances, the instance maker's input checks, and prediction loading."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.errors import InvalidTaskError
from atlas_actors.swe.build import prepare_instance_from_repo
from atlas_actors.swe.evaluate import load_predictions
from atlas_actors.swe.instances import (
    SWEInstance,
    example_names,
    git,
    load_example_instances,
    load_instances,
    make_eval_script,
    parse_instance,
)
from atlas_actors.types import Task


def _valid() -> dict[str, Any]:
    return {
        "instance_id": "o__r-1",
        "repo": "o/r",
        "base_commit": "abcdef12",
        "problem_statement": "it is broken",
        "patch": "",
        "test_patch": "diff --git a/t b/t\n",
        "FAIL_TO_PASS": ["tests/test_a.py::test_x"],
        "PASS_TO_PASS": [],
        "image": "img:latest",
        "eval_script": make_eval_script("abcdef12", ["tests/test_a.py"], "diff\n"),
        "log_parser": "parse_log_pytest",
        "eval_type": "pass_and_fail",
    }


def test_valid_instance_and_json_string_test_lists() -> None:
    data = _valid() | {"FAIL_TO_PASS": '["a::b"]', "PASS_TO_PASS": "[]"}
    inst = parse_instance(data)
    assert inst.FAIL_TO_PASS == ["a::b"] and inst.PASS_TO_PASS == []
    # swebench's own TestSpec builder accepts it
    from swebench.harness.utils import make_test_spec

    spec = make_test_spec(inst.swebench_dict())
    assert any("SWEBENCH_TEST_EXIT_CODE=$?" in line for line in spec.eval_script_list)


def test_jsonl_error_names_file_line_and_field(tmp_path: Path) -> None:
    good = _valid()
    bad = _valid() | {"instance_id": "o__r-2"}
    del bad["image"]
    f = tmp_path / "inst.jsonl"
    f.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InvalidTaskError) as e:
        load_instances(f)
    msg = str(e.value)
    assert str(f) in msg and "line 2" in msg and "'image'" in msg and "missing" in msg
    assert "o__r-2" in msg


def test_malformed_fields_are_named(tmp_path: Path) -> None:
    f = tmp_path / "inst.json"
    f.write_text(json.dumps([_valid(), _valid() | {"instance_id": "x", "FAIL_TO_PASS": 3}]))
    with pytest.raises(InvalidTaskError, match=r"item 1.*'FAIL_TO_PASS'"):
        load_instances(f)
    with pytest.raises(InvalidTaskError, match=r"'log_parser'.*parse_log_pytest"):
        parse_instance(_valid() | {"log_parser": "parse_log_nope"})
    with pytest.raises(InvalidTaskError, match=r"'eval_type'"):
        parse_instance(_valid() | {"eval_type": "sometimes"})
    with pytest.raises(InvalidTaskError, match=r"'eval_script'.*Start Test Output"):
        parse_instance(_valid() | {"eval_script": "pytest"})
    f.write_text("{not json")
    with pytest.raises(InvalidTaskError, match="invalid JSON"):
        load_instances(f)
    g = tmp_path / "dup.jsonl"
    g.write_text(json.dumps(_valid()) + "\n" + json.dumps(_valid()) + "\n")
    with pytest.raises(InvalidTaskError, match="duplicate instance_id"):
        load_instances(g)


def test_task_round_trip_and_missing_context() -> None:
    inst = parse_instance(_valid())
    task = inst.to_task()
    assert task.domain == "swe" and task.id == inst.instance_id
    assert SWEInstance.from_task(task) == inst
    with pytest.raises(InvalidTaskError, match=r"task 't1'.*'base_commit'"):
        SWEInstance.from_task(Task(id="t1", domain="swe", context={"repo": "o/r"}))


def test_examples_materialise_at_their_base_commit() -> None:
    names = example_names()
    assert set(names) == {"textkit", "intervals", "exprcalc", "datecalc"}
    for inst in load_example_instances():
        assert inst.local_repo is not None
        assert git(inst.local_repo, "rev-parse", "HEAD").strip() == inst.base_commit
        assert inst.FAIL_TO_PASS and inst.PASS_TO_PASS and inst.patch and inst.test_patch
        # The gold patch and the test patch apply to the shipped repository.
        for diff in (inst.patch, inst.test_patch):
            subprocess.run(
                ["git", "-C", inst.local_repo, "apply", "--check", "-"],
                input=diff.encode(),
                check=True,
            )


def test_instance_maker_needs_test_files(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("X = 1\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "pkg" / "a.py").write_text("X = 2\n")
    git(repo, "commit", "-qam", "fix")
    with pytest.raises(InvalidTaskError, match="--test-files"):
        prepare_instance_from_repo(repo, "HEAD", tmp_path / "out")
    with pytest.raises(InvalidTaskError, match="--fix-commit"):
        prepare_instance_from_repo(repo, "nope", tmp_path / "out")
    # Naming the test files explicitly works when the fix touches one.
    (repo / "check_a.py").write_text("from pkg.a import X\n\ndef test_x():\n    assert X == 3\n")
    (repo / "pkg" / "a.py").write_text("X = 3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "fix 2")
    inst = prepare_instance_from_repo(repo, "HEAD", tmp_path / "out", test_files=["check_*.py"])
    assert "check_a.py" in inst.test_patch and "pkg/a.py" in inst.patch
    assert "check_a.py" not in inst.patch
    assert inst.source_commit == git(repo, "rev-parse", "HEAD^").strip()
    # The snapshot has one commit and no trace of the fix.
    assert inst.local_repo is not None
    assert git(inst.local_repo, "rev-list", "--count", "HEAD").strip() == "1"
    assert (Path(inst.local_repo) / "pkg" / "a.py").read_text() == "X = 2\n"


def test_prediction_loading_errors(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(
        json.dumps({"instance_id": "a", "model_patch": "x", "model_name_or_path": "m"})
        + "\n"
        + json.dumps({"instance_id": "b"})
        + "\n"
    )
    with pytest.raises(InvalidTaskError, match=r"line 2.*'model_patch'"):
        load_predictions(f)
    f.write_text(json.dumps({"instance_id": "a", "model_patch": None}) + "\n")
    assert load_predictions(f)[0]["model_name_or_path"] == "unknown"
