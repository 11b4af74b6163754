"""ARC's LLM judge: scores a candidate program in [0, 1] with a written reason.

:class:`LLMScorer` implements :class:`atlas_actors.search.base.Scorer` (the ARC domain's
value rubric for a tree search with an LLM, and a discriminator backend). It asks the
model for ``Score: N/10`` and a short reason, and reads the answer robustly (JSON,
fractions, percentages, chatty text, see :func:`~atlas_actors.llm.extract.parse_score`).
An answer without a readable score gives ``FALLBACK_SCORE`` and a reason that starts
with ``"unparseable: "`` instead of raising.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread

from atlas_actors.arc import prompts
from atlas_actors.arc.environment import load_arc_task
from atlas_actors.config import LLMConfig
from atlas_actors.llm.client import LLMClient
from atlas_actors.llm.extract import parse_score
from atlas_actors.llm.usage import Usage
from atlas_actors.resources import AsyncResource
from atlas_actors.types import Candidate, Task

FALLBACK_SCORE = 0.5
"""Score given when the model's answer has no readable score."""


class LLMScorer(AsyncResource):
    """Scores candidates with an LLM judge (a discriminator backend).

    Args:
        client: the LLM client (closed by :meth:`aclose` when ``owns_client``).
        temperature: sampling temperature of the judge (0 = as repeatable as the
            server allows).
        seed: base sample index of the judge's calls (cache key and request seed).
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        seed: int = 0,
        dataset: str = "arc",
        owns_client: bool = True,
    ) -> None:
        self.client = client
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.dataset = dataset
        self._owns_client = owns_client
        self._texts: dict[str, str] = {}
        self.usage = Usage()
        """Usage of the judge's calls."""

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    async def _task_text(self, task: Task) -> str:
        text = self._texts.get(task.id)
        if text is not None:
            return text
        if task.domain == "arc":
            data = await anyio.to_thread.run_sync(load_arc_task, task, self.dataset)
            text = prompts.render_task(data.train, data.test_inputs)
        else:
            text = f"# Task {task.id}\n{task.description}".rstrip()
        if len(self._texts) > 256:
            self._texts.clear()
        self._texts[task.id] = text
        return text

    async def score(self, task: Task, candidate: Candidate) -> tuple[float, str]:
        """``(score in [0, 1], reason)``; raises only infrastructure faults (LLMError)."""
        feedback = (
            prompts.render_feedback(candidate.outcome) if candidate.outcome is not None else None
        )
        messages = prompts.judge_messages(await self._task_text(task), candidate.solution, feedback)
        completion = await self.client.complete(
            messages,
            n=1,
            sample_index=self.seed,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            usage=self.usage,
        )
        return score_from_text(completion.text)


def score_from_text(text: str) -> tuple[float, str]:
    """Parse a judge's answer; unreadable -> ``(FALLBACK_SCORE, "unparseable: ...")``."""
    parsed = parse_score(text)
    if parsed is None:
        snippet = " ".join(text.split())[:200]
        return FALLBACK_SCORE, f"unparseable: {snippet!r}"
    return parsed


def make_llm_scorer(config: LLMConfig, **options: Any) -> LLMScorer:
    """An :class:`LLMScorer` with its own client for ``config``."""
    return LLMScorer(LLMClient(config), **options)


__all__ = ["FALLBACK_SCORE", "LLMScorer", "make_llm_scorer", "score_from_text"]
