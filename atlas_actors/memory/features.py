"""Similarity features of tasks, registered per domain.

A domain registers a :class:`DomainFeatures` under its name (:func:`register_features`):

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
similarity of 0 (it is still found as an exact repeat by its fingerprint). Unknown domains
use the ``generic`` entry (lexical similarity of the description and context).

Similarity formulas (each component in [0, 1]; a weighted mean over the components both
sides have, so a missing component neither helps nor hurts):

**ARC** (from the train pairs and test inputs; never the test outputs)::

    raw = (0.22 shape + 0.08 palette + 0.15 colours + 0.05 histogram + 0.15 objects
           + 0.10 symmetry + 0.10 change + 0.05 size + 0.10 ops) / (sum of weights present)
    similarity = clip((raw - 0.55) / 0.45, 0, 1)

- shape: Jaccard of the input→output shape relations that hold on every train pair
  (same, transposed, scaled up/down by k, cropped from the input, smaller, larger) and of
  whole-task tags (output shape fixed, input shape fixed, square, 1x1 output);
- palette: mean Jaccard of the exact colour sets (input, output, added, removed);
- colours: colour-blind statistics (colours per grid, added and removed counts, the
  sorted colour histograms, background 0 or not);
- histogram: cosine of the exact colour histograms of inputs and outputs;
- objects: counts and mean sizes of 4-connected single-colour objects in inputs and
  outputs and whether outputs have more, fewer or as many objects;
- symmetry: agreement of the shares of grids that are left-right, up-down, 180° and
  diagonally symmetric and of their uniform rows and columns, inputs and outputs;
- change: share of cells changed (same-shape pairs), densities, and whether the output
  only paints background, only recolours, or keeps the input;
- size: closeness of the mean heights and widths of inputs and outputs;
- ops: Jaccard of the ops of the solving program (DSL JSON: its op names; Python: the
  names it calls), only when both sides have one (a task being solved has none).

Closeness of two non-negative numbers is ``min/max`` (1 when both are 0). Most of these
statistics are shared by any two ARC tasks (same-shape grids, few colours, background 0):
the raw similarity of two different ARC-AGI-1 training tasks has a median of 0.48, so the
floor 0.55 maps the typical unrelated pair to 0. Measured over all 159,600 ordered pairs
of the 400 training tasks: median 0, 90th percentile 0.32, 99th 0.61 (1.1% at 0.6 or
more); a re-coloured copy of a task (colours permuted, background kept): median 0.89,
10th percentile 0.81. The statistics barely see orientation, so a transposed or mirrored
copy of a square task is close to 0.99; one whose grids are not square scores lower
(a transposed 13x5 -> 6x5 task: 0.69).

**SWE**::

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

**generic**: the TF-IDF cosine of the description and the context's text.

Exact repeats are found by fingerprint (see :mod:`atlas_actors.memory.store`), which
reserves the similarity 1.0 for them; feature similarities are capped at
:data:`MAX_FEATURE_SIMILARITY`.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import logging
import math
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

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
    """(batch, more prepared candidates) -> the longer batch (None: stack them all again)."""

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


_REGISTRY: dict[str, DomainFeatures] = {}


def register_features(
    domain: str,
    *,
    extract: Callable[[Task, Any, bool], Features],
    similarity: Callable[[Any, Any], Sequence[float] | _Array],
    prepare: Callable[[Features], Any] | None = None,
    stack: Callable[[Sequence[Any]], Any] | None = None,
    content: Callable[[Task], Any] | None = None,
    extend: Callable[[Any, Sequence[Any]], Any] | None = None,
    version: str = "1",
) -> DomainFeatures:
    """Register (or replace) the features of ``domain``; returns the entry.

    Bump ``version`` when ``extract`` changes: stored features of another version are
    recomputed.
    """
    entry = DomainFeatures(
        domain=domain,
        version=version,
        extract=extract,
        similarity=similarity,
        prepare=prepare or _identity,
        stack=stack or list,
        content=content,
        extend=extend if extend is not None else (None if stack else _extend_list),
    )
    _REGISTRY[domain] = entry
    return entry


def domain_features(domain: str) -> DomainFeatures:
    """The registered entry of ``domain``, or the generic one."""
    return _REGISTRY.get(domain) or _REGISTRY[GENERIC]


def registered_domains() -> list[str]:
    """Names with registered features."""
    return sorted(_REGISTRY)


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


register_features(GENERIC, extract=_generic_extract, similarity=_generic_similarity)


# --------------------------------------------------------------------------- ARC

ARC_WEIGHTS: dict[str, float] = {
    "shape": 0.22,
    "palette": 0.08,
    "colours": 0.15,
    "histogram": 0.05,
    "objects": 0.15,
    "symmetry": 0.10,
    "change": 0.10,
    "size": 0.05,
    "ops": 0.10,
}
"""Weights of the ARC similarity components (see the module docstring)."""
ARC_FLOOR = 0.55
"""Raw ARC similarity mapped to 0 (about that of an unrelated pair of tasks)."""

_Grid = np.ndarray[Any, np.dtype[np.int64]]
_WORDS = 4
"""Sets are compared as 256-bit masks (4 words); an element's bit is its CRC-32 mod 256."""


def _arc_grids(task: Task) -> tuple[list[tuple[_Grid, _Grid]], list[_Grid]]:
    from atlas_actors.arc.environment import load_arc_task

    data = load_arc_task(task)
    train = [(np.asarray(i, np.int64), np.asarray(o, np.int64)) for i, o in data.train]
    return train, [np.asarray(g, np.int64) for g in data.test_inputs]


def _arc_content(task: Task) -> Any:
    train, tests = _arc_grids(task)
    return {
        "domain": "arc",
        "train": [[i.tolist(), o.tolist()] for i, o in train],
        "test": [g.tolist() for g in tests],
    }


def _objects(g: _Grid, bg: int) -> list[int]:
    """Sizes of the 4-connected single-colour objects of non-background cells."""
    h, w = g.shape
    cells = g.tolist()
    seen = [[False] * w for _ in range(h)]
    sizes = []
    for y in range(h):
        for x in range(w):
            if seen[y][x] or cells[y][x] == bg:
                continue
            colour, stack, n = cells[y][x], [(y, x)], 0
            seen[y][x] = True
            while stack:
                cy, cx = stack.pop()
                n += 1
                for ny, nx in ((cy + 1, cx), (cy - 1, cx), (cy, cx + 1), (cy, cx - 1)):
                    if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx] and cells[ny][nx] == colour:
                        seen[ny][nx] = True
                        stack.append((ny, nx))
            sizes.append(n)
    return sizes


def _symmetries(g: _Grid) -> list[float]:
    """Left-right, up-down, 180° and diagonal symmetry; shares of uniform rows, columns."""
    return [
        float(np.array_equal(g, g[:, ::-1])),
        float(np.array_equal(g, g[::-1, :])),
        float(np.array_equal(g, g[::-1, ::-1])),
        float(g.shape[0] == g.shape[1] and np.array_equal(g, g.T)),
        float(np.mean(np.all(g == g[:, :1], axis=1))),
        float(np.mean(np.all(g == g[:1, :], axis=0))),
    ]


def _is_crop(big: _Grid, small: _Grid) -> bool:
    bh, bw = big.shape
    sh, sw = small.shape
    if sh > bh or sw > bw:
        return False
    return any(
        np.array_equal(big[y : y + sh, x : x + sw], small)
        for y in range(bh - sh + 1)
        for x in range(bw - sw + 1)
    )


def _shape_tags(i: _Grid, o: _Grid) -> set[str]:
    (ih, iw), (oh, ow) = i.shape, o.shape
    tags: set[str] = set()
    if (ih, iw) == (oh, ow):
        tags.add("same")
    elif (oh, ow) == (iw, ih):
        tags.add("transposed")
    if (oh, ow) != (ih, iw) and oh % ih == 0 and ow % iw == 0:
        tags |= {"up", f"up:{oh // ih}x{ow // iw}"}
    if (oh, ow) != (ih, iw) and ih % oh == 0 and iw % ow == 0:
        tags |= {"down", f"down:{ih // oh}x{iw // ow}"}
    if oh * ow < ih * iw:
        tags.add("smaller")
        if _is_crop(i, o):
            tags.add("crop")
    elif oh * ow > ih * iw:
        tags.add("larger")
    if oh == ih and ow != iw:
        tags.add("same_height")
    if ow == iw and oh != ih:
        tags.add("same_width")
    return tags


def _hist(grids: Sequence[_Grid]) -> list[float]:
    counts = np.zeros(10)
    for g in grids:
        counts += np.bincount(g.ravel().clip(0, 9), minlength=10)[:10]
    return [float(x) for x in counts / max(float(counts.sum()), 1.0)]


def program_ops(solution: Any) -> list[str]:
    """Op names of a DSL program (its JSON form) or the names a Python program calls."""
    ops: set[str] = set()

    def walk(e: Any) -> None:
        if isinstance(e, list | tuple) and e and isinstance(e[0], str):
            ops.add(e[0])
            e = e[1:]
        if isinstance(e, list | tuple):
            for a in e:
                walk(a)

    if isinstance(solution, str):
        try:
            tree = ast.parse(solution)
        except (SyntaxError, ValueError):
            return []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name:
                    ops.add(f"py:{name}")
    elif isinstance(solution, Mapping) and "program" in solution:
        walk(solution["program"])
    else:
        walk(solution)
    ops.discard("x")
    return sorted(ops)


def _mean(xs: Iterable[float]) -> float:
    xs = list(xs)
    return float(sum(xs) / len(xs)) if xs else 0.0


def _all(tag_sets: Sequence[set[str]]) -> set[str]:
    return set.intersection(*tag_sets) if tag_sets else set()


def _colour_features(train: Sequence[tuple[_Grid, _Grid]], bg: int) -> Features:
    pal_in: set[int] = set()
    pal_out: set[int] = set()
    added: set[int] = set()
    removed: set[int] = set()
    counts: list[list[int]] = []
    tags: list[set[str]] = []
    for i, o in train:
        ci, co = set(np.unique(i).tolist()), set(np.unique(o).tolist())
        pal_in |= ci
        pal_out |= co
        added |= co - ci
        removed |= ci - co
        counts.append([len(ci), len(co), len(co - ci), len(ci - co)])
        t = set()
        if co <= ci:
            t.add("out_within_in")
        if co == ci:
            t.add("same_palette")
        if len(co - {bg}) <= 1:
            t.add("out_one_colour")
        tags.append(t)
    ncol = [_mean(c[j] for c in counts) for j in range(4)]
    ctags = _all(tags) | {f"nin:{min(round(ncol[0]), 6)}", f"nout:{min(round(ncol[1]), 6)}"}
    if bg == 0:
        ctags.add("bg0")
    return {
        "pal_in": sorted(pal_in),
        "pal_out": sorted(pal_out),
        "added": sorted(added),
        "removed": sorted(removed),
        "ctags": sorted(ctags),
        "ncol": ncol,
    }


def _change_features(train: Sequence[tuple[_Grid, _Grid]], bg: int) -> Features:
    changed, only_bg, only_recolour, keeps = [], [], [], []
    for i, o in train:
        if i.shape != o.shape:
            continue
        diff = i != o
        changed.append(float(diff.mean()))
        only_bg.append(bool(np.all(i[diff] == bg)))
        only_recolour.append(bool(np.all((i[diff] != bg) & (o[diff] != bg))))
        keeps.append(bool(np.all(o[i != bg] == i[i != bg])))
    if not changed:
        return {"change": None, "change_tags": []}
    tags = {
        name
        for name, flags in (
            ("paints_bg", only_bg),
            ("recolours", only_recolour),
            ("keeps_input", keeps),
            ("identity", [c == 0 for c in changed]),
        )
        if all(flags)
    }

    def density(gs: Iterable[_Grid]) -> float:
        return _mean(float((g != bg).mean()) for g in gs)

    same = [(i, o) for i, o in train if i.shape == o.shape]
    change = [_mean(changed), density(i for i, _ in same), density(o for _, o in same)]
    return {"change": change, "change_tags": sorted(tags)}


def _arc_extract(task: Task, solution: Any, hindsight: bool) -> Features:
    train, tests = _arc_grids(task)
    inputs = [i for i, _ in train]
    outputs = [o for _, o in train]
    bg = int(np.argmax(np.bincount(np.concatenate([g.ravel() for g in inputs]), minlength=10)))

    shape = _all([_shape_tags(i, o) for i, o in train]) or {"mixed"}
    if len({o.shape for o in outputs}) == 1:
        shape.add("out_fixed")
        if outputs[0].shape == (1, 1):
            shape.add("out_1x1")
    if len({g.shape for g in inputs + tests}) == 1:
        shape.add("in_fixed")
    if all(o.shape[0] == o.shape[1] for o in outputs):
        shape.add("out_square")

    obj_in = [_objects(g, bg) for g in inputs]
    obj_out = [_objects(g, bg) for g in outputs]
    obj_tags = []
    for a, b in zip(obj_in, obj_out, strict=True):
        t = {"obj_same" if len(a) == len(b) else "obj_more" if len(b) > len(a) else "obj_fewer"}
        if len(b) == 1:
            t.add("out_one_object")
        obj_tags.append(t)

    sym_in = [_symmetries(g) for g in inputs]
    sym_out = [_symmetries(g) for g in outputs]
    feats: Features = {
        "shape": sorted(shape),
        **_colour_features(train, bg),
        "hist_in": _hist(inputs),
        "hist_out": _hist(outputs),
        "objects": [
            _mean(len(a) for a in obj_in),
            _mean(len(b) for b in obj_out),
            _mean(_mean(a) for a in obj_in),
            _mean(_mean(b) for b in obj_out),
        ],
        "otags": sorted(_all(obj_tags)),
        "sym": [_mean(s[j] for s in sym_in) for j in range(6)]
        + [_mean(s[j] for s in sym_out) for j in range(6)],
        **_change_features(train, bg),
        "size": [
            _mean(g.shape[0] for g in inputs),
            _mean(g.shape[1] for g in inputs),
            _mean(g.shape[0] for g in outputs),
            _mean(g.shape[1] for g in outputs),
        ],
    }
    for key in ("ncol", "hist_in", "hist_out", "objects", "sym", "change", "size"):
        if feats[key] is not None:
            feats[key] = [round(float(x), 4) for x in feats[key]]
    ops = program_ops(solution) if solution is not None else []
    if ops:
        feats["ops"] = ops
    return feats


@functools.lru_cache(maxsize=4096)
def _bit(item: str) -> int:
    return zlib.crc32(item.encode("utf-8")) % (64 * _WORDS)


def _mask(items: Iterable[Any]) -> list[int]:
    """A set as ``_WORDS`` 64-bit words: each element sets its CRC-32 bit mod 256."""
    mask = 0
    for item in items:
        mask |= 1 << _bit(str(item))
    return [(mask >> (64 * w)) & 0xFFFFFFFFFFFFFFFF for w in range(_WORDS)]


def _unit(v: Sequence[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n else list(v)


_SET_KEYS = ("shape", "pal_in", "pal_out", "added", "removed", "ctags", "otags", "change_tags")


@dataclass(frozen=True)
class ArcRow:
    """The ARC features of one task, ready to stack (see :class:`ArcBatch`)."""

    sets: list[list[int]]
    ops: list[int]
    has_ops: bool
    ncol: list[float]
    hists: list[list[float]]
    objects: list[float]
    sym: list[float]
    change: list[float]
    has_change: bool
    size: list[float]


@dataclass(frozen=True)
class ArcBatch:
    """The ARC features of many tasks as arrays, one row per task."""

    sets: _Array
    """(n, len(_SET_KEYS), _WORDS) uint64 bit masks."""
    ops: _Array
    """(n, _WORDS) uint64 bit masks of the program's ops."""
    has_ops: _Array
    ncol: _Array
    hists: _Array
    """(n, 4, 10): unit input and output histograms, exact then sorted."""
    objects: _Array
    sym: _Array
    change: _Array
    has_change: _Array
    size: _Array

    def __len__(self) -> int:
        return int(self.sets.shape[0])


def _arc_prepare(f: Features) -> ArcRow:
    hist_in, hist_out = f["hist_in"], f["hist_out"]
    change = f.get("change")
    return ArcRow(
        sets=[_mask(f.get(k, ())) for k in _SET_KEYS],
        ops=_mask(f.get("ops", ())),
        has_ops=bool(f.get("ops")),
        ncol=list(f["ncol"]),
        hists=[
            _unit(hist_in),
            _unit(hist_out),
            _unit(sorted(hist_in, reverse=True)),
            _unit(sorted(hist_out, reverse=True)),
        ],
        objects=list(f["objects"]),
        sym=list(f["sym"]),
        change=list(change or [0.0, 0.0, 0.0]),
        has_change=change is not None,
        size=list(f["size"]),
    )


_ARC_DTYPES = {"sets": np.uint64, "ops": np.uint64, "has_ops": bool, "has_change": bool}


def _arc_stack(rows: Sequence[ArcRow]) -> ArcBatch:
    return ArcBatch(
        **{
            name: np.array(
                [getattr(r, name) for r in rows], dtype=_ARC_DTYPES.get(name, np.float64)
            )
            for name in ArcBatch.__dataclass_fields__
        }
    )


def _jaccard_masks(a: _Array, b: _Array) -> _Array:
    """Jaccard of bit masks along the last axis; 1 where both are empty."""
    inter = np.bitwise_count(a & b).sum(axis=-1)
    union = np.bitwise_count(a | b).sum(axis=-1)
    return np.where(union == 0, 1.0, inter / np.maximum(union, 1))


def _closeness(a: _Array, b: _Array) -> _Array:
    """min/max per element (1 where both are 0), averaged over the last axis."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return np.asarray(np.where(hi <= 1e-12, 1.0, lo / np.maximum(hi, 1e-12)).mean(axis=-1))


def arc_components(q: ArcBatch, c: ArcBatch) -> dict[str, _Array]:
    """The ARC similarity components of the one task in ``q`` to every task in ``c``
    (NaN where a component is missing)."""
    sets = _jaccard_masks(c.sets, q.sets)  # (n, len(_SET_KEYS))
    cos = np.einsum("nkd,kd->nk", c.hists, q.hists[0])  # (n, 4)
    tag = {k: sets[:, j] for j, k in enumerate(_SET_KEYS)}
    change = np.where(
        c.has_change & q.has_change[0],
        (np.sum(1.0 - np.abs(c.change - q.change), axis=-1) + tag["change_tags"]) / 4.0,
        np.where(c.has_change == q.has_change[0], np.nan, 0.0),
    )
    return {
        "shape": tag["shape"],
        "palette": (tag["pal_in"] + tag["pal_out"] + tag["added"] + tag["removed"]) / 4.0,
        "colours": (4.0 * _closeness(c.ncol, q.ncol) + cos[:, 2] + cos[:, 3] + tag["ctags"]) / 7.0,
        "histogram": (cos[:, 0] + cos[:, 1]) / 2.0,
        "objects": (4.0 * _closeness(c.objects, q.objects) + tag["otags"]) / 5.0,
        "symmetry": 1.0 - np.abs(c.sym - q.sym).mean(axis=-1),
        "change": change,
        "size": _closeness(c.size, q.size),
        "ops": np.where(c.has_ops & q.has_ops[0], _jaccard_masks(c.ops, q.ops), np.nan),
    }


def arc_raw_similarity(q: ArcBatch, c: ArcBatch) -> _Array:
    """The weighted mean of the present components, before the floor (one per row of c)."""
    num = np.zeros(len(c))
    den = np.zeros(len(c))
    for name, values in arc_components(q, c).items():
        present = ~np.isnan(values)
        num += np.where(present, ARC_WEIGHTS[name] * np.nan_to_num(values), 0.0)
        den += np.where(present, ARC_WEIGHTS[name], 0.0)
    return np.asarray(num / np.maximum(den, 1e-12))


def _arc_similarity(query: ArcRow, candidates: ArcBatch) -> _Array:
    raw = arc_raw_similarity(_arc_stack([query]), candidates)
    return np.asarray(np.clip((raw - ARC_FLOOR) / (1.0 - ARC_FLOOR), 0.0, 1.0))


def _arc_extend(batch: ArcBatch, rows: Sequence[ArcRow]) -> ArcBatch:
    more = _arc_stack(rows)
    return ArcBatch(
        **{
            name: np.concatenate([getattr(batch, name), getattr(more, name)])
            for name in ArcBatch.__dataclass_fields__
        }
    )


register_features(
    "arc",
    extract=_arc_extract,
    similarity=_arc_similarity,
    prepare=_arc_prepare,
    stack=_arc_stack,
    extend=_arc_extend,
    content=_arc_content,
)

# --------------------------------------------------------------------------- SWE

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
    from atlas_actors.swe.instances import SWEInstance

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
            "tests": _mean(tests) if tests else None,
            "exceptions": _known_jaccard(query.get("exceptions", []), c.get("exceptions", [])),
            "text": text,
        }
        out.append(weighted(parts, SWE_WEIGHTS))
    return out


register_features("swe", extract=_swe_extract, similarity=_swe_similarity, content=_swe_content)
