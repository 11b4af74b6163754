"""Async LLM layer, domain-free: an OpenAI-compatible client, its transport, response
cache, usage accounting, answer extraction and a test server.

* :class:`LLMClient`: ``AsyncOpenAI`` with a concurrency limit, the SDK's retries,
  timeouts, usage accounting (:class:`Usage`) and an on-disk response cache.
* :func:`~atlas_actors.llm.extract.extract_program`, :func:`parse_score`: read code and
  scores out of a model's answer.
* :mod:`atlas_actors.llm.testing`: a fake OpenAI-compatible server on loopback.

The proposers, prompts and judges that talk to a model belong to their domains
(:mod:`atlas_actors.arc.llm_proposer`, :mod:`atlas_actors.swe.llm_proposer`, ...).
"""

from atlas_actors.llm.client import (
    Completion,
    LLMClient,
    LLMConnectionError,
    LLMResponseError,
    LLMStatusError,
)
from atlas_actors.llm.extract import extract_program, parse_score
from atlas_actors.llm.usage import Usage

__all__ = [
    "Completion",
    "LLMClient",
    "LLMConnectionError",
    "LLMResponseError",
    "LLMStatusError",
    "Usage",
    "extract_program",
    "parse_score",
]
