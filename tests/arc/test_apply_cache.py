"""The op-output cache a task's solver shares with its held-out views.

A view enumerates the same grids as the full task (one train input moves to the test
side), so much of what it applies has been applied already. The cache must answer those
applications without changing anything the search finds."""

from __future__ import annotations

from typing import Any

import numpy as np

from atlas_actors.arc.proposer import task_grids
from atlas_actors.arc.solver import ApplyCache, TaskSolver
from atlas_actors.types import Task

SLIPPED = "1b60fb0c"  # three train pairs, one with a slip (the held-out tests' task)


def _run(size: int) -> tuple[TaskSolver, list[Any]]:
    task = Task(id=SLIPPED, domain="arc", context={"arc_task_id": SLIPPED, "split": "train"})
    train, tests = task_grids(task)
    s = TaskSolver(train, tests, cache=ApplyCache(size))
    s.search(400, max_seconds=60.0)
    near = []
    for _ in range(3):
        near += s.held_out(300, max_seconds=60.0)
    return s, near


def test_views_reuse_the_full_search_and_find_the_same_programs() -> None:
    off, near_off = _run(0)
    on, near_on = _run(100_000)
    assert off.cache.hits == 0 and not off.cache.entries  # size 0: off
    assert all(v.cache is on.cache for v in on.views)  # one cache for the task
    assert on.cache.hits > 0
    # a view's first step applies the ops the full search applied to the same grids
    view_apps = on.held_out_applications()
    assert on.cache.hits > view_apps // 4, (on.cache.hits, view_apps)
    # nothing the search does changes
    assert on.applications == off.applications
    assert on.held_out_applications() == off.held_out_applications()
    assert [n.expr for n in on.nodes] == [n.expr for n in off.nodes]
    assert [n.expr for n in near_on] == [n.expr for n in near_off]
    for a, b in zip(on.nodes, off.nodes, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a.outs, b.outs, strict=True))


def test_a_failure_is_cached_and_the_cache_starts_over_when_full() -> None:
    c = ApplyCache(size=2)
    assert c.get((1, 1)) is False  # unknown
    c.put((1, 1), None)
    assert c.get((1, 1)) is None  # a cached failure
    g = np.zeros((2, 2), dtype=np.int64)
    out = (g, 7, b"\x02\x02" + bytes(4))
    c.put((1, 2), out)
    assert c.get((1, 2)) == out
    assert c.hits == 2
    c.put((1, 3), out)  # full: starts over with this one
    assert c.get((1, 1)) is False and c.get((1, 3)) == out
    assert len(c.entries) == 1


def test_an_op_that_fails_on_a_grid_fails_again_from_the_cache() -> None:
    x = np.array([[1, 2], [3, 4]])
    s = TaskSolver([(x, x)], [x], cache=ApplyCache())
    node = s.node_for("x")
    assert node is not None
    # upscale by 20 makes a 40x40 grid: not a valid ARC grid, so the application fails
    assert s._apply(node, "upscale", (20, 20)) is None
    before = s.cache.hits
    assert s._apply(node, "upscale", (20, 20)) is None
    assert s.cache.hits == before + 1  # answered by the cached failure
