"""MCTS integration: an expansion's children into the tree, in selection order (new
nodes, duplicates and failures as feedback on the expanded node, the values
backpropagated, a rollout's path to a finished state grafted); see
:mod:`atlas_actors.search.mcts`."""

from __future__ import annotations

from atlas_actors.search.base import ProposedAction, Transition
from atlas_actors.search.discriminator import RolloutResult
from atlas_actors.search.mcts_expand import Child, Expansion, describe
from atlas_actors.search.mcts_run import SearchRun, cut
from atlas_actors.search.mcts_select import TreePolicy
from atlas_actors.search.tree import MAX_FEEDBACK_ENTRIES, MCTSNode, action_key, state_key


class Integrator:
    """Writes expansions into one search's tree (the only writer of its nodes)."""

    def __init__(self, run: SearchRun) -> None:
        self.run = run

    def integrate(self, node_id: int, exp: Expansion, iteration: int) -> None:
        """The expansion of ``node_id`` made in ``iteration``, into the tree."""
        run = self.run
        node = run.nodes[node_id]
        stats = run.stats
        stats.expansions += 1
        notes = list(exp.notes)
        node.duplicates += exp.repeats
        stats.duplicates += exp.repeats
        if exp.failed:
            stats.failures += 1
        if exp.no_ideas:
            node.exhausted = True
        made = 0
        for child in exp.children:
            node.tried.append(child.proposal.action)
            if child.error is not None:
                stats.failures += 1
                notes.append(child.error)
                continue
            tr = child.transition
            assert tr is not None
            if child.seen or child.key in run.table:
                node.duplicates += 1
                stats.duplicates += 1
                other = run.table.get(child.key, node.id)
                where = "no change" if other == node.id else f"the state of node {other}"
                notes.append(
                    f"{describe(child.proposal)} led to {where}: "
                    f"{cut(tr.observation, 600) or '(no observation)'}"
                )
                continue
            new = self._add(node, child.proposal, child.akey, tr, child, iteration)
            made += 1
            value = new.value
            if child.rollout is not None:
                stats.rollouts += 1
                stats.rollout_steps += len(child.rollout.steps)
                new.rollout_value = child.rollout.value
                value = max(value, child.rollout.value)
            TreePolicy.backpropagate(run.nodes, new.id, value)
            if child.rollout is not None:
                self._graft(new, child.rollout, iteration)
        if made == 0 and not exp.no_ideas:
            node.failures += 1
        node.feedback = (node.feedback + notes)[-MAX_FEEDBACK_ENTRIES:]

    def _add(
        self,
        parent: MCTSNode,
        proposal: ProposedAction,
        akey: str,
        tr: Transition,
        child: Child,
        iteration: int,
        *,
        from_rollout: bool = False,
    ) -> MCTSNode:
        run = self.run
        node = MCTSNode(
            id=len(run.nodes),
            parent=parent.id,
            depth=parent.depth + 1,
            state=tr.state,
            solution=tr.solution,
            key=child.key,
            action=proposal.action,
            action_key=akey,
            label=proposal.label,
            source=proposal.source,
            prior=proposal.prior,
            observation=tr.observation,
            reward=tr.reward,
            done=tr.done,
            outcome=child.outcome,
            estimate=child.estimate,
            from_rollout=from_rollout,
            iteration=iteration,
        )
        run.nodes.append(node)
        run.table[node.key] = node.id
        parent.children.append(node.id)
        return node

    def _graft(self, start: MCTSNode, rollout: RolloutResult, iteration: int) -> None:
        """Keep a rollout's path to a finished state (a success or a submission)."""
        run = self.run
        if not rollout.steps:
            return
        last = rollout.steps[-1]
        if not (last.outcome.success or last.transition.done):
            return
        parent = start
        for step in rollout.steps:
            tr = step.transition.model_copy(
                update={
                    "observation": cut(step.transition.observation, run.cfg.max_observation_chars)
                }
            )
            key = state_key(tr.solution, tr.state, tr.done)
            if key in run.table:
                parent = run.nodes[run.table[key]]
                continue
            parent.tried.append(step.proposal.action)
            info = Child(
                proposal=step.proposal,
                akey=action_key(step.proposal.action),
                transition=tr,
                key=key,
                outcome=run.trim(step.outcome),
                estimate=step.estimate,
            )
            node = self._add(
                parent, step.proposal, info.akey, tr, info, iteration, from_rollout=True
            )
            node.visits = 1
            node.value_sum = node.value
            run.stats.grafted += 1
            parent = node
