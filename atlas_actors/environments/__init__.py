"""What every domain shares, naming none: the environment protocols, the passthrough
environment, :class:`DomainSpec` and the domain registry, the in-process evaluator and
the conformance checker.

A domain's own parts live in its package and are found through its registered
:class:`DomainSpec` (:func:`register_domain`; the built-in domains are listed in
:mod:`atlas_actors.domains`).
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
    pool_preferences,
    register,
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
    "pool_preferences",
    "register",
    "register_domain",
    "require_domain",
    "unregister_domain",
]
