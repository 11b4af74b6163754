"""Ranking among green patches: closeness (changed tokens, new names), then fault
localisation's rank of the edit's line."""

from __future__ import annotations

import random
import textwrap
from types import SimpleNamespace
from typing import Any

from atlas_actors.search.base import NodeView
from atlas_actors.swe.repair.batch import CandidateResult, TestVerdict
from atlas_actors.swe.repair.operators import generate_edits
from atlas_actors.swe.repair.proposer import OfflineRepairProposer
from atlas_actors.swe.repair.ranking import Closeness, closeness, diff_sides, fl_rank
from atlas_actors.types import Task

SHIPPING = textwrap.dedent(
    """\
    FLAT = 4.95
    EXPRESS = 9.90
    FREE_FROM = 50.0


    def cost(subtotal):
        if subtotal > FREE_FROM:
            return 0.0
        return FLAT
    """
)


def labelled(label: str) -> object:
    edits = generate_edits(SHIPPING, "s.py", {7: 1.0})
    return next(e for e in edits if e.label.startswith(label))


def test_a_changed_operator_is_closer_than_another_constant_name() -> None:
    scores = {"s.py": {7: 1.0, 8: 0.5}}
    operator = closeness(labelled("> -> >="), scores)
    name = closeness(labelled("FREE_FROM -> EXPRESS"), scores)
    assert operator == Closeness(changed_tokens=1, new_names=0, fl_rank=1)
    assert name == Closeness(changed_tokens=1, new_names=1, fl_rank=1)
    assert operator < name


def test_fewer_changed_tokens_come_before_names() -> None:
    swap = generate_edits("def f(a, lo, hi):\n    return (a - hi) * 2\n", "m.py", {2: 1.0})
    swapped = next(e for e in swap if e.family == "operand_swap")
    renamed = next(e for e in swap if e.label.startswith("hi -> lo"))
    scores = {"m.py": {2: 1.0}}
    assert closeness(renamed, scores) < closeness(swapped, scores)
    assert diff_sides(swapped.diff) == ("    return (a - hi) * 2", "    return (hi - a) * 2")


def test_fl_rank_counts_lines_that_score_higher() -> None:
    scores = {"a.py": {3: 0.9, 4: 0.5}, "b.py": {1: 0.7}}
    assert fl_rank(scores, "a.py", (3,)) == 1
    assert fl_rank(scores, "a.py", (4, 5)) == 3
    assert fl_rank(scores, "b.py", (1,)) == 2
    assert fl_rank(scores, "b.py", (9,)) == 4  # not suspicious: after every line


class ShippingToolbox:
    """Runs :data:`SHIPPING`'s candidates in process against weak tests: 50 and 80 ship
    free, 3 pays the flat rate (a wrong constant passes them too)."""

    async def invoke(self, task: Any, tool: str, /, **kwargs: Any) -> Any:
        if tool == "localize":
            line = SimpleNamespace(path="s.py", line=7, score=1.0, failed=1)
            return SimpleNamespace(failing=["t.py::t"], passing=[], tests=[], lines=[line])
        if tool == "read_files":
            return {p: SHIPPING if p == "s.py" else None for p in kwargs["paths"]}
        if tool == "try_candidates":
            out = []
            for n, cand in enumerate(kwargs["candidates"]):
                space: dict[str, Any] = {}
                exec(compile(cand.files["s.py"], "s.py", "exec"), space)
                cost = space["cost"]
                try:
                    ok = cost(50.0) == 0.0 and cost(80.0) == 0.0 and cost(3.0) == 4.95
                except Exception:
                    ok = False
                verdict = TestVerdict(test="t.py::t", outcome="passed" if ok else "failed")
                out.append(
                    CandidateResult(
                        index=n, applied=True, compiled=True, passed=ok, tests=[verdict]
                    )
                )
            return out
        raise AssertionError(tool)


async def test_the_answer_holds_the_closest_green_edit_alone() -> None:
    task = Task(id="ship-1", domain="swe")
    root = NodeView(node_id="0", state={}, solution="")
    ranked = await OfflineRepairProposer(ShippingToolbox(), probe=False).propose(
        task, root, 4, random.Random(0)
    )
    assert [p.label for p in ranked] == ["> -> >= at s.py:7"]
    by_prior = await OfflineRepairProposer(
        ShippingToolbox(), probe=False, rank_greens=False
    ).propose(task, root, 4, random.Random(0))
    labels = [p.label for p in by_prior]
    assert len(labels) > 1 and labels[0].startswith("FREE_FROM -> ")  # a name fits too


class WiderShippingToolbox(ShippingToolbox):
    """:class:`ShippingToolbox` with a wider suite: one more test nobody grades, which
    passes at base (20 pays the flat rate)."""

    def __init__(self) -> None:
        self.wider_runs = 0

    async def invoke(self, task: Any, tool: str, /, **kwargs: Any) -> Any:
        if tool == "wider_tests":
            return SimpleNamespace(passing=["t.py::wide"], durations={"t.py::wide": 0.1})
        if tool == "try_candidates" and kwargs.get("tests") == ["t.py::wide"]:
            self.wider_runs += 1
            out = []
            for n, cand in enumerate(kwargs["candidates"]):
                space: dict[str, Any] = {}
                exec(compile(cand.files["s.py"], "s.py", "exec"), space)
                ok = space["cost"](20.0) == 4.95
                verdict = TestVerdict(
                    test="t.py::wide",
                    outcome="passed" if ok else "failed",
                    message="" if ok else "AssertionError",
                )
                out.append(
                    CandidateResult(
                        index=n, applied=True, compiled=True, passed=ok, tests=[verdict]
                    )
                )
            return out
        return await super().invoke(task, tool, **kwargs)


async def test_a_green_edit_that_breaks_the_wider_suite_is_refused() -> None:
    task = Task(id="ship-2", domain="swe")
    root = NodeView(node_id="0", state={}, solution="")
    box = WiderShippingToolbox()
    proposer = OfflineRepairProposer(box, probe=False, rank_greens=False, wider=True)
    labels = [p.label for p in await proposer.propose(task, root, 8, random.Random(0))]
    # FREE_FROM -> EXPRESS passes the graded tests but ships 20 free: refused
    assert "> -> >= at s.py:7" in labels
    assert not any(x.startswith("FREE_FROM -> EXPRESS") for x in labels), labels
    assert box.wider_runs >= 1
    assert any(
        r.startswith("wider: breaks t.py::wide") and "FREE_FROM -> EXPRESS" in r
        for r in proposer.refused[task.id]
    )
    # without the check it is offered
    plain = OfflineRepairProposer(ShippingToolbox(), probe=False, rank_greens=False)
    got = [p.label for p in await plain.propose(task, root, 8, random.Random(0))]
    assert any(x.startswith("FREE_FROM -> EXPRESS") for x in got)
