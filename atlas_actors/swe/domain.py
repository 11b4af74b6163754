"""The SWE domain's registration: its proposer factory and its result reporter.

Registered under ``swe`` in :mod:`atlas_actors.environments.registry` (imported only
when a SWE task is searched).
"""

from __future__ import annotations

from typing import Any

from atlas_actors.config import LLMConfig
from atlas_actors.environments.base import Verifier
from atlas_actors.errors import ConfigError
from atlas_actors.types import Candidate, Task, TaskResult


def make_proposer(task: Task, llm: LLMConfig | None = None) -> Any:
    """The action proposer for one tree search of a SWE task."""
    raise ConfigError(
        f"task {task.id}: no proposer for SWE tasks is available yet; grade patches made "
        "elsewhere with `atlas-actors swe-eval`"
    )


async def report(
    task: Task, candidates: list[Candidate], result: TaskResult, verifier: Verifier | None
) -> None:
    """Fill the SWE parts of ``result``: ``solved`` from the full grading of the final
    patch (FAIL_TO_PASS and PASS_TO_PASS, as swebench grades it) when a verifier is
    available."""
    if verifier is None or not isinstance(result.solution, str):
        return
    outcome = await verifier.verify(task, result.solution)
    result.solved = outcome.success
