"""Similarity features of tasks: the protocol a domain implements and the generic parts.

A domain gives its :class:`DomainFeatures` as the ``features`` part of its
:class:`~atlas_actors.environments.registry.DomainSpec` (the one registry); memory looks
it up by the task's domain (:func:`domain_features`). A :class:`DomainFeatures` has:

* ``extract(task, solution, hindsight)`` -> a JSON-able dict describing the task (and the
  solution, when one is known). ``hindsight`` is True when the task is a remembered one
  (its features may use what is known after the fact, e.g. a SWE gold patch) and False
  for a task being solved now (only what a solver may see).
* ``prepare(features)`` -> an in-memory form the similarity reads fast, and
  ``stack(prepared list)`` -> a batch of them (``list`` by default; ARC stacks numpy
  arrays), ``extend(batch, more)`` -> a longer batch. The store caches the batch, so
  each stored experience is prepared once per process.
* ``similarity(prepared query, batch)`` -> one similarity in [0, 1] per candidate (a
  batch, so a domain may vectorise, or weigh terms by how common they are among the
  candidates).
* ``content(task)`` -> the task's canonical content, hashed into its **fingerprint**: two
  tasks with the same content under other ids are exact repeats.

Every feature dict carries ``"v": "<domain>:<version>"``; a store recomputes stale ones.
A task whose features cannot be computed gets ``{"v": ..., "error": "..."}`` and a
similarity of 0 (it is still found as an exact repeat by its fingerprint). A domain
without features uses the ``generic`` entry: the TF-IDF cosine of the description and
the context's text. The domains' own formulas are documented with their features
(:mod:`atlas_actors.arc.features`, :mod:`atlas_actors.swe.features`).

Similarity formulas combine components in [0, 1] as a weighted mean over the components
both sides have (:func:`weighted`), so a missing component neither helps nor hurts; the
helpers here (:func:`jaccard`, :func:`closeness`, :func:`text_terms`,
:func:`tfidf_cosines`) are what the domains build them from.

Exact repeats are found by fingerprint (see :mod:`atlas_actors.memory.store`), which
reserves the similarity 1.0 for them; feature similarities are capped at
:data:`MAX_FEATURE_SIMILARITY`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from atlas_actors.environments.registry import get_domain
from atlas_actors.types import Task

log = logging.getLogger(__name__)

Features = dict[str, Any]
"""A JSON-able feature dict (always with ``"v"``)."""
_Array = np.ndarray[Any, Any]

MAX_FEATURE_SIMILARITY = 0.99
"""Feature similarity never reaches 1.0: that is reserved for an exact repeat."""

GENERIC = "generic"


def _identity(x: Any) -> Any:
    return x


@dataclass(frozen=True)
class DomainFeatures:
    """How one domain describes tasks and compares them (see the module docstring)."""

    domain: str
    version: str
    extract: Callable[[Task, Any, bool], Features]
    """``(task, solution or None, hindsight) -> features`` (without ``"v"``)."""
    similarity: Callable[[Any, Any], Sequence[float] | _Array]
    """``(prepared query, stacked candidates) -> one similarity per candidate``."""
    prepare: Callable[[Features], Any] = _identity
    """Features -> the form ``similarity`` reads (cached per stored experience)."""
    stack: Callable[[Sequence[Any]], Any] = list
    """Prepared candidates -> the batch ``similarity`` reads (cached between queries)."""
    content: Callable[[Task], Any] | None = None
    """Task -> its canonical content for the fingerprint (None: description and context)."""
    extend: Callable[[Any, Sequence[Any]], Any] | None = None
    """(batch, more prepared candidates) -> the longer batch (None: stack them all again;
    list batches, the default, are extended)."""

    def __post_init__(self) -> None:
        if self.extend is None and self.stack is list:
            object.__setattr__(self, "extend", _extend_list)

    @property
    def tag(self) -> str:
        """The ``"v"`` value of this domain's feature dicts."""
        return f"{self.domain}:{self.version}"

    def score(self, query: Any, batch: Any, n: int) -> _Array:
        """Similarities of a prepared query to a stacked batch of ``n`` candidates,
        clipped to [0, MAX_FEATURE_SIMILARITY] (NaN counts as 0)."""
        if n == 0:
            return np.zeros(0)
        sims = np.asarray(self.similarity(query, batch), dtype=np.float64)
        if sims.shape != (n,):
            raise ValueError(f"{self.domain} similarity gave {sims.shape} values for {n}")
        return np.clip(np.nan_to_num(sims, nan=0.0), 0.0, MAX_FEATURE_SIMILARITY)


def _extend_list(batch: Any, more: Sequence[Any]) -> Any:
    return [*batch, *more]


def domain_features(domain: str) -> DomainFeatures:
    """The features of ``domain`` (its spec's ``features``), or the generic ones."""
    spec = get_domain(domain)
    entry = spec.features_of() if spec is not None else None
    if entry is None:
        return GENERIC_FEATURES
    if not isinstance(entry, DomainFeatures):
        raise TypeError(f"domain {domain!r}: features must be a DomainFeatures, got {entry!r}")
    return entry


def task_features(task: Task, solution: Any = None, *, hindsight: bool = False) -> Features:
    """The features of ``task`` (and ``solution``); ``{"v", "error"}`` when they fail."""
    entry = domain_features(task.domain)
    try:
        out = dict(entry.extract(task, solution, hindsight))
    except Exception as e:  # a bad task must not lose the experience it belongs to
        log.warning("memory: no features for task %s (%s): %s", task.id, task.domain, e)
        out = {"error": f"{type(e).__name__}: {e}"}
    out["v"] = entry.tag
    return out


def is_current(features: Mapping[str, Any], domain: str) -> bool:
    """Whether ``features`` were made by the current extractor of ``domain``."""
    return features.get("v") == domain_features(domain).tag


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def task_fingerprint(task: Task) -> str:
    """A hash of the task's content (not its id): ``<domain>:<sha256 hex>``."""
    entry = domain_features(task.domain)
    content: Any = None
    if entry.content is not None:
        try:
            content = entry.content(task)
        except Exception as e:
            log.debug("memory: generic fingerprint for %s: %s", task.id, e)
    if content is None:
        content = _generic_content(task)
    digest = hashlib.sha256(_canonical(content).encode("utf-8")).hexdigest()
    return f"{task.domain}:{digest}"


def similarities(domain: str, query: Features, candidates: Sequence[Features]) -> list[float]:
    """Feature similarity of ``query`` to each candidate (0 where either has an error)."""
    entry = domain_features(domain)
    out = [0.0] * len(candidates)
    ok = [i for i, c in enumerate(candidates) if "error" not in c]
    if "error" in query or not ok:
        return out
    batch = entry.stack([entry.prepare(candidates[i]) for i in ok])
    for i, s in zip(ok, entry.score(entry.prepare(query), batch, len(ok)), strict=True):
        out[i] = float(s)
    return out


def similarity(domain: str, a: Features, b: Features) -> float:
    """Feature similarity of two feature dicts of ``domain``."""
    return similarities(domain, a, [b])[0]


# --------------------------------------------------------------------------- shared parts


def jaccard(a: Iterable[Any], b: Iterable[Any]) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 when both are empty."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def closeness(a: float, b: float) -> float:
    """min/max of two non-negative numbers; 1.0 when both are 0."""
    a, b = abs(a), abs(b)
    hi = max(a, b)
    return 1.0 if hi <= 1e-12 else min(a, b) / hi


def mean(xs: Iterable[float]) -> float:
    """The arithmetic mean (0.0 for no values)."""
    xs = list(xs)
    return float(sum(xs) / len(xs)) if xs else 0.0


def weighted(parts: Mapping[str, float | None], weights: Mapping[str, float]) -> float:
    """Weighted mean of the components that are not None."""
    num = den = 0.0
    for name, value in parts.items():
        if value is not None:
            w = weights[name]
            num += w * value
            den += w
    return num / den if den else 0.0


_STOP = frozenset(
    """a an and are as at be been but by can could do does for from has have if in into is it
    its not of on or so such that the their then there these this to was were when where which
    while will with would should i we you he she they them our your my me us no yes than too
    very also just only any all some more most other same each both get got instead
    """.split()  # noqa: SIM905
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def text_terms(text: str) -> dict[str, int]:
    """Term counts of ``text``: lower-cased words, identifiers and their parts."""
    counts: Counter[str] = Counter()
    for word in _WORD.findall(text):
        low = word.lower()
        parts = [p.lower() for chunk in word.split("_") for p in _CAMEL.findall(chunk)]
        if len(parts) > 1 and len(low) > 2:
            counts[low] += 1  # the whole identifier, and its parts below
        for p in parts:
            if (len(p) > 1 or p.isdigit()) and p not in _STOP:
                counts[p] += 1
    return dict(counts)


def tfidf_cosines(query: Mapping[str, int], docs: Sequence[Mapping[str, int]]) -> list[float]:
    """Cosine of TF-IDF vectors (tf = 1 + ln count; idf = ln((1 + N) / (1 + df)) + 1 over the
    query and ``docs``)."""
    if not docs:
        return []
    df: Counter[str] = Counter(query.keys())
    for d in docs:
        df.update(d.keys())
    n = len(docs) + 1
    idf = {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}

    def vec(d: Mapping[str, int]) -> tuple[dict[str, float], float]:
        v = {t: (1.0 + math.log(c)) * idf[t] for t, c in d.items() if c > 0}
        return v, math.sqrt(sum(x * x for x in v.values()))

    qv, qn = vec(query)
    out = []
    for d in docs:
        dv, dn = vec(d)
        if qn == 0 or dn == 0:
            out.append(0.0)
            continue
        small, big = (qv, dv) if len(qv) <= len(dv) else (dv, qv)
        out.append(sum(w * big.get(t, 0.0) for t, w in small.items()) / (qn * dn))
    return out


# --------------------------------------------------------------------------- generic


def _generic_content(task: Task) -> Any:
    return {"domain": task.domain, "description": task.description, "context": task.context}


def _strings(obj: Any) -> Iterable[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, Mapping):
        for k, v in obj.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _strings(v)


def _generic_extract(task: Task, solution: Any, hindsight: bool) -> Features:
    text = " ".join([task.description, *_strings(task.context)])
    return {"terms": text_terms(text)}


def _generic_similarity(query: Features, candidates: Sequence[Features]) -> list[float]:
    return tfidf_cosines(query.get("terms", {}), [c.get("terms", {}) for c in candidates])


GENERIC_FEATURES = DomainFeatures(
    GENERIC, "1", extract=_generic_extract, similarity=_generic_similarity
)
"""The features of a domain that has none of its own."""
