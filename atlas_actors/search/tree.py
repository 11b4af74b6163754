"""The MCTS tree and its policy: nodes, the keys that de-duplicate states, the counters,
the JSON form a search is saved in, and the selection with virtual loss and
backpropagation (see :mod:`atlas_actors.search.mcts` for the algorithm)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.config import SWESearchConfig
from atlas_actors.search.base import ValueEstimate
from atlas_actors.search.mind_evolution import solution_key
from atlas_actors.types import Candidate, Outcome

StopReason = Literal["success", "expansions", "time", "cost", "exhausted"]
TREE_VERSION = 1
MAX_FEEDBACK_ENTRIES = 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------- keys


def state_key(solution: Any, state: dict[str, Any], done: bool = False) -> str:
    """The seen-state table's key: the solution's canonical JSON (the state's when there
    is no solution), marked when the transition finished the episode (a submitted
    patch is a different node from the same patch not yet submitted)."""
    base = solution_key(solution) if solution is not None else "s" + solution_key(state)
    return base + (":done" if done else "")


def verdict_key(solution: Any, state: dict[str, Any]) -> str:
    """What a verdict depends on: the solution (or the state when there is none)."""
    return state_key(solution, state)


def action_key(action: Any) -> str:
    """A canonical key for an action (to recognise repeated and already-tried ones)."""
    return solution_key(action)


# ---------------------------------------------------------------------------- tree


class MCTSNode(_Model):
    """One node of the search tree (a state, the action that led there, its value)."""

    id: int
    parent: int | None = None
    children: list[int] = Field(default_factory=list)
    depth: int = 0
    state: dict[str, Any] = Field(default_factory=dict)
    """The environment state, restorable by the stepper (SWE: the cumulative patch)."""
    solution: Any = None
    """The solution the state stands for (what the evaluator verifies)."""
    key: str = ""
    """The seen-state table's key (:func:`state_key`)."""
    action: Any = None
    """The action that led here from the parent (None at the root)."""
    action_key: str | None = None
    label: str = ""
    source: str = ""
    prior: float = 1.0
    """The proposer's prior for the action (normalised among siblings when selecting)."""
    observation: str = ""
    """What the environment answered to the action (truncated)."""
    reward: float = 0.0
    """The transition's own reward (kept, not used for the value)."""
    done: bool = False
    """The transition ended the episode (submitted): a finished node, not expanded."""
    outcome: Outcome | None = None
    """The verifier's verdict on ``solution`` (feedback truncated, no details)."""
    estimate: ValueEstimate | None = None
    """The value estimate (discriminator, or the partial score)."""
    rollout_value: float | None = None
    """The best value a rollout from here reached, when one ran."""
    from_rollout: bool = False
    """Grafted from a rollout's trajectory (a finished state it reached)."""
    visits: int = 0
    value_sum: float = 0.0
    tried: list[Any] = Field(default_factory=list)
    """Actions expanded from here (made a child or not): the proposer is told."""
    duplicates: int = 0
    """Actions from here that reached an already-seen state (or repeated a tried one)."""
    failures: int = 0
    """Expansions from here that made no child (see ``max_failures_per_node``)."""
    exhausted: bool = False
    """The proposer had no more actions for this node."""
    feedback: list[str] = Field(default_factory=list)
    """Why actions from here made no child (newest last; shown to the proposer)."""
    iteration: int = 0
    """The iteration that created the node."""

    @property
    def value(self) -> float:
        """The node's own value estimate (0 before it has one)."""
        return self.estimate.value if self.estimate is not None else 0.0

    @property
    def q(self) -> float:
        """Mean backed-up value."""
        return self.value_sum / self.visits if self.visits else 0.0

    @property
    def succeeded(self) -> bool:
        return self.outcome is not None and self.outcome.success

    @property
    def finished(self) -> bool:
        """Succeeded or submitted: a candidate for the final answer."""
        return self.succeeded or self.done

    @property
    def terminal(self) -> bool:
        """Not to be expanded: finished."""
        return self.finished


class MCTSStats(_Model):
    """What a search spent and saw (cumulative over resumes)."""

    iterations: int = 0
    expansions: int = 0
    """Node expansions (proposer calls on tree nodes) completed."""
    nodes: int = 0
    duplicates: int = 0
    """Proposals that added no node: they reached an already-seen state (the node's
    own, for a rejected action) or repeated an action already tried there."""
    failures: int = 0
    """Proposer, stepper and evaluator failures (each is feedback on its node)."""
    evaluations: int = 0
    """Solutions sent to the evaluator (test runs)."""
    rollouts: int = 0
    rollout_steps: int = 0
    grafted: int = 0
    """Nodes added from rollouts (finished states they reached)."""
    llm_calls: int = 0
    """LLM requests of the proposer and the discriminator for this task."""
    llm_cost: float = 0.0
    """Their cost, in the usage's cost unit."""
    seconds: float = 0.0


class SearchTree(_Model):
    """The persisted search (the JSON written to ``tree_path`` after every iteration)."""

    format: Literal["atlas-mcts-tree"] = "atlas-mcts-tree"
    version: int = TREE_VERSION
    task_id: str
    seed: int
    config: dict[str, Any] = Field(default_factory=dict)
    """The configuration the tree was grown with (for people; budgets may change)."""
    nodes: list[MCTSNode] = Field(default_factory=list)
    """Nodes by id (a node's id is its index; a child's id is above its parent's)."""
    outcomes: dict[str, Outcome] = Field(default_factory=dict)
    """Verdicts of solutions evaluated outside the tree (rollout states not grafted)."""
    stats: MCTSStats = Field(default_factory=MCTSStats)
    stopped: StopReason | None = None
    final: int | None = None
    """The node chosen as the answer, once the search ended."""


class MCTSResult(_Model):
    """What a search found for one task."""

    task_id: str
    best: Candidate | None = None
    """The final answer (the discriminator's pick among finished nodes)."""
    best_node: int | None = None
    finished: list[Candidate] = Field(default_factory=list)
    """Every finished node's candidate (succeeded or submitted), in node order."""
    stopped: StopReason = "exhausted"
    stats: MCTSStats = Field(default_factory=MCTSStats)
    tree: SearchTree

    @property
    def solved(self) -> bool:
        """The answer's verdict succeeds (on what the search could see)."""
        return bool(self.best and self.best.outcome and self.best.outcome.success)


# ---------------------------------------------------------------------- selection


@dataclass(frozen=True)
class Option:
    """One option at a node during selection: descend to ``node`` or expand it."""

    node: int
    expand: bool
    score: float
    q: float
    exploration: float
    penalty: float


class TreePolicy:
    """Selection, virtual loss and backpropagation on a list of nodes (see module docs).

    ``virtual`` holds the virtual visits of the batch being selected; ``pending`` how
    many times each node was picked in it (a node that can take more children may be
    picked again: each pick is one more expansion of it, asking for different actions).
    Both are empty between iterations.
    """

    def __init__(self, config: SWESearchConfig) -> None:
        self.config = config
        self.virtual: dict[int, float] = {}
        self.pending: dict[int, int] = {}

    # -- node predicates ---------------------------------------------------------------

    def rollout_threshold(self, nodes: Sequence[MCTSNode]) -> float:
        """The estimate a new node needs for a rollout (``Discriminator.should_rollout(
        value, threshold)``): ``discriminator_threshold``, or with ``rollout_top_fraction``
        f the ``ceil(f·n)``-th best estimate of the tree's ``n`` nodes."""
        fraction = self.config.rollout_top_fraction
        if fraction is None or not nodes:
            return self.config.discriminator_threshold
        values = sorted((n.value for n in nodes), reverse=True)
        k = max(1, math.ceil(fraction * len(values) - 1e-9))
        return values[k - 1]

    def expandable(self, node: MCTSNode) -> bool:
        """May ``node`` be expanded now?"""
        cfg = self.config
        return (
            not node.terminal
            and not node.exhausted
            and node.failures < cfg.max_failures_per_node
            and node.depth < cfg.max_depth
            and self.room(node) > 0
        )

    def room(self, node: MCTSNode) -> int:
        """Children ``node`` may still get beyond those its pending expansions ask for."""
        cfg = self.config
        asked = self.pending.get(node.id, 0) * cfg.children_per_expansion
        return cfg.max_children - len(node.children) - asked

    def open_nodes(self, nodes: Sequence[MCTSNode]) -> set[int]:
        """Nodes whose subtree holds an expandable node."""
        out: set[int] = set()
        for node in reversed(nodes):  # children have higher ids than their parents
            if self.expandable(node) or any(c in out for c in node.children):
                out.add(node.id)
        return out

    # -- scores ------------------------------------------------------------------------

    def visits(self, node: MCTSNode) -> float:
        return node.visits + self.virtual.get(node.id, 0.0)

    def q(self, node: MCTSNode) -> float:
        n = self.visits(node)
        return node.value_sum / n if n > 0 else 0.0

    def penalty(self, node: MCTSNode, parent: MCTSNode | None) -> float:
        cfg = self.config
        p = cfg.depth_penalty * math.sqrt(node.depth)
        p += cfg.duplicate_penalty * node.duplicates**2
        if (
            parent is not None
            and node.action_key is not None
            and node.action_key == parent.action_key
        ):
            p += cfg.repeat_penalty
        return p

    def options(self, nodes: Sequence[MCTSNode], at: int, open_: set[int]) -> list[Option]:
        """The scored options at node ``at`` (expand it first, then children by id)."""
        cfg = self.config
        node = nodes[at]
        parent = nodes[node.parent] if node.parent is not None else None
        n_visits = max(self.visits(node), 1.0)
        kids = [nodes[c] for c in node.children]
        can_expand = self.expandable(node)
        p_new = 1.0 / (len(kids) + 1) if can_expand else 0.0
        total_prior = sum(k.prior for k in kids)
        out: list[Option] = []
        if can_expand:
            if cfg.selection == "uct":
                explore = cfg.ucb_constant * math.sqrt(math.log(n_visits))
            else:
                explore = cfg.ucb_constant * p_new * math.sqrt(n_visits)
            pen = self.penalty(node, parent)
            out.append(Option(at, True, node.value + explore - pen, node.value, explore, pen))
        for kid in kids:
            if kid.id not in open_:
                continue
            kv = max(self.visits(kid), 1e-9)
            if cfg.selection == "uct":
                explore = cfg.ucb_constant * math.sqrt(math.log(n_visits) / kv)
            else:
                share = kid.prior / total_prior if total_prior > 0 else 1.0 / len(kids)
                prior = (1.0 - p_new) * share
                explore = cfg.ucb_constant * prior * math.sqrt(n_visits) / (1.0 + kv)
            pen = self.penalty(kid, node)
            q = self.q(kid)
            out.append(Option(kid.id, False, q + explore - pen, q, explore, pen))
        return out

    # -- selection ---------------------------------------------------------------------

    def select(self, nodes: Sequence[MCTSNode]) -> int | None:
        """One node to expand, by descent from the root (None: nothing is expandable)."""
        if not nodes:
            return None
        open_ = self.open_nodes(nodes)
        at = 0
        if at not in open_:
            return None
        while True:
            options = self.options(nodes, at, open_)
            best = options[0]
            for opt in options[1:]:
                if opt.score > best.score:  # ties: expanding first, then the lower id
                    best = opt
            if best.expand:
                return at
            at = best.node

    def add_virtual_loss(self, nodes: Sequence[MCTSNode], node_id: int) -> None:
        """Count a pick of ``node_id`` and put the virtual loss on it and its ancestors."""
        self.pending[node_id] = self.pending.get(node_id, 0) + 1
        at: int | None = node_id
        while at is not None:
            self.virtual[at] = self.virtual.get(at, 0.0) + self.config.virtual_loss
            at = nodes[at].parent

    def select_batch(self, nodes: Sequence[MCTSNode], count: int) -> list[int]:
        """Up to ``count`` nodes to expand at once, each picked under the virtual loss of
        the ones before it. A node appears again while it has room for more children
        (a young tree still fills a batch); :meth:`slots` numbers the repeats. Call
        :meth:`clear` after integrating."""
        batch: list[int] = []
        for _ in range(count):
            picked = self.select(nodes)
            if picked is None:
                break
            batch.append(picked)
            self.add_virtual_loss(nodes, picked)
        return batch

    def remove_virtual_loss(self, nodes: Sequence[MCTSNode], node_id: int) -> None:
        """Undo one :meth:`add_virtual_loss` of ``node_id`` (its expansion was integrated)."""
        left = self.pending.get(node_id, 0) - 1
        if left > 0:
            self.pending[node_id] = left
        else:
            self.pending.pop(node_id, None)
        at: int | None = node_id
        while at is not None:
            v = self.virtual.get(at, 0.0) - self.config.virtual_loss
            if v > 1e-9:
                self.virtual[at] = v
            else:
                self.virtual.pop(at, None)
            at = nodes[at].parent

    @staticmethod
    def slots(batch: Sequence[int]) -> list[int]:
        """For each pick of ``batch``: how many earlier picks chose the same node."""
        seen: dict[int, int] = {}
        out: list[int] = []
        for node_id in batch:
            out.append(seen.get(node_id, 0))
            seen[node_id] = out[-1] + 1
        return out

    def clear(self) -> None:
        """Remove every virtual loss and pending mark."""
        self.virtual.clear()
        self.pending.clear()

    @staticmethod
    def backpropagate(nodes: Sequence[MCTSNode], node_id: int, value: float) -> None:
        """One visit of ``value`` on ``node_id`` and every ancestor."""
        at: int | None = node_id
        while at is not None:
            node = nodes[at]
            node.visits += 1
            node.value_sum += value
            at = node.parent


# ------------------------------------------------------------------------ helpers
