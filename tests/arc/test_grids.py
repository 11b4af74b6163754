"""Grid helpers (atlas_actors.arc.grids): the memos of objects, features and selections
give the answers of the slow paths they replace, and never a stale one."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc import grids
from atlas_actors.arc.grids import components, obj_feature, select_object
from atlas_actors.arc.ops.crops import crop_object


def test_selection_memo_returns_the_same_pick_and_the_same_refusal() -> None:
    g = np.array([[1, 1, 0, 2], [1, 1, 0, 0], [0, 0, 0, 3]])
    objs = components(g, 4, 1, 0)
    for _ in range(2):  # second round answers from the memo
        ys, xs = select_object(g, objs, "largest", 0)
        cells = sorted(zip(ys.tolist(), xs.tolist(), strict=True))
        assert cells == [(0, 0), (0, 1), (1, 0), (1, 1)]
        with pytest.raises(ValueError):
            select_object(g, objs, "symmetric", 0)  # all three are symmetric: no pick


def test_selection_follows_the_grid_not_an_earlier_pick() -> None:
    a = np.array([[1, 1, 0, 2], [1, 1, 0, 0]])
    b = np.array([[1, 0, 2, 2], [0, 0, 2, 2]])
    for _ in range(2):
        assert crop_object(a, "largest", 4, 1, 0, 1).tolist() == [[1, 1], [1, 1]]
        assert crop_object(b, "largest", 4, 1, 0, 1).tolist() == [[2, 2], [2, 2]]
        assert crop_object(b, "smallest", 4, 1, 0, 1).tolist() == [[1]]


def test_a_memo_entry_under_a_reused_id_is_not_trusted() -> None:
    # an id can be reused once its list is gone; plant one list's entry under another
    # list's id, as reuse would, and the selection is still computed for the new list
    a = np.array([[1, 1, 0, 2]])
    b = np.array([[1, 0, 2, 2]])
    objs_a, objs_b = components(a, 4, 1, 0), components(b, 4, 1, 0)
    assert grids.pick_index(a, objs_a, "largest", 0) == 0
    grids._CACHE_FEAT[(id(objs_b), "select", "largest", 0)] = grids._CACHE_FEAT[
        (id(objs_a), "select", "largest", 0)
    ]
    assert grids.pick_index(b, objs_b, "largest", 0) == 1
    o = objs_a[0]
    assert obj_feature(a, o, "size", 0) == 2
    grids._CACHE_FEAT[(id(objs_b[0][0]), "size", 0)] = grids._CACHE_FEAT[(id(o[0]), "size", 0)]
    assert obj_feature(b, objs_b[0], "size", 0) == 1
