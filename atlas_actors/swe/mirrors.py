"""Git mirrors of SWE-bench repositories, and checkouts of one commit from them (blocking).

A mirror is any git repository (bare or not) holding a repository's history:
``--mirrors DIR`` finds ``owner/name`` at ``DIR/owner__name`` (or ``DIR/owner__name.git``),
``--mirror owner/name=PATH`` names one. :func:`checkout_commit` makes a fresh repository
holding one commit of a mirror and nothing after it:

* when the mirror has every file of the commit: a depth-1 fetch, so the checkout's
  ``HEAD`` is the commit itself (same id, no history, no later commit to leak a fix);
* when it does not (a partial clone that left large files out), the missing files are
  looked for elsewhere (``recover``: :func:`recover_from_index` looks in the project's
  release on the package index, and takes a file only when its git blob id is the one
  missing); with all of them found, the commit itself is rebuilt (same id, shallow);
  otherwise the checkout is a one-commit snapshot of the files there are, with its own
  commit id: :class:`Checkout` names the files left out, and the instance gets the
  snapshot's id as ``base_commit`` and the original as ``source_commit``.

Either way the checkout gets one tag: the name of the release the commit follows
(``git describe --tags`` in the mirror), on ``HEAD``, so an install that derives its
version from git (setuptools_scm, versioneer) gets that release's version instead of
``0+untagged`` (which breaks dependencies pinned on it).
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from atlas_actors.errors import InvalidTaskError
from atlas_actors.swe.instances import git


class MirrorNotFound(InvalidTaskError):
    """No mirror of a repository was given."""


def mirror_dir_name(repo: str) -> str:
    """The folder ``--mirrors DIR`` looks for: ``owner__name``."""
    return repo.replace("/", "__")


def find_mirror(repo: str, mirrors_dir: Path | None, mirrors: Mapping[str, Path]) -> Path:
    """The mirror of ``repo`` (``owner/name``); MirrorNotFound names the flag that gives it."""
    if repo in mirrors:
        path = Path(mirrors[repo])
        if not _is_git(path):
            raise MirrorNotFound(f"--mirror {repo}={path}: not a git repository")
        return path
    tried: list[str] = []
    if mirrors_dir is not None:
        for name in (mirror_dir_name(repo), mirror_dir_name(repo) + ".git"):
            path = Path(mirrors_dir) / name
            if _is_git(path):
                return path
        tried.append(str(Path(mirrors_dir) / mirror_dir_name(repo)))
    where = f" (looked for {tried[0]})" if tried else ""
    raise MirrorNotFound(
        f"no mirror of {repo}{where}: give one with --mirror {repo}=PATH, or put it at "
        f"DIR/{mirror_dir_name(repo)} and pass --mirrors DIR"
    )


def _is_git(path: Path) -> bool:
    if not path.is_dir():
        return False
    r = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--git-dir"],
        capture_output=True,
        timeout=60,
    )
    return r.returncode == 0


def resolve_commit(mirror: Path, commit: str) -> str:
    """The full id of ``commit`` in ``mirror``; InvalidTaskError when it is not there."""
    r = subprocess.run(
        ["git", "-C", str(mirror), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if r.returncode != 0:
        raise InvalidTaskError(f"commit {commit} is not in the mirror {mirror}")
    return r.stdout.strip()


def read_file_at(mirror: Path, commit: str, path: str) -> str | None:
    """The text of ``path`` at ``commit`` (None when absent or not in the mirror)."""
    r = subprocess.run(
        ["git", "-C", str(mirror), "show", f"{commit}:{path}"],
        capture_output=True,
        timeout=60,
    )
    if r.returncode != 0:
        return None
    return r.stdout.decode("utf-8", errors="replace")


def nearest_tag(mirror: Path, commit: str) -> str | None:
    """The tag of the release ``commit`` follows (``git describe --tags``), if any."""
    r = subprocess.run(
        ["git", "-C", str(mirror), "describe", "--tags", "--abbrev=0", commit],
        capture_output=True,
        text=True,
        timeout=60,
    )
    tag = r.stdout.strip()
    return tag if r.returncode == 0 and re.search(r"\d", tag) else None


@dataclass
class TreeEntry:
    mode: str
    kind: str
    sha: str
    path: str


def tree_entries(mirror: Path, commit: str) -> list[TreeEntry]:
    """Every entry of ``commit``'s tree (files, links, submodules), recursively."""
    r = subprocess.run(
        ["git", "-C", str(mirror), "ls-tree", "-r", "-z", "--full-tree", commit],
        capture_output=True,
        timeout=300,
        check=True,
    )
    out = []
    for rec in r.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
        if rec:
            meta, path = rec.split("\t", 1)
            mode, kind, sha = meta.split()
            out.append(TreeEntry(mode, kind, sha, path))
    return out


def missing_blobs(mirror: Path, commit: str) -> set[str]:
    """The ids of the objects of ``commit``'s tree the mirror does not hold (a partial
    clone); asked without fetching them from the clone's origin."""
    r = subprocess.run(
        [
            "git",
            "-C",
            str(mirror),
            "rev-list",
            "--objects",
            "--no-object-names",
            "--missing=print",
            f"{commit}^{{tree}}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {line[1:] for line in r.stdout.splitlines() if line.startswith("?")}


@dataclass
class Checkout:
    """A fresh repository holding one commit of a mirror."""

    path: Path
    commit: str
    """The id of ``HEAD`` in the checkout (the source commit, or a snapshot's)."""
    source_commit: str
    """The commit of the mirror it holds."""
    missing: list[str] = field(default_factory=list)
    """Files of the source commit the mirror does not have (left out of a snapshot)."""
    recovered: list[str] = field(default_factory=list)
    """Files the mirror lacks that were found elsewhere (the package index)."""
    tag: str | None = None
    """The tag of the release the commit follows, put on ``HEAD``."""

    @property
    def is_snapshot(self) -> bool:
        return self.commit != self.source_commit


Recover = Callable[[Path, dict[str, str], "str | None"], dict[str, bytes]]
"""``recover(checkout, {blob id: path}, release tag)``: the blobs a partial mirror lacks
that it found elsewhere, by id (:func:`recover_from_index`)."""


def checkout_commit(
    mirror: Path, commit: str, dest: Path, recover: Recover | None = None
) -> Checkout:
    """``dest`` made a repository at ``commit`` of ``mirror`` (see the module docstring).

    Files the mirror lacks are asked of ``recover``; when it finds them all, the
    checkout holds the commit itself after all."""
    full = resolve_commit(mirror, commit)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    entries = tree_entries(mirror, full)
    missing = missing_blobs(mirror, full)
    tag = nearest_tag(mirror, full)
    git(dest, "init", "-q")
    if not missing:
        upload = "git -c uploadpack.allowAnySHA1InWant=true upload-pack"
        git(
            dest,
            "fetch",
            "-q",
            "--depth",
            "1",
            "--no-tags",
            f"--upload-pack={upload}",
            str(Path(mirror).resolve()),
            full,
        )
        git(dest, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", full)
        if tag:
            git(dest, "tag", tag, full)
        return Checkout(dest, full, full, tag=tag)
    _export(mirror, [e for e in entries if e.sha not in missing], dest)
    wanted = {e.sha: e.path for e in entries if e.sha in missing}
    found = recover(dest, wanted, tag) if recover is not None else {}
    for e in entries:
        if e.sha in found:
            _write(dest, e, found[e.sha])
    git(dest, "add", "-A", "-f")
    for e in entries:
        if e.kind == "commit":  # submodules: their commit ids, as in the source tree
            git(dest, "update-index", "--add", "--cacheinfo", f"160000,{e.sha},{e.path}")
    recovered = sorted(e.path for e in entries if e.sha in found)
    left_out = sorted(e.path for e in entries if e.sha in missing and e.sha not in found)
    if not left_out and _restore_commit(mirror, full, dest):
        if tag:
            git(dest, "tag", tag, full)
        return Checkout(dest, full, full, recovered=recovered, tag=tag)
    message = (
        f"atlas snapshot of {full}\n\nThe mirror lacks these files of {full}:\n"
        + "\n".join(left_out)
        + "\n"
    )
    git(dest, "commit", "-q", "--no-gpg-sign", "--allow-empty", "-m", message)
    snapshot = git(dest, "rev-parse", "HEAD").strip()
    if tag:
        git(dest, "tag", tag, snapshot)
    return Checkout(dest, snapshot, full, missing=left_out, recovered=recovered, tag=tag)


def _restore_commit(mirror: Path, full: str, dest: Path) -> bool:
    """Make ``dest``'s index (the whole tree of ``full``) the commit ``full`` itself: its
    object copied from the mirror, a shallow repository as a depth-1 fetch leaves."""
    tree = git(dest, "write-tree").strip()
    if tree != git(mirror, "rev-parse", f"{full}^{{tree}}").strip():
        return False
    raw = subprocess.run(
        ["git", "-C", str(mirror), "cat-file", "commit", full],
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    made = git(dest, "hash-object", "-t", "commit", "-w", "--stdin", input=raw).strip()
    if made != full:
        return False
    (dest / ".git" / "shallow").write_text(full + "\n")
    git(dest, "update-ref", "--no-deref", "HEAD", full)
    git(dest, "reset", "-q")
    return True


def _write(dest: Path, e: TreeEntry, data: bytes) -> None:
    target = dest / e.path
    target.parent.mkdir(parents=True, exist_ok=True)
    if e.mode == "120000":
        os.symlink(data.decode("utf-8", errors="surrogateescape"), target)
    else:
        target.write_bytes(data)
        if e.mode == "100755":
            target.chmod(0o755)


def blob_id(data: bytes) -> str:
    """git's id of a file holding ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def distribution_name(checkout: Path) -> str | None:
    """The package name a repository publishes under (pyproject.toml, setup.cfg, setup.py)."""
    pyproject = checkout / "pyproject.toml"
    if pyproject.is_file():
        try:
            name = tomllib.loads(pyproject.read_text()).get("project", {}).get("name")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            name = None
        if isinstance(name, str) and name:
            return name
    setup_cfg = checkout / "setup.cfg"
    if setup_cfg.is_file():
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read_string(setup_cfg.read_text())
            if cfg.has_option("metadata", "name"):
                return cfg.get("metadata", "name").strip() or None
        except (configparser.Error, UnicodeDecodeError):
            pass
    setup_py = checkout / "setup.py"
    if setup_py.is_file():
        m = re.search(r"""\bname\s*=\s*['"]([A-Za-z0-9_.\-]+)['"]""", setup_py.read_text())
        if m:
            return m.group(1)
    return None


def recover_from_index(
    checkout: Path, wanted: dict[str, str], tag: str | None, *, cache: Path
) -> dict[str, bytes]:
    """The blobs of ``wanted`` found in the project's own release on the package index:
    the distribution named in the checkout, at the version of the release ``tag``,
    fetched with this machine's pip; a file counts only when its git id is the one
    wanted, so what it gives is exactly the missing file."""
    m = re.search(r"\d+(\.\d+)*\w*", tag or "")
    if not m:
        return {}
    version = m.group(0)
    # The distribution's name as the repository states it, else the top-level packages
    # holding the missing files (pvlib/data/x.csv: pvlib).
    names = [distribution_name(checkout)] + [
        path.split("/", 1)[0]
        for path in sorted(wanted.values())
        if "/" in path and (checkout / path.split("/", 1)[0] / "__init__.py").is_file()
    ]
    found: dict[str, bytes] = {}
    for name in dict.fromkeys(n for n in names if n):
        folder = cache / f"{name}-{version}"
        if not folder.is_dir():
            folder.mkdir(parents=True)
            pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            subprocess.run(
                [*pip, "--dest", str(folder), f"{name}=={version}"],
                capture_output=True,
                timeout=900,
            )
        for archive in sorted(folder.iterdir()):
            for data in _archive_files(archive):
                blob = blob_id(data)
                if blob in wanted:
                    found[blob] = data
        if len(found) == len(wanted):
            break
    return found


def _archive_files(path: Path) -> Iterator[bytes]:
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    if not info.is_dir():
                        yield z.read(info)
        elif tarfile.is_tarfile(path):
            with tarfile.open(path) as t:
                for member in t:
                    f = t.extractfile(member) if member.isfile() else None
                    if f is not None:
                        yield f.read()
    except (OSError, zipfile.BadZipFile, tarfile.TarError):
        return


def _export(mirror: Path, entries: list[TreeEntry], dest: Path) -> None:
    """Write the blobs of ``entries`` under ``dest`` (modes and symbolic links kept;
    submodules are left out, as a clone without ``--recursive`` leaves them)."""
    files = [e for e in entries if e.kind == "blob"]
    if not files:
        return
    proc = subprocess.Popen(
        ["git", "-C", str(mirror), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for e in files:
            proc.stdin.write(f"{e.sha}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after the content
            _write(dest, e, data)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
