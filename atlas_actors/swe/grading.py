"""Grading a test log as swebench 5.x grades it, with two cross-checks (the test
command's real exit code and pytest's JUnit XML report), and the outcome it gives.
"""

from __future__ import annotations

import json
import os
import tempfile
import xml.etree.ElementTree as ET
from typing import Any

from atlas_actors.swe.instances import SWEInstance
from atlas_actors.types import Outcome, TestReport

FEEDBACK_TAIL = 3000
"""Characters of a test log kept in feedback."""


def tail(text: str, n: int = FEEDBACK_TAIL) -> str:
    """The last ``n`` characters of ``text`` (marked when cut)."""
    return text if len(text) <= n else "..." + text[-n:]


def _junit_failures(xml_text: str) -> list[tuple[str, str]] | None:
    """(classname, name) of the failing/erroring test cases in a JUnit XML report."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return None
    out = []
    for case in root.iter("testcase"):
        if any(child.tag in ("failure", "error") for child in case):
            out.append((case.get("classname", ""), case.get("name", "")))
    return out


def junit_case_matches(test_id: str, classname: str, name: str) -> bool:
    """Whether log id ``tests/test_x.py::Cls::test_a[p]`` is JUnit case (classname, name)."""
    parts = test_id.split("::")
    if parts[-1] != name:
        return False
    module_path = parts[0].removesuffix(".py").replace("/", ".")
    dotted = ".".join([module_path, *parts[1:-1]])
    return dotted == classname or classname.endswith(dotted) or dotted.endswith(classname)


def _parse_section(spec: Any, test_log: str) -> dict[str, str]:
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT
    from swebench.harness.log_parsers import PARSER_REGISTRY

    section = test_log
    if START_TEST_OUTPUT in section:
        section = section.split(START_TEST_OUTPUT, 1)[1].split(END_TEST_OUTPUT, 1)[0]
    parsed: dict[str, str] = PARSER_REGISTRY[spec.log_parser](section, spec)
    return parsed


def grade_log(
    instance: SWEInstance,
    spec: Any,
    test_log: str,
    real_rc: int | None,
    junit_xml: str | None,
) -> dict[str, Any]:
    """swebench's grading of ``test_log``, plus the exit-code and JUnit cross-checks."""
    from swebench.harness.constants import FAIL_TO_PASS, PASS_TO_PASS, TestStatus
    from swebench.harness.grading import get_eval_report, get_logs_eval

    with tempfile.TemporaryDirectory(prefix="atlas-swe-log-") as td:
        log_path = os.path.join(td, "test_output.txt")
        with open(log_path, "w", encoding="utf-8") as f:
            f.write(test_log)
        status_map, found = get_logs_eval(spec, log_path)
        pred = {
            "instance_id": instance.instance_id,
            "model_name_or_path": "atlas",
            "model_patch": "",
        }
        report = get_eval_report(spec, pred, log_path, include_tests_status=True)[
            instance.instance_id
        ]
    failing = {TestStatus.FAILED.value, TestStatus.ERROR.value}
    tampered: list[str] = []
    # What the log claims, parsed as swebench parses it (even when swebench rejected it).
    claimed = dict(status_map) or _parse_section(spec, test_log)
    # The log's own exit-code line can be printed by the tests; ours carries a nonce.
    if real_rc not in (None, 0) and claimed and not any(s in failing for s in claimed.values()):
        tampered.append(f"the test command exited {real_rc} but the log reports no failing test")
    if junit_xml is not None:
        junit_fail = _junit_failures(junit_xml)
        if junit_fail is None:
            tampered.append("pytest's JUnit XML report is unreadable")
        else:
            for classname, name in junit_fail:
                for test_id, status in claimed.items():
                    if status not in failing and junit_case_matches(test_id, classname, name):
                        tampered.append(
                            f"{test_id} is reported {status} in the log but failed in "
                            "pytest's JUnit XML report"
                        )
    tests_status = report.get("tests_status") or {
        FAIL_TO_PASS: {"success": [], "failure": list(instance.FAIL_TO_PASS)},
        PASS_TO_PASS: {"success": [], "failure": list(instance.PASS_TO_PASS)},
    }
    if tampered or not found:
        # Nothing in this log can be trusted (or read): every graded test counts as failing.
        tests_status = {
            FAIL_TO_PASS: {"success": [], "failure": list(instance.FAIL_TO_PASS)},
            PASS_TO_PASS: {"success": [], "failure": list(instance.PASS_TO_PASS)},
        }
    resolved = bool(report.get("resolved")) and not tampered
    return {
        "resolved": resolved,
        "log_parsed": bool(found),
        "tampered": tampered,
        "tests_status": {k: tests_status[k] for k in (FAIL_TO_PASS, PASS_TO_PASS)},
        "status_map": dict(status_map),
        "junit_checked": junit_xml is not None,
        "infra_failure": bool(report.get("infra_failure")),
    }


def graded_outcome(instance: SWEInstance, details: dict[str, Any], test_log: str) -> Outcome:
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT

    ts = details["tests_status"]
    f2p_ok, f2p_bad = ts["FAIL_TO_PASS"]["success"], ts["FAIL_TO_PASS"]["failure"]
    p2p_ok, p2p_bad = ts["PASS_TO_PASS"]["success"], ts["PASS_TO_PASS"]["failure"]
    graded = len(f2p_ok) + len(f2p_bad) + len(p2p_ok) + len(p2p_bad)
    passing = len(f2p_ok) + len(p2p_ok)
    partial = passing / graded if graded else (1.0 if details["resolved"] else 0.0)
    resolved = bool(details["resolved"])
    if resolved:
        partial = 1.0
    details["tests_passing"] = passing
    details["tests_graded"] = graded
    report = TestReport(
        fail_to_pass_passed=list(f2p_ok),
        fail_to_pass_failed=list(f2p_bad),
        pass_to_pass_passed=list(p2p_ok),
        pass_to_pass_failed=list(p2p_bad),
        log_trusted=not details["tampered"] and bool(details["log_parsed"]),
    )
    if resolved:
        feedback = (
            f"resolved: all {len(f2p_ok)} FAIL_TO_PASS and {len(p2p_ok)} PASS_TO_PASS tests pass"
        )
        return Outcome(
            success=True, partial_score=1.0, feedback=feedback, tests=report, details=details
        )
    parts = [f"unresolved: {passing}/{graded} graded tests pass"]
    if details["tampered"]:
        parts.append("test log rejected: " + "; ".join(details["tampered"][:5]))
    elif not details["log_parsed"]:
        parts.append("the test log could not be parsed (no test results found)")
    if f2p_bad:
        parts.append("FAIL_TO_PASS tests still failing: " + ", ".join(f2p_bad))
    if p2p_bad:
        parts.append("PASS_TO_PASS tests now failing: " + ", ".join(p2p_bad))
    section = test_log
    if START_TEST_OUTPUT in section:
        section = section.split(START_TEST_OUTPUT, 1)[1].split(END_TEST_OUTPUT, 1)[0]
        section = section.split("\n", 1)[-1]
    parts.append("test output (tail):\n" + tail(section))
    return Outcome(
        success=False,
        partial_score=min(1.0, max(0.0, partial)),
        feedback="\n".join(parts),
        tests=report,
        details=details,
    )


def failed_report(instance: SWEInstance, *, applied: bool, timed_out: bool = False) -> TestReport:
    """The test evidence of a run that graded nothing: every graded test fails."""
    return TestReport(
        patch_applied=applied,
        timed_out=timed_out,
        fail_to_pass_failed=list(instance.FAIL_TO_PASS),
        pass_to_pass_failed=list(instance.PASS_TO_PASS),
        log_trusted=False,
    )


def outcome_summary(outcome: Outcome) -> str:
    """One line for logs: resolved or not, and the partial score."""
    d = outcome.details
    return json.dumps(
        {
            "resolved": outcome.success,
            "partial_score": round(outcome.partial_score, 4),
            "timed_out": d.get("timed_out", False),
            "patch_applied": d.get("patch_applied"),
        }
    )


def changed_lines(patch: str) -> tuple[str, ...]:
    """The lines a unified diff removes and adds (``-``/``+`` lines, headers left out):
    what the patch changes, the same for two diffs of one change."""
    return tuple(
        ln for ln in patch.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++ ", "--- "))
    )


def hide_fail_to_pass(outcome: Outcome) -> Outcome:
    """``outcome`` as a search may see it when the FAIL_TO_PASS tests are hidden
    (SWE-bench's protocol): their results, names and output are gone; what is left is
    whether the patch applied and which PASS_TO_PASS tests it broke. ``success`` is
    False (the search cannot know), ``partial_score`` the share of PASS_TO_PASS tests
    that still pass."""
    report = outcome.tests
    if report is None:
        return Outcome(
            success=False, partial_score=0.0, feedback=outcome.feedback, size=outcome.size
        )
    hidden = len(report.fail_to_pass_passed) + len(report.fail_to_pass_failed)
    visible = report.model_copy(
        update={"fail_to_pass_passed": [], "fail_to_pass_failed": [], "hidden": hidden}
    )
    if not report.patch_applied:
        return Outcome(
            success=False,
            feedback=tail(outcome.feedback.split("\n", 1)[0]),
            tests=visible,
            size=outcome.size,
            details={"patch_applied": False},
        )
    kept, broken = report.pass_to_pass_passed, report.pass_to_pass_failed
    graded = len(kept) + len(broken)
    lines = [
        f"{hidden} FAIL_TO_PASS test(s) are hidden from the search; "
        f"{len(kept)} of {graded} PASS_TO_PASS tests pass"
    ]
    if report.timed_out:
        lines.append("the tests timed out")
    elif not report.log_trusted:
        lines.append("the test log could not be trusted or parsed")
    if broken:
        lines.append("PASS_TO_PASS tests now failing: " + ", ".join(broken))
    return Outcome(
        success=False,
        partial_score=len(kept) / graded if graded and report.log_trusted else 0.0,
        feedback="\n".join(lines),
        tests=visible,
        size=outcome.size,
        details={"patch_applied": True},
    )
