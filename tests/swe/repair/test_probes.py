"""Probes: perturbed copies of a failing test, how a run ended, when a patch broke where
the base did not, and the test file rebuilt with the test patch (real ``git apply``)."""

from __future__ import annotations

import ast
import textwrap

from atlas_actors.swe.repair.batch import TestVerdict
from atlas_actors.swe.repair.probes import (
    broke,
    ending,
    numbers_in_test,
    rebuilt_test_file,
    split_test_id,
    variants,
)

TEST_FILE = textwrap.dedent(
    """\
    import pytest

    from calc import split


    def test_split():
        assert split(10, 3) == [4, 3, 3]
        parts = split(7, 2)
        assert parts == [4, 3]


    class TestErrors:
        def test_nobody(self):
            with pytest.raises(ValueError, match="2 ways"):
                split(5, 0)
    """
)


def test_split_test_id() -> None:
    assert split_test_id("t/test_a.py::TestErrors::test_nobody[x-1]") == (
        "t/test_a.py",
        ["TestErrors", "test_nobody"],
    )


def test_variants_move_the_inputs_one_at_a_time_and_leave_expected_values() -> None:
    got = variants(TEST_FILE, "tests/test_calc.py::test_split")
    # 10 and 3 are in an assert (expected results): only split(7, 2)'s inputs move
    assert [v.what for v in got] == [
        "7 -> 8 at line 8",
        "7 -> 6 at line 8",
        "2 -> 3 at line 8",
        "2 -> 1 at line 8",
    ]
    assert got[0].source.splitlines()[7] == "    parts = split(8, 2)"
    for v in got:
        ast.parse(v.source)
        assert v.path == "tests/test_calc.py" and v.test.endswith("::test_split")
    # a method of a test class; match= patterns are expected values too
    nobody = variants(TEST_FILE, "tests/test_calc.py::TestErrors::test_nobody", limit=3)
    assert [v.what for v in nobody] == [
        "5 -> 6 at line 15",
        "5 -> 4 at line 15",
        "0 -> 1 at line 15",
    ]
    assert variants(TEST_FILE, "tests/test_calc.py::test_missing") == []


def test_the_numbers_of_a_test_include_expected_values() -> None:
    assert numbers_in_test(TEST_FILE, "x.py::test_split", 8) == [10, 3, 4, 7, 2]


def verdict(outcome: str, message: str = "") -> TestVerdict:
    return TestVerdict(test="t.py::t", outcome=outcome, message=message)


def test_endings_and_breaking() -> None:
    assert ending(verdict("passed")) == "passed"
    assert ending(verdict("failed", "AssertionError: assert 1 == 2")) == "assertion"
    assert ending(verdict("failed", "Failed: DID NOT RAISE <class 'ValueError'>")) == "assertion"
    assert ending(verdict("failed", "ZeroDivisionError: division by zero")) == "ZeroDivisionError"
    assert ending(verdict("timeout")) == "timeout"
    assert broke("assertion", "ZeroDivisionError") and broke("passed", "timeout")
    assert not broke("ZeroDivisionError", "ZeroDivisionError")
    assert not broke("TypeError", "ValueError")  # the base raised too
    assert not broke("passed", "assertion")


async def test_the_test_file_is_rebuilt_with_the_test_patch() -> None:
    base = "def test_a():\n    assert 1\n"
    patch = textwrap.dedent(
        """\
        diff --git a/tests/test_x.py b/tests/test_x.py
        --- a/tests/test_x.py
        +++ b/tests/test_x.py
        @@ -1,2 +1,5 @@
         def test_a():
             assert 1
        +
        +def test_b():
        +    assert 2
        diff --git a/tests/test_new.py b/tests/test_new.py
        new file mode 100644
        --- /dev/null
        +++ b/tests/test_new.py
        @@ -0,0 +1,2 @@
        +def test_c():
        +    assert 3
        """
    )
    assert (
        await rebuilt_test_file(base, "tests/test_x.py", patch)
        == base + "\ndef test_b():\n    assert 2\n"
    )
    assert (
        await rebuilt_test_file(None, "tests/test_new.py", patch) == "def test_c():\n    assert 3\n"
    )
    assert await rebuilt_test_file(base, "tests/test_other.py", patch) == base
    assert await rebuilt_test_file("unrelated\n", "tests/test_x.py", patch) is None
