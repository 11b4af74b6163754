"""Sibling edits: the same single edit made at every other suspicious line that has the
same code, as one candidate.

Two-edit bugs are often one mistake made twice (a bound checked against the wrong
field in two methods, a ``split`` without its limit in two places). No single edit of
such a bug moves the tests, so a search guided by test progress never gets to the
second edit. Hercules (Saha et al., ICSE 2019) repairs these "multi-hunk" bugs by
applying one edit at *sibling* locations; this is a lightweight version of that idea:

for an edit that changes one line, the changed tokens (the differing span of the old
and new line, widened to whole dotted names, and to the neighbouring tokens when that
is still short) are looked for on the file's other suspicious lines; where they occur,
the same replacement is made at the same occurrence (the second ``self.rows`` of a line
stays the second), and the whole is one candidate (``family`` ``<family>+siblings``,
half the edit's prior: a fix of two places is less likely a priori than a fix of one).
Candidates compile and are distinct.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from atlas_actors.swe.repair.patch import git_diff, split_lines

SIBLING_SUFFIX = "+siblings"
"""Appended to the family of a sibling edit (``identifier_replace+siblings``)."""
SIBLING_PRIOR = 0.5
"""A sibling edit's prior, as a share of its single edit's."""


@dataclass(frozen=True)
class SiblingEdit:
    """One candidate: a single edit's replacement made on several lines of one file
    (the fields the repair proposer reads of a :class:`~atlas_actors.swe.repair.patch.
    CandidateEdit`)."""

    path: str
    family: str
    line: int
    label: str
    prior: float
    lines: tuple[int, ...]
    """Every line changed (1-based), the edit's first."""
    new_text: str = field(repr=False)
    diff: str = field(repr=False)
    original: str = field(repr=False, compare=False, default="")
    """The text the edit was made on."""

    @property
    def hunk(self) -> tuple[int, int, int]:
        """The first changed line, as ``(line, removed, added)``: every change replaces
        one line by one, so no line moves."""
        return (self.lines[0], 1, 1)


def _ident(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _atom_left(line: str, p: int) -> int:
    """Where the token ending just before ``p`` starts (spaces before it skipped)."""
    while p > 0 and line[p - 1] == " ":
        p -= 1
    if p == 0:
        return 0
    ch = line[p - 1]
    if ch in "'\"":
        q = line.rfind(ch, 0, p - 1)
        return q if q >= 0 else p - 1
    if _ident(ch):
        while p > 0 and (_ident(line[p - 1]) or line[p - 1] == "."):
            p -= 1
        return p
    return p - 1


def _atom_right(line: str, e: int) -> int:
    """Where the token starting at ``e`` ends (spaces before it skipped)."""
    while e < len(line) and line[e] == " ":
        e += 1
    if e >= len(line):
        return len(line)
    ch = line[e]
    if ch in "'\"":
        q = line.find(ch, e + 1)
        return q + 1 if q >= 0 else e + 1
    if _ident(ch):
        while e < len(line) and (_ident(line[e]) or line[e] == "."):
            e += 1
        return e
    return e + 1


MIN_SPAN = 4
"""A changed span shorter than this takes in the tokens on each side (a lone ``a`` is
everywhere)."""


def changed_span(old: str, new: str) -> tuple[str, str, int] | None:
    """``(old part, new part, occurrence)``: the differing middle of two versions of a
    line, widened to whole dotted names (and, when short or empty, to the tokens on
    each side), and which occurrence of the old part in ``old`` it is (0 first); None
    when the lines are equal."""
    if old == new:
        return None
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1
    while p > 0 and (_ident(old[p - 1]) or old[p - 1] == "."):
        p -= 1
    while s > 0 and (_ident(old[len(old) - s]) or old[len(old) - s] == "."):
        s -= 1
    if len(old) - s - p < MIN_SPAN:
        p = _atom_left(old, p)
        s = len(old) - _atom_right(old, len(old) - s)
    old_part, new_part = old[p : len(old) - s], new[p : len(new) - s]
    if not old_part.strip():
        return None
    return old_part, new_part, old[:p].count(old_part)


def _replace_nth(line: str, old: str, new: str, n: int) -> str:
    """``line`` with occurrence ``n`` of ``old`` (the last, if there are fewer) replaced."""
    starts = []
    i = line.find(old)
    while i >= 0:
        starts.append(i)
        i = line.find(old, i + 1)
    at = starts[min(n, len(starts) - 1)]
    return line[:at] + new + line[at + len(old) :]


def sibling_edits(
    edits: Sequence[object],
    text: str,
    path: str,
    suspicious: Collection[int],
    *,
    limit: int = 200,
) -> list[SiblingEdit]:
    """Sibling variants of ``edits`` (single edits of ``text``, the file at ``path``):
    each one-line edit whose changed tokens also occur on other ``suspicious`` lines,
    made on all of them. At most ``limit``, in the order of ``edits``."""
    lines = split_lines(text)
    out: list[SiblingEdit] = []
    seen: set[str] = set()
    for edit in edits:
        if len(out) >= limit:
            break
        first, removed, added = getattr(edit, "hunk", (0, 0, 0))
        if removed != 1 or added != 1 or not 1 <= first <= len(lines):
            continue
        new_lines = split_lines(getattr(edit, "new_text", ""))
        if len(new_lines) != len(lines):
            continue
        span = changed_span(lines[first - 1], new_lines[first - 1])
        if span is None:
            continue
        old_part, new_part, nth = span
        siblings = sorted(
            n
            for n in suspicious
            if n != first and 1 <= n <= len(lines) and old_part in lines[n - 1]
        )
        if not siblings:
            continue
        changed = list(new_lines)
        for n in siblings:  # the same occurrence of the code on each line (or its last)
            changed[n - 1] = _replace_nth(lines[n - 1], old_part, new_part, nth)
        new_text = "".join(changed)
        if new_text in seen:
            continue
        try:
            compile(new_text, path, "exec")
        except (SyntaxError, ValueError):
            continue
        seen.add(new_text)
        touched = tuple(sorted({first, *siblings}))
        blocks = [(n - 1, n, n - 1, n) for n in touched]
        family = f"{getattr(edit, 'family', 'edit')}{SIBLING_SUFFIX}"
        where = ", ".join(str(n) for n in siblings)
        out.append(
            SiblingEdit(
                path=path,
                family=family,
                line=first,
                label=f"{getattr(edit, 'label', 'edit')} (and the same at line(s) {where})",
                prior=float(getattr(edit, "prior", 0.0)) * SIBLING_PRIOR,
                lines=touched,
                new_text=new_text,
                diff=git_diff(path, lines, changed, blocks),
                original=text,
            )
        )
    return out
