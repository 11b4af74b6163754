"""The search's memos and fast checks keep the answers of the slow paths they replace."""

from __future__ import annotations

import numpy as np
import pytest

from atlas_actors.arc import prims, proposer
from atlas_actors.arc.solver import _valid


@pytest.mark.parametrize(
    ("grid", "ok"),
    [
        (np.array([[0, 9], [3, 4]]), True),
        (np.array([[1, -1]]), False),  # negative: huge once read as unsigned
        (np.array([[10]]), False),
        (np.array([[-128]], dtype=np.int8), False),
        (np.array([[7]], dtype=np.uint8), True),
        (np.array([[1, 2], [3, -4]]).T, False),  # a non-contiguous view
        (np.array([[1, 2], [3, 4]])[:, ::-1], True),
        (np.zeros((31, 2), dtype=np.int64), False),
        (np.zeros((0, 2), dtype=np.int64), False),
        (np.zeros((2, 2)), False),  # floats are not grids
        ([[1]], False),
    ],
)
def test_valid_grids(grid: object, ok: bool) -> None:
    assert _valid(grid) is ok


def test_selection_memo_returns_the_same_pick_and_the_same_refusal() -> None:
    g = np.array([[1, 1, 0, 2], [1, 1, 0, 0], [0, 0, 0, 3]])
    objs = prims.components(g, 4, 1, 0)
    for _ in range(2):  # second round answers from the memo
        ys, xs = prims._select(g, objs, "largest", 0)
        cells = sorted(zip(ys.tolist(), xs.tolist(), strict=True))
        assert cells == [(0, 0), (0, 1), (1, 0), (1, 1)]
        with pytest.raises(ValueError):
            prims._select(g, objs, "symmetric", 0)  # all three are symmetric: no pick


def test_selection_follows_the_grid_not_an_earlier_pick() -> None:
    a = np.array([[1, 1, 0, 2], [1, 1, 0, 0]])
    b = np.array([[1, 0, 2, 2], [0, 0, 2, 2]])
    for _ in range(2):
        assert prims.crop_object(a, "largest", 4, 1, 0, 1).tolist() == [[1, 1], [1, 1]]
        assert prims.crop_object(b, "largest", 4, 1, 0, 1).tolist() == [[2, 2], [2, 2]]
        assert prims.crop_object(b, "smallest", 4, 1, 0, 1).tolist() == [[1]]


def test_program_keys_are_canonical_memoised_and_take_unhashable_programs() -> None:
    expr = ("recolor", ("rigid", "x", 1), ((1, 2),))
    assert proposer._key(expr) == '["recolor",["rigid","x",1],[[1,2]]]'
    assert proposer._key(expr) is proposer._key(expr)  # the memo's answer
    assert proposer._key(["recolor", ["rigid", "x", 1], [[1, 2]]]) == proposer._key(expr)
    assert proposer._key(("no_such_op", "x")) == "invalid"


def _rays_by_steps(g: np.ndarray, c: int, dirs: str, stop: int, bg: int) -> np.ndarray:
    """Reference: walk every ray cell by cell."""
    h, w = g.shape
    out = g.copy()
    for y, x in zip(*np.nonzero(g == c), strict=True):
        for dy, dx in prims._DIRS[dirs]:
            ny, nx = y + dy, x + dx
            while 0 <= ny < h and 0 <= nx < w:
                if g[ny, nx] == bg:
                    out[ny, nx] = c
                elif stop:
                    break
                ny, nx = ny + dy, nx + dx
    return out


def _gravity_by_steps(g: np.ndarray, conn: int, bg: int) -> np.ndarray:
    """Reference: drop each object (lowest first) one row at a time."""
    a = g.copy()
    h = a.shape[0]
    objs = sorted(prims.components(a, conn, 0, bg), key=lambda o: -int(o[0].max()))
    for ys, xs in objs:
        vals = a[ys, xs].copy()
        a[ys, xs] = bg
        step = 0
        while ys.max() + step + 1 < h and (a[ys + step + 1, xs] == bg).all():
            step += 1
        a[ys + step, xs] = vals
    return a


def test_rays_and_object_gravity_match_step_by_step_references() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(1, 11, 2))
        g = np.where(rng.random((h, w)) < 0.3, rng.integers(1, 4, (h, w)), 0)
        if int((g == 1).sum()) <= 40:
            for dirs in prims._DIRS:
                for stop in (0, 1):
                    want = _rays_by_steps(g, 1, dirs, stop, 0)
                    assert (prims.rays(g, 1, dirs, stop, 0) == want).all(), (g, dirs, stop)
        if len(prims.components(g, 8, 0, 0)) <= 60:
            for conn in (4, 8):
                got = prims.object_gravity(g, "down", conn, 0)
                assert (got == _gravity_by_steps(g, conn, 0)).all(), (g, conn)


def test_a_memo_entry_under_a_reused_id_is_not_trusted() -> None:
    # an id can be reused once its list is gone; plant one list's entry under another
    # list's id, as reuse would, and the selection is still computed for the new list
    a = np.array([[1, 1, 0, 2]])
    b = np.array([[1, 0, 2, 2]])
    objs_a, objs_b = prims.components(a, 4, 1, 0), prims.components(b, 4, 1, 0)
    assert prims._pick(a, objs_a, "largest", 0) == 0
    prims._CACHE_FEAT[(id(objs_b), "select", "largest", 0)] = prims._CACHE_FEAT[
        (id(objs_a), "select", "largest", 0)
    ]
    assert prims._pick(b, objs_b, "largest", 0) == 1
    o = objs_a[0]
    assert prims.obj_feature(a, o, "size", 0) == 2
    prims._CACHE_FEAT[(id(objs_b[0][0]), "size", 0)] = prims._CACHE_FEAT[(id(o[0]), "size", 0)]
    assert prims.obj_feature(b, objs_b[0], "size", 0) == 1
