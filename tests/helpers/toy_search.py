"""A small in-memory environment for tree-search tests, with scripted proposers.

State: ``{"text": ...}``, a few lines of "program". Actions: ``{"kind": "replace",
"old", "new"}`` (the first occurrence; rejected, state unchanged, when ``old`` is not
in the text) and ``{"kind": "submit"}`` (ends the episode). The evaluator compares the
text with a hidden target line by line and reports it as a ``TestReport``: a line that
differed at the start is a FAIL_TO_PASS test, a line that was right a PASS_TO_PASS one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from atlas_actors.search.base import NodeView, ProposedAction, Transition
from atlas_actors.types import Candidate, Outcome, Task, TestReport


def replace(old: str, new: str) -> dict[str, Any]:
    return {"kind": "replace", "old": old, "new": new}


SUBMIT: dict[str, Any] = {"kind": "submit"}


def toy_task(start: str, target: str, task_id: str = "toy") -> Task:
    return Task(
        id=task_id,
        domain="toy",
        description="make the program right",
        context={"start": start, "target": target},
    )


class Delays:
    """Random sleeps (not seeded by the search) to shuffle completion order."""

    def __init__(self, max_s: float = 0.0, seed: int | None = None) -> None:
        self.max_s = max_s
        self.rng = random.Random(seed)

    async def __call__(self) -> None:
        if self.max_s > 0:
            await anyio.sleep(self.rng.random() * self.max_s)


class ToyStepper:
    """The stepper: stateless, restores the text then applies the action."""

    def __init__(self, delays: Delays | None = None, fail_on: Callable[[Any], bool] | None = None):
        self.delays = delays or Delays()
        self.fail_on = fail_on
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def root(self, task: Task) -> Transition:
        text = task.context["start"]
        return Transition(state={"text": text}, solution=text, observation="start")

    async def transition(self, task: Task, state: dict[str, Any], action: Any) -> Transition:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self.delays()
            if self.fail_on is not None and self.fail_on(action):
                raise RuntimeError("the environment broke")
            text = state["text"]
            if action.get("kind") == "submit":
                return Transition(state=state, solution=text, observation="submitted", done=True)
            old, new = action["old"], action["new"]
            if old not in text:
                return Transition(state=state, solution=text, observation=f"{old!r} not found")
            out = text.replace(old, new, 1)
            return Transition(state={"text": out}, solution=out, observation=f"replaced {old!r}")
        finally:
            self.in_flight -= 1


def grade(start: str, target: str, text: str) -> Outcome:
    want, was, got = target.splitlines(), start.splitlines(), text.splitlines()
    report = TestReport()
    for i, line in enumerate(want):
        ok = i < len(got) and got[i] == line
        name = f"line{i}"
        if i < len(was) and was[i] == line:
            (report.pass_to_pass_passed if ok else report.pass_to_pass_failed).append(name)
        else:
            (report.fail_to_pass_passed if ok else report.fail_to_pass_failed).append(name)
    success = got == want
    partial = report.passing / report.graded if report.graded else 0.0
    return Outcome(
        success=success,
        partial_score=1.0 if success else partial,
        feedback="resolved" if success else f"{report.passing}/{report.graded} lines right",
        tests=report,
    )


class ToyEvaluator:
    """The evaluator: a hidden target check (the search only sees the report)."""

    def __init__(self, delays: Delays | None = None) -> None:
        self.delays = delays or Delays()
        self.calls = 0
        self.solutions: list[Any] = []

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        await self.delays()
        self.calls += len(solutions)
        self.solutions.extend(solutions)
        ctx = task.context
        return [grade(ctx["start"], ctx["target"], s) for s in solutions]


def _fresh(actions: Sequence[Any], tried: Sequence[Any]) -> list[Any]:
    return [a for a in actions if a not in tried]


class ScriptedProposer:
    """Proposes, for a node, the listed actions of its text that were not tried yet,
    in order (``script[text]``, else ``default``)."""

    def __init__(
        self, script: dict[str, list[Any]], default: Sequence[Any] = (), prior: float = 1.0
    ) -> None:
        self.script = script
        self.default = list(default)
        self.prior = prior
        self.calls = 0
        self.views: list[NodeView] = []

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        self.calls += 1
        self.views.append(node)
        actions = _fresh(self.script.get(node.state["text"], self.default), node.tried)[:k]
        return [
            ProposedAction(action=a, prior=self.prior, label=_label(a), source="script")
            for a in actions
        ]


def _label(action: Any) -> str:
    if action.get("kind") == "submit":
        return "submit"
    return f"{action['old']!r} -> {action['new']!r}"


class RandomEditProposer:
    """Edits drawn from the search's rng (so a run depends on the seed only): replace
    one line of the text by one from ``vocabulary``, sometimes submit."""

    def __init__(self, vocabulary: Sequence[str], submit_rate: float = 0.1) -> None:
        self.vocabulary = list(vocabulary)
        self.submit_rate = submit_rate
        self.calls = 0
        self.views: list[NodeView] = []

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        self.calls += 1
        self.views.append(node)
        lines = node.state["text"].splitlines()
        out: list[ProposedAction] = []
        for _ in range(k * 3):
            if len(out) >= k:
                break
            if rng.random() < self.submit_rate:
                action: dict[str, Any] = dict(SUBMIT)
            else:
                line = rng.choice(lines)
                action = replace(line, rng.choice(self.vocabulary))
            if action in node.tried or any(p.action == action for p in out):
                continue
            out.append(
                ProposedAction(action=action, prior=rng.random() + 0.1, label=_label(action))
            )
        return out


class CostlyProposer(ScriptedProposer):
    """A scripted proposer that reports an LLM usage costing ``cost`` per call."""

    def __init__(self, *args: Any, cost: float = 1.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from atlas_actors.llm.usage import Usage

        self.usage = Usage()
        self.cost = cost

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        self.usage.calls += 1
        self.usage.cost += self.cost
        return await super().propose(task, node, k, rng)


class PickyBackend:
    """A discriminator backend (Assessor) that likes solutions containing ``liked``."""

    def __init__(self, liked: str, high: float = 0.9, low: float = 0.2) -> None:
        self.liked = liked
        self.high = high
        self.low = low
        self.calls = 0

    async def assess(self, task: Task, candidate: Candidate) -> Any:
        from atlas_actors.search.base import ValueEstimate

        self.calls += 1
        hit = self.liked in str(candidate.solution)
        return ValueEstimate(
            value=self.high if hit else self.low,
            explanation="liked" if hit else "not liked",
            source="picky",
        )

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        est = await self.assess(task, candidate)
        return est.value, est.explanation
