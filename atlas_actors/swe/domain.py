"""The SWE domain's registration: its proposer factory and its result reporter.

Registered under ``swe`` in :mod:`atlas_actors.environments.registry` (imported only
when a SWE task is searched).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from atlas_actors.config import LLMConfig
from atlas_actors.environments.base import Stepper, Verifier
from atlas_actors.errors import ConfigError
from atlas_actors.types import Candidate, Task, TaskResult

ProposerMode = Literal["auto", "offline", "llm", "hybrid"]


def make_proposer(
    task: Task,
    llm: LLMConfig | None = None,
    *,
    stepper: Stepper | None = None,
    mode: ProposerMode = "auto",
    remembered_families: Sequence[str] = (),
) -> Any:
    """The action proposer for one tree search of a SWE task.

    ``mode``: ``offline`` (the repair operators), ``llm`` (needs ``llm``), ``hybrid``
    (both, into one tree), ``auto`` (``llm`` when ``llm`` is given, else ``offline``).
    ``stepper`` lets the proposer look at the repository (the LLM's views and searches;
    the offline proposer's fault localisation and screening: it must also be a
    ``Toolbox``). ``remembered_families``: edit families that fixed similar tasks (their
    prior is raised)."""
    if mode not in ("auto", "offline", "llm", "hybrid"):
        raise ConfigError(f"mode={mode!r}: allowed 'auto', 'offline', 'llm', 'hybrid'")
    if mode == "auto":
        mode = "llm" if llm is not None else "offline"
    if mode in ("llm", "hybrid") and llm is None:
        raise ConfigError(f"task {task.id}: the {mode} proposer needs an LLM endpoint")
    if mode == "llm":
        assert llm is not None
        return _llm_proposer(llm, stepper)
    offline = _offline_proposer(task, stepper, remembered_families)
    if mode == "offline":
        return offline
    assert llm is not None
    from atlas_actors.search.proposers import MixedProposer

    return MixedProposer([_llm_proposer(llm, stepper), offline])


REMEMBERED_BOOST = 2.0
"""How much a remembered edit family's prior is raised."""


def _offline_proposer(task: Task, stepper: object, families: Sequence[str]) -> Any:
    from atlas_actors.environments.base import Toolbox
    from atlas_actors.swe.repair.proposer import OfflineRepairProposer

    if not isinstance(stepper, Toolbox):
        raise ConfigError(
            f"task {task.id}: the offline repair proposer needs the environment's tools "
            f"(a LocalEvaluator or an EnvironmentPool), got {type(stepper).__name__}"
        )
    boost = dict.fromkeys(families, REMEMBERED_BOOST)
    return OfflineRepairProposer(stepper, family_boost=boost)


def _llm_proposer(llm: LLMConfig, stepper: Stepper | None) -> Any:
    """An LLM action proposer for one search, on the process's shared client for ``llm``
    (one concurrency limit, connection pool and cache for every search)."""
    from atlas_actors.llm.client import LLMClient
    from atlas_actors.llm.swe_proposer import LLMActionProposer
    from atlas_actors.resources import shared_resource

    client = shared_resource(("llm-client", llm.model_dump_json()), lambda: LLMClient(llm))
    return LLMActionProposer(client, stepper=stepper, owns_client=False)


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
