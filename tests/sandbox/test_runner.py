"""ProgramRunner against real bubblewrap: results, containment, recovery."""

from __future__ import annotations

import os
import pickle
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import numpy as np
import pytest

from atlas_actors.errors import ConfigError
from atlas_actors.sandbox import ProgramRunner, RunResult

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

FLIP = "def transform(grid):\n    return [row[::-1] for row in grid]\n"
G1 = [[1, 2, 3], [4, 5, 6]]
G2 = [[0, 9], [9, 0]]
TIMEOUT = 1.0


@pytest.fixture(scope="module")
def runner() -> Iterator[ProgramRunner]:
    with ProgramRunner(timeout_s=TIMEOUT, memory_mb=512) as r:
        yield r


def assert_healthy(runner: ProgramRunner) -> None:
    """The runner still answers correctly after whatever the previous job did."""
    res = runner.run_sync(FLIP, [G1])
    assert res == [RunResult(ok=True, output=[[3, 2, 1], [6, 5, 4]], error="")]


def test_happy_path_lists_and_numpy(runner: ProgramRunner) -> None:
    res = runner.run_sync(FLIP, [G1, np.array(G2)])
    assert [r.output for r in res] == [[[3, 2, 1], [6, 5, 4]], [[9, 0], [0, 9]]]
    assert all(r.ok and r.error == "" for r in res)
    src = "import numpy as np\ndef transform(grid):\n    return np.rot90(np.array(grid)) * 1.0\n"
    [r] = runner.run_sync(src, [G1])
    assert r.ok and r.output == [[3, 6], [2, 5], [1, 4]]
    assert pickle.loads(pickle.dumps(r)) == r


def test_program_errors_are_readable(runner: ProgramRunner) -> None:
    [r] = runner.run_sync("def transform(grid):\n    x = []\n    return x[5]\n", [G1])
    assert not r.ok and r.output is None
    assert r.error == "IndexError: list index out of range (line 3)"
    [r] = runner.run_sync("def transform(grid:\n    pass\n", [G1])
    assert not r.ok and r.error.startswith("SyntaxError") and "(line 1)" in r.error
    res = runner.run_sync("x = 1\n", [G1, G2])
    assert [r.error for r in res] == ["the program defines no callable transform(grid)"] * 2


@pytest.mark.parametrize(
    ("ret", "why"),
    [
        ("5", "got int"),
        ("[]", "0 rows"),
        ("[[1, 2], [3]]", "ragged"),
        ("[[10]]", "colours are 0-9"),
        ("[[1.5]]", "not an integer"),
        ("[['a']]", "is str"),
        ("[[1]] * 31", "31 rows"),
        ("__import__('numpy').zeros((2, 2, 2))", "3-D"),
    ],
)
def test_non_grid_returns(runner: ProgramRunner, ret: str, why: str) -> None:
    [r] = runner.run_sync(f"def transform(grid):\n    return {ret}\n", [G1])
    assert not r.ok and r.output is None
    assert r.error.startswith("not a grid") and why in r.error


def test_timeout_is_per_grid_and_other_grids_still_run(runner: ProgramRunner) -> None:
    src = "def transform(grid):\n    while grid[0][0] == 1:\n        pass\n    return grid\n"
    t = time.monotonic()
    res = runner.run_sync(src, [G2, G1, G2])
    elapsed = time.monotonic() - t
    assert [r.ok for r in res] == [True, False, True]
    assert res[1].error == "timeout"
    assert res[2].output == G2
    assert elapsed < TIMEOUT + 2.0
    assert_healthy(runner)


def test_fork_bomb_is_contained(runner: ProgramRunner) -> None:
    src = (
        "import os\n"
        "def transform(grid):\n"
        "    while True:\n"
        "        try:\n"
        "            os.fork()\n"
        "        except OSError:\n"
        "            pass\n"
    )
    t = time.monotonic()
    [r] = runner.run_sync(src, [G1])
    assert not r.ok and r.error == "timeout"
    assert time.monotonic() - t < TIMEOUT + 3.0
    worker = runner._worker
    assert worker is not None
    if worker.cgroup.path is not None:  # the pids cgroup really capped the bomb
        peak_file = worker.cgroup.path / "pids.peak"
        if peak_file.exists():
            assert int(peak_file.read_text()) <= runner.max_processes
        assert int((worker.cgroup.path / "pids.current").read_text()) <= 3  # swept
    assert (anyio.run(anyio.run_process, ["true"])).returncode == 0  # host can still fork
    assert_healthy(runner)


def test_huge_allocations_hit_the_memory_limit(runner: ProgramRunner) -> None:
    [r] = runner.run_sync("def transform(grid):\n    b = bytearray(10 * 1024**3)\n", [G1])
    assert not r.ok and r.error.startswith("memory limit exceeded") and "(line 2)" in r.error
    src = "import numpy as np\ndef transform(grid):\n    return np.ones((10**5, 10**5))\n"
    [r] = runner.run_sync(src, [G1])
    assert not r.ok and "memory limit exceeded" in r.error
    assert_healthy(runner)


def test_crashes_exits_and_killing_the_worker(runner: ProgramRunner) -> None:
    [r] = runner.run_sync("import os\ndef transform(grid):\n    os._exit(7)\n", [G1])
    assert not r.ok and "exit code 7" in r.error
    [r] = runner.run_sync("import ctypes\ndef transform(grid):\n    ctypes.string_at(0)\n", [G1])
    assert not r.ok and "SIGSEGV" in r.error
    restarts = runner.restarts
    res = runner.run_sync("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", [G1, G2])
    assert [r.ok for r in res] == [False, False] and "killed the sandbox worker" in res[0].error
    assert_healthy(runner)  # a fresh worker, transparently
    assert runner.restarts == restarts + 1


def test_stdout_garbage_does_not_confuse_the_protocol(runner: ProgramRunner) -> None:
    src = (
        "import os, sys\n"
        "def transform(grid):\n"
        "    print('\\x00\\x00\\x01garbage' * 100000)\n"
        "    os.write(1, b'\\xff' * 100000)\n"
        "    sys.stderr.write('noise' * 100000)\n"
        "    return grid\n"
    )
    res = runner.run_sync(src, [G1, G2])
    assert [r.output for r in res] == [G1, G2]


def test_canary_outside_is_unreadable_and_network_is_off(
    runner: ProgramRunner, tmp_path: Path
) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("7")
    src = f"def transform(grid):\n    return [[int(open({str(canary)!r}).read())]]\n"
    [r] = runner.run_sync(src, [G1])
    assert not r.ok and r.output is None and "FileNotFoundError" in r.error
    src = "def transform(grid):\n    return [[len(open('/etc/shadow').read()) % 10]]\n"
    [r] = runner.run_sync(src, [G1])
    assert not r.ok

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.3)
    port = listener.getsockname()[1]
    src = (
        "import socket\n"
        "def transform(grid):\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=0.5)\n"
        "    return [[1]]\n"
    )
    try:
        [r] = runner.run_sync(src, [G1])
        assert not r.ok and ("ConnectionRefused" in r.error or "OSError" in r.error), r.error
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


def test_state_does_not_leak_between_jobs(runner: ProgramRunner) -> None:
    poison = (
        "import builtins, numpy\n"
        "builtins.sorted = None\n"
        "numpy.array = None\n"
        "open('/tmp/poison', 'w').write('x')\n"
        "def transform(grid):\n    return grid\n"
    )
    assert runner.run_sync(poison, [G1])[0].ok
    check = (
        "import builtins, os, numpy\n"
        "def transform(grid):\n"
        "    assert builtins.sorted is not None and numpy.array is not None\n"
        "    assert not os.path.exists('/tmp/poison')\n"
        "    return grid\n"
    )
    assert runner.run_sync(check, [G1])[0].ok


def test_threads_share_one_runner(runner: ProgramRunner) -> None:
    outs: list[list[RunResult]] = []

    def work(k: int) -> None:
        for _ in range(5):
            outs.append(runner.run_sync(f"def transform(g):\n    return [[{k}]]\n", [G1]))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outs) == 20 and all(o[0].ok for o in outs)
    assert sorted(o[0].output[0][0] for o in outs if o[0].output) == sorted([0, 1, 2, 3] * 5)


async def test_async_api_and_context_manager() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.02)
            ticks += 1

    async with ProgramRunner(timeout_s=0.5) as r, anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        res = await r.run("def transform(g):\n    while True: pass\n", [G1])
        ok = await r.run(FLIP, [G2])
        tg.cancel_scope.cancel()
    assert res[0].error == "timeout" and ok[0].output == [[9, 0], [0, 9]]
    assert ticks >= 10  # the loop kept running during the 0.5 s timeout


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="timeout_s"):
        ProgramRunner(timeout_s=0)
    with pytest.raises(ConfigError, match="memory_mb"):
        ProgramRunner(memory_mb=10)
    with pytest.raises(ConfigError, match="python_bin"):
        ProgramRunner(python_bin="/nonexistent/python")
    with ProgramRunner() as r:
        with pytest.raises(ConfigError, match="grids"):
            r.run_sync(FLIP, [[["a"]]])
        assert r.run_sync(FLIP, []) == []


def test_worker_refuses_to_run_outside_the_sandbox() -> None:
    """Guard: the worker's kill(-1) sweep must never run outside its own PID namespace."""
    import subprocess
    import sys

    worker = Path(__import__("atlas_actors.sandbox.runner").__file__).parent / "sandbox"
    proc = subprocess.run(
        [sys.executable, str(worker / "_runner_worker.py"), "--in-bwrap-pid-namespace"],
        input=b"",
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2 and b"refusing" in proc.stderr
    assert os.getpid() > 0  # still alive


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no system python3")
def test_system_python_without_numpy_works() -> None:
    with ProgramRunner(python_bin="/usr/bin/python3") as r:
        assert r.run_sync(FLIP, [G1])[0].output == [[3, 2, 1], [6, 5, 4]]
