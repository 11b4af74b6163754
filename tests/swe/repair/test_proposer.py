"""OfflineRepairProposer without a container: the finer progress signal (how a failing
test's failure moved), children for an edit that is only part of a fix, the cap on such
children, and concurrent expansions of one node.

The toolbox here runs candidates in process: a candidate's module text is executed and
the tests (real Python source compiled under their file name) are called; a failure's
message and the test line it reached come from the in-container helpers
(``atlas_trace.describe`` and ``atlas_trace.test_line``), as in the batch worker.
"""

from __future__ import annotations

import random
import textwrap
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from atlas_actors.search.base import NodeView
from atlas_actors.swe.repair.batch import CandidatePatch, CandidateResult, TestVerdict
from atlas_actors.swe.repair.incontainer import atlas_trace
from atlas_actors.swe.repair.proposer import (
    MOVED_CHANGED,
    MOVED_FURTHER,
    Failure,
    OfflineRepairProposer,
    failure_of,
    failures,
    movement,
)
from atlas_actors.types import Task

# --------------------------------------------------------------------- the signal


def verdict(test: str, outcome: str = "failed", message: str = "", line: int = 0) -> TestVerdict:
    return TestVerdict(test=test, outcome=outcome, message=message, line=line)  # type: ignore[arg-type]


def result(*tests: TestVerdict) -> CandidateResult:
    return CandidateResult(index=0, applied=True, compiled=True, tests=list(tests))


A, B = "tests/test_m.py::test_a", "tests/test_m.py::test_b"


def test_failure_signature_blanks_addresses_and_scratch_folders() -> None:
    one = failure_of(
        verdict(A, message="AssertionError: <Obj at 0x7f3a1> in /tmp/atlas-batch-ab12/c3/x", line=9)
    )
    two = failure_of(
        verdict(A, message="AssertionError: <Obj at 0x55b0e> in /tmp/atlas-batch-ab12/c7/x", line=9)
    )
    assert one == two
    assert one.assertion and one.line == 9
    assert not failure_of(verdict(A, message="TypeError: bad operand", line=9)).assertion
    assert not failure_of(verdict(A, "error", "AssertionError: in a fixture")).assertion


def test_failures_keeps_only_failing_tests_that_did_not_pass() -> None:
    res = result(
        verdict(A, "passed"),
        verdict(B, message="AssertionError: assert 1 == 2", line=5),
        verdict("tests/test_m.py::test_kept", message="AssertionError"),
    )
    assert set(failures(res, {A, B})) == {B}


def sig(
    line: int, message: str = "AssertionError: assert 1 == 2", outcome: str = "failed"
) -> Failure:
    return failure_of(verdict(A, outcome, message, line))


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # the same failure: nothing moved
        (sig(5), sig(5), 0),
        # the first assertion passes now; the test fails at a later one: further
        (sig(5), sig(6), MOVED_FURTHER),
        # it raised at line 5 and now fails the assertion there: further
        (sig(5, "TypeError: unsupported operand"), sig(5), MOVED_FURTHER),
        # the same assertion sees another value: changed
        (sig(5), sig(5, "AssertionError: assert 3 == 2"), MOVED_CHANGED),
        # fails earlier, or raises where it asserted, or hangs: back (not moved)
        (sig(6), sig(5), 0),
        (sig(5), sig(5, "NameError: name 'x' is not defined"), 0),
        (sig(5), sig(5, "no result in 1s (killed)", "timeout"), 0),
        # a test that hung now fails: further
        (sig(0, "no result in 1s (killed)", "timeout"), sig(7), MOVED_FURTHER),
        # no line of the test on either traceback: the kind of failure, then the message
        (sig(0, "ValueError: x"), sig(0, "AssertionError: y"), MOVED_FURTHER),
        (sig(0, "ValueError: x"), sig(0, "ValueError: z"), MOVED_CHANGED),
        (sig(0, "AssertionError: y"), sig(0, "ValueError: x"), 0),
    ],
)
def test_movement_of_one_failing_test(before: Failure, after: Failure, expected: int) -> None:
    assert movement({A: before}, {A: after}) == expected


def test_movement_over_several_tests() -> None:
    # the best move counts, but any test going back cancels it; a fixed test (missing
    # from ``after``) is progress, not a move
    assert movement({A: sig(5), B: sig(5)}, {A: sig(6), B: sig(5, "AssertionError: x")}) == 2
    assert movement({A: sig(5), B: sig(5)}, {A: sig(6), B: sig(4)}) == 0
    assert movement({A: sig(5), B: sig(5)}, {B: sig(5)}) == 0


def test_test_line_is_the_innermost_frame_of_the_test_file() -> None:
    source = "def helper():\n    raise ValueError('x')\n\n\ndef test():\n    x = 1\n    helper()\n"
    space: dict[str, Any] = {}
    exec(compile(source, "tests/test_x.py", "exec"), space)
    with pytest.raises(ValueError) as info:
        space["test"]()
    assert atlas_trace.test_line(info.value, "tests/test_x.py") == 2  # in helper()
    assert atlas_trace.test_line(info.value, "elsewhere.py") == 0


# ------------------------------------------------------- the proposer, in process

MODULE = textwrap.dedent(
    """\
    def bounds(values):
        low = max(values)
        high = min(values)
        return low, high


    def total(values):
        return sum(values)
    """
)
"""Two mistakes (``max``/``min`` swapped, each on its own line): no single edit passes
``test_bounds``; fixing ``low`` lets it get to its second assertion."""

TESTS = textwrap.dedent(
    """\
    from calc import bounds, total


    def test_bounds():
        low, high = bounds([3, 1, 2])
        assert low == 1, low
        assert high == 3, high


    def test_total():
        assert total([1, 2]) == 3
    """
)
F2P, P2P = "tests/test_calc.py::test_bounds", "tests/test_calc.py::test_total"


class InProcessToolbox:
    """``localize``, ``read_files`` and ``try_candidates`` for :data:`MODULE`, run in
    this process. Records every screened batch (labels)."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def invoke(self, task: Task, tool: str, /, **kwargs: Any) -> Any:
        await anyio.sleep(0)  # a real toolbox waits: let other calls run
        if tool == "localize":
            lines = [
                SimpleNamespace(path="calc.py", line=n, score=s, failed=1)
                for n, s in ((2, 0.9), (3, 0.9), (4, 0.8))
            ]
            return SimpleNamespace(
                failing=[F2P],
                passing=[P2P],
                tests=[SimpleNamespace(test=P2P, passing=True)],
                lines=lines,
            )
        if tool == "read_files":
            state = kwargs.get("state") or {}
            text = state.get("files", {}).get("calc.py", MODULE)
            return {p: text if p == "calc.py" else None for p in kwargs["paths"]}
        if tool == "try_candidates":
            cands: list[CandidatePatch] = kwargs["candidates"]
            self.batches.append([c.label for c in cands])
            return [self.run(n, c) for n, c in enumerate(cands)]
        raise AssertionError(tool)

    @staticmethod
    def run(index: int, cand: CandidatePatch) -> CandidateResult:
        text = cand.files.get("calc.py") or MODULE
        module: dict[str, Any] = {}
        exec(compile(text, "calc.py", "exec"), module)
        space: dict[str, Any] = {"bounds": module["bounds"], "total": module["total"]}
        body = TESTS.split("\n", 1)[1]  # the import line is done above
        exec(compile("\n" + body, "tests/test_calc.py", "exec"), space)
        out = []
        for test in (F2P, P2P):
            try:
                space[test.split("::")[1]]()
                out.append(verdict(test, "passed"))
            except Exception as e:
                line = atlas_trace.test_line(e, "tests/test_calc.py")
                out.append(verdict(test, "failed", atlas_trace.describe(e), line))
        return CandidateResult(
            index=index,
            label=cand.label,
            applied=True,
            compiled=True,
            tests=out,
            passed=all(v.passed for v in out),
        )


def root() -> NodeView:
    return NodeView(node_id="0", state={}, solution="")


def child_of(action: dict[str, Any], text: str) -> NodeView:
    patch = action["patch"]
    return NodeView(
        node_id="1",
        state={"patch": patch, "files": {"calc.py": text}},
        solution=patch,
        depth=1,
        actions=[action],
    )


def apply(action: dict[str, Any], text: str) -> str:
    from tests.swe.repair.conftest import apply_diff

    return apply_diff(text, action["patch"])


TASK = Task(id="calc-1", domain="swe")


async def test_an_edit_that_moves_a_failing_test_becomes_a_child_and_its_child_fixes() -> None:
    # moves are off by default: no edit makes progress alone, so the root gets no child
    off = await OfflineRepairProposer(InProcessToolbox(), screen=16).propose(
        TASK, root(), 4, random.Random(0)
    )
    assert off == []
    box = InProcessToolbox()
    proposer = OfflineRepairProposer(box, screen=16, max_moved=4)
    first = await proposer.propose(TASK, root(), 4, random.Random(0))
    assert first, "no child although fixing one line gets test_bounds further"
    # every child is a part of the fix: it moved test_bounds (no edit fixes it alone)
    texts = [apply(p.action, MODULE) for p in first]
    assert all(p.prior < 1.0 for p in first)
    half = MODULE.replace("low = max", "low = min")  # the first half of the fix
    assert half in texts, [p.label for p in first]
    # the node itself is screened in every batch, first
    assert all(batch[0] == "node" for batch in box.batches)
    # under the right first edit, a second edit passes every test: depth 2
    good = first[texts.index(half)]
    text = apply(good.action, MODULE)
    second = await proposer.propose(TASK, child_of(good.action, text), 4, random.Random(0))
    assert second and second[0].prior >= 1.0, [p.label for p in second]
    fixed = apply(second[0].action, text)
    assert InProcessToolbox.run(0, CandidatePatch(files={"calc.py": fixed})).passed
    # a node reached by a move gets no moved children of its own (no chain of moves
    # without progress): under ``low = min; return low, low`` (test_bounds fails at
    # ``high == 3`` with 1), ``return low, values`` would move it again (another value)
    wrong = first[
        texts.index(MODULE.replace("high = min", "low = min").replace("low, high", "low, low"))
    ]
    view = child_of(wrong.action, apply(wrong.action, MODULE))
    assert await proposer.propose(TASK, view, 4, random.Random(0)) == []


async def test_moved_children_are_capped_per_node() -> None:
    proposer = OfflineRepairProposer(InProcessToolbox(), screen=16, max_moved=2)
    got = [await proposer.propose(TASK, root(), 1, random.Random(0)) for _ in range(4)]
    assert [len(g) for g in got] == [1, 1, 0, 0]
    none = OfflineRepairProposer(InProcessToolbox(), screen=16, max_moved=0)
    assert await none.propose(TASK, root(), 4, random.Random(0)) == []


async def test_concurrent_expansions_of_one_node_screen_once_and_get_distinct_edits() -> None:
    box = InProcessToolbox()
    proposer = OfflineRepairProposer(box, screen=16, max_moved=8)
    results: dict[int, list[Any]] = {}

    async def expand(slot: int) -> None:
        view = root().model_copy(update={"slot": slot})
        results[slot] = await proposer.propose(TASK, view, 2, random.Random(slot))

    async with anyio.create_task_group() as tg:
        for slot in range(2):
            tg.start_soon(expand, slot)
    a, b = ([p.label for p in results[s]] for s in (0, 1))
    assert len(a) == 2 and b  # three edits move test_bounds: two, then the third
    assert not set(a) & set(b)
    # the plan was built and screened once: no edit was screened twice
    screened = [label for batch in box.batches for label in batch if label != "node"]
    assert len(screened) == len(set(screened)) == proposer.screened[TASK.id]
    # deterministic, and the same as one call after another
    alone = OfflineRepairProposer(InProcessToolbox(), screen=16, max_moved=8)
    one = await alone.propose(TASK, root(), 2, random.Random(0))
    two = await alone.propose(TASK, root(), 2, random.Random(1))
    assert ([p.label for p in one], [p.label for p in two]) == (a, b)


def test_top_lines_keep_localisations_order_and_the_lines_tied_with_the_last() -> None:
    from atlas_actors.swe.repair.proposer import top_lines

    def line(path: str, n: int, score: float) -> Any:
        return SimpleNamespace(path=path, line=n, score=score)

    # localisation's order among equal scores (a traceback's line first) is kept
    ranked = [line("z.py", 9, 1.0), line("a.py", 1, 1.0), line("a.py", 2, 0.5)]
    assert [(s.path, s.line) for s in top_lines(ranked, 2)] == [("z.py", 9), ("a.py", 1)]
    # ties with the last line kept stay, up to four times as many; no zero scores
    many = [line("m.py", k, 0.7) for k in range(20)] + [line("m.py", 99, 0.0)]
    assert len(top_lines(many, 2)) == 8
    assert len(top_lines([line("m.py", 1, 0.0)], 2)) == 0
