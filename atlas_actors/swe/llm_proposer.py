"""The LLM action proposer for SWE tree search (:class:`LLMActionProposer`).

It implements :class:`~atlas_actors.search.base.ActionProposer`: asked for ``k`` children
of a tree node, it shows the model the issue, the node's cumulative patch, its test
evidence (which FAIL_TO_PASS / PASS_TO_PASS tests pass or fail, as far as the verifier
lets the search see them), the last observation, the actions already tried from the
node and what came of earlier attempts (rejected edits, duplicates), and asks for up to
``k`` *different* next actions in one answer: ``edit``, ``apply_patch`` or ``submit``,
each with a label and a confidence (the PUCT prior; without one, ``1/rank``).

**Information rounds.** The search makes nodes only of distinct patches, so looking
around happens inside one ``propose`` call: the model may answer a list of information
actions (``view``, ``list``, ``search``, ``run``) instead; the proposer runs them through
its :class:`~atlas_actors.search.base.Stepper` from the node's state (whatever they
change is thrown away), feeds the observations back (cut to ``max_observation_chars``)
and asks again, for at most ``info_rounds`` rounds; then the model must answer.

**Robustness.** An answer with no JSON, invalid JSON, unknown kinds or missing fields,
or only actions already tried, gives fewer (or no) proposals and a logged reason; when
it gives none, the model is told why and asked once more (``repair_turns``). ``propose``
never raises for what the model wrote; an :class:`~atlas_actors.errors.LLMError` (the
endpoint down after the client's retries, a timeout) propagates, and the search records
it as feedback on the node. The reasons come back on the returned list
(:attr:`Proposals.problems`). An edit whose ``old`` text is not in the file is left to
the stepper: the search's transition rejects it and the rejection becomes node feedback
that the next prompt shows.

**Determinism and cost.** Each call draws its base sample index from the search's
``rng`` (with :func:`~atlas_actors.llm.client.draw_sample_index`) and turn ``t`` of its
conversation uses indices ``base + t·samples ..``, so the response cache replays
a seeded search. Usage is kept per task (:meth:`usage_for`, read by ``SWESearch`` for its
LLM counters and cost cap; :meth:`pop_usage` when the task is done) and in total
(:attr:`usage`). Nothing is shared between calls except the usage counters, so
concurrent expansions do not change each other's answers.
"""

from __future__ import annotations

import json
import logging
import posixpath
import random
import re
from dataclasses import dataclass, field
from typing import Any

import anyio

from atlas_actors.config import LLMConfig
from atlas_actors.errors import InvalidSolutionError
from atlas_actors.llm.client import SAMPLE_SLOTS, LLMClient, draw_sample_index
from atlas_actors.llm.usage import Usage, UsageLedger
from atlas_actors.resources import AsyncResource
from atlas_actors.search.base import NodeView, Proposals, ProposedAction, Stepper, Transition
from atlas_actors.swe import prompts
from atlas_actors.swe.actions import (
    ApplyPatch,
    Edit,
    ListFiles,
    RunCommand,
    Search,
    Submit,
    ViewFile,
    parse_action,
)
from atlas_actors.swe.workspace import TESTBED
from atlas_actors.types import Task
from atlas_actors.types import solution_key as action_key

log = logging.getLogger(__name__)

__all__ = ["LLMActionProposer", "Proposals", "make_llm_action_proposer", "parse_answer"]

_META_KEYS = frozenset(
    {"label", "confidence", "prior", "reason", "rationale", "why", "description"}
)
_FIELDS = {
    str(cls.model_fields["kind"].default): frozenset(cls.model_fields)
    for cls in (ApplyPatch, Edit, ViewFile, ListFiles, Search, RunCommand, Submit)
}
"""The fields of each action kind."""
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


# ----------------------------------------------------------------------------- parsing


def parse_answer(text: str) -> tuple[list[Any] | None, str | None]:
    """The JSON list of actions in a model's answer, or ``(None, why not)``.

    Reads the last fenced block that holds JSON (```json or bare fences), else the
    outermost ``[...]`` (or ``{...}``) of the text; literal newlines inside strings are
    accepted. An object is read as ``{"actions": [...]}``, ``{"proposals": [...]}`` or
    one action.
    """
    if not text or not text.strip():
        return None, "the answer is empty"
    fenced = [body.strip() for _lang, body in _FENCE.findall(text)]
    spans = [text[text.find(o) : text.rfind(c) + 1] for o, c in (("[", "]"), ("{", "}"))]
    error: str | None = None
    for chunk in [*reversed(fenced), *spans]:
        chunk = chunk.strip()
        if not chunk:
            continue
        try:
            data = json.loads(chunk, strict=False)
        except ValueError as exc:
            if error is None and chunk in fenced:
                error = f"the ```json block is not valid JSON ({exc})"
            continue
        items = _as_items(data)
        if items is not None:
            return items, None
    if error is not None:
        return None, error
    return None, "no JSON list of actions in the answer"


def _as_items(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("actions", "proposals", "alternatives"):
            if isinstance(data.get(key), list):
                return list(data[key])
        if "kind" in data or "action" in data:
            return [data]
    return None


def _confidence(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        return None
    try:
        value = float(str(raw).strip().rstrip("%"))
    except ValueError:
        return None
    if value != value or value < 0:  # NaN, negative
        return None
    if value > 1.0:
        value = value / 100.0 if value <= 100.0 else 1.0
    return max(0.01, value)


def _relative(path: str) -> str:
    path = path.strip()
    if path == TESTBED or path.startswith(TESTBED + "/"):
        path = path[len(TESTBED) :].lstrip("/") or "."
    return posixpath.normpath(path) if path else "."


@dataclass
class _Item:
    action: dict[str, Any]
    label: str
    confidence: float | None


@dataclass
class _Answer:
    """One sample's answer, read."""

    proposals: list[_Item] = field(default_factory=list)
    info: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    empty: bool = False
    """The model answered ``[]``: nothing left to try."""


def read_answer(text: str) -> _Answer:
    """The proposals and information actions of one answer, and what was wrong."""
    out = _Answer()
    items, why = parse_answer(text)
    if items is None:
        out.problems.append(why or "unreadable answer")
        return out
    if not items:
        out.empty = True
        return out
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            out.problems.append(f"item {i} is not a JSON object")
            continue
        raw = item.get("action")
        if isinstance(raw, dict):
            act = dict(raw)
        else:
            act = {k: v for k, v in item.items() if k not in _META_KEYS}
            if isinstance(raw, str) and "kind" not in act:
                act["kind"] = act.pop("action")
        if "kind" not in act and isinstance(act.get("type"), str):
            act["kind"] = act.pop("type")
        known = _FIELDS.get(str(act.get("kind")))
        if known is not None:  # chatty extra keys ("line", "thought") are dropped
            act = {key: value for key, value in act.items() if key in known}
        try:
            model = parse_action(act)
        except InvalidSolutionError as exc:
            out.problems.append(f"item {i} ({act.get('kind') or 'no kind'}): {exc}")
            continue
        action = model.model_dump(mode="json")
        if isinstance(action.get("path"), str):
            action["path"] = _relative(action["path"])
        kind = action["kind"]
        if kind in prompts.INFO_KINDS:
            out.info.append(action)
            continue
        if kind == "edit" and action["old"] == action["new"]:
            out.problems.append(f"item {i}: the edit of {action['path']} changes nothing")
            continue
        label = item.get("label") or item.get("description") or ""
        out.proposals.append(
            _Item(
                action=action,
                label=" ".join(str(label).split())[:160],
                confidence=_confidence(item.get("confidence", item.get("prior"))),
            )
        )
    return out


# ---------------------------------------------------------------------------- proposer


class LLMActionProposer(UsageLedger, AsyncResource):
    """Proposes SWE tree-search actions with an LLM (see module docs).

    Args:
        client: the LLM client (closed by :meth:`aclose` when ``owns_client``).
        stepper: runs the model's information actions from the node's state (a
            ``LocalEvaluator``, an environment pool); None: no information rounds.
        info_rounds: rounds of information actions per ``propose`` call.
        max_info_actions: information actions run per round (the rest are dropped).
        repair_turns: times the model is asked again, told why, when an answer gave
            no usable proposal.
        samples: completions per request (``n``); the first drives the conversation,
            the proposals of all are merged.
        temperature, max_tokens: per request (None: the client's configuration).
        step_timeout_s: limit for one information action through the stepper.
        max_observation_chars: what is shown of one information action's result.
        max_patch_chars, max_text_chars: what is shown of the node's patch, and of its
            test output and last observation.
    """

    proposals_per_call = 1

    def __init__(
        self,
        client: LLMClient,
        *,
        stepper: Stepper | None = None,
        info_rounds: int = 4,
        max_info_actions: int = 4,
        repair_turns: int = 1,
        samples: int = 1,
        temperature: float | None = None,
        max_tokens: int | None = None,
        step_timeout_s: float = 180.0,
        max_observation_chars: int = 6000,
        max_patch_chars: int = 12000,
        max_text_chars: int = 3000,
        owns_client: bool = True,
    ) -> None:
        for name, value, low in (
            ("info_rounds", info_rounds, 0),
            ("max_info_actions", max_info_actions, 1),
            ("repair_turns", repair_turns, 0),
            ("samples", samples, 1),
            ("max_observation_chars", max_observation_chars, 200),
            ("max_patch_chars", max_patch_chars, 200),
            ("max_text_chars", max_text_chars, 200),
        ):
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {value}")
        if step_timeout_s <= 0:
            raise ValueError(f"step_timeout_s must be > 0, got {step_timeout_s}")
        if (info_rounds + repair_turns + 1) * samples > SAMPLE_SLOTS:
            raise ValueError(
                f"(info_rounds + repair_turns + 1) * samples must be <= {SAMPLE_SLOTS} "
                "(the sample indices one call may use)"
            )
        self.client = client
        self.stepper = stepper
        self.info_rounds = info_rounds if stepper is not None else 0
        self.max_info_actions = max_info_actions
        self.repair_turns = repair_turns
        self.samples = samples
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.step_timeout_s = step_timeout_s
        self.max_observation_chars = max_observation_chars
        self.max_patch_chars = max_patch_chars
        self.max_text_chars = max_text_chars
        self._owns_client = owns_client
        UsageLedger.__init__(self)
        self.info_actions = 0
        """Information actions run for the model."""
        self.unusable = 0
        """``propose`` calls that ended with no proposal because of what the model wrote."""

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    # -- propose --------------------------------------------------------------------------------

    async def propose(
        self, task: Task, node: NodeView, k: int, rng: random.Random
    ) -> list[ProposedAction]:
        """Up to ``k`` different actions from ``node``, not in ``node.tried``, best first
        (a :class:`Proposals` list, with the reasons for anything unusable)."""
        if k < 1:
            return Proposals()
        base = draw_sample_index(rng)
        patch = node.solution if isinstance(node.solution, str) else ""
        if not patch and isinstance(node.state.get("patch"), str):
            patch = node.state["patch"]
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": prompts.system_prompt(
                    max_info_actions=self.max_info_actions if self.info_rounds else 0
                ),
            },
            {
                "role": "user",
                "content": prompts.node_prompt(
                    statement=str(task.context.get("problem_statement") or task.description),
                    patch=patch,
                    outcome=node.outcome,
                    observation=node.observation,
                    tried=node.tried,
                    feedback=node.feedback,
                    k=k,
                    info_rounds=self.info_rounds,
                    max_patch_chars=self.max_patch_chars,
                    max_text_chars=self.max_text_chars,
                    parallel=node.slot,
                ),
            },
        ]
        tried = {action_key(a) for a in node.tried}
        problems: list[str] = []
        rounds_left, repairs_left = self.info_rounds, self.repair_turns
        turn = 0
        while True:
            texts = await self._ask(task, messages, base + turn * self.samples)
            turn += 1
            answers = [read_answer(t) for t in texts]
            found, dropped = self._select(answers, tried, k, has_patch=bool(patch.strip()))
            turn_problems = [p for a in answers for p in a.problems] + dropped
            problems += turn_problems
            if found:
                return self._finish(task, node, Proposals(found, problems))
            lead = answers[0]
            if lead.empty:  # the model sees nothing left to try from this patch
                return self._finish(task, node, Proposals([], problems))
            reply: str | None = None
            if lead.info and rounds_left > 0:
                rounds_left -= 1
                reply = await self._look(task, node, lead.info, rounds_left, k)
            elif repairs_left > 0:
                repairs_left -= 1
                why = turn_problems or ["the answer held no proposal"]
                if lead.info:
                    no_look = (
                        "no information rounds are left"
                        if self.info_rounds
                        else ("information actions are not available")
                    )
                    why = [no_look, *why]
                reply = prompts.repair_prompt(why, k)
            if reply is None:
                self.unusable += 1
                if lead.info:
                    problems.append("the model still asked for information after its last round")
                return self._finish(task, node, Proposals([], problems))
            messages += [
                {"role": "assistant", "content": texts[0]},
                {"role": "user", "content": reply},
            ]

    async def _ask(self, task: Task, messages: list[dict[str, Any]], index: int) -> list[str]:
        call = Usage()
        try:
            completion = await self.client.complete(
                messages,
                n=self.samples,
                sample_index=index,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                usage=call,
            )
        finally:
            self.charge(task.id, call)
        return completion.texts or [""]

    def _select(
        self, answers: list[_Answer], tried: set[str], k: int, *, has_patch: bool
    ) -> tuple[list[ProposedAction], list[str]]:
        """The proposals of every sample, interleaved, new ones only, best first."""
        dropped: list[str] = []
        ranked: list[tuple[float, int, ProposedAction]] = []
        seen = set(tried)
        depth = max((len(a.proposals) for a in answers), default=0)
        order = 0
        for rank in range(depth):
            for answer in answers:
                if rank >= len(answer.proposals):
                    continue
                item = answer.proposals[rank]
                what = prompts.describe_action(item.action)
                key = action_key(item.action)
                if key in tried:
                    dropped.append(f"already tried: {what}")
                    continue
                if key in seen:
                    continue
                if item.action["kind"] == "submit" and not has_patch:
                    dropped.append("submit with no change made yet")
                    continue
                seen.add(key)
                prior = item.confidence if item.confidence is not None else 1.0 / (rank + 1)
                ranked.append(
                    (
                        prior,
                        order,
                        ProposedAction(
                            action=item.action,
                            prior=prior,
                            label=item.label or what[:160],
                            source="llm",
                        ),
                    )
                )
                order += 1
        ranked.sort(key=lambda r: (-r[0], r[1]))
        return [p for _prior, _order, p in ranked[:k]], dropped

    async def _look(
        self, task: Task, node: NodeView, actions: list[dict[str, Any]], rounds_left: int, k: int
    ) -> str:
        """Run the model's information actions from the node's state; the reply turn."""
        stepper = self.stepper
        assert stepper is not None
        todo = actions[: self.max_info_actions]
        notes = []
        if len(actions) > len(todo):
            notes.append(f"(Only the first {len(todo)} information actions of each round are run.)")
        shown = [""] * len(todo)

        async def run(i: int, action: dict[str, Any]) -> None:
            try:
                with anyio.fail_after(self.step_timeout_s):
                    raw = await stepper.transition(task, node.state, action)
                tr = raw if isinstance(raw, Transition) else Transition.model_validate(raw)
                text = tr.observation.strip() or "(no output)"
            except Exception as exc:  # a failed look is data for the model, not a crash
                text = f"failed: {type(exc).__name__}: {' '.join(str(exc).split())[:500]}"
            shown[i] = prompts.cut(text, self.max_observation_chars)

        async with anyio.create_task_group() as tg:
            for i, action in enumerate(todo):
                tg.start_soon(run, i, action)
        self.info_actions += len(todo)
        log.debug("task %s node %s: ran %d information actions", task.id, node.node_id, len(todo))
        return prompts.results_prompt(
            list(zip(todo, shown, strict=True)), rounds_left=rounds_left, k=k, notes=notes
        )

    def _finish(self, task: Task, node: NodeView, out: Proposals) -> Proposals:
        if out.problems:
            level = logging.INFO if out else logging.WARNING
            log.log(
                level,
                "task %s node %s: %d proposal(s); unusable: %s",
                task.id,
                node.node_id,
                len(out),
                "; ".join(out.problems)[:1000],
            )
        return out


def make_llm_action_proposer(
    config: LLMConfig, *, stepper: Stepper | None = None, **options: Any
) -> LLMActionProposer:
    """An :class:`LLMActionProposer` with its own client for ``config`` (closed with it)."""
    return LLMActionProposer(LLMClient(config), stepper=stepper, **options)
