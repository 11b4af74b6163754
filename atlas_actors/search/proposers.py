"""Proposers made of proposers (domain-free): one that offers remembered actions first,
one that gives several proposers' ideas to the same tree."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import anyio

from atlas_actors.search.base import NodeView, Proposals, ProposedAction
from atlas_actors.types import Task, solution_key


class SeededProposer:
    """An :class:`~atlas_actors.search.base.ActionProposer` that offers remembered
    actions first: at the root, the ``seeds`` (e.g. remembered patches as
    ``apply_patch`` actions) not yet tried come before the wrapped proposer's ideas.
    Everything else goes to ``inner`` (its usage counters included)."""

    def __init__(self, inner: Any, seeds: Sequence[ProposedAction]) -> None:
        self.inner = inner
        self.seeds = list(seeds)

    def __getattr__(self, name: str) -> Any:  # usage, pop_usage, aclose, ...
        return getattr(self.inner, name)

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        out: list[ProposedAction] = []
        if node.depth == 0:
            tried = {solution_key(a) for a in node.tried}
            out = [s for s in self.seeds if solution_key(s.action) not in tried][:k]
        if len(out) < k:
            out += await self.inner.propose(task, node, k - len(out), rng)
        return out


class MixedProposer:
    """Several :class:`~atlas_actors.search.base.ActionProposer` s feeding one tree (the
    ``hybrid`` mode: an LLM's ideas and the offline repair operators' side by side).

    Each expansion asks every proposer at once for its share of the ``k`` actions (the
    first proposers get the remainder) and interleaves the answers, first proposer
    first, without duplicates; when one has no (more) ideas, the others fill its share.
    Usage counters come from the proposers that keep them; ``report`` merges theirs.
    """

    def __init__(self, proposers: Sequence[Any]) -> None:
        if not proposers:
            raise ValueError("proposers: give at least one")
        self.proposers = list(proposers)

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        n = len(self.proposers)
        shares = [k // n + (1 if i < k % n else 0) for i in range(n)]
        shares = [max(1, s) for s in shares]
        answers: list[list[ProposedAction]] = [[] for _ in range(n)]
        problems: list[str] = []
        seeds = [rng.getrandbits(32) for _ in range(n)]

        async def ask(i: int) -> None:
            try:
                got = await self.proposers[i].propose(
                    task, node, shares[i], random.Random(seeds[i])
                )
            except Exception as e:  # one proposer's failure is feedback, not the end
                problems.append(f"proposer {i} ({type(self.proposers[i]).__name__}) failed: {e}")
                return
            answers[i] = list(got)
            problems.extend(getattr(got, "problems", None) or [])

        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(ask, i)
        out: list[ProposedAction] = []
        seen: set[str] = set()
        for row in range(max((len(a) for a in answers), default=0)):
            for a in answers:
                if row < len(a) and solution_key(a[row].action) not in seen:
                    seen.add(solution_key(a[row].action))
                    out.append(a[row])
        return Proposals(out[:k] if len(out) > k else out, problems=problems if not out else [])

    # -- counters ------------------------------------------------------------------------

    def _with(self, name: str) -> list[Any]:
        return [p for p in self.proposers if callable(getattr(p, name, None))]

    def usage_for(self, task_id: str) -> Any:
        """The usage of the first proposer that keeps one (the LLM's)."""
        users = self._with("usage_for")
        return users[0].usage_for(task_id) if users else None

    def pop_usage(self, task_id: str) -> Any:
        users = self._with("pop_usage")
        return users[0].pop_usage(task_id) if users else None

    def report(self, task_id: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for p in self._with("report"):
            out.update(p.report(task_id))
        return out

    def alternatives(self, task_id: str) -> list[Any]:
        return [a for p in self._with("alternatives") for a in p.alternatives(task_id)]
