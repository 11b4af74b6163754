"""Configuration models (pydantic, ``extra="forbid"``).

Defaults follow the papers: Mind Evolution (Lee et al. 2025) and SWE-Search
(Antoniades et al. 2024), and the seed spec ``004``. Settings from environment
variables and flags are read only at the CLI edge, never here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from atlas_actors.environments.registry import get_domain
from atlas_actors.types import Strategy


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class MindEvolutionConfig(_Config):
    """Mind Evolution: islands of candidates evolved by mutation and crossover."""

    population_size: int = Field(default=20, ge=2)
    """Candidates kept per island after each generation."""
    generations: int = Field(default=10, ge=1)
    """Maximum number of generations."""
    elite_fraction: float = Field(default=0.5, gt=0.0, le=1.0)
    """Fraction of each island's population that survives into the next generation."""
    memory_init_fraction: float = Field(default=0.5, ge=0.0, le=1.0)
    """Fraction of the initial population taken from remembered solutions, if any."""
    mutation_temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """How far a mutation strays: sampling temperature for LLMs, edit size for the DSL."""
    crossover_rate: float = Field(default=0.3, ge=0.0, le=1.0)
    """Probability that a child is made by crossover of two parents instead of mutation."""
    islands: int = Field(default=4, ge=1)
    """Number of islands evolving independently (the paper uses 4)."""
    conversations_per_island: int = Field(default=5, ge=1)
    """LLM proposers: refinement conversations started per island per generation."""
    turns_per_conversation: int = Field(default=4, ge=1)
    """LLM proposers: critic/author refinement turns per conversation."""
    migration_size: int = Field(default=5, ge=0)
    """Top candidates each island sends to the next island on the ring per generation."""
    reset_interval: int = Field(default=3, ge=1)
    """Every this many generations, the weakest islands are reset."""
    reset_islands: int = Field(default=2, ge=0)
    """How many of the weakest islands are reset at a reset."""
    reset_top_k: int = Field(default=5, ge=1)
    """A reset island is re-seeded from this many of the best candidates overall."""
    boltzmann_temperature: float = Field(default=0.1, gt=0.0)
    """Temperature of Boltzmann tournament parent selection (lower = greedier)."""
    max_evaluations: int | None = Field(default=None, ge=1)
    """Budget: stop after this many candidate evaluations (None = no cap)."""
    time_limit_s: float | None = Field(default=None, gt=0.0)
    """Budget: stop after this many seconds of wall time (None = no cap)."""
    stop_on_success: bool = True
    """Stop as soon as a candidate succeeds on everything the search may see (and the
    environment has no doubts about its answers: see ``TrainInvariants`` for ARC)."""
    end_generation_on_success: bool = False
    """With a proposer whose calls run concurrently (an LLM), a success also ends the
    generation's other conversations before their next turn (each turn may cost an LLM
    call). Which turns ran then depends on timing, so the search is no longer fixed by
    its seed: off by default, on for ``atlas-actors arc --proposer hybrid`` (already
    timing-dependent). A sequential proposer's conversations all run either way."""


class SWESearchConfig(_Config):
    """SWE-Search (Antoniades et al. 2024): MCTS with UCT selection and a discriminator
    value estimate, with the engine's additions (values in [0, 1], a table of seen states
    across the tree, virtual loss for parallel expansions). Values are normalised to
    [0, 1], so SWE-Search's penalties (moatless-tree-search's selector, on rewards in
    [-100, 100]) appear here divided by the reward range of 200."""

    max_expansions: int = Field(default=100, ge=1)
    """Budget: node expansions (one proposer call on one tree node each) per search."""
    ucb_constant: float = Field(default=1.414, ge=0.0)
    """Exploration constant c of UCT (``Q + c·sqrt(ln N / n)``) or PUCT
    (``Q + c·P·sqrt(N) / (1 + n)``); sqrt(2), UCB1's constant for values in [0, 1]."""
    max_depth: int = Field(default=20, ge=1)
    """Nodes at this depth are not expanded (SWE-Search: 20)."""
    rollout_depth: int = Field(default=5, ge=0)
    """Steps of a rollout from a promising node (0: no rollouts)."""
    use_discriminator: bool = True
    """Estimate node values (and pick the final answer) with the discriminator; False:
    values are the verifier's partial score and no rollouts run."""
    discriminator_threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    """A new node whose value estimate is at least this gets a rollout
    (``Discriminator.should_rollout``): only the promising nodes pay for one."""
    rollout_top_fraction: float | None = Field(default=None, gt=0.0, le=1.0)
    """The seed's rule instead of ``discriminator_threshold``: a new node gets a rollout
    when its estimate is at least the tree's ``ceil(fraction · nodes)``-th best (the
    seed: the top 10-20%). None: the absolute threshold (docs/swe-search.md compares the
    two)."""
    time_limit_s: float | None = Field(default=None, gt=0.0)
    """Budget: seconds of wall time for one ``search`` call (None = no cap). Expansions
    running when it passes are cut off; what had completed is kept."""
    max_cost: float | None = Field(default=None, ge=0.0)
    """Budget: LLM cost of the proposer and the discriminator for this task, in the
    usage's cost unit (``Usage.cost``, from the configured token prices); checked
    between iterations, so one iteration may overrun it (None = no cap)."""
    children_per_expansion: int = Field(default=1, ge=1)
    """Actions asked from the proposer per expansion (SWE-Search expands one child per
    iteration; cheap offline proposers want more)."""
    max_children: int = Field(default=3, ge=1)
    """Children a node may get over all its expansions (moatless-tree-search's
    ``max_expansions`` per node: 3)."""
    parallel_expansions: int = Field(default=4, ge=1)
    """Nodes selected (with virtual loss), expanded and evaluated at once per iteration,
    each on whichever environment actor is free (1 = the paper's sequential search)."""
    pipeline: bool = False
    """Keep ``parallel_expansions`` proposer calls running: an expansion frees its slot
    when its proposals arrive, so the next node is selected and proposed for while the
    children are tried and verified (at most ``2 × parallel_expansions`` expansions
    outstanding), and each is integrated as it ends instead of waiting for the whole
    batch. More model calls and test runs in flight; the tree then depends on the
    timing of the calls (a seeded run is no longer reproducible)."""
    concurrency: int | None = Field(default=None, ge=1)
    """Environment calls (transitions, evaluations, rollout steps) in flight at once for
    this search (None: no limit beyond ``parallel_expansions`` × children). The result
    does not depend on it."""
    selection: Literal["uct", "puct"] = "uct"
    """``uct`` (SWE-Search) or ``puct`` (AlphaZero's rule, with the proposer's priors
    normalised among siblings)."""
    virtual_loss: float = Field(default=1.0, ge=0.0)
    """Visits of value 0 added to a selected node and its ancestors until its expansion
    is integrated (Chaslot et al. 2008), so parallel selections spread over branches."""
    depth_penalty: float = Field(default=0.004, ge=0.0)
    """Subtracted from an option's score as ``depth_penalty·sqrt(depth)`` of the node it
    leads to (moatless: 0.8·sqrt(depth) on a range of 200)."""
    duplicate_penalty: float = Field(default=0.125, ge=0.0)
    """Subtracted as ``duplicate_penalty·d²`` for a node whose expansions reached ``d``
    already-seen states (moatless: 25·d² on a range of 200)."""
    repeat_penalty: float = Field(default=0.25, ge=0.0)
    """Subtracted for a node whose action repeats its parent's action (moatless's
    duplicate-action penalty: 50 on a range of 200)."""
    max_failures_per_node: int = Field(default=3, ge=1)
    """A node whose expansion failed this many times (the proposer raised or answered
    garbage) is no longer expanded."""
    stop_on_success: bool = True
    """Stop as soon as a node's verifier outcome succeeds."""
    call_timeout_s: float | None = Field(default=900.0, gt=0.0)
    """Limit for one proposer call, transition, evaluation or value estimate; a call
    that takes longer becomes feedback on its node (None = no limit)."""
    max_observation_chars: int = Field(default=4000, ge=100)
    """Observations and feedback kept per node (in the tree and shown to proposers)."""


class RouterConfig(_Config):
    """Task routing (``EnhancedTaskRouter``; the rules are in ``search/router.py``)."""

    similarity_threshold: float = Field(default=0.9, ge=0.0, le=1.0)
    """A successful experience at least this similar is adapted (rule 1)."""
    use_domain_routing: bool = True
    """Route by the task's domain (rule 3) when memory decides nothing."""
    default_strategy: Strategy = "evolutionary"
    """The strategy of a task no rule routes."""
    strategy_match_threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    """Rule 2: successful experiences at least this similar vote on the strategy."""
    strategy_match_min: int = Field(default=2, ge=1)
    """Rule 2: a strategy match needs at least this many voters, all agreeing."""
    strategy_match_votes: int = Field(default=3, ge=1)
    """Rule 2: the most similar successful experiences that vote (at most this many)."""
    max_experiences: int = Field(default=5, ge=0)
    """Experiences handed to the chosen strategy (the most similar successful ones)."""
    min_seed_similarity: float = Field(default=0.3, ge=0.0, le=1.0)
    """Experiences less similar than this are not handed to the strategy."""
    recall_unsolved: bool = True
    """An exact repeat of a task memory holds as searched without passing its checks,
    under the same search settings, is answered from memory (its best solutions
    re-verified, a few evaluations) instead of searched again; False searches again."""


class LLMConfig(_Config):
    """An OpenAI-compatible endpoint (vLLM, llama.cpp server, Ollama, hosted APIs)."""

    base_url: str
    """Endpoint base URL, e.g. ``http://127.0.0.1:8000/v1``."""
    model: str = "default"
    api_key_env: str | None = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (None: no key)."""
    max_concurrency: int = Field(default=16, ge=1)
    timeout_s: float = Field(default=120.0, gt=0.0)
    max_retries: int = Field(default=4, ge=0)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(default=2048, ge=1)
    price_input_per_mtok: float | None = Field(default=None, ge=0.0)
    price_output_per_mtok: float | None = Field(default=None, ge=0.0)
    cache_dir: str | None = None
    """Directory for the on-disk response cache (None: no cache)."""
    total_timeout_s: float | None = Field(default=None, gt=0.0)
    """Deadline for one call including retries and backoff waits (``timeout_s`` bounds
    each attempt). None: ``(max_retries + 1) * timeout_s + 30``."""
    max_n_per_request: int = Field(default=8, ge=1)
    """Samples asked for in one request with ``n``; set 1 for servers that reject
    ``n > 1`` (servers that silently answer fewer choices are topped up anyway)."""
    send_seed: bool = True
    """Send a per-sample ``seed`` derived from the search's rng (vLLM, Ollama and
    OpenAI honour it; others ignore it)."""
    http_backend: Literal["auto", "direct", "aiohttp", "httpx"] = "auto"
    """HTTP path: ``direct`` (one aiohttp session posting the JSON body, with the
    ``openai`` SDK's retry policy; about a third of the SDK path's CPU per request;
    asyncio only), ``aiohttp`` or ``httpx`` (through the ``openai`` SDK's async client
    on that transport), or ``auto`` (``direct`` under asyncio, else ``httpx``)."""


class EngineConfig(_Config):
    """The actor engine: how many actors, where Ray runs."""

    workers: int | None = Field(default=None, ge=1)
    """Environment actors (None: one per CPU of the cluster)."""
    worker_cpus: float | None = Field(default=None, gt=0.0)
    """CPUs each environment actor reserves in Ray (None: 1, or the cluster's CPUs shared
    out when ``workers`` outnumber them, so every actor can be placed)."""
    address: str | None = None
    """Ray address to join (None: ``RAY_ADDRESS`` or a new local instance)."""
    max_concurrent_tasks: int | None = Field(default=None, ge=1)
    """Tasks searched at once by the coordinator (None: 2 per worker)."""
    max_in_flight_per_actor: int = Field(default=2, ge=1)
    """Evaluation batches queued per environment actor."""
    batch_size: int = Field(default=32, ge=1)
    """Candidate evaluations sent to an actor in one call."""
    call_timeout_s: float = Field(default=120.0, gt=0.0)
    """An actor call taking longer than this is treated as a hung actor."""
    max_retries: int = Field(default=3, ge=0)
    """Retries of idempotent work after an actor died or hung."""
    discriminators: int = Field(default=1, ge=0)
    """Discriminator actors (value estimates for tree-search nodes; 0: in the searching
    process)."""
    search: MindEvolutionConfig = Field(default_factory=MindEvolutionConfig)
    """Mind Evolution settings (tasks whose strategy is ``evolutionary``: ARC)."""
    mcts: SWESearchConfig = Field(default_factory=SWESearchConfig)
    """Tree-search settings (tasks whose strategy is ``mcts``: SWE)."""
    seed: int = 0
    llm: LLMConfig | None = None
    """LLM endpoint for the proposers (None: the offline proposers)."""
    placement: Literal["auto", "coordinator", "actors"] = "auto"
    """Where a task's search runs. ``coordinator``: the coordinator runs every search
    and sends evaluations to the environment actors (best when proposing waits on an
    LLM: many calls in flight from one event loop). ``actors``: each task's whole
    search runs inside one environment actor, one task per actor (best for CPU-bound
    offline proposers: one task per core). ``auto``: ``actors`` for the offline
    proposers (an LLM with a domain's proposer ``mode`` ``offline`` or ``hybrid``
    included: the offline proposer works on every turn), ``coordinator`` with an LLM
    alone (see :func:`atlas_actors.actors.coordinator.task_placement`)."""
    max_restarts: int = Field(default=2, ge=0)
    """Times Ray itself restarts a crashed actor in place before the pool replaces it."""
    coordinator_restarts: int = Field(default=2, ge=0)
    """Times the engine starts a new search coordinator after the old one died (its
    environment actors die with it), re-submitting the tasks whose results had not
    arrived; one more death raises :class:`~atlas_actors.errors.ActorError`."""
    namespace: str | None = None
    """Ray namespace for the engine's actors (None: Ray's anonymous namespace)."""
    runtime_env: dict[str, Any] | None = None
    """Extra Ray runtime_env for the job (``env_vars``, ``pip``, ...) when the engine
    starts or joins Ray; merged with the package shipping below."""
    ship_package: bool = True
    """When joining an existing cluster (``address``), ship this ``atlas_actors``
    package to the workers (runtime_env ``py_modules``)."""
    environment_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Constructor options per task domain for the environments the actors hold,
    e.g. ``{"<domain>": {"dataset": "..."}}``."""
    proposer_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Options per task domain for the domain's proposer factory, checked by the
    domain's options model (``DomainSpec.options``), e.g. ``{"<domain>": {"mode":
    "hybrid"}}``."""

    @field_validator("proposer_options")
    @classmethod
    def _check_proposer_options(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each registered domain's options, as its options model reads them."""
        out = {}
        for domain, options in value.items():
            spec = get_domain(domain)
            out[domain] = options if spec is None else spec.check_options(options)
        return out

    environment_cache: dict[str, int] = Field(default_factory=dict)
    """Environments (tasks) each actor keeps ready, per domain, over the domain's own
    preference (``DomainSpec.environment_cache``; 64 when it has none). A container
    domain keeps few: an actor holds one for each of the few tasks whose tree searches
    it serves at once (the pool prefers actors that hold a task's environment)."""
    sticky_domains: list[str] | None = None
    """Domains whose environment calls wait for an actor that already holds the task's
    environment rather than start it on another (a container takes seconds and memory
    to start), unless the other actor is idle and no waiting call wants it. None: the
    domains whose spec asks for it (``DomainSpec.sticky``); []: every call goes to the
    least-loaded actor."""
    memory: str | None = None
    """Path of the experience store (SQLite) the coordinator routes tasks with and
    records finished tasks in; None: no memory (every task routed by its domain)."""
    memory_reset: bool = False
    """Move an unreadable or corrupt ``memory`` file aside and start a fresh store
    (otherwise such a file is a clear error naming it)."""
    router: RouterConfig = Field(default_factory=RouterConfig)
    """Routing thresholds (used with ``memory``)."""
    run_id: str | None = None
    """Identifies this run's experiences in memory (re-recording a task is a no-op)."""
    tree_dir: str | None = None
    """Folder for tree-search trees (``<task id>.json``, written after every iteration
    and resumed from); None: trees are not saved."""
