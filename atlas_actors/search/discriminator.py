"""The discriminator: value estimates for tree nodes, selective rollouts, the final pick.

SWE-Search (Antoniades et al. 2024; code: aorwall/moatless-tree-search) gives every new
node a value from a *value function*, an LLM that reads the problem, the trajectory and
the patch and answers a written explanation and a reward in [-100, 100]; and, when the
search ends, a *discriminator* chooses the answer among the finished trajectories. This
module is that part of the search, in our terms:

* :class:`Discriminator` wraps one *backend* (anything with the
  :class:`~atlas_actors.search.base.Scorer` protocol, better one with
  :class:`~atlas_actors.search.base.Assessor` too) and gives the seed spec's API:
  :meth:`~Discriminator.estimate`, :meth:`~Discriminator.estimate_with_rollout`,
  :meth:`~Discriminator.should_rollout`, plus :meth:`~Discriminator.assess` (a
  :class:`~atlas_actors.search.base.ValueEstimate`: value in [0, 1], explanation,
  confidence, source), :meth:`~Discriminator.rollout` (the trajectory too, so the
  search can keep a resolving state a rollout found) and :meth:`~Discriminator.select_final`.
  A backend that fails (an LLM endpoint down after its retries) costs a logged
  low-confidence estimate read from the verifier's verdict, never a crashed search.
* :class:`TestEvidenceScorer`, the offline backend: a value from the typed test
  evidence of an :class:`~atlas_actors.types.Outcome` (which of the tests the patch must
  fix now pass, which passing tests broke, whether the patch applied, timed out, whether
  the log was trusted, the patch's size), in the spirit of moatless's coding value
  function, which rewards fewer failing tests and punishes new failures. Without a test
  report it falls back to ``partial_score``. It reads typed fields only, so it serves
  any domain.
* The LLM backend is :class:`atlas_actors.swe.judge.LLMJudge`.

Rollouts are the seed's "hybrid" estimate: a promising node (``should_rollout``: its
estimate is at least the threshold) is extended by the proposer one action at a time,
each new state verified and judged, and the best value seen is the node's value.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.environments.base import Evaluator, InteractiveEnvironment
from atlas_actors.environments.local import EnvironmentStepper, solution_of
from atlas_actors.search.base import (
    ActionProposer,
    Assessor,
    NodeView,
    ProposedAction,
    Scorer,
    Stepper,
    Transition,
    ValueEstimate,
    coerce_proposals,
)
from atlas_actors.types import Candidate, Outcome, Task, TestReport

log = logging.getLogger(__name__)

__all__ = [
    "Discriminator",
    "RolloutEnv",
    "RolloutResult",
    "RolloutStep",
    "TestEvidenceScorer",
    "evidence_estimate",
    "solution_size",
]


# ------------------------------------------------------------------ offline backend


def solution_size(solution: Any, outcome: Outcome | None = None) -> int:
    """How big a solution is: the size its environment reported (``Outcome.size``),
    else lines of text, about one per 80 characters of JSON for data."""
    if outcome is not None and outcome.size is not None:
        return outcome.size
    if solution is None:
        return 0
    if isinstance(solution, str):
        return len(solution.splitlines())
    import json

    return max(1, len(json.dumps(solution, default=str)) // 80)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


class TestEvidenceScorer:
    """The offline discriminator backend: a value read from test evidence.

    With a test report (``Outcome.tests``)::

        value = (w_fix·fixed + w_keep·kept − w_break·broken) / (w_fix + w_keep)

    where ``fixed`` is the share of the visible FAIL_TO_PASS tests that now pass,
    ``kept`` the share of visible PASS_TO_PASS tests still passing and ``broken`` the
    share now failing (so a regression costs ``w_keep + w_break``, more than a missing
    fix). When the FAIL_TO_PASS tests are hidden (SWE-bench's protocol), ``fixed`` is 0
    for an empty patch (those tests fail at the base commit by definition) and an even
    0.5 for any other. A patch that did not
    apply, a timed-out run or an untrusted log is worth ``floor``. A success is 1.
    Among equals the smaller patch wins: up to ``size_weight`` is taken off for size
    (half of it at ``size_scale`` changed lines). Confidence is the share of graded
    tests the search can see. Without a test report the value is ``partial_score``.

    Args:
        w_fix, w_keep, w_break: the weights above.
        floor: value of a patch that did not apply, timed out, or whose log was rejected.
        size_weight, size_scale: the size tie-break.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        w_fix: float = 0.7,
        w_keep: float = 0.3,
        w_break: float = 0.5,
        floor: float = 0.02,
        size_weight: float = 0.02,
        size_scale: float = 50.0,
    ) -> None:
        self.w_fix = w_fix
        self.w_keep = w_keep
        self.w_break = w_break
        self.floor = floor
        self.size_weight = size_weight
        self.size_scale = size_scale

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        return self.evaluate(candidate)

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        est = self.evaluate(candidate)
        return est.value, est.explanation

    def evaluate(self, candidate: Candidate) -> ValueEstimate:
        """The estimate of ``candidate`` (synchronous: it only reads fields)."""
        outcome = candidate.outcome
        if outcome is None:
            value = min(1.0, max(0.0, candidate.fitness))
            return ValueEstimate(
                value=value,
                explanation=f"not verified yet; fitness {value:.3f}",
                confidence=0.0,
                source="partial_score",
            )
        size = solution_size(candidate.solution, candidate.outcome)
        size_cut = self.size_weight * size / (size + self.size_scale) if size else 0.0
        tests = outcome.tests
        if tests is None:
            base = 1.0 if outcome.success else outcome.partial_score
            return ValueEstimate(
                value=_clip(base - size_cut),
                explanation=(
                    f"{'succeeds' if outcome.success else 'fails'}; partial score "
                    f"{outcome.partial_score:.3f}; size {size}"
                ),
                confidence=1.0,
                source="partial_score",
            )
        return self._from_tests(outcome, tests, size, size_cut)

    def _from_tests(
        self, outcome: Outcome, tests: TestReport, size: int, size_cut: float
    ) -> ValueEstimate:
        seen = tests.graded
        confidence = _share(seen, seen + tests.hidden) if seen + tests.hidden else 0.5
        if not tests.patch_applied:
            return self._low("the patch does not apply", confidence)
        if tests.timed_out:
            return self._low("the test run timed out", confidence)
        if not tests.log_trusted:
            return self._low("the test log was rejected (untrusted)", confidence)
        f2p_ok, f2p_bad = len(tests.fail_to_pass_passed), len(tests.fail_to_pass_failed)
        p2p_ok, p2p_bad = len(tests.pass_to_pass_passed), len(tests.pass_to_pass_failed)
        parts = []
        if outcome.success:
            value = 1.0
            parts.append("all visible tests pass")
        elif seen == 0:
            value = outcome.partial_score
            parts.append(f"no visible tests; partial score {value:.3f}")
        else:
            num = den = 0.0
            if f2p_ok + f2p_bad:
                num += self.w_fix * _share(f2p_ok, f2p_ok + f2p_bad)
                den += self.w_fix
            elif tests.hidden:
                # the tests that check the fix are hidden: they fail at the base commit
                # (that is what FAIL_TO_PASS means), so an empty patch fixes none; what a
                # patch does to them is unknown, an even chance
                num += self.w_fix * (0.5 if size else 0.0)
                den += self.w_fix
            if p2p_ok + p2p_bad:
                num += self.w_keep * _share(p2p_ok, p2p_ok + p2p_bad)
                num -= self.w_break * _share(p2p_bad, p2p_ok + p2p_bad)
                den += self.w_keep
            value = num / den if den else 0.0
        if f2p_ok + f2p_bad:
            parts.append(f"FAIL_TO_PASS {f2p_ok}/{f2p_ok + f2p_bad} fixed")
        if p2p_ok + p2p_bad:
            parts.append(f"PASS_TO_PASS {p2p_bad}/{p2p_ok + p2p_bad} broken")
        if tests.hidden:
            parts.append(f"{tests.hidden} tests hidden")
        parts.append(f"size {size}")
        return ValueEstimate(
            value=_clip(value - size_cut),
            explanation="; ".join(parts),
            confidence=confidence,
            source="tests",
        )

    def _low(self, why: str, confidence: float) -> ValueEstimate:
        return ValueEstimate(
            value=self.floor, explanation=why, confidence=confidence, source="tests"
        )


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def evidence_estimate(candidate: Candidate, why: str, source: str = "fallback") -> ValueEstimate:
    """A zero-confidence estimate from the verifier's verdict alone (1 on success, else
    the partial score; 0.5 when unverified), for when the backend could not judge."""
    outcome = candidate.outcome
    value = 0.5 if outcome is None else (1.0 if outcome.success else outcome.partial_score)
    return ValueEstimate(value=value, explanation=why, confidence=0.0, source=source)


# ------------------------------------------------------------------------ rollouts


@dataclass(frozen=True)
class RolloutEnv:
    """What a rollout acts with: the proposer picks each action, the stepper applies it
    (statelessly, from the previous state), the evaluator verifies each new state."""

    stepper: Stepper
    evaluator: Evaluator
    proposer: ActionProposer
    call_timeout_s: float | None = None
    """Limit for each proposer, stepper and evaluator call (None: none)."""
    limiter: anyio.CapacityLimiter | None = None
    """Held around each stepper call (the search's environment slots). Not around the
    evaluator's: one that shares verdicts (the search's) takes a slot only to compute a
    verdict it does not have, and a slot held while waiting for another caller's
    computation of the same verdict, which needs a slot too, could wait for ever."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RolloutStep(_Model):
    """One step of a rollout: the action, where it led, the verdict and the value."""

    proposal: ProposedAction
    transition: Transition
    outcome: Outcome
    estimate: ValueEstimate


class RolloutResult(_Model):
    """What a rollout saw. ``value``: the best value among its steps (0 without any)."""

    value: float = 0.0
    steps: list[RolloutStep] = Field(default_factory=list)
    stopped: str = ""
    """Why it ended: ``depth``, ``success``, ``done``, ``no_action``, ``rejected``,
    ``error: ...``."""

    @property
    def best_step(self) -> int | None:
        """Index of the step with the best value (the first of equals), or None."""
        if not self.steps:
            return None
        return max(range(len(self.steps)), key=lambda i: (self.steps[i].estimate.value, -i))


async def call_limited(
    limit_s: float | None, limiter: anyio.CapacityLimiter | None, fn: Any, *args: Any
) -> Any:
    """``await fn(*args)`` within ``limit_s`` seconds, holding a slot of ``limiter``
    (either may be None: no limit)."""
    if limiter is not None:
        async with limiter:
            with anyio.fail_after(limit_s):
                return await fn(*args)
    with anyio.fail_after(limit_s):
        return await fn(*args)


# ------------------------------------------------------------------- discriminator


class Discriminator:
    """Estimates solution quality for MCTS, runs selective rollouts, picks the answer.

    Args:
        backend: what judges a candidate: :class:`TestEvidenceScorer` (default), an
            :class:`~atlas_actors.swe.judge.LLMJudge`, a ``DiscriminatorPool`` of actors,
            or any :class:`~atlas_actors.search.base.Scorer`.
        threshold: default ``should_rollout`` threshold.
        max_concurrency: backend calls in flight at once.
        call_timeout_s: limit for one backend call; a slower call is a fallback estimate.
        executor: the seed's executor: what acts in a rollout of
            :meth:`estimate_with_rollout` given an environment rather than a
            :class:`RolloutEnv` (an action proposer: the LLM's, the offline repair one).
    """

    def __init__(
        self,
        backend: Scorer | Assessor | None = None,
        *,
        threshold: float = 0.7,
        max_concurrency: int = 16,
        call_timeout_s: float | None = None,
        executor: ActionProposer | None = None,
    ) -> None:
        self.backend: Scorer | Assessor = backend if backend is not None else TestEvidenceScorer()
        self.executor = executor
        self.threshold = threshold
        self.call_timeout_s = call_timeout_s
        self._limiter = anyio.CapacityLimiter(max_concurrency)
        self.assessed = 0
        """Backend calls that gave an estimate."""
        self.fallbacks = 0
        """Backend calls that failed and gave a fallback estimate."""

    # -- usage (for the search's cost budget) -------------------------------------------

    @property
    def usage(self) -> Any:
        """The backend's LLM usage (a :class:`~atlas_actors.llm.usage.Usage`), or None."""
        return getattr(self.backend, "usage", None)

    def usage_for(self, task_id: str) -> Any:
        """The backend's usage for one task when it keeps one, else its total usage."""
        per_task = getattr(self.backend, "usage_for", None)
        return per_task(task_id) if per_task is not None else self.usage

    # -- estimates -----------------------------------------------------------------------

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        """The backend's estimate; a failing backend gives a logged fallback estimate."""
        backend = self.backend
        try:
            async with self._limiter:
                with anyio.fail_after(self.call_timeout_s):
                    if isinstance(backend, Assessor):
                        est = await backend.assess(task, candidate)
                    else:
                        value, reason = await backend.score(task, candidate)
                        est = _from_score(value, reason)
        except Exception as exc:
            self.fallbacks += 1
            why = f"discriminator failed ({type(exc).__name__}: {exc}); verifier's verdict used"
            log.warning("task %s: %s", task.id, why)
            return evidence_estimate(candidate, why[:500])
        self.assessed += 1
        if not 0.0 <= est.value <= 1.0:
            est = est.model_copy(update={"value": _clip(est.value)})
        return est

    async def estimate(self, task: Task, candidate: Candidate) -> float:
        """The value of ``candidate`` in [0, 1] (the seed's API; see :meth:`assess`)."""
        return (await self.assess(task, candidate)).value

    def should_rollout(self, score: float, threshold: float = 0.7) -> bool:
        """Whether a node with estimate ``score`` deserves a rollout: ``score >= threshold``."""
        return score >= threshold

    async def rollout(
        self,
        task: Task,
        start: NodeView,
        env: RolloutEnv,
        depth: int,
        rng: random.Random,
    ) -> RolloutResult:
        """Extend ``start`` by up to ``depth`` proposer actions, one at a time.

        Each step asks the proposer for one action, applies it from the previous state,
        verifies and judges the new state. It ends early at a success, a ``done``
        transition, a rejected action (the state did not change), or when the proposer
        has nothing (or fails). The steps come back so that the caller can keep a
        resolving state; ``value`` is the best value among them.
        """
        steps: list[RolloutStep] = []
        view = start
        stopped = "depth"
        for i in range(depth):
            current = view
            try:
                raw = await call_limited(
                    env.call_timeout_s, None, env.proposer.propose, task, current, 1, rng
                )
            except Exception as exc:
                stopped = f"error: proposer: {type(exc).__name__}: {exc}"[:300]
                break
            proposals, _ = coerce_proposals(raw)
            if not proposals:
                stopped = "no_action"
                break
            proposal = proposals[0]
            try:
                tr: Transition = await call_limited(
                    env.call_timeout_s,
                    env.limiter,
                    env.stepper.transition,
                    task,
                    current.state,
                    proposal.action,
                )
                if tr.state == current.state and tr.solution == current.solution and not tr.done:
                    stopped = "rejected"
                    break
                outcomes: list[Outcome] = await call_limited(
                    env.call_timeout_s, None, env.evaluator.evaluate, task, [tr.solution]
                )
            except Exception as exc:
                stopped = f"error: environment: {type(exc).__name__}: {exc}"[:300]
                break
            outcome = outcomes[0]
            cand = Candidate(solution=tr.solution, outcome=outcome, fitness=outcome.partial_score)
            est = await self.assess(task, cand)
            steps.append(
                RolloutStep(proposal=proposal, transition=tr, outcome=outcome, estimate=est)
            )
            if outcome.success:
                stopped = "success"
                break
            if tr.done:
                stopped = "done"
                break
            view = NodeView(
                node_id=f"{start.node_id}/rollout{i + 1}",
                state=tr.state,
                solution=tr.solution,
                depth=current.depth + 1,
                actions=[*current.actions, proposal.action],
                observation=tr.observation,
                outcome=outcome,
            )
        value = max((s.estimate.value for s in steps), default=0.0)
        return RolloutResult(value=value, steps=steps, stopped=stopped)

    async def estimate_with_rollout(
        self,
        task: Task,
        candidate: Candidate,
        env: RolloutEnv | InteractiveEnvironment,
        depth: int = 5,
        *,
        state: dict[str, Any] | None = None,
        rng: random.Random | None = None,
    ) -> float:
        """The best of the candidate's own value and a rollout's values (the seed's API:
        ``estimate_with_rollout(task, candidate, env, depth=5)``).

        ``env`` is a :class:`RolloutEnv`, or the task's environment itself (reset,
        interactive), whose actions then come from this discriminator's ``executor``
        (the environment is put back where it stood afterwards).
        The rollout starts at ``state`` when given, else at the candidate's state: the
        environment's current state when ``env`` is an environment (it stands at the
        candidate, as the seed's caller leaves it; checked against the candidate's
        solution), the candidate's solution when that is a state (a dict: an environment
        without ``solution_of`` has states for solutions), or the task's start when the
        candidate is the start's solution (or has none). Any other candidate needs
        ``state``: a ``ValueError`` says so. The search calls :meth:`rollout`, which also
        returns the steps.
        """
        restore: dict[str, Any] | None = None  # the caller's environment goes back there
        if isinstance(env, RolloutEnv):
            renv = env
            if state is None:
                state = await _state_of(task, candidate, env.stepper)
        else:
            if self.executor is None:
                raise ValueError(
                    "estimate_with_rollout: with an environment for env, the rollout's "
                    "actions come from the discriminator's executor: make it with "
                    "Discriminator(..., executor=<an action proposer>), or pass a RolloutEnv"
                )
            here = restore = await env.get_state()
            stepper = EnvironmentStepper(env, here)
            renv = RolloutEnv(stepper, stepper, self.executor)
            if state is None:
                if candidate.solution is not None and candidate.solution != solution_of(env, here):
                    raise ValueError(
                        f"estimate_with_rollout: the environment stands at another state "
                        f"than candidate {candidate.id}'s solution; step it there or pass "
                        "state= (the candidate's environment state)"
                    )
                state = here
        own = await self.assess(task, candidate)
        start = NodeView(
            node_id=candidate.id,
            state=state,
            solution=candidate.solution,
            outcome=candidate.outcome,
        )
        try:
            result = await self.rollout(task, start, renv, depth, rng or random.Random(0))
        finally:
            if restore is not None and not isinstance(env, RolloutEnv):
                with anyio.CancelScope(shield=True):
                    await env.set_state(restore)
        return max(own.value, result.value)

    # -- the final answer --------------------------------------------------------------------

    async def select_final(
        self,
        task: Task,
        candidates: Sequence[Candidate],
        estimates: Sequence[ValueEstimate | None] | None = None,
    ) -> Candidate:
        """The discriminator's pick among finished candidates.

        Ranked by value, then verified success, partial score, smaller solution, and
        order. ``estimates`` (one per candidate, None where unknown) saves judging again
        what was judged already.
        """
        if not candidates:
            raise ValueError("select_final: no candidates to choose from")
        known = list(estimates) if estimates is not None else [None] * len(candidates)
        if len(known) != len(candidates):
            raise ValueError("select_final: one estimate (or None) per candidate")
        ests: list[ValueEstimate | None] = list(known)

        async def judge(i: int) -> None:
            ests[i] = await self.assess(task, candidates[i])

        async with anyio.create_task_group() as tg:
            for i, est in enumerate(known):
                if est is None:
                    tg.start_soon(judge, i)

        def rank(i: int) -> tuple[float, bool, float, int, int]:
            c, est = candidates[i], ests[i]
            assert est is not None
            outcome = c.outcome
            return (
                est.value,
                bool(outcome and outcome.success),
                outcome.partial_score if outcome else c.fitness,
                -solution_size(c.solution, outcome),
                -i,
            )

        return candidates[max(range(len(candidates)), key=rank)]


async def _state_of(task: Task, candidate: Candidate, stepper: Stepper) -> dict[str, Any]:
    """The environment state ``candidate`` stands at, as far as it can be told without
    being given: its solution when that is a state (a dict), else the task's start when
    the candidate is the start's solution (or has none)."""
    if isinstance(candidate.solution, dict):
        return candidate.solution
    root = await stepper.root(task)
    if candidate.solution is None or candidate.solution == root.solution:
        return root.state
    raise ValueError(
        f"estimate_with_rollout: candidate {candidate.id} is not at the task's start and its "
        "solution is not a state: pass state= (the candidate's environment state), or the "
        "environment standing at it for env"
    )


def _from_score(value: float, reason: str) -> ValueEstimate:
    """A plain scorer's ``(score, reason)`` as an estimate (an ``unparseable: ...``
    reason, the existing LLM scorer's fallback, has confidence 0)."""
    unreadable = reason.startswith("unparseable")
    return ValueEstimate(
        value=_clip(float(value)),
        explanation=reason,
        confidence=0.0 if unreadable else 1.0,
        source="scorer",
    )
