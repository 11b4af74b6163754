"""Grading without Docker: swebench's parser and grading on synthetic logs, the
exit-code and JUnit cross-checks, actions and constructor checks, grade_predictions
with a stub evaluator."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.errors import ConfigError, EnvironmentNotReady, InvalidSolutionError
from atlas_actors.swe.actions import Edit, Search, parse_action
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.evaluate import grade_predictions
from atlas_actors.swe.grading import grade_log, graded_outcome, junit_case_matches
from atlas_actors.swe.instances import SWEInstance, load_example_instances
from atlas_actors.types import Outcome, Task


@pytest.fixture(scope="module")
def inst() -> SWEInstance:
    return load_example_instances(["textkit"])[0]


def _spec(inst: SWEInstance) -> Any:
    from swebench.harness.utils import make_test_spec

    return make_test_spec(inst.swebench_dict())


def _log(statuses: dict[str, str], rc: int) -> str:
    body = "\n".join(f"{s} {t}" for t, s in statuses.items())
    return (
        "+ : '>>>>> Start Test Output'\n"
        f"{body}\n"
        "+ : '>>>>> End Test Output'\n"
        f">>>>> Test Exit Code: {rc}\n"
    )


def _junit(failing: Sequence[str], passing: Sequence[str]) -> str:
    cases = []
    for t in list(failing) + list(passing):
        path, name = t.split("::")
        cls = path.removesuffix(".py").replace("/", ".")
        inner = "<failure message='x'/>" if t in failing else ""
        cases.append(f"<testcase classname='{cls}' name='{name}'>{inner}</testcase>")
    return f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>"


def test_real_pass_is_resolved(inst: SWEInstance) -> None:
    tests = inst.FAIL_TO_PASS + inst.PASS_TO_PASS
    g = grade_log(inst, _spec(inst), _log(dict.fromkeys(tests, "PASSED"), 0), 0, _junit([], tests))
    assert g["resolved"] and not g["tampered"]
    out = graded_outcome(inst, g, "")
    assert out.success and out.partial_score == 1.0


def test_partial_score_counts_graded_tests(inst: SWEInstance) -> None:
    statuses = dict.fromkeys(inst.FAIL_TO_PASS + inst.PASS_TO_PASS, "PASSED")
    statuses[inst.FAIL_TO_PASS[0]] = "FAILED"
    g = grade_log(inst, _spec(inst), _log(statuses, 1), 1, None)
    out = graded_outcome(inst, g, _log(statuses, 1))
    graded = len(statuses)
    assert not out.success
    assert out.partial_score == pytest.approx((graded - 1) / graded)
    assert inst.FAIL_TO_PASS[0] in out.feedback
    # the typed test evidence a search reads
    assert out.tests is not None and out.tests.log_trusted
    assert out.tests.fail_to_pass_failed == [inst.FAIL_TO_PASS[0]]
    assert out.tests.fail_to_pass_passed == inst.FAIL_TO_PASS[1:]
    assert out.tests.pass_to_pass_passed == inst.PASS_TO_PASS
    assert out.tests.pass_to_pass_failed == []
    assert (out.tests.passing, out.tests.graded) == (graded - 1, graded)


def test_fake_passed_with_failing_exit_code_is_rejected(inst: SWEInstance) -> None:
    tests = inst.FAIL_TO_PASS + inst.PASS_TO_PASS
    log = _log(dict.fromkeys(tests, "PASSED"), 0)  # the log even fakes its exit code line
    g = grade_log(inst, _spec(inst), log, 1, None)  # the real exit code says otherwise
    assert not g["resolved"] and g["tampered"]
    out = graded_outcome(inst, g, log)
    assert out.partial_score == 0.0 and "rejected" in out.feedback
    assert out.tests is not None and not out.tests.log_trusted and out.tests.passing == 0


def test_junit_disagreement_is_rejected(inst: SWEInstance) -> None:
    tests = inst.FAIL_TO_PASS + inst.PASS_TO_PASS
    log = _log(dict.fromkeys(tests, "PASSED"), 0)
    g = grade_log(inst, _spec(inst), log, 0, _junit(inst.FAIL_TO_PASS, inst.PASS_TO_PASS))
    assert not g["resolved"]
    assert any(inst.FAIL_TO_PASS[0] in t for t in g["tampered"])


def test_junit_name_matching() -> None:
    assert junit_case_matches("tests/test_a.py::test_x", "tests.test_a", "test_x")
    assert junit_case_matches(
        "tests/test_a.py::TestK::test_x[1]", "tests.test_a.TestK", "test_x[1]"
    )
    assert not junit_case_matches("tests/test_a.py::test_x", "tests.test_b", "test_y")


def test_actions_parse_and_errors() -> None:
    assert isinstance(parse_action({"kind": "edit", "path": "a", "old": "x", "new": "y"}), Edit)
    with pytest.raises(InvalidSolutionError, match="kinds: apply_patch"):
        parse_action({"kind": "teleport"})
    with pytest.raises(InvalidSolutionError, match="'edit.path'|path"):
        parse_action({"kind": "edit", "old": "x", "new": "y"})
    found = parse_action({"kind": "search", "pattern": "def wrap"})
    assert isinstance(found, Search) and found.path == "." and not found.fixed
    with pytest.raises(InvalidSolutionError, match="search.pattern"):
        parse_action({"kind": "search", "pattern": ""})


def test_implements_the_environment_protocols() -> None:
    from atlas_actors.environments import (
        InteractiveEnvironment,
        ScoringEnvironment,
        create_environment,
    )

    env = create_environment(Task(id="x", domain="swe"))
    assert isinstance(env, SWEEnvironment)
    assert isinstance(env, InteractiveEnvironment) and isinstance(env, ScoringEnvironment)


def test_a_state_stands_for_its_patch() -> None:
    from atlas_actors.environments.local import solution_of

    env = SWEEnvironment()
    assert solution_of(env, {"instance_id": "x", "patch": "diff", "steps": 2}) == "diff"
    assert env.solution_of({}) == ""


async def test_constructor_and_not_ready() -> None:
    with pytest.raises(ConfigError, match="'docker', 'bubblewrap'"):
        SWEEnvironment(backend="podman")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="eval_timeout_s"):
        SWEEnvironment(eval_timeout_s=0)
    env = SWEEnvironment()
    with pytest.raises(EnvironmentNotReady):
        await env.verify("")
    with pytest.raises(EnvironmentNotReady):
        await env.step({"kind": "list"})
    await env.aclose()


class _StubEvaluator:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        self.calls.append(task.id)
        if "boom" in solutions[0]:
            raise ConfigError("engine on fire")
        ok = "good" in solutions[0]
        return [
            Outcome(
                success=ok,
                partial_score=1.0 if ok else 0.5,
                details={"test_output": "log of " + task.id},
            )
        ]


async def test_grade_predictions_report_and_resume(tmp_path: Path) -> None:
    insts = load_example_instances()
    ids = [i.instance_id for i in insts]
    preds = [
        {"instance_id": ids[0], "model_name_or_path": "m", "model_patch": "good"},
        {"instance_id": ids[1], "model_name_or_path": "m", "model_patch": "bad"},
        {"instance_id": ids[2], "model_name_or_path": "m", "model_patch": "boom"},
        {"instance_id": ids[3], "model_name_or_path": "m", "model_patch": None},
    ]
    ev = _StubEvaluator()
    progress: list[tuple[int, int, str, str]] = []
    report = await grade_predictions(
        insts, preds, tmp_path, ev, concurrency=2, progress=lambda *a: progress.append(a)
    )
    assert report["resolved_ids"] == [ids[0]]
    assert report["unresolved_ids"] == [ids[1]]
    assert report["error_ids"] == [ids[2]]
    assert report["empty_patch_ids"] == [ids[3]]
    assert report["completed_instances"] == 2 and report["submitted_instances"] == 4
    assert json.loads((tmp_path / "report.json").read_text()) == report
    assert "engine on fire" in (tmp_path / "logs" / ids[2] / "error.txt").read_text()
    assert (tmp_path / "logs" / ids[0] / "test_output.txt").read_text() == "log of " + ids[0]
    assert sorted(p[0] for p in progress) == [1, 2, 3, 4]
    # A second run redoes only the errored instance.
    ev2 = _StubEvaluator()
    again = await grade_predictions(insts, preds, tmp_path, ev2)
    assert ev2.calls == [ids[2]]
    assert again["resolved_ids"] == report["resolved_ids"]
    with pytest.raises(Exception, match="unknown instance ids"):
        await grade_predictions(insts, [{"instance_id": "nope", "model_patch": ""}], tmp_path, ev)


def test_hidden_fail_to_pass_tests_leave_no_trace(inst: SWEInstance) -> None:
    from atlas_actors.swe.grading import hide_fail_to_pass

    statuses = dict.fromkeys(inst.FAIL_TO_PASS + inst.PASS_TO_PASS, "PASSED")
    statuses[inst.PASS_TO_PASS[0]] = "FAILED"
    log = _log(statuses, 1)
    full = graded_outcome(inst, grade_log(inst, _spec(inst), log, 1, None), log)
    seen = hide_fail_to_pass(full.model_copy(update={"size": 7}))
    assert not seen.success and seen.size == 7  # the patch's size stays visible
    assert seen.tests is not None and seen.tests.hidden == len(inst.FAIL_TO_PASS)
    assert seen.tests.fail_to_pass_passed == seen.tests.fail_to_pass_failed == []
    assert seen.tests.pass_to_pass_failed == [inst.PASS_TO_PASS[0]]
    text = seen.model_dump_json()
    for name in inst.FAIL_TO_PASS:  # no name, status or output of a hidden test
        assert name.split("::")[-1] not in text
    assert seen.partial_score == pytest.approx(1 - 1 / len(inst.PASS_TO_PASS))


def test_changed_lines_are_a_diffs_removed_and_added_lines() -> None:
    from atlas_actors.swe.grading import changed_lines

    patch = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n ctx\n-a = 1\n+a = 2\n"
    assert changed_lines(patch) == ("-a = 1", "+a = 2")
    assert changed_lines("") == ()


def test_visible_tests_is_checked() -> None:
    with pytest.raises(ConfigError, match="visible_tests='some'.*'all', 'pass_to_pass'"):
        SWEEnvironment(visible_tests="some")  # type: ignore[arg-type]
