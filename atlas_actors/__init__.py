"""atlas_actors: inference-time search over verifiable environments, on Ray actors.

The light names (types, configs, protocols, environments, searches) import eagerly;
the heavy ones (the Ray engine, the LLM layer, Docker) load on first use, so
``import atlas_actors`` stays fast and does not start or import Ray.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from atlas_actors.config import (
    EngineConfig,
    LLMConfig,
    MindEvolutionConfig,
    RouterConfig,
    SWESearchConfig,
)
from atlas_actors.domains import BUILTIN_DOMAINS  # noqa: F401  (importing registers them)
from atlas_actors.environments import (
    DomainSpec,
    Evaluator,
    InteractiveEnvironment,
    LocalEvaluator,
    MinimalEnvironment,
    PassthroughEnvironment,
    ScoringEnvironment,
    Stepper,
    TaskHolder,
    Transition,
    Verifier,
    create_environment,
    domain_names,
    register_domain,
)
from atlas_actors.environments.conformance import check_environment
from atlas_actors.errors import (
    ActorError,
    AtlasError,
    BubblewrapNotFound,
    ConfigError,
    DockerError,
    DockerTimeout,
    EnvironmentNotReady,
    InvalidGridError,
    InvalidSolutionError,
    InvalidTaskError,
    LLMError,
    LLMTimeout,
    SandboxError,
    SandboxTimeout,
)
from atlas_actors.search.base import Proposer, Scorer
from atlas_actors.search.discriminator import Discriminator
from atlas_actors.search.mcts import SWESearch
from atlas_actors.search.mind_evolution import MindEvolutionSearch, SearchResult
from atlas_actors.search.router import EnhancedTaskRouter
from atlas_actors.search.solve import solve_task
from atlas_actors.types import (
    Candidate,
    Experience,
    Outcome,
    RoutingDecision,
    Task,
    TaskResult,
)

if TYPE_CHECKING:
    from atlas_actors.actors import DiscriminatorPool, Engine, EnvironmentPool, SearchCoordinator
    from atlas_actors.arc import DSLProposer, Program, compile_program
    from atlas_actors.arc.environment import ARCEnvironment
    from atlas_actors.arc.judge import LLMScorer, make_llm_scorer
    from atlas_actors.arc.llm_proposer import LLMProgramProposer, make_llm_proposer
    from atlas_actors.llm import LLMClient, Usage
    from atlas_actors.sandbox import (
        ProgramRunner,
        RunResult,
        SandboxResult,
        run_in_bubblewrap,
        run_in_bubblewrap_sync,
    )
    from atlas_actors.swe.environment import SWEEnvironment
    from atlas_actors.swe.evaluate import grade_predictions
    from atlas_actors.swe.instances import SWEInstance, load_instances

__version__ = "0.1.0"

_LAZY = {
    "Engine": "atlas_actors.actors",
    "EnvironmentPool": "atlas_actors.actors",
    "DiscriminatorPool": "atlas_actors.actors",
    "SearchCoordinator": "atlas_actors.actors",
    "ARCEnvironment": "atlas_actors.arc.environment",
    "DSLProposer": "atlas_actors.arc",
    "Program": "atlas_actors.arc",
    "compile_program": "atlas_actors.arc",
    "SWEEnvironment": "atlas_actors.swe.environment",
    "SWEInstance": "atlas_actors.swe.instances",
    "load_instances": "atlas_actors.swe.instances",
    "grade_predictions": "atlas_actors.swe.evaluate",
    "LLMClient": "atlas_actors.llm",
    "LLMProgramProposer": "atlas_actors.arc.llm_proposer",
    "LLMScorer": "atlas_actors.arc.judge",
    "make_llm_proposer": "atlas_actors.arc.llm_proposer",
    "make_llm_scorer": "atlas_actors.arc.judge",
    "Usage": "atlas_actors.llm",
    "ProgramRunner": "atlas_actors.sandbox",
    "RunResult": "atlas_actors.sandbox",
    "SandboxResult": "atlas_actors.sandbox",
    "run_in_bubblewrap": "atlas_actors.sandbox",
    "run_in_bubblewrap_sync": "atlas_actors.sandbox",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'atlas_actors' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ARCEnvironment",
    "ActorError",
    "AtlasError",
    "BubblewrapNotFound",
    "Candidate",
    "ConfigError",
    "DSLProposer",
    "Discriminator",
    "DiscriminatorPool",
    "DockerError",
    "DockerTimeout",
    "DomainSpec",
    "Engine",
    "EngineConfig",
    "EnhancedTaskRouter",
    "EnvironmentNotReady",
    "EnvironmentPool",
    "Evaluator",
    "Experience",
    "InteractiveEnvironment",
    "InvalidGridError",
    "InvalidSolutionError",
    "InvalidTaskError",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMProgramProposer",
    "LLMScorer",
    "LLMTimeout",
    "LocalEvaluator",
    "MindEvolutionConfig",
    "MindEvolutionSearch",
    "MinimalEnvironment",
    "Outcome",
    "PassthroughEnvironment",
    "Program",
    "ProgramRunner",
    "Proposer",
    "RouterConfig",
    "RoutingDecision",
    "RunResult",
    "SWEEnvironment",
    "SWEInstance",
    "SWESearch",
    "SWESearchConfig",
    "SandboxError",
    "SandboxResult",
    "SandboxTimeout",
    "Scorer",
    "ScoringEnvironment",
    "SearchCoordinator",
    "SearchResult",
    "Stepper",
    "Task",
    "TaskHolder",
    "TaskResult",
    "Transition",
    "Usage",
    "Verifier",
    "__version__",
    "check_environment",
    "compile_program",
    "create_environment",
    "domain_names",
    "grade_predictions",
    "load_instances",
    "make_llm_proposer",
    "make_llm_scorer",
    "register_domain",
    "run_in_bubblewrap",
    "run_in_bubblewrap_sync",
    "solve_task",
]
