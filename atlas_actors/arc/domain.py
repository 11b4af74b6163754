"""The ARC domain's parts: its offline proposer, the proposers' options and its result
reporter (its LLM proposer is :func:`atlas_actors.arc.llm_proposer.shared_llm_proposer`).

Listed in :mod:`atlas_actors.domains` (imported only when an ARC task is searched). The
reporter reads the test outputs *after* the search, only to say whether the answer was
right: the search scored candidates on the train pairs alone.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.arc.dsl import readable
from atlas_actors.arc.environment import ARCEnvironment
from atlas_actors.arc.proposer import DSLProposer
from atlas_actors.config import LLMConfig
from atlas_actors.environments.base import Verifier
from atlas_actors.search.base import Proposer
from atlas_actors.search.proposers import ProposerMode, check_mode
from atlas_actors.types import Candidate, Task, TaskResult, solution_key


class ARCOptions(BaseModel):
    """The ARC proposers' options (``EngineConfig.proposer_options["arc"]``)."""

    model_config = ConfigDict(extra="forbid")

    mode: ProposerMode = "auto"
    """``offline`` (the DSL proposer), ``llm`` (needs an LLM endpoint), ``hybrid`` (both
    into one Mind Evolution population: the DSL's first, so a task it solves at once
    costs no LLM call, then the LLM refines the programs it found alongside its
    enumeration), ``auto`` (``llm`` when an endpoint is given, else ``offline``)."""
    cpu_limits: bool = True
    """False lifts the DSL proposer's per-step CPU-time safety nets, so its work is
    bounded by op applications alone and a run with an evaluation budget gives the same
    answers on any machine (the CLI does this with ``--budget``). The LLM proposer
    ignores it."""
    time_limit_s: float | None = Field(default=None, gt=0.0)
    """The search's wall-clock time limit, told to the DSL proposer so that its
    enumeration steps end at it (the search checks the limit only between proposer
    calls); None: the proposer reads no wall clock. The LLM proposer ignores it; in the
    hybrid mode, LLM calls still running at the limit are cancelled."""
    check_views: bool = False
    """Rank the DSL programs that fit every train pair by whether their test answers keep
    the views of the task they keep on the train inputs (``DSLProposer(check_views=)``;
    see docs/arc.md). The LLM proposer ignores it."""
    evolve: bool = False
    """False: every mutate or crossover call of the DSL proposer only continues its
    enumeration (enumeration alone, inside Mind Evolution's loop). True: mutation and
    crossover vary the programs (a step replaced by an enumerated one, splices of two
    parents, tweaks). At an equal budget of op applications the variations solved no
    more held-out training tasks than enumeration alone (docs/arc.md), so they are off
    by default. The LLM proposer ignores it."""


def make_proposer(
    task: Task,
    llm: LLMConfig | None = None,
    *,
    mode: ProposerMode = "auto",
    cpu_limits: bool = True,
    time_limit_s: float | None = None,
    check_views: bool = False,
    evolve: bool = False,
) -> Proposer:
    """The offline proposer for one search of an ARC task: a fresh DSL proposer (it keeps
    per-search state, so each search gets its own and the same seed gives the same
    result however many searches ran before or beside it). ``mode`` ``llm`` or
    ``hybrid`` is a ``ConfigError`` here (they need an endpoint: see
    :func:`atlas_actors.arc.llm_proposer.shared_llm_proposer`). ``cpu_limits``,
    ``time_limit_s``, ``check_views`` and ``evolve``: see :class:`ARCOptions`."""
    check_mode(mode, task, has_llm=False)
    proposer = DSLProposer(time_limit=time_limit_s, check_views=check_views, evolve=evolve)
    if not cpu_limits:
        inf = float("inf")
        proposer.initial_seconds = proposer.step_seconds = proposer.second_seconds = inf
    return proposer


def pick_attempts(candidates: list[Candidate], n_tests: int) -> list[dict[str, Any]]:
    """Two attempts per test input (ARC Prize format): going down the ranked candidates,
    the first program's prediction for that input, then the next program's prediction
    that differs from it. Programs that failed on an input are skipped for that input;
    an input no program could answer gets ``[[0]]``.

    Among programs that get the same number of train pairs exactly right, a prediction
    the environment has doubts about (``Outcome.doubts``: it breaks a property every
    train pair has, see :class:`~atlas_actors.arc.environment.TrainInvariants`) goes
    after those it has none about; a program with more train pairs right still goes
    first. A doubt demotes the top program's prediction to the second attempt, never
    further: the property may be the train pairs' coincidence (every pair changes
    something, and this test input needs no change)."""
    return attempts_and_sources(candidates, n_tests)[0]


def attempts_and_sources(
    candidates: list[Candidate], n_tests: int
) -> tuple[list[dict[str, Any]], list[int]]:
    """:func:`pick_attempts`, and the indices into ``candidates`` of the programs whose
    predictions were picked, in candidate order (given those programs alone, in that
    order, the same attempts are picked: what memory keeps of an unsolved task)."""
    rows: list[tuple[float, list[Any], list[Any], int]] = []
    for index, c in enumerate(candidates):
        outcome = c.outcome
        if outcome is None or not outcome.answers:
            continue
        exact = outcome.exact_fraction or 0.0
        rows.append((exact, list(outcome.answers), list(outcome.doubts or []), index))
    attempts: list[dict[str, Any]] = []
    used: set[int] = set()
    for i in range(n_tests):
        options = [
            (-exact, bool(doubts[i]) if i < len(doubts) else False, rank, p[i], index)
            for rank, (exact, p, doubts, index) in enumerate(rows)
            if i < len(p) and p[i] is not None
        ]
        top = min(options, key=lambda o: (o[0], o[2])) if options else None
        options.sort(key=lambda o: o[:3])
        first = options[0] if options else None
        second: tuple[float, bool, int, Any, int] | None
        if top is not None and first is not None and top[3] != first[3]:
            second = top  # a doubted top prediction: demoted to the second attempt
        else:
            second = next((o for o in options if first is not None and o[3] != first[3]), first)
        used.update(o[4] for o in (first, second) if o is not None)
        attempts.append(
            {
                "attempt_1": _plain(first[3] if first else [[0]]),
                "attempt_2": _plain(second[3] if second else [[0]]),
            }
        )
    return attempts, sorted(used)


def _plain(grid: Any) -> list[list[int]]:
    return [[int(v) for v in row] for row in grid]


async def report(
    task: Task, candidates: list[Candidate], result: TaskResult, verifier: Verifier | None
) -> None:
    """Fill the ARC parts of ``result``: the program as Python, two attempts per test
    input, and ``solved`` when the task has test outputs (read here, after the search)."""
    result.program = readable(result.solution)
    env = ARCEnvironment()  # reporting only: a fresh environment reads the test outputs
    await env.reset(task)
    result.attempts, sources = attempts_and_sources(candidates, len(env.test_inputs))
    if not result.checks_passed or any(result.doubts or ()):
        # no program passes every train pair, or the one that does answers with doubts:
        # keep the other programs behind the attempts, so a recall re-verifies them and
        # picks the same attempts
        keep = {solution_key(result.solution), *map(solution_key, result.alternatives)}
        for i in sources:
            key = solution_key(candidates[i].solution)
            if key not in keep:
                keep.add(key)
                result.alternatives.append(candidates[i].solution)
    if env.has_test_outputs:
        verdict = await env.verify_attempts(
            [[a["attempt_1"], a["attempt_2"]] for a in result.attempts]
        )
        result.solved = verdict.success
