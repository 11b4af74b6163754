#!/usr/bin/env python
"""Which nodes should get a rollout: an absolute value threshold or the tree's top fraction?

The tree search (``SWESearch``) rolls out a new node when ``Discriminator.should_rollout(
value, threshold)`` says so. Two rules give the threshold: the absolute
``discriminator_threshold`` (0.7) or, with ``rollout_top_fraction`` f, the tree's
``ceil(f·n)``-th best estimate (the seed's "rollouts on the top 10-20% of nodes"). This
compares them, and no rollouts at all, on a scripted repair problem where every call is
cheap and the result depends on the seed only:

* a task is a program of ``--lines`` lines of which 1 to ``--max-bugs`` are wrong; the
  tests are the lines (a wrong line is a FAIL_TO_PASS test, a right one PASS_TO_PASS), and
  the discriminator is the default ``TestEvidenceScorer`` (a value from which tests pass);
* the proposer plays a model of a given skill: one action per call, an edit of one
  failing line, right with probability ``--skill`` and otherwise a wrong text; now and then
  (``--slip``) it breaks a passing line instead. It reads only what a model would see
  (which tests fail) and draws from the search's random number generator;
* with ``--judge-scale s`` < 1 the judge is a cautious one (an LLM judge's scale is its
  own): every value short of a success is multiplied by ``s``.

Per rule, over ``--tasks`` tasks × ``--seeds`` seeds, each search given the same budget of
``--calls`` proposer calls (expansions plus rollout steps: what an LLM search pays for;
``max_cost`` at a cost of 1 per call, checked between iterations, so a rollout may
overrun it by its depth), sequential (``parallel_expansions`` 1): the share resolved,
the median calls of the resolved ones, and per search the mean calls, test runs
(verdicts) and rollouts.

    .venv/bin/python scripts/bench_rollout_rule.py
    .venv/bin/python scripts/bench_rollout_rule.py --skill 0.25 --max-bugs 6
    .venv/bin/python scripts/bench_rollout_rule.py --json runs/bench_rollout_rule.json
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atlas_actors.config import SWESearchConfig  # noqa: E402
from atlas_actors.llm.usage import Usage  # noqa: E402
from atlas_actors.search.base import NodeView, ProposedAction, ValueEstimate  # noqa: E402
from atlas_actors.search.discriminator import Discriminator, TestEvidenceScorer  # noqa: E402
from atlas_actors.search.mcts import SWESearch  # noqa: E402
from atlas_actors.types import Candidate, Task  # noqa: E402
from tests.helpers.toy_search import ToyEvaluator, ToyStepper, replace, toy_task  # noqa: E402

RULES: dict[str, dict[str, Any]] = {
    "no rollouts": {"rollout_depth": 0},
    "threshold 0.7": {"discriminator_threshold": 0.7},
    "top 10%": {"rollout_top_fraction": 0.1},
    "top 20%": {"rollout_top_fraction": 0.2},
}


class ScaledJudge:
    """The test-evidence value times ``scale`` (a success stays 1)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.inner = TestEvidenceScorer()

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        est = self.inner.evaluate(candidate)
        if candidate.outcome is not None and candidate.outcome.success:
            return est
        return est.model_copy(update={"value": est.value * self.scale})

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        est = await self.assess(task, candidate)
        return est.value, est.explanation


class ModelLikeProposer:
    """One edit per call: a failing line fixed (probability ``skill``) or replaced by a
    wrong text; with probability ``slip`` a passing line broken instead."""

    def __init__(self, skill: float, slip: float) -> None:
        self.skill = skill
        self.slip = slip
        self.usage = Usage()
        """Calls so far, at a cost of 1 each (what the search's ``max_cost`` reads)."""

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        self.usage.calls += 1
        self.usage.cost += 1.0
        lines = node.state["text"].splitlines()
        target = task.context["target"].splitlines()
        tests = node.outcome.tests if node.outcome is not None else None
        failing = [
            int(name[4:])  # the toy's tests are named line<N>
            for name in ([*tests.fail_to_pass_failed, *tests.pass_to_pass_failed] if tests else [])
        ]
        passing = [i for i in range(len(lines)) if i not in failing]
        out: list[ProposedAction] = []
        for _ in range(20):
            if len(out) >= k:
                break
            if failing and (not passing or rng.random() >= self.slip):
                i = rng.choice(failing)
                new = target[i] if rng.random() < self.skill else f"{target[i]}{rng.randrange(99)}"
            else:
                i = rng.choice(passing)
                new = f"{lines[i]}#{rng.randrange(99)}"
            action = replace(lines[i], new)
            if action in node.tried or any(p.action == action for p in out):
                continue
            out.append(ProposedAction(action=action, label=f"line {i}", source="model"))
        return out


def make_task(index: int, lines: int, max_bugs: int) -> Task:
    """Task ``index``: ``lines`` distinct lines, 1..max_bugs of them wrong."""
    rng = random.Random(index)
    target = [f"v{j} = {rng.randrange(1000)}" for j in range(lines)]
    start = list(target)
    for j in rng.sample(range(lines), 1 + index % max_bugs):
        start[j] = f"v{j} = ?"
    return toy_task("\n".join(start) + "\n", "\n".join(target) + "\n", task_id=f"t{index}")


async def run(rule: dict[str, Any], task: Task, seed: int, args: argparse.Namespace) -> Any:
    proposer = ModelLikeProposer(args.skill, args.slip)
    budget = {"max_expansions": 10_000, "max_cost": float(args.calls), "parallel_expansions": 1}
    cfg = SWESearchConfig(**{**budget, "rollout_depth": args.depth, "max_depth": 30, **rule})
    judge = Discriminator(ScaledJudge(args.judge_scale) if args.judge_scale != 1 else None)
    search = SWESearch(proposer, ToyStepper(), ToyEvaluator(), judge, cfg)
    result = await search.search(task, seed=seed)
    stats = result.stats
    return result.solved, proposer.usage.calls, stats.evaluations, stats.rollouts


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--lines", type=int, default=10)
    ap.add_argument("--max-bugs", type=int, default=5)
    ap.add_argument("--skill", type=float, default=0.35)
    ap.add_argument("--slip", type=float, default=0.1)
    ap.add_argument("--calls", type=int, default=40, help="proposer calls per search")
    ap.add_argument("--depth", type=int, default=5, help="rollout depth (default 5)")
    ap.add_argument("--judge-scale", type=float, default=1.0)
    add_json_flag(ap)
    args = ap.parse_args()
    tasks = [make_task(i, args.lines, args.max_bugs) for i in range(args.tasks)]
    title = (
        f"{args.tasks} tasks x {args.seeds} seeds, {args.lines} lines, 1-{args.max_bugs} bugs, "
        f"skill {args.skill}, slip {args.slip}, {args.calls} calls, rollout depth {args.depth}, "
        f"judge scale {args.judge_scale}"
    )
    table: list[list[Any]] = []
    figures: dict[str, Any] = {"settings": vars(args) | {"json": None}, "rules": {}}
    for name, rule in RULES.items():
        rows = [await run(rule, t, s, args) for t in tasks for s in range(args.seeds)]
        won = [r for r in rows if r[0]]
        to_resolve = statistics.median(r[1] for r in won) if won else None
        calls, test_runs, rollouts = (statistics.mean(r[i] for r in rows) for i in (1, 2, 3))
        resolved = len(won) / len(rows)
        figures["rules"][name] = {
            "rule": rule,
            "resolved": resolved,
            "calls_to_resolve_median": to_resolve,
            "calls_mean": calls,
            "test_runs_mean": test_runs,
            "rollouts_mean": rollouts,
        }
        table.append(
            [
                name,
                f"{resolved:.0%}",
                None if to_resolve is None else f"{to_resolve:.0f}",
                f"{calls:.1f}",
                f"{test_runs:.1f}",
                f"{rollouts:.1f}",
            ]
        )
    headers = ["rule", "resolved", "calls to resolve (median)", "calls", "test runs", "rollouts"]
    print_table(headers, table, title=title)
    write_json(args.json, figures)


if __name__ == "__main__":
    anyio.run(main)
