"""Ranking among green patches: closeness (changed tokens, new names), then fault
localisation's rank of the edit's line."""

from __future__ import annotations

import textwrap

from atlas_actors.swe.repair.operators import generate_edits
from atlas_actors.swe.repair.ranking import Closeness, closeness, diff_sides, fl_rank

SHIPPING = textwrap.dedent(
    """\
    FLAT = 4.95
    EXPRESS = 9.90
    FREE_FROM = 50.0


    def cost(subtotal):
        if subtotal > FREE_FROM:
            return 0.0
        return FLAT
    """
)


def labelled(label: str) -> object:
    edits = generate_edits(SHIPPING, "s.py", {7: 1.0})
    return next(e for e in edits if e.label.startswith(label))


def test_a_changed_operator_is_closer_than_another_constant_name() -> None:
    scores = {"s.py": {7: 1.0, 8: 0.5}}
    operator = closeness(labelled("> -> >="), scores)
    name = closeness(labelled("FREE_FROM -> EXPRESS"), scores)
    assert operator == Closeness(changed_tokens=1, new_names=0, fl_rank=1)
    assert name == Closeness(changed_tokens=1, new_names=1, fl_rank=1)
    assert operator < name


def test_fewer_changed_tokens_come_before_names() -> None:
    swap = generate_edits("def f(a, lo, hi):\n    return (a - hi) * 2\n", "m.py", {2: 1.0})
    swapped = next(e for e in swap if e.family == "operand_swap")
    renamed = next(e for e in swap if e.label.startswith("hi -> lo"))
    scores = {"m.py": {2: 1.0}}
    assert closeness(renamed, scores) < closeness(swapped, scores)
    assert diff_sides(swapped.diff) == ("    return (a - hi) * 2", "    return (hi - a) * 2")


def test_fl_rank_counts_lines_that_score_higher() -> None:
    scores = {"a.py": {3: 0.9, 4: 0.5}, "b.py": {1: 0.7}}
    assert fl_rank(scores, "a.py", (3,)) == 1
    assert fl_rank(scores, "a.py", (4, 5)) == 3
    assert fl_rank(scores, "b.py", (1,)) == 2
    assert fl_rank(scores, "b.py", (9,)) == 4  # not suspicious: after every line
