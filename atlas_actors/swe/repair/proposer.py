"""OfflineRepairProposer: tree-search children from fault localisation, edit operators
and a fast screen, with no model.

For a node (a cumulative patch), the proposer:

1. localises the fault once per task (``localize``: per-test line coverage of the
   failing and passing tests ranked by Ochiai, in the task's environment);
2. reads the most suspicious files as they are at the node (``read_files``) and maps the
   suspiciousness of the base's lines onto them (a node's patch may have moved lines);
3. enumerates single edits of their suspicious lines with the frozen operator catalogue
   (:func:`~atlas_actors.swe.repair.operators.generate_edits`), ranked by prior: the
   family's share of real fixes × the line's suspiciousness, spread evenly over the
   family's variants on that line (a family with twenty candidate names does not crowd
   out a family with one), × a remembered family's boost; a child of a child composes
   two edits, and a *sibling* edit makes one edit's change at every other suspicious
   line with the same code (:mod:`~atlas_actors.swe.repair.siblings`: one mistake made
   twice, where no single edit moves the tests);
4. screens the best of them fast (``try_candidates``: one container exec per ``screen``
   candidates, one fork per candidate: every failing test, then the passing ones up to
   the first that breaks); each batch also runs the node itself, unchanged, so its
   failing tests' failures are known in the same interpreter;
5. offers the edits that **move the tests**: a candidate's progress is (failing tests
   it fixes, passing tests kept before the first regression), and a child must make
   more progress than its node (the root's is what the base does); among those, edits
   that pass every test first, then by progress, then by prior. Below them come edits
   that fix no more tests but **move a failing test** (:func:`movement`): it now fails
   at a later line of the test (an assertion before it passes), or by an assertion
   where it raised, or the same assertion sees another value, while no failing test
   goes back and no passing test breaks. They are the first half of a fix whose halves
   each change nothing the tests count; a node gets at most ``max_moved`` of them, only
   in answers without an edit that passes every test, and a node reached by such a move
   screens only its ``moved_screen`` likeliest edits and offers only edits that make
   progress (no chain of moves). The search then verifies its picks fully (``score``)
   and spends its budget where the tests move; a node whose edits are all screened
   without progress or move has no more ideas.

A node's edits are screened when it is first expanded (up to ``first_screen`` of them,
fewer once enough pass every test), and the ranking is kept: expanding the node again
offers the next edits without screening again; when they run out, the next ``screen``
edits are screened. Concurrent calls for one node (the search may expand a node several
times in one batch) wait for each other, in the order they started: the plan is built and
screened once and each call gets the next distinct edits. Deterministic: the same node
gives the same proposals. Everything the environment does runs through a
:class:`~atlas_actors.environments.base.Toolbox` (``LocalEvaluator`` or the environment
actors), so it works with Ray.
"""

from __future__ import annotations

import difflib
import logging
import random
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from atlas_actors.environments.base import Toolbox
from atlas_actors.errors import ConfigError
from atlas_actors.search.base import NodeView, Proposals, ProposedAction
from atlas_actors.swe.repair.antipatterns import (
    ANTI_PATTERNS,
    DEFAULT_ANTI_PATTERNS,
    Evidence,
    refusal,
)
from atlas_actors.swe.repair.hints import MAX_NUMBERS, RepairHints, hints_from
from atlas_actors.swe.repair.probes import (
    Variant,
    broke,
    ending,
    numbers_in_test,
    rebuilt_test_file,
    split_test_id,
    variants,
)
from atlas_actors.swe.repair.ranking import Closeness, closeness
from atlas_actors.swe.repair.timeouts import timed_out
from atlas_actors.types import Task, solution_key

log = logging.getLogger(__name__)

SOURCE_PREFIX = "offline:"
"""``ProposedAction.source`` of this proposer's actions: ``offline:<family>``."""

_PATHS = re.compile(r"^\+\+\+ b/(\S+)", re.MULTILINE)


def patch_paths(patch: str) -> list[str]:
    """The files a git patch changes (its ``+++ b/<path>`` lines), in order."""
    return list(dict.fromkeys(_PATHS.findall(patch or "")))


def remap_lines(old: str, new: str, scores: Mapping[int, float]) -> dict[int, float]:
    """Suspiciousness of ``old``'s lines carried onto ``new``'s: unchanged lines keep
    theirs (at their new numbers), a changed block's lines take the block's highest."""
    if old == new:
        return dict(scores)
    a, b = old.splitlines(), new.splitlines()
    out: dict[int, float] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                if (v := scores.get(i1 + k + 1)) is not None:
                    out[j1 + k + 1] = v
        else:
            v = max((scores.get(n + 1, 0.0) for n in range(i1, i2)), default=0.0)
            if v > 0:
                for n in range(j1, j2):
                    out[n + 1] = v
    return out


Progress = tuple[int, int]
"""(FAIL_TO_PASS tests that pass, PASS_TO_PASS tests that pass before the first that
fails): larger is closer to a fix."""

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_SCRATCH = re.compile(r"atlas-batch-\w+/c\d+")
_BROKEN = ("timeout", "crashed", "not_found")
"""Verdicts of a test that did not get to fail by itself (hung, died, not collected)."""


@dataclass(frozen=True)
class Failure:
    """How a failing test failed under one candidate (its *failure signature*)."""

    outcome: str
    """The verdict (``failed``, ``error``, ``timeout``, ...)."""
    line: int
    """The line of the test's own file the failure passed last (0: none did)."""
    assertion: bool
    """The test failed by an assertion (it ran the code and checked a wrong result), not
    by an exception of the code or a broken run."""
    message: str
    """``Type: first line`` with memory addresses and the candidate's scratch folder
    blanked (they differ from one candidate to the next)."""


def failure_of(verdict: Any) -> Failure:
    """The failure signature of a test's verdict (a :class:`TestVerdict`)."""
    message = _SCRATCH.sub("<tmp>", _ADDRESS.sub("0x?", str(verdict.message or "")))
    outcome = str(verdict.outcome)
    assertion = outcome == "failed" and message.startswith(("AssertionError", "Failed:"))
    return Failure(outcome, int(getattr(verdict, "line", 0) or 0), assertion, message)


def failures(result: Any, failing: set[str]) -> dict[str, Failure]:
    """The failure signatures of the failing tests (``failing``) that ran and did not pass
    under a screened candidate (a :class:`CandidateResult`)."""
    return {t.test: failure_of(t) for t in result.tests if t.test in failing and not t.passed}


MOVED_FURTHER = 2
"""A failing test got further: it fails at a later line of the test, or by an assertion
where it raised before at the same line."""
MOVED_CHANGED = 1
"""A failing test fails at the same place in the same way, with another message (the
observed value, the exception's text)."""


def movement(before: Mapping[str, Failure], after: Mapping[str, Failure]) -> int:
    """How a candidate moved the failing tests it did not fix, against its node:
    :data:`MOVED_FURTHER`, :data:`MOVED_CHANGED`, or 0 (nothing moved, or some test went
    back: it fails earlier, raises where it asserted, hangs or dies). ``before``: the
    node's failures; ``after``: the candidate's (a test of ``before`` missing from
    ``after`` passed or did not run, and counts as not moved here: fixing a test is
    progress, which is ranked above any move)."""
    best = 0
    for test, old in before.items():
        new = after.get(test)
        if new is None or new == old:
            continue
        if new.outcome in _BROKEN:
            if old.outcome not in _BROKEN:
                return 0
            continue
        if old.outcome in _BROKEN and new.outcome not in _BROKEN:
            best = max(best, MOVED_FURTHER)
            continue
        place_old, place_new = (old.line, old.assertion), (new.line, new.assertion)
        if old.line and new.line:
            if place_new < place_old:
                return 0
            best = max(best, MOVED_FURTHER if place_new > place_old else MOVED_CHANGED)
        elif old.assertion and not new.assertion:
            return 0
        else:  # no line of the test to compare: the kind of failure, then the message
            best = max(best, MOVED_FURTHER if new.assertion > old.assertion else MOVED_CHANGED)
    return best


@dataclass
class _Screened:
    action: dict[str, Any]
    label: str
    family: str
    prior: float
    passed: bool
    progress: Progress
    moved: int = 0
    """How it moved the node's failing tests without fixing more (see :func:`movement`)."""
    closeness: Closeness | None = None
    """For an edit that passed every test: how close it stays to the original (the
    ranking among green patches, :mod:`~atlas_actors.swe.repair.ranking`)."""


_NO_CLOSENESS = Closeness(0, 0, 0)


@dataclass
class _NodePlan:
    edits: list[Any]
    """Candidate edits not screened yet, best prior first."""
    scores: dict[str, dict[int, float]] = field(default_factory=dict)
    """Per file, the suspiciousness of the node's lines (the base's, carried over)."""
    screened: int = 0
    ranked: list[_Screened] = field(default_factory=list)
    """Screened edits not offered yet, best first."""
    moved_offered: int = 0
    """Children offered because they moved the failing tests (not more progress)."""
    hung: set[tuple[str, str, int]] = field(default_factory=set)
    """(path, family, line) of the screened edits that hit a test timeout: that
    family's other edits of that line are screened last."""
    timeouts: int = 0
    """Screened edits of this node whose run hit a test timeout."""


class OfflineRepairProposer:
    """Proposes edits at a tree node without a model (see the module docstring).

    Args:
        toolbox: the task's environment tools (``localize``, ``read_files``,
            ``try_candidates``): a ``LocalEvaluator`` or an ``EnvironmentPool``.
        families: operator families to use (default: the whole catalogue).
        max_files: files edited at most (the most suspicious ones).
        max_lines: suspicious lines kept (the highest scores; lines tied with the last
            one kept are kept too, up to four times as many: see :func:`top_lines`).
        screen: candidates screened per batch (one container exec): the node itself
            (for its failures) and ``screen - 1`` edits.
        first_screen: edits screened when a node is first expanded (fewer when enough
            of them pass every test); later expansions screen more only when the node's
            screened edits run out.
        max_moved: children a node gets at most for moving its failing tests without
            fixing one (see :func:`movement`); 0 keeps only edits that make progress.
        moved_screen: edits screened at most under a node reached by such a move (the
            likeliest ones: three batches of the default ``screen``); its children must
            make progress.
        family_boost: multiplies the prior of these families (memory raises the
            families that fixed similar failures).
        antipatterns: the anti-patterns refused before the screen (names of
            :data:`~atlas_actors.swe.repair.antipatterns.ANTI_PATTERNS`; default
            :data:`~atlas_actors.swe.repair.antipatterns.DEFAULT_ANTI_PATTERNS`, empty
            for none). A refused edit is never screened; its label, with the reason, is
            kept in :attr:`refused`.
        probe: run the failing tests on inputs near the tested ones for each edit that
            passes every test, and refuse one that raises where the base does not
            (:mod:`~atlas_actors.swe.repair.probes`).
        rank_greens: order the edits that pass every test by how close they stay to
            the original, then by fault localisation's rank of their line
            (:mod:`~atlas_actors.swe.repair.ranking`), and offer one of them per answer,
            the best (the search would keep the smallest of several); otherwise by
            prior alone, as many as asked.
        wider: run each edit that passes every graded test on the wider suite (the
            toolbox's ``wider_tests``: every test in the graded tests' folders that passes
            at base) and refuse one that breaks any of them (green but wrong).
        hang_patience: when a node's first screening has met this many edits that hit a
            test timeout, it stops as soon as one edit passes every test (rather than
            screening on for ``k`` of them: each hanging edit costs a timeout).
        reserve: under a time limit (``NodeView.time_left``), the share of the time left
            at a node's first screening that the screen leaves for verifying what it
            found: past that point, an edit in hand that passes every test or makes
            progress ends the screening (the rest of the plan stays for later
            expansions). Runs without a time limit never read the clock here.
    """

    def __init__(
        self,
        toolbox: Toolbox,
        *,
        families: Sequence[str] | None = None,
        max_files: int = 3,
        max_lines: int = 12,
        screen: int = 64,
        first_screen: int = 640,
        max_moved: int = 0,
        moved_screen: int = 189,
        family_boost: Mapping[str, float] | None = None,
        antipatterns: Sequence[str] = DEFAULT_ANTI_PATTERNS,
        probe: bool = True,
        rank_greens: bool = True,
        hang_patience: int = 32,
        wider: bool = False,
        reserve: float = 0.25,
    ) -> None:
        if screen < 2 or max_files < 1 or max_lines < 1 or max_moved < 0:
            raise ConfigError(
                "screen must be at least 2, max_files and max_lines at least 1, "
                "max_moved at least 0"
            )
        if not 0.0 <= reserve < 1.0:
            raise ConfigError(f"reserve={reserve}: a share of the time left, in [0, 1)")
        unknown = sorted(set(antipatterns) - set(ANTI_PATTERNS))
        if unknown:
            raise ConfigError(
                f"antipatterns: unknown {', '.join(unknown)}; allowed: {', '.join(ANTI_PATTERNS)}"
            )
        self.antipatterns = tuple(a for a in ANTI_PATTERNS if a in set(antipatterns))
        self.probe = probe
        self.wider = wider
        self.rank_greens = rank_greens
        self.hang_patience = hang_patience
        self.reserve = reserve
        self.toolbox = toolbox
        self.families = list(families) if families is not None else None
        self.max_files = max_files
        self.max_lines = max_lines
        self.screen = screen
        self.first_screen = first_screen
        self.max_moved = max_moved
        self.moved_screen = moved_screen
        self.family_boost = dict(family_boost or {})
        self._locks: dict[tuple[str, str], anyio.Lock] = {}
        """Per (task, node patch): held while a call builds, screens or pops the plan."""
        self._localized: dict[str, dict[str, dict[int, float]]] = {}
        self._base_texts: dict[tuple[str, str], str | None] = {}
        self._plans: dict[tuple[str, str], _NodePlan] = {}
        self._progress: dict[tuple[str, str], Progress] = {}
        """(task, path of actions) -> the progress of the node they lead to, as screened."""
        self._moved_only: set[tuple[str, str]] = set()
        """(task, path of actions) of the nodes whose last edit only moved the failing
        tests: their children must make progress (no chain of moves without progress)."""
        self._root_progress: dict[str, Progress] = {}
        self._hints: dict[str, RepairHints] = {}
        """Per task: the issue's constants and messages, the failing tests' exceptions."""
        self._covered: dict[str, dict[str, set[int]]] = {}
        """Per task and file: the base's lines some failing test runs."""
        self._assertion_failures: dict[str, bool] = {}
        """Per task: every failing test failed by an assertion at the base."""
        self._test_sources: dict[tuple[str, str], str | None] = {}
        """(task, test file) -> the file as the tests run it (test patch applied)."""
        self.refused: dict[str, list[str]] = {}
        """Per task: the edits refused as anti-patterns, ``"<anti-pattern>: <reason>:
        <label>"``, in the order the plans met them."""
        self.screened: dict[str, int] = {}
        """Edits screened per task."""
        self.swapped: dict[str, int] = {}
        """Per task: screened edits whose tests ran with only the changed functions'
        code swapped (no re-import: ``CandidateResult.mode``)."""
        self.timeouts: dict[str, int] = {}
        """Per task: screened edits whose run hit a test timeout (each counted once)."""
        self.passing: dict[str, set[str]] = {}
        """Distinct screened patches (node patch + edit) that passed every selected test."""
        self.passing_diffs: dict[str, list[str]] = {}
        """Per task: the distinct screened patches that passed every selected test, as
        diffs against the base commit, in the order found."""
        self.first_passing: dict[str, tuple[int, dict[str, str | None]]] = {}
        """Per task: how many edits had been screened when the first one passed every
        selected test, and that candidate's files (path -> text)."""

    # -- what the search reads ---------------------------------------------------------

    def alternatives(self, task_id: str) -> list[str]:
        """Other patches that passed every selected test in the screen (several different
        ones hint at weak tests), smallest first."""
        return sorted(self.passing_diffs.get(task_id, []), key=lambda d: (len(d), d))

    def report(self, task_id: str) -> dict[str, float]:
        """Counters for a task's result: edits screened, distinct passing patches (several
        different ones hint at weak tests)."""
        out = {
            "screened": float(self.screened.get(task_id, 0)),
            "swapped": float(self.swapped.get(task_id, 0)),
            "passing_patches": float(len(self.passing.get(task_id, ()))),
            "refused": float(len(self.refused.get(task_id, ()))),
            "timeouts": float(self.timeouts.get(task_id, 0)),
        }
        if task_id in self.first_passing:
            out["first_passing_at"] = float(self.first_passing[task_id][0])
        return out

    # -- proposing -----------------------------------------------------------------------

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        patch = node.solution if isinstance(node.solution, str) else ""
        key = (task.id, solution_key(patch))
        # Concurrent expansions of one node (``node.slot`` > 0) queue here in the order
        # they started: the first builds and screens the plan, the next ones wait and get
        # the next-ranked edits (popped from the plan: distinct from the earlier ones').
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            return await self._propose(task, node, key, patch, k)

    async def _propose(
        self, task: Task, node: NodeView, key: tuple[str, str], patch: str, k: int
    ) -> list[ProposedAction]:
        at = (task.id, solution_key(node.actions))  # the node, by its path from the root
        plan = self._plans.get(key)
        if plan is None:
            suspicious = await self._suspicious(task)
            if not suspicious:
                return Proposals(
                    [],
                    problems=["fault localisation found no suspicious line in the repository"],
                )
            edits, scores = await self._edits(task, node, patch, suspicious)
            plan = _NodePlan(edits=edits, scores=scores)
            if at in self._moved_only:
                # a node reached by a move is a guess: only its likeliest edits are screened
                plan.edits = plan.edits[: self.moved_screen]
            self._plans[key] = plan
        tried = {solution_key(a) for a in node.tried}
        here = self._progress.get(at)
        if here is None:
            here = self._root_progress.get(task.id, (0, 0)) if not node.actions else (0, 0)
        # Under a time limit, once an edit passes or makes progress, screening stops with
        # ``reserve`` of the time left at the call still to go (to verify what it found).
        hurry = (
            time.monotonic() + node.time_left * (1 - self.reserve)
            if node.time_left is not None
            else None
        )

        def late() -> bool:
            return hurry is not None and time.monotonic() >= hurry

        if plan.screened == 0:
            # screen this node's edits up front (in batches), until ``k`` pass every test
            # or ``first_screen`` are screened: a full verify costs a hundred screens, so
            # the search should see a node's best edits, not merely its likeliest
            while plan.edits and plan.screened < self.first_screen:
                await self._screen(task, node, patch, plan)
                greens = sum(1 for r in plan.ranked if r.passed)
                if greens >= k or (greens and plan.timeouts >= self.hang_patience):
                    break
                if late() and any(r.passed or r.progress > here for r in plan.ranked):
                    break
        may_move = at not in self._moved_only
        out: list[ProposedAction] = []
        passing = False
        while len(out) < k:
            while plan.ranked and len(out) < k:
                s = plan.ranked[0]
                made = s.passed or s.progress > here
                moved = (
                    not made and may_move and s.moved > 0 and plan.moved_offered < self.max_moved
                )
                if moved and passing:
                    # edits that only move the failing tests (ranked after every edit
                    # that makes progress) wait while this answer has one that passes
                    return out
                if s.passed and passing and self.rank_greens:
                    # one green edit per answer, the best ranked: the search keeps the
                    # smallest verified patch, which would undo the ranking; the others
                    # wait for the next expansion, should this one not verify
                    return out
                plan.ranked.pop(0)
                if not (made or moved) or solution_key(s.action) in tried:
                    continue
                passing = passing or s.passed
                to = (task.id, solution_key([*node.actions, s.action]))
                self._progress[to] = s.progress
                if moved:
                    plan.moved_offered += 1
                    self._moved_only.add(to)
                out.append(
                    ProposedAction(
                        action=s.action,
                        prior=(1.0 if s.passed else 0.0)
                        + 0.1 * s.progress[0]
                        + (0.02 * s.moved if moved else 0.0)
                        + s.prior,
                        label=s.label,
                        source=SOURCE_PREFIX + s.family,
                    )
                )
            if len(out) >= k or not plan.edits:
                break
            if passing and plan.timeouts >= self.hang_patience:
                break  # one green edit is enough where screening costs timeouts
            if out and late():
                break  # offer what is in hand: the time left is for verifying it
            await self._screen(task, node, patch, plan)
        if not out:
            return Proposals(
                [],
                notes=[
                    f"no edit left at this node: {plan.screened} screened"
                    + (f" ({plan.timeouts} hit a test timeout)" if plan.timeouts else "")
                    + ", none makes progress on the tests"
                ],
            )
        return out

    async def node_edits(self, task: Task, node: NodeView) -> list[Any]:
        """The edits this proposer would screen at ``node``, best first (anti-patterns
        refused): the plan of a node before any screening. Empty when localisation
        finds no suspicious line."""
        suspicious = await self._suspicious(task)
        if not suspicious:
            return []
        patch = node.solution if isinstance(node.solution, str) else ""
        return (await self._edits(task, node, patch, suspicious))[0]

    async def _failing_tests(self, task: Task) -> set[str]:
        loc = await self.toolbox.invoke(task, "localize")  # cached by the environment
        return set(loc.failing)

    async def _suspicious(self, task: Task) -> dict[str, dict[int, float]]:
        """Per file, the suspicious lines of the base (the most suspicious kept)."""
        found = self._localized.get(task.id)
        if found is None:
            loc = await self.toolbox.invoke(task, "localize")
            # what the base does: its failing tests fail; its passing ones pass
            kept = sum(1 for t in loc.tests if t.passing and t.test in set(loc.passing))
            self._root_progress[task.id] = (0, kept)
            lines = top_lines(loc.lines, self.max_lines)
            found = {}
            for s in lines:
                found.setdefault(s.path, {})[s.line] = float(s.score)
            self._localized[task.id] = found
            covered: dict[str, set[int]] = {}
            for s in loc.lines:
                if s.failed > 0:
                    covered.setdefault(s.path, set()).add(s.line)
            self._covered[task.id] = covered
            statement = str(task.context.get("problem_statement") or task.description or "")
            failing = set(loc.failing)
            self._assertion_failures[task.id] = all(
                t.message.startswith("AssertionError") for t in loc.tests if t.test in failing
            )
            hints = hints_from(
                statement, (t.message for t in loc.tests if t.test in failing and t.message)
            )
            numbers: dict[int, None] = {}
            for test in loc.failing:
                source = await self._test_source(task, split_test_id(test)[0])
                if source:
                    numbers.update(dict.fromkeys(numbers_in_test(source, test, MAX_NUMBERS)))
            self._hints[task.id] = replace(hints, test_numbers=tuple(numbers)[:MAX_NUMBERS])
        return found

    async def _edits(
        self,
        task: Task,
        node: NodeView,
        patch: str,
        suspicious: dict[str, dict[int, float]],
    ) -> tuple[list[Any], dict[str, dict[int, float]]]:
        """The node's edits, best first, and its files' suspiciousness by line."""
        from atlas_actors.swe.repair.operators import generate_edits
        from atlas_actors.swe.repair.siblings import sibling_edits

        ranked = sorted(suspicious, key=lambda p: -max(suspicious[p].values()))
        files = ranked[: self.max_files]
        want = [p for p in files if (task.id, p) not in self._base_texts]
        if want:
            base = await self.toolbox.invoke(task, "read_files", paths=want)
            for p in want:
                self._base_texts[(task.id, p)] = base.get(p)
        now = await self.toolbox.invoke(task, "read_files", paths=files, state=node.state)
        edits: list[Any] = []
        scores: dict[str, dict[int, float]] = {}
        for path in files:
            text, base_text = now.get(path), self._base_texts.get((task.id, path))
            if text is None or base_text is None:
                continue
            lines = remap_lines(base_text, text, suspicious[path])
            scores[path] = lines
            try:
                single = generate_edits(
                    text, path, lines, families=self.families, hints=self._hints.get(task.id)
                )
            except ValueError as e:  # a file the operators cannot read
                log.warning("task %s: no edits for %s: %s", task.id, path, e)
                continue
            made = single + sibling_edits(single, text, path, lines)
            edits += self._refuse(task, path, base_text, text, made)
        # a family's prior is the chance a fix is of that kind: spread it over the family's
        # variants on the line, so families with many variants do not crowd out the rest
        variants: dict[tuple[str, str, int], int] = {}
        for edit in edits:
            where = (edit.path, edit.family, edit.line)
            variants[where] = variants.get(where, 0) + 1

        def weight(edit: Any) -> float:
            share = edit.prior / variants[(edit.path, edit.family, edit.line)]
            return float(share * self.family_boost.get(edit.family, 1.0))

        edits.sort(key=lambda edit: (-weight(edit), edit.path, edit.line))
        return edits, scores

    def _refuse(
        self, task: Task, path: str, base_text: str, text: str, edits: list[Any]
    ) -> list[Any]:
        """``edits`` without the anti-patterns (recorded in :attr:`refused`)."""
        if not self.antipatterns:
            return edits
        base_covered = self._covered.get(task.id, {}).get(path, set())
        covered = remap_lines(base_text, text, dict.fromkeys(base_covered, 1.0))
        evidence = Evidence(
            covered={path: set(covered)},
            assertion_failures=self._assertion_failures.get(task.id, False),
        )
        kept = []
        refused = self.refused.setdefault(task.id, [])
        for edit in edits:
            why = refusal(edit, evidence, self.antipatterns)
            if why is None:
                kept.append(edit)
            else:
                refused.append(f"{why[0]}: {why[1]}: {edit.label}")
        return kept

    async def _screen(self, task: Task, node: NodeView, patch: str, plan: _NodePlan) -> None:
        """Screen the next batch of ``plan``'s edits and rank them into ``plan.ranked``.

        The batch starts with the node itself (its changed files, no edit): how its
        failing tests fail, in the same exec as the edits (the same interpreter, hash seed
        and scratch layout), is what an edit's :func:`movement` is measured against."""
        from atlas_actors.swe.repair.batch import CandidatePatch

        # with moves on, the batch starts with the node itself (its failures, for
        # :func:`movement`); with them off, the screen ranks edits by progress alone
        lead = 1 if self.max_moved > 0 else 0
        size = self.screen - lead
        batch, plan.edits = plan.edits[:size], plan.edits[size:]
        plan.screened += len(batch)
        changed = patch_paths(patch)
        current = (
            await self.toolbox.invoke(task, "read_files", paths=changed, state=node.state)
            if changed
            else {}
        )
        candidates = [
            *([CandidatePatch(files=dict(current), label="node")] if lead else []),
            *(CandidatePatch(files={**current, e.path: e.new_text}, label=e.label) for e in batch),
        ]
        results = await self.toolbox.invoke(task, "try_candidates", candidates=candidates)
        node_result, results = (results[0], results[1:]) if lead else (None, results)
        f2p = await self._failing_tests(task)
        node_ran = node_result is not None and node_result.applied and node_result.compiled
        node_failures = failures(node_result, f2p) if node_ran else {}
        node_progress = _progress_of(node_result, f2p) if node_ran else (0, 0)
        before = self.screened.get(task.id, 0)
        self.screened[task.id] = before + len(batch)
        self.swapped[task.id] = self.swapped.get(task.id, 0) + sum(
            r.mode == "swap" for r in results
        )
        for n, res in enumerate(results):
            if res.passed and task.id not in self.first_passing:
                self.first_passing[task.id] = (before + n + 1, dict(candidates[n + lead].files))
            if res.passed and res.patch:
                found = self.passing_diffs.setdefault(task.id, [])
                if res.patch not in found:
                    found.append(res.patch)
        self._deprioritise_hangs(task, plan, batch, results)
        greens = [edit for edit, res in zip(batch, results, strict=True) if res.passed]
        broken: dict[int, str] = {}
        if greens and self.probe:
            reasons = await self._probe(task, node, current, greens)
            broken = {id(g): why for g, why in zip(greens, reasons, strict=True) if why}
            self.refused.setdefault(task.id, []).extend(
                f"probe: {why}: {g.label}" for g in greens if (why := broken.get(id(g)))
            )
        kept = [g for g in greens if id(g) not in broken]
        if kept and self.wider:
            for g, why in zip(kept, await self._wider(task, current, kept), strict=True):
                if why:
                    broken[id(g)] = why
                    self.refused.setdefault(task.id, []).append(f"wider: {why}: {g.label}")
        screened: list[_Screened] = []
        for edit, res in zip(batch, results, strict=True):
            if not res.applied or not res.compiled or id(edit) in broken:
                continue
            progress = _progress_of(res, f2p)
            moved = 0
            if node_failures and progress >= node_progress:
                moved = movement(node_failures, failures(res, f2p))
            action = {"kind": "apply_patch", "patch": edit.diff}
            s = _Screened(action, edit.label, edit.family, edit.prior, res.passed, progress, moved)
            if res.passed and self.rank_greens:
                s.closeness = closeness(edit, plan.scores)
            if res.passed:
                self.passing.setdefault(task.id, set()).add(solution_key([patch, edit.diff]))
            screened.append(s)
        # the best first; earlier screens' leftovers stay ahead only when they are better
        plan.ranked = sorted(
            [*plan.ranked, *screened],
            key=lambda s: (
                not s.passed,
                -s.progress[0],
                -s.progress[1],
                -s.moved,
                s.closeness or _NO_CLOSENESS,
                -s.prior,
            ),
        )

    def _deprioritise_hangs(
        self, task: Task, plan: _NodePlan, batch: list[Any], results: Sequence[Any]
    ) -> None:
        """Count the edits whose run hit a test timeout, and move the same family's
        edits of the same line to the end of the plan (they tend to hang alike)."""
        for edit, res in zip(batch, results, strict=True):
            if timed_out(res):
                self.timeouts[task.id] = self.timeouts.get(task.id, 0) + 1
                plan.timeouts += 1
                plan.hung.add((edit.path, edit.family, edit.line))
        if plan.hung:
            plan.edits.sort(key=lambda e: (e.path, e.family, e.line) in plan.hung)

    async def _test_source(self, task: Task, path: str) -> str | None:
        """The test file ``path`` as the tests run it (the task's test patch applied)."""
        key = (task.id, path)
        if key not in self._test_sources:
            base = await self.toolbox.invoke(task, "read_files", paths=[path])
            test_patch = str(task.context.get("test_patch") or "")
            self._test_sources[key] = await rebuilt_test_file(base.get(path), path, test_patch)
        return self._test_sources[key]

    async def _wider(
        self, task: Task, current: Mapping[str, str | None], greens: list[Any]
    ) -> list[str | None]:
        """Per green edit, the first test of the wider suite it breaks (None: none)."""
        from atlas_actors.swe.repair.batch import CandidatePatch

        suite = await self.toolbox.invoke(task, "wider_tests")
        if not suite.passing:
            return [None] * len(greens)
        candidates = [
            CandidatePatch(files={**current, g.path: g.new_text}, label=g.label) for g in greens
        ]
        results = await self.toolbox.invoke(
            task,
            "try_candidates",
            candidates=candidates,
            tests=suite.passing,
            durations=suite.durations,
        )
        out: list[str | None] = []
        for res in results:
            # a test that fails or errs is a break; a run that timed out, crashed or
            # found nothing says nothing about the edit (the suite is large: a slow
            # collection is no verdict)
            bad = next((t for t in res.tests if t.outcome in ("failed", "error")), None)
            out.append(
                None
                if bad is None
                else f"breaks {bad.test} ({bad.outcome}: {bad.message[:200]}), which passes at base"
            )
        return out

    async def _probe(
        self, task: Task, node: NodeView, current: Mapping[str, str | None], greens: list[Any]
    ) -> list[str | None]:
        """Per green edit, why the probes refuse it (None: they do not): the failing tests
        rerun with one of their numbers moved (:func:`~atlas_actors.swe.repair.probes.
        variants`), on the node and on each edit, and an edit that raises where the node
        does not is refused."""
        from atlas_actors.swe.repair.batch import CandidatePatch

        loc = await self.toolbox.invoke(task, "localize")
        reasons: list[str | None] = [None] * len(greens)
        for test in loc.failing:
            source = await self._test_source(task, split_test_id(test)[0])
            found: list[Variant] = variants(source, test) if source else []
            if not found:
                continue
            width = 1 + len(greens)
            candidates = []
            for v in found:
                candidates.append(CandidatePatch(files={**current, v.path: v.source}, label="node"))
                candidates += [
                    CandidatePatch(
                        files={**current, g.path: g.new_text, v.path: v.source}, label=g.label
                    )
                    for g in greens
                ]
            results = await self.toolbox.invoke(
                task, "try_candidates", candidates=candidates, tests=[test]
            )
            for k, v in enumerate(found):
                row = results[k * width : (k + 1) * width]
                if not row[0].tests:
                    continue
                base_end = ending(row[0].tests[0])
                for n, res in enumerate(row[1:]):
                    if reasons[n] is None and res.tests and broke(base_end, ending(res.tests[0])):
                        reasons[n] = (
                            f"raises {ending(res.tests[0])} where the base does not, with "
                            f"{v.what} in {test}"
                        )
        return reasons


def top_lines(lines: Sequence[Any], n: int) -> list[Any]:
    """The ``n`` most suspicious lines with a positive score, in localisation's order (its
    ties broken by the failing tests' tracebacks), and the lines tied with the ``n``-th
    (a tie is no reason to drop a line), up to ``4 * n`` in all."""
    ranked = sorted((s for s in lines if s.score > 0), key=lambda s: -s.score)  # stable
    if len(ranked) <= n:
        return ranked
    last = round(ranked[n - 1].score, 12)
    tied = [s for s in ranked[n:] if round(s.score, 12) == last]
    return [*ranked[:n], *tied[: 3 * n]]


def _progress_of(result: Any, failing: set[str]) -> Progress:
    """A screened candidate's progress: failing tests it fixes, and passing tests that
    still pass before the first that does not (fail-fast stops there)."""
    fixed = sum(1 for t in result.tests if t.test in failing and t.passed)
    kept = 0
    for t in result.tests:
        if t.test in failing:
            continue
        if not t.passed:
            break
        kept += 1
    return fixed, kept
