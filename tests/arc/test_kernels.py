"""The compiled grid kernels (``atlas_actors.arc._kernels``) against the pure functions
they replace: the same results on random grids, the pure ones in exported programs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import Program, grids
from atlas_actors.arc.grids import DIRS
from atlas_actors.arc.ops import gravity, rays


def _pure(fn: Any) -> Any:
    pure = getattr(fn, "__pure__", None)
    assert pure is not None, f"{fn.__name__} is not the compiled version"
    return pure


def _random_grid(rng: np.random.Generator, hi: int = 31, colours: int = 6) -> np.ndarray[Any, Any]:
    h, w = (int(v) for v in rng.integers(1, hi, 2))
    dense = rng.random((h, w)) < rng.random()
    return np.where(dense, rng.integers(0, colours, (h, w)), 0).astype(np.int64)


def test_the_kernels_are_built_where_the_suite_runs() -> None:
    # pip builds them with the package; a silent build failure would leave the pure
    # versions in use and the search slower, with every other test still passing
    assert grids.COMPILED
    assert grids.KERNELS is not None and grids.KERNELS.VERSION == grids.KERNELS_VERSION


def test_components_match_the_pure_labelling_with_boxes() -> None:
    rng = np.random.default_rng(0)
    pure = _pure(grids._label)
    for _ in range(600):
        g = _random_grid(rng).astype(rng.choice([np.int64, np.int32, np.int8]))
        for conn in (4, 8):
            for by_color in (0, 1):
                bg = int(rng.integers(0, 3))
                want = pure(g, conn, by_color, bg)
                want_boxes = [grids.obj_box(o) for o in want]
                got = grids._label(g, conn, by_color, bg)
                assert [grids.obj_box(o) for o in got] == want_boxes
                assert len(got) == len(want)
                for (ys, xs), (wys, wxs) in zip(got, want, strict=True):
                    assert ys.dtype == wys.dtype == np.int64
                    assert ys.tolist() == wys.tolist() and xs.tolist() == wxs.tolist()
    # a bool grid takes the compiled path too; a float one falls back to the pure one
    mask = np.array([[True, False, True], [True, False, False]])
    assert [o[0].tolist() for o in grids._label(mask, 4, 0, 0)] == [[0, 1], [0]]
    assert len(grids._label(mask.astype(float), 4, 0, 0)) == 2


def test_the_returned_cell_arrays_are_writable_copies_per_call() -> None:
    g = np.array([[1, 0, 2]])
    (ys, _xs), _ = grids._label(g, 4, 1, 0)
    ys[0] = 5  # a caller may scribble on its arrays without harming the next call
    assert grids._label(g, 4, 1, 0)[0][0].tolist() == [0]


def test_enclosed_matches_the_pure_flood() -> None:
    rng = np.random.default_rng(1)
    pure = _pure(grids.enclosed)
    for _ in range(2000):
        h, w = (int(v) for v in rng.integers(1, 31, 2))
        free = rng.random((h, w)) < rng.random()
        got = grids.enclosed(free)
        assert got.dtype == np.bool_ and (got == pure(free)).all()
    ring = np.ones((5, 5), dtype=bool)
    ring[1:4, 1:4] = False
    ring[2, 2] = True
    assert grids.enclosed(ring).nonzero() == (np.array([2]), np.array([2]))


def test_ray_paint_matches_the_pure_scans_in_every_direction() -> None:
    rng = np.random.default_rng(2)
    pure = _pure(rays._ray_paint)
    for _ in range(500):
        g = _random_grid(rng, colours=4)
        c, bg = int(rng.integers(0, 4)), int(rng.integers(0, 2))
        src, free = g == c, g == bg
        for d, dirs in DIRS.items():
            for stop in (0, 1):
                got = rays._ray_paint(src, free, dirs, stop)
                assert (got == pure(src, free, dirs, stop)).all(), (d, stop)


def test_fall_matches_the_pure_object_gravity_and_its_limit() -> None:
    rng = np.random.default_rng(3)
    pure = _pure(gravity._fall)
    for _ in range(3000):
        g = _random_grid(rng, hi=20, colours=4)
        conn, bg = int(rng.choice([4, 8])), int(rng.integers(0, 2))
        a, b = g.copy(), g.copy()
        pure(a, conn, bg)
        gravity._fall(b, conn, bg)
        assert (a == b).all()
    # more than 60 objects: both refuse and leave the grid as it was
    dots = np.zeros((30, 30), dtype=np.int64)
    dots[::2, ::2] = 1
    for fall in (pure, gravity._fall):
        a = dots.copy()
        with pytest.raises(ValueError, match="too many objects"):
            fall(a, 4, 0)
        assert (a == dots).all()


def test_exported_programs_carry_the_pure_functions() -> None:
    # a standalone script needs only numpy: it defines the pure versions under the
    # names the ops call, and gives the same grids as the compiled ones in process
    p = Program.from_json(
        ["rays", ["object_gravity", ["fill_enclosed", "x", 4, 0], "down", 8, 0], 2, "all", 1, 0]
    )
    src = p.to_python()
    assert "KERNELS" not in src and "_compiled" not in src and "__pure__" not in src
    assert "def _label(" in src and "def _fall(" in src and "def _ray_paint(" in src
    ns: dict[str, Any] = {}
    exec(src, ns)
    rng = np.random.default_rng(4)
    for _ in range(200):
        g = _random_grid(rng, hi=15, colours=5)
        try:
            want = p(g)
        except ValueError:
            continue
        assert np.asarray(ns["transform"](g)).tolist() == want.tolist()


def test_compiled_gives_the_pure_function_when_the_kernels_are_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def pure() -> int:
        return 1

    def fast() -> int:
        return 1

    monkeypatch.setattr(grids, "COMPILED", False)
    assert grids.compiled(pure, fast) is pure
    monkeypatch.setattr(grids, "COMPILED", True)
    assert grids.compiled(pure, fast) is fast and vars(fast)["__pure__"] is pure
