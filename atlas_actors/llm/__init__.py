"""Async LLM layer: an OpenAI-compatible client, prompts and LLM-backed proposers.

* :class:`LLMClient`: ``AsyncOpenAI`` with a concurrency limit, the SDK's retries,
  timeouts, usage accounting (:class:`Usage`) and an on-disk response cache.
* :class:`LLMProgramProposer` / :func:`make_llm_proposer`: ARC ``transform(grid)``
  programs, with Mind Evolution's critic/author refinement.
* :class:`LLMActionProposer` / :func:`make_llm_action_proposer`: next actions (edits,
  submit) for SWE tree search, with bounded information rounds through a stepper.
* :class:`LLMScorer`: a discriminator backend scoring candidates in [0, 1].
* :mod:`atlas_actors.llm.testing`: a fake OpenAI-compatible server on loopback.
"""

from atlas_actors.llm.client import (
    Completion,
    LLMClient,
    LLMConnectionError,
    LLMResponseError,
    LLMStatusError,
)
from atlas_actors.llm.discriminator import LLMScorer, make_llm_scorer
from atlas_actors.llm.extract import extract_program, parse_score
from atlas_actors.llm.proposers import LLMProgramProposer, make_llm_proposer
from atlas_actors.llm.swe_proposer import LLMActionProposer, make_llm_action_proposer
from atlas_actors.llm.usage import Usage

__all__ = [
    "Completion",
    "LLMActionProposer",
    "LLMClient",
    "LLMConnectionError",
    "LLMProgramProposer",
    "LLMResponseError",
    "LLMScorer",
    "LLMStatusError",
    "Usage",
    "extract_program",
    "make_llm_action_proposer",
    "make_llm_proposer",
    "make_llm_scorer",
    "parse_score",
]
