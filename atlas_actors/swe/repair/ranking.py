"""Ranking among green patches: when several edits pass every test, which to offer first.

The tests cannot tell green patches apart, so the order is a judgement about which is
likelier right, in this order:

1. **closest to the original**: fewest changed tokens (the tokens of the removed and
   added lines, compared as sequences), then fewest new names (identifiers the edit
   brings into the changed lines that were not in them: ``x > LIMIT`` -> ``x >= LIMIT``
   keeps its names, ``x > LIMIT`` -> ``x > EXPRESS`` brings in one). Real fixes are
   small (Sobreira et al. 2018: most Defects4J fixes change a few tokens), and a patch
   that only changes what is there is less often an overfit than one that reaches for
   another name that happens to fit the tested inputs;
2. **where fault localisation points**: the edit's best line by its rank in the
   localisation (1: the most suspicious line);
3. the edit's **prior** (the family's share of real fixes times the line's
   suspiciousness), as before.

Patches the probes (:mod:`~atlas_actors.swe.repair.probes`) catch raising on inputs
near the tested ones are refused before this order applies.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

__all__ = ["Closeness", "closeness", "diff_sides", "fl_rank"]

_TOKEN = re.compile(r"\w+|\S")
_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True, order=True)
class Closeness:
    """How far a patch is from the original (smaller is closer), and its line's rank."""

    changed_tokens: int
    new_names: int
    fl_rank: int


def diff_sides(diff: str) -> tuple[str, str]:
    """The removed and the added lines of a unified diff, each side joined."""
    old, new = [], []
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
    return "\n".join(old), "\n".join(new)


def _names(text: str) -> set[str]:
    return {n for n in _NAME.findall(text) if not keyword.iskeyword(n)}


def fl_rank(scores: Mapping[str, Mapping[int, float]], path: str, lines: tuple[int, ...]) -> int:
    """1 + how many suspicious lines (of any file) score higher than the best of
    ``lines`` in ``path``; one past the last when none of them is suspicious."""
    every = [v for by_line in scores.values() for v in by_line.values()]
    mine = [scores.get(path, {}).get(n, 0.0) for n in lines]
    best = max(mine, default=0.0)
    if best <= 0:
        return len(every) + 1
    return 1 + sum(1 for v in every if v > best)


def edit_lines(edit: Any) -> tuple[int, ...]:
    """The lines of the original an edit changes (an insertion: the lines around it)."""
    lines = getattr(edit, "lines", None)
    if lines:
        return tuple(lines)
    first, removed, _ = edit.hunk
    if removed:
        return tuple(range(first, first + removed))
    return (first - 1, first)


def closeness(edit: Any, scores: Mapping[str, Mapping[int, float]]) -> Closeness:
    """How close ``edit`` (a candidate or sibling edit) stays to the original, and where
    its line ranks in ``scores`` (per file, suspiciousness by line of the text the edit
    was made on)."""
    old, new = diff_sides(edit.diff)
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    changed = sum(
        max(i2 - i1, j2 - j1)
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if tag != "equal"
    )
    return Closeness(
        changed_tokens=changed,
        new_names=len(_names(new) - _names(old)),
        fl_rank=fl_rank(scores, edit.path, edit_lines(edit)),
    )
