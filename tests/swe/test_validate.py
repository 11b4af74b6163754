"""Validation verdicts without Docker: what makes an instance reproducible, how the
misbehaving tests are named, and how a test id cut at a space is graded."""

from __future__ import annotations

from typing import Any

from swebench.harness.utils import make_test_spec

from atlas_actors.swe.grading import grade_log, graded_outcome
from atlas_actors.swe.instances import SWEInstance, load_example_instances
from atlas_actors.swe.validate import judge
from atlas_actors.types import Outcome, TestReport


def outcome(
    f2p_ok: list[str],
    f2p_bad: list[str],
    p2p_ok: list[str],
    p2p_bad: list[str],
    status: dict[str, str] | None = None,
    **details: Any,
) -> Outcome:
    report = TestReport(
        fail_to_pass_passed=f2p_ok,
        fail_to_pass_failed=f2p_bad,
        pass_to_pass_passed=p2p_ok,
        pass_to_pass_failed=p2p_bad,
    )
    d = {"patch_applied": True, "status_map": status or {}, "seconds": 1.0, **details}
    return Outcome(success=not f2p_bad and not p2p_bad, tests=report, details=d)


INST = load_example_instances(["intervals"])[0]
F2P, P2P = INST.FAIL_TO_PASS, INST.PASS_TO_PASS


def test_fail_then_pass_with_pass_to_pass_kept_is_reproducible() -> None:
    v = judge(INST, outcome([], F2P, P2P, []), outcome(F2P, [], P2P, []))
    assert v["reproducible"] and v["reason"] == "" and v["misbehaving"] == []


def test_each_kind_of_misbehaviour_is_named_with_its_status() -> None:
    empty = outcome([F2P[0]], F2P[1:], P2P[1:], [P2P[0]], {P2P[0]: "ERROR", F2P[0]: "PASSED"})
    gold = outcome(F2P[:-1], [F2P[-1]], P2P, [], {})
    v = judge(INST, empty, gold)
    assert not v["reproducible"]
    assert {
        (m["test"], m["list"], m["run"], m["expected"], m["status"]) for m in v["misbehaving"]
    } == {
        (F2P[0], "FAIL_TO_PASS", "empty", "fail", "PASSED"),
        (P2P[0], "PASS_TO_PASS", "empty", "pass", "ERROR"),
        (F2P[-1], "FAIL_TO_PASS", "gold", "pass", "absent"),
    }
    assert f"1 FAIL_TO_PASS pass without the fix: {F2P[0]}" in v["reason"]
    assert f"1 PASS_TO_PASS fail without the fix: {P2P[0]}" in v["reason"]
    assert f"1 FAIL_TO_PASS fail with the gold patch: {F2P[-1]}" in v["reason"]


def test_a_run_that_did_not_finish_is_not_reproducible() -> None:
    ok = outcome(F2P, [], P2P, [])
    assert judge(INST, outcome([], F2P, P2P, [], timed_out=True), ok)["reason"] == (
        "the empty run timed out"
    )
    assert judge(INST, outcome([], F2P, P2P, []), outcome([], F2P, [], P2P, patch_applied=False))[
        "reason"
    ] == ("the gold patch does not apply")


def test_a_test_id_cut_at_a_space_passes_only_when_every_test_it_stands_for_passes() -> None:
    # SWE-bench's ids come from splitting pytest's summary at spaces: two parametrised
    # tests whose parameters start "a b" and "a c" both become "t.py::test_x[a".
    cut = "tests/test_x.py::test_x[a"
    inst = SWEInstance.model_validate(
        {**INST.model_dump(), "FAIL_TO_PASS": [cut], "PASS_TO_PASS": []}
    )
    spec = make_test_spec(inst.swebench_dict())

    def graded(lines: list[str]) -> Outcome:
        log = (
            "+ : '>>>>> Start Test Output'\n" + "\n".join(lines) + "\n+ : '>>>>> End Test Output'\n"
        )
        g = grade_log(inst, spec, log, None, None)
        return graded_outcome(inst, g, log)

    # pytest -rA lists passes before failures ("PpsxXEf"): the failure is read last
    one_fails = graded([f"PASSED {cut} b]", f"FAILED {cut} c] - AssertionError"])
    assert one_fails.tests is not None and one_fails.tests.fail_to_pass_failed == [cut]
    both_pass = graded([f"PASSED {cut} b]", f"PASSED {cut} c]"])
    assert both_pass.success
