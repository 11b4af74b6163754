"""EnhancedTaskRouter: choose each task's strategy from past experience and its domain.

The router asks memory for the successful experiences most similar to the task
(``memory.query(task, k, successful_only=True)``), then applies the first rule that fits
(seed spec 004, thresholds from :class:`~atlas_actors.config.RouterConfig`):

1. **adapt**: the most similar successful experience has a similarity of at least
   ``similarity_threshold`` (0.9; an exact repeat has 1.0): adapt its solution.
2. **strategy match**: the most similar successful experiences with a similarity of at
   least ``strategy_match_threshold`` (0.6; at most ``strategy_match_votes`` = 3 of them)
   are at least ``strategy_match_min`` (2) and all used the same strategy, where ``adapt``
   and ``direct`` count as one (both reuse a remembered solution). Reuse routes
   ``direct`` (the DirectSolver tries their solutions, then hands over); otherwise the
   route is their strategy. At 0.6 two ARC tasks share most of their shape, colour and
   object structure (1.1% of the pairs of different ARC-AGI-1 training tasks get there; a
   re-coloured copy of a task gets 0.89 in the median), and two SWE tasks share their
   repository and most of their files, tests or wording.
3. **domain**: with ``use_domain_routing``, the strategy the task's domain registered
   (:func:`~atlas_actors.environments.registry.register_domain`: ``arc`` →
   ``evolutionary``, ``swe`` → ``mcts``), or one a router is given as a mapping.
4. **default**: ``default_strategy`` (``evolutionary``).

Whatever the rule, the decision carries the successful experiences at least
``min_seed_similarity`` similar (at most ``max_experiences``, most similar first) for the
strategy to start from (Mind Evolution's ``memory_init_fraction``, MCTS's first children).

Without an exact repeat solved without doubts, the decision also carries memory's
experiences of exactly this task that did not pass its checks or passed them with an
answer the environment doubted (``repeats``, newest first; with ``recall_unsolved``):
the search answers from one searched under its own settings instead of searching again
(see :func:`~atlas_actors.search.solve.solve_task`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, get_args

from atlas_actors.config import RouterConfig
from atlas_actors.environments.registry import get_domain
from atlas_actors.errors import AtlasError, ConfigError
from atlas_actors.types import Experience, RoutingDecision, Strategy, Task

log = logging.getLogger(__name__)

_STRATEGIES: tuple[str, ...] = get_args(Strategy)
_REUSE: dict[str, Strategy] = {"adapt": "direct", "direct": "direct"}
"""Rule 2: experiences solved by reusing a remembered solution vote for ``direct``."""


def _strategy(value: Any, where: str) -> Strategy:
    if value not in _STRATEGIES:
        raise ConfigError(f"{where}: strategy must be one of {list(_STRATEGIES)}, got {value!r}")
    return value  # type: ignore[no-any-return]


def _settled(e: Experience) -> bool:
    """Passed its checks with answers the environment did not doubt."""
    return e.success and not e.outcome.doubted


class ExperienceSource(Protocol):
    """What the router needs from memory (:class:`~atlas_actors.memory.MemorySystem`)."""

    async def query(
        self, task: Task, k: int = 5, *, successful_only: bool = False, min_similarity: float = 0.0
    ) -> list[tuple[Experience, float]]: ...

    def query_sync(
        self, task: Task, k: int = 5, *, successful_only: bool = False, min_similarity: float = 0.0
    ) -> list[tuple[Experience, float]]: ...


class EnhancedTaskRouter:
    """Routes tasks by similar past experience, then by domain (see the module docstring).

    ``memory`` may be given here or per call (``route(task, memory)``); without either
    the router decides by domain alone. ``domain_strategies`` overrides the domains'
    registered strategies for this router.
    """

    def __init__(
        self,
        memory: ExperienceSource | None = None,
        config: RouterConfig | None = None,
        *,
        domain_strategies: Mapping[str, Strategy] | None = None,
    ) -> None:
        self.memory = memory
        self.config = config or RouterConfig()
        self._domains = {
            d: _strategy(s, f"domain_strategies[{d!r}]")
            for d, s in (domain_strategies or {}).items()
        }

    def domain_strategy(self, domain: str) -> Strategy | None:
        """The default strategy of ``domain``: this router's mapping, else the one the
        domain registered, else None (unknown domain)."""
        if domain in self._domains:
            return self._domains[domain]
        spec = get_domain(domain)
        return spec.strategy if spec is not None else None

    def _k(self) -> int:
        return max(self.config.max_experiences, self.config.strategy_match_votes, 1)

    async def route(self, task: Task, memory: ExperienceSource | None = None) -> RoutingDecision:
        """The strategy for ``task``, with the similarity, the reason and the experiences."""
        source = memory if memory is not None else self.memory
        found: list[tuple[Experience, float]] = []
        repeats: list[Experience] = []
        if source is not None:
            try:
                found = await source.query(task, self._k(), successful_only=True)
                if self._wants_repeats(found) and hasattr(source, "repeats"):
                    repeats = await source.repeats(task)
            except (AtlasError, OSError) as e:  # memory is an aid: route without it
                log.warning("router: memory query for %s failed: %s", task.id, e)
        return self.decide(task, found, memory=source is not None, repeats=repeats)

    def route_sync(self, task: Task, memory: ExperienceSource | None = None) -> RoutingDecision:
        """:meth:`route` for synchronous callers (blocks while memory is queried)."""
        source = memory if memory is not None else self.memory
        found: list[tuple[Experience, float]] = []
        repeats: list[Experience] = []
        if source is not None:
            try:
                found = source.query_sync(task, self._k(), successful_only=True)
                if self._wants_repeats(found) and hasattr(source, "repeats_sync"):
                    repeats = source.repeats_sync(task)
            except (AtlasError, OSError) as e:
                log.warning("router: memory query for %s failed: %s", task.id, e)
        return self.decide(task, found, memory=source is not None, repeats=repeats)

    def _wants_repeats(self, found: Sequence[tuple[Experience, float]]) -> bool:
        """Unsolved exact repeats matter only for recall, and only when no exact repeat
        was solved without doubts (that one is adapted)."""
        return self.config.recall_unsolved and not any(s >= 1.0 and _settled(e) for e, s in found)

    def decide(
        self,
        task: Task,
        found: Sequence[tuple[Experience, float]],
        *,
        memory: bool = True,
        repeats: Sequence[Experience] = (),
    ) -> RoutingDecision:
        """Apply the rules to the experiences memory found (any order; failures ignored).
        ``repeats``: memory's experiences of exactly this task (any order); the unsolved
        ones go with the decision, newest first, for recall."""
        cfg = self.config
        solved = sorted(
            ((e, float(s)) for e, s in found if e.success), key=lambda es: es[1], reverse=True
        )
        best = solved[0][1] if solved else 0.0
        unsolved = (
            sorted(
                (e for e in repeats if not _settled(e) and e.domain == task.domain),
                key=lambda e: e.created_at,
                reverse=True,
            )
            if self._wants_repeats(found)
            else []
        )
        seeds = [(e, s) for e, s in solved if s >= cfg.min_seed_similarity][: cfg.max_experiences]

        def decision(strategy: Strategy, rule: str, reason: str) -> RoutingDecision:
            return RoutingDecision(
                strategy=strategy,
                rule=rule,
                reason=reason,
                similarity=min(1.0, max(0.0, best)),
                experiences=[e for e, _ in seeds],
                similarities=[min(1.0, max(0.0, s)) for _, s in seeds],
                repeats=unsolved,
            )

        if solved and best >= cfg.similarity_threshold:
            top = solved[0][0]
            kind = "an exact repeat of" if best >= 1.0 else f"{best:.2f} similar to"
            if not seeds:  # the adapted experience always goes with the decision
                seeds = [solved[0]]
            return decision(
                "adapt",
                "adapt",
                f"adapt: {kind} solved task {top.task.id} ({top.strategy})",
            )

        voters = [(e, s) for e, s in solved if s >= cfg.strategy_match_threshold][
            : cfg.strategy_match_votes
        ]
        # adapting and solving directly both reuse a remembered solution: they agree
        agreed = {_REUSE.get(e.strategy, e.strategy) for e, _ in voters}
        if len(voters) >= cfg.strategy_match_min and len(agreed) == 1:
            strategy = agreed.pop()
            used = "/".join(sorted({e.strategy for e, _ in voters}))
            ids = ", ".join(e.task.id for e, _ in voters)
            return decision(
                strategy,
                "strategy_match",
                f"strategy match: {len(voters)} similar solved tasks ({ids}; best {best:.2f}) "
                f"used {used}",
            )

        note = (
            "no memory"
            if not memory
            else "no similar solved task"
            if not solved
            else f"best similar solved task {solved[0][0].task.id} at {best:.2f}"
        )
        domain_default = self.domain_strategy(task.domain) if cfg.use_domain_routing else None
        if domain_default is not None:
            return decision(
                domain_default, "domain", f"domain {task.domain} -> {domain_default} ({note})"
            )
        return decision(
            cfg.default_strategy,
            "default",
            f"default -> {cfg.default_strategy} (domain {task.domain}"
            f"{'' if cfg.use_domain_routing else ', domain routing off'}; {note})",
        )
