"""The image layers of a SWE-bench instance built here, as swebench layers them:

* **base** ``atlas-swe-base:<suite>``: a minimal Debian (:mod:`atlas_actors.swe.bases`);
* **python** ``atlas-swe-python:<X.Y>``: the base with a venv at ``/opt/venv`` (on
  ``PATH``) holding pip, setuptools and wheel (fetched on this machine from the images'
  index as of the dependency date, pip the newest, and copied in: the build needs no
  network), and pip
  pointed at the machine's package index with the machine's CA bundle copied into the
  image (``/etc/pip.conf``, ``/etc/atlas-actors/ca-certificates.crt``);
* **environment** ``atlas-swe-env/<owner>__<name>:<version>``: the repository at
  ``environment_setup_commit`` in ``/testbed``, the spec's system packages, dependencies,
  pre-install edits and install command (``env.sh``);
* **instance** ``atlas-swe-eval/<instance_id>:latest``: ``/testbed`` replaced by the
  checkout of ``base_commit`` (:func:`atlas_actors.swe.mirrors.checkout_commit`), the
  pre-install edits and the install run again (``instance.sh``), the tracked files put
  back to the base commit afterwards.

Each layer carries the label :data:`KEY_LABEL`: a hash of everything that makes it (its
Dockerfile, its scripts and files, the commit, its parent's key). An image whose label
matches is not built again.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from atlas_actors.errors import ConfigError
from atlas_actors.swe.instances import TESTBED
from atlas_actors.swe.specs import BUILD_DIR, EnvironmentRecipe

KEY_LABEL = "org.atlas-actors.build-key"
"""The label holding a layer's content hash."""
ROLE_LABEL = "org.atlas-actors.role"
BASE_COMMIT_LABEL = "org.atlas-actors.base-commit"
SOURCE_COMMIT_LABEL = "org.atlas-actors.source-commit"
MISSING_LABEL = "org.atlas-actors.missing-files"
RECOVERED_LABEL = "org.atlas-actors.recovered-files"
INSTANCE_LABEL = "org.atlas-actors.instance"
VENV = "/opt/venv"
CA_PATH = "/etc/atlas-actors/ca-certificates.crt"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEFAULT_INDEX = "https://pypi.org/simple"
BOOTSTRAP_PACKAGES = ("pip", "setuptools", "wheel")

Network = Literal["host", "default", "none"]


def digest(*parts: object) -> str:
    """A short content hash of ``parts`` (JSON-encoded)."""
    data = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:24]


PREFIX = "atlas-swe"
"""The start of the image names (``atlas-swe-python``, ``atlas-swe-env``, ``atlas-swe-eval``)."""


def python_tag(python: str, prefix: str = PREFIX) -> str:
    """``atlas-swe-python:<X.Y>``."""
    return f"{prefix}-python:{python}"


def env_tag(repo: str, version: str, python: str, fallback: bool, prefix: str = PREFIX) -> str:
    """``atlas-swe-env/<owner>__<name>:<version>`` (``-py<X.Y>`` on a fallback Python)."""
    name = repo.replace("/", "__").lower()
    tag = re.sub(r"[^A-Za-z0-9_.-]", "_", version)
    return f"{prefix}-env/{name}:{tag}{f'-py{python}' if fallback else ''}"


def instance_tag(instance_id: str, prefix: str = PREFIX) -> str:
    """The name ``swe`` and ``swe-eval`` look for: ``atlas-swe-eval/<instance_id>:latest``."""
    return f"{prefix}-eval/{instance_id}:latest".lower()


# ----------------------------------------------------------- the machine's pip


@dataclass(frozen=True)
class PipSettings:
    """What pip inside the images is pointed at."""

    index_url: str = DEFAULT_INDEX
    extra_index_urls: tuple[str, ...] = ()
    ca_bundle: Path | None = None
    """The CA bundle copied into the images (None: pip's own)."""
    timeout_s: int = 180
    uploaded_prior_to: str | None = None
    """pip's ``--uploaded-prior-to`` for the dependency installs (a fixed date makes a
    rebuild resolve the same versions); None: the newest versions."""

    def pip_conf(self) -> str:
        lines = ["[global]", f"index-url = {self.index_url}"]
        if self.extra_index_urls:
            lines.append(f"extra-index-url = {' '.join(self.extra_index_urls)}")
        if self.ca_bundle is not None:
            lines.append(f"cert = {CA_PATH}")
        lines += [
            f"timeout = {self.timeout_s}",
            "no-cache-dir = true",
            "disable-pip-version-check = true",
            "root-user-action = ignore",
        ]
        return "\n".join(lines) + "\n"


def host_pip_config() -> dict[str, str]:
    """This machine's pip settings (``pip config list``: files, then environment)."""
    r = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    out: dict[str, str] = {}
    for line in r.stdout.splitlines():
        m = re.fullmatch(r"([^=]+)\.([\w-]+)='(.*)'", line.strip())
        if m:
            out[m.group(2)] = m.group(3)  # later lines (the environment) win
    return out


def host_pip_settings(
    *,
    index_url: str | None = None,
    ca_bundle: Path | None = None,
    uploaded_prior_to: str | None = None,
) -> PipSettings:
    """Pip settings for the images from this machine's: its index (``file://`` indexes
    and ``find-links`` are this machine's folders, so they are left out) and its CA
    bundle (``cert``, else ``$SSL_CERT_FILE``, else Debian's bundle)."""
    conf = host_pip_config()
    index = index_url or conf.get("index-url") or DEFAULT_INDEX
    if not index.startswith(("http://", "https://")):
        index = DEFAULT_INDEX
    extras = tuple(
        u for u in conf.get("extra-index-url", "").split() if u.startswith(("http://", "https://"))
    )
    cert = ca_bundle
    if cert is None:
        for candidate in (
            conf.get("cert"),
            os.environ.get("SSL_CERT_FILE"),
            "/etc/ssl/certs/ca-certificates.crt",
        ):
            if candidate and Path(candidate).is_file():
                cert = Path(candidate)
                break
    elif not cert.is_file():
        raise ConfigError(f"--ca-bundle {cert}: no such file")
    timeout = conf.get("default-timeout") or conf.get("timeout") or "180"
    return PipSettings(
        index_url=index,
        extra_index_urls=extras,
        ca_bundle=cert,
        timeout_s=int(float(timeout)),
        uploaded_prior_to=uploaded_prior_to,
    )


def download_wheels(
    packages: Sequence[str], python: str, dest: Path, pip: PipSettings
) -> list[Path]:
    """Wheels of ``packages`` and their dependencies for Python ``python``, fetched on
    this machine from the index the images use (``pip``: its index, CA bundle and date;
    this machine's own pip settings, local folders among them, are ignored), as pip in
    an image would resolve them: the newest uploaded before ``pip.uploaded_prior_to``,
    except pip itself (the newest: it must know ``--uploaded-prior-to``)."""
    dest.mkdir(parents=True, exist_ok=True)
    index = ["--isolated", "--index-url", pip.index_url, "--timeout", str(pip.timeout_s)]
    for url in pip.extra_index_urls:
        index += ["--extra-index-url", url]
    if pip.ca_bundle is not None:
        index += ["--cert", str(pip.ca_bundle)]
    groups = [[p for p in packages if p == "pip"], [p for p in packages if p != "pip"]]
    for group, dated in ((groups[0], False), (groups[1], True)):
        if not group:
            continue
        when = (
            ["--uploaded-prior-to", pip.uploaded_prior_to]
            if dated and pip.uploaded_prior_to
            else []
        )
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                *index,
                "--quiet",
                "--only-binary=:all:",
                "--python-version",
                python,
                *when,
                "--dest",
                str(dest),
                *group,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0:
            raise ConfigError(
                f"cannot fetch {' '.join(group)} for Python {python} from {pip.index_url}: "
                f"{(r.stderr or r.stdout)[-1500:]}"
            )
    return sorted(dest.glob("*.whl"))


BOOTSTRAP_SOURCE = "the images' index, as of the date"
"""How the python layer's wheels are chosen (part of its build key)."""


# ----------------------------------------------------------- build contexts


@dataclass
class Context:
    """A docker build context: the Dockerfile, small files, and folders."""

    dockerfile: str
    files: dict[str, bytes] = field(default_factory=dict)
    """Path in the context -> content."""
    dirs: dict[str, Path] = field(default_factory=dict)
    """Path in the context -> a folder on this machine, added whole (with ``.git``)."""

    def tar(self) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            for name, data in {"Dockerfile": self.dockerfile.encode(), **self.files}.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o755 if name.endswith(".sh") else 0o644
                tar.addfile(info, io.BytesIO(data))
            for name, path in self.dirs.items():
                tar.add(str(path), arcname=name)
        return out.getvalue()


def _script(lines: Iterable[str]) -> bytes:
    return ("#!/bin/bash\nset -euxo pipefail\n" + "\n".join(lines) + "\n").encode()


_GIT_SETUP = (
    f"git config --global --add safe.directory {TESTBED}",
    "git config --global user.email atlas@localhost",
    "git config --global user.name atlas",
)


def python_context(
    base_image: str,
    python: str,
    pip: PipSettings,
    wheels: Sequence[Path],
    *,
    system_site_packages: bool = False,
) -> Context:
    """The python layer on ``base_image`` (see the module docstring)."""
    files: dict[str, bytes] = {f"{BUILD_DIR[1:]}/pip.conf": pip.pip_conf().encode()}
    if pip.ca_bundle is not None:
        files[f"{BUILD_DIR[1:]}/ca-certificates.crt"] = pip.ca_bundle.read_bytes()
    for w in wheels:
        files[f"{BUILD_DIR[1:]}/wheels/{w.name}"] = w.read_bytes()
    venv_flags = "--without-pip" + (" --system-site-packages" if system_site_packages else "")
    steps = [
        'python3 -c \'import sys; v = "%d.%d" % sys.version_info[:2]; '
        f'assert v == "{python}", "the base image has Python " + v\'',
        f"python3 -m venv {venv_flags} {VENV}",
        f"install -D -m 0644 {BUILD_DIR}/pip.conf /etc/pip.conf",
    ]
    if pip.ca_bundle is not None:
        steps.append(f"install -D -m 0644 {BUILD_DIR}/ca-certificates.crt {CA_PATH}")
    if wheels:
        steps += [
            f"whl=$(ls {BUILD_DIR}/wheels/pip-*.whl)",
            f'{VENV}/bin/python "$whl/pip" install --no-index --no-cache-dir '
            f"{BUILD_DIR}/wheels/*.whl",
        ]
    files[f"{BUILD_DIR[1:]}/python.sh"] = _script(steps)
    env = f"ENV VIRTUAL_ENV={VENV} PATH={VENV}/bin:{SYSTEM_PATH}"
    return Context(_dockerfile(base_image, "python.sh", tail=(env, 'CMD ["/bin/bash"]')), files)


def _dockerfile(
    parent: str,
    script: str,
    *,
    repo: bool = False,
    replace: bool = False,
    tail: Sequence[str] = (),
) -> str:
    """A layer's Dockerfile: on ``parent``, (``/testbed`` removed,) the repository
    copied to ``/testbed``, the build folder copied and ``script`` run in it."""
    lines = [f"FROM {parent}"]
    if replace:
        lines.append(f"RUN rm -rf {TESTBED}")
    if repo:
        lines.append(f"COPY repo {TESTBED}")
    lines.append(f"COPY {BUILD_DIR[1:]} {BUILD_DIR}")
    if repo:
        lines.append(f"WORKDIR {TESTBED}")
    lines += [f"RUN bash {BUILD_DIR}/{script} && rm -rf {BUILD_DIR}", *tail]
    return "\n".join(lines) + "\n"


def _install_env(uploaded_prior_to: str | None) -> list[str]:
    out = []
    if uploaded_prior_to:
        out.append(f"export PIP_UPLOADED_PRIOR_TO={shlex.quote(uploaded_prior_to)}")
    return out


def env_context(
    python_image: str,
    recipe: EnvironmentRecipe,
    repo_dir: Path,
    *,
    pip_pin: str | None,
    uploaded_prior_to: str | None,
) -> Context:
    """The environment layer: the repository at ``repo_dir`` installed per ``recipe``."""
    steps = ["export DEBIAN_FRONTEND=noninteractive", f"cd {TESTBED}", *_GIT_SETUP]
    steps += recipe.system
    steps += _install_env(uploaded_prior_to)
    steps += recipe.dependencies
    if pip_pin:  # after the dependencies: an older pip may not know --uploaded-prior-to
        steps.append(f"python -m pip install {shlex.quote(pip_pin)}")
    steps += recipe.repo_edits
    if recipe.install:
        steps.append(recipe.install)
    files = {f"{BUILD_DIR[1:]}/{name}": text.encode() for name, text in recipe.files.items()}
    files[f"{BUILD_DIR[1:]}/env.sh"] = _script(steps)
    return Context(_dockerfile(python_image, "env.sh", repo=True), files, {"repo": repo_dir})


def instance_context(
    env_image: str,
    recipe: EnvironmentRecipe,
    repo_dir: Path,
    *,
    uploaded_prior_to: str | None,
) -> Context:
    """The instance layer: ``/testbed`` replaced by ``repo_dir``, installed again."""
    steps = [f"cd {TESTBED}", *_GIT_SETUP, *_install_env(uploaded_prior_to)]
    steps += recipe.repo_edits
    if recipe.install:
        steps.append(recipe.install)
    # The tracked files go back to the base commit (the eval script makes the edits again).
    steps += ["git checkout -q -- .", "git status --short | head -n 20"]
    files = {f"{BUILD_DIR[1:]}/instance.sh": _script(steps)}
    dockerfile = _dockerfile(env_image, "instance.sh", repo=True, replace=True)
    return Context(dockerfile, files, {"repo": repo_dir})


def context_key(ctx: Context, parent_key: str, *extra: object) -> str:
    """The build key of ``ctx`` on a parent with ``parent_key``; folders count by the
    ``extra`` facts that name them (a commit), not by their bytes."""
    files = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(ctx.files.items())}
    return digest(ctx.dockerfile, files, sorted(ctx.dirs), parent_key, *extra)


def labels_for(key: str, role: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return {KEY_LABEL: key, ROLE_LABEL: role, **(extra or {})}


def temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
