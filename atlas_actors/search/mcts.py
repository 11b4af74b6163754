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
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
import anyio.to_thread
from pydantic import ValidationError

from atlas_actors.config import SWESearchConfig
from atlas_actors.environments.base import Evaluator
from atlas_actors.errors import ConfigError
from atlas_actors.search.base import (
    ActionProposer,
    NodeView,
    ProposedAction,
    Stepper,
    Transition,
    ValueEstimate,
    coerce_proposals,
)
from atlas_actors.search.discriminator import (
    Discriminator,
    RolloutEnv,
    RolloutResult,
    call_limited,
    evidence_estimate,
    solution_size,
)
from atlas_actors.search.mind_evolution import derive_rng
from atlas_actors.search.tree import (
    MAX_FEEDBACK_ENTRIES,
    MCTSNode,
    MCTSResult,
    MCTSStats,
    Option,
    SearchTree,
    StopReason,
    TreePolicy,
    action_key,
    state_key,
    verdict_key,
)
from atlas_actors.types import Candidate, Outcome, Task

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

T = TypeVar("T")


class _Once(Generic[T]):
    """Values by key, each computed once even when asked for concurrently."""

    def __init__(self) -> None:
        self.done: dict[str, T] = {}
        self._pending: dict[str, anyio.Event] = {}

    async def get(self, key: str, compute: Callable[[], Awaitable[T]]) -> T:
        while key not in self.done:
            event = self._pending.get(key)
            if event is None:
                event = anyio.Event()
                self._pending[key] = event
                try:
                    self.done[key] = await compute()
                finally:
                    del self._pending[key]
                    event.set()
            else:
                await event.wait()  # if that computation failed, the loop tries again
        return self.done[key]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 12] + "\n... (cut)"


def _short(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:500]


def _usage_of(obj: object, task_id: str) -> Any:
    per_task = getattr(obj, "usage_for", None)
    if callable(per_task):
        return per_task(task_id)
    return getattr(obj, "usage", None)


@dataclass
class _Child:
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
class _Expansion:
    """The result of expanding one node (computed concurrently, integrated in order)."""

    children: list[_Child] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Feedback for the node (proposer errors, garbage, repeated actions)."""
    repeats: int = 0
    failed: bool = False
    """The proposer raised or answered nothing usable."""
    no_ideas: bool = False
    """The proposer answered no actions at all."""


class _Evaluations:
    """The search's evaluator: one verdict per distinct solution, counted, trimmed."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        out: list[Outcome] = []
        for solution in solutions:
            if solution is None:  # a state-only domain: no key to share a verdict by
                self.run.stats.evaluations += 1
                raw = await call_limited(
                    None, self.run.env_limiter, self.run.search.evaluator.evaluate, task, [solution]
                )
                out.append(self.run._trim(raw[0]))
            else:
                out.append(await self.run.verdict(solution, {}))
        return out


# ----------------------------------------------------------------------- the search


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
        run = _Run(self, task, seed, Path(tree_path) if tree_path is not None else None)
        await run.start()
        cfg = self.config
        if cfg.pipeline:
            return await run.finish(await self._pipelined(run))
        stopped: StopReason | None = None
        while True:
            stopped = run.stop_reason()
            if stopped is not None:
                break
            want = min(cfg.parallel_expansions, cfg.max_expansions - run.stats.expansions)
            batch = run.policy.select_batch(run.nodes, want)
            if not batch:
                stopped = "exhausted"
                break
            iteration = run.stats.iterations
            results: list[_Expansion | None] = [None] * len(batch)

            with anyio.move_on_after(run.time_left()) as scope:
                async with anyio.create_task_group() as tg:
                    slots = TreePolicy.slots(batch)
                    for j, (node_id, slot) in enumerate(zip(batch, slots, strict=True)):
                        tg.start_soon(run.expand_into, results, j, node_id, iteration, slot)
            run.policy.clear()
            for node_id, result in zip(batch, results, strict=True):
                if result is not None:
                    run.integrate(node_id, result, iteration)
            await self._iteration_done(run)
            log.debug(
                "task %s iteration %d: %d nodes, %d expansions, %d test runs",
                task.id,
                iteration,
                len(run.nodes),
                run.stats.expansions,
                run.stats.evaluations,
            )
            if scope.cancelled_caught:
                stopped = "time"
                break
        return await run.finish(stopped)

    async def _iteration_done(self, run: _Run) -> None:
        """Count an integrated iteration, save the tree and report progress."""
        run.stats.iterations += 1
        await run.save()
        if self.progress is not None:
            self.progress(run.task.id, run.stats.model_copy())

    async def _pipelined(self, run: _Run) -> StopReason:
        """The search with ``pipeline``: ``parallel_expansions`` proposer calls always
        running. An expansion gives its proposer slot back as soon as its proposals
        arrive, so the next node is selected and proposed for while the children are
        still being tried and verified; up to ``parallel_expansions`` more expansions may
        wait on the environment that way. Each expansion is integrated as it ends (in
        completion order) and counts as an iteration."""
        cfg = self.config
        policy = run.policy
        # expansions past their proposal stage may wait on the environment, as many again
        limit = 2 * cfg.parallel_expansions
        send, receive = anyio.create_memory_object_stream[tuple[int, int, _Expansion | None]](
            max_buffer_size=2 * limit
        )
        running = 0  # expansions started and not yet integrated
        proposing = 0  # of which still waiting for their proposals
        picks = run.stats.iterations  # numbers the picks (their RNGs), resumed or not

        async def expand(pick: int, node_id: int, slot: int) -> None:
            def proposed() -> None:
                send.send_nowait((pick, node_id, None))

            exp = await run.expand(node_id, pick, slot, on_proposed=proposed)
            await send.send((pick, node_id, exp))

        stopped: StopReason | None = None
        with anyio.move_on_after(run.time_left()) as scope:
            async with anyio.create_task_group() as tg:
                while True:
                    stopped = run.stop_reason()
                    if stopped is not None:
                        break
                    room = cfg.max_expansions - run.stats.expansions - running
                    while proposing < cfg.parallel_expansions and running < min(limit, room):
                        node_id = policy.select(run.nodes)
                        if node_id is None:
                            break
                        slot = policy.pending.get(node_id, 0)
                        policy.add_virtual_loss(run.nodes, node_id)
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
                    policy.remove_virtual_loss(run.nodes, node_id)
                    run.integrate(node_id, exp, pick)
                    await self._iteration_done(run)
                tg.cancel_scope.cancel()  # expansions still running are not integrated
        policy.clear()
        if scope.cancelled_caught:
            return "time"
        return stopped or "exhausted"


class _Run:
    """The state of one ``search`` call."""

    def __init__(self, search: SWESearch, task: Task, seed: int, path: Path | None) -> None:
        self.search = search
        self.cfg = search.config
        self.task = task
        self.seed = seed
        self.path = path
        self.policy = TreePolicy(self.cfg)
        self.tree = SearchTree(task_id=task.id, seed=seed, config=self.cfg.model_dump(mode="json"))
        self.table: dict[str, int] = {}
        self.verdicts: _Once[Outcome] = _Once()
        self.estimates: _Once[ValueEstimate] = _Once()
        self.started = time.monotonic()
        self.deadline = (
            self.started + self.cfg.time_limit_s if self.cfg.time_limit_s is not None else None
        )
        self.prior_seconds = 0.0
        self.prior_calls = 0
        self.prior_cost = 0.0
        self.usage_base: tuple[int, float] = (0, 0.0)
        self.env_limiter = (
            anyio.CapacityLimiter(self.cfg.concurrency) if self.cfg.concurrency else None
        )
        calls = getattr(search.proposer, "max_concurrent_calls", None)
        self.proposer_limiter = (
            anyio.CapacityLimiter(calls) if isinstance(calls, int) and calls > 0 else None
        )
        self.rollout_env = RolloutEnv(
            stepper=search.stepper,
            evaluator=_Evaluations(self),
            proposer=search.proposer,
            call_timeout_s=self.cfg.call_timeout_s,
            limiter=self.env_limiter,
        )

    @property
    def nodes(self) -> list[MCTSNode]:
        return self.tree.nodes

    @property
    def stats(self) -> MCTSStats:
        return self.tree.stats

    # -- start, resume, save --------------------------------------------------------------

    async def start(self) -> None:
        self.usage_base = self._usage_now()
        if self.path is not None and self.path.exists():
            self._load(await anyio.to_thread.run_sync(self.path.read_text))
            return
        root_tr = Transition.model_validate(await self.search.stepper.root(self.task))
        outcome = await self.verdict(root_tr.solution, root_tr.state)
        key = state_key(root_tr.solution, root_tr.state)
        root = MCTSNode(
            id=0,
            state=root_tr.state,
            solution=root_tr.solution,
            key=key,
            observation=_cut(root_tr.observation, self.cfg.max_observation_chars),
            done=root_tr.done,
            outcome=outcome,
        )
        root.estimate = await self.estimate(key, self._candidate(root))
        self.nodes.append(root)
        self.table[key] = 0
        TreePolicy.backpropagate(self.nodes, 0, root.value)
        await self.save()

    def _load(self, text: str) -> None:
        try:
            tree = SearchTree.model_validate_json(text)
        except ValidationError as exc:
            raise ConfigError(f"tree_path {self.path}: not a search tree ({exc})") from None
        if tree.task_id != self.task.id:
            raise ConfigError(
                f"tree_path {self.path}: the tree is for task {tree.task_id!r}, "
                f"not {self.task.id!r}"
            )
        if tree.seed != self.seed:
            raise ConfigError(
                f"tree_path {self.path}: the tree was grown with seed {tree.seed}, "
                f"not {self.seed}; resume with the same seed"
            )
        if not tree.nodes:
            raise ConfigError(f"tree_path {self.path}: the tree has no root")
        tree.config = self.cfg.model_dump(mode="json")
        tree.stopped = None
        tree.final = None
        self.tree = tree
        self.prior_seconds = tree.stats.seconds
        self.prior_calls = tree.stats.llm_calls
        self.prior_cost = tree.stats.llm_cost
        for node in tree.nodes:
            self.table.setdefault(node.key, node.id)
            if node.outcome is not None:
                self.verdicts.done.setdefault(verdict_key(node.solution, node.state), node.outcome)
            if node.estimate is not None:
                self.estimates.done.setdefault(node.key, node.estimate)
        self.verdicts.done.update(tree.outcomes)

    async def save(self) -> None:
        self._update_usage()
        self.stats.nodes = len(self.nodes)
        self.stats.seconds = self.prior_seconds + (time.monotonic() - self.started)
        if self.path is None:
            return
        in_tree = {verdict_key(n.solution, n.state) for n in self.nodes}
        self.tree.outcomes = {k: o for k, o in self.verdicts.done.items() if k not in in_tree}
        text = self.tree.model_dump_json()
        await anyio.to_thread.run_sync(_write_atomic, self.path, text)

    # -- budgets ------------------------------------------------------------------------------

    def _usage_now(self) -> tuple[int, float]:
        seen: set[int] = set()
        calls, cost = 0, 0.0
        for obj in (self.search.proposer, self.search.discriminator):
            usage = _usage_of(obj, self.task.id) if obj is not None else None
            if usage is None or id(usage) in seen:
                continue
            seen.add(id(usage))
            calls += int(getattr(usage, "calls", 0) or 0)
            cost += float(getattr(usage, "cost", 0.0) or 0.0)
        return calls, cost

    def _update_usage(self) -> None:
        calls, cost = self._usage_now()
        self.stats.llm_calls = self.prior_calls + calls - self.usage_base[0]
        self.stats.llm_cost = self.prior_cost + cost - self.usage_base[1]

    def time_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def stop_reason(self) -> StopReason | None:
        cfg = self.cfg
        if cfg.stop_on_success and any(n.succeeded for n in self.nodes):
            return "success"
        if self.stats.expansions >= cfg.max_expansions:
            return "expansions"
        if cfg.max_cost is not None:
            self._update_usage()
            if self.stats.llm_cost >= cfg.max_cost:
                return "cost"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time"
        return None

    # -- verdicts and values ------------------------------------------------------------------

    async def verdict(self, solution: Any, state: dict[str, Any]) -> Outcome:
        """The evaluator's verdict on ``solution``, once per distinct solution."""

        async def compute() -> Outcome:
            self.stats.evaluations += 1
            outcomes = await call_limited(
                self.cfg.call_timeout_s,
                self.env_limiter,
                self.search.evaluator.evaluate,
                self.task,
                [solution],
            )
            return self._trim(outcomes[0])

        return await self.verdicts.get(verdict_key(solution, state), compute)

    def _trim(self, outcome: Outcome) -> Outcome:
        """The verdict as the search keeps it: feedback cut, no details."""
        return outcome.model_copy(
            update={
                "feedback": _cut(outcome.feedback, self.cfg.max_observation_chars),
                "details": {},
            }
        )

    async def estimate(self, key: str, candidate: Candidate) -> ValueEstimate:
        """The value estimate of a candidate, once per distinct state."""
        disc = self.search.discriminator

        async def compute() -> ValueEstimate:
            if disc is None:
                outcome = candidate.outcome
                value = (
                    0.0 if outcome is None else (1.0 if outcome.success else outcome.partial_score)
                )
                return ValueEstimate(
                    value=value, explanation="the verifier's partial score", source="partial_score"
                )
            found: list[ValueEstimate] = []
            with anyio.move_on_after(self.cfg.call_timeout_s):
                found.append(await disc.assess(self.task, candidate))
            return (
                found[0] if found else evidence_estimate(candidate, "the discriminator timed out")
            )

        return await self.estimates.get(key, compute)

    def _candidate(self, node: MCTSNode) -> Candidate:
        outcome = node.outcome
        return Candidate(
            id=f"{self.task.id}#n{node.id}",
            solution=node.solution,
            outcome=outcome,
            fitness=outcome.partial_score if outcome is not None else 0.0,
            origin="init" if node.parent is None else "mutation",
            parents=[] if node.parent is None else [f"{self.task.id}#n{node.parent}"],
            generation=node.depth,
        )

    def view(self, node: MCTSNode) -> NodeView:
        actions: list[Any] = []
        at: MCTSNode | None = node
        while at is not None and at.parent is not None:
            actions.append(at.action)
            at = self.nodes[at.parent]
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
        )

    # -- one expansion (concurrent; reads the tree, never writes it) ----------------------------

    async def expand_into(
        self,
        results: list[_Expansion | None],
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
    ) -> _Expansion:
        """Propose and try children of ``node_id``; ``slot`` counts the expansions of
        the same node picked before this one in the batch (each draws its own sample).
        ``on_proposed`` is called once, when the proposer has answered (or failed)."""
        node = self.nodes[node_id]
        view = self.view(node)
        view.slot = slot
        cfg = self.cfg
        exp = _Expansion()
        where: tuple[int, ...] = (node_id,) if slot == 0 else (node_id, slot)
        rng = derive_rng(self.seed, "expand", iteration, *where)
        room = cfg.max_children - len(node.children) - slot * cfg.children_per_expansion
        k = max(1, min(cfg.children_per_expansion, room))
        try:
            raw = await call_limited(
                cfg.call_timeout_s,
                self.proposer_limiter,
                self.search.proposer.propose,
                self.task,
                view,
                k,
                rng,
            )
        except Exception as exc:
            if on_proposed is not None:
                on_proposed()
            log.warning(
                "task %s node %d: the proposer failed: %s", self.task.id, node_id, _short(exc)
            )
            exp.notes.append(f"the proposer failed: {_short(exc)}")
            exp.failed = True
            return exp
        if on_proposed is not None:
            on_proposed()
        proposals, problems = coerce_proposals(raw)
        exp.notes += problems
        if problems:
            log.warning("task %s node %d: %s", self.task.id, node_id, "; ".join(problems)[:500])
        if not proposals:
            exp.failed = bool(problems)
            exp.no_ideas = not problems
            return exp
        tried = {action_key(a) for a in node.tried}
        fresh: list[_Child] = []
        for proposal in proposals:
            akey = action_key(proposal.action)
            if akey in tried:
                exp.repeats += 1
                exp.notes.append(f"proposed an action already tried: {_describe(proposal)}")
                continue
            tried.add(akey)
            fresh.append(_Child(proposal=proposal, akey=akey))
        exp.children = fresh[:k]

        async with anyio.create_task_group() as tg:
            for i, child in enumerate(exp.children):
                tg.start_soon(self._try_child, node, view, child, iteration, i)
        return exp

    async def _try_child(
        self, node: MCTSNode, view: NodeView, child: _Child, iteration: int, index: int
    ) -> None:
        cfg = self.cfg
        search = self.search
        action = child.proposal.action
        try:
            tr = await call_limited(
                cfg.call_timeout_s,
                self.env_limiter,
                search.stepper.transition,
                self.task,
                node.state,
                action,
            )
            if not isinstance(tr, Transition):
                tr = Transition.model_validate(tr)
        except Exception as exc:
            child.error = f"{_describe(child.proposal)} failed: {_short(exc)}"
            log.warning("task %s node %d: %s", self.task.id, node.id, child.error)
            return
        tr = tr.model_copy(update={"observation": _cut(tr.observation, cfg.max_observation_chars)})
        child.transition = tr
        child.key = state_key(tr.solution, tr.state, tr.done)
        if child.key == node.key or child.key in self.table:
            child.seen = True
            return
        try:
            child.outcome = await self.verdict(tr.solution, tr.state)
        except Exception as exc:
            child.error = f"verifying {_describe(child.proposal)} failed: {_short(exc)}"
            log.warning("task %s node %d: %s", self.task.id, node.id, child.error)
            return
        probe = MCTSNode(
            id=-1,
            parent=node.id,
            depth=node.depth + 1,
            solution=tr.solution,
            state=tr.state,
            outcome=child.outcome,
        )
        cand = self._candidate(probe)
        child.estimate = await self.estimate(child.key, cand)
        disc = search.discriminator
        if (
            disc is not None
            and cfg.rollout_depth > 0
            and not child.outcome.success
            and not tr.done
            and node.depth + 1 < cfg.max_depth
            and disc.should_rollout(child.estimate.value, self.policy.rollout_threshold(self.nodes))
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
            rng = derive_rng(self.seed, "rollout", iteration, node.id, index)
            child.rollout = await disc.rollout(self.task, start, self.rollout_env, depth, rng)

    # -- integration (in selection order) ----------------------------------------------------------

    def integrate(self, node_id: int, exp: _Expansion, iteration: int) -> None:
        node = self.nodes[node_id]
        stats = self.stats
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
            if child.seen or child.key in self.table:
                node.duplicates += 1
                stats.duplicates += 1
                other = self.table.get(child.key, node.id)
                where = "no change" if other == node.id else f"the state of node {other}"
                notes.append(
                    f"{_describe(child.proposal)} led to {where}: "
                    f"{_cut(tr.observation, 600) or '(no observation)'}"
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
            TreePolicy.backpropagate(self.nodes, new.id, value)
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
        child: _Child,
        iteration: int,
        *,
        from_rollout: bool = False,
    ) -> MCTSNode:
        node = MCTSNode(
            id=len(self.nodes),
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
        self.nodes.append(node)
        self.table[node.key] = node.id
        parent.children.append(node.id)
        return node

    def _graft(self, start: MCTSNode, rollout: RolloutResult, iteration: int) -> None:
        """Keep a rollout's path to a finished state (a success or a submission)."""
        if not rollout.steps:
            return
        last = rollout.steps[-1]
        if not (last.outcome.success or last.transition.done):
            return
        parent = start
        for step in rollout.steps:
            tr = step.transition.model_copy(
                update={
                    "observation": _cut(step.transition.observation, self.cfg.max_observation_chars)
                }
            )
            key = state_key(tr.solution, tr.state, tr.done)
            if key in self.table:
                parent = self.nodes[self.table[key]]
                continue
            parent.tried.append(step.proposal.action)
            info = _Child(
                proposal=step.proposal,
                akey=action_key(step.proposal.action),
                transition=tr,
                key=key,
                outcome=self._trim(step.outcome),
                estimate=step.estimate,
            )
            node = self._add(
                parent, step.proposal, info.akey, tr, info, iteration, from_rollout=True
            )
            node.visits = 1
            node.value_sum = node.value
            self.stats.grafted += 1
            parent = node

    # -- the answer ----------------------------------------------------------------------------

    async def finish(self, stopped: StopReason) -> MCTSResult:
        finished = [n for n in self.nodes if n.finished]
        candidates = [self._candidate(n) for n in finished]
        best_node: MCTSNode | None = None
        disc = self.search.discriminator
        if finished and disc is not None:
            pick = await disc.select_final(self.task, candidates, [n.estimate for n in finished])
            best_node = finished[candidates.index(pick)]
        elif finished:
            best_node = max(finished, key=_rank)
        else:
            judged = [n for n in self.nodes if n.outcome is not None]
            best_node = max(judged, key=_rank) if judged else None
        self.tree.stopped = stopped
        self.tree.final = best_node.id if best_node is not None else None
        await self.save()
        return MCTSResult(
            task_id=self.task.id,
            best=self._candidate(best_node) if best_node is not None else None,
            best_node=best_node.id if best_node is not None else None,
            finished=candidates,
            stopped=stopped,
            stats=self.stats.model_copy(),
            tree=self.tree,
        )


def _rank(node: MCTSNode) -> tuple[bool, float, float, int, int]:
    partial = node.outcome.partial_score if node.outcome is not None else 0.0
    return (node.succeeded, node.value, partial, -solution_size(node.solution), -node.id)


def _describe(proposal: ProposedAction) -> str:
    if proposal.label:
        return f"action {proposal.label!r}"
    text = json.dumps(proposal.action, default=str)
    return f"action {text[:200]}"


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file, then ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
