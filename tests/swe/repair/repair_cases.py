"""Helpers for the offline-repair tests: base files, gold-patch lines, diffs."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from atlas_actors.swe.instances import SWEInstance


def base_text(instance: SWEInstance, path: str) -> str:
    """A file of the example's repository at its base commit."""
    assert instance.local_repo
    return (Path(instance.local_repo) / path).read_text()


def gold_lines(patch: str) -> set[tuple[str, int]]:
    """(path, line) of every base line the patch removes or changes."""
    out: set[tuple[str, int]] = set()
    path = ""
    line = 0
    for text in patch.splitlines():
        if text.startswith("--- a/"):
            path = text[6:]
            continue
        if text.startswith(("+++", "diff ", "index ")):
            continue
        m = re.match(r"@@ -(\d+)", text)
        if m:
            line = int(m.group(1))
            continue
        if text.startswith("-"):
            out.add((path, line))
            line += 1
        elif not text.startswith("+"):
            line += 1
    return out


def diff_files(instance: SWEInstance, files: dict[str, str], *, apply: str = "") -> str:
    """A git diff against the base commit that gives ``files`` (path -> full text), after
    applying the diff ``apply`` first (e.g. the test patch, to extend it)."""
    assert instance.local_repo
    with tempfile.TemporaryDirectory() as td:
        repo = Path(td) / "repo"
        subprocess.run(["git", "clone", "-q", instance.local_repo, str(repo)], check=True)
        if apply:
            subprocess.run(["git", "-C", str(repo), "apply", "-"], input=apply.encode(), check=True)
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        out = subprocess.run(
            ["git", "-C", str(repo), "diff", "--cached", instance.base_commit],
            check=True,
            capture_output=True,
            text=True,
        )
    return out.stdout


def patched_text(instance: SWEInstance, path: str, patch: str) -> str:
    """A file of the example's repository after applying ``patch`` to the base commit."""
    assert instance.local_repo
    with tempfile.TemporaryDirectory() as td:
        subprocess.run(["git", "clone", "-q", instance.local_repo, td], check=True)
        subprocess.run(["git", "-C", td, "apply", "-"], input=patch.encode(), check=True)
        return (Path(td) / path).read_text()
