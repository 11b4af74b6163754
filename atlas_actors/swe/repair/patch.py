"""Candidate edits as patches: the :class:`CandidateEdit` record, git-format unified diffs,
combining several edits into one patch, and carrying suspiciousness across an edit.

Diffs are written directly from the changed line block (three lines of context, the
``\\ No newline at end of file`` marker where needed) in the form ``git apply`` takes at
the repository root::

    diff --git a/textkit/wrap.py b/textkit/wrap.py
    --- a/textkit/wrap.py
    +++ b/textkit/wrap.py
    @@ -15,7 +15,7 @@
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "CandidateEdit",
    "combine_patches",
    "edit_diff",
    "git_diff",
    "remap_suspicious",
    "split_lines",
]

CONTEXT = 3


@dataclass(frozen=True, slots=True)
class CandidateEdit:
    """One candidate repair: a single edit of one file.

    ``prior`` is ``FAMILIES[family].prior * suspiciousness``. ``key`` is the normalised
    key of ``new_text`` (equal keys: equal ASTs), so candidates from different calls can
    be de-duplicated by it. ``hunk`` is the changed line block: ``(first line in the
    original, lines removed, lines added)``, lines 1-based.
    """

    path: str
    family: str
    line: int
    """1-based line of the original where the edit is (its first changed token)."""
    label: str
    """Short and human: ``"< -> <= at textkit/wrap.py:18"``."""
    prior: float
    suspiciousness: float
    """The suspiciousness of the statement edited (the highest of its lines)."""
    rank: int
    """Position among the candidates of the same family on the same line (0 first)."""
    key: str
    hunk: tuple[int, int, int]
    new_text: str = field(repr=False)
    diff: str = field(repr=False)
    original: str = field(repr=False, compare=False)
    """The text the edit was made on (shared by every candidate of a call, not copied)."""


def _lines(text: str) -> list[str]:
    return split_lines(text)


def _hunk_lines(lines: Sequence[str], start: int, stop: int, mark: str) -> list[str]:
    out = []
    for k in range(start, stop):
        line = lines[k]
        if line.endswith("\n"):
            out.append(mark + line)
        else:
            out.append(mark + line + "\n\\ No newline at end of file\n")
    return out


def _range(start: int, count: int) -> str:
    if count == 0:
        return f"{start},0"
    first = start + 1
    return f"{first}" if count == 1 else f"{first},{count}"


def git_diff(
    path: str,
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    blocks: Iterable[tuple[int, int, int, int]],
) -> str:
    """A git-format diff of ``path`` from changed blocks ``(old_start, old_stop, new_start,
    new_stop)`` (0-based, half-open, in order, the lines between blocks equal)."""
    hunks: list[list[tuple[int, int, int, int]]] = []
    for block in blocks:
        if hunks and block[0] - hunks[-1][-1][1] <= 2 * CONTEXT:
            hunks[-1].append(block)
        else:
            hunks.append([block])
    out = [f"diff --git a/{path} b/{path}\n", f"--- a/{path}\n", f"+++ b/{path}\n"]
    for group in hunks:
        o0, _, n0, _ = group[0]
        _, o1, _, n1 = group[-1]
        lead = min(CONTEXT, o0)
        trail = min(CONTEXT, len(old_lines) - o1)
        os, oe = o0 - lead, o1 + trail
        ns, ne = n0 - lead, n1 + trail
        out.append(f"@@ -{_range(os, oe - os)} +{_range(ns, ne - ns)} @@\n")
        out.extend(_hunk_lines(old_lines, os, o0, " "))
        for k, (b0, b1, c0, c1) in enumerate(group):
            out.extend(_hunk_lines(old_lines, b0, b1, "-"))
            out.extend(_hunk_lines(new_lines, c0, c1, "+"))
            stop = group[k + 1][0] if k + 1 < len(group) else oe
            out.extend(_hunk_lines(old_lines, b1, stop, " "))
    return "".join(out)


def split_lines(text: str) -> list[str]:
    """Lines with their endings (``\n``, ``\r\n``; no other character ends a line)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def edit_diff(
    path: str, old_lines: Sequence[str], first: int, last: int, new_block: Sequence[str]
) -> tuple[str, tuple[int, int, int]]:
    """The diff of replacing lines ``first..last`` (1-based, inclusive; ``last = first - 1``
    for an insertion) of ``old_lines`` by ``new_block``, trimmed to the lines that really
    change. Returns the diff and the hunk ``(first line, removed, added)``."""
    o0, o1 = min(first - 1, len(old_lines)), min(last, len(old_lines))
    o0 = min(o0, o1)
    block = list(new_block)
    k0, k1 = 0, len(block)
    while o0 < o1 and k0 < k1 and old_lines[o0] == block[k0]:
        o0 += 1
        k0 += 1
    while o1 > o0 and k1 > k0 and old_lines[o1 - 1] == block[k1 - 1]:
        o1 -= 1
        k1 -= 1
    added = block[k0:k1]
    lead = min(CONTEXT, o0)
    trail = min(CONTEXT, len(old_lines) - o1)
    start = o0 - lead
    old_range = _range(start, lead + (o1 - o0) + trail)
    new_range = _range(start, lead + len(added) + trail)
    head = f"@@ -{old_range} +{new_range} @@\n"
    out = [
        f"diff --git a/{path} b/{path}\n",
        f"--- a/{path}\n",
        f"+++ b/{path}\n",
        head,
        *_hunk_lines(old_lines, start, o0, " "),
        *_hunk_lines(old_lines, o0, o1, "-"),
        *_hunk_lines(added, 0, len(added), "+"),
        *_hunk_lines(old_lines, o1, o1 + trail, " "),
    ]
    return "".join(out), (o0 + 1, o1 - o0, len(added))


def _diff_blocks(old_lines: list[str], new_lines: list[str]) -> list[tuple[int, int, int, int]]:
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def combine_patches(edits: Sequence[CandidateEdit]) -> str:
    """One git patch for several edits, on one file or several.

    Edits of the same file either chain (each made on the text the previous one produced,
    as :func:`generate_edits` on an edited file does) or are independent edits of the same
    text whose changed lines do not overlap; anything else raises ``ValueError``.
    """
    by_path: dict[str, tuple[str, str]] = {}
    order: list[str] = []
    for edit in edits:
        if edit.path not in by_path:
            order.append(edit.path)
            by_path[edit.path] = (edit.original, edit.new_text)
            continue
        base, current = by_path[edit.path]
        if edit.original == current:
            by_path[edit.path] = (base, edit.new_text)
        elif edit.original == base:
            by_path[edit.path] = (base, _apply_independent(current, base, edit))
        else:
            raise ValueError(
                f"edit {edit.label!r} was made neither on {edit.path}'s original text nor "
                "on the text the previous edits produced"
            )
    parts = []
    for path in sorted(order):
        base, final = by_path[path]
        old_lines, new_lines = _lines(base), _lines(final)
        blocks = _diff_blocks(old_lines, new_lines)
        if blocks:
            parts.append(git_diff(path, old_lines, new_lines, blocks))
    return "".join(parts)


def _apply_independent(current: str, base: str, edit: CandidateEdit) -> str:
    """Apply ``edit`` (made on ``base``) to ``current`` (``base`` with other edits)."""
    base_lines, current_lines = _lines(base), _lines(current)
    first, removed, added = edit.hunk
    start, stop = first - 1, first - 1 + removed
    shift = 0
    for i1, i2, j1, j2 in _diff_blocks(base_lines, current_lines):
        if i2 <= start:
            shift += (j2 - j1) - (i2 - i1)
        elif i1 < stop:
            raise ValueError(f"edits overlap in {edit.path} at line {first}")
    new_lines = _lines(edit.new_text)
    return "".join(
        [
            *current_lines[: start + shift],
            *new_lines[start : start + added],
            *current_lines[start + shift + removed :],
        ]
    )


def remap_suspicious(edit: CandidateEdit, suspicious: Mapping[int, float]) -> dict[int, float]:
    """Suspiciousness for the lines of ``edit.new_text``, from that of the original's
    lines: lines after the edit shift, changed lines keep theirs, inserted lines get the
    edit's own. Use it to call :func:`generate_edits` again on the edited text (depth 2).
    """
    first, removed, added = edit.hunk
    out: dict[int, float] = {}
    for line, value in suspicious.items():
        if line < first:
            out[line] = value
        elif line >= first + removed:
            out[line + added - removed] = value
        elif line - first < added:
            out[line] = value
    for line in range(first, first + added):
        out.setdefault(line, edit.suspiciousness)
    return out
