"""Parameter inference (atlas_actors.arc.infer): the object splits and arguments
generators leave out can only give duplicate or useless states, and what they leave out
really is a duplicate; colour maps read off the pairs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import OPS, Program
from atlas_actors.arc.infer import infer_cmap
from tests.helpers.arc import G, ctx, gen

# every object is one colour and no two touch at a corner: all four splits agree
PLAIN = [[1, 1, 0, 2], [0, 0, 0, 2], [3, 0, 0, 0]]
# a diagonal touch (8 vs 4 differ) and a two-colour object (by colour or not differ)
MIXED = [[1, 0, 0, 0], [0, 1, 2, 0], [0, 0, 0, 3]]


def test_splits_that_cut_the_same_objects_are_left_out() -> None:
    assert ctx([(PLAIN, PLAIN)]).conns() == [(8, 0)]
    assert ctx([(MIXED, MIXED)]).conns() == [(8, 0), (8, 1), (4, 0), (4, 1)]
    # a split differing only on a test input still counts
    c = ctx([(PLAIN, PLAIN)])
    c.states.append(G(MIXED))
    assert c.conns() == [(8, 0), (8, 1), (4, 0), (4, 1)]


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("keep_extreme", ("largest", "@conn", "@by", 0)),
        ("remove_extreme", ("smallest", "@conn", "@by", 0)),
        ("crop_object", ("largest", "@conn", "@by", 0, 1)),
        ("map_objects", (("flip_h", "x"), "@conn", "@by", 0)),
        ("fill_bbox", (5, "@conn", "@by", 0)),
    ],
)
def test_a_left_out_split_gives_the_same_grid_as_the_one_kept(
    op: str, args: tuple[Any, ...]
) -> None:
    def run(grid: list[list[int]], conn: int, by: int) -> list[list[int]]:
        call = [conn if a == "@conn" else by if a == "@by" else a for a in args]
        call = [Program(a) if isinstance(a, tuple) else a for a in call]
        out: list[list[int]] = np.asarray(OPS[op].fn(G(grid), *call)).tolist()
        return out

    kept = run(PLAIN, 8, 0)
    for conn, by in ((8, 1), (4, 0), (4, 1)):
        assert run(PLAIN, conn, by) == kept
    # where the splits differ, so does the op (the check above is not vacuous)
    assert run(MIXED, 8, 0) != run(MIXED, 4, 1)


def test_the_generators_use_the_kept_splits_only() -> None:
    c = ctx([(PLAIN, [[0, 0, 0, 2], [0, 0, 0, 2], [0, 0, 0, 0]])])
    assert {(a[1], a[2]) for a in gen("keep_extreme", c)} == {(8, 0)}
    assert {(a[1], a[2]) for a in gen("map_objects", c)} == {(8, 0)}
    assert {a[1] for a in gen("object_gravity", c)} == {8}
    m = ctx([(MIXED, MIXED)])
    assert {(a[1], a[2]) for a in gen("keep_extreme", m)} == {(8, 0), (8, 1), (4, 0), (4, 1)}
    assert {a[1] for a in gen("object_gravity", m)} == {8, 4}


def test_rays_only_in_colours_a_target_gains_on_the_background() -> None:
    state = [[0, 0, 0, 0], [0, 1, 0, 2], [0, 0, 0, 0]]
    target = [[0, 1, 0, 0], [0, 1, 0, 2], [0, 1, 0, 0]]  # 1 grows, 2 does not
    colours = {a[0] for a in gen("rays", ctx([(state, target)]))}
    assert colours == {1}
    # a colour that only moves (bg cells become 2 elsewhere) may still be a ray
    moved = [[0, 0, 0, 2], [0, 1, 0, 0], [0, 0, 0, 0]]
    assert {a[0] for a in gen("rays", ctx([(state, moved)]))} == {2}


def test_infers_colour_map() -> None:
    s = [np.array([[1, 2], [3, 1]]), np.array([[2, 2, 0]])]
    t = [np.array([[4, 2], [3, 4]]), np.array([[2, 2, 0]])]
    assert infer_cmap(s, t) == [[1, 4]]
    assert infer_cmap([np.array([[1, 1]])], [np.array([[2, 3]])]) is None


def test_a_colour_map_of_swaps_gets_its_missing_halves() -> None:
    # 1 <-> 5 seen both ways, 2 -> 6 one way (6 never in a state): 6 -> 2 is added
    s, t = [np.array([[1, 5, 2]])], [np.array([[5, 1, 6]])]
    assert infer_cmap(s, t) == [[1, 5], [2, 6], [5, 1], [6, 2]]
    # no swap seen: one-way changes stay one way
    assert infer_cmap([np.array([[1, 2]])], [np.array([[5, 6]])]) == [[1, 5], [2, 6]]
    # 6 -> 3 breaks the swap pattern: nothing is added for 2 -> 6 ... (6 is in a state)
    s, t = [np.array([[1, 5, 2, 6]])], [np.array([[5, 1, 6, 3]])]
    assert infer_cmap(s, t) == [[1, 5], [2, 6], [5, 1], [6, 3]]
    # ... nor for 3 -> 7 next to a chain 2 -> 6 -> 3
    s, t = [np.array([[1, 5, 2, 6, 3]])], [np.array([[5, 1, 6, 3, 7]])]
    assert infer_cmap(s, t) == [[1, 5], [2, 6], [3, 7], [5, 1], [6, 3]]
