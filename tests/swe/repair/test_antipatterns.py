"""The anti-patterns refused before the screen: each refuses the edit of its kind, with a
reason that names what it saw, and lets the real fix of the same code through."""

from __future__ import annotations

import textwrap

import pytest

from atlas_actors.swe.repair.antipatterns import (
    ANTI_PATTERNS,
    DEFAULT_ANTI_PATTERNS,
    Evidence,
    refusal,
)
from atlas_actors.swe.repair.operators import CandidateEdit, generate_edits

LOOP = textwrap.dedent(
    """\
    def total(items, factor):
        out = []
        for item in items:
            if item.price > 10:
                out.append(item.price * factor)
        return sum(out)
    """
)
COVERED = Evidence(covered={"m.py": {2, 3, 4, 5, 6}})


def edit_of(source: str, line: int, label: str, families: list[str]) -> CandidateEdit:
    edits = generate_edits(source, "m.py", {line: 1.0}, families=families)
    found = [e for e in edits if e.label.startswith(label)]
    assert found, [e.label for e in edits]
    return found[0]


def test_an_edit_that_leaves_a_loop_variable_unused_is_refused() -> None:
    edit = edit_of(LOOP, 4, "item -> factor", ["identifier_replace"])
    assert edit.new_text.count("item.price") == 1
    assert refusal(edit, COVERED) is None  # `item` is still read on line 5
    both = generate_edits(
        LOOP.replace("if item.price > 10:\n            out", "out"),
        "m.py",
        {4: 1.0},
        families=["identifier_replace"],
    )
    unused = [e for e in both if "item.price" not in e.new_text.split("for item")[1]]
    assert unused
    assert refusal(unused[0], COVERED) == ("unused_binding", "makes `item` unused")


def test_deleting_the_only_use_of_a_parameter_is_refused() -> None:
    edit = edit_of(LOOP, 5, "delete", ["stmt_delete"])
    why = refusal(edit, COVERED)
    assert why == ("unused_binding", "deletes the only use of parameter `factor`")


def test_a_break_before_code_a_failing_test_runs_is_refused() -> None:
    edit = edit_of(LOOP, 4, "insert `break` before line 4", ["stmt_insert"])
    name, reason = refusal(edit, COVERED) or ("", "")
    assert name == "early_exit" and "line 4" in reason
    # the same break where no failing test runs is kept
    assert refusal(edit, Evidence(covered={"m.py": {2, 3}})) is None


def test_a_break_directly_in_a_loop_body_ends_the_loop() -> None:
    edit = edit_of(LOOP, 4, "insert `break` after line 5", ["stmt_insert"])
    assert refusal(edit, COVERED) == (
        "early_exit",
        "`break` ends the loop at line 3 after its first pass",
    )


def test_a_break_under_an_if_and_a_return_before_a_constant_exit_are_kept() -> None:
    bins = textwrap.dedent(
        """\
        def add(counts, edges, value):
            for i, upper in enumerate(edges):
                if value < upper:
                    counts[i] += 1
            return counts
        """
    )
    fix = edit_of(bins, 4, "insert `break` after line 4", ["stmt_insert"])
    assert refusal(fix, Evidence(covered={"m.py": {2, 3, 4, 5}})) is None
    index = textwrap.dedent(
        """\
        def index(cols, name):
            for i, col in enumerate(cols):
                if col == name:
                    return i
            return -1
        """
    )
    early = edit_of(index, 5, "insert `return` before line 5", ["stmt_insert"])
    assert refusal(early, Evidence(covered={"m.py": {2, 3, 5}})) is None


def test_a_returned_comparison_made_constant_is_refused() -> None:
    source = "def fits(a, b, c):\n    return a < b and c\n"
    edit = edit_of(source, 2, "return a < b and c -> return False", ["return_value"])
    name, reason = refusal(edit, Evidence(), ["constant_condition"]) or ("", "")
    assert name == "constant_condition" and "`False`" in reason


def test_an_edit_inside_a_checking_method_is_refused_only_for_assertion_failures() -> None:
    source = textwrap.dedent(
        """\
        class Money:
            def __init__(self, cents):
                self.cents = cents

            def __eq__(self, other):
                return self.cents == other.cents
        """
    )
    edit = edit_of(source, 6, "==", ["comparison_operator"])
    assert refusal(edit, Evidence(assertion_failures=True), ANTI_PATTERNS) == (
        "checks_not_calls",
        "edits `__eq__`, which the failing assertions check results through",
    )
    assert refusal(edit, Evidence(assertion_failures=False), ANTI_PATTERNS) is None
    # not among the defaults: it would refuse the fix of a bug in ``__eq__`` itself
    assert "checks_not_calls" not in DEFAULT_ANTI_PATTERNS
    assert refusal(edit, Evidence(assertion_failures=True)) is None


def test_only_the_requested_checks_run_and_unknown_names_are_an_error() -> None:
    edit = edit_of(LOOP, 5, "delete", ["stmt_delete"])
    assert refusal(edit, COVERED, ["early_exit"]) is None
    assert set(ANTI_PATTERNS) >= {"unused_binding", "early_exit"}
    with pytest.raises(ValueError, match="unknown nonsense"):
        refusal(edit, COVERED, ["nonsense"])
