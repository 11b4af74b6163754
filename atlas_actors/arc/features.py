"""ARC's similarity features for memory (the ``features`` of the ``arc`` domain).

Computed from the train pairs and test inputs, never the test outputs. Each component
is in [0, 1]; the similarity is a weighted mean over the components both sides have, so
a missing component neither helps nor hurts (see :mod:`atlas_actors.memory.features`)::

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
statistics are shared by any two ARC tasks (same-shape grids, few colours, background 0),
so the raw similarity of two unrelated tasks is well above 0; the floor
:data:`ARC_FLOOR` maps the typical unrelated pair to 0 (docs/memory.md gives the
distribution over the training tasks). The statistics barely see orientation, so a
transposed or mirrored copy of a square task scores close to 1.
"""

from __future__ import annotations

import ast
import functools
import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from atlas_actors.arc.environment import load_arc_task
from atlas_actors.memory.features import DomainFeatures, Features, mean
from atlas_actors.types import Task

_Array = np.ndarray[Any, Any]

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
    ncol = [mean(c[j] for c in counts) for j in range(4)]
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
        return mean(float((g != bg).mean()) for g in gs)

    same = [(i, o) for i, o in train if i.shape == o.shape]
    change = [mean(changed), density(i for i, _ in same), density(o for _, o in same)]
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
            mean(len(a) for a in obj_in),
            mean(len(b) for b in obj_out),
            mean(mean(a) for a in obj_in),
            mean(mean(b) for b in obj_out),
        ],
        "otags": sorted(_all(obj_tags)),
        "sym": [mean(s[j] for s in sym_in) for j in range(6)]
        + [mean(s[j] for s in sym_out) for j in range(6)],
        **_change_features(train, bg),
        "size": [
            mean(g.shape[0] for g in inputs),
            mean(g.shape[1] for g in inputs),
            mean(g.shape[0] for g in outputs),
            mean(g.shape[1] for g in outputs),
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


FEATURES = DomainFeatures(
    "arc",
    "1",
    extract=_arc_extract,
    similarity=_arc_similarity,
    prepare=_arc_prepare,
    stack=_arc_stack,
    extend=_arc_extend,
    content=_arc_content,
)
"""The ARC domain's features (its spec's ``features``)."""
