"""An LLM value function for code patches, after SWE-Search's.

SWE-Search (Antoniades et al. 2024; aorwall/moatless-tree-search, ``value_function``)
asks a model to read the problem statement and what the agent did, write an
explanation first and then give a reward, an integer in [-100, 100]. :class:`LLMJudge`
does the same for one candidate: the problem statement, the candidate patch and, when
the verifier let the search see it, the test evidence (which of the tests it must fix
pass, which passing tests broke) go in; an explanation and a reward come out. The
reward is mapped to [0, 1] (``(r + 100) / 200``).

Answers are read robustly (:func:`parse_reward`): a JSON object (``{"explanation": ...,
"reward": 75}``), tagged or labelled lines (``Reward: 75``, ``**Reward:** -20``,
``<reward>75</reward>``), ``75/100`` or ``75 out of 100`` in chatty text. An answer
with no readable reward is an estimate of 0.5 with confidence 0, logged, never an
exception. Infrastructure faults (the endpoint down after the client's retries, a
timeout) raise :class:`~atlas_actors.errors.LLMError` as the client does; the
:class:`~atlas_actors.search.discriminator.Discriminator` turns those into fallback
estimates.

It implements both discriminator protocols: ``assess`` (a
:class:`~atlas_actors.search.base.ValueEstimate`) and ``score`` (``(value, reason)``,
what the ``DiscriminatorPool`` actors call).
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

from atlas_actors.config import LLMConfig
from atlas_actors.llm.client import LLMClient
from atlas_actors.llm.usage import Usage, UsageLedger
from atlas_actors.resources import AsyncResource
from atlas_actors.search.base import ValueEstimate
from atlas_actors.types import Candidate, Outcome, Task

log = logging.getLogger(__name__)

__all__ = ["FALLBACK_VALUE", "LLMJudge", "make_llm_judge", "parse_reward", "reward_to_value"]

FALLBACK_VALUE = 0.5
"""Value of an answer with no readable reward (with confidence 0)."""

REWARD_MIN, REWARD_MAX = -100, 100

JUDGE_SYSTEM = """\
You are the value function of a search for a patch that resolves a software issue.
You see the issue, one candidate patch and, when available, what the tests said about it.
Judge how likely this patch is to resolve the issue correctly and completely, without
breaking anything, and whether it is a good base to continue from.

Criteria:
* Does the change address the root cause described in the issue, in the right place?
* Is it correct, complete and minimal? Does it break existing behaviour?
* Test evidence outweighs impressions: tests the patch must fix still failing, or
  previously passing tests now failing, are strong evidence against it.

Reward scale (an integer from -100 to 100):
* 90 to 100: resolves the issue; you would submit it.
* 50 to 89: on the right track, needs little more.
* 0 to 49: partly relevant or unclear.
* -49 to -1: probably wrong, or breaks something.
* -100 to -50: wrong, harmful, or unrelated.

Write your explanation first, then the reward on its own last line as `Reward: N`.
Or answer only a JSON object: {"explanation": "...", "reward": N}."""

_NUM = r"[-+]?\d+(?:\.\d+)?"
_LABELLED = re.compile(
    rf"(?:\*\*|__)?\b(?:reward|value|score)\b(?:\*\*|__)?\s*(?:\(.{{0,20}}?\))?\s*"
    rf"(?:[:=]|is)\s*(?:\*\*|__)?\s*({_NUM})(?:\s*(?:/|out of)\s*({_NUM}))?",
    re.IGNORECASE,
)
_TAGGED = re.compile(rf"<reward>\s*({_NUM})\s*</reward>", re.IGNORECASE)
_OUT_OF = re.compile(rf"({_NUM})\s*(?:/|out of)\s*(100|10)\b", re.IGNORECASE)
_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.DOTALL)
_EXPLANATION_TAG = re.compile(r"<explanation>(.*?)</explanation>", re.IGNORECASE | re.DOTALL)


def reward_to_value(reward: float) -> float:
    """A reward in [-100, 100] (clamped) as a value in [0, 1]."""
    r = min(float(REWARD_MAX), max(float(REWARD_MIN), reward))
    return (r - REWARD_MIN) / (REWARD_MAX - REWARD_MIN)


def _scaled(num: str, scale: str | None) -> float | None:
    """``num`` as a reward in [-100, 100]; ``N/10`` is read as ``10·N``."""
    try:
        value = float(num)
        if scale is not None:
            denom = float(scale)
            if denom <= 0:
                return None
            value = value / denom * 100.0
    except ValueError:
        return None
    return value if -1000 <= value <= 1000 else None


def _tidy(text: str, limit: int = 2000) -> str:
    return " ".join(text.split())[:limit]


def parse_reward(text: str) -> tuple[float, str, bool] | None:
    """``(reward in [-100, 100], explanation, strict)`` from a judge's answer, or None.

    ``strict`` is False when the reward was only found loosely (``75/100`` somewhere in
    the text, not labelled): such a reading gets a lower confidence.
    """
    if not text or not text.strip():
        return None
    # JSON object with a reward (the last one that has it wins).
    found: tuple[float, str, bool] | None = None
    for match in _JSON_OBJ.finditer(text):
        try:
            obj = json.loads(match.group(0))
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        for key in ("reward", "value", "score"):
            raw = obj.get(key)
            if isinstance(raw, bool):
                continue
            text_num = isinstance(raw, str) and re.fullmatch(rf"\s*{_NUM}\s*", raw)
            if not (isinstance(raw, int | float) or text_num):
                continue
            reward = float(str(raw))
            if not math.isfinite(reward):
                continue
            why = obj.get("explanation") or obj.get("reasoning") or obj.get("reason") or ""
            rest = (text[: match.start()] + text[match.end() :]).strip()
            found = (
                max(REWARD_MIN, min(REWARD_MAX, reward)),
                _tidy(str(why) or rest),
                True,
            )
            break
    if found is not None:
        return found
    explanation = _explanation(text)
    m = _TAGGED.search(text)
    if m:
        value = _scaled(m.group(1), None)
        if value is not None:
            return max(REWARD_MIN, min(REWARD_MAX, value)), explanation, True
    labelled = list(_LABELLED.finditer(text))
    for m in reversed(labelled):  # the last labelled reward is the verdict
        value = _scaled(m.group(1), m.group(2))
        if value is not None:
            return max(REWARD_MIN, min(REWARD_MAX, value)), explanation, True
    loose = list(_OUT_OF.finditer(text))
    if loose:
        m = loose[-1]
        value = _scaled(m.group(1), m.group(2))
        if value is not None:
            return max(REWARD_MIN, min(REWARD_MAX, value)), explanation, False
    return None


def _explanation(text: str) -> str:
    tagged = _EXPLANATION_TAG.search(text)
    if tagged:
        return _tidy(tagged.group(1))
    # The answer without its reward line(s).
    kept = [ln for ln in text.splitlines() if not re.search(r"\breward\b", ln, re.IGNORECASE)]
    return _tidy("\n".join(kept) or text)


def render_evidence(outcome: Outcome | None, max_chars: int = 3000) -> str:
    """What the verifier let the search see of a candidate, for the judge."""
    if outcome is None:
        return "The patch has not been tested."
    lines = [
        "The visible tests pass: the verifier accepts the patch."
        if outcome.success
        else f"The verifier does not accept the patch (partial score {outcome.partial_score:.2f})."
    ]
    tests = outcome.tests
    if tests is not None:
        if not tests.patch_applied:
            lines.append("The patch does not apply.")
        if tests.timed_out:
            lines.append("The test run timed out.")
        if not tests.log_trusted:
            lines.append("The test log was rejected.")
        groups = (
            ("Tests the patch must fix, now passing", tests.fail_to_pass_passed),
            ("Tests the patch must fix, still failing", tests.fail_to_pass_failed),
            ("Previously passing tests now failing", tests.pass_to_pass_failed),
        )
        for title, names in groups:
            if names:
                shown = ", ".join(names[:20]) + (" ..." if len(names) > 20 else "")
                lines.append(f"{title} ({len(names)}): {shown}")
        if tests.pass_to_pass_passed:
            lines.append(
                f"Previously passing tests still passing: {len(tests.pass_to_pass_passed)}"
            )
        if tests.hidden:
            lines.append(f"{tests.hidden} graded tests are hidden from you.")
    feedback = outcome.feedback.strip()
    if feedback:
        if len(feedback) > max_chars:
            feedback = feedback[:max_chars] + "\n... (cut)"
        lines += ["", "Verifier output:", feedback]
    return "\n".join(lines)


def judge_messages(task: Task, candidate: Candidate, max_patch_chars: int) -> list[dict[str, Any]]:
    """The value-function prompt for one candidate."""
    solution = candidate.solution
    if isinstance(solution, str):
        patch = solution if solution.strip() else "(empty: no change yet)"
        if len(patch) > max_patch_chars:
            patch = patch[:max_patch_chars] + "\n... (cut)"
        body = f"```diff\n{patch.rstrip()}\n```"
    else:
        body = f"```json\n{json.dumps(solution, default=str)[:max_patch_chars]}\n```"
    statement = task.description.strip() or f"(task {task.id}: no description)"
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {
            "role": "user",
            "content": (
                f"# Issue\n{statement}\n\n# Candidate patch\n{body}\n\n"
                f"# Test evidence\n{render_evidence(candidate.outcome)}\n\n"
                "Explain your judgement, then give `Reward: N` (-100 to 100)."
            ),
        },
    ]


class LLMJudge(UsageLedger, AsyncResource):
    """SWE-Search's value function as a discriminator backend (see module docs).

    Args:
        client: the LLM client (closed by :meth:`aclose` when ``owns_client``).
        temperature: sampling temperature (0: as repeatable as the server allows).
        max_tokens: answer length limit.
        seed: sample index of the judge's calls (cache key and request seed).
        max_patch_chars: patch text shown to the model.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        seed: int = 0,
        max_patch_chars: int = 12000,
        owns_client: bool = True,
    ) -> None:
        self.client = client
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.max_patch_chars = max_patch_chars
        self._owns_client = owns_client
        UsageLedger.__init__(self)
        self.unreadable = 0
        """Answers with no readable reward."""

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    async def assess(self, task: Task, candidate: Candidate) -> ValueEstimate:
        """The judge's estimate; raises only LLMError (endpoint faults, timeouts)."""
        messages = judge_messages(task, candidate, self.max_patch_chars)
        call = Usage()
        try:
            completion = await self.client.complete(
                messages,
                n=1,
                sample_index=self.seed,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                usage=call,
            )
        finally:
            self.charge(task.id, call)
        return self.read(completion.text, task_id=task.id)

    def read(self, text: str, *, task_id: str = "") -> ValueEstimate:
        """An answer as an estimate; unreadable -> value 0.5, confidence 0 (logged)."""
        parsed = parse_reward(text)
        if parsed is None:
            self.unreadable += 1
            snippet = _tidy(text, 200)
            log.warning("task %s: the judge's answer has no reward: %r", task_id, snippet)
            return ValueEstimate(
                value=FALLBACK_VALUE,
                explanation=f"unparseable: {snippet!r}",
                confidence=0.0,
                source="llm",
            )
        reward, explanation, strict = parsed
        return ValueEstimate(
            value=reward_to_value(reward),
            explanation=f"reward {reward:g}: {explanation}".strip(),
            confidence=1.0 if strict else 0.5,
            source="llm",
        )

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        """``(value, explanation)`` for the ``Scorer`` protocol (discriminator actors)."""
        est = await self.assess(task, candidate)
        return est.value, est.explanation


def make_llm_judge(config: LLMConfig, **options: Any) -> LLMJudge:
    """An :class:`LLMJudge` with its own client for ``config``."""
    return LLMJudge(LLMClient(config), **options)
