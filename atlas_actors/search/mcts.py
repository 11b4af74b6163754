"""SWE-Search: Monte Carlo tree search over environment states, domain-free.

The search (after SWE-Search, Antoniades et al. 2024, and its code, aorwall/moatless-
tree-search) grows a tree whose nodes are environment states (for SWE: the cumulative
patch, so any stateless environment actor can restore one), one action apart. It never
names a domain: an :class:`~atlas_actors.search.base.ActionProposer` proposes actions, a
:class:`~atlas_actors.search.base.Stepper` applies them, an
:class:`~atlas_actors.environments.base.Evaluator` verifies the solution a state stands
for, and a :class:`~atlas_actors.search.discriminator.Discriminator` judges it.

One iteration:

1. **Select** up to ``parallel_expansions`` nodes, one after another, each by a descent
   from the root. At a node the options are its children and, while it may get more
   children, "expand this node again"; the option with the best score is taken::

       UCT:   Q(c) + C·sqrt(ln N(n) / N(c))              − penalties(c)
       PUCT:  Q(c) + C·P(c)·sqrt(N(n)) / (1 + N(c))      − penalties(c)
       again: v(n) + the same exploration with N = 1 (UCT) or 0 (PUCT), prior
              1/(children + 1)                           − penalties(n)

   ``Q`` is the mean backed-up value, ``v(n)`` the node's own estimate (so a child
   worse than its parent sends the search back to the parent for another action: it
   backs off a wrong branch), ``P`` the proposer's priors normalised among siblings.
   Values are in [0, 1], so ``C`` (``ucb_constant``) means what it says; SWE-Search's
   rewards in [-100, 100] against an exploration term of about 1 made its selector
   best-first. The penalties are SWE-Search's, scaled to [0, 1]: ``depth_penalty ·
   sqrt(depth)`` of the node the option leads to (going deeper must pay for itself),
   ``duplicate_penalty · d²`` for a node whose expansions reached ``d`` already-seen
   states, and ``repeat_penalty`` for a node whose action repeats its parent's.
   After each pick, a **virtual loss** (``virtual_loss`` visits of value 0) is put on
   the picked node and its ancestors, so the next descent prefers other branches. A node
   may be picked again in the same batch while it has room for more children than its
   pending expansions ask for (``max_children``), so a young tree (a root and a child)
   still fills a batch; each repeat is told its ``slot`` (``NodeView.slot``) and draws
   its own sample, so it proposes something else.
2. **Expand** the selected nodes concurrently: the proposer gives
   ``children_per_expansion`` actions not in the node's ``tried`` list; each is applied
   by the stepper from the node's state. A transition to a state already in the tree
   (the **seen-state table**, keyed by the canonical JSON of the solution, or of the
   state when there is none, across the whole tree: SWE-Search compared siblings only)
   adds no node and counts as a duplicate; a rejected action (state unchanged) does
   the same, and what the environment said becomes feedback the proposer sees next.
3. **Evaluate** each new solution (once per distinct solution: a child whose solution
   equals its parent's reuses its verdict), **estimate** its value with the
   discriminator (without one: the verifier's partial score), and **roll out** where
   ``Discriminator.should_rollout`` says so; a resolving or finished state a rollout
   reaches is grafted into the tree, never lost.
4. **Integrate** the expansions in selection order (never completion order), remove the
   virtual losses and **backpropagate** each new node's value (the best of its estimate
   and its rollout) to the root.

It stops on a node whose verdict succeeds (``stop_on_success``), or when the
expansions, the time or the LLM cost run out, or when no node can be expanded. The
answer is the discriminator's pick among the *finished* nodes (succeeded, or submitted:
a ``done`` transition); without any, the node best by value and partial score.

**Determinism**: every proposer and rollout call gets its own ``random.Random`` from
``(seed, iteration, node, slot)``; selection is a pure function of the tree; concurrent
results are integrated in selection order; verdicts and estimates are computed once per
distinct solution. So the same seed, configuration and a deterministic proposer give
the same tree whatever the timing of the concurrent calls (a time limit is the one
thing that can cut a run at a different point).

**Persistence**: with ``tree_path`` the tree (:class:`SearchTree`: nodes, the verdicts of
solutions seen outside the tree, counters) is written as JSON after every iteration,
atomically (a temporary file, then ``os.replace``); a search given an existing file
resumes from it and makes the choices an uninterrupted run would have made.

**Where each part lives**: this module runs the iterations and picks the answer;
:mod:`~atlas_actors.search.mcts_select` selects (the scores, virtual loss,
backpropagation), :mod:`~atlas_actors.search.mcts_expand` expands,
:mod:`~atlas_actors.search.mcts_integrate` integrates,
:mod:`~atlas_actors.search.mcts_persist` saves and resumes, and
:mod:`~atlas_actors.search.mcts_run` holds the state they share (the tree, the verdicts
and estimates, the budgets); :mod:`~atlas_actors.search.tree` is the tree's data.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from atlas_actors.config import SWESearchConfig
from atlas_actors.environments.base import Evaluator
from atlas_actors.search.base import ActionProposer, Stepper
from atlas_actors.search.discriminator import Discriminator, solution_size
from atlas_actors.search.mcts_expand import Expander, Expansion
from atlas_actors.search.mcts_integrate import Integrator
from atlas_actors.search.mcts_persist import TreeFile
from atlas_actors.search.mcts_run import SearchRun, cut
from atlas_actors.search.mcts_select import Option, TreePolicy
from atlas_actors.search.tree import (
    MCTSNode,
    MCTSResult,
    MCTSStats,
    SearchTree,
    StopReason,
    action_key,
    state_key,
)
from atlas_actors.types import Task

log = logging.getLogger(__name__)

__all__ = [
    "MCTSNode",
    "MCTSResult",
    "MCTSStats",
    "Option",
    "SWESearch",
    "SearchTree",
    "StopReason",
    "TreePolicy",
    "action_key",
    "state_key",
]


@dataclass
class _Run:
    """One ``search`` call: its state and the parts that select, expand, integrate and
    save."""

    state: SearchRun
    policy: TreePolicy
    expander: Expander
    integrator: Integrator
    file: TreeFile


class SWESearch:
    """MCTS over any environment a stepper can drive (see module docs).

    Args:
        proposer: proposes child actions for a node (an LLM, the offline repair
            operators, a scripted fake in tests).
        stepper: applies an action to a state, statelessly (any environment actor can
            serve any node).
        evaluator: verifies the solution a state stands for (what the search may see).
        discriminator: judges nodes, runs rollouts and picks the final answer; None
            (or ``use_discriminator=False``): values are the verifier's partial score,
            no rollouts, the answer is the best finished node by value.
        config: the paper's settings and the budgets.
        progress: called after every iteration with the task id and the counters so
            far (for progress displays; it must not block).
    """

    def __init__(
        self,
        proposer: ActionProposer,
        stepper: Stepper,
        evaluator: Evaluator,
        discriminator: Discriminator | None = None,
        config: SWESearchConfig | None = None,
        *,
        progress: Callable[[str, MCTSStats], object] | None = None,
    ) -> None:
        self.proposer = proposer
        self.stepper = stepper
        self.evaluator = evaluator
        self.config = config or SWESearchConfig()
        self.discriminator = discriminator if self.config.use_discriminator else None
        self.progress = progress

    async def search(
        self, task: Task, *, seed: int = 0, tree_path: str | os.PathLike[str] | None = None
    ) -> MCTSResult:
        """Search ``task``; with ``tree_path``, persist the tree there after every
        iteration and resume from it when it exists."""
        state = SearchRun(
            proposer=self.proposer,
            stepper=self.stepper,
            evaluator=self.evaluator,
            discriminator=self.discriminator,
            config=self.config,
            task=task,
            seed=seed,
        )
        policy = TreePolicy(self.config)
        run = _Run(
            state=state,
            policy=policy,
            expander=Expander(state, policy),
            integrator=Integrator(state),
            file=TreeFile(Path(tree_path) if tree_path is not None else None),
        )
        await run.file.start(state)
        cfg = self.config
        if cfg.pipeline:
            return await self._finish(run, await self._pipelined(run))
        stopped: StopReason | None = None
        while True:
            stopped = state.stop_reason()
            if stopped is not None:
                break
            want = min(cfg.parallel_expansions, cfg.max_expansions - state.stats.expansions)
            batch = run.policy.select_batch(state.nodes, want)
            if not batch:
                stopped = "exhausted"
                break
            iteration = state.stats.iterations
            results: list[Expansion | None] = [None] * len(batch)

            with anyio.move_on_after(state.time_left()) as scope:
                async with anyio.create_task_group() as tg:
                    slots = TreePolicy.slots(batch)
                    for j, (node_id, slot) in enumerate(zip(batch, slots, strict=True)):
                        tg.start_soon(
                            run.expander.expand_into, results, j, node_id, iteration, slot
                        )
            run.policy.clear()
            for node_id, result in zip(batch, results, strict=True):
                if result is not None:
                    run.integrator.integrate(node_id, result, iteration)
            await self._iteration_done(run)
            log.debug(
                "task %s iteration %d: %d nodes, %d expansions, %d test runs",
                task.id,
                iteration,
                len(state.nodes),
                state.stats.expansions,
                state.stats.evaluations,
            )
            if scope.cancelled_caught:
                stopped = "time"
                break
        return await self._finish(run, stopped)

    async def _iteration_done(self, run: _Run) -> None:
        """Count an integrated iteration, save the tree and report progress."""
        state = run.state
        state.stats.iterations += 1
        await run.file.save(state)
        if self.progress is not None:
            self.progress(state.task.id, state.stats.model_copy())

    async def _pipelined(self, run: _Run) -> StopReason:
        """The search with ``pipeline``: ``parallel_expansions`` proposer calls always
        running. An expansion gives its proposer slot back as soon as its proposals
        arrive, so the next node is selected and proposed for while the children are
        still being tried and verified; up to ``parallel_expansions`` more expansions may
        wait on the environment that way. Each expansion is integrated as it ends (in
        completion order) and counts as an iteration."""
        cfg = self.config
        policy = run.policy
        state = run.state
        # expansions past their proposal stage may wait on the environment, as many again
        limit = 2 * cfg.parallel_expansions
        send, receive = anyio.create_memory_object_stream[tuple[int, int, Expansion | None]](
            max_buffer_size=2 * limit
        )
        running = 0  # expansions started and not yet integrated
        proposing = 0  # of which still waiting for their proposals
        picks = state.stats.iterations  # numbers the picks (their RNGs), resumed or not

        async def expand(pick: int, node_id: int, slot: int) -> None:
            def proposed() -> None:
                send.send_nowait((pick, node_id, None))

            exp = await run.expander.expand(node_id, pick, slot, on_proposed=proposed)
            await send.send((pick, node_id, exp))

        stopped: StopReason | None = None
        with anyio.move_on_after(state.time_left()) as scope:
            async with anyio.create_task_group() as tg:
                while True:
                    stopped = state.stop_reason()
                    if stopped is not None:
                        break
                    room = cfg.max_expansions - state.stats.expansions - running
                    while proposing < cfg.parallel_expansions and running < min(limit, room):
                        node_id = policy.select(state.nodes)
                        if node_id is None:
                            break
                        slot = policy.pending.get(node_id, 0)
                        policy.add_virtual_loss(state.nodes, node_id)
                        tg.start_soon(expand, picks, node_id, slot)
                        picks += 1
                        running += 1
                        proposing += 1
                    if running == 0:
                        stopped = "exhausted"
                        break
                    pick, node_id, exp = await receive.receive()
                    if exp is None:  # its proposals arrived: a proposer slot is free
                        proposing -= 1
                        continue
                    running -= 1
                    policy.remove_virtual_loss(state.nodes, node_id)
                    run.integrator.integrate(node_id, exp, pick)
                    await self._iteration_done(run)
                tg.cancel_scope.cancel()  # expansions still running are not integrated
        policy.clear()
        if scope.cancelled_caught:
            return "time"
        return stopped or "exhausted"

    async def _finish(self, run: _Run, stopped: StopReason) -> MCTSResult:
        """The answer: the discriminator's pick among the finished nodes (without one,
        the best by value); the tree saved with it."""
        state = run.state
        finished = [n for n in state.nodes if n.finished]
        candidates = [state.candidate(n) for n in finished]
        best_node: MCTSNode | None = None
        disc = self.discriminator
        if finished and disc is not None:
            pick = await disc.select_final(state.task, candidates, [n.estimate for n in finished])
            best_node = finished[candidates.index(pick)]
        elif finished:
            best_node = max(finished, key=_rank)
        else:
            judged = [n for n in state.nodes if n.outcome is not None]
            best_node = max(judged, key=_rank) if judged else None
        state.tree.stopped = stopped
        state.tree.final = best_node.id if best_node is not None else None
        await run.file.save(state)
        return MCTSResult(
            task_id=state.task.id,
            best=state.candidate(best_node) if best_node is not None else None,
            best_node=best_node.id if best_node is not None else None,
            finished=candidates,
            stopped=stopped,
            why=stop_detail(stopped, state.stats, state.nodes),
            stats=state.stats.model_copy(),
            tree=state.tree,
        )


def stop_detail(stopped: StopReason, stats: MCTSStats, nodes: Sequence[MCTSNode]) -> str:
    """Why a search stopped, in words: the reason, the tree's size, and the three notes
    its nodes gathered most often (each cut to 300 characters); empty on success."""
    if stopped == "success":
        return ""
    head = (
        f"{stopped}: {stats.expansions} expansions ({stats.failures} failed), "
        f"{len(nodes)} nodes, {stats.evaluations} test runs"
    )
    counts = Counter(note for n in nodes for note in n.feedback)
    common = [cut(note, 300) for note, _ in counts.most_common(3)]
    return "; ".join([head, *common])


def _rank(node: MCTSNode) -> tuple[bool, float, float, int, int]:
    partial = node.outcome.partial_score if node.outcome is not None else 0.0
    return (
        node.succeeded,
        node.value,
        partial,
        -solution_size(node.solution, node.outcome),
        -node.id,
    )
