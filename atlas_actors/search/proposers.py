"""Proposers made of proposers (domain-free): one that offers remembered actions first,
one that gives several proposers' ideas to the same tree, one that gives several
proposers' solutions to the same Mind Evolution population; and the proposer modes a
domain offers (``offline``, ``llm``, ``hybrid``)."""

from __future__ import annotations

import itertools
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import anyio

from atlas_actors.errors import ConfigError
from atlas_actors.search.base import NodeView, Proposals, ProposedAction
from atlas_actors.types import Candidate, Task, solution_key

log = logging.getLogger(__name__)

ProposerMode = Literal["auto", "offline", "llm", "hybrid"]
"""Who proposes: ``offline`` (the domain's offline proposer), ``llm`` (an LLM endpoint),
``hybrid`` (both, into one search), ``auto`` (``llm`` when an endpoint is given, else
``offline``)."""

PROPOSER_MODES: tuple[str, ...] = ("auto", "offline", "llm", "hybrid")


def check_mode(mode: str, task: Task, has_llm: bool) -> ProposerMode:
    """``mode`` resolved (``auto`` becomes ``llm`` or ``offline``); a ``ConfigError``
    naming the allowed modes for an unknown one, and for ``llm`` or ``hybrid`` without
    an LLM endpoint."""
    if mode not in PROPOSER_MODES:
        allowed = ", ".join(repr(m) for m in PROPOSER_MODES)
        raise ConfigError(f"mode={mode!r}: allowed {allowed}")
    if mode == "auto":
        return "llm" if has_llm else "offline"
    if mode in ("llm", "hybrid") and not has_llm:
        raise ConfigError(f"task {task.id}: the {mode} proposer needs an LLM endpoint")
    return mode  # type: ignore[return-value]


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


class _Several:
    """What proposers made of several share: the counters of the parts that keep them."""

    proposers: list[Any]

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


class MixedProposer(_Several):
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

    def alternatives(self, task_id: str) -> list[Any]:
        return [a for p in self._with("alternatives") for a in p.alternatives(task_id)]


class MixedSolutionProposer(_Several):
    """Several :class:`~atlas_actors.search.base.Proposer` s feeding one Mind Evolution
    population (the ``hybrid`` mode: an offline proposer's solutions and an LLM's).

    * ``initial``: with ``lead`` (the default), the first proposer's alone, so a task it
      solves at once stops the search before the others (an LLM) cost anything; without
      it, every proposer's share of ``n`` (the first ones get the remainder).
    * ``mutate`` and ``crossover``: every proposer at once, each asked for its own
      ``proposals_per_call`` (fewer in proportion when the search asks for fewer than
      :attr:`proposals_per_call`), so an LLM refines the offline proposer's programs
      with the verifier's feedback while the offline one continues its own work. A
      CPU-bound part is called again, with a new rng, for as long as a concurrent
      part's call is still running (until it returns nothing or the time limit): the
      turn lasts as long as the LLM's answer, and the core is kept busy meanwhile.

    Answers are interleaved, first proposer first, without duplicates. A proposer that
    runs one call at a time (``max_concurrent_calls == 1``: CPU-bound) gets its calls
    one after the other; the others' run concurrently. The first exception of a
    proposer in a call is logged and counted (``report``: ``proposer_failures``), and
    the others' answers are kept; when every proposer fails, the error is raised.
    Calls into a CPU-bound proposer are ordered by the concurrent calls' timing, so a
    hybrid search is not replayed exactly by its seed (an LLM's answers, from its
    cache, are).

    ``time_limit``: the search's time limit in seconds, counted from this proposer's
    first call (as the offline proposers count theirs). A call of a concurrent part (an
    LLM) still running when it passes is cancelled and gives nothing, so a search is
    not held past its limit by requests in flight; a CPU-bound part is left to end its
    own work at the limit (its answers are kept). None: no limit here.
    """

    def __init__(
        self, proposers: Sequence[Any], *, lead: bool = True, time_limit: float | None = None
    ) -> None:
        if not proposers:
            raise ValueError("proposers: give at least one")
        self.proposers = list(proposers)
        self.lead = lead
        self.time_limit = time_limit
        self._deadline: float | None = None
        self.proposals_per_call = sum(
            max(1, int(getattr(p, "proposals_per_call", 1))) for p in self.proposers
        )
        limits = [getattr(p, "max_concurrent_calls", None) for p in self.proposers]
        # one at a time only when every part asks for it (else the search would wait on
        # the CPU-bound part between the LLM's calls)
        self.max_concurrent_calls: int | None = 1 if all(m == 1 for m in limits) else None
        self._locks = [anyio.Lock() if m == 1 else None for m in limits]
        self._failures: dict[str, int] = {}

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        return await self._initial(task, n, rng, None)

    async def initial_with_examples(
        self, task: Task, n: int, rng: random.Random, examples: list[Any]
    ) -> list[Any]:
        return await self._initial(task, n, rng, examples)

    async def _initial(
        self, task: Task, n: int, rng: random.Random, examples: list[Any] | None
    ) -> list[Any]:
        parts = self.proposers[:1] if self.lead else self.proposers
        shares = [n // len(parts) + (1 if i < n % len(parts) else 0) for i in range(len(parts))]

        def call(i: int, p: Any, r: random.Random) -> Awaitable[list[Any]]:
            with_examples = getattr(p, "initial_with_examples", None)
            if examples and with_examples is not None:
                return with_examples(task, max(1, shares[i]), r, examples)  # type: ignore[no-any-return]
            return p.initial(task, max(1, shares[i]), r)  # type: ignore[no-any-return]

        return await self._ask(task, rng, [(i, p, call) for i, p in enumerate(parts)])

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        def call(i: int, p: Any, r: random.Random) -> Awaitable[list[Any]]:
            return p.mutate(task, parent, self._share(p, n), r, temperature)  # type: ignore[no-any-return]

        return await self._ask(task, rng, [(i, p, call) for i, p in enumerate(self.proposers)])

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        def call(i: int, p: Any, r: random.Random) -> Awaitable[list[Any]]:
            return p.crossover(task, a, b, self._share(p, n), r)  # type: ignore[no-any-return]

        return await self._ask(task, rng, [(i, p, call) for i, p in enumerate(self.proposers)])

    def _share(self, p: Any, n: int) -> int:
        own = max(1, int(getattr(p, "proposals_per_call", 1)))
        return max(1, own * n // self.proposals_per_call)

    async def _ask(
        self,
        task: Task,
        rng: random.Random,
        calls: list[tuple[int, Any, Callable[[int, Any, random.Random], Awaitable[list[Any]]]]],
    ) -> list[Any]:
        seeds = [rng.getrandbits(32) for _ in calls]  # drawn before any call: one per part
        answers: list[list[Any]] = [[] for _ in calls]
        errors: list[BaseException] = []
        if self._deadline is None and self.time_limit is not None:
            self._deadline = time.monotonic() + self.time_limit
        waiting = [sum(self._locks[i] is None for i, _, _ in calls)]  # concurrent parts running

        def left() -> float:
            return math.inf if self._deadline is None else self._deadline - time.monotonic()

        async def one(j: int) -> None:
            i, p, call = calls[j]
            lock = self._locks[i]
            try:
                if lock is None:
                    try:
                        if left() <= 0:
                            return  # past the time limit: not asked at all
                        with anyio.move_on_after(left()):
                            answers[j] = list(await call(i, p, random.Random(seeds[j])))
                    finally:
                        waiting[0] -= 1
                    return
                # a CPU-bound part works on while a concurrent part's call (an LLM's
                # answer, seconds away) is still running, so the core is not left idle
                # between turns; every call its own rng, from this call's seed
                for k in itertools.count():
                    async with lock:
                        got = list(await call(i, p, random.Random(seeds[j] * 1_000_003 + k)))
                    answers[j] += got
                    if not got or not waiting[0] or left() <= 0:
                        break
            except Exception as e:  # one part's failure: the others' answers are kept
                errors.append(e)
                self._failures[task.id] = self._failures.get(task.id, 0) + 1
                log.warning(
                    "task %s: proposer %d (%s) failed: %s: %s",
                    task.id,
                    i,
                    type(p).__name__,
                    type(e).__name__,
                    e,
                )

        async with anyio.create_task_group() as tg:
            for j in range(len(calls)):
                tg.start_soon(one, j)
        if errors and len(errors) == len(calls):
            raise errors[0]
        out: list[Any] = []
        seen: set[str] = set()
        for row in range(max((len(a) for a in answers), default=0)):
            for a in answers:
                if row < len(a) and solution_key(a[row]) not in seen:
                    seen.add(solution_key(a[row]))
                    out.append(a[row])
        return out

    def report(self, task_id: str) -> dict[str, float]:
        out = super().report(task_id)
        failures = self._failures.pop(task_id, 0)
        if failures:
            out["proposer_failures"] = float(failures)
        return out
