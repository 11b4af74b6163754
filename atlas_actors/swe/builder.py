"""Build SWE-bench instances here: images in layers from git mirrors and PyPI, an
instances file ready for ``swe`` and ``swe-eval`` (behind ``atlas-actors swe-build``).

:func:`build_instances` takes SWE-bench rows (swebench's dataset fields; ``image`` and
``eval_script`` are not needed), and for each:

1. finds its install facts (:mod:`atlas_actors.swe.specs`), the Python they name among
   those the Debian suites give (:data:`atlas_actors.swe.bases.SUITE_PYTHON`; with
   ``python_fallback`` the nearest newer one), and its mirror
   (:mod:`atlas_actors.swe.mirrors`); what is missing makes the instance ``skipped``,
   with the reason;
2. builds the layers it needs (:mod:`atlas_actors.swe.layers`), each once per run and
   only when no image with the same content key exists, ``jobs`` builds at a time, a log
   per image under ``out/logs/``; a failed layer fails the instances on it, never the
   batch;
3. writes ``out/build.json`` (per instance: image, status, seconds, reason) and
   ``out/instances.jsonl``: the built instances, each with ``image``, ``eval_script``
   (swebench-shaped: the test patch applied, the repository's test command run on the
   test files the test patch touches, between swebench's markers), ``log_parser`` and
   ``eval_type``. A rerun with the same ``out`` keeps the entries of instances it did
   not touch.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.errors import AtlasError, InvalidTaskError
from atlas_actors.sandbox.docker import DockerClient
from atlas_actors.swe import layers
from atlas_actors.swe.bases import PYTHON_SUITE, base_tag, ensure_base
from atlas_actors.swe.instances import make_eval_script, parse_instance
from atlas_actors.swe.mirrors import (
    Checkout,
    MirrorNotFound,
    Recover,
    checkout_commit,
    find_mirror,
    read_file_at,
    recover_from_index,
    resolve_commit,
)
from atlas_actors.swe.specs import (
    EnvironmentRecipe,
    EnvSpec,
    NoSpecError,
    RepoSpecs,
    SpecTable,
    environment_recipe,
    load_spec_table,
)

Status = Literal["built", "cached", "failed", "skipped"]
DEFAULT_UPLOADED_PRIOR_TO = "2024-01-01T00:00:00Z"
"""The date dependencies are resolved as of unless told otherwise (see
:attr:`BuildConfig.uploaded_prior_to`)."""
REQUIRED_FIELDS = (
    "instance_id",
    "repo",
    "version",
    "base_commit",
    "test_patch",
    "FAIL_TO_PASS",
    "problem_statement",
)


class BuildConfig(BaseModel):
    """How ``swe-build`` builds (the CLI's flags)."""

    model_config = ConfigDict(extra="forbid")

    mirrors_dir: Path | None = None
    """A folder holding one git repository per repo, as ``<owner>__<name>``."""
    mirrors: dict[str, Path] = Field(default_factory=dict)
    """``owner/name`` -> a git repository (wins over ``mirrors_dir``)."""
    jobs: int = Field(default=1, ge=1)
    """Image builds at a time."""
    network: layers.Network = "host"
    """Network of the environment and instance builds, which install from the package
    index (on an engine started with ``--bridge=none`` only ``host`` reaches it)."""
    python_fallback: bool = False
    """Build an instance whose Python no Debian suite gives on the nearest newer one
    (recorded in build.json); otherwise it is skipped."""
    pythons: dict[str, str] = Field(default_factory=lambda: dict(PYTHON_SUITE))
    """Python version -> the Debian suite whose base image gives it."""
    build_bases: bool = True
    """Make a missing base image with debootstrap (needs root)."""
    bootstrap_packages: tuple[str, ...] = layers.BOOTSTRAP_PACKAGES
    """What the python layer's venv starts with (fetched with this machine's pip)."""
    system_site_packages: bool = False
    """The venv sees the base image's Debian packages (its pytest, for instance)."""
    index_url: str | None = None
    """The package index pip uses in the images (default: this machine's, else PyPI)."""
    ca_bundle: Path | None = None
    """The CA bundle copied into the images (default: this machine's pip's)."""
    uploaded_prior_to: str | None = DEFAULT_UPLOADED_PRIOR_TO
    """Resolve dependencies as of this date (pip's ``--uploaded-prior-to``; None: the
    newest). The default is of the era of SWE-bench's harness: newer setuptools no longer
    ship ``pkg_resources`` and pytest 8 no longer runs nose-style ``setup`` methods, both
    of which the repositories at their SWE-bench versions use."""
    pip_pins: dict[str, str] = Field(default_factory=dict)
    """``owner/name`` or ``owner/name@version`` -> the pip requirement installed first in
    its environment (``pip<24.1``), for specs an older pip needs; merged over
    :data:`PIP_PINS`."""
    build_timeout_s: float = Field(default=3600.0, gt=0)
    """Limit for one image build."""
    force: bool = False
    """Rebuild the environment and instance images even when their key matches, every
    step run again (none of Docker's cached steps reused)."""
    recover_missing_files: bool = True
    """Look for the files a partial mirror lacks in the project's release on the package
    index (matched by git blob id: exactly the missing file or nothing)."""
    docker_host: str | None = None
    spec_table: Path | None = None
    """A table of install facts in the shipped table's format (default: the shipped one)."""
    image_prefix: str = Field(default=layers.PREFIX, pattern=r"^[a-z0-9][a-z0-9._/-]*$")
    """The start of the image names: ``<prefix>-python:3.9``, ``<prefix>-env/...``,
    ``<prefix>-eval/<instance_id>:latest``."""


PIP_PINS: dict[str, str] = {
    # astroid 2.12 on pins setuptools~=62.6 as its build backend, which has no PEP 660
    # editable hook; pip 25.3 dropped the fallback to 'setup.py develop'.
    "pylint-dev/astroid": "pip<25.3",
}
"""pip versions per ``owner/name`` or ``owner/name@version`` that the shipped specs need
(installed first in the environment image)."""


@dataclass
class InstanceBuild:
    """What became of one instance (a ``build.json`` entry)."""

    instance_id: str
    repo: str
    version: str
    status: Status = "skipped"
    reason: str = ""
    image: str = ""
    env_image: str = ""
    python: str = ""
    python_requested: str = ""
    python_fallback: bool = False
    env_seconds: float = 0.0
    """Seconds this run spent building the environment image (0 when cached)."""
    instance_seconds: float = 0.0
    """Seconds this run spent building the instance image (0 when cached)."""
    base_commit: str = ""
    source_commit: str = ""
    missing_files: list[str] = field(default_factory=list)
    recovered_files: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    row: dict[str, Any] = field(default_factory=dict, repr=False)
    """The instance row for the instances file (built instances)."""

    def entry(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "row"}
        out["seconds"] = round(self.env_seconds + self.instance_seconds, 2)
        out["env_seconds"] = round(self.env_seconds, 2)
        out["instance_seconds"] = round(self.instance_seconds, 2)
        return out


@dataclass(frozen=True)
class BuildEvent:
    """Progress: an image's build (``start``, ``line``, ``built``, ``cached``,
    ``failed``) or an instance finished (``instance``, with ``result``)."""

    kind: str
    image: str = ""
    text: str = ""
    result: InstanceBuild | None = None


Progress = Callable[[BuildEvent], None]


class LayerFailed(AtlasError):
    """An image build failed (the message names the image, the step and the log)."""


@dataclass
class _Layer:
    """One image of the run: built (or found) once, awaited by everything on it."""

    done: anyio.Event = field(default_factory=anyio.Event)
    labels: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    built: bool = False
    error: LayerFailed | None = None


def _version_key(x: str) -> tuple[int, ...]:
    return tuple(int(p) for p in x.split(".") if p.isdigit())


def choose_python(requested: str, available: Sequence[str], fallback: bool) -> str | None:
    """``requested`` when available; with ``fallback`` the nearest newer available one."""
    if requested in available:
        return requested
    if not fallback:
        return None
    newer = sorted(
        (p for p in available if _version_key(p) > _version_key(requested)), key=_version_key
    )
    return newer[0] if newer else None


def check_row(row: Any, where: str) -> dict[str, Any]:
    """A SWE-bench row with what a build needs (InvalidTaskError naming the field)."""
    if not isinstance(row, dict):
        raise InvalidTaskError(f"{where}: an instance must be a JSON object")
    for name in REQUIRED_FIELDS:
        if name not in row or row[name] in (None, ""):
            raise InvalidTaskError(f"{where}: field {name!r} is missing")
    out = dict(row)
    out["version"] = str(out["version"])
    return out


def test_files(test_patch: str) -> tuple[list[str], list[str]]:
    """``(files to reset, files to run)`` of a test patch, as swebench 4's harness chose
    them: the changed files that exist at the base (``swebench.utils.get_modified_files``)
    and every changed file except non-test ones (``NON_TEST_EXTS``)."""
    from swebench.harness.constants import NON_TEST_EXTS
    from swebench.utils import get_modified_files

    touched = re.findall(r"diff --git a/.* b/(.*)", test_patch)
    run = [f for f in touched if not any(f.endswith(ext) for ext in NON_TEST_EXTS)]
    return list(get_modified_files(test_patch)), run


def eval_script(base_commit: str, test_patch: str, spec: EnvSpec, recipe: EnvironmentRecipe) -> str:
    """The instance's eval script (swebench's shape: see :func:`make_eval_script`); the
    spec's ``eval_commands`` and pre-install edits come first."""
    reset, run = test_files(test_patch)
    preamble = [*spec.eval_commands, *recipe.repo_edits]
    return make_eval_script(
        base_commit, reset, test_patch, spec.test_cmd, run_files=run, preamble=preamble
    )


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ERROR = re.compile(r"\berror\b|Error\b|ERROR", re.IGNORECASE)


def _safe(tag: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", tag)


class Builder:
    """One ``swe-build`` run (see the module docstring); use :func:`build_instances`."""

    def __init__(
        self,
        config: BuildConfig,
        out_dir: Path,
        docker: DockerClient,
        progress: Progress | None = None,
    ) -> None:
        self.config = config
        self.out = out_dir
        self.logs = out_dir / "logs"
        self.docker = docker
        self.progress = progress or (lambda e: None)
        self.table: SpecTable = (
            load_spec_table(config.spec_table) if config.spec_table else load_spec_table()
        )
        self.limiter = anyio.CapacityLimiter(config.jobs)
        self.layer_state: dict[str, _Layer] = {}
        self.pip: layers.PipSettings | None = None
        self.work = layers.temp_dir("atlas-swe-build.")
        self.pins = {**PIP_PINS, **config.pip_pins}
        self.recover: Recover | None = None
        if config.recover_missing_files:
            self.recover = functools.partial(recover_from_index, cache=self.work / "dists")

    # --------------------------------------------------------------- planning

    def plan(self, row: dict[str, Any]) -> tuple[InstanceBuild, tuple[Any, ...] | None]:
        """The instance's record, and what its build needs (None: skipped, with why)."""
        rec = InstanceBuild(row["instance_id"], row["repo"], row["version"], row=row)
        try:
            specs, spec = self.table.lookup(row["repo"], row["version"])
        except NoSpecError as e:
            rec.reason = f"skipped: {e}"
            return rec, None
        rec.python_requested = spec.python
        python = choose_python(
            spec.python, sorted(self.config.pythons), self.config.python_fallback
        )
        if python is None:
            have = ", ".join(sorted(self.config.pythons, key=_version_key))
            hint = (
                ""
                if self.config.python_fallback
                else " (--python-fallback builds it on the nearest newer one)"
            )
            rec.reason = f"skipped: needs Python {spec.python}; the base images give {have}{hint}"
            return rec, None
        rec.python = python
        rec.python_fallback = python != spec.python
        try:
            mirror = find_mirror(row["repo"], self.config.mirrors_dir, self.config.mirrors)
        except MirrorNotFound as e:
            rec.reason = f"skipped: {e}"
            return rec, None
        prefix = self.config.image_prefix
        rec.env_image = layers.env_tag(
            row["repo"], row["version"], python, rec.python_fallback, prefix
        )
        rec.image = layers.instance_tag(row["instance_id"], prefix)
        return rec, (specs, spec, mirror)

    # ----------------------------------------------------------------- layers

    async def _existing_labels(self, tag: str) -> dict[str, str] | None:
        from atlas_actors.errors import DockerError

        try:
            info = await self.docker.call("image inspect", self.docker.api.images.inspect(tag))
        except DockerError as e:
            if "404" in str(e) or "No such image" in str(e):
                return None
            raise
        return dict((info.get("Config") or {}).get("Labels") or {})

    async def _once(self, tag: str, fill: Callable[[_Layer], Awaitable[None]]) -> _Layer:
        """``fill`` the state of image ``tag`` once per run; later callers wait for it
        (and get its failure)."""
        state = self.layer_state.get(tag)
        if state is not None:
            await state.done.wait()
            if state.error is not None:
                raise state.error
            return state
        state = self.layer_state[tag] = _Layer()
        try:
            await fill(state)
            return state
        except LayerFailed as e:
            state.error = e
            raise
        finally:
            state.done.set()

    async def layer(
        self,
        tag: str,
        key: str,
        make: Callable[[], layers.Context],
        *,
        network: str,
        labels: Callable[[], dict[str, str]],
        force: bool,
    ) -> _Layer:
        """``tag`` present with build key ``key`` (built from ``make()`` when not), once."""

        async def fill(state: _Layer) -> None:
            existing = await self._existing_labels(tag)
            if not force and existing is not None and existing.get(layers.KEY_LABEL) == key:
                state.labels = existing
                self.progress(BuildEvent("cached", tag))
                return
            async with self.limiter:
                state.labels, state.seconds = await self._build(
                    tag, key, make, network, labels, nocache=force
                )
            state.built = True

        return await self._once(tag, fill)

    async def _build(
        self,
        tag: str,
        key: str,
        make: Callable[[], layers.Context],
        network: str,
        labels: Callable[[], dict[str, str]],
        *,
        nocache: bool = False,
    ) -> tuple[dict[str, str], float]:
        """Build ``tag`` (``nocache``: none of Docker's cached steps reused)."""
        from atlas_actors.errors import DockerError

        self.progress(BuildEvent("start", tag))
        started = time.monotonic()
        log_path = self.logs / f"{_safe(tag)}.log"
        await anyio.to_thread.run_sync(lambda: log_path.parent.mkdir(parents=True, exist_ok=True))
        log = await anyio.to_thread.run_sync(lambda: log_path.open("w", encoding="utf-8"))
        last_step = [""]
        errors: list[str] = []

        def on_line(text: str) -> None:
            text = _ANSI.sub("", text)
            log.write(text)
            log.flush()
            for line in text.splitlines():
                if line.startswith("+ "):
                    last_step[0] = line[2:]
                    errors.clear()
                elif _ERROR.search(line) and not line.startswith("error: The command"):
                    errors.append(line.strip()[:300])
                if line.strip():
                    self.progress(BuildEvent("line", tag, line.strip()))

        try:
            try:
                ctx = await anyio.to_thread.run_sync(make)
                tar = await anyio.to_thread.run_sync(ctx.tar)
            except (AtlasError, OSError, RuntimeError) as e:
                on_line(f"error: preparing the build context: {e}\n")
                raise LayerFailed(f"{tag}: preparing the build failed: {e}") from None
            on_line(f"# {tag}  key {key}  network {network}\n{ctx.dockerfile}\n")
            all_labels = labels()
            all_labels[layers.KEY_LABEL] = key
            try:
                await self.docker.build_image(
                    tar,
                    tag,
                    timeout_s=self.config.build_timeout_s,
                    labels=all_labels,
                    network=network,
                    nocache=nocache,
                    on_line=on_line,
                )
            except DockerError as e:
                step = f" at '{last_step[0][:300]}'" if last_step[0] else ""
                detail = " / ".join(errors[-2:]) or str(e).split("\n", 1)[0]
                self.progress(BuildEvent("failed", tag, detail))
                raise LayerFailed(
                    f"{tag}: build failed{step}: {detail} (log: {log_path})"
                ) from None
        finally:
            await anyio.to_thread.run_sync(log.close)
        seconds = time.monotonic() - started
        self.progress(BuildEvent("built", tag, f"{seconds:.0f}s"))
        return all_labels, seconds

    async def base_layer(self, python: str) -> _Layer:
        suite = self.config.pythons[python]
        tag = base_tag(suite)

        async def fill(state: _Layer) -> None:
            labels = await self._existing_labels(tag)
            if labels is None:
                if not self.config.build_bases:
                    raise LayerFailed(
                        f"{tag}: the base image is missing (build it with "
                        f"'scripts/build-base-image --suite {suite}')"
                    )
                async with self.limiter:
                    await self._make_base(suite, tag)
                labels = await self._existing_labels(tag) or {}
            info = await self.docker.call("image inspect", self.docker.api.images.inspect(tag))
            state.labels = {**labels, "id": str(info.get("Id", ""))}

        return await self._once(tag, fill)

    async def _make_base(self, suite: str, tag: str) -> None:
        self.progress(BuildEvent("start", tag))
        log_path = self.logs / f"{_safe(tag)}.log"
        await anyio.to_thread.run_sync(lambda: log_path.parent.mkdir(parents=True, exist_ok=True))
        log = await anyio.to_thread.run_sync(lambda: log_path.open("w", encoding="utf-8"))
        started = time.monotonic()

        def write(line: str) -> None:
            log.write(line + "\n")
            log.flush()
            self.progress(BuildEvent("line", tag, line))

        try:
            await ensure_base(self.docker, suite, tag=tag, log=write)
        except AtlasError as e:
            self.progress(BuildEvent("failed", tag, str(e)[:200]))
            raise LayerFailed(f"{tag}: {str(e)[:500]} (log: {log_path})") from None
        finally:
            await anyio.to_thread.run_sync(log.close)
        self.progress(BuildEvent("built", tag, f"{time.monotonic() - started:.0f}s"))

    async def python_layer(self, python: str) -> _Layer:
        base = await self.base_layer(python)
        if self.pip is None:
            self.pip = await anyio.to_thread.run_sync(
                lambda: layers.host_pip_settings(
                    index_url=self.config.index_url,
                    ca_bundle=self.config.ca_bundle,
                    uploaded_prior_to=self.config.uploaded_prior_to,
                )
            )
        pip = self.pip
        packages = self.config.bootstrap_packages
        base_image = base_tag(self.config.pythons[python])
        sysp = self.config.system_site_packages
        plan = layers.python_context(base_image, python, pip, [], system_site_packages=sysp)
        dated = pip.uploaded_prior_to
        key = layers.context_key(
            plan, base.labels.get("id", ""), python, packages, dated, layers.BOOTSTRAP_SOURCE
        )

        def make() -> layers.Context:
            wheels = []
            if packages:
                folder = self.work / f"wheels-{python}"
                wheels = layers.download_wheels(packages, python, folder, pip)
            return layers.python_context(base_image, python, pip, wheels, system_site_packages=sysp)

        return await self.layer(
            layers.python_tag(python, self.config.image_prefix),
            key,
            make,
            network="none",
            labels=lambda: {layers.ROLE_LABEL: "swe-python"},
            force=False,
        )

    def _pip_pin(self, repo: str, version: str) -> str | None:
        return self.pins.get(f"{repo}@{version}") or self.pins.get(repo)

    async def env_layer(
        self, rec: InstanceBuild, specs: RepoSpecs, spec: EnvSpec, mirror: Path
    ) -> tuple[_Layer, EnvironmentRecipe]:
        py = await self.python_layer(rec.python)
        row = rec.row
        commit = str(row.get("environment_setup_commit") or row["base_commit"])

        def recipe() -> EnvironmentRecipe:
            full = resolve_commit(mirror, commit)
            return environment_recipe(specs, spec, lambda path: read_file_at(mirror, full, path))

        try:
            env_recipe = await anyio.to_thread.run_sync(recipe)
        except InvalidTaskError as e:
            raise LayerFailed(f"{rec.env_image}: {e}") from None
        pin = self._pip_pin(rec.repo, rec.version)
        uploaded = self.config.uploaded_prior_to
        repo_dir = self.work / _safe(rec.env_image) / "repo"
        plan = layers.env_context(
            layers.python_tag(rec.python, self.config.image_prefix),
            env_recipe,
            repo_dir,
            pip_pin=pin,
            uploaded_prior_to=uploaded,
        )
        key = layers.context_key(plan, py.labels.get(layers.KEY_LABEL, ""), commit)

        def make() -> layers.Context:
            checkout_commit(mirror, commit, repo_dir, self.recover)
            return plan

        state = await self.layer(
            rec.env_image,
            key,
            make,
            network=self.config.network,
            labels=lambda: {layers.ROLE_LABEL: "swe-env"},
            force=self.config.force,
        )
        return state, env_recipe

    async def instance_layer(
        self,
        rec: InstanceBuild,
        env: _Layer,
        recipe: EnvironmentRecipe,
        mirror: Path,
    ) -> _Layer:
        row = rec.row
        repo_dir = self.work / _safe(rec.image) / "repo"
        plan = layers.instance_context(
            rec.env_image, recipe, repo_dir, uploaded_prior_to=self.config.uploaded_prior_to
        )
        key = layers.context_key(plan, env.labels.get(layers.KEY_LABEL, ""), row["base_commit"])
        checkout: list[Checkout] = []

        def make() -> layers.Context:
            checkout.append(checkout_commit(mirror, row["base_commit"], repo_dir, self.recover))
            return plan

        def labels() -> dict[str, str]:
            c = checkout[0]
            return {
                layers.ROLE_LABEL: "swe-instance",
                layers.INSTANCE_LABEL: rec.instance_id,
                layers.BASE_COMMIT_LABEL: c.commit,
                layers.SOURCE_COMMIT_LABEL: c.source_commit,
                layers.MISSING_LABEL: json.dumps(c.missing),
                layers.RECOVERED_LABEL: json.dumps(c.recovered),
            }

        return await self.layer(
            rec.image,
            key,
            make,
            network=self.config.network,
            labels=labels,
            force=self.config.force,
        )

    # --------------------------------------------------------------- instances

    async def build_one(self, rec: InstanceBuild, needs: tuple[Any, ...]) -> None:
        specs, spec, mirror = needs
        try:
            env, recipe = await self.env_layer(rec, specs, spec, mirror)
            rec.logs.append(str(self.logs / f"{_safe(rec.env_image)}.log"))
            rec.env_seconds = env.seconds if env.built else 0.0
            inst = await self.instance_layer(rec, env, recipe, mirror)
            rec.logs.append(str(self.logs / f"{_safe(rec.image)}.log"))
            rec.instance_seconds = inst.seconds if inst.built else 0.0
        except LayerFailed as e:
            rec.status = "failed"
            rec.reason = str(e)
            return
        labels = inst.labels
        rec.base_commit = labels.get(layers.BASE_COMMIT_LABEL, rec.row["base_commit"])
        rec.source_commit = labels.get(layers.SOURCE_COMMIT_LABEL, rec.row["base_commit"])
        rec.missing_files = json.loads(labels.get(layers.MISSING_LABEL) or "[]")
        rec.recovered_files = json.loads(labels.get(layers.RECOVERED_LABEL) or "[]")
        rec.status = "built" if inst.built else "cached"
        if rec.missing_files:
            rec.reason = (
                f"the mirror lacks {len(rec.missing_files)} file(s) of the base commit, left "
                f"out of the image: {', '.join(rec.missing_files[:5])}"
            )
        rec.row = self.instance_row(rec, spec, specs, recipe)

    def instance_row(
        self, rec: InstanceBuild, spec: EnvSpec, specs: RepoSpecs, recipe: EnvironmentRecipe
    ) -> dict[str, Any]:
        row = dict(rec.row)
        row["image"] = rec.image
        row["eval_script"] = eval_script(rec.base_commit, row["test_patch"], spec, recipe)
        row["log_parser"] = specs.log_parser
        row["eval_type"] = "pass_and_fail"
        if rec.base_commit != row["base_commit"]:
            row["source_commit"] = row["base_commit"]
            row["base_commit"] = rec.base_commit
        return parse_instance(row, where=f"instance {rec.instance_id}").model_dump(mode="json")


async def build_instances(
    rows: Sequence[dict[str, Any]],
    config: BuildConfig,
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
) -> list[InstanceBuild]:
    """Build every row's images (see the module docstring); one record per row, in order.

    Writes ``out_dir/build.json`` and ``out_dir/instances.jsonl`` (merged with what an
    earlier run with the same ``out_dir`` wrote)."""
    import shutil

    out = Path(out_dir)
    await anyio.to_thread.run_sync(lambda: out.mkdir(parents=True, exist_ok=True))
    emit = progress or (lambda e: None)
    async with DockerClient(config.docker_host) as docker:
        builder = Builder(config, out, docker, emit)
        try:
            planned = [builder.plan(r) for r in rows]

            async def one(rec: InstanceBuild, needs: tuple[Any, ...] | None) -> None:
                if needs is not None:
                    await builder.build_one(rec, needs)
                emit(BuildEvent("instance", rec.image, rec.status, rec))

            async with anyio.create_task_group() as tg:
                for rec, needs in planned:
                    tg.start_soon(one, rec, needs)
        finally:
            await anyio.to_thread.run_sync(lambda: shutil.rmtree(builder.work, ignore_errors=True))
    records = [rec for rec, _ in planned]
    await anyio.to_thread.run_sync(write_outputs, out, records, config)
    return records


def write_outputs(out: Path, records: Sequence[InstanceBuild], config: BuildConfig) -> None:
    """``build.json`` and ``instances.jsonl``, merged with an earlier run's."""
    build_path, inst_path = out / "build.json", out / "instances.jsonl"
    entries: dict[str, Any] = {}
    if build_path.is_file():
        try:
            entries = dict(json.loads(build_path.read_text()).get("instances") or {})
        except (OSError, ValueError):
            entries = {}
    rows: dict[str, str] = {}
    if inst_path.is_file():
        for line in inst_path.read_text().splitlines():
            if line.strip():
                try:
                    rows[json.loads(line)["instance_id"]] = line
                except (ValueError, KeyError):
                    continue
    for rec in records:
        new, old = rec.entry(), entries.get(rec.instance_id) or {}
        # What building took, kept from the run that built it when this one found it.
        for part, spent in (("env", rec.env_seconds), ("instance", rec.instance_seconds)):
            key = f"{part}_build_seconds"
            same = (
                old.get("env_image" if part == "env" else "image")
                == new["env_image" if part == "env" else "image"]
            )
            new[key] = round(spent, 2) if spent or not same else old.get(key)
        entries[rec.instance_id] = new
        rows.pop(rec.instance_id, None)
        if rec.status in ("built", "cached"):
            rows[rec.instance_id] = json.dumps(rec.row)
    counts: dict[str, int] = {}
    for e in entries.values():
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    report = {
        "counts": counts,
        "config": json.loads(config.model_dump_json()),
        "instances": dict(sorted(entries.items())),
    }
    build_path.write_text(json.dumps(report, indent=2) + "\n")
    inst_path.write_text("".join(rows[k] + "\n" for k in sorted(rows)))
