"""Ray actors: environment and discriminator pools, the search coordinator, the Engine.

The only package of atlas_actors that imports ray. Everything here wraps plain
classes (``ray.remote(PlainClass)``); searches see only the Evaluator and Scorer
protocols the pools implement.
"""

from atlas_actors.actors.coordinator import (
    SearchCoordinator,
    SearchCoordinatorActor,
    Solver,
)
from atlas_actors.actors.engine import Engine, Progress, RayRuntime, package_dir
from atlas_actors.actors.pool import (
    ActorPool,
    DiscriminatorActor,
    DiscriminatorPool,
    EnvironmentActor,
    EnvironmentPool,
)
from atlas_actors.actors.workers import EnvironmentWorker, ScorerWorker

__all__ = [
    "ActorPool",
    "DiscriminatorActor",
    "DiscriminatorPool",
    "Engine",
    "EnvironmentActor",
    "EnvironmentPool",
    "EnvironmentWorker",
    "Progress",
    "RayRuntime",
    "ScorerWorker",
    "SearchCoordinator",
    "SearchCoordinatorActor",
    "Solver",
    "package_dir",
]
