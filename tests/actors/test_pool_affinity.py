"""Sticky dispatch in the actor pool: a call for a task whose environment an actor holds
waits for that actor rather than start the environment on another one that a waiting
call wants, and an idle actor nobody waits for takes the call (work stealing).

The pool is driven with stand-in actor handles whose methods the test releases one by
one, so the order of events is fixed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from atlas_actors.actors.pool import ActorPool

pytestmark = pytest.mark.anyio


class _Handle:
    """A stand-in for a Ray actor handle: ``handle.work.remote(name)`` runs until the
    test releases ``name``; ``info`` answers at once."""

    def __init__(self, index: int, gates: dict[str, anyio.Event], served: dict[str, int]):
        self.index = index
        self.gates = gates
        self.served = served

    def __getattr__(self, method: str) -> Any:
        handle = self

        class _Method:
            @staticmethod
            def remote(*args: Any) -> Any:
                return handle._run(method, *args)

        return _Method()

    async def _run(self, method: str, *args: Any) -> Any:
        if method == "info":
            return {"index": self.index}
        name = str(args[0])
        self.served[name] = self.index
        await self.gates.setdefault(name, anyio.Event()).wait()
        return self.index


async def _started(pool: ActorPool, served: dict[str, int], name: str) -> None:
    with anyio.fail_after(5):
        while name not in served:
            await anyio.sleep(0.005)


async def test_a_sticky_call_waits_for_its_actor_and_an_idle_unwanted_one_steals() -> None:
    gates: dict[str, anyio.Event] = {}
    served: dict[str, int] = {}
    pool = ActorPool(lambda i: _Handle(i, gates, served), 2, max_in_flight=1)
    await pool.start()
    got: dict[str, int] = {}

    async def call(name: str, prefer: set[int]) -> None:
        got[name] = await pool.call("work", name, prefer=prefer, sticky=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "x", {0})  # holds actor 0
        await _started(pool, served, "x")
        tg.start_soon(call, "z", {1})  # holds actor 1
        await _started(pool, served, "z")
        tg.start_soon(call, "y", {0})  # its environment is on actor 0: waits
        tg.start_soon(call, "w", {1})  # waits for actor 1
        await anyio.sleep(0.05)
        gates.setdefault("z", anyio.Event()).set()  # actor 1 frees: w's, not y's
        await _started(pool, served, "w")
        await anyio.sleep(0.05)
        assert served["w"] == 1 and "y" not in served
        gates["x"] = gates.get("x") or anyio.Event()
        gates["x"].set()  # actor 0 frees: y runs where its environment is
        await _started(pool, served, "y")
        assert served["y"] == 0
        # actor 1 is busy (w) and nobody waits for actor 0 once y is done: a call that
        # wants actor 1 steals the idle actor 0 instead of waiting
        gates.setdefault("y", anyio.Event()).set()
        with anyio.fail_after(5):
            while "y" not in got:
                await anyio.sleep(0.005)
        tg.start_soon(call, "v", {1})
        await _started(pool, served, "v")
        assert served["v"] == 0
        for name in ("w", "v"):
            gates.setdefault(name, anyio.Event()).set()
    assert got == {"x": 0, "z": 1, "y": 0, "w": 1, "v": 0}


async def test_without_sticky_a_call_takes_any_free_actor() -> None:
    gates: dict[str, anyio.Event] = {}
    served: dict[str, int] = {}
    pool = ActorPool(lambda i: _Handle(i, gates, served), 2, max_in_flight=1)
    await pool.start()
    async with anyio.create_task_group() as tg:
        tg.start_soon(pool.call, "work", "x")
        await _started(pool, served, "x")
        tg.start_soon(pool.call, "work", "w")  # actor 1, free
        await _started(pool, served, "w")
        tg.start_soon(lambda: pool.call("work", "y", prefer={0}))  # waits for any actor
        await anyio.sleep(0.05)
        gates.setdefault("w", anyio.Event()).set()
        await _started(pool, served, "y")
        assert served["y"] == 1  # not sticky: the free actor 1, though it prefers 0
        for name in ("x", "y"):
            gates.setdefault(name, anyio.Event()).set()
