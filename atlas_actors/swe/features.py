"""SWE's similarity features for memory (the ``features`` of the ``swe`` domain).

The similarity::

    similarity = (0.25 repo + 0.20 files + 0.15 tests + 0.10 exceptions + 0.30 text)
                 / (sum of weights present)

A component is absent when the task being solved has no data for it (the repository
unknown on either side; no files named, no exception named), so sparse tasks are
compared on what they have. The task being solved contributes only what a solver sees
in every setting — the repository, its problem statement and the ``.py`` files the
statement names — never its FAIL_TO_PASS tests or test patch (hidden in SWE-bench's
protocol); a remembered task contributes those too.

- repo: 1 for the same repository, 0.2 for the same owner, else 0;
- files: Jaccard of path tokens (directories and module stems, ``test_`` stripped) of the
  files the problem statement names and, for a remembered task, its failing tests'
  files, its test patch's files and its solution's files (the winning patch, or the
  gold patch when no patch is known);
- tests: mean of the Jaccard of the failing test ids and of their name words (absent
  for the task being solved, whose tests the router does not read);
- exceptions: Jaccard of the exception types named in the problem statement;
- text: TF-IDF cosine of the problem statements (words and identifier parts, English
  stop words removed; IDF smoothed over the query and the candidates).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from atlas_actors.memory.features import (
    DomainFeatures,
    Features,
    jaccard,
    mean,
    text_terms,
    tfidf_cosines,
    weighted,
)
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.types import Task

SWE_WEIGHTS: dict[str, float] = {
    "repo": 0.25,
    "files": 0.20,
    "tests": 0.15,
    "exceptions": 0.10,
    "text": 0.30,
}
"""Weights of the SWE similarity components (see the module docstring)."""

_DIFF_FILE = re.compile(r"^(?:diff --git a/\S+ b/(\S+)|\+\+\+ b/(\S+))", re.MULTILINE)
_EXCEPTION = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt))\b")
_DJANGO_TEST = re.compile(r"^(\w+) \(([\w.]+)\)")
_GENERIC_DIRS = frozenset({"tests", "test", "testing", "src", "lib", "unit", "integration"})


def patch_files(patch: str) -> list[str]:
    """Files a unified diff touches (its ``b/`` side)."""
    files = {a or b for a, b in _DIFF_FILE.findall(patch)}
    files.discard("/dev/null")
    return sorted(files)


def _test_file(test_id: str) -> str | None:
    if "::" in test_id:
        return test_id.split("::", 1)[0]
    m = _DJANGO_TEST.match(test_id)
    if m:  # "test_x (pkg.tests.TestCase)" -> pkg/tests
        return "/".join(m.group(2).split(".")[:-1]) + ".py"
    return None


def _test_name(test_id: str) -> str:
    m = _DJANGO_TEST.match(test_id)
    if m:
        return m.group(1)
    return re.split(r"[\[(]", test_id.rsplit("::", 1)[-1], maxsplit=1)[0]


def path_tokens(paths: Iterable[str]) -> list[str]:
    """Directories and module stems of ``paths`` (``test_``/``_test`` stripped)."""
    tokens: set[str] = set()
    for p in paths:
        parts = [x for x in p.replace("\\", "/").split("/") if x]
        if not parts:
            continue
        stem = parts[-1].rsplit(".", 1)[0]
        stem = re.sub(r"^tests?_|_tests?$", "", stem)
        for d in [*parts[:-1], stem]:
            d = d.lower()
            if d and d not in _GENERIC_DIRS and d != "__init__":
                tokens.add(d)
    return sorted(tokens)


def _swe_fields(task: Task) -> dict[str, Any]:
    try:
        return SWEInstance.from_task(task).model_dump()
    except Exception:  # a partial context (no image, no eval script) still has features
        ctx = dict(task.context)
        ctx.setdefault("problem_statement", task.description)
        f2p = ctx.get("FAIL_TO_PASS", [])
        ctx["FAIL_TO_PASS"] = json.loads(f2p) if isinstance(f2p, str) else list(f2p)
        return ctx


def _swe_content(task: Task) -> Any:
    f = _swe_fields(task)
    return {
        "domain": "swe",
        "repo": f.get("repo", ""),
        "base_commit": f.get("base_commit", ""),
        "problem_statement": " ".join(str(f.get("problem_statement", "")).split()),
    }


_MENTIONED_PATH = re.compile(r"[\w./-]+\.py\b")


def _swe_extract(task: Task, solution: Any, hindsight: bool) -> Features:
    """SWE features. The task being solved (``hindsight`` False) gives only what a solver
    sees in every setting (the repository, the problem statement, the files it names);
    its FAIL_TO_PASS tests and test patch are hidden in SWE-bench's protocol, so only a
    remembered task (whose tests have been run) contributes them."""
    f = _swe_fields(task)
    statement = str(f.get("problem_statement", "") or task.description)
    tests: list[str] = []
    files = set(_MENTIONED_PATH.findall(statement))
    if hindsight:
        tests = sorted(str(t) for t in f.get("FAIL_TO_PASS", []))
        files |= {tf for t in tests if (tf := _test_file(t))}
        files |= set(patch_files(str(f.get("test_patch", ""))))
    fix = solution if isinstance(solution, str) and "\n" in solution else ""
    if not fix and hindsight:
        fix = str(f.get("patch", "") or "")
    fix_files = patch_files(fix)
    return {
        "repo": str(f.get("repo", "")),
        "files": path_tokens(files | set(fix_files)),
        "patch_files": fix_files,
        "tests": tests,
        "test_words": sorted({w for t in tests for w in _test_name(t).lower().split("_") if w}),
        "exceptions": sorted(set(_EXCEPTION.findall(statement))),
        "terms": text_terms(statement),
    }


def _known_jaccard(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Jaccard, or None (no evidence) when the query side ``a`` is empty (the task being
    solved may not know it: its tests are hidden)."""
    return jaccard(a, b) if a else None


def _swe_similarity(query: Features, candidates: Sequence[Features]) -> list[float]:
    texts = tfidf_cosines(query.get("terms", {}), [c.get("terms", {}) for c in candidates])
    out = []
    qrepo = str(query.get("repo", ""))
    qowner = qrepo.split("/")[0]
    for c, text in zip(candidates, texts, strict=True):
        crepo = str(c.get("repo", ""))
        repo: float | None = None  # unknown on either side: no evidence
        if qrepo and crepo:
            repo = 1.0 if qrepo == crepo else 0.2 if qowner == crepo.split("/")[0] else 0.0
        tests = [
            x
            for x in (
                _known_jaccard(query.get("tests", []), c.get("tests", [])),
                _known_jaccard(query.get("test_words", []), c.get("test_words", [])),
            )
            if x is not None
        ]
        parts: dict[str, float | None] = {
            "repo": repo,
            "files": _known_jaccard(query.get("files", []), c.get("files", [])),
            "tests": mean(tests) if tests else None,
            "exceptions": _known_jaccard(query.get("exceptions", []), c.get("exceptions", [])),
            "text": text,
        }
        out.append(weighted(parts, SWE_WEIGHTS))
    return out


FEATURES = DomainFeatures(
    "swe", "1", extract=_swe_extract, similarity=_swe_similarity, content=_swe_content
)
"""The SWE domain's features (its spec's ``features``)."""
