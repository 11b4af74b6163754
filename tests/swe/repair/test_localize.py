"""Fault localisation: the spectrum formulas on hand-made spectra, the ranking rules, the
traceback fallback, the cache, and the real thing on the four example instances (Docker
and bubblewrap)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.errors import ConfigError
from atlas_actors.swe.instances import SWEInstance, make_eval_script
from atlas_actors.swe.repair.batch import BatchEvaluator, CandidatePatch
from atlas_actors.swe.repair.incontainer.atlas_trace import (
    branches,
    graded_id,
    is_test_path,
    matches,
)
from atlas_actors.swe.repair.localize import (
    CoverageRun,
    LocalizationCache,
    TestRecord,
    build,
    by_selected,
    dstar,
    folders_of,
    localize,
    ochiai,
    rank_spectrum,
    rank_tracebacks,
    tarantula,
    tracebacks_from_log,
    wider_suite,
)
from tests.swe.repair.repair_cases import diff_files, gold_lines, patched_text

EXAMPLES = ("datecalc", "exprcalc", "intervals", "textkit")


# ------------------------------------------------------------ formulas, exact values


def test_ochiai_exact_values() -> None:
    # ef, ep, nf, np
    assert ochiai(2, 1, 0, 5) == pytest.approx(2 / math.sqrt(2 * 3), abs=1e-15)
    assert ochiai(1, 0, 1, 3) == pytest.approx(1 / math.sqrt(2 * 1), abs=1e-15)
    assert ochiai(3, 0, 0, 4) == 1.0
    assert ochiai(0, 4, 2, 0) == 0.0
    assert ochiai(0, 0, 0, 0) == 0.0


def test_dstar_exact_values() -> None:
    assert dstar(2, 1, 0, 5) == 4.0  # 2**2 / (1 + 0)
    assert dstar(2, 3, 1, 2) == 1.0  # 4 / 4
    assert dstar(3, 1, 1, 0, star=3) == 13.5  # 27 / 2
    assert dstar(2, 0, 0, 6) == 8.0  # ep + nf = 0: denominator 0.5
    assert dstar(0, 3, 2, 1) == 0.0


def test_tarantula_exact_values() -> None:
    assert tarantula(2, 1, 0, 5) == pytest.approx(1 / (1 + 1 / 6), abs=1e-15)  # 6/7
    assert tarantula(1, 2, 1, 2) == pytest.approx(0.5 / (0.5 + 0.5), abs=1e-15)
    assert tarantula(2, 0, 0, 0) == 1.0  # no passing test
    assert tarantula(0, 1, 2, 1) == 0.0


def rec(name: str, outcome: str, lines: dict[str, list[int]], tb: Any = ()) -> TestRecord:
    return TestRecord(test=name, outcome=outcome, lines=lines, tb=list(tb))


# A hand-made spectrum: f.py lines 1-6; two failing tests, three passing.
SPECTRUM = [
    rec("t::f1", "failed", {"f.py": [1, 2, 3, 5]}),
    rec("t::f2", "failed", {"f.py": [1, 2, 5, 6]}),
    rec("t::p1", "passed", {"f.py": [1, 2, 4]}),
    rec("t::p2", "passed", {"f.py": [1, 3, 4]}),
    rec("t::p3", "passed", {"f.py": [1, 6]}),
    rec("t::s", "skipped", {"f.py": [1, 2, 3, 4, 5, 6]}),  # neither failing nor passing
]


def test_rank_spectrum_scores_and_order() -> None:
    lines = rank_spectrum(SPECTRUM, "ochiai", inherit=False)
    counts = {(x.path, x.line): (x.failed, x.passed) for x in lines}
    scores = {(x.path, x.line): x.score for x in lines}
    # F = 2, P = 3.  line 5: ef 2 ep 0; 2: ef 2 ep 1; 1: ef 2 ep 3; 3 and 6: ef 1 ep 1.
    assert counts == {
        ("f.py", 5): (2, 0),
        ("f.py", 2): (2, 1),
        ("f.py", 1): (2, 3),
        ("f.py", 3): (1, 1),
        ("f.py", 6): (1, 1),
    }  # line 4: no failing test runs it
    assert scores[("f.py", 5)] == 1.0
    assert scores[("f.py", 2)] == pytest.approx(2 / math.sqrt(6), abs=1e-15)
    assert scores[("f.py", 1)] == pytest.approx(2 / math.sqrt(10), abs=1e-15)
    assert scores[("f.py", 3)] == scores[("f.py", 6)] == 0.5
    assert [x.line for x in lines] == [5, 2, 1, 3, 6]  # 3 and 6 tie: by line number
    d = rank_spectrum(SPECTRUM, "dstar", inherit=False)
    assert [(x.line, x.score) for x in d][:2] == [(5, 8.0), (2, 4.0)]
    t = rank_spectrum(SPECTRUM, "tarantula", inherit=False)
    assert t[0].line == 5 and t[0].score == 1.0
    with pytest.raises(ConfigError, match="formula"):
        rank_spectrum(SPECTRUM, "jaccard")


def test_conditions_inherit_their_blocks_score_and_tracebacks_break_ties() -> None:
    # line 2 is an `if` whose block starts at line 5 (score 1.0): it inherits 1.0 and, on
    # the tie, comes first by line number; a traceback frame outranks both.
    lines = rank_spectrum(SPECTRUM, "ochiai", branches={"f.py": [(2, [5])]})
    assert [(x.line, x.score, x.via) for x in lines[:2]] == [(2, 1.0, 5), (5, 1.0, None)]
    with_tb = [
        *SPECTRUM[:1],
        SPECTRUM[1].model_copy(update={"tb": [("f.py", 5), ("f.py", 1)]}),
        *SPECTRUM[2:],
    ]
    lines = rank_spectrum(with_tb, "ochiai", branches={"f.py": [(2, [5])]})
    assert [(x.line, x.traceback_rank) for x in lines[:2]] == [(5, 0), (2, None)]
    # A condition never loses score: its own (higher) score stays.
    lines = rank_spectrum(SPECTRUM, "ochiai", branches={"f.py": [(5, [3])]})
    assert lines[0].line == 5 and lines[0].via is None


def test_ties_go_to_the_files_the_failing_tests_tracebacks_pass_through() -> None:
    tests = [
        rec("t::f", "failed", {"a.py": [1], "b.py": [1, 2]}, [("b.py", 2)]),
        rec("t::p", "passed", {}),
    ]
    lines = rank_spectrum(tests, "ochiai", inherit=False)
    # all three tie at 1.0: the traceback's line, then its file's other line, then a.py
    assert [(x.path, x.line) for x in lines] == [("b.py", 2), ("b.py", 1), ("a.py", 1)]


def test_rank_tracebacks_innermost_first() -> None:
    tests = [
        rec("t::a", "failed", {}, [("m.py", 10), ("m.py", 3), ("n.py", 7)]),
        rec("t::b", "failed", {}, [("m.py", 10), ("n.py", 7)]),
        rec("t::c", "passed", {}, [("z.py", 1)]),  # passing tests do not count
    ]
    lines = rank_tracebacks(tests)
    assert [(x.path, x.line) for x in lines] == [("m.py", 10), ("n.py", 7), ("m.py", 3)]
    assert lines[0].score == 1.0 and lines[0].failed == 2
    assert lines[1].score == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert rank_tracebacks([rec("t::c", "passed", {})]) == []


def test_tracebacks_from_native_log() -> None:
    log = """
______________________ test_division ______________________
Traceback (most recent call last):
  File "/testbed/tests/test_parser.py", line 36, in test_division
    evaluate("1 / 0")
  File "/testbed/exprcalc/parser.py", line 82, in evaluate
    value = parser.expr()
  File "/testbed/exprcalc/parser.py", line 62, in term
    value /= self.factor()
  File "/usr/lib/python3.11/fractions.py", line 430, in _div
ZeroDivisionError: Fraction(1, 0)
"""
    assert tracebacks_from_log(log) == {
        "test_division": [("exprcalc/parser.py", 62), ("exprcalc/parser.py", 82)]
    }


def test_repository_file_rules_and_branches(tmp_path: Path) -> None:
    assert is_test_path("tests/test_x.py") and is_test_path("pkg/conftest.py")
    assert is_test_path("pkg/foo_test.py") and is_test_path("testing/helpers.py")
    assert not is_test_path("pkg/testament.py") and not is_test_path("pkg/core.py")
    src = tmp_path / "m.py"
    src.write_text(
        "def f(x):\n    if x:\n        a = 1\n    elif x is None:\n        a = 2\n"
        "    else:\n        a = 3\n    while a:\n        a -= 1\n    return a\n"
    )
    assert branches(str(src)) == [[2, [3, 4]], [4, [5, 7]], [8, [9]]]


def test_build_without_coverage_falls_back_to_tracebacks() -> None:
    inst_like = SWEInstance.model_construct(
        instance_id="x",
        repo="o/r",
        base_commit="abc",
        problem_statement="",
        test_patch="",
        FAIL_TO_PASS=[],
        image="i",
        eval_script="",
    )
    run = CoverageRun(
        coverage=False,
        plain=[
            rec("t::a", "failed", {}, [("m.py", 4)]),
            rec("t::b", "passed", {}),
        ],
    )
    loc = build(inst_like, run, "ochiai", ["t::a", "t::b", "t::gone"])
    assert loc.method == "traceback" and loc.top(1) == [("m.py", 4)]
    assert loc.failing == ["t::a"] and loc.passing == ["t::b"] and loc.missing == ["t::gone"]
    empty = build(
        inst_like,
        CoverageRun(coverage=False, plain=[rec("t::a", "failed", {})]),
        "ochiai",
        ["t::a"],
    )
    assert empty.method == "none" and empty.lines == []


# ------------------------------------------- SWE-bench's ids, cut at the first space

CUT = "t.py::test_x[a"
"""How swebench's log parser names ``t.py::test_x[a b]`` and ``t.py::test_x[a c]``."""


def test_graded_ids_are_cut_at_the_first_whitespace_and_matched() -> None:
    assert graded_id("t.py::test_x[a b]") == CUT
    assert graded_id("t.py::test_y[1-2]") == "t.py::test_y[1-2]"
    wanted = {CUT: 0, "t.py::test_y[1-2]": 1}
    assert matches("t.py::test_x[a c]", wanted) == CUT
    assert matches("t.py::test_y[1-2]", wanted) == "t.py::test_y[1-2]"
    assert matches("t.py::test_x[b c]", wanted) is None


def test_a_cut_id_folds_the_tests_it_stands_for() -> None:
    records = [
        rec("t.py::test_x[a b]", "passed", {}).model_copy(update={"seconds": 0.5}),
        rec("t.py::test_x[a c]", "failed", {}, [("m.py", 3)]).model_copy(
            update={"seconds": 0.25, "message": "AssertionError: c"}
        ),
        rec("t.py::test_x[z w]", "passed", {}),  # not selected
        rec("t.py::test_y", "passed", {}),
    ]
    got = by_selected(records, ["t.py::test_y", CUT, "t.py::gone"])
    assert [(t.test, t.outcome) for t in got] == [("t.py::test_y", "passed"), (CUT, "failed")]
    assert got[1].seconds == 0.75 and got[1].message == "AssertionError: c"
    assert got[1].tb == [("m.py", 3)]
    # every test it stands for passes: it passes
    fixed = [records[0], records[1].model_copy(update={"outcome": "passed"})]
    assert [t.outcome for t in by_selected(fixed, [CUT])] == ["passed"]
    # two of its tests fail differently: the folded record names both failures
    both = [
        records[1],
        records[0].model_copy(update={"outcome": "failed", "message": "TypeError: t"}),
    ]
    assert by_selected(both, [CUT])[0].message == "AssertionError: c\nTypeError: t"
    inst_like = SWEInstance.model_construct(instance_id="x", base_commit="abc")
    loc = build(inst_like, CoverageRun(coverage=False, plain=records), "ochiai",
                [CUT, "t.py::test_y", "t.py::gone"])  # fmt: skip
    assert loc.failing == [CUT] and loc.passing == ["t.py::test_y"]
    assert loc.missing == ["t.py::gone"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_cut_ids_are_run_through_their_files_and_graded_whole(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    """Localisation and the fast screen on ids cut at a space, as SWE-bench lists them:
    pytest is never given such an id (it would run nothing); the tests it stands for run
    and it fails when one of them fails."""
    inst = examples["textkit"]
    test_file = "tests/test_wrap.py"
    body = patched_text(inst, test_file, inst.test_patch)
    spaced = (
        "\n\nimport pytest\n\n\n"
        '@pytest.mark.parametrize("text", ["a b", "a c", "x y"])\n'
        "def test_spaced(text):\n"
        '    assert text != "a c"\n'
    )
    test_patch = diff_files(inst, {test_file: body + spaced})
    f2p, p2p = f"{test_file}::test_spaced[a", f"{test_file}::test_spaced[x"
    inst2 = inst.model_copy(
        update={
            "instance_id": inst.instance_id + "-cut",
            "test_patch": test_patch,
            "eval_script": make_eval_script(inst.base_commit, [test_file], test_patch),
            "FAIL_TO_PASS": [f2p, *inst.FAIL_TO_PASS],
            "PASS_TO_PASS": [*inst.PASS_TO_PASS, p2p],
        }
    )
    async with env_factory("textkit", "docker") as env:
        loc = await localize(env, inst2, cache=None)
        assert not loc.missing, loc.notes
        assert sorted(loc.failing) == sorted(inst2.FAIL_TO_PASS)
        assert p2p in loc.passing and loc.method == "spectrum"
        # the failing tests ran first (a run cut by its time bound keeps them)
        assert [t.test for t in loc.tests][: len(inst2.FAIL_TO_PASS)] == inst2.FAIL_TO_PASS
        evaluator = BatchEvaluator(fail_fast=False)
        [base] = await evaluator.evaluate(env, inst2, [CandidatePatch(diff="")], baseline=loc)
    verdicts = {t.test: t.outcome for t in base.tests}
    assert verdicts[f2p] == "failed" and verdicts[p2p] == "passed"
    assert not base.not_run


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_the_wider_suite_lists_the_passing_tests_nobody_grades(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    inst = examples["textkit"]
    dropped = inst.PASS_TO_PASS[0]
    graded = inst.model_copy(update={"PASS_TO_PASS": inst.PASS_TO_PASS[1:]})
    assert folders_of([*inst.FAIL_TO_PASS, "a.py::t", "x/y/b.py::t"])[-2:] == [".", "x/y"]
    async with env_factory("textkit", "docker") as env:
        suite = await wider_suite(env, graded)
    assert suite.folders == folders_of(inst.FAIL_TO_PASS)
    # the test left out of PASS_TO_PASS passes at base: the wider suite has it; the
    # graded tests and the failing ones are not in it
    assert dropped in suite.passing and suite.durations[dropped] > 0
    assert not set(suite.passing) & {*graded.FAIL_TO_PASS, *graded.PASS_TO_PASS}


# --------------------------------------------------------- the real thing, in workspaces


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_buggy_line_ranks_first_on_every_example(
    backend: str,
    examples: dict[str, SWEInstance],
    env_factory: Callable[..., Any],
) -> None:
    for name in EXAMPLES:
        inst = examples[name]
        async with env_factory(name, backend) as env:
            loc = await localize(env, cache=LocalizationCache())
        gold = gold_lines(inst.patch)
        assert loc.method == "spectrum", (name, loc.notes)
        assert loc.lines[0].path == next(iter(gold))[0]
        assert (loc.lines[0].path, loc.lines[0].line) in gold, (name, loc.lines[:3])
        assert sorted(loc.failing) == sorted(inst.FAIL_TO_PASS), name
        assert sorted(loc.passing) == sorted(inst.PASS_TO_PASS), name
        assert not loc.missing and all(t.seconds > 0 for t in loc.tests)
        assert all(not t.lines for t in loc.tests)  # the plain run carries no coverage
        assert not any(is_test_path(x.path) for x in loc.lines)
        # The buggy line is executed by every failing test.
        assert loc.lines[0].failed == len(inst.FAIL_TO_PASS) or loc.lines[0].via is not None


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_other_formulas_and_traceback_fallback_in_docker(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    cache = LocalizationCache()
    async with env_factory("exprcalc", "docker") as env:
        spectrum = await localize(env, formula="dstar", cache=cache)
        assert spectrum.formula == "dstar" and spectrum.top(1) == [("exprcalc/parser.py", 62)]
        tarantula_loc = await localize(env, formula="tarantula", cache=cache)
        assert tarantula_loc.cached  # the spectra are cached, ranked per formula
        assert ("exprcalc/parser.py", 62) in tarantula_loc.top(3)
        # No coverage: the failing tests' tracebacks (ZeroDivisionError raised at line 62).
        tb = await localize(env, coverage=False, cache=cache)
        assert tb.method == "traceback"
        assert tb.top(2) == [("exprcalc/parser.py", 62), ("exprcalc/parser.py", 48)]
        assert tb.lines[0].score == 1.0 and tb.lines[0].traceback_rank == 0
    async with env_factory("textkit", "docker") as env:
        # Its failing tests fail on assertions in the test file: no repository frame.
        none = await localize(env, coverage=False, cache=cache)
        assert none.method == "none" and none.lines == []
        assert sorted(none.failing) == sorted(examples["textkit"].FAIL_TO_PASS)


class _Unusable:
    """A workspace that must not be used (the cache must answer)."""

    async def run_with_files(self, *a: Any, **k: Any) -> Any:
        raise AssertionError("the cache should have answered")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_cache_hits_in_memory_and_on_disk(
    docker_host: str,
    examples: dict[str, SWEInstance],
    env_factory: Callable[..., Any],
    tmp_path: Path,
) -> None:
    inst = examples["intervals"]
    cache = LocalizationCache(tmp_path / "fl-cache")
    async with env_factory("intervals", "docker") as env:
        first = await localize(env, cache=cache)
        assert not first.cached and cache.misses == 1 and first.seconds > 0
        started = time.monotonic()
        again = await localize(env, cache=cache)
        assert again.cached and cache.hits == 1 and time.monotonic() - started < 1.0
        assert again.lines == first.lines and again.tests == first.tests
    # A new cache over the same folder answers without running anything.
    disk = LocalizationCache(tmp_path / "fl-cache")
    loaded = await localize(_Unusable(), inst, cache=disk)  # type: ignore[arg-type]
    assert loaded.cached and loaded.lines == first.lines and disk.hits == 1
    # Another test list is another key.
    other = LocalizationCache.key(inst, inst.FAIL_TO_PASS, True)
    assert other != LocalizationCache.key(inst, [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS], True)
    with pytest.raises(AssertionError, match="cache"):
        await localize(_Unusable(), inst, tests=inst.FAIL_TO_PASS, cache=disk)  # type: ignore[arg-type]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_a_hanging_failing_test_is_stopped_and_keeps_its_coverage(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    inst = examples["textkit"]
    test_file = "tests/test_wrap.py"
    # The test patch plus a test that never returns (a loop around the code under test).
    body = patched_text(inst, test_file, inst.test_patch)
    hang = '\n\ndef test_wrap_never_returns():\n    while True:\n        wrap("a b", 5)\n'
    test_patch = diff_files(inst, {test_file: body + hang})
    hanging = f"{test_file}::test_wrap_never_returns"
    inst2 = inst.model_copy(
        update={
            "instance_id": inst.instance_id + "-hang",
            "test_patch": test_patch,
            "eval_script": make_eval_script(inst.base_commit, [test_file], test_patch),
            "FAIL_TO_PASS": [*inst.FAIL_TO_PASS, hanging],
        }
    )
    async with env_factory("textkit", "docker") as env:
        started = time.monotonic()
        loc = await localize(env, inst2, cache=None, test_timeout_s=2)
        assert time.monotonic() - started < 120
    rec_ = next(t for t in loc.tests if t.test == hanging)
    assert rec_.outcome == "failed" and "timeout" in rec_.message
    assert loc.method == "spectrum" and not loc.missing
    assert sorted(loc.failing) == sorted(inst2.FAIL_TO_PASS)
    # Line 19 (a word that fits) runs in no other failing test: the hung test's coverage.
    line19 = next(x for x in loc.lines if (x.path, x.line) == ("textkit/wrap.py", 19))
    assert line19.failed == 1


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_localisation_is_bounded_in_time_and_keeps_the_failing_tests_it_ran(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    """A passing test that never returns, listed first among the passing ones, and no
    per-test timeout to stop it: the run is cut at its bound, and the failing tests
    (run first, whatever the files' order) still rank the lines."""
    inst = examples["textkit"]
    test_file = "tests/test_wrap.py"
    body = patched_text(inst, test_file, inst.test_patch)
    hang = "\n\nimport time\n\n\ndef test_a_sleeper():\n    time.sleep(3600)\n"
    test_patch = diff_files(inst, {test_file: body + hang})
    sleeper = f"{test_file}::test_a_sleeper"
    inst2 = inst.model_copy(
        update={
            "instance_id": inst.instance_id + "-bound",
            "test_patch": test_patch,
            "eval_script": make_eval_script(inst.base_commit, [test_file], test_patch),
            "PASS_TO_PASS": [sleeper, *inst.PASS_TO_PASS],
        }
    )
    async with env_factory("textkit", "docker") as env:
        started = time.monotonic()
        loc = await localize(env, inst2, cache=None, timeout_s=30, test_timeout_s=3600)
        assert time.monotonic() - started < 90
    assert any("partial" in note for note in loc.notes), loc.notes
    assert sorted(loc.failing) == sorted(inst.FAIL_TO_PASS)
    assert sleeper in loc.missing
    # no passing test finished: the failing tests' coverage alone ranks (the fixed line
    # among those at the top score)
    best = {(x.path, x.line) for x in loc.lines if x.score == loc.lines[0].score}
    assert loc.method == "spectrum" and gold_lines(inst.patch) <= best
