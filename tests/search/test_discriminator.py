"""The Discriminator and its offline backend (TestEvidenceScorer)."""

from __future__ import annotations

import logging
import random
from typing import Any

import pytest

from atlas_actors.search.base import Assessor, NodeView, Scorer, ValueEstimate
from atlas_actors.search.discriminator import (
    Discriminator,
    RolloutEnv,
    TestEvidenceScorer,
    solution_size,
)
from atlas_actors.types import Candidate, Outcome, Task, TestReport
from tests.helpers.toy_search import (
    PickyBackend,
    ScriptedProposer,
    ToyEvaluator,
    ToyStepper,
    grade,
    replace,
    toy_task,
)

pytestmark = pytest.mark.timeout(30)

TASK = Task(id="t", domain="swe", description="fix it")

PATCH_1 = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
PATCH_4 = PATCH_1 + "@@ -5,2 +5,2 @@\n-b = 1\n-c = 1\n+b = 2\n+c = 2\n"  # 6 changed lines


def _report(f2p: tuple[int, int], p2p: tuple[int, int], **kw: Any) -> TestReport:
    return TestReport(
        fail_to_pass_passed=[f"f{i}" for i in range(f2p[0])],
        fail_to_pass_failed=[f"g{i}" for i in range(f2p[1])],
        pass_to_pass_passed=[f"p{i}" for i in range(p2p[0])],
        pass_to_pass_failed=[f"q{i}" for i in range(p2p[1])],
        **kw,
    )


def _cand(
    report: TestReport | None,
    *,
    success: bool = False,
    partial: float = 0.0,
    solution: Any = PATCH_1,
) -> Candidate:
    outcome = Outcome(success=success, partial_score=partial, tests=report)
    return Candidate(solution=solution, outcome=outcome, fitness=partial)


def _value(cand: Candidate) -> float:
    return TestEvidenceScorer().evaluate(cand).value


def test_solution_size_is_the_environments_measure_else_the_text() -> None:
    # the environment's measure wins (a SWE patch: its changed lines) ...
    assert solution_size(PATCH_4, Outcome(success=False, size=6)) == 6
    assert solution_size(PATCH_4, Outcome(success=False, size=0)) == 0
    # ... else the solution's text: its lines, or its JSON's length for data
    assert solution_size(PATCH_4) == PATCH_4.count("\n")
    assert solution_size(PATCH_4, Outcome(success=False)) == PATCH_4.count("\n")
    assert solution_size("") == 0 and solution_size(None) == 0
    assert solution_size("x = 1\ny = 2") == 2
    assert solution_size([[1, 2], [3]]) == 1


def test_size_tie_break_reads_the_reported_size() -> None:
    # equal evidence: the smaller reported size is worth more, whatever the text's length
    a = _cand(_report((1, 0), (3, 0)), success=True, partial=1.0, solution=PATCH_4)
    b = _cand(_report((1, 0), (3, 0)), success=True, partial=1.0, solution=PATCH_1)
    assert a.outcome is not None and b.outcome is not None
    a.outcome.size, b.outcome.size = 1, 40
    assert _value(a) > _value(b)


def test_evidence_orders_fixes_and_regressions() -> None:
    success = _cand(_report((2, 0), (5, 0)), success=True, partial=1.0)
    half_fixed = _cand(_report((1, 1), (5, 0)))
    nothing = _cand(_report((0, 2), (5, 0)))
    fixed_but_breaks = _cand(_report((2, 0), (3, 2)))
    breaks_only = _cand(_report((0, 2), (3, 2)))
    values = [_value(c) for c in (success, half_fixed, nothing, fixed_but_breaks, breaks_only)]
    assert values[0] > 0.98
    assert values[1] > values[2] > values[4]
    # A regression weighs more than the keep-share it loses: breaking 2 of 5 passing
    # tests costs more than 0.3·2/5.
    assert values[2] - values[4] > 0.3 * 2 / 5
    assert all(0.0 <= v <= 1.0 for v in values)
    # The formula itself (a small size cut aside).
    assert values[1] == pytest.approx((0.7 * 0.5 + 0.3) / 1.0, abs=0.02)
    assert values[3] == pytest.approx((0.7 + 0.3 * 0.6 - 0.5 * 0.4) / 1.0, abs=0.02)


def test_patch_not_applied_timeout_and_untrusted_log_are_worth_the_floor() -> None:
    scorer = TestEvidenceScorer(floor=0.02)
    for kw, why in (
        ({"patch_applied": False}, "does not apply"),
        ({"timed_out": True}, "timed out"),
        ({"log_trusted": False}, "rejected"),
    ):
        est = scorer.evaluate(_cand(_report((2, 0), (5, 0), **kw)))
        assert est.value == 0.02 and why in est.explanation and est.source == "tests"


def test_hidden_tests_lower_the_confidence() -> None:
    seen = TestEvidenceScorer().evaluate(_cand(_report((1, 1), (2, 0))))
    hidden = TestEvidenceScorer().evaluate(_cand(_report((0, 0), (2, 0), hidden=2)))
    assert seen.confidence == 1.0
    assert hidden.confidence == pytest.approx(0.5)
    assert "2 tests hidden" in hidden.explanation


def test_smaller_patch_wins_among_equals() -> None:
    small = _cand(_report((1, 0), (3, 0)), success=True, partial=1.0, solution=PATCH_1)
    big = _cand(_report((1, 0), (3, 0)), success=True, partial=1.0, solution=PATCH_4)
    assert _value(small) > _value(big)
    assert _value(big) > 0.98  # a tie-break only


def test_without_a_test_report_the_partial_score_is_the_value() -> None:
    scorer = TestEvidenceScorer(size_weight=0.0)
    assert scorer.evaluate(_cand(None, partial=0.4)).value == pytest.approx(0.4)
    assert scorer.evaluate(_cand(None, success=True, partial=0.4)).value == 1.0
    unverified = scorer.evaluate(Candidate(solution="x", fitness=0.3))
    assert unverified.value == pytest.approx(0.3) and unverified.confidence == 0.0


async def test_both_protocols_and_the_pool_protocol() -> None:
    scorer = TestEvidenceScorer()
    assert isinstance(scorer, Scorer) and isinstance(scorer, Assessor)
    cand = _cand(_report((1, 1), (2, 0)))
    value, reason = await scorer.score(TASK, cand)
    est = await scorer.assess(TASK, cand)
    assert value == est.value and reason == est.explanation


# ------------------------------------------------------------------ Discriminator


class _Broken:
    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        raise ConnectionError("endpoint down")


class _PlainScorer:
    def __init__(self, answer: tuple[float, str]) -> None:
        self.answer = answer

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        return self.answer


async def test_a_failing_backend_gives_a_logged_fallback(caplog: pytest.LogCaptureFixture) -> None:
    disc = Discriminator(_Broken())
    cand = _cand(_report((1, 1), (2, 0)), partial=0.75)
    with caplog.at_level(logging.WARNING, logger="atlas_actors.search.discriminator"):
        est = await disc.assess(TASK, cand)
    assert est.confidence == 0.0 and est.source == "fallback"
    assert est.value == pytest.approx(0.75)
    assert "endpoint down" in est.explanation and "endpoint down" in caplog.text
    assert disc.fallbacks == 1 and disc.assessed == 0


async def test_a_plain_scorer_backend() -> None:
    est = await Discriminator(_PlainScorer((1.7, "great"))).assess(TASK, _cand(None))
    assert est == ValueEstimate(value=1.0, explanation="great", confidence=1.0, source="scorer")
    bad = await Discriminator(_PlainScorer((0.5, "unparseable: 'hm'"))).assess(TASK, _cand(None))
    assert bad.confidence == 0.0
    assert await Discriminator(_PlainScorer((0.25, "meh"))).estimate(TASK, _cand(None)) == 0.25


def test_should_rollout() -> None:
    disc = Discriminator()
    assert disc.should_rollout(0.7) and disc.should_rollout(0.9)
    assert not disc.should_rollout(0.69)
    assert disc.should_rollout(0.3, threshold=0.2) and not disc.should_rollout(0.3, 0.5)


async def test_select_final_is_the_backends_pick() -> None:
    backend = PickyBackend(liked="b = 7")
    disc = Discriminator(backend)
    cands = [
        Candidate(solution="a = 1\nb = 8\n", outcome=Outcome(success=False, partial_score=0.9)),
        Candidate(solution="a = 1\nb = 7\n", outcome=Outcome(success=False, partial_score=0.1)),
        Candidate(solution="a = 2\nb = 8\n", outcome=Outcome(success=False, partial_score=0.9)),
    ]
    assert (await disc.select_final(TASK, cands)).solution == "a = 1\nb = 7\n"
    assert backend.calls == 3
    # Known estimates are not judged again; ties go to success, partial score, size.
    known = [ValueEstimate(value=0.5)] * 3
    pick = await disc.select_final(TASK, cands, known)
    assert backend.calls == 3 and pick is cands[0]
    with pytest.raises(ValueError, match="no candidates"):
        await disc.select_final(TASK, [])


async def test_rollout_verifies_as_it_goes_and_returns_the_steps() -> None:
    start, target = "a = 1\nb = 0\nc = 0\n", "a = 1\nb = 2\nc = 3\n"
    task = toy_task(start, target)
    mid = "a = 1\nb = 2\nc = 0\n"
    proposer = ScriptedProposer(
        {start: [replace("b = 0", "b = 2")], mid: [replace("c = 0", "c = 3")]}
    )
    env = RolloutEnv(ToyStepper(), ToyEvaluator(), proposer)
    disc = Discriminator()
    view = NodeView(node_id="0", state={"text": start}, solution=start)
    result = await disc.rollout(task, view, env, depth=5, rng=random.Random(0))
    assert result.stopped == "success" and len(result.steps) == 2
    assert result.steps[-1].outcome.success and result.steps[-1].transition.solution == target
    assert result.value == result.steps[-1].estimate.value > 0.98
    assert result.best_step == 1
    # Depth-limited: one step only.
    short = await disc.rollout(task, view, env, depth=1, rng=random.Random(0))
    assert short.stopped == "depth" and len(short.steps) == 1
    # The seed's API: the best of the candidate's own value and the rollout's.
    cand = Candidate(solution=start, outcome=grade(start, target, start))
    own = await disc.estimate(task, cand)
    best = await disc.estimate_with_rollout(task, cand, env, 5, state={"text": start})
    assert best > own and best == pytest.approx(result.value)


class TextEnvironment:
    """An interactive environment over the toy task (the seed's kind of ``env``): the
    state is ``{"text"}``, the solution the text, actions the toy stepper's."""

    max_steps = 10
    is_deterministic = True

    def __init__(self) -> None:
        self._task: Task | None = None
        self.text = ""
        self.stepper = ToyStepper()

    async def reset(self, task: Task) -> str:
        self._task, self.text = task, task.context["start"]
        return task.description

    @property
    def task(self) -> Task:
        assert self._task is not None
        return self._task

    async def verify(self, solution: Any) -> Outcome:
        ctx = self.task.context
        return grade(ctx["start"], ctx["target"], solution)

    async def step(self, action: Any) -> tuple[str, float, bool, dict[str, Any]]:
        tr = await self.stepper.transition(self.task, {"text": self.text}, action)
        self.text = tr.state["text"]
        return tr.observation, 0.0, tr.done, {}

    async def get_state(self) -> dict[str, Any]:
        return {"text": self.text}

    async def set_state(self, state: dict[str, Any]) -> None:
        self.text = state["text"]

    @staticmethod
    def solution_of(state: dict[str, Any]) -> str:
        return str(state["text"])


async def test_estimate_with_rollout_as_the_seed_calls_it() -> None:
    """``estimate_with_rollout(task, candidate, env, depth=5)`` with no state: it is taken
    from the candidate or the environment, and gives what the explicit state gives."""
    start, mid, target = "a = 1\nb = 0\nc = 0\n", "a = 1\nb = 2\nc = 0\n", "a = 1\nb = 2\nc = 3\n"
    task = toy_task(start, target)
    script = {start: [replace("b = 0", "b = 2")], mid: [replace("c = 0", "c = 3")]}
    env = RolloutEnv(ToyStepper(), ToyEvaluator(), ScriptedProposer(script))
    disc = Discriminator()
    at_start = Candidate(solution=start, outcome=grade(start, target, start))
    explicit = await disc.estimate_with_rollout(task, at_start, env, 5, state={"text": start})
    # a RolloutEnv: the candidate at the task's start rolls out from the start state
    seed_call = await disc.estimate_with_rollout(task, at_start, env, depth=5)
    assert seed_call == explicit > await disc.estimate(task, at_start)
    # a candidate whose solution is its state (an environment without solution_of)
    as_state = Candidate(solution={"text": start}, outcome=at_start.outcome)
    assert await disc.estimate_with_rollout(task, as_state, env, depth=5) == explicit
    # a candidate elsewhere: its state cannot be told, and the error says what to pass
    at_mid = Candidate(solution=mid, outcome=grade(start, target, mid))
    with pytest.raises(ValueError, match="state="):
        await disc.estimate_with_rollout(task, at_mid, env, depth=5)
    assert await disc.estimate_with_rollout(task, at_mid, env, 1, state={"text": mid}) > 0.98

    # the environment itself (the seed's env), with the actions from the executor
    text_env = TextEnvironment()
    await text_env.reset(task)
    with pytest.raises(ValueError, match="executor"):
        await disc.estimate_with_rollout(task, at_start, text_env, depth=5)
    acting = Discriminator(executor=ScriptedProposer(script))
    assert await acting.estimate_with_rollout(task, at_start, text_env, depth=5) == explicit
    with pytest.raises(ValueError, match="another state"):
        await acting.estimate_with_rollout(task, at_mid, text_env, depth=5)
    await text_env.step(replace("b = 0", "b = 2"))  # the environment now stands at mid
    from_mid = await acting.estimate_with_rollout(task, at_mid, text_env, depth=1)
    assert from_mid > 0.98  # one step from mid resolves it


async def test_rollout_stops_on_a_rejected_action_or_no_idea() -> None:
    task = toy_task("a\n", "b\n")
    view = NodeView(node_id="0", state={"text": "a\n"}, solution="a\n")
    disc = Discriminator()
    rejected = RolloutEnv(
        ToyStepper(), ToyEvaluator(), ScriptedProposer({}, default=[replace("zz", "b")])
    )
    res = await disc.rollout(task, view, rejected, 3, random.Random(0))
    assert res.stopped == "rejected" and res.steps == [] and res.value == 0.0
    idle = RolloutEnv(ToyStepper(), ToyEvaluator(), ScriptedProposer({}))
    assert (await disc.rollout(task, view, idle, 3, random.Random(0))).stopped == "no_action"


def test_hidden_failing_tests_make_the_empty_patch_worst_of_the_harmless() -> None:
    from atlas_actors.search.discriminator import TestEvidenceScorer
    from atlas_actors.types import Candidate, Outcome, TestReport

    seen = TestReport(pass_to_pass_passed=["a", "b"], hidden=2)
    scorer = TestEvidenceScorer()
    empty = scorer.evaluate(Candidate(solution="", outcome=Outcome(success=False, tests=seen)))
    patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    edited = scorer.evaluate(Candidate(solution=patch, outcome=Outcome(success=False, tests=seen)))
    broke = TestReport(pass_to_pass_passed=["a"], pass_to_pass_failed=["b"], hidden=2)
    breaking = scorer.evaluate(
        Candidate(solution=patch, outcome=Outcome(success=False, tests=broke))
    )
    assert empty.value < edited.value  # the hidden tests fail at base: nothing fixed them
    assert breaking.value < edited.value
    assert empty.confidence == edited.confidence == 0.5  # half the graded tests are seen
