"""MCTS selection: which nodes the next expansions grow (see :mod:`atlas_actors.search.mcts`
for the scores), with virtual loss for picks in one batch, and backpropagation of a new
node's value to the root."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from atlas_actors.config import SWESearchConfig
from atlas_actors.search.tree import MCTSNode


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
