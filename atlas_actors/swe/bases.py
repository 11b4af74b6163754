"""The offline base images: a minimal Debian per suite, made with debootstrap, no registry.

``atlas-swe-base:<suite>`` is ``debootstrap --variant=minbase`` of a Debian suite from the
machine's configured Debian mirror with ``python3``, ``python3-pytest``, ``git`` and
``patch``, imported with ``docker import``. Each suite gives one Python:

=========  ======
suite      Python
=========  ======
bullseye   3.9
bookworm   3.11
trixie     3.13
=========  ======

Cached twice: the image by tag (kept when it exists; ``force`` rebuilds) and the root
filesystem as a tarball under ``$ATLAS_CACHE_DIR`` (default ``/var/cache/atlas-actors``),
keyed by suite, mirror and packages. debootstrap needs root (and is installed with apt
when missing).

``python -m atlas_actors.swe.bases [--force] [--suite S] [--tag T]`` (what
``scripts/build-base-image`` runs) prints the tag; settings also come from
``ATLAS_BASE_IMAGE``, ``ATLAS_DEBIAN_SUITE``, ``ATLAS_DEBIAN_MIRROR``,
``ATLAS_BASE_PACKAGES`` (extra packages, comma-separated) and ``ATLAS_CACHE_DIR``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio

from atlas_actors.errors import DockerError
from atlas_actors.sandbox.docker import DockerClient

SUITE_PYTHON: dict[str, str] = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}
"""The Python each Debian suite ships (the suites this machine's mirror serves)."""
PYTHON_SUITE: dict[str, str] = {v: k for k, v in SUITE_PYTHON.items()}
BASE_PACKAGES = ("python3", "python3-pytest", "git", "patch")
"""What every base holds (the example instances run their tests with Debian's pytest)."""
SUITE_PACKAGES: dict[str, tuple[str, ...]] = {"bullseye": ("python3-distutils",)}
"""What a suite needs beyond :data:`BASE_PACKAGES`: Python 3.9's distutils is a package
of its own there, and pip needs it on Pythons before 3.10."""


def suite_packages(suite: str) -> tuple[str, ...]:
    """The packages of ``suite``'s base image."""
    return (*BASE_PACKAGES, *SUITE_PACKAGES.get(suite, ()))


DEFAULT_MIRROR = "http://deb.debian.org/debian"
ROLE_LABEL = "org.atlas-actors.role"

Log = Callable[[str], None]


def base_tag(suite: str) -> str:
    """``atlas-swe-base:<suite>``."""
    return f"atlas-swe-base:{suite}"


def host_suite() -> str:
    """This machine's Debian suite (``VERSION_CODENAME`` of /etc/os-release)."""
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"') or "bookworm"
    except OSError:
        pass
    return "bookworm"


def debian_mirror() -> str:
    """The Debian mirror configured for apt here (``$ATLAS_DEBIAN_MIRROR`` first)."""
    if os.environ.get("ATLAS_DEBIAN_MIRROR"):
        return os.environ["ATLAS_DEBIAN_MIRROR"]
    sources = Path("/etc/apt/sources.list.d")
    for f in sorted(sources.glob("*.sources")) if sources.is_dir() else []:
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith("URIs:"):
                uri = line.split(None, 1)[1].split()[0] if len(line.split()) > 1 else ""
                if "debian" in uri and "security" not in uri:
                    return uri
                break
    legacy = Path("/etc/apt/sources.list")
    if legacy.is_file():
        for line in legacy.read_text(errors="replace").splitlines():
            parts = line.split()
            deb = len(parts) > 2 and parts[0] == "deb"
            if deb and "debian" in parts[1] and "security" not in parts[1]:
                return parts[1]
    return DEFAULT_MIRROR


def cache_root() -> Path:
    return Path(os.environ.get("ATLAS_CACHE_DIR") or "/var/cache/atlas-actors")


def rootfs_tarball(suite: str, mirror: str, packages: Sequence[str]) -> Path:
    """Where the root filesystem of (suite, mirror, packages) is cached."""
    key = hashlib.sha256(f"{suite} {mirror} {','.join(packages)}".encode()).hexdigest()[:12]
    return cache_root() / f"rootfs-{suite}-{key}.tar"


async def _run(argv: Sequence[str], log: Log, what: str) -> None:
    log(f"$ {' '.join(argv)}")
    proc = await anyio.run_process(list(argv), check=False, stderr=subprocess.STDOUT)
    out = proc.stdout.decode(errors="replace")
    for line in out.splitlines()[-40:]:
        log(line)
    if proc.returncode != 0:
        raise DockerError(f"{what} failed (exit {proc.returncode}):\n{out[-3000:]}")


async def make_rootfs(
    suite: str,
    *,
    mirror: str | None = None,
    packages: Sequence[str] = BASE_PACKAGES,
    log: Log = print,
) -> Path:
    """The cached root filesystem tarball of ``suite`` (debootstrap on a miss; root)."""
    mirror = mirror or debian_mirror()
    tarball = rootfs_tarball(suite, mirror, packages)
    if tarball.is_file() and tarball.stat().st_size > 0:
        return tarball
    if os.geteuid() != 0:
        raise DockerError(
            f"debootstrap of Debian {suite} needs root (run as root, or build it once)"
        )
    if shutil.which("debootstrap") is None:
        log("installing debootstrap (apt)")
        env = ["env", "DEBIAN_FRONTEND=noninteractive"]
        await _run([*env, "apt-get", "update", "-o", "DPkg::Lock::Timeout=300"], log, "apt-get")
        await _run(
            [*env, "apt-get", "install", "-y", "--no-install-recommends", "debootstrap"],
            log,
            "apt-get install debootstrap",
        )
    tarball.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rootfs.", dir=tarball.parent))
    try:
        root = work / "root"
        log(f"debootstrap {suite} from {mirror} with {','.join(packages)} (a few minutes)")
        await _run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(packages)}",
                suite,
                str(root),
                mirror,
            ],
            log,
            f"debootstrap {suite}",
        )
        for junk in ("usr/share/doc", "usr/share/man", "usr/share/locale", "var/lib/apt/lists"):
            shutil.rmtree(root / junk, ignore_errors=True)
        for deb in (root / "var/cache/apt/archives").glob("*.deb"):
            deb.unlink()
        (root / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        part = tarball.with_suffix(".tar.tmp")
        await _run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(part), "."], log, "tar")
        part.rename(tarball)
        log(f"cached root filesystem at {tarball}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tarball


IMPORT_CHANGES = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    "ENV PYTHONDONTWRITEBYTECODE=1",
    'CMD ["/bin/bash"]',
    f"LABEL {ROLE_LABEL}=swe-base",
)


async def import_rootfs(docker: DockerClient, tarball: Path, tag: str, log: Log = print) -> None:
    """``docker import`` of ``tarball`` as ``tag`` (the Engine API, streamed from disk)."""
    from urllib.parse import urlencode

    repo, _, version = tag.rpartition(":")
    # "changes" repeats, which aiodocker's params (a dict) cannot say: in the path.
    query = urlencode([("fromSrc", "-"), ("repo", repo), ("tag", version)])
    query += "&" + urlencode([("changes", c) for c in IMPORT_CHANGES])
    log(f"importing {tarball} as {tag}")

    async def run() -> None:
        import aiohttp

        with tarball.open("rb") as f:
            async with docker.api._query(
                f"images/create?{query}",
                method="POST",
                data=f,
                headers={"content-type": "application/x-tar"},
                timeout=aiohttp.ClientTimeout(total=None),
            ) as resp:
                body = await resp.text()
        if '"error"' in body:
            raise DockerError(f"docker import of {tarball} failed: {body[-2000:]}")

    await docker.call(f"import {tag}", run(), 1800)


async def ensure_base(
    docker: DockerClient,
    suite: str,
    *,
    tag: str | None = None,
    force: bool = False,
    mirror: str | None = None,
    packages: Sequence[str] | None = None,
    log: Log = print,
) -> bool:
    """Make the base image of ``suite`` present; True when it was built now."""
    tag = tag or base_tag(suite)
    if not force and await docker.image_exists(tag):
        log(f"image {tag} exists (cached)")
        return False
    packages = suite_packages(suite) if packages is None else packages
    tarball = await make_rootfs(suite, mirror=mirror, packages=packages, log=log)
    await import_rootfs(docker, tarball, tag, log)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m atlas_actors.swe.bases``: build one base image; prints its tag."""
    ap = argparse.ArgumentParser(prog="python -m atlas_actors.swe.bases", description=__doc__)
    ap.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    ap.add_argument(
        "--suite",
        default=os.environ.get("ATLAS_DEBIAN_SUITE") or host_suite(),
        help="Debian suite (default: $ATLAS_DEBIAN_SUITE, else this machine's)",
    )
    ap.add_argument(
        "--tag",
        default=os.environ.get("ATLAS_BASE_IMAGE"),
        help="image tag (default: $ATLAS_BASE_IMAGE, else atlas-swe-base:<suite>)",
    )
    ap.add_argument("--docker-host", default=None, help="default: $DOCKER_HOST")
    args = ap.parse_args(argv)
    extra = [p for p in os.environ.get("ATLAS_BASE_PACKAGES", "").split(",") if p]
    tag = args.tag or base_tag(args.suite)

    def log(line: str) -> None:
        print(f"build-base-image: {line}", file=sys.stderr)

    async def go() -> None:
        async with DockerClient(args.docker_host) as docker:
            await ensure_base(
                docker,
                args.suite,
                tag=tag,
                force=args.force,
                packages=(*suite_packages(args.suite), *extra),
                log=log,
            )

    try:
        anyio.run(go)
    except DockerError as e:
        log(str(e))
        return 1
    print(tag)
    return 0


if __name__ == "__main__":
    sys.exit(main())
