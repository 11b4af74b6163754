"""The screen's timeout policy, and what the proposer does with an edit that hangs."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

from atlas_actors.errors import ConfigError
from atlas_actors.search.base import NodeView
from atlas_actors.swe.repair.batch import CandidatePatch, CandidateResult, TestVerdict
from atlas_actors.swe.repair.proposer import OfflineRepairProposer
from atlas_actors.swe.repair.timeouts import TimeoutPolicy, hung, timed_out
from atlas_actors.types import Task


def record(test: str, seconds: float, outcome: str = "passed", message: str = "") -> Any:
    return SimpleNamespace(test=test, seconds=seconds, outcome=outcome, message=message)


def test_a_test_that_hung_at_the_base_is_timed_like_the_slowest_test_that_ended() -> None:
    base = [
        record("t::fast", 0.01),
        record("t::slow", 0.4),
        record("t::stuck", 10.0, "failed", "TimeoutError: the test ran for more than 10 s"),
        record(
            "t::own", 60.0, "failed", "_Timeout: test still running after 60s (atlas_trace timeout)"
        ),
        record("t::wrong", 0.05, "failed", "AssertionError: assert 1 == 2"),
    ]
    policy = TimeoutPolicy()
    assert policy.references(base) == {
        "t::fast": 0.01,
        "t::slow": 0.4,
        "t::stuck": 0.4,
        "t::own": 0.4,
        "t::wrong": 0.05,
    }
    assert policy.timeouts(["t::stuck", "t::slow", "t::fast", "t::unknown"], base) == [
        4.0,
        4.0,
        1.0,  # the floor
        10.0,  # not timed at the base
    ]
    assert TimeoutPolicy(factor=3, floor_s=0.5).timeouts(["a"], {"a": 1.0}) == [3.0]
    with pytest.raises(ValidationError):
        TimeoutPolicy(factor=0)


def test_hung_and_timed_out() -> None:
    assert hung(record("t", 1, "timeout"))
    assert not hung(record("t", 1, "failed", "ValueError: no timeout here"))
    res = CandidateResult(
        index=0,
        applied=True,
        compiled=True,
        tests=[TestVerdict(test="t::a", outcome="timeout")],
    )
    assert timed_out(res)
    assert not timed_out(CandidateResult(index=0, applied=True, compiled=True))


MODULE = "def middle(lo, hi):\n    while lo < hi:\n        lo = lo\n    return lo\n"


class HangingToolbox:
    """Every candidate times out except none; records the labels of each batch."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def invoke(self, task: Task, tool: str, /, **kwargs: Any) -> Any:
        if tool == "localize":
            lines = [SimpleNamespace(path="m.py", line=n, score=1.0, failed=1) for n in (2, 3)]
            return SimpleNamespace(failing=["t.py::t"], passing=[], tests=[], lines=lines)
        if tool == "read_files":
            return {p: MODULE if p == "m.py" else None for p in kwargs["paths"]}
        if tool == "try_candidates":
            cands: list[CandidatePatch] = kwargs["candidates"]
            self.batches.append([c.label for c in cands])
            return [
                CandidateResult(
                    index=n,
                    applied=True,
                    compiled=True,
                    tests=[TestVerdict(test="t.py::t", outcome="timeout")],
                )
                for n in range(len(cands))
            ]
        raise AssertionError(tool)


async def test_an_edit_that_hangs_is_counted_once_and_its_siblings_on_the_line_wait() -> None:
    box = HangingToolbox()
    proposer = OfflineRepairProposer(box, screen=7, first_screen=14, antipatterns=())
    task = Task(id="hang-1", domain="swe")
    root = NodeView(node_id="0", state={}, solution="")
    plan = await proposer.node_edits(task, root)
    assert await proposer.propose(task, root, 2, random.Random(0)) == []
    first, second = box.batches[:2]
    # every screened edit hung: each counted once
    assert proposer.timeouts[task.id] == proposer.screened[task.id] == len(plan)
    screened_first = [e for e in plan if e.label in first]
    hung = {(e.family, e.line) for e in screened_first}
    # the second batch holds the plan's next edits, those of a family and line that hung
    # in the first batch only when nothing else is left before them
    rest = [e for e in plan if e.label not in first]
    expected = sorted(rest, key=lambda e: (e.family, e.line) in hung)[:7]
    assert second == [e.label for e in expected]
    assert [e.label for e in rest[:7]] != second  # the order did change


def test_the_screen_times_a_test_that_hung_at_the_base_like_an_ordinary_one(
    examples: dict[str, Any],
) -> None:
    from atlas_actors.swe.repair.batch import BatchEvaluator
    from atlas_actors.swe.repair.localize import Localization, TestRecord

    inst = examples["textkit"]
    hanging, ordinary = inst.FAIL_TO_PASS[0], inst.PASS_TO_PASS[0]
    loc = Localization(
        instance_id=inst.instance_id,
        base_commit=inst.base_commit,
        method="spectrum",
        formula="ochiai",
        lines=[],
        tests=[
            TestRecord(
                test=hanging,
                outcome="failed",
                seconds=60.0,
                message="_Timeout: test still running after 60s (atlas_trace timeout)",
            ),
            TestRecord(test=ordinary, outcome="passed", seconds=0.3),
        ],
        failing=[hanging],
        passing=[ordinary],
        collect_seconds=0.2,
    )
    _, timeouts, collect = BatchEvaluator().plan(inst, [hanging, ordinary], loc)
    assert timeouts == [3.0, 3.0]  # not 600 s for the hang
    assert collect == 5.0


class MostlyHangingToolbox(HangingToolbox):
    """The third candidate of every batch passes; the rest time out."""

    async def invoke(self, task: Task, tool: str, /, **kwargs: Any) -> Any:
        out = await super().invoke(task, tool, **kwargs)
        if tool == "try_candidates":
            out[2] = CandidateResult(
                index=2,
                applied=True,
                compiled=True,
                passed=True,
                tests=[TestVerdict(test="t.py::t", outcome="passed")],
            )
        return out


async def test_a_first_screening_full_of_hangs_stops_at_the_first_green_edit() -> None:
    task = Task(id="hang-2", domain="swe")
    root = NodeView(node_id="0", state={}, solution="")
    patient = MostlyHangingToolbox()
    kids = await OfflineRepairProposer(
        patient, screen=7, first_screen=70, antipatterns=(), probe=False, hang_patience=1000
    ).propose(task, root, 4, random.Random(0))
    # screened on until 4 edits were green (the answer holds the best one)
    assert len(kids) == 1 and len(patient.batches) == 4
    impatient = MostlyHangingToolbox()
    kids = await OfflineRepairProposer(
        impatient, screen=7, first_screen=70, antipatterns=(), probe=False, hang_patience=6
    ).propose(task, root, 4, random.Random(0))
    assert len(kids) == 1 and len(impatient.batches) == 1


class SlowToolbox(MostlyHangingToolbox):
    """Every batch takes ten seconds of a fake clock."""

    def __init__(self, clock: list[float], passing: bool = True) -> None:
        super().__init__()
        self.clock = clock
        self.passing = passing

    async def invoke(self, task: Task, tool: str, /, **kwargs: Any) -> Any:
        if tool == "try_candidates":
            self.clock[0] += 10.0
            if not self.passing:
                return await HangingToolbox.invoke(self, task, tool, **kwargs)
        return await super().invoke(task, tool, **kwargs)


@pytest.mark.parametrize(
    ("time_left", "passing", "batches"),
    [
        (None, True, 20),  # no time limit: the whole first screening (60 edits, 3 a batch)
        (100.0, True, 8),  # stops at 75% of the time left, a green edit in hand
        (100.0, False, 20),  # nothing in hand: screens on
    ],
)
async def test_under_a_time_limit_the_first_screening_offers_what_it_has(
    monkeypatch: pytest.MonkeyPatch, time_left: float | None, passing: bool, batches: int
) -> None:
    import atlas_actors.swe.repair.proposer as proposer_module

    clock = [1000.0]
    monkeypatch.setattr(proposer_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    box = SlowToolbox(clock, passing)
    task = Task(id="slow-1", domain="swe")
    root = NodeView(node_id="0", state={}, solution="", time_left=time_left)
    proposer = OfflineRepairProposer(
        box,
        screen=3,
        first_screen=60,
        antipatterns=(),
        probe=False,
        rank_greens=False,
        hang_patience=1000,
    )
    kids = await proposer.propose(task, root, 30, random.Random(0))
    assert len(box.batches) == batches
    assert len(kids) == (batches if passing else 0)  # every green edit screened is offered
    with pytest.raises(ConfigError, match="reserve=1.5"):
        OfflineRepairProposer(box, reserve=1.5)
