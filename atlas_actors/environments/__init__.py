"""What every domain shares: the environment protocols, the passthrough environment,
the domain registry, the in-process evaluator and the conformance checker.

A domain's own environment lives in its package (``atlas_actors.arc``,
``atlas_actors.swe``, or yours) and is found through :func:`register_domain`.
"""

from atlas_actors.environments.base import (
    Evaluator,
    InteractiveEnvironment,
    MinimalEnvironment,
    PassthroughEnvironment,
    ScoringEnvironment,
    Stepper,
    TaskHolder,
    Transition,
    Verifier,
)
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.environments.registry import (
    DomainSpec,
    create_environment,
    domain_names,
    get_domain,
    register_domain,
    require_domain,
    unregister_domain,
)

__all__ = [
    "DomainSpec",
    "Evaluator",
    "InteractiveEnvironment",
    "LocalEvaluator",
    "MinimalEnvironment",
    "PassthroughEnvironment",
    "ScoringEnvironment",
    "Stepper",
    "TaskHolder",
    "Transition",
    "Verifier",
    "create_environment",
    "domain_names",
    "get_domain",
    "register_domain",
    "require_domain",
    "unregister_domain",
]
