"""Actor pools: environment actors (the Evaluator protocol) and discriminator actors
(the Scorer protocol), with least-loaded dispatch, a cap on calls in flight, batching,
health checks, and replacement of actors that die or hang.

A pool is an ordinary object living in whichever process drives it (normally the
:class:`~atlas_actors.actors.coordinator.SearchCoordinator` actor); searches see only
``evaluate`` / ``score`` and never call ``.remote()``.

Fault handling, per call:

* the actor crashed and Ray is restarting it (``ActorUnavailableError``): retry the
  work, preferring another actor;
* the actor is gone for good (``ActorDiedError``: killed, node lost, restarts used up):
  start a replacement in its slot, retry the work elsewhere;
* the call took longer than ``call_timeout_s``: the actor is hung; kill it, replace
  it, retry the work elsewhere.

Work is idempotent (scoring a solution has no side effects the pool relies on), and
the pool counts a solution as evaluated only when a result for it comes back, so a
retried chunk is never counted twice. After ``max_retries`` retries of one piece of
work the pool raises :class:`~atlas_actors.errors.ActorError`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, RayTaskError

from atlas_actors.actors.workers import (
    EnvironmentFactory,
    EnvironmentWorker,
    ScorerFactory,
    ScorerWorker,
)
from atlas_actors.environments.base import Transition
from atlas_actors.environments.registry import pool_preferences
from atlas_actors.errors import ActorError
from atlas_actors.search.base import ValueEstimate
from atlas_actors.types import Candidate, Outcome, Task

log = logging.getLogger(__name__)

EnvironmentActor = ray.remote(EnvironmentWorker)
"""``EnvironmentWorker`` as a Ray actor class (options are set per pool)."""

DiscriminatorActor = ray.remote(ScorerWorker)
"""``ScorerWorker`` as a Ray actor class (options are set per pool)."""


@dataclass
class _Slot:
    index: int
    actor: Any
    generation: int = 0
    in_flight: int = 0
    calls: int = 0
    ready: bool = False
    """The current actor answered a health check (a new or restarted actor has not
    yet: its start-up must not count against the call timeout)."""


class _StartTimeout(TimeoutError):
    pass


class ActorPool:
    """A fixed number of actor slots with least-loaded dispatch and self-healing.

    ``make_actor(index)`` creates the actor for a slot (at start and on replacement).
    At most ``max_in_flight`` calls are queued on one actor; callers beyond the pool's
    capacity wait their turn.
    """

    def __init__(
        self,
        make_actor: Callable[[int], Any],
        size: int,
        *,
        max_in_flight: int = 2,
        call_timeout_s: float = 120.0,
        max_retries: int = 3,
        name: str = "actor",
    ) -> None:
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self._make_actor = make_actor
        self.size = size
        self.max_in_flight = max_in_flight
        self.call_timeout_s = call_timeout_s
        self.max_retries = max_retries
        self.name = name
        self.start_timeout_s = max(call_timeout_s, 120.0)
        """How long a new actor may take to start (not counted as a hang)."""
        self._slots: list[_Slot] = []
        self._released: anyio.Event | None = None
        self._wanted: dict[int, int] = {}
        """Slot index -> sticky callers waiting that would take it (they hold their
        task's environment there)."""
        self.retries = 0
        """Calls retried after an actor failed or hung."""
        self.replacements = 0
        """Actors replaced (died for good or hung)."""
        self.timeouts = 0
        """Calls that exceeded ``call_timeout_s``."""

    # -- lifecycle -------------------------------------------------------------------

    async def start(self, timeout_s: float | None = None) -> list[dict[str, Any]]:
        """Create the actors and wait until each answers a health check."""
        if not self._slots:
            self._slots = [_Slot(i, self._make_actor(i)) for i in range(self.size)]
        self._released = anyio.Event()
        limit = timeout_s if timeout_s is not None else self.start_timeout_s
        try:
            with anyio.fail_after(limit):
                infos = [await s.actor.info.remote() for s in self._slots]
            for slot in self._slots:
                slot.ready = True
            return infos
        except TimeoutError as e:
            have = ray.cluster_resources()  # type: ignore[no-untyped-call]
            raise ActorError(
                f"{self.size} {self.name} actor(s) did not start within {limit:.0f}s; "
                f"does the cluster have the resources (cluster: {have})?"
            ) from e

    @property
    def actors(self) -> list[Any]:
        """The current actor handles, one per slot."""
        return [s.actor for s in self._slots]

    @property
    def in_flight(self) -> int:
        """Calls currently in flight on the pool's actors."""
        return sum(s.in_flight for s in self._slots)

    def generation(self, index: int) -> int | None:
        """The generation of the actor now in slot ``index`` (it grows on replacement)."""
        return self._slots[index].generation if 0 <= index < len(self._slots) else None

    async def health_check(self, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """Ping every actor; replace those that are dead or do not answer in time.

        Returns one info dict per slot (``ok``, ``node_id``, ``pid``, ...).
        """
        results: list[dict[str, Any]] = [{} for _ in self._slots]

        async def ping(slot: _Slot) -> None:
            generation = slot.generation
            try:
                with anyio.fail_after(timeout_s):
                    info = await slot.actor.info.remote()
                results[slot.index] = {"ok": True, "slot": slot.index, **info}
                if slot.generation == generation:
                    slot.ready = True
            except (TimeoutError, RayActorError) as e:
                results[slot.index] = {"ok": False, "slot": slot.index, "error": repr(e)}
                self._replace(slot, generation, kill=True, reason=f"health check: {e!r}")

        async with anyio.create_task_group() as tg:
            for slot in self._slots:
                tg.start_soon(ping, slot)
        return results

    def kill(self) -> None:
        """Kill every actor of the pool (idempotent)."""
        for slot in self._slots:
            _kill(slot.actor)
        self._slots = []

    async def aclose(self, timeout_s: float = 10.0) -> None:
        """Ask every actor to release its resources, then kill it."""
        with anyio.move_on_after(timeout_s, shield=True):
            async with anyio.create_task_group() as tg:
                for slot in self._slots:
                    tg.start_soon(_close_actor, slot.actor)
        self.kill()

    # -- dispatch ----------------------------------------------------------------------

    async def _acquire(
        self, avoid: int | None, prefer: Collection[int] = (), sticky: bool = False
    ) -> _Slot:
        if self._released is None:
            raise ActorError(f"the {self.name} pool is not started (call await pool.start())")
        wanted = [i for i in prefer if i != avoid] if sticky else []
        for i in wanted:
            self._wanted[i] = self._wanted.get(i, 0) + 1
        try:
            while True:
                if not self._slots:
                    raise ActorError(f"the {self.name} pool is closed")
                slot = self._pick(avoid, prefer, wanted)
                if slot is not None:
                    slot.in_flight += 1
                    slot.calls += 1
                    return slot
                await self._released.wait()
        finally:
            for i in wanted:
                self._wanted[i] -= 1

    def _pick(self, avoid: int | None, prefer: Collection[int], wanted: list[int]) -> _Slot | None:
        free = [s for s in self._slots if s.in_flight < self.max_in_flight]
        if len(free) > 1 and avoid is not None:
            free = [s for s in free if s.index != avoid] or free
        if wanted:
            # sticky: an actor that holds the task's environment, or else an idle actor
            # no waiting caller wants (work stealing: a new environment is started only
            # where it keeps an otherwise idle actor busy)
            free = [s for s in free if s.index in wanted] or [
                s for s in free if s.in_flight == 0 and not self._wanted.get(s.index, 0)
            ]
        if not free:
            return None
        # least loaded first; among equals, a preferred actor (it holds the task's
        # environment), then the one with the fewest calls
        return min(free, key=lambda s: (s.in_flight, s.index not in prefer, s.calls))

    def _release(self, slot: _Slot) -> None:
        slot.in_flight -= 1
        if self._released is not None:
            self._released.set()
            self._released = anyio.Event()

    def _replace(self, slot: _Slot, generation: int, *, kill: bool, reason: str) -> None:
        if slot.generation != generation or slot not in self._slots:
            return  # someone else already replaced it
        log.warning("replacing %s actor %d: %s", self.name, slot.index, reason)
        if kill:
            _kill(slot.actor)
        slot.actor = self._make_actor(slot.index)
        slot.generation += 1
        slot.ready = False
        self.replacements += 1

    async def _wait_ready(self, slot: _Slot) -> None:
        generation = slot.generation
        try:
            with anyio.fail_after(self.start_timeout_s):
                await slot.actor.info.remote()
        except TimeoutError as e:
            raise _StartTimeout(f"not started within {self.start_timeout_s:.0f}s") from e
        if slot.generation == generation:
            slot.ready = True

    async def call(
        self,
        method: str,
        *args: Any,
        timeout_s: float | None = None,
        prefer: Collection[int] = (),
        served: Callable[[int, int], None] | None = None,
        sticky: bool = False,
    ) -> Any:
        """Call ``method(*args)`` on the least-loaded actor; retry on actor faults.

        ``timeout_s`` overrides the pool's ``call_timeout_s`` for this call (a call
        running longer is treated as a hung actor). Among equally loaded actors, those
        whose slot index is in ``prefer`` go first; ``served(index, generation)`` is
        called with the slot that answered. With ``sticky`` (and a non-empty
        ``prefer``), the call waits for a preferred actor rather than go to another one,
        unless that one is idle and no waiting caller prefers it.

        Application errors raised by the actor's method propagate unchanged (they are
        not retried). Cancelling the caller cancels the remote call.
        """
        avoid: int | None = None
        last: BaseException | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.retries += 1
                # back off: an actor Ray is restarting fails fast until it is back
                await anyio.sleep(min(2.0, 0.05 * 2**attempt))
            slot = await self._acquire(avoid, prefer, sticky)
            generation = slot.generation
            ref: Any = None
            try:
                if not slot.ready:
                    await self._wait_ready(slot)
                ref = getattr(slot.actor, method).remote(*args)
                with anyio.fail_after(timeout_s or self.call_timeout_s):
                    result = await ref
                if served is not None:
                    served(slot.index, generation)
                return result
            except _StartTimeout as e:
                last = e
                self._replace(slot, generation, kill=True, reason=f"start-up: {e}")
            except TimeoutError as e:
                ray.cancel(ref)
                self.timeouts += 1
                last = e
                limit = timeout_s or self.call_timeout_s
                self._replace(slot, generation, kill=True, reason=f"{method} over {limit}s")
            except ActorUnavailableError as e:  # Ray is restarting it in place
                last = e
                if slot.generation == generation:
                    slot.ready = False
            except ActorDiedError as e:
                last = e
                self._replace(slot, generation, kill=True, reason=f"died: {e}"[:200])
            except RayTaskError as e:  # the method itself raised: not an actor fault
                cause = getattr(e, "cause", None)
                raise (cause if isinstance(cause, Exception) else e) from None
            except RayActorError as e:
                last = e
                self._replace(slot, generation, kill=True, reason=f"failed: {e}"[:200])
            except anyio.get_cancelled_exc_class():
                if ref is not None:
                    ray.cancel(ref)
                raise
            finally:
                self._release(slot)
            avoid = slot.index
        raise ActorError(
            f"{self.name} call {method!r} failed after {self.max_retries} retries: {last!r}"
        ) from last


def _kill(actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception:  # already gone
        log.debug("kill of a dead actor", exc_info=True)


async def _close_actor(actor: Any) -> None:
    try:
        await actor.aclose.remote()
    except Exception:
        log.debug("actor close failed", exc_info=True)


class EnvironmentPool:
    """Environment actors as one :class:`~atlas_actors.environments.base.Evaluator`,
    :class:`~atlas_actors.environments.base.Stepper` and
    :class:`~atlas_actors.environments.base.Verifier`.

    ``evaluate(task, solutions)`` splits the solutions into chunks of at most
    ``batch_size`` (and no more chunks than needed to keep every actor busy), sends
    each chunk to the least-loaded actor, and returns the outcomes in order. Each actor
    keeps reset environments for the tasks it has seen, so one pool serves many
    concurrent searches on different tasks; among equally loaded actors, one that
    already holds the task's environment (a container) is preferred. For the
    ``sticky_domains`` (default: the domains whose spec asks for it,
    ``DomainSpec.sticky``) a call waits for such an actor instead of starting the
    environment on another, unless that other actor is idle and no waiting call wants it
    (work stealing): each task's containers stay on few actors. ``cache_sizes``: how
    many environments of a domain each actor keeps ready, over the domain's preference
    (``DomainSpec.environment_cache``).
    ``root``/``transition`` (tree search) and ``verify`` (final grading) go to one actor
    each; a transition restores its state first, so any actor can serve any node.
    """

    def __init__(
        self,
        size: int,
        *,
        factory: EnvironmentFactory | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        cache_sizes: Mapping[str, int] | None = None,
        batch_size: int = 32,
        max_in_flight_per_actor: int = 2,
        call_timeout_s: float = 120.0,
        max_retries: int = 3,
        actor_options: Mapping[str, Any] | None = None,
        sticky_domains: Collection[str] | None = None,
    ) -> None:
        opts: dict[str, Any] = {
            "num_cpus": 1,
            "max_restarts": 2,
            "max_task_retries": 0,
            "scheduling_strategy": "SPREAD",
        }
        opts.update(actor_options or {})
        args = (factory, dict(options or {}), dict(cache_sizes or {}))
        actor_cls = EnvironmentActor.options(**opts)
        self.batch_size = batch_size
        self.evaluations = 0
        """Solutions evaluated (each counted once, however many retries it took)."""
        self.calls = 0
        """Successful actor calls (chunks)."""
        self.transitions = 0
        """Actions applied (tree search), each counted once."""
        self._holders: dict[str, dict[int, int]] = {}
        """Task id -> {slot index: generation} of the actors that served it."""
        self.sticky_domains = None if sticky_domains is None else frozenset(sticky_domains)
        """Domains whose calls wait for an actor that holds the task's environment (a
        container is slow to start) unless another actor is idle and unwanted; None:
        the domains whose spec asks for it."""
        self._pool = ActorPool(
            lambda i: actor_cls.remote(*args),
            size,
            max_in_flight=max_in_flight_per_actor,
            call_timeout_s=call_timeout_s,
            max_retries=max_retries,
            name="environment",
        )

    @property
    def actors(self) -> ActorPool:
        """The underlying actor slots (handles, health checks, fault counters)."""
        return self._pool

    async def start(self) -> list[dict[str, Any]]:
        return await self._pool.start()

    def chunks(self, n: int) -> list[tuple[int, int]]:
        """``(start, stop)`` ranges the pool splits ``n`` solutions into."""
        if n == 0:
            return []
        size = min(self.batch_size, max(1, math.ceil(n / self._pool.size)))
        return [(i, min(n, i + size)) for i in range(0, n, size)]

    def _prefer(self, task: Task) -> set[int]:
        held = self._holders.get(task.id, {})
        return {i for i, gen in held.items() if self._pool.generation(i) == gen}

    def _served(self, task: Task) -> Callable[[int, int], None]:
        def note(index: int, generation: int) -> None:
            held = self._holders.setdefault(task.id, {})
            held[index] = generation
            if len(self._holders) > 4096:  # forget the oldest tasks
                self._holders.pop(next(iter(self._holders)))

        return note

    async def _call(self, method: str, task: Task, *args: Any) -> Any:
        return await self._pool.call(
            method,
            task,
            *args,
            prefer=self._prefer(task),
            served=self._served(task),
            sticky=self._sticky(task.domain),
        )

    def _sticky(self, domain: str) -> bool:
        if self.sticky_domains is not None:
            return domain in self.sticky_domains
        return pool_preferences(domain)[1]

    async def root(self, task: Task) -> Transition:
        """The task's initial state (tree search)."""
        out: Transition = await self._call("root", task)
        return out

    async def transition(self, task: Task, state: dict[str, Any], action: Any) -> Transition:
        """Restore ``state`` on some actor and apply ``action`` there."""
        out: Transition = await self._call("transition", task, state, action)
        self.transitions += 1
        return out

    async def invoke(self, task: Task, tool: str, /, **kwargs: Any) -> Any:
        """Call a tool of the task's environment on some actor (a ``Toolbox``)."""
        return await self._call("invoke", task, tool, kwargs)

    async def verify(self, task: Task, solution: Any) -> Outcome:
        """The environment's full ``verify`` of a final answer (hidden answers included)."""
        out: Outcome = await self._call("verify", task, solution)
        return out

    async def evaluate(self, task: Task, solutions: Sequence[Any]) -> list[Outcome]:
        solutions = list(solutions)
        ranges = self.chunks(len(solutions))
        results: list[list[Outcome]] = [[] for _ in ranges]

        async def run(k: int, start: int, stop: int) -> None:
            chunk = solutions[start:stop]
            outcomes: list[Outcome] = await self._call("evaluate", task, chunk)
            if len(outcomes) != len(chunk):
                raise ActorError(
                    f"environment actor returned {len(outcomes)} outcomes for {len(chunk)}"
                )
            results[k] = outcomes
            self.evaluations += len(chunk)
            self.calls += 1

        if len(ranges) == 1:
            await run(0, *ranges[0])
        else:
            async with anyio.create_task_group() as tg:
                for k, (start, stop) in enumerate(ranges):
                    tg.start_soon(run, k, start, stop)
        return [o for chunk in results for o in chunk]

    def stats(self) -> dict[str, int]:
        return {
            "environment_actors": self._pool.size,
            "evaluations": self.evaluations,
            "transitions": self.transitions,
            "calls": self.calls,
            "in_flight": self._pool.in_flight,
            "retries": self._pool.retries,
            "replacements": self._pool.replacements,
            "timeouts": self._pool.timeouts,
        }

    async def health_check(self, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        return await self._pool.health_check(timeout_s)

    async def aclose(self) -> None:
        await self._pool.aclose()


class DiscriminatorPool:
    """Discriminator actors as one :class:`~atlas_actors.search.base.Scorer` and
    :class:`~atlas_actors.search.base.Assessor`: value estimates for the nodes of many
    tree searches at once."""

    def __init__(
        self,
        size: int,
        *,
        factory: ScorerFactory | None = None,
        max_in_flight_per_actor: int = 8,
        call_timeout_s: float = 120.0,
        max_retries: int = 3,
        actor_options: Mapping[str, Any] | None = None,
    ) -> None:
        opts: dict[str, Any] = {"num_cpus": 0, "max_restarts": 2, "max_task_retries": 0}
        opts.update(actor_options or {})
        actor_cls = DiscriminatorActor.options(**opts)
        self.scored = 0
        self._pool = ActorPool(
            lambda i: actor_cls.remote(factory),
            size,
            max_in_flight=max_in_flight_per_actor,
            call_timeout_s=call_timeout_s,
            max_retries=max_retries,
            name="discriminator",
        )

    @property
    def actors(self) -> ActorPool:
        return self._pool

    async def start(self) -> list[dict[str, Any]]:
        return await self._pool.start()

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        value, reason = await self._pool.call("score", task, candidate)
        self.scored += 1
        return float(value), str(reason)

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        """A value estimate with explanation, confidence and source (an Assessor)."""
        estimate: ValueEstimate = await self._pool.call("assess", task, candidate)
        self.scored += 1
        return estimate

    def stats(self) -> dict[str, int]:
        return {
            "discriminator_actors": self._pool.size,
            "scored": self.scored,
            "discriminator_retries": self._pool.retries,
            "discriminator_replacements": self._pool.replacements,
        }

    async def aclose(self) -> None:
        await self._pool.aclose()
