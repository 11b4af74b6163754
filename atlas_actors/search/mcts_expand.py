"""MCTS expansion: propose children of a selected node and try each one (apply, verify,
value, maybe roll out), concurrently and without writing the tree; the result is
integrated later, in selection order (see :mod:`atlas_actors.search.mcts`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from atlas_actors.search.base import (
    NodeView,
    ProposedAction,
    Transition,
    ValueEstimate,
    coerce_proposals,
)
from atlas_actors.search.discriminator import RolloutResult, call_limited
from atlas_actors.search.mcts_run import SearchRun, cut, short
from atlas_actors.search.mcts_select import TreePolicy
from atlas_actors.search.mind_evolution import derive_rng
from atlas_actors.search.tree import MAX_FEEDBACK_ENTRIES, MCTSNode, action_key, state_key
from atlas_actors.types import Outcome

log = logging.getLogger(__name__)


@dataclass
class Child:
    """What became of one proposed action during an expansion (integrated later)."""

    proposal: ProposedAction
    akey: str
    transition: Transition | None = None
    key: str = ""
    outcome: Outcome | None = None
    estimate: ValueEstimate | None = None
    rollout: RolloutResult | None = None
    error: str | None = None
    seen: bool = False
    """The transition reached a state already in the tree (or the node's own)."""


@dataclass
class Expansion:
    """The result of expanding one node (computed concurrently, integrated in order)."""

    children: list[Child] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Feedback for the node (proposer errors, garbage, repeated actions)."""
    repeats: int = 0
    failed: bool = False
    """The proposer raised or answered nothing usable."""
    no_ideas: bool = False
    """The proposer answered no actions at all."""


def describe(proposal: ProposedAction) -> str:
    """A proposal as feedback names it: its label, else its action's JSON."""
    if proposal.label:
        return f"action {proposal.label!r}"
    text = json.dumps(proposal.action, default=str)
    return f"action {text[:200]}"


class Expander:
    """Expands nodes of one search's tree (reads the tree, never writes it); ``policy``
    says which new nodes get a rollout."""

    def __init__(self, run: SearchRun, policy: TreePolicy) -> None:
        self.run = run
        self.policy = policy

    def view(self, node: MCTSNode) -> NodeView:
        """What the proposer sees of ``node``: its state, the actions from the root, its
        verdict, the actions already tried and the feedback on them."""
        nodes = self.run.nodes
        actions: list[Any] = []
        at: MCTSNode | None = node
        while at is not None and at.parent is not None:
            actions.append(at.action)
            at = nodes[at.parent]
        return NodeView(
            node_id=str(node.id),
            state=node.state,
            solution=node.solution,
            depth=node.depth,
            actions=actions[::-1],
            observation=node.observation,
            outcome=node.outcome,
            tried=list(node.tried),
            feedback=node.feedback[-MAX_FEEDBACK_ENTRIES:],
            time_left=self.run.time_left(),
        )

    async def expand_into(
        self,
        results: list[Expansion | None],
        j: int,
        node_id: int,
        iteration: int,
        slot: int = 0,
    ) -> None:
        """``results[j] = expand(node_id)`` (set only when the expansion completes)."""
        results[j] = await self.expand(node_id, iteration, slot)

    async def expand(
        self,
        node_id: int,
        iteration: int,
        slot: int = 0,
        on_proposed: Callable[[], None] | None = None,
    ) -> Expansion:
        """Propose and try children of ``node_id``; ``slot`` counts the expansions of
        the same node picked before this one in the batch (each draws its own sample).
        ``on_proposed`` is called once, when the proposer has answered (or failed)."""
        run = self.run
        node = run.nodes[node_id]
        view = self.view(node)
        view.slot = slot
        cfg = run.cfg
        exp = Expansion()
        where: tuple[int, ...] = (node_id,) if slot == 0 else (node_id, slot)
        rng = derive_rng(run.seed, "expand", iteration, *where)
        room = cfg.max_children - len(node.children) - slot * cfg.children_per_expansion
        k = max(1, min(cfg.children_per_expansion, room))
        try:
            raw = await call_limited(
                cfg.call_timeout_s,
                run.proposer_limiter,
                run.proposer.propose,
                run.task,
                view,
                k,
                rng,
            )
        except Exception as exc:
            if on_proposed is not None:
                on_proposed()
            log.warning(
                "task %s node %d: the proposer failed: %s", run.task.id, node_id, short(exc)
            )
            exp.notes.append(f"the proposer failed: {short(exc)}")
            exp.failed = True
            return exp
        if on_proposed is not None:
            on_proposed()
        proposals, problems = coerce_proposals(raw)
        exp.notes += problems + [str(n) for n in getattr(raw, "notes", None) or []]
        if problems:
            log.warning("task %s node %d: %s", run.task.id, node_id, "; ".join(problems)[:500])
        if not proposals:
            exp.failed = bool(problems)
            exp.no_ideas = not problems
            return exp
        tried = {action_key(a) for a in node.tried}
        fresh: list[Child] = []
        for proposal in proposals:
            akey = action_key(proposal.action)
            if akey in tried:
                exp.repeats += 1
                exp.notes.append(f"proposed an action already tried: {describe(proposal)}")
                continue
            tried.add(akey)
            fresh.append(Child(proposal=proposal, akey=akey))
        exp.children = fresh[:k]

        async with anyio.create_task_group() as tg:
            for i, child in enumerate(exp.children):
                tg.start_soon(self._try_child, node, view, child, iteration, i)
        return exp

    async def _try_child(
        self, node: MCTSNode, view: NodeView, child: Child, iteration: int, index: int
    ) -> None:
        run = self.run
        cfg = run.cfg
        action = child.proposal.action
        try:
            tr = await call_limited(
                cfg.call_timeout_s,
                run.env_limiter,
                run.stepper.transition,
                run.task,
                node.state,
                action,
            )
            if not isinstance(tr, Transition):
                tr = Transition.model_validate(tr)
        except Exception as exc:
            child.error = f"{describe(child.proposal)} failed: {short(exc)}"
            log.warning("task %s node %d: %s", run.task.id, node.id, child.error)
            return
        tr = tr.model_copy(update={"observation": cut(tr.observation, cfg.max_observation_chars)})
        child.transition = tr
        child.key = state_key(tr.solution, tr.state, tr.done)
        if child.key == node.key or child.key in run.table:
            child.seen = True
            return
        try:
            child.outcome = await run.verdict(tr.solution, tr.state)
        except Exception as exc:
            child.error = f"verifying {describe(child.proposal)} failed: {short(exc)}"
            log.warning("task %s node %d: %s", run.task.id, node.id, child.error)
            return
        probe = MCTSNode(
            id=-1,
            parent=node.id,
            depth=node.depth + 1,
            solution=tr.solution,
            state=tr.state,
            outcome=child.outcome,
        )
        cand = run.candidate(probe)
        child.estimate = await run.estimate(child.key, cand)
        disc = run.discriminator
        if (
            disc is not None
            and cfg.rollout_depth > 0
            and not child.outcome.success
            and not tr.done
            and node.depth + 1 < cfg.max_depth
            and disc.should_rollout(child.estimate.value, self.policy.rollout_threshold(run.nodes))
        ):
            start = NodeView(
                node_id=f"{node.id}+{index}",
                state=tr.state,
                solution=tr.solution,
                depth=node.depth + 1,
                actions=[*view.actions, action],
                observation=tr.observation,
                outcome=child.outcome,
            )
            depth = min(cfg.rollout_depth, cfg.max_depth - node.depth - 1)
            rng = derive_rng(run.seed, "rollout", iteration, node.id, index)
            child.rollout = await disc.rollout(run.task, start, run.rollout_env, depth, rng)
