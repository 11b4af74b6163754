"""Proposers made of proposers (domain-free): one that offers remembered actions first,
one that gives several proposers' ideas to the same tree, one that gives several
proposers' solutions to the same Mind Evolution population; and the proposer modes a
domain offers (``offline``, ``llm``, ``hybrid``)."""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar, get_args

import anyio

from atlas_actors.errors import ConfigError
from atlas_actors.search.base import NodeView, Proposals, ProposedAction
from atlas_actors.types import Candidate, Task, solution_key

log = logging.getLogger(__name__)

_PartCall = Callable[[Any, random.Random], Awaitable[list[Any]]]
"""One turn's call of a part: ``call(proposer, rng)``."""

ProposerMode = Literal["auto", "offline", "llm", "hybrid"]
"""Who proposes: ``offline`` (the domain's offline proposer), ``llm`` (an LLM endpoint),
``hybrid`` (both, into one search), ``auto`` (``llm`` when an endpoint is given, else
``offline``)."""

PROPOSER_MODES: tuple[str, ...] = get_args(ProposerMode)

T = TypeVar("T")


def _split(k: int, n: int) -> list[int]:
    """``k`` shared among ``n`` parts, the first ones getting the remainder."""
    return [k // n + (1 if i < k % n else 0) for i in range(n)]


def _interleave(answers: Sequence[Sequence[T]], key: Callable[[T], str]) -> list[T]:
    """The parts' answers interleaved, first part first, without duplicates (by
    ``key``)."""
    out: list[T] = []
    seen: set[str] = set()
    for row in range(max((len(a) for a in answers), default=0)):
        for a in answers:
            if row < len(a) and key(a[row]) not in seen:
                seen.add(key(a[row]))
                out.append(a[row])
    return out


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
        shares = [max(1, s) for s in _split(k, n)]
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
        out = _interleave(answers, lambda a: solution_key(a.action))
        return Proposals(out[:k] if len(out) > k else out, problems=problems if not out else [])

    def alternatives(self, task_id: str) -> list[Any]:
        return [a for p in self._with("alternatives") for a in p.alternatives(task_id)]


class MixedSolutionProposer(_Several):
    """Several :class:`~atlas_actors.search.base.Proposer` s feeding one Mind Evolution
    population (the ``hybrid`` mode: an offline proposer's solutions and an LLM's).

    The parts are of two kinds. One that runs one call at a time
    (``max_concurrent_calls == 1``: CPU-bound, the offline proposer) answers within the
    turn, its calls one after the other. The others (an LLM, seconds per answer) work in
    the background: a turn starts a call of theirs and returns without waiting for it;
    what they answered since the last turn comes back with the next one. So a turn
    lasts one offline call, the search evaluates the offline proposer's children as
    they come (its core is never left idle waiting on a model), and up to
    ``in_flight`` calls of each background part run all the time.

    * ``initial``: with ``lead`` (the default), the first proposer's alone, so a task it
      solves at once stops the search before the others (an LLM) cost anything; without
      it, every proposer's share of ``n`` (the first ones get the remainder), awaited.
    * ``mutate`` and ``crossover``: each part asked for its own ``proposals_per_call``
      (fewer in proportion when the search asks for fewer than
      :attr:`proposals_per_call`) on the turn's parents: an LLM refines the offline
      proposer's programs with the verifier's feedback while the offline one continues
      its own work. A background part's children join the population in a later turn
      (under that turn's parents). With ``lead``, a background part's first call for a
      task asks instead for ``first_samples`` programs of its own (``initial``: the task
      alone), so the model also writes programs from scratch, not only from the
      offline proposer's. With background parts only, a turn waits for the first of
      their answers.

    Answers are interleaved, first proposer first, without duplicates. A part's failure
    is logged and counted (``report``: ``proposer_failures``) and the others' answers
    are kept; a turn with nothing to give but failures raises the first. Which turn
    gets a background answer depends on timing, so a hybrid search is not replayed
    exactly by its seed (an LLM's answers, from its cache, are).

    ``time_limit``: the search's time limit in seconds, counted from this proposer's
    first call (as the offline proposers count theirs). Background calls still running
    when it passes are cancelled, and none starts after it; a CPU-bound part ends the
    call it is in at the limit (its answers are kept), and turns that waited for it
    past the limit call it no more. :meth:`cancel` (called by ``report``, at the end of a
    search) cancels a task's calls still in flight. None: no limit here.
    """

    def __init__(
        self,
        proposers: Sequence[Any],
        *,
        lead: bool = True,
        time_limit: float | None = None,
        in_flight: int = 8,
        first_samples: int = 4,
    ) -> None:
        if not proposers:
            raise ValueError("proposers: give at least one")
        for name, value in (("in_flight", in_flight), ("first_samples", first_samples)):
            if value < 1:
                raise ValueError(f"{name}: must be at least 1, got {value}")
        self.proposers = list(proposers)
        self.lead = lead
        self.time_limit = time_limit
        self.in_flight = in_flight
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
        self._flight: dict[tuple[str, int], set[asyncio.Task[None]]] = {}
        self._ready: dict[str, dict[int, list[Any]]] = {}
        self._errors: dict[str, list[BaseException]] = {}
        self._opened: set[tuple[str, int]] = set()
        self.first_samples = first_samples

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
        shares = _split(n, len(parts))
        seeds = [rng.getrandbits(32) for _ in parts]  # drawn before any call: one per part
        self._start_clock()
        answers: dict[int, list[Any]] = {}
        errors: list[BaseException] = []

        async def one(i: int) -> None:
            p = parts[i]
            with_examples = getattr(p, "initial_with_examples", None)
            r, k = random.Random(seeds[i]), max(1, shares[i])
            try:
                with anyio.move_on_after(self._left() if self._locks[i] is None else math.inf):
                    if examples and with_examples is not None:
                        got = await with_examples(task, k, r, examples)
                    else:
                        got = await p.initial(task, k, r)
                    answers[i] = list(got)
            except Exception as e:  # one part's failure: the others' answers are kept
                errors.append(e)
                self._failed(task, i, e)

        async with anyio.create_task_group() as tg:
            for i in range(len(parts)):
                tg.start_soon(one, i)
        return self._merge(answers, errors)

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        def call(p: Any, r: random.Random) -> Awaitable[list[Any]]:
            return p.mutate(task, parent, self._share(p, n), r, temperature)  # type: ignore[no-any-return]

        return await self._turn(task, rng, call)

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        def call(p: Any, r: random.Random) -> Awaitable[list[Any]]:
            return p.crossover(task, a, b, self._share(p, n), r)  # type: ignore[no-any-return]

        return await self._turn(task, rng, call)

    def cancel(self, task_id: str) -> None:
        """Cancel ``task_id``'s background calls still running and drop what they
        answered that no turn has taken (the search is over)."""
        for key in [k for k in self._flight if k[0] == task_id]:
            for t in self._flight.pop(key):
                t.cancel()
        self._ready.pop(task_id, None)
        self._errors.pop(task_id, None)
        self._opened = {k for k in self._opened if k[0] != task_id}

    def report(self, task_id: str) -> dict[str, float]:
        self.cancel(task_id)
        out = super().report(task_id)
        failures = self._failures.pop(task_id, 0)
        if failures:
            out["proposer_failures"] = float(failures)
        return out

    # -- pieces ----------------------------------------------------------------------------

    def _share(self, p: Any, n: int) -> int:
        own = max(1, int(getattr(p, "proposals_per_call", 1)))
        return max(1, own * n // self.proposals_per_call)

    def _start_clock(self) -> None:
        if self._deadline is None and self.time_limit is not None:
            self._deadline = time.monotonic() + self.time_limit

    def _left(self) -> float:
        return math.inf if self._deadline is None else self._deadline - time.monotonic()

    def _failed(self, task: Task, i: int, e: BaseException) -> None:
        self._failures[task.id] = self._failures.get(task.id, 0) + 1
        p = self.proposers[i]
        log.warning(
            "task %s: proposer %d (%s) failed: %s: %s", task.id, i, type(p).__name__,
            type(e).__name__, e,
        )  # fmt: skip

    async def _turn(
        self,
        task: Task,
        rng: random.Random,
        call: _PartCall,
    ) -> list[Any]:
        seeds = [rng.getrandbits(32) for _ in self.proposers]  # one per part, before any call
        self._start_clock()
        for i, p in enumerate(self.proposers):
            if self._locks[i] is None:
                first = self.lead and i > 0 and (task.id, i) not in self._opened
                if first and self._launch(
                    task, i, self._first_call(task), p, random.Random(seeds[i])
                ):
                    self._opened.add((task.id, i))
                else:
                    self._launch(task, i, call, p, random.Random(seeds[i]))
        answers: dict[int, list[Any]] = {}
        errors: list[BaseException] = []
        for i, p in enumerate(self.proposers):
            lock = self._locks[i]
            if lock is None:
                continue
            try:
                async with lock:
                    if self._left() > 0:  # turns that queued past the limit: nothing
                        answers[i] = list(await call(p, random.Random(seeds[i])))
            except Exception as e:  # one part's failure: the others' answers are kept
                errors.append(e)
                self._failed(task, i, e)
        if all(lock is None for lock in self._locks):  # nothing answers at once: wait
            await self._first_answer(task)
        for i, got in self._ready.pop(task.id, {}).items():
            answers.setdefault(i, []).extend(got)
        errors += self._errors.pop(task.id, [])
        return self._merge(answers, errors)

    def _launch(
        self,
        task: Task,
        i: int,
        call: _PartCall,
        p: Any,
        r: random.Random,
    ) -> bool:
        """Start a background call of part ``i`` unless ``in_flight`` of its calls for
        ``task`` are running or the time limit has passed; whether it started."""
        flight = self._flight.setdefault((task.id, i), set())
        left = self._left()
        if len(flight) >= self.in_flight or left <= 0:
            return False

        async def run() -> None:
            try:
                with anyio.move_on_after(left):
                    got = list(await call(p, r))
                    self._ready.setdefault(task.id, {}).setdefault(i, []).extend(got)
            except Exception as e:
                self._errors.setdefault(task.id, []).append(e)
                self._failed(task, i, e)

        job = asyncio.get_running_loop().create_task(run())
        flight.add(job)
        job.add_done_callback(flight.discard)
        return True

    def _first_call(self, task: Task) -> _PartCall:
        """A background part's first call for ``task`` when it sat out the first
        population: first programs of its own, from the task alone."""

        def call(p: Any, r: random.Random) -> Awaitable[list[Any]]:
            return p.initial(task, self.first_samples, r)  # type: ignore[no-any-return]

        return call

    async def _first_answer(self, task: Task) -> None:
        """Wait until a background call of ``task`` has answered or failed, none is
        running, or the time limit has passed."""
        while not self._ready.get(task.id) and not self._errors.get(task.id):
            running = [t for (tid, _), f in self._flight.items() if tid == task.id for t in f]
            left = self._left()
            if not running or left <= 0:
                return
            await asyncio.wait(
                running, timeout=min(left, 3600.0), return_when=asyncio.FIRST_COMPLETED
            )

    @staticmethod
    def _merge(answers: dict[int, list[Any]], errors: list[BaseException]) -> list[Any]:
        """The parts' answers interleaved, first part first, without duplicates; with
        nothing to give but failures, the first failure raised."""
        parts = [answers[i] for i in sorted(answers)]
        if errors and not any(parts):
            raise errors[0]
        return _interleave(parts, solution_key)
