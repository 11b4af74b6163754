"""The MCTS tree: nodes, the keys that de-duplicate states, the counters, and the JSON
form a search is saved in (see :mod:`atlas_actors.search.mcts` for the algorithm)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.search.base import ValueEstimate
from atlas_actors.types import Candidate, Outcome, solution_key

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
    why: str = ""
    """Why it stopped, in words (empty on success): the budget or the tree, and the
    notes its nodes gathered most often (failed expansions, a proposer's last word)."""
    stats: MCTSStats = Field(default_factory=MCTSStats)
    tree: SearchTree

    @property
    def solved(self) -> bool:
        """The answer's verdict succeeds (on what the search could see)."""
        return bool(self.best and self.best.outcome and self.best.outcome.success)
