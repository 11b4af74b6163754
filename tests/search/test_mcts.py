"""SWESearch: selection, virtual loss and backpropagation on hand-built trees, and whole
searches over a small in-memory environment (see ``tests/helpers/toy_search.py``)."""

from __future__ import annotations

import json
import logging
import math
import random
from pathlib import Path
from typing import Any

import anyio
import pytest

from atlas_actors.config import SWESearchConfig
from atlas_actors.errors import ConfigError
from atlas_actors.search.base import NodeView, Proposals, ProposedAction, ValueEstimate
from atlas_actors.search.discriminator import Discriminator
from atlas_actors.search.mcts import (
    MCTSNode,
    SearchTree,
    SWESearch,
    TreePolicy,
    action_key,
)
from atlas_actors.types import Task
from tests.helpers.toy_search import (
    SUBMIT,
    CostlyProposer,
    Delays,
    PickyBackend,
    RandomEditProposer,
    ScriptedProposer,
    ToyEvaluator,
    ToyStepper,
    replace,
    toy_task,
)

pytestmark = pytest.mark.timeout(60)

C = 1.414


# ------------------------------------------------------------------ hand-built trees


def _node(
    nid: int,
    parent: int | None,
    *,
    value: float,
    visits: int = 1,
    value_sum: float | None = None,
    prior: float = 1.0,
    depth: int | None = None,
    action: Any = None,
    duplicates: int = 0,
) -> MCTSNode:
    return MCTSNode(
        id=nid,
        parent=parent,
        depth=depth if depth is not None else (0 if parent is None else 1),
        key=f"k{nid}",
        action=action,
        action_key=action_key(action) if action is not None else None,
        estimate=ValueEstimate(value=value),
        visits=visits,
        value_sum=value * visits if value_sum is None else value_sum,
        prior=prior,
        duplicates=duplicates,
    )


def _link(nodes: list[MCTSNode]) -> list[MCTSNode]:
    for n in nodes:
        n.children = [m.id for m in nodes if m.parent == n.id]
    return nodes


def _cfg(**kw: Any) -> SWESearchConfig:
    base: dict[str, Any] = {"depth_penalty": 0.0, "duplicate_penalty": 0.0, "repeat_penalty": 0.0}
    base.update(kw)
    return SWESearchConfig(**base)


def test_uct_scores_and_choice_on_a_hand_built_tree() -> None:
    # root (full: max_children=2) with a good child A and a bad child B.
    nodes = _link(
        [
            _node(0, None, value=0.3, visits=3, value_sum=1.2),
            _node(1, 0, value=0.9),
            _node(2, 0, value=0.0),
        ]
    )
    policy = TreePolicy(_cfg(max_children=2))
    opts = policy.options(nodes, 0, policy.open_nodes(nodes))
    assert [o.node for o in opts] == [1, 2]  # the root is full: no "expand again"
    explore = C * math.sqrt(math.log(3) / 1)
    assert opts[0].score == pytest.approx(0.9 + explore)
    assert opts[1].score == pytest.approx(0.0 + explore)
    assert policy.select(nodes) == 1


def test_expanding_again_beats_a_child_worse_than_its_parent() -> None:
    # The root's own value 0.3 and one child of value 0.1: trying another action at
    # the root (same exploration as a once-visited child) wins; a better child wins
    # the other way.
    nodes = _link([_node(0, None, value=0.3, visits=2, value_sum=0.4), _node(1, 0, value=0.1)])
    policy = TreePolicy(_cfg())
    opts = policy.options(nodes, 0, policy.open_nodes(nodes))
    assert opts[0].expand and opts[0].score == pytest.approx(0.3 + C * math.sqrt(math.log(2)))
    assert policy.select(nodes) == 0
    nodes[1].estimate = ValueEstimate(value=0.6)
    nodes[1].value_sum = 0.6
    assert policy.select(nodes) == 1


def test_puct_follows_the_normalised_priors() -> None:
    def tree(p1: float, p2: float) -> list[MCTSNode]:
        return _link(
            [
                _node(0, None, value=0.5, visits=3),
                _node(1, 0, value=0.5, prior=p1),
                _node(2, 0, value=0.5, prior=p2),
            ]
        )

    policy = TreePolicy(_cfg(selection="puct", max_children=2))
    nodes = tree(8.0, 2.0)  # normalised: 0.8 / 0.2
    opts = policy.options(nodes, 0, policy.open_nodes(nodes))
    assert opts[0].exploration == pytest.approx(C * 0.8 * math.sqrt(3) / 2)
    assert opts[1].exploration == pytest.approx(C * 0.2 * math.sqrt(3) / 2)
    assert policy.select(nodes) == 1
    assert policy.select(tree(2.0, 8.0)) == 2
    # With room for another child, "expand again" takes a prior of 1/3.
    roomy = TreePolicy(_cfg(selection="puct", max_children=3))
    nodes = tree(8.0, 2.0)
    opts = roomy.options(nodes, 0, roomy.open_nodes(nodes))
    assert opts[0].expand and opts[0].exploration == pytest.approx(C / 3 * math.sqrt(3))
    assert opts[1].exploration == pytest.approx(C * (2 / 3) * 0.8 * math.sqrt(3) / 2)


def _branchy() -> list[MCTSNode]:
    # root -> A (good, full) -> A1, A2 leaves; root -> B (a bit worse).
    return _link(
        [
            _node(0, None, value=0.3, visits=7, value_sum=2.9),
            _node(1, 0, value=0.7, visits=3, value_sum=2.1),
            _node(2, 0, value=0.5, visits=3),
            _node(3, 1, value=0.7, depth=2),
            _node(4, 1, value=0.7, depth=2),
        ]
    )


def test_virtual_loss_spreads_a_batch_over_branches() -> None:
    nodes = _branchy()
    # Without virtual loss, the second pick goes down the same branch (A -> A2).
    plain = TreePolicy(_cfg(max_children=1, virtual_loss=0.0))
    assert plain.select_batch(nodes, 2) == [3, 4]
    # With it, A looks worse while A1 is pending, and the batch tries B.
    policy = TreePolicy(_cfg(max_children=1, virtual_loss=3.0))
    assert policy.select_batch(nodes, 2) == [3, 2]
    assert policy.virtual == {3: 3.0, 1: 3.0, 0: 6.0, 2: 3.0}
    assert policy.q(nodes[1]) == pytest.approx(2.1 / 6)
    policy.clear()
    assert policy.virtual == {} and policy.pending == {}
    assert policy.select(nodes) == 3  # unchanged tree, no virtual loss: same first pick
    # A node with room for one more child is picked once per batch.
    assert sorted(policy.select_batch(nodes, 10)) == [2, 3, 4]


def test_a_node_with_room_for_more_children_is_picked_again_in_a_batch() -> None:
    # A young tree: the root alone still fills a batch, up to the children it may get.
    root = [_node(0, None, value=0.5)]
    policy = TreePolicy(_cfg(max_children=3, virtual_loss=1.0))
    batch = policy.select_batch(root, 4)
    assert batch == [0, 0, 0]
    assert TreePolicy.slots(batch) == [0, 1, 2]
    assert policy.pending == {0: 3} and policy.virtual == {0: 3.0}
    policy.clear()
    # Two children per expansion: a root with room for 3 takes two expansions.
    wide = TreePolicy(_cfg(max_children=3, children_per_expansion=2))
    assert wide.select_batch(root, 4) == [0, 0]
    # The leaves of a tree, each with room for two children, are each picked twice,
    # and the virtual loss spreads the picks over both branches before any repeat.
    nodes = _branchy()
    spread = TreePolicy(_cfg(max_children=2, virtual_loss=3.0))
    batch = spread.select_batch(nodes, 10)
    assert sorted(batch) == [2, 2, 3, 3, 4, 4]
    assert batch[:2] == [3, 2]
    assert TreePolicy.slots([3, 2, 3, 4, 2, 4]) == [0, 0, 1, 0, 1, 1]


def test_backpropagation_adds_one_visit_to_the_path() -> None:
    nodes = _branchy()
    TreePolicy.backpropagate(nodes, 4, 0.25)
    assert [n.visits for n in nodes] == [8, 4, 3, 1, 2]
    assert nodes[4].value_sum == pytest.approx(0.95)
    assert nodes[1].value_sum == pytest.approx(2.35)
    assert nodes[0].value_sum == pytest.approx(3.15)
    assert nodes[2].value_sum == pytest.approx(1.5)


def test_depth_penalty_prefers_widening_over_going_deeper() -> None:
    def tree() -> list[MCTSNode]:
        return _link([_node(0, None, value=0.5, visits=2, value_sum=1.05), _node(1, 0, value=0.55)])

    assert TreePolicy(_cfg(depth_penalty=0.0)).select(tree()) == 1
    assert TreePolicy(_cfg(depth_penalty=0.1)).select(tree()) == 0


def test_duplicate_penalty_steers_away_from_nodes_that_repeat_states() -> None:
    def tree() -> list[MCTSNode]:
        return _link(
            [
                _node(0, None, value=0.3, visits=3),
                _node(1, 0, value=0.5, duplicates=2),
                _node(2, 0, value=0.5),
            ]
        )

    assert TreePolicy(_cfg(max_children=2)).select(tree()) == 1  # a tie: the lower id
    policy = TreePolicy(_cfg(max_children=2, duplicate_penalty=0.125))
    opts = policy.options(tree(), 0, policy.open_nodes(tree()))
    assert opts[0].penalty == pytest.approx(0.125 * 4)
    assert policy.select(tree()) == 2


def test_repeat_penalty_for_a_child_repeating_its_parents_action() -> None:
    run_tests = {"kind": "run", "command": "pytest"}
    edit = replace("a", "b")

    def tree() -> list[MCTSNode]:
        return _link(
            [
                _node(0, None, value=0.3, visits=4),
                _node(1, 0, value=0.5, visits=3, action=run_tests),
                _node(2, 1, value=0.6, depth=2, action=run_tests),
                _node(3, 1, value=0.55, depth=2, action=edit),
            ]
        )

    def closed_root() -> list[MCTSNode]:
        nodes = tree()
        nodes[0].exhausted = True  # the only way on is through node 1
        return nodes

    cfg = {"max_children": 2}
    assert TreePolicy(_cfg(**cfg)).select(closed_root()) == 2
    assert TreePolicy(_cfg(**cfg, repeat_penalty=0.25)).select(closed_root()) == 3


# ------------------------------------------------------------------------ searches

START = "a = 1\nb = 2\nc = x\n"
TARGET = "a = 1\nb = 2\nc = 3\n"
WRONG = replace("b = 2", "b = 5")
RIGHT = replace("c = x", "c = 3")


def _search(proposer: Any, **cfg: Any) -> tuple[SWESearch, ToyStepper, ToyEvaluator]:
    stepper, evaluator = cfg.pop("stepper", None) or ToyStepper(), ToyEvaluator()
    disc = cfg.pop("discriminator", Discriminator())
    config = SWESearchConfig(**cfg)
    return SWESearch(proposer, stepper, evaluator, disc, config), stepper, evaluator


async def test_backs_off_the_wrong_branch_and_resolves() -> None:
    # The proposer offers the wrong edit first and the right one second, one per
    # expansion, from every state.
    proposer = ScriptedProposer({}, default=[WRONG, RIGHT])
    search, _, evaluator = _search(proposer, parallel_expansions=1, rollout_depth=0)
    result = await search.search(toy_task(START, TARGET), seed=1)
    tree = result.tree.nodes
    assert result.stopped == "success" and result.solved
    assert result.best is not None and result.best.solution == TARGET
    wrong = next(n for n in tree if n.action == WRONG)
    right = next(n for n in tree if n.action == RIGHT and n.parent == 0)
    assert wrong.parent == 0 and wrong.children == []  # never extended
    assert wrong.value < tree[0].value  # the regression is judged worse than no change
    assert wrong.iteration < right.iteration  # tried first, then backed off
    assert result.best_node == right.id
    assert tree[0].tried == [WRONG, RIGHT]
    assert result.stats.expansions == 2 and result.stats.evaluations == 3
    assert evaluator.calls == 3
    # Visits and values were backed up: the root saw its own value and both children's.
    assert tree[0].visits == 3
    assert tree[0].value_sum == pytest.approx(sum(n.value for n in tree))


async def test_seen_state_table_merges_equal_solutions_from_different_paths() -> None:
    a9, c3 = replace("a = 1", "a = 9"), replace("c = x", "c = 3")
    both = "a = 9\nb = 2\nc = 3\n"
    script = {
        START: [a9, c3],
        "a = 9\nb = 2\nc = x\n": [c3],
        "a = 1\nb = 2\nc = 3\n": [a9],
        both: [],
    }
    proposer = ScriptedProposer(script)
    search, _, evaluator = _search(
        proposer,
        children_per_expansion=2,
        max_children=2,  # the root takes one expansion of two children
        parallel_expansions=2,
        rollout_depth=0,
        stop_on_success=False,
        max_expansions=20,
    )
    result = await search.search(toy_task(START, "z\n"), seed=0)
    tree = result.tree.nodes
    texts = [n.solution for n in tree]
    assert texts.count(both) == 1
    assert len(tree) == 4
    assert result.stats.duplicates == 1
    assert evaluator.solutions.count(both) == 1  # verified once
    loser = next(n for n in tree[1:3] if not n.children)
    assert any("led to the state of node" in f for f in loser.feedback)
    assert result.stopped == "exhausted"


async def test_submit_makes_a_finished_node_that_reuses_its_parents_verdict() -> None:
    proposer = ScriptedProposer(
        {START: [replace("a = 1", "a = 2")], "a = 2\nb = 2\nc = x\n": [SUBMIT]}
    )
    search, _, evaluator = _search(proposer, parallel_expansions=1, rollout_depth=0)
    result = await search.search(toy_task(START, TARGET), seed=0)
    tree = result.tree.nodes
    submitted = next(n for n in tree if n.done)
    assert submitted.solution == tree[submitted.parent or 0].solution
    assert submitted.finished and submitted.terminal
    assert evaluator.calls == 2  # root and the edit: the submission reused the verdict
    assert result.best_node == submitted.id  # the only finished node
    assert [c.solution for c in result.finished] == [submitted.solution]


async def test_final_answer_is_the_discriminators_pick_among_finished_nodes() -> None:
    b7, b8 = replace("b = 2", "b = 7"), replace("b = 2", "b = 8")
    script = {START: [b7, b8], "a = 1\nb = 7\nc = x\n": [SUBMIT], "a = 1\nb = 8\nc = x\n": [SUBMIT]}
    backend = PickyBackend(liked="b = 7")
    proposer = ScriptedProposer(script)
    search, _, _ = _search(
        proposer,
        discriminator=Discriminator(backend),
        children_per_expansion=2,
        parallel_expansions=1,
        rollout_depth=0,
        max_expansions=10,
    )
    result = await search.search(toy_task(START, TARGET), seed=0)
    tree = result.tree.nodes
    finished = [n for n in tree if n.finished]
    assert len(finished) == 2 and result.stopped == "exhausted"
    assert result.best is not None and "b = 7" in result.best.solution
    last = max(finished, key=lambda n: n.iteration)
    assert "b = 8" in last.solution  # not simply the last one visited
    # Without a discriminator: the best by the verifier's value, the same patches
    # tie, and the smaller/earlier one wins.
    search, _, _ = _search(
        ScriptedProposer(script),
        discriminator=None,
        children_per_expansion=2,
        parallel_expansions=1,
        max_expansions=10,
    )
    plain = await search.search(toy_task(START, TARGET), seed=0)
    assert plain.best is not None and "b = 7" in plain.best.solution


@pytest.mark.parametrize("concurrency", [None, 1, 2])
async def test_rollout_finds_a_resolving_state_and_it_is_grafted(concurrency: int | None) -> None:
    """Also under a limit on environment calls (``concurrency``), where a rollout step's
    verdict must not wait for a slot its own step holds."""
    a1 = replace("a = 1", "a = 1 ")
    proposer = ScriptedProposer({START: [a1], "a = 1 \nb = 2\nc = x\n": [RIGHT]})
    disc = Discriminator()
    search, _, _ = _search(
        proposer,
        discriminator=disc,
        parallel_expansions=1,
        max_expansions=1,
        discriminator_threshold=0.0,
        rollout_depth=3,
        concurrency=concurrency,
    )
    result = await search.search(toy_task(START, "a = 1 \nb = 2\nc = 3\n"), seed=0)
    tree = result.tree.nodes
    assert result.stats.rollouts == 1 and result.stats.grafted == 1
    grafted = tree[-1]
    assert grafted.from_rollout and grafted.succeeded and grafted.parent == 1
    assert tree[1].rollout_value == pytest.approx(grafted.value) and grafted.value > 0.99
    assert result.stopped == "success" and result.best_node == grafted.id
    assert result.stats.expansions == 1


async def test_no_rollout_below_the_threshold() -> None:
    proposer = ScriptedProposer({}, default=[WRONG, RIGHT])
    search, _, _ = _search(proposer, parallel_expansions=1, discriminator_threshold=0.95)
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stats.rollouts == 0


def test_the_top_fraction_rule_is_the_trees_kth_best_estimate() -> None:
    nodes = [_node(i, None if i == 0 else 0, value=(i + 1) / 10) for i in range(10)]
    for fraction, want in ((0.2, 0.9), (0.1, 1.0), (0.15, 0.9), (1.0, 0.1), (0.01, 1.0)):
        policy = TreePolicy(SWESearchConfig(rollout_top_fraction=fraction))
        assert policy.rollout_threshold(nodes) == pytest.approx(want), fraction
    thirty = [_node(i, None if i == 0 else 0, value=i / 30) for i in range(30)]
    top = TreePolicy(SWESearchConfig(rollout_top_fraction=0.1)).rollout_threshold(thirty)
    assert top == pytest.approx(27 / 30)  # the 3rd best of 30, not the 4th
    absolute = TreePolicy(SWESearchConfig(discriminator_threshold=0.42))
    assert absolute.rollout_threshold(nodes) == 0.42


async def test_with_a_top_fraction_the_trees_best_nodes_get_the_rollouts() -> None:
    """Under ``rollout_top_fraction`` a new node gets a rollout exactly when its estimate
    is at least the top-fraction estimate of the tree its batch grew from, whatever the
    absolute threshold (here one no node reaches)."""
    task = toy_task(START, TARGET)
    kw: dict[str, Any] = {"max_expansions": 24, "rollout_top_fraction": 0.2}
    result = await _random_search(3, discriminator_threshold=0.99, **kw).search(task, seed=3)
    nodes = result.tree.nodes
    policy = TreePolicy(SWESearchConfig(rollout_top_fraction=0.2))
    checked = 0
    for n in nodes[1:]:
        if n.from_rollout or n.succeeded or n.done:
            continue
        before = [m for m in nodes if m.id == 0 or m.iteration < n.iteration]
        assert (n.rollout_value is not None) == (n.value >= policy.rollout_threshold(before))
        checked += 1
    assert checked > 8 and 0 < result.stats.rollouts < checked
    absolute = await _random_search(3, discriminator_threshold=0.99, max_expansions=24).search(
        task, seed=3
    )
    assert absolute.stats.rollouts == 0
    # concurrent expansions give the sequential tree under this rule too
    seq = await _random_search(3, concurrency=1, **kw).search(task, seed=3)
    par = await _random_search(3, delays=0.02, **kw).search(task, seed=3)
    assert _shape(seq.tree) == _shape(par.tree)


# ------------------------------------------------------------ failures become feedback


class _Flaky(ScriptedProposer):
    def __init__(self, answers: list[Any], then: list[Any]) -> None:
        super().__init__({}, default=then)
        self.answers = answers

    async def propose(self, task: Any, node: Any, k: int, rng: Any) -> Any:
        if self.answers:
            answer = self.answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return await super().propose(task, node, k, rng)


async def test_proposer_errors_and_garbage_become_node_feedback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    proposer = _Flaky([RuntimeError("model down"), "garbage", [{"bogus": 1}, 42]], then=[RIGHT])
    search, _, _ = _search(
        proposer, parallel_expansions=1, rollout_depth=0, max_failures_per_node=5
    )
    with caplog.at_level(logging.WARNING, logger="atlas_actors.search.mcts"):
        result = await search.search(toy_task(START, TARGET), seed=0)
    root = result.tree.nodes[0]
    assert result.stopped == "success"
    assert any("the proposer failed: RuntimeError: model down" in f for f in root.feedback)
    assert any("not a list of actions" in f for f in root.feedback)
    assert sum("is not an action" in f for f in root.feedback) == 2
    assert root.failures == 3 and result.stats.failures == 3
    assert "model down" in caplog.text
    # The proposer saw the feedback when it was asked again.
    assert any("model down" in f for f in proposer.views[-1].feedback)


class _Reported(list):  # type: ignore[type-arg]
    """An empty answer that says why (as the LLM proposer's ``Proposals`` does)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__()
        self.problems = problems


async def test_an_unusable_answer_is_a_failure_not_the_end_of_ideas() -> None:
    proposer = _Flaky([_Reported(["the answer was not JSON"])], then=[RIGHT])
    search, _, _ = _search(proposer, parallel_expansions=1, rollout_depth=0)
    result = await search.search(toy_task(START, TARGET), seed=0)
    root = result.tree.nodes[0]
    assert result.stopped == "success"  # the root was asked again, not closed
    assert root.failures == 1 and any("not JSON" in f for f in root.feedback)


async def test_too_many_failures_close_a_node() -> None:
    proposer = _Flaky([RuntimeError("x")] * 5, then=[RIGHT])
    search, _, _ = _search(proposer, parallel_expansions=1, max_failures_per_node=2)
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "exhausted" and result.stats.expansions == 2


async def test_rejected_action_and_stepper_failure_become_feedback() -> None:
    boom = replace("b = 2", "b = 3")
    proposer = ScriptedProposer({}, default=[replace("nope", "x"), boom, RIGHT])
    stepper, evaluator = ToyStepper(fail_on=lambda a: a == boom), ToyEvaluator()
    search = SWESearch(
        proposer,
        stepper,
        evaluator,
        Discriminator(),
        SWESearchConfig(parallel_expansions=1, rollout_depth=0),
    )
    result = await search.search(toy_task(START, TARGET), seed=0)
    root = result.tree.nodes[0]
    assert result.stopped == "success"
    assert any("led to no change: 'nope' not found" in f for f in root.feedback)
    assert any("failed: RuntimeError: the environment broke" in f for f in root.feedback)
    assert root.duplicates == 1 and result.stats.failures == 1
    assert len(result.tree.nodes) == 2  # neither made a node


# ------------------------------------------------------------------------ budgets


async def test_expansion_budget_stops_the_search() -> None:
    proposer = RandomEditProposer(["q = 0", "r = 1", "s = 2"], submit_rate=0.0)
    search, _, _ = _search(proposer, max_expansions=5, stop_on_success=False)
    seen: list[tuple[str, int]] = []
    search.progress = lambda task_id, stats: seen.append((task_id, stats.expansions))
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "expansions" and result.stats.expansions == 5
    # The root three times at once (room for three children), then a batch cut to two.
    assert seen == [("toy", 3), ("toy", 5)]


async def test_time_limit_stops_the_search() -> None:
    proposer = RandomEditProposer(["q = 0", "r = 1", "s = 2"], submit_rate=0.0)
    stepper = ToyStepper(delays=Delays(0.3, seed=0))
    search = SWESearch(
        proposer,
        stepper,
        ToyEvaluator(),
        Discriminator(),
        SWESearchConfig(time_limit_s=0.4, stop_on_success=False, max_expansions=1000),
    )
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "time"
    assert result.stats.seconds < 3.0
    assert result.stats.expansions < 1000


async def test_cost_cap_stops_the_search() -> None:
    proposer = CostlyProposer({}, default=[WRONG, RIGHT, replace("a = 1", "a = 0")], cost=1.0)
    search, _, _ = _search(
        proposer, parallel_expansions=1, max_cost=2.5, stop_on_success=False, rollout_depth=0
    )
    result = await search.search(toy_task(START, "zzz\n"), seed=0)
    assert result.stopped == "cost"
    assert proposer.usage.calls == 3
    assert result.stats.llm_cost == pytest.approx(3.0) and result.stats.llm_calls == 3


async def test_a_node_gets_at_most_max_children() -> None:
    edits = [replace("a = 1", f"a = {i}") for i in range(2, 8)]
    proposer = ScriptedProposer({START: edits})
    search, _, _ = _search(
        proposer, children_per_expansion=5, max_children=2, max_expansions=3, rollout_depth=0
    )
    result = await search.search(toy_task(START, TARGET), seed=0)
    root = result.tree.nodes[0]
    assert len(root.children) == 2 and root.tried == edits[:2]
    assert len(proposer.views) == 3  # the root once, then each child (no script: nothing)


async def test_why_a_search_stopped_is_said_in_words() -> None:
    proposer = _Flaky([_Reported(["fault localisation found no suspicious line"])] * 3, then=[])
    search, _, _ = _search(proposer, parallel_expansions=1, max_failures_per_node=3)
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "exhausted"
    assert result.why.startswith("exhausted: 3 expansions (3 failed), 1 nodes")
    assert "fault localisation found no suspicious line" in result.why
    # an empty answer's notes (no more ideas, not a failure) say why too
    quiet = _Flaky([Proposals([], notes=["640 edits screened, none makes progress"])], then=[])
    search, _, _ = _search(quiet, parallel_expansions=1)
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "exhausted" and result.stats.failures == 0
    assert "640 edits screened, none makes progress" in result.why
    # a success needs no words
    search, _, _ = _search(_Flaky([], then=[RIGHT]), parallel_expansions=1, rollout_depth=0)
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "success" and result.why == ""


async def test_a_proposer_with_no_ideas_exhausts_the_tree() -> None:
    search, _, _ = _search(ScriptedProposer({}), parallel_expansions=2)
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "exhausted"
    # Both picks of the root in the first batch asked; neither had an idea.
    assert result.tree.nodes[0].exhausted and result.stats.expansions == 2
    assert result.stats.iterations == 1
    # Nothing finished: the answer is the best node by value (the root here).
    assert result.best_node == 0


# --------------------------------------------------- determinism and persistence


def _shape(tree: SearchTree) -> list[dict[str, Any]]:
    return [n.model_dump(mode="json") for n in tree.nodes]


def _random_search(parallel: int, **kw: Any) -> SWESearch:
    proposer = RandomEditProposer(["a = 1", "b = 2", "c = 3", "c = 4", "b = 0"], submit_rate=0.1)
    delays = kw.pop("delays", 0.0)
    settings: dict[str, Any] = {
        "children_per_expansion": 2,
        "parallel_expansions": parallel,
        "stop_on_success": False,
        "discriminator_threshold": 0.6,
        "rollout_depth": 2,
    }
    cfg = SWESearchConfig(**{**settings, **kw})
    return SWESearch(
        proposer,
        ToyStepper(delays=Delays(delays)),
        ToyEvaluator(delays=Delays(delays)),
        Discriminator(),
        cfg,
    )


async def test_concurrent_expansions_give_the_same_tree_as_sequential_ones() -> None:
    task = toy_task(START, TARGET)
    seq = await _random_search(3, max_expansions=12, concurrency=1).search(task, seed=7)
    par = await _random_search(3, max_expansions=12, delays=0.02).search(task, seed=7)
    assert _shape(seq.tree) == _shape(par.tree)
    assert seq.best_node == par.best_node
    assert seq.stats.evaluations == par.stats.evaluations
    assert seq.stats.rollouts == par.stats.rollouts
    assert len(seq.tree.nodes) > 8
    other = await _random_search(3, max_expansions=12).search(task, seed=8)
    assert _shape(other.tree) != _shape(seq.tree)  # the seed matters


async def test_a_young_tree_fills_the_batch_with_alternatives_of_its_root() -> None:
    proposer = RandomEditProposer(["a = 2", "a = 3", "a = 4", "b = 5"], submit_rate=0.0)
    search, _, _ = _search(
        proposer, parallel_expansions=4, max_children=3, max_expansions=3, rollout_depth=0
    )
    result = await search.search(toy_task(START, TARGET), seed=1)
    assert result.stats.iterations == 1 and result.stats.expansions == 3
    assert sorted(v.slot for v in proposer.views) == [0, 1, 2]
    assert {v.node_id for v in proposer.views} == {"0"}
    # each repeat drew its own sample: the three expansions did not all propose alike
    assert len(result.tree.nodes[0].children) >= 2


class _OneSlowCall(RandomEditProposer):
    """The first call takes ``slow_s``; counts the calls started while it runs."""

    def __init__(self, slow_s: float) -> None:
        super().__init__(["a = 1", "b = 2", "c = 3", "c = 4", "b = 0"], submit_rate=0.0)
        self.slow_s = slow_s
        self.slow_running = False
        self.started_meanwhile = 0

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        first = self.calls == 0
        if self.slow_running:
            self.started_meanwhile += 1
        out = await super().propose(task, node, k, rng)
        if first:
            self.slow_running = True
            await anyio.sleep(self.slow_s)
            self.slow_running = False
        else:
            await anyio.sleep(0.01)
        return out


@pytest.mark.parametrize("pipeline", [False, True])
async def test_a_pipelined_search_does_not_wait_for_a_slow_expansion(pipeline: bool) -> None:
    proposer = _OneSlowCall(slow_s=1.0)
    search, _, _ = _search(
        proposer,
        parallel_expansions=4,
        max_children=4,
        max_expansions=20,
        stop_on_success=False,
        rollout_depth=0,
        pipeline=pipeline,
    )
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stats.expansions == 20 and result.stopped == "expansions"
    if pipeline:
        # the other three slots went on expanding while the slow call ran
        assert proposer.started_meanwhile >= 10
        assert result.stats.iterations == 20  # one integration at a time
    else:
        # a batch waits for its slowest expansion: nothing new starts meanwhile
        assert proposer.started_meanwhile == 3  # the rest of the first batch
    tree = result.tree.nodes
    for node in tree:  # a well-formed tree: every child knows its parent
        assert all(tree[c].parent == node.id for c in node.children)
    assert len({n.key for n in tree}) == len(tree)  # the seen-state table held


class _FixedDelay(Delays):
    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    async def __call__(self) -> None:
        await anyio.sleep(self.seconds)


@pytest.mark.parametrize("pipeline", [False, True])
async def test_pipelined_proposals_run_ahead_of_a_slow_environment(pipeline: bool) -> None:
    """With a fast proposer and slow transitions, a pipelined expansion frees its
    proposer slot when its proposals arrive: more expansions reach the environment at
    once than there are proposer slots (at most twice as many)."""
    proposer = RandomEditProposer(["a = 1", "b = 2", "c = 3", "c = 4", "b = 0"], submit_rate=0.0)
    search, stepper, _ = _search(
        proposer,
        stepper=ToyStepper(delays=_FixedDelay(0.1)),
        parallel_expansions=2,
        max_children=4,
        max_expansions=16,
        stop_on_success=False,
        rollout_depth=0,
        pipeline=pipeline,
    )
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stats.expansions == 16
    if pipeline:
        assert 2 < stepper.max_in_flight <= 4
    else:
        assert stepper.max_in_flight <= 2
    tree = result.tree.nodes
    assert len({n.key for n in tree}) == len(tree)


async def test_a_pipelined_search_stops_on_success_and_on_time() -> None:
    proposer = ScriptedProposer({START: [WRONG, RIGHT]})
    search, _, _ = _search(proposer, pipeline=True, rollout_depth=0)
    result = await search.search(toy_task(START, TARGET), seed=0)
    assert result.stopped == "success" and result.solved
    slow = _OneSlowCall(slow_s=5.0)
    cfg = SWESearchConfig(pipeline=True, time_limit_s=0.5, stop_on_success=False)
    timed = SWESearch(slow, ToyStepper(), ToyEvaluator(), Discriminator(), cfg)
    with anyio.fail_after(4):
        out = await timed.search(toy_task(START, TARGET), seed=0)
    assert out.stopped == "time" and out.stats.expansions > 0


async def test_parallel_expansions_run_at_once() -> None:
    search = _random_search(4, max_expansions=12, delays=0.05)
    await search.search(toy_task(START, TARGET), seed=3)
    assert isinstance(search.stepper, ToyStepper)
    assert search.stepper.max_in_flight > 1


async def test_resume_makes_the_same_choices_as_an_uninterrupted_run(tmp_path: Path) -> None:
    task = toy_task(START, TARGET)
    whole_path, part_path = tmp_path / "whole.json", tmp_path / "part.json"
    whole = await _random_search(2, max_expansions=14).search(task, seed=5, tree_path=whole_path)
    # Stopped by its budget after 3 iterations (2 + 2 + 2 expansions), then resumed
    # with a larger one.
    first = await _random_search(2, max_expansions=6).search(task, seed=5, tree_path=part_path)
    assert first.stopped == "expansions" and first.stats.iterations == 3
    saved = json.loads(part_path.read_text())
    assert saved["format"] == "atlas-mcts-tree" and saved["stopped"] == "expansions"
    assert len(saved["nodes"]) == len(first.tree.nodes) < len(whole.tree.nodes)
    resumed = await _random_search(2, max_expansions=14).search(task, seed=5, tree_path=part_path)
    assert _shape(resumed.tree) == _shape(whole.tree)
    assert resumed.best_node == whole.best_node
    assert resumed.stats.expansions == whole.stats.expansions == 14
    assert resumed.stats.evaluations == whole.stats.evaluations
    on_disk = SearchTree.model_validate_json(whole_path.read_text())
    assert _shape(on_disk) == _shape(whole.tree) and on_disk.final == whole.best_node
    assert not list(tmp_path.glob("*.tmp"))  # atomic writes leave no temporary files


class _Killer(RandomEditProposer):
    """Cancels the search (as a killed process would stop it) at its ``at``-th call."""

    def __init__(self, scope: anyio.CancelScope, at: int) -> None:
        super().__init__(["a = 1", "b = 2", "c = 3", "c = 4", "b = 0"], submit_rate=0.1)
        self.scope = scope
        self.at = at

    async def propose(self, task: Any, node: Any, k: int, rng: Any) -> Any:
        if self.calls + 1 == self.at:
            self.scope.cancel()
            await anyio.sleep(1)
        return await super().propose(task, node, k, rng)


async def test_a_search_killed_mid_iteration_resumes_where_it_was(tmp_path: Path) -> None:
    task = toy_task(START, TARGET)
    whole = await _random_search(3, max_expansions=13).search(task, seed=9)
    path = tmp_path / "t.json"
    with anyio.CancelScope() as scope:
        killed = _random_search(3, max_expansions=13)
        killed.proposer = _Killer(scope, at=6)
        await killed.search(task, seed=9, tree_path=path)
    assert scope.cancelled_caught
    saved = SearchTree.model_validate_json(path.read_text())
    assert saved.stopped is None and 0 < saved.stats.iterations < whole.stats.iterations
    resumed = await _random_search(3, max_expansions=13).search(task, seed=9, tree_path=path)
    assert _shape(resumed.tree) == _shape(whole.tree)
    assert resumed.best_node == whole.best_node


async def test_resume_refuses_another_task_or_seed(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    task = toy_task(START, TARGET)
    await _random_search(1, max_expansions=2).search(task, seed=1, tree_path=path)
    with pytest.raises(ConfigError, match="seed 1"):
        await _random_search(1, max_expansions=3).search(task, seed=2, tree_path=path)
    with pytest.raises(ConfigError, match="task 'toy'"):
        await _random_search(1, max_expansions=3).search(
            toy_task(START, TARGET, task_id="other"), seed=1, tree_path=path
        )
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not a search tree"):
        await _random_search(1, max_expansions=3).search(task, seed=1, tree_path=path)


@pytest.mark.parametrize("limit", [None, 300.0])
async def test_the_proposer_sees_the_time_left(limit: float | None) -> None:
    proposer = ScriptedProposer({}, default=[WRONG, RIGHT])
    search, _, _ = _search(proposer, parallel_expansions=1, rollout_depth=0, time_limit_s=limit)
    result = await search.search(toy_task(START, TARGET), seed=1)
    assert result.solved
    left = [v.time_left for v in proposer.views]
    if limit is None:
        assert left and all(t is None for t in left)
    else:  # what was left of the limit at each call, falling
        assert left and all(t is not None and 0 < t <= limit for t in left)
        assert left == sorted(left, reverse=True)  # type: ignore[type-var]
