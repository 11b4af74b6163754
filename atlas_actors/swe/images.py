"""Instance images on demand: pull what is missing, build it from a swebench task repo,
record what a run added, prune it afterwards.

* :func:`ensure_image` makes one image present under a :data:`PullPolicy` (``missing``:
  pull when absent; ``always``: pull once per process, then reuse; ``never``: a clear
  error naming the image and the flag). One lock per (engine, image) per event loop, plus
  a check inside it, so concurrent resets in one process pull an image once.
* :func:`pull_image` pulls through aiodocker with the registry credentials of the user's
  Docker config (:func:`registry_auth`), reports progress per layer
  (:class:`LayerProgress`), bounds every attempt (no progress for ``stall_timeout_s`` is
  a failure) and retries what can pass (an unreachable registry, a 5xx) with backoff;
  the error names the image, the registry and what to do.
* :class:`RunImages` is what a run does before its environment actors start: the images
  its instances need are made present once, in the driver (so N actors never pull the
  same image N times); what it pulled or built is written to ``<out>/images.json`` as it
  happens (a killed run's pulls are known to the next) and removed at the end with
  ``prune=True``.
* :func:`build_with_swebench` builds an image from a swebench 5.x task repo
  (``tasks/<instance_id>/Dockerfile``) with swebench's own image builder, which runs
  ``docker buildx build`` and fetches what its Dockerfile names (network needed).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import aiodocker
import aiohttp
import anyio
from anyio.lowlevel import RunVar

from atlas_actors.errors import (
    ConfigError,
    DockerError,
    DockerTimeout,
    ImageMissing,
    ImagePullError,
)
from atlas_actors.sandbox.docker import DockerClient

log = logging.getLogger(__name__)

PullPolicy = Literal["missing", "always", "never"]
PULL_POLICIES: tuple[PullPolicy, ...] = ("missing", "always", "never")
DEFAULT_REGISTRY = "docker.io"


# ----------------------------------------------------------------- references


def split_reference(image: str) -> tuple[str, str]:
    """``(registry, rest)`` of an image reference, as Docker reads it: the first path
    component is a registry when it has a dot or a port, or is ``localhost``."""
    first, sep, rest = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return DEFAULT_REGISTRY, image


def registry_of(image: str) -> str:
    """The registry an image is pulled from (``docker.io`` when none is named)."""
    return split_reference(image)[0]


# ----------------------------------------------------------------- credentials


@dataclass
class RegistryAuth:
    """Credentials for one registry, and where they came from (for error messages)."""

    registry: str
    auth: dict[str, str] | None
    """What goes into ``X-Registry-Auth`` (username/password or identitytoken); None:
    pull anonymously."""
    source: str
    """``config.json``, ``credential helper docker-credential-X`` or ``none``."""
    note: str = ""
    """Why no credentials were found or used (shown when a pull is refused)."""


def docker_config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$DOCKER_CONFIG/config.json``, else ``~/.docker/config.json``."""
    env = os.environ if env is None else env
    base = env.get("DOCKER_CONFIG")
    return (Path(base) if base else Path.home() / ".docker") / "config.json"


def _registry_key(key: str) -> str:
    """``https://index.docker.io/v1/`` -> ``docker.io``; ``http://host:5000/x`` -> ``host:5000``."""
    host = key.split("://", 1)[-1].split("/", 1)[0]
    if host in ("index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"):
        return DEFAULT_REGISTRY
    return host


async def registry_auth(
    registry: str, *, config_path: Path | None = None, helper_timeout_s: float = 30.0
) -> RegistryAuth:
    """The user's credentials for ``registry`` from their Docker config.

    ``auths`` entries (``auth``: base64 ``user:password``; or ``username``/``password``;
    or ``identitytoken``) are used as they are. A credential helper (``credHelpers`` for
    this registry, else ``credsStore``) is asked with ``docker-credential-<name> get``
    (bounded in time); when it is not installed or fails, the pull goes on anonymously
    and a refused pull says why.
    """
    path = config_path or docker_config_path()
    try:
        config = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError) as e:
        raise ConfigError(f"Docker config {path}: cannot read it as JSON: {e}") from e
    if not isinstance(config, dict):
        raise ConfigError(f"Docker config {path}: expected a JSON object")
    auths = config.get("auths") or {}
    entry: dict[str, Any] = {}
    for key, value in auths.items():
        if _registry_key(key) == registry and isinstance(value, dict):
            entry = value
            break
    if entry.get("identitytoken"):
        return RegistryAuth(
            registry,
            {"identitytoken": str(entry["identitytoken"]), "serveraddress": registry},
            f"{path} (identitytoken)",
        )
    if entry.get("auth"):
        try:
            user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
        except (ValueError, UnicodeDecodeError) as e:
            raise ConfigError(
                f"Docker config {path}: auths[{registry!r}].auth is not base64 'user:password'"
            ) from e
        return RegistryAuth(
            registry,
            {"username": user, "password": password, "serveraddress": registry},
            str(path),
        )
    if entry.get("username") and entry.get("password"):
        creds = {"username": str(entry["username"]), "password": str(entry["password"])}
        return RegistryAuth(registry, {**creds, "serveraddress": registry}, str(path))
    helper = (config.get("credHelpers") or {}).get(registry) or config.get("credsStore")
    if helper:
        return await _from_helper(registry, str(helper), path, helper_timeout_s)
    return RegistryAuth(registry, None, "none", f"no credentials for {registry} in {path}")


async def _from_helper(registry: str, helper: str, path: Path, timeout_s: float) -> RegistryAuth:
    exe = f"docker-credential-{helper}"
    if shutil.which(exe) is None:
        return RegistryAuth(
            registry,
            None,
            "none",
            f"{path} names the credential helper {exe!r}, which is not installed here "
            f"(credential helpers need their program on PATH; or put an 'auths' entry for "
            f"{registry} in {path}, e.g. with 'docker login {registry}' and no credsStore)",
        )
    servers = [registry]
    if registry == DEFAULT_REGISTRY:
        servers = ["https://index.docker.io/v1/", registry]
    last = ""
    for server in servers:
        try:
            with anyio.fail_after(timeout_s):
                done = await anyio.run_process([exe, "get"], input=server.encode(), check=False)
        except TimeoutError:
            last = f"{exe} get did not answer in {timeout_s:g}s"
            continue
        if done.returncode != 0:
            last = f"{exe} get failed: {done.stderr.decode(errors='replace').strip()[:300]}"
            continue
        try:
            data = json.loads(done.stdout)
            user, secret = str(data["Username"]), str(data["Secret"])
        except (ValueError, KeyError, TypeError):
            last = f"{exe} get gave no Username/Secret JSON"
            continue
        if user == "<token>":
            token = {"identitytoken": secret, "serveraddress": registry}
            return RegistryAuth(registry, token, f"credential helper {exe}")
        creds = {"username": user, "password": secret, "serveraddress": registry}
        return RegistryAuth(registry, creds, f"credential helper {exe}")
    return RegistryAuth(registry, None, "none", f"credential helper {exe}: {last}")


# ----------------------------------------------------------------- pulling


@dataclass(frozen=True)
class LayerProgress:
    """One progress line of a pull, as Docker reports it per layer."""

    image: str
    layer: str
    """Layer id (short digest); empty for lines about the whole image."""
    status: str
    """``Pulling fs layer``, ``Waiting``, ``Downloading``, ``Verifying Checksum``,
    ``Download complete``, ``Extracting``, ``Pull complete``, ``Already exists``, or an
    image-level line (``Digest: ...``, ``Status: ...``); ``Retrying`` before a retry."""
    current: int | None = None
    total: int | None = None
    attempt: int = 1


PullProgress = Callable[[LayerProgress], None]
"""Called for every progress line (in the event loop: keep it quick)."""


@dataclass
class PullOptions:
    """How a pull is bounded and retried."""

    attempts: int = 3
    """Tries for a failure that may pass (registry unreachable, 5xx, stalled)."""
    backoff_s: float = 1.0
    """Wait before the second try; doubled for each further one (capped at 30 s)."""
    stall_timeout_s: float = 120.0
    """A try with no progress line for this long is abandoned (a silent registry)."""
    timeout_s: float = 3600.0
    """Limit for one try as a whole."""
    config_path: Path | None = None
    """Docker config to read credentials from (default: ``docker_config_path()``)."""


_NOT_RETRIED = (
    "manifest unknown",
    "not found",
    "unauthorized",
    "denied",
    "authentication required",
    "invalid reference",
    "no basic auth credentials",
)


def _retriable(message: str) -> bool:
    low = message.lower()
    return not any(s in low for s in _NOT_RETRIED)


def _explain(image: str, registry: str, message: str, creds: RegistryAuth) -> str:
    low = message.lower()
    if any(s in low for s in ("unauthorized", "denied", "authentication required", "basic auth")):
        why = creds.note or f"credentials from {creds.source} were refused"
        return f"registry {registry} refused the pull of {image} ({message}); {why}"
    if "manifest unknown" in low or "not found" in low:
        return f"registry {registry} has no image {image} ({message})"
    return f"registry {registry} cannot be reached for {image} ({message})"


async def pull_image(
    client: DockerClient,
    image: str,
    *,
    progress: PullProgress | None = None,
    options: PullOptions | None = None,
) -> None:
    """Pull ``image`` onto the engine; ImagePullError (naming the image, the registry and
    the remedy) when it cannot be had after the bounded retries."""
    opts = options or PullOptions()
    registry = registry_of(image)
    creds = await registry_auth(registry, config_path=opts.config_path)
    ref = image
    if creds.auth is not None and registry == DEFAULT_REGISTRY:
        # aiodocker sends credentials only with a registry host in the reference.
        path = image if "/" in image.split(":")[0] else f"library/{image}"
        ref = image if image.startswith(f"{DEFAULT_REGISTRY}/") else f"{DEFAULT_REGISTRY}/{path}"
    started = time.monotonic()
    delay = opts.backoff_s
    last = ""
    for attempt in range(1, opts.attempts + 1):
        try:
            await _pull_once(client, ref, image, creds, progress, opts, attempt)
            return
        except _PullFailed as e:
            last = e.message
            if not e.retriable or attempt == opts.attempts:
                break
        if progress is not None:
            progress(LayerProgress(image, "", "Retrying", attempt=attempt + 1))
        log.warning("pull %s failed (%s); retrying in %.1fs", image, last, delay)
        await anyio.sleep(delay)
        delay = min(30.0, delay * 2)
    tries = f"{attempt} tr{'y' if attempt == 1 else 'ies'} in {time.monotonic() - started:.0f}s"
    raise ImagePullError(
        f"cannot pull image {image}: {_explain(image, registry, last, creds)}; {tries}. "
        f"Check that {registry} is reachable from the Docker engine at {client.host}, "
        "or put the image on the engine yourself and run with --pull never"
    )


class _PullFailed(Exception):
    def __init__(self, message: str, retriable: bool) -> None:
        super().__init__(message)
        self.message = message
        self.retriable = retriable


async def _pull_once(
    client: DockerClient,
    ref: str,
    image: str,
    creds: RegistryAuth,
    progress: PullProgress | None,
    opts: PullOptions,
    attempt: int,
) -> None:
    stream = client.api.images.pull(ref, auth=creds.auth, stream=True, timeout=None)
    it = stream.__aiter__()
    try:
        with anyio.fail_after(opts.timeout_s):
            while True:
                try:
                    with anyio.fail_after(opts.stall_timeout_s):
                        msg = await it.__anext__()
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    raise _PullFailed(
                        f"no progress for {opts.stall_timeout_s:g}s", retriable=True
                    ) from None
                if "error" in msg or "errorDetail" in msg:
                    text = str((msg.get("errorDetail") or {}).get("message") or msg.get("error"))
                    raise _PullFailed(text, _retriable(text))
                if progress is not None:
                    detail = msg.get("progressDetail") or {}
                    progress(
                        LayerProgress(
                            image=image,
                            layer=str(msg.get("id", "")) if "progressDetail" in msg else "",
                            status=str(msg.get("status", "")),
                            current=detail.get("current"),
                            total=detail.get("total"),
                            attempt=attempt,
                        )
                    )
    except TimeoutError:
        raise _PullFailed(f"not done in {opts.timeout_s:g}s", retriable=True) from None
    except aiodocker.exceptions.DockerError as e:
        raise _PullFailed(str(e.message), _retriable(str(e.message))) from None
    except (aiohttp.ClientError, OSError) as e:
        raise DockerError(f"pull {image}: the Docker engine at {client.host} failed: {e}") from e
    finally:
        aclose = getattr(it, "aclose", None)
        if aclose is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await aclose()


# ----------------------------------------------------------------- ensure


_LOCKS: RunVar[dict[tuple[str, str], anyio.Lock]] = RunVar("atlas_image_locks")
_PULLED: RunVar[set[tuple[str, str]]] = RunVar("atlas_images_pulled")


def _per_loop() -> tuple[dict[tuple[str, str], anyio.Lock], set[tuple[str, str]]]:
    try:
        locks = _LOCKS.get()
    except LookupError:
        locks = {}
        _LOCKS.set(locks)
    try:
        pulled = _PULLED.get()
    except LookupError:
        pulled = set()
        _PULLED.set(pulled)
    return locks, pulled


ImageState = Literal["present", "pulled", "built"]
Builder = Callable[[str], Awaitable[None]]
"""``await build(image)``: make ``image`` present by building it (see --build-missing)."""


async def ensure_image(
    client: DockerClient,
    image: str,
    policy: PullPolicy = "missing",
    *,
    progress: PullProgress | None = None,
    options: PullOptions | None = None,
    build: Builder | None = None,
) -> ImageState:
    """Make ``image`` present on the engine; how it got there.

    ``missing``: pulled when absent. ``always``: pulled once per process (a newer image
    under the same tag), then reused. ``never``: ImageMissing naming the image and the
    flag when absent. With ``build``, an image still absent (``never``, or the pull
    failed) is built instead.
    """
    if policy not in PULL_POLICIES:
        raise ConfigError(f"pull={policy!r}: allowed values are {', '.join(PULL_POLICIES)}")
    key = (client.host, image)
    locks, pulled = _per_loop()
    lock = locks.setdefault(key, anyio.Lock())
    async with lock:
        fresh = policy == "always" and key not in pulled
        if not fresh and await client.image_exists(image):
            return "present"
        if policy == "never":
            if build is not None:
                await build(image)
                return "built"
            raise ImageMissing(
                f"image {image} is not on the Docker engine at {client.host}, and --pull is "
                "'never' (pull=never): pull it (docker pull), or run with --pull missing "
                "to pull missing images, or --build-missing to build them"
            )
        try:
            await pull_image(client, image, progress=progress, options=options)
        except ImagePullError:
            if build is None:
                raise
            await build(image)
            return "built"
        pulled.add(key)
        return "pulled"


# ----------------------------------------------------------------- a run's images


@dataclass
class ImagesRecord:
    """What a run did with images (``<out>/images.json`` and ``report.json['images']``)."""

    policy: str = "missing"
    present: list[str] = field(default_factory=list)
    """Images that were on the engine already."""
    pulled: list[str] = field(default_factory=list)
    """Images this run (or an earlier attempt of it, before a resume) pulled."""
    built: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Time to make each image present."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "present": sorted(self.present),
            "pulled": sorted(self.pulled),
            "built": sorted(self.built),
            "pruned": sorted(self.pruned),
            "seconds": dict(sorted(self.seconds.items())),
        }

    @classmethod
    def load(cls, path: Path) -> ImagesRecord:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return cls()
        return cls(
            policy=str(data.get("policy", "missing")),
            pulled=[str(x) for x in data.get("pulled", [])],
            built=[str(x) for x in data.get("built", [])],
            pruned=[str(x) for x in data.get("pruned", [])],
        )


class RunImages:
    """Images for one run: made present up front (in the driver, once each), recorded
    in ``record_path`` as they arrive, pruned at the end when asked.

    Use ``await prepare()`` before the environment actors start and ``await finish()``
    after they are closed (it prunes with ``prune=True``; shielded from cancellation).
    """

    def __init__(
        self,
        client: DockerClient,
        images: Iterable[str],
        *,
        policy: PullPolicy = "missing",
        prune: bool = False,
        record_path: Path | None = None,
        progress: PullProgress | None = None,
        options: PullOptions | None = None,
        build: Builder | None = None,
    ) -> None:
        if policy not in PULL_POLICIES:
            raise ConfigError(f"--pull {policy}: allowed values are {', '.join(PULL_POLICIES)}")
        self.client = client
        self.images = sorted(set(images))
        self.policy: PullPolicy = policy
        self.prune = prune
        self.record_path = record_path
        self.progress = progress
        self.options = options
        self.build = build
        earlier = ImagesRecord.load(record_path) if record_path else ImagesRecord()
        # A resumed run owns what its earlier attempts pulled (and did not prune).
        self.record = ImagesRecord(
            policy=policy,
            pulled=[i for i in earlier.pulled if i not in earlier.pruned],
            built=[i for i in earlier.built if i not in earlier.pruned],
        )

    def _save(self) -> None:
        if self.record_path is None:
            return
        tmp = self.record_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.record.as_dict(), indent=2) + "\n")
        os.replace(tmp, self.record_path)

    async def prepare(self) -> ImagesRecord:
        """Make every image present (one at a time: a pull saturates the link anyway)."""
        for image in self.images:
            started = time.monotonic()
            state = await ensure_image(
                self.client,
                image,
                self.policy,
                progress=self.progress,
                options=self.options,
                build=self.build,
            )
            self.record.seconds[image] = round(time.monotonic() - started, 3)
            owned = image in self.record.pulled or image in self.record.built
            if state == "pulled" and image not in self.record.pulled:
                self.record.pulled.append(image)
            elif state == "built" and image not in self.record.built:
                self.record.built.append(image)
            elif state == "present" and not owned:
                self.record.present.append(image)
            await anyio.to_thread.run_sync(self._save)
        return self.record

    async def finish(self) -> ImagesRecord:
        """Remove what this run pulled or built when ``prune`` (never images that were
        there before it); shielded from cancellation, bounded per image."""
        if not self.prune:
            return self.record
        with anyio.CancelScope(shield=True):
            for image in sorted(set(self.record.pulled + self.record.built)):
                if image in self.record.pruned:
                    continue
                try:
                    with anyio.fail_after(60):
                        await self.client.remove_image(image)
                except (DockerError, TimeoutError) as e:
                    if "No such image" not in str(e) and "404" not in str(e):
                        log.warning("prune %s failed: %s", image, e)
                        continue
                self.record.pruned.append(image)
            await anyio.to_thread.run_sync(self._save)
        return self.record


# ----------------------------------------------------------------- building


async def build_with_swebench(
    image: str,
    instance: Mapping[str, Any],
    task_repo: str | Path,
    *,
    docker_host: str,
    timeout_s: float = 7200.0,
) -> None:
    """Build ``image`` for ``instance`` from a swebench 5.x task repo with swebench's image
    builder (``swebench.image_builder``: ``docker buildx build --load`` of
    ``tasks/<instance_id>/Dockerfile``). Needs the ``docker`` CLI with the buildx plugin,
    the ``docker`` Python SDK, and network for what the Dockerfile fetches; each missing
    piece is a clear DockerError. Build logs go to swebench's ``logs/build_images/``.
    """
    iid = str(instance["instance_id"])
    repo = Path(task_repo)
    dockerfile = repo / "tasks" / iid / "Dockerfile"
    if not dockerfile.is_file():
        raise ConfigError(
            f"--build-missing: --task-repo {repo} has no tasks/{iid}/Dockerfile "
            "(a swebench 5.x task repo holds one folder per instance)"
        )
    try:
        import docker as docker_sdk
        from swebench.image_builder import build_instance_image, make_image_spec
    except ImportError as e:
        raise DockerError(
            f"--build-missing: swebench's image builder cannot be imported ({e}); it needs "
            "swebench 5.x and the 'docker' Python package"
        ) from e
    probe = await _run_bounded(["docker", "buildx", "version"], docker_host, 30)
    if probe is not None:
        raise DockerError(
            f"--build-missing: cannot build {image}: swebench's image builder runs "
            f"'docker buildx build --load', and here {probe}. Install the docker CLI with "
            "its buildx plugin (and give the build network for its base images and "
            "'git clone'), or pull the image instead (--pull missing)"
        )
    # Namespace and tag from the image the instance names, as swebench's harness does.
    namespace = image.split("/")[0] if "/" in image else None
    last = image.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else "latest"
    spec = make_image_spec(
        dict(instance), dockerfile.read_text(), namespace, tag, str(dockerfile.parent)
    )
    if spec.name != image.lower():
        raise ConfigError(
            f"--build-missing: swebench's builder names the image of {iid} {spec.name!r}, "
            f"but the instance's 'image' is {image!r}; they must agree"
        )

    def build() -> None:
        client = docker_sdk.DockerClient(base_url=docker_host, timeout=600)
        try:
            build_instance_image(spec, client, None, False)
        finally:
            client.close()

    try:
        with anyio.fail_after(timeout_s):
            await anyio.to_thread.run_sync(build, abandon_on_cancel=True)
    except TimeoutError as e:
        raise DockerTimeout(f"--build-missing: building {image} took over {timeout_s:g}s") from e
    except Exception as e:
        raise DockerError(f"--build-missing: swebench could not build {image}: {e}") from e


async def _run_bounded(argv: Sequence[str], docker_host: str, timeout_s: float) -> str | None:
    """None when ``argv`` ran fine; else what went wrong, in words."""
    if shutil.which(argv[0]) is None:
        return f"'{argv[0]}' is not installed"
    env = {**os.environ, "DOCKER_HOST": docker_host}
    try:
        with anyio.fail_after(timeout_s):
            done = await anyio.run_process(list(argv), env=env, check=False)
    except TimeoutError:
        return f"'{' '.join(argv)}' did not answer in {timeout_s:g}s"
    if done.returncode != 0:
        err = " ".join((done.stderr or done.stdout).decode(errors="replace").split())
        return f"'{' '.join(argv)}' failed: {err[:300]}"
    return None
