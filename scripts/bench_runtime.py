#!/usr/bin/env python
"""What the in-container runtime costs and saves (medians of ``--runs``).

    export DOCKER_HOST=$(scripts/docker-up)
    python scripts/bench_runtime.py [--part channel tests] [--runs 5]
        [--instances FILE | --root DIR] [--names textkit ...] [--json out.json]

1. **channel**: the runtime's two candidate channels against the exec they replace, in a
   container of the base image: round trips of a small (200-byte) and a 1 MB message
   through an attached ``docker exec``'s stdin/stdout and through a unix socket in a
   bind-mounted folder; and a ``docker exec`` of ``true``. Wall milliseconds and CPU
   milliseconds per round trip: this process, the Docker daemons (dockerd, containerd, the
   shims; shared with other users of the engine) and the container's cgroup.
2. **tests**: per instance, its eval script's test command run warm (a child of the
   runtime's zygote), warm from the prepared configuration (a child of the process that
   keeps the command's pytest configuration and conftests loaded, as verify runs it) and
   cold (a new interpreter through bash), in turn, on the gold patch's tree: wall seconds
   as the host sees them and the ratios (target: warm at most half of cold), the
   zygote's start once; then whole verifies with ``warm_tests`` on and off (gold patch).

Instances: the bundled examples by default; ``--root DIR`` a folder in their format
(``tests/data/runtime``), ``--instances FILE`` any instances file ``swe`` takes (e.g. the
``instances.jsonl`` ``atlas-actors swe-build`` writes for real SWE-bench instances).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shlex
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchcpu import daemon_seconds  # noqa: E402
from benchkit import add_json_flag, print_table, write_json  # noqa: E402

from atlas_actors.sandbox.docker import ContainerLimits, DockerClient  # noqa: E402
from atlas_actors.swe.environment import (  # noqa: E402
    _EVAL_HEADER,
    SWEEnvironment,
    _split_eval,
)
from atlas_actors.swe.instances import (  # noqa: E402
    EXAMPLES_DIR,
    SWEInstance,
    load_example_instances,
    load_instances,
)
from atlas_actors.swe.testrun import capture_lines, captured_command, run_warm  # noqa: E402
from atlas_actors.swe.workspace import IO_DIR, reset_command  # noqa: E402

ECHO = """
import os, socket, sys
def serve(r, w):
    buf = b""
    while True:
        while b"\\n" not in buf:
            d = r(65536)
            if not d: return
            buf += d
        line, buf = buf.split(b"\\n", 1)
        n = int(line)
        while len(buf) < n:
            d = r(max(65536, n - len(buf)))
            if not d: return
            buf += d
        body, buf = buf[:n], buf[n:]
        w(b"%d\\n" % n + body)
if sys.argv[1] == "stdio":
    fin, fout = os.dup(0), os.dup(1)
    def wall(data):
        v = memoryview(data)
        while v:
            v = v[os.write(fout, v):]
    serve(lambda n: os.read(fin, n), wall)
else:
    s = socket.socket(socket.AF_UNIX)
    s.bind(sys.argv[2]); s.listen(1)
    c, _ = s.accept()
    serve(c.recv, c.sendall)
"""


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def container_cpu(cid: str) -> float:
    path = Path(f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage")
    return int(path.read_text()) / 1e9 if path.exists() else float("nan")


async def _per_call(
    label: str, call: Callable[[], Awaitable[None]], count: int, cid: str, runs: int
) -> dict[str, float]:
    """Milliseconds per call (median of ``runs`` rounds of ``count`` calls): wall, and CPU
    of this process, of the Docker daemons and of the container."""

    def sample() -> list[float]:
        return [time.perf_counter(), own_cpu(), daemon_seconds(), container_cpu(cid)]

    rows = []
    for _ in range(runs):
        before = sample()
        for _ in range(count):
            await call()
        rows.append([(y - x) * 1e3 / count for x, y in zip(before, sample(), strict=True)])
    wall, host, daemons, cont = (med([r[i] for r in rows]) for i in range(4))
    print(
        f"{label}: {wall:7.3f} ms wall, CPU ms: host {host:.3f} daemons {daemons:.3f} "
        f"container {cont:.3f}",
        flush=True,
    )
    return {
        "wall_ms": wall,
        "host_cpu_ms": host,
        "daemon_cpu_ms": daemons,
        "container_cpu_ms": cont,
    }


async def bench_channel(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="atlas-chan-") as mnt:
        limits = ContainerLimits(extra_host_config={"Binds": [f"{mnt}:/atlas_chan"]})
        async with (
            DockerClient() as docker,
            docker.container("atlas-swe-base:bookworm", limits=limits) as c,
        ):
            await c.put_files("/atlas_chan", {"echo.py": ECHO})
            for mode in ("stdio", "socket"):
                if mode == "stdio":
                    stream = await c.attach(["python3", "/atlas_chan/echo.py", "stdio"])
                    buf = bytearray()

                    async def send(data: bytes, stream: Any = stream) -> None:
                        await stream.write_in(data)

                    async def recv(stream: Any = stream, buf: bytearray = buf) -> bytes:
                        while True:
                            if b"\n" in buf:
                                i = buf.index(b"\n")
                                n = int(buf[:i])
                                if len(buf) >= i + 1 + n:
                                    body = bytes(buf[i + 1 : i + 1 + n])
                                    del buf[: i + 1 + n]
                                    return body
                            msg = await stream.read_out()
                            buf += msg.data
                else:
                    sock = f"{mnt}/s.sock"
                    api = c._api_container
                    ex = await api.exec(
                        ["python3", "/atlas_chan/echo.py", "socket", "/atlas_chan/s.sock"]
                    )
                    await ex.start(detach=True)
                    with anyio.fail_after(30):
                        while not await anyio.Path(sock).exists():  # noqa: ASYNC110
                            await anyio.sleep(0.01)
                    reader, writer = await asyncio.open_unix_connection(sock)

                    async def send(data: bytes, writer: Any = writer) -> None:
                        writer.write(data)
                        await writer.drain()

                    async def recv(reader: Any = reader) -> bytes:
                        n = int(await reader.readline())
                        data: bytes = await reader.readexactly(n)
                        return data

                for label, size, count in (("small", 200, 2000), ("1MB", 1_000_000, 50)):
                    payload = b"%d\n" % size + b"x" * size

                    async def round_trip(payload: bytes = payload) -> None:
                        await send(payload)
                        await recv()

                    out[f"{mode}_{label}"] = await _per_call(
                        f"{mode:6} {label:5} round trip", round_trip, count, c.id, args.runs
                    )
                if mode == "stdio":
                    await stream.close()
                else:
                    writer.close()

            async def exec_true() -> None:
                await c.exec(["true"], timeout_s=30)

            out["exec_true"] = await _per_call("docker exec true", exec_true, 40, c.id, args.runs)
    return out


async def bench_tests(inst: SWEInstance, args: argparse.Namespace) -> dict[str, Any]:
    from swebench.harness.utils import make_test_spec

    row: dict[str, Any] = {"instance": inst.instance_id}
    split = _split_eval(list(make_test_spec(inst.swebench_dict()).eval_script_list))
    if split is None:
        print(f"{inst.instance_id}: its test command is not a plain pytest one: skipped")
        return row
    pre, line, _ = split
    async with SWEEnvironment(eval_timeout_s=args.timeout) as env:
        await env.reset(inst.to_task())
        ws: Any = env.workspace
        nonce = uuid.uuid4().hex[:12]
        script = "\n".join(
            [*_EVAL_HEADER, reset_command(inst.base_commit), f"git apply {IO_DIR}/gold.diff",
             *pre[:-1], capture_lines(nonce, line)]
        )  # fmt: skip
        r = await ws.run_with_files(
            {f"{IO_DIR}/gold.diff": inst.patch.encode(), f"{IO_DIR}/b.sh": script.encode()},
            f"bash {IO_DIR}/b.sh",
            timeout_s=300,
        )
        cmd = await captured_command(ws, nonce)
        if cmd is None:
            print(f"{inst.instance_id}: could not capture the test command: {r.output[-500:]}")
            return row
        cold_cmd = f"cd {shlex.quote(cmd.cwd)} && {line}"
        t = time.perf_counter()
        first = await run_warm(ws, cmd, timeout_s=args.timeout, output_limit_bytes=100_000)
        row["zygote_start_and_first_run_s"] = time.perf_counter() - t
        assert first is not None, "no zygote"
        warm_s, cold_s, warm_cpu, cold_cpu, prep_s, prep_cpu = [], [], [], [], [], []
        for _ in range(args.runs):
            t = time.perf_counter()
            w = await run_warm(ws, cmd, timeout_s=args.timeout, output_limit_bytes=100_000)
            warm_s.append(time.perf_counter() - t)
            assert w is not None and w.exit_code is not None
            warm_cpu.append(w.cpu_seconds)
            t = time.perf_counter()
            p = await run_warm(
                ws, cmd, timeout_s=args.timeout, output_limit_bytes=100_000, prepare=True
            )
            prep_s.append(time.perf_counter() - t)
            assert p is not None and p.exit_code == w.exit_code
            prep_cpu.append(p.cpu_seconds)
            t = time.perf_counter()
            c = await ws.run(cold_cmd, timeout_s=args.timeout, env=cmd.env)
            cold_s.append(time.perf_counter() - t)
            cold_cpu.append(c.cpu_seconds)
            assert c.exit_code == w.exit_code, (c.exit_code, w.exit_code, c.output[-2000:])
        row.update(
            warm_s=med(warm_s), cold_s=med(cold_s), ratio=med(warm_s) / med(cold_s),
            warm_cpu_s=med(warm_cpu), cold_cpu_s=med(cold_cpu), prepared_s=med(prep_s),
            prepared_cpu_s=med(prep_cpu), prepared_ratio=med(prep_s) / med(cold_s),
        )  # fmt: skip
        print(
            f"{inst.instance_id}: test run cold {med(cold_s):.3f} s ({med(cold_cpu):.3f} CPU-s),"
            f" warm {med(warm_s):.3f} s ({med(warm_cpu):.3f} CPU-s, x{row['ratio']:.2f}), warm "
            f"from the prepared configuration {med(prep_s):.3f} s ({med(prep_cpu):.3f} CPU-s, "
            f"x{row['prepared_ratio']:.2f}); zygote start + first run "
            f"{row['zygote_start_and_first_run_s']:.2f} s",
            flush=True,
        )
        for warm in (True, False):
            env.warm_tests = warm
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                outcome = await env.verify(inst.patch)
                times.append(time.perf_counter() - t)
            row[f"verify_{'warm' if warm else 'cold'}_s"] = med(times)
            row[f"verify_{'warm' if warm else 'cold'}_resolved"] = outcome.success
        print(
            f"  verify (gold): warm {row['verify_warm_s']:.3f} s, cold {row['verify_cold_s']:.3f} s"
            f" (resolved {row['verify_warm_resolved']} / {row['verify_cold_resolved']})",
            flush=True,
        )
    return row


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"load_average": os.getloadavg()[0]}
    print(f"load average {out['load_average']:.1f} on {os.cpu_count()} cores", flush=True)
    if "channel" in args.part:
        out["channel"] = await bench_channel(args)
    if "tests" in args.part:
        if args.instances:
            instances = load_instances(args.instances)
            if args.names:
                instances = [i for i in instances if any(n in i.instance_id for n in args.names)]
        else:
            instances = load_example_instances(args.names or None, root=args.root)
        out["tests"] = [await bench_tests(i, args) for i in instances]
        print_table(
            ["instance", "cold s", "warm s", "warm/cold", "prepared/cold"],
            [
                [r.get("instance"), r.get("cold_s"), r.get("warm_s"), r.get("ratio"),
                 r.get("prepared_ratio")]
                for r in out["tests"]
            ],
            title="test-run wall time (medians)",
        )  # fmt: skip
        for key, what in (("ratio", "warm"), ("prepared_ratio", "warm, prepared")):
            ratios = [r[key] for r in out["tests"] if key in r]
            if ratios:
                print(
                    f"{what}/cold test-run wall time: median {med(ratios):.2f}, "
                    f"worst {max(ratios):.2f}"
                )
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", nargs="+", choices=["channel", "tests"], default=["channel", "tests"])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--instances", default=None, help="an instances file (default: examples)")
    p.add_argument("--root", type=Path, default=EXAMPLES_DIR, help="examples-format folder")
    p.add_argument("--names", nargs="*", default=None, help="only these (substrings of ids)")
    p.add_argument("--timeout", type=float, default=600.0, help="per test run, seconds")
    add_json_flag(p)
    args = p.parse_args()
    out = anyio.run(main_async, args)
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
