"""atlas_actors: inference-time search over verifiable environments, on Ray actors."""

from __future__ import annotations

from atlas_actors.config import (
    EngineConfig,
    LLMConfig,
    MindEvolutionConfig,
    RouterConfig,
    SWESearchConfig,
)
from atlas_actors.environments.base import (
    Evaluator,
    InteractiveEnvironment,
    LocalEvaluator,
    MinimalEnvironment,
    PassthroughEnvironment,
    ScoringEnvironment,
    create_environment,
)
from atlas_actors.errors import AtlasError
from atlas_actors.types import Candidate, Experience, Outcome, RoutingDecision, Task

__version__ = "0.1.0"

__all__ = [
    "AtlasError",
    "Candidate",
    "EngineConfig",
    "Evaluator",
    "Experience",
    "InteractiveEnvironment",
    "LLMConfig",
    "LocalEvaluator",
    "MindEvolutionConfig",
    "MinimalEnvironment",
    "Outcome",
    "PassthroughEnvironment",
    "RouterConfig",
    "RoutingDecision",
    "SWESearchConfig",
    "ScoringEnvironment",
    "Task",
    "__version__",
    "create_environment",
]
