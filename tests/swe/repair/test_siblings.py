"""Sibling edits: one edit's change made at every other suspicious line with the same
code, as one candidate (a mistake made twice)."""

from __future__ import annotations

import textwrap

from atlas_actors.swe.repair.operators import generate_edits
from atlas_actors.swe.repair.siblings import SIBLING_SUFFIX, changed_span, sibling_edits

BOARD = textwrap.dedent(
    """\
    class Board:
        def __init__(self, rows, cols):
            self.rows, self.cols = rows, cols

        def inside(self, r, c):
            return 0 <= r < self.rows and 0 <= c < self.rows

        def clamp(self, r, c):
            return min(r, self.rows - 1), min(c, self.rows - 1)

        def size(self):
            return self.rows * self.cols
    """
)
FIXED_INSIDE = "        return 0 <= r < self.rows and 0 <= c < self.cols\n"
FIXED_CLAMP = "        return min(r, self.rows - 1), min(c, self.cols - 1)\n"


def test_changed_span_widens_to_whole_names_and_context() -> None:
    assert changed_span("c < self.rows", "c < self.cols") == ("self.rows", "self.cols", 0)
    line = "0 <= r < self.rows and 0 <= c < self.rows"
    fixed = "0 <= r < self.rows and 0 <= c < self.cols"
    assert changed_span(line, fixed) == ("self.rows", "self.cols", 1)  # the second one
    assert changed_span("x.split('=')", "x.split('=', 1)") == ("'=')", "'=', 1)", 0)
    assert changed_span("return a < b", "return b < b") == ("return a <", "return b <", 0)
    assert changed_span("a", "a") is None


def test_the_same_fix_at_both_places_is_one_candidate() -> None:
    suspicious = {6: 1.0, 9: 1.0}
    single = generate_edits(BOARD, "board.py", suspicious)
    siblings = sibling_edits(single, BOARD, "board.py", suspicious)
    assert siblings and all(s.family.endswith(SIBLING_SUFFIX) for s in siblings)
    wanted = [
        s
        for s in siblings
        if FIXED_INSIDE in s.new_text.splitlines(keepends=True)
        and FIXED_CLAMP in s.new_text.splitlines(keepends=True)
    ]
    # rows -> cols of the second comparison made on line 9 too (the last rows there)
    assert not wanted or all(s.lines == (6, 9) for s in wanted)
    texts = [s.new_text for s in siblings]
    assert len(texts) == len(set(texts))
    for s in siblings:
        compile(s.new_text, "board.py", "exec")
        assert s.diff.startswith("diff --git a/board.py b/board.py")
        by_line = dict(enumerate(BOARD.splitlines(), 1))
        changed = [n for n, ln in enumerate(s.new_text.splitlines(), 1) if ln != by_line[n]]
        assert changed == list(s.lines)  # exactly the edit's line and its siblings
        assert s.prior < max(e.prior for e in single)


def test_no_sibling_without_the_same_code_elsewhere() -> None:
    text = "def f(a, b):\n    return a < b\n\n\ndef g(a):\n    return a + 1\n"
    single = generate_edits(text, "f.py", {2: 1.0, 6: 1.0})
    assert sibling_edits(single, text, "f.py", {2: 1.0, 6: 1.0}) == []
