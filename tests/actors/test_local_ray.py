"""The local Ray an engine starts (in a process of its own, not the test session's Ray):
it outlives the worker thread that started it, and a SIGKILLed driver leaves none of its
processes behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

OUTLIVES = textwrap.dedent(
    """
    import time

    import anyio
    import anyio._backends._asyncio as backend
    import ray

    from atlas_actors.actors.engine import RayRuntime
    from atlas_actors.config import EngineConfig

    # worker threads of anyio's pool end after this long idle (10 s by default)
    backend.WorkerThread.MAX_IDLE_TIME = 0.05


    @ray.remote
    def one():
        return 1


    async def main():
        runtime = RayRuntime(EngineConfig())
        await anyio.to_thread.run_sync(runtime.start)  # on a worker thread of the pool
        for _ in range(3):  # several idle workers, then calls that prune the idle ones
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(anyio.to_thread.run_sync, time.sleep, 0.1)
            await anyio.sleep(0.3)
            await anyio.to_thread.run_sync(time.sleep, 0)
        try:
            print("answer", ray.get(one.remote(), timeout=30), flush=True)
        finally:
            await anyio.to_thread.run_sync(runtime.shutdown)


    anyio.run(main)
    """
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def test_a_local_ray_outlives_the_thread_that_started_it(tmp_path: Path) -> None:
    """Ray's processes get SIGKILL when the thread that started them ends; an engine
    started from a worker thread of a pool (which ends once idle) keeps its Ray."""
    script = tmp_path / "outlives.py"
    script.write_text(OUTLIVES)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, env=_env()
    )
    assert "answer 1" in out.stdout, out.stderr[-3000:]


def _in_session(sid: int) -> dict[int, str]:
    """The processes of session ``sid`` (the process tree of a command started with
    ``start_new_session``), with their command lines."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[3]) == sid:  # state, ppid, pgrp, session
            found[int(entry.name)] = cmdline[:200]
    return found


def test_a_killed_driver_leaves_no_ray_process_and_resumes(tmp_path: Path) -> None:
    """``atlas-actors arc`` on a local Ray, SIGKILLed mid-run: no process of its Ray
    (agents included) outlives it for long, and ``--resume`` then finishes the run."""
    out = tmp_path / "run"
    ids = ["3c9b0459", "67a3c6ac", "0d3d703e", "a416b8f3"]
    exe = Path(sys.executable).with_name("atlas-actors")
    cmd = [str(exe), "arc", "--split", "train", "--ids", ",".join(ids), "--out", str(out)]
    cmd += ["--time-limit", "10", "--seed", "0", "--quiet", "--no-memory", "--workers", "2"]
    with open(tmp_path / "driver.log", "wb") as log:
        driver = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True, env=_env())
    results = out / "results.jsonl"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and driver.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 1:
            break
        time.sleep(0.1)
    assert driver.poll() is None, "the run ended before it could be killed"
    assert any("DashboardAgent" in c for c in _in_session(driver.pid).values())
    os.kill(driver.pid, signal.SIGKILL)  # the driver only, as the OOM killer would
    driver.wait()
    left = _in_session(driver.pid)
    grace = time.monotonic() + 30  # Ray's agents alone would wait a minute or more
    while left and time.monotonic() < grace:
        time.sleep(0.5)
        left = _in_session(driver.pid)
    assert left == {}, f"left behind: {left}"
    subprocess.run(
        [*cmd, "--resume"],
        check=True,
        timeout=300,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == sorted(ids)
