"""run_in_bubblewrap against real bubblewrap: happy paths and containment."""

from __future__ import annotations

import os
import resource
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from atlas_actors.errors import BubblewrapNotFound, ConfigError
from atlas_actors.sandbox import SandboxResult, run_in_bubblewrap, run_in_bubblewrap_sync

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def script(attempt: Path, body: str, name: str = "main.py") -> Path:
    path = attempt / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture
def attempt(tmp_path: Path) -> Path:
    d = tmp_path / "attempt"
    d.mkdir()
    return d


async def test_happy_path_stdout_args_env_and_workdir(
    attempt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATLAS_HOST_SECRET", "hunter2")
    s = script(
        attempt,
        """
        import os, sys
        print("args", sys.argv[1:])
        print("cwd", os.getcwd())
        print("extra", os.environ.get("MY_VAR"))
        print("secret", os.environ.get("ATLAS_HOST_SECRET"))
        print("keys", sorted(os.environ))
        open("/work/result.txt", "w").write("written inside")
        sys.stderr.write("to stderr\\n")
        """,
    )
    res = await run_in_bubblewrap(attempt, s, args=["a", "b c"], extra_env={"MY_VAR": "42"})
    assert isinstance(res, SandboxResult)
    assert res.ok and res.exit_code == 0 and not res.timed_out, res.stderr
    assert "args ['a', 'b c']" in res.stdout
    assert "cwd /work" in res.stdout
    assert "extra 42" in res.stdout
    assert "secret None" in res.stdout  # the host environment is not passed in
    assert "to stderr" in res.stderr
    assert (attempt / "result.txt").read_text() == "written inside"
    # seed compatibility: dict-style access
    assert res["ok"] is True and res["exit_code"] == 0 and res["cmd"][0].endswith("bwrap")
    assert "--unshare-all" in res.cmd and "--clearenv" in res.cmd


async def test_exit_code_is_reported(attempt: Path) -> None:
    s = script(attempt, "import sys\nprint('bye')\nsys.exit(3)\n")
    res = await run_in_bubblewrap(attempt, s)
    assert not res.ok and res.exit_code == 3 and not res.timed_out
    assert res.stdout == "bye\n"


async def test_system_python_and_project_python(attempt: Path) -> None:
    s = script(attempt, "import sys\nprint(sys.version_info[:2])\n")
    for py in ("/usr/bin/python3", sys.executable):
        if not Path(py).exists():
            continue
        res = await run_in_bubblewrap(attempt, s, python_bin=py)
        assert res.ok, (py, res.stderr)
        assert res.stdout.startswith("(3,")
    # the default interpreter is the project's own, with numpy
    s2 = script(attempt, "import numpy\nprint(numpy.arange(3).sum())\n", "np.py")
    res = await run_in_bubblewrap(attempt, s2)
    assert res.ok and res.stdout.strip() == "3", res.stderr


async def test_infinite_loop_is_killed_near_its_timeout(attempt: Path) -> None:
    s = script(attempt, "while True:\n    pass\n")
    t = time.monotonic()
    res = await run_in_bubblewrap(attempt, s, timeout_s=1.0)
    elapsed = time.monotonic() - t
    assert res.timed_out and not res.ok and res.exit_code is None
    assert elapsed < 1.0 + 2.0


async def test_sleeping_child_processes_do_not_outlive_the_timeout(attempt: Path) -> None:
    marker = f"atlas-marker-{os.getpid()}-{time.time_ns()}"
    s = script(
        attempt,
        f"""
        import os, subprocess, time
        subprocess.Popen(["sleep", "300"], start_new_session=True)
        subprocess.Popen(["/bin/sh", "-c", "exec -a {marker} sleep 300"])
        time.sleep(300)
        """,
    )
    res = await run_in_bubblewrap(attempt, s, timeout_s=1.5)
    assert res.timed_out
    await anyio.sleep(0.3)
    leftovers = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).startswith(marker)]
    assert leftovers == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


async def test_fork_bomb_is_capped_by_max_processes(attempt: Path) -> None:
    s = script(
        attempt,
        """
        import os, time
        n = 0
        while n < 5000:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            n += 1
        print("forked", n)
        """,
    )
    t = time.monotonic()
    res = await run_in_bubblewrap(attempt, s, max_processes=20, timeout_s=20)
    assert time.monotonic() - t < 15  # the sleepers died with the sandbox
    assert res.ok, res.stderr
    forked = int(res.stdout.split()[-1])
    assert 0 < forked < 20


async def test_classic_fork_bomb_is_contained_and_killed(attempt: Path) -> None:
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    s = script(attempt, bomb)
    t = time.monotonic()
    res = await run_in_bubblewrap(attempt, s, max_processes=32, timeout_s=2.0)
    assert res.timed_out and not res.ok
    assert time.monotonic() - t < 2.0 + 3.0
    # the host can still start processes
    assert (await anyio.run_process(["true"])).returncode == 0


async def test_10gb_allocation_fails_inside(attempt: Path) -> None:
    s = script(attempt, "b = bytearray(10 * 1024**3)\nprint('allocated')\n")
    t = time.monotonic()
    res = await run_in_bubblewrap(attempt, s, memory_mb=512, timeout_s=20)
    assert not res.ok and "MemoryError" in res.stderr and "allocated" not in res.stdout
    assert time.monotonic() - t < 10


async def test_huge_file_is_stopped_by_the_file_size_limit(attempt: Path) -> None:
    s = script(
        attempt,
        """
        chunk = b"x" * (1 << 20)
        with open("/work/big.bin", "wb") as f:
            for _ in range(1024):
                f.write(chunk)
        print("wrote 1 GB")
        """,
    )
    res = await run_in_bubblewrap(attempt, s, max_file_bytes=4 * 1024 * 1024, timeout_s=20)
    assert not res.ok and "wrote 1 GB" not in res.stdout
    assert (attempt / "big.bin").stat().st_size <= 4 * 1024 * 1024


async def test_one_gigabyte_of_stdout_is_capped_to_its_tail(attempt: Path) -> None:
    s = script(
        attempt,
        """
        import sys
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.write(b"THE-END\\n")
        """,
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = await run_in_bubblewrap(attempt, s, stdout_limit_bytes=10_000, timeout_s=60)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert res.ok, res.stderr
    assert res.stdout_truncated
    assert res.stdout.startswith("...(truncated ") and "truncated" in res.stdout[:40]
    assert res.stdout.endswith("THE-END\n")
    assert len(res.stdout) < 10_000 + 100
    assert grown_kb < 64 * 1024  # the caller never held the gigabyte


async def test_file_outside_attempt_dir_is_invisible(tmp_path: Path, attempt: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    canary = outside / "canary.txt"
    canary.write_text("CANARY-7f3a")
    s = script(
        attempt,
        f"""
        import os
        for p in [{str(canary)!r}, "/proc/1/root{canary}", "/work/../outside/canary.txt"]:
            try:
                print("LEAKED", open(p).read())
            except OSError as e:
                print("blocked", type(e).__name__)
        for p in ["/usr/escape.txt", "/etc/escape.txt"]:
            try:
                open(p, "w").write("x")
                print("WROTE", p)
            except OSError as e:
                print("blocked", type(e).__name__)
        """,
    )
    res = await run_in_bubblewrap(attempt, s)
    assert res.ok, res.stderr
    assert "LEAKED" not in res.stdout and "CANARY" not in res.stdout
    assert "WROTE" not in res.stdout
    assert res.stdout.count("blocked") == 5
    assert canary.read_text() == "CANARY-7f3a"
    assert not Path("/usr/escape.txt").exists() and not Path("/etc/escape.txt").exists()


async def test_network_is_unshared(attempt: Path) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    s = script(
        attempt,
        f"""
        import socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2)
            print("CONNECTED")
        except OSError as e:
            print("blocked", type(e).__name__)
        """,
    )
    try:
        res = await run_in_bubblewrap(attempt, s, timeout_s=10)
        assert res.ok, res.stderr
        assert "CONNECTED" not in res.stdout and "blocked" in res.stdout
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


async def test_script_outside_attempt_dir_is_refused(tmp_path: Path, attempt: Path) -> None:
    outside = tmp_path / "evil.py"
    outside.write_text("print('hi')\n")
    with pytest.raises(ConfigError, match="outside attempt_dir"):
        await run_in_bubblewrap(attempt, outside)
    with pytest.raises(ValueError, match="outside attempt_dir"):
        await run_in_bubblewrap(attempt, "../evil.py")
    (attempt / "link.py").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside attempt_dir"):
        await run_in_bubblewrap(attempt, "link.py")


async def test_missing_bwrap_raises_with_install_hint(
    tmp_path: Path, attempt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = script(attempt, "print(1)\n")
    with pytest.raises(BubblewrapNotFound, match="apt-get install bubblewrap"):
        await run_in_bubblewrap(attempt, s, bwrap_path=str(tmp_path / "nope" / "bwrap"))
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(FileNotFoundError, match="bubblewrap"):
        await run_in_bubblewrap(attempt, s)


async def test_runs_concurrently_without_blocking_the_loop(attempt: Path) -> None:
    s = script(attempt, "import time\ntime.sleep(1.0)\nprint('done')\n")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.05)
            ticks += 1

    results: list[SandboxResult] = []
    t = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)

        async def one() -> None:
            results.append(await run_in_bubblewrap(attempt, s))

        async with anyio.create_task_group() as inner:
            for _ in range(3):
                inner.start_soon(one)
        tg.cancel_scope.cancel()
    assert [r.ok for r in results] == [True] * 3
    assert time.monotonic() - t < 2.8  # concurrent, not 3 s back to back
    assert ticks >= 10  # the event loop kept running


def test_sync_variant(attempt: Path) -> None:
    s = script(attempt, "print('sync ok', flush=True)\nwhile True: pass\n")
    t = time.monotonic()
    res = run_in_bubblewrap_sync(attempt, s, timeout_s=1.0)
    assert res.timed_out and res.stdout == "sync ok\n"
    assert time.monotonic() - t < 3.0


async def test_cancellation_kills_the_sandbox_and_cleans_up(attempt: Path) -> None:
    marker = f"atlas-cancel-{os.getpid()}-{time.time_ns()}"
    s = script(
        attempt,
        f"import subprocess\nsubprocess.run(['/bin/sh', '-c', 'exec -a {marker} sleep 300'])\n",
    )
    cgroups = Path("/sys/fs/cgroup/pids")
    mine = f"atlas_sandbox_{os.getpid()}_*"
    before = set(cgroups.glob(mine)) if cgroups.is_dir() else set()
    with anyio.move_on_after(1.0):
        await run_in_bubblewrap(attempt, s, timeout_s=60)
    # run_in_bubblewrap has returned: the sandbox's processes and its cgroup must be gone
    # now, not eventually (a short grace for /proc to drop the reaped entries).
    await anyio.sleep(0.3)
    leftovers = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).startswith(marker)]
    assert leftovers == []
    if cgroups.is_dir():  # (other tests' long-lived workers may hold theirs meanwhile)
        assert set(cgroups.glob(mine)) <= before


def test_a_cgroup_whose_owner_is_never_closed_is_removed_at_exit(tmp_path: Path) -> None:
    cgroups = Path("/sys/fs/cgroup/pids")
    code = (
        "import os\n"
        "from atlas_actors.sandbox import _bwrap\n"
        "leaked = _bwrap.PidsCgroup(16)\n"
        "print(os.getpid(), leaked.path is not None, flush=True)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    pid, made = out.stdout.split()
    if made != "True":
        pytest.skip("no writable pids cgroup here")
    assert not list(cgroups.glob(f"atlas_sandbox_{pid}_*"))
