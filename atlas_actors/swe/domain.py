"""The SWE domain's parts: its proposers and their options, the remembered patches the
tree search starts from, what makes two patches the same change, and its result reporter.

Listed in :mod:`atlas_actors.domains` (imported only when a SWE task is searched).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.config import LLMConfig
from atlas_actors.environments.base import Stepper, Toolbox, Verifier
from atlas_actors.errors import ConfigError
from atlas_actors.search.base import ProposedAction
from atlas_actors.search.proposers import MixedProposer, ProposerMode, check_mode
from atlas_actors.swe.grading import changed_lines
from atlas_actors.types import Candidate, Experience, Task, TaskResult

REMEMBERED_BOOST = 2.0
"""How much a remembered edit family's prior is raised."""


class SWEOptions(BaseModel):
    """The SWE proposers' options (``EngineConfig.proposer_options["swe"]``)."""

    model_config = ConfigDict(extra="forbid")

    mode: ProposerMode = "auto"
    """``offline`` (the repair operators), ``llm`` (needs an LLM endpoint), ``hybrid``
    (both, into one tree), ``auto`` (``llm`` when an endpoint is given, else
    ``offline``)."""
    remembered_families: list[str] = Field(default_factory=list)
    """Edit families whose prior the offline proposer raises (memory's families of
    similar solved tasks replace these when it has any)."""


def make_proposer(
    task: Task,
    llm: LLMConfig | None = None,
    *,
    stepper: Stepper | None = None,
    mode: ProposerMode = "auto",
    remembered_families: Sequence[str] = (),
    remembered: Sequence[Experience] = (),
) -> Any:
    """The action proposer for one tree search of a SWE task without an LLM: the
    offline repair operators (``mode`` ``auto`` or ``offline``; ``llm`` and ``hybrid``
    need an endpoint).

    ``stepper`` lets the proposer look at the repository (fault localisation and
    screening: it must also be a ``Toolbox``). ``remembered``: memory's solved similar
    tasks; the edit families that fixed them (else ``remembered_families``) get a
    raised prior."""
    check_mode(mode, task, has_llm=False)
    return _offline_proposer(task, stepper, _families(remembered) or remembered_families)


def make_llm_proposer(
    task: Task,
    llm: LLMConfig,
    *,
    stepper: Stepper | None = None,
    mode: ProposerMode = "auto",
    remembered_families: Sequence[str] = (),
    remembered: Sequence[Experience] = (),
) -> Any:
    """The action proposer for one tree search of a SWE task with an LLM endpoint:
    ``llm`` (or ``auto``) the LLM's, ``hybrid`` the LLM's and the repair operators' into
    one tree, ``offline`` the repair operators only (see :func:`make_proposer`)."""
    mode = check_mode(mode, task, has_llm=True)
    if mode == "offline":
        return make_proposer(
            task,
            stepper=stepper,
            remembered_families=remembered_families,
            remembered=remembered,
        )
    proposer = _llm_proposer(llm, stepper)
    if mode == "hybrid":
        families = _families(remembered) or remembered_families
        return MixedProposer([proposer, _offline_proposer(task, stepper, families)])
    return proposer


def _families(remembered: Sequence[Experience]) -> list[str]:
    """Edit families that fixed the remembered similar tasks, most frequent first."""
    counts: dict[str, int] = {}
    for e in remembered:
        for f in e.edit_families:
            counts[f] = counts.get(f, 0) + 1
    return sorted(counts, key=lambda f: (-counts[f], f))


def _offline_proposer(task: Task, stepper: object, families: Sequence[str]) -> Any:
    from atlas_actors.swe.repair.proposer import OfflineRepairProposer  # libcst: on first use

    if not isinstance(stepper, Toolbox):
        raise ConfigError(
            f"task {task.id}: the offline repair proposer needs the environment's tools "
            f"(a LocalEvaluator or an EnvironmentPool), got {type(stepper).__name__}"
        )
    boost = dict.fromkeys(families, REMEMBERED_BOOST)
    return OfflineRepairProposer(stepper, family_boost=boost, wider=True)


def _llm_proposer(llm: LLMConfig, stepper: Stepper | None) -> Any:
    """An LLM action proposer for one search, on the process's shared client for ``llm``
    (one concurrency limit, connection pool and cache for every search)."""
    from atlas_actors.llm.client import shared_client  # the LLM SDK: only with an LLM
    from atlas_actors.swe.llm_proposer import LLMActionProposer

    return LLMActionProposer(shared_client(llm), stepper=stepper, owns_client=False)


def seed_action(solution: Any) -> ProposedAction | None:
    """A remembered patch as a first action of the tree search (None for anything else)."""
    if not isinstance(solution, str):
        return None
    return ProposedAction(
        action={"kind": "apply_patch", "patch": solution},
        label="a remembered patch",
        source="memory",
    )


def patch_changes(solution: Any) -> tuple[str, ...] | None:
    """What a patch changes (its removed and added lines), so two diffs of one change
    compare equal; None for anything but a patch."""
    if not isinstance(solution, str):
        return None
    return changed_lines(solution)


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
