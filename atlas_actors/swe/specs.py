"""Install facts per SWE-bench repository and version, and their translation to pip.

The facts are SWE-bench's own, as its harness published them before 5.x dropped the
table: ``swebench_specs.json`` beside this module holds, copied from swebench 4.1.0's
``swebench/harness/constants/python.py`` (``MAP_REPO_VERSION_TO_SPECS_PY``,
``MAP_REPO_TO_REQS_PATHS``, ``MAP_REPO_TO_ENV_YML_PATHS``) and
``swebench/harness/log_parsers/python.py`` (``MAP_REPO_TO_PARSER_PY``), for every version
swebench 4.1.0 lists: the Python version, the conda ``packages`` (a package list,
``requirements.txt`` or ``environment.yml``), ``pip_packages``, ``pre_install`` steps,
the ``install`` command, ``eval_commands`` and the ``test_cmd``. It covers the
repositories of SWE-bench Lite's dev split (sqlfluff, pvlib, pydicom, astroid,
marshmallow, pyvista) and Lite's pure-Python ones (pytest, pylint, flask, requests,
sphinx, seaborn, xarray).

swebench built these environments with conda; :func:`environment_recipe` turns a spec
into steps for a Debian Python and a venv:

* ``packages`` as a package list (``"numpy"``, ``"pandas scipy"``): the same names
  through pip (conda and PyPI name these packages alike).
* ``packages: requirements.txt``: the repository's requirements file at
  ``environment_setup_commit`` (the first of ``requirements_paths`` that exists, ``-r``
  includes followed, ``-e .`` and comments dropped, as swebench's
  ``get_requirements_by_commit`` does), installed with ``pip install -r``.
* ``packages: environment.yml`` (xarray): conda's environment file read as pip
  requirements: ``name=1.2`` becomes ``name==1.2.*``, ``python`` and ``pip`` are dropped,
  its ``pip:`` section is kept as written. A conda package PyPI cannot install is
  skipped (each is installed on its own, best effort, and the log names what was
  skipped), so tests needing it skip or fail.
* ``pre_install`` steps that run ``apt-get`` are system steps (the environment image;
  Debian's packages under the same names); the others edit the repository
  (``sed -i`` on ``setup.py``, ``tox.ini``): they run before each install and again in
  the eval script, so the image's tracked files stay at the base commit.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.errors import InvalidTaskError

SPEC_TABLE_PATH = Path(__file__).with_name("swebench_specs.json")
"""The table of install facts (package data)."""


class NoSpecError(InvalidTaskError):
    """The table has no install facts for an instance's repository and version."""


class EnvSpec(BaseModel):
    """How one (repository, version) is installed and tested, as SWE-bench published it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    python: str = Field(pattern=r"^3\.\d+$")
    """The Python version (``3.9``)."""
    packages: str = ""
    """conda's packages: a space-separated list, ``requirements.txt`` or ``environment.yml``."""
    pip_packages: tuple[str, ...] = ()
    """Packages pip installs after ``packages`` (pinned where SWE-bench pinned them)."""
    pre_install: tuple[str, ...] = ()
    """Shell steps before the install (system packages, edits of the repository)."""
    install: str = ""
    """The install command, run in the repository."""
    eval_commands: tuple[str, ...] = ()
    """Shell steps the eval script runs before the tests."""
    test_cmd: str = Field(min_length=1)
    """The test command; the test files the test patch touches are appended."""
    no_use_env: bool = False
    """conda detail of ``environment.yml`` installs (``conda create`` then ``env update``)."""


class RepoSpecs(BaseModel):
    """Install facts of one repository, per version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    log_parser: str = Field(min_length=1)
    """The swebench log parser of the repository's test output."""
    requirements_paths: tuple[str, ...] = ()
    """Where ``packages: requirements.txt`` is read from (the first that exists)."""
    environment_yml_paths: tuple[str, ...] = ()
    """Where ``packages: environment.yml`` is read from (the first that exists)."""
    versions: dict[str, EnvSpec]


class SpecTable(BaseModel):
    """Install facts per repository (``owner/name``) and version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = ""
    """Where the facts come from."""
    repos: dict[str, RepoSpecs]

    def lookup(self, repo: str, version: str) -> tuple[RepoSpecs, EnvSpec]:
        """The facts of ``repo`` at ``version``; NoSpecError names what the table has."""
        specs = self.repos.get(repo)
        if specs is None:
            raise NoSpecError(
                f"no spec for repo {repo} version {version}: the table has no repository "
                f"{repo} (it covers {', '.join(sorted(self.repos))})"
            )
        spec = specs.versions.get(version)
        if spec is None:
            raise NoSpecError(
                f"no spec for repo {repo} version {version} (versions in the table: "
                f"{', '.join(specs.versions)})"
            )
        return specs, spec


@cache
def load_spec_table(path: Path = SPEC_TABLE_PATH) -> SpecTable:
    """The table in ``path`` (default: the one shipped with atlas_actors)."""
    return SpecTable.model_validate(json.loads(path.read_text(encoding="utf-8")))


# ------------------------------------------------------------------ translation


class EnvironmentRecipe(BaseModel):
    """A spec turned into shell steps for a Debian Python in a venv."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: tuple[str, ...] = ()
    """Steps that install system packages (``apt-get``): the environment image."""
    dependencies: tuple[str, ...] = ()
    """pip steps for the dependencies: the environment image."""
    repo_edits: tuple[str, ...] = ()
    """Steps that edit the repository: before every install, and in the eval script."""
    install: str = ""
    """The install command (environment image, then again in the instance image)."""
    files: dict[str, str] = Field(default_factory=dict)
    """Files the steps read, by name (``requirements.txt``), placed under the build folder."""
    notes: tuple[str, ...] = ()
    """What the translation changed from SWE-bench's conda recipe."""


FileReader = Callable[[str], str | None]
"""Reads a file of the repository at ``environment_setup_commit`` (None: absent)."""

BUILD_DIR = "/atlas_build"
"""Where an image build's own files (requirements, scripts) are copied."""

_PIP = "python -m pip install"


def environment_recipe(specs: RepoSpecs, spec: EnvSpec, read: FileReader) -> EnvironmentRecipe:
    """The steps that make ``spec``'s environment with pip (see the module docstring).

    ``read`` gives the repository's files at ``environment_setup_commit`` (requirements
    files, ``environment.yml``). Raises NoSpecError when a file the spec needs is absent.
    """
    system = tuple(s for s in spec.pre_install if "apt-get" in s)
    edits = tuple(s for s in spec.pre_install if "apt-get" not in s)
    deps: list[str] = []
    files: dict[str, str] = {}
    notes: list[str] = []
    if spec.packages == "requirements.txt":
        text, where = read_requirements(read, specs.requirements_paths)
        files["requirements.txt"] = text
        deps.append(f"{_PIP} -r {BUILD_DIR}/requirements.txt")
        notes.append(f"conda packages: requirements.txt read from {where}, installed with pip")
    elif spec.packages == "environment.yml":
        text, where = _first_file(read, specs.environment_yml_paths, "environment.yml")
        names, pip_lines = environment_yml_to_pip(text)
        if pip_lines:
            files["environment-pip.txt"] = "\n".join(pip_lines) + "\n"
            deps.append(f"{_PIP} -r {BUILD_DIR}/environment-pip.txt")
        for name in names:
            q = shlex.quote(name)
            deps.append(f"{_PIP} {q} || echo 'atlas: skipped conda package {name}'")
        notes.append(
            f"conda environment.yml ({where}) read as pip requirements, each conda "
            "package installed on its own and skipped when PyPI cannot install it"
        )
    elif spec.packages.strip():
        names = shlex.split(spec.packages)
        deps.append(f"{_PIP} {' '.join(shlex.quote(n) for n in names)}")
        notes.append(f"conda packages {' '.join(names)} installed with pip")
    if spec.pip_packages:
        deps.append(f"{_PIP} {' '.join(shlex.quote(p) for p in spec.pip_packages)}")
    return EnvironmentRecipe(
        system=system,
        dependencies=tuple(deps),
        repo_edits=edits,
        install=spec.install,
        files=files,
        notes=tuple(notes),
    )


def _first_file(read: FileReader, paths: Sequence[str], what: str) -> tuple[str, str]:
    for path in paths:
        text = read(path)
        if text is not None:
            return text, path
    raise NoSpecError(
        f"the spec installs from {what}, and none of {', '.join(paths) or '(no path)'} "
        "exists at environment_setup_commit"
    )


_REPLACE_REQ_PACKAGES = (("types-pkg_resources", "types-setuptools"),)
"""Packages yanked from PyPI, replaced as swebench's ``clean_requirements`` does."""


def read_requirements(read: FileReader, paths: Sequence[str]) -> tuple[str, str]:
    """The requirements text swebench's ``get_requirements_by_commit`` builds: the first
    of ``paths`` that exists, its ``-r`` includes inlined (relative to its folder),
    lines starting with ``-e .``, ``#`` or ``.[test`` dropped; and the path read."""
    text, where = _first_file(read, paths, "requirements.txt")
    folder = where.rsplit("/", 1)[0] if "/" in where else ""

    def keep(line: str) -> bool:
        return not line.strip().startswith(("-e .", "#", ".[test"))

    original: list[str] = []
    extra: list[str] = []
    for line in text.split("\n"):
        if line.strip().startswith("-r"):
            name = line.strip()[2:].strip()
            included = read(f"{folder}/{name}" if folder else name)
            if included is not None:
                extra.extend(x for x in included.split("\n") if keep(x))
        elif keep(line):
            original.append(line)
    out = "\n".join([*extra, "\n".join(original)])
    for old, new in _REPLACE_REQ_PACKAGES:
        out = re.sub(rf"^{re.escape(old)}([<>=!~]=?.*|$)", new, out, flags=re.MULTILINE)
    return out, where


_CONDA_ONLY = {"python", "pip"}


def environment_yml_to_pip(text: str) -> tuple[list[str], list[str]]:
    """``(conda packages as pip requirements, the pip: section's lines)`` of a conda
    environment file. ``name=1.2`` (conda: any 1.2.x) becomes ``name==1.2.*``."""
    try:
        import yaml
    except ImportError as e:  # pyyaml comes with swebench's datasets dependency
        raise NoSpecError(f"reading environment.yml needs PyYAML: {e}") from None
    data = yaml.safe_load(text) or {}
    names: list[str] = []
    pip_lines: list[str] = []
    for dep in data.get("dependencies") or []:
        if isinstance(dep, dict):
            pip_lines.extend(str(x) for x in dep.get("pip") or [])
            continue
        spec = str(dep).strip().split("::")[-1]  # channel::name
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", spec)
        if not m or m.group(1).lower() in _CONDA_ONLY:
            continue
        name, constraint = m.group(1), m.group(2).replace(" ", "")
        if re.fullmatch(r"=[^=<>!].*", constraint):
            constraint = "==" + constraint[1:].split("=")[0] + ".*"
        names.append(name + constraint)
    return names, pip_lines
