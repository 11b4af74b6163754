"""The domain registry: what the engine knows about each kind of task.

A domain registers one :class:`DomainSpec` under its name, holding every part that is
specific to it; the generic packages (searches, LLM client, memory, actors) find those
parts here and never name a domain. The parts:

* ``environment``: a factory (a class or function taking keyword options) that verifies
  solutions;
* ``proposer``: ``make(task, llm, **options)``, the proposer a search of the domain's
  tasks uses without an LLM (a :class:`~atlas_actors.search.base.Proposer` for Mind
  Evolution, an :class:`~atlas_actors.search.base.ActionProposer` for the tree search);
* ``llm_proposer``: ``make(task, llm, **options)``, the proposer used when an
  :class:`~atlas_actors.config.LLMConfig` is given (without one, ``proposer`` gets it);
* ``judge``: ``make(client, owns_client=...)``, the tree search's LLM value judge (a
  :class:`~atlas_actors.search.base.Scorer` on an
  :class:`~atlas_actors.llm.client.LLMClient`; without one, nodes are valued from the
  verifier's evidence);
* ``features``: a :class:`~atlas_actors.memory.features.DomainFeatures`, how memory
  describes and compares the domain's tasks (without one, generic text similarity);
* ``reporter``: ``async report(task, candidates, result, verifier)``, fills the domain's
  parts of a :class:`~atlas_actors.types.TaskResult` after the search (ARC: the two
  attempts per test input and whether they are right);
* ``strategy``: the search its tasks get by default (``evolutionary`` or ``mcts``);
* ``seed_action``: ``(solution) -> ProposedAction | None``, a remembered solution as a
  first action of the tree search;
* ``solution_key``: ``(solution) -> hashable``, what makes two solutions the same answer
  (two diffs of one change), for telling alternatives apart;
* ``options``: a pydantic model of the proposer options
  (``EngineConfig.proposer_options[name]``), checked before they reach ``proposer``;
* ``environment_cache`` and ``sticky``: pool preferences: how many of the domain's
  environments an actor keeps ready, and whether a call waits for the actor that holds
  its task's environment rather than start it on another.

Each callable part may be given as the object or as a ``"module:attribute"`` string,
imported on first use (Gymnasium's ``register(id, entry_point=...)`` is the model), so
registering costs nothing and ``import atlas_actors`` imports no domain. This module is
the mechanism only: the built-in domains are listed in :mod:`atlas_actors.domains`.
Installed packages can register domains through the ``atlas_actors.domains`` entry-point
group: each entry point names a function that is called (with no arguments) to register
its domains.

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
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

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
    """Every part that is specific to one domain (see the module docstring)."""

    name: str
    environment: Ref
    proposer: Ref | None = None
    llm_proposer: Ref | None = None
    judge: Ref | None = None
    features: Any = None
    """A DomainFeatures, or a ``"module:attribute"`` string naming one."""
    reporter: Ref | None = None
    strategy: SearchStrategy = "evolutionary"
    seed_action: Ref | None = None
    solution_key: Ref | None = None
    options: Any = None
    """A pydantic model class, or a ``"module:attribute"`` string naming one."""
    environment_cache: int | None = None
    """Environments (tasks) an actor keeps ready (None: the pool's default)."""
    sticky: bool = False
    """A call waits for an actor that holds its task's environment (costly to start)."""
    description: str = ""

    def __post_init__(self) -> None:
        name = self.name
        if not name or not name.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(f"domain name {name!r}: use letters, digits, '-' and '_'")
        if self.strategy not in ("evolutionary", "mcts"):
            raise ConfigError(
                f"domain {name!r}: strategy={self.strategy!r}; allowed: 'evolutionary', 'mcts'"
            )
        if self.environment_cache is not None and self.environment_cache < 1:
            raise ConfigError(
                f"domain {name!r}: environment_cache={self.environment_cache}; must be >= 1"
            )

    def _load(self, part: str) -> Any:
        return load_ref(getattr(self, part), what=f"domain {self.name!r} {part}")

    def make_environment(self, **options: Any) -> MinimalEnvironment:
        """A new (not yet reset) environment, with ``options`` for its constructor."""
        env: MinimalEnvironment = self._load("environment")(**options)
        return env

    def make_proposer(self, task: Task, llm: Any = None, **options: Any) -> Any:
        """The proposer for one search of ``task``: ``llm_proposer`` when ``llm`` (an
        LLMConfig) is given and the domain has one, else ``proposer``."""
        part = "llm_proposer" if llm is not None and self.llm_proposer is not None else "proposer"
        if getattr(self, part) is None:
            raise ConfigError(
                f"task {task.id}: domain {self.name!r} registers no proposer; pass one "
                "explicitly or register the domain with proposer=..."
            )
        return self._load(part)(task, llm, **options)

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` for the proposer, checked by the domain's options model (the
        fields given, as the model reads them); as given when the domain has none."""
        if self.options is None:
            return dict(options)
        model: type[BaseModel] = self._load("options")
        try:
            parsed = model.model_validate(dict(options))
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in err['loc']) or 'options'}: {err['msg']}"
                for err in e.errors()
            )
            allowed = ", ".join(model.model_fields)
            raise ConfigError(
                f"domain {self.name!r} proposer options: {problems} (allowed: {allowed})"
            ) from None
        return parsed.model_dump(exclude_unset=True)

    def make_judge(self, client: Any, *, owns_client: bool = True) -> Any | None:
        """The domain's LLM value judge on ``client``, or None when it has none."""
        if self.judge is None:
            return None
        return self._load("judge")(client, owns_client=owns_client)

    def features_of(self) -> Any | None:
        """The domain's memory features (a DomainFeatures), or None."""
        return None if self.features is None else self._load("features")

    def seed_action_of(self, solution: Any) -> Any | None:
        """A remembered ``solution`` as a first action of the tree search, or None."""
        if self.seed_action is None:
            return None
        return self._load("seed_action")(solution)

    def key_of(self, solution: Any) -> Hashable | None:
        """What makes ``solution`` the same answer as another (None: no key of its own;
        the caller compares the solutions' canonical JSON)."""
        if self.solution_key is None:
            return None
        key: Hashable = self._load("solution_key")(solution)
        return key

    def reporter_fn(self) -> Callable[..., Any] | None:
        """The domain's reporter, or None."""
        if self.reporter is None:
            return None
        fn: Callable[..., Any] = self._load("reporter")
        return fn


_lock = threading.Lock()
_domains: dict[str, DomainSpec] = {}
_entry_points_loaded = False


def register(spec: DomainSpec, *, replace: bool = False) -> DomainSpec:
    """Register ``spec`` under its name; returns it.

    Registering a name twice raises :class:`~atlas_actors.errors.ConfigError` unless
    ``replace=True`` (or the spec is equal to the registered one).
    """
    with _lock:
        if spec.name in _domains and not replace and _domains[spec.name] != spec:
            raise ConfigError(f"domain {spec.name!r} is already registered (pass replace=True)")
        _domains[spec.name] = spec
    return spec


def register_domain(
    name: str, *, environment: Ref, replace: bool = False, **parts: Any
) -> DomainSpec:
    """Register a domain under ``name`` from its parts (the :class:`DomainSpec` fields:
    ``proposer``, ``llm_proposer``, ``judge``, ``features``, ``reporter``,
    ``strategy``, ``seed_action``, ``solution_key``, ``options``,
    ``environment_cache``, ``sticky``, ``description``); returns its spec."""
    unknown = sorted(set(parts) - set(DomainSpec.__dataclass_fields__))
    if unknown:
        allowed = ", ".join(f for f in DomainSpec.__dataclass_fields__ if f != "name")
        raise ConfigError(
            f"domain {name!r}: unknown part(s) {', '.join(unknown)} (allowed: {allowed})"
        )
    return register(DomainSpec(name, environment, **parts), replace=replace)


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


def pool_preferences(domain: str) -> tuple[int | None, bool]:
    """``(environment_cache, sticky)`` of ``domain``'s spec (``(None, False)`` for a
    domain that is not registered)."""
    spec = get_domain(domain)
    return (None, False) if spec is None else (spec.environment_cache, spec.sticky)


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
