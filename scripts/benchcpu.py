"""CPU accounting for benchmarks on a shared machine (imported by the ``bench_*`` scripts).

:class:`CpuMeter` puts the benchmark's process into a cgroup of its own (cgroup v1
``cpuacct``, as root), so everything it starts (Ray's processes and workers, and the
containers created with :attr:`CpuMeter.cgroup_parent` as their cgroup parent) is counted
there and other people's work is not. Beside it: the Docker daemons' CPU time (dockerd,
containerd and the shims: shared with anyone else using the engine, so an upper bound of
ours) and the whole machine's busy time (``/proc/stat``), which says how busy the machine
was. Without a writable cgroup v1 ``cpuacct`` hierarchy, ``ours`` is None and only the
machine-wide figures remain.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
_DAEMONS = ("dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2", "runc")
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class CpuSample:
    ours: float | None
    """CPU seconds of this process tree and its containers (None: no cgroup)."""
    daemons: float
    """CPU seconds of the Docker daemons (shared with other users of the engine)."""
    machine: float
    """Busy CPU seconds of the whole machine."""
    by_pid: dict[int, float] = field(default_factory=dict)
    """The daemons' seconds per process (a shim ends with its container)."""

    def __sub__(self, other: CpuSample) -> CpuSample:
        """The CPU spent between ``other`` and this sample. For the daemons: what each
        process running at both spent in between, and all of what a process started in
        between spent (a process that ended in between is lost: a shim of a container
        removed meanwhile, someone else's)."""
        ours = None if self.ours is None or other.ours is None else self.ours - other.ours
        daemons = sum(t - other.by_pid.get(pid, 0.0) for pid, t in self.by_pid.items())
        return CpuSample(ours, daemons, self.machine - other.machine)


def machine_busy_seconds() -> float:
    """CPU seconds the machine has spent busy (not idle or waiting on I/O) since boot."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / _TICK


def daemon_seconds() -> float:
    """CPU seconds of the Docker daemons now running, with their reaped children."""
    return sum(daemon_seconds_by_pid().values())


def daemon_seconds_by_pid() -> dict[int, float]:
    """:func:`daemon_seconds` per process."""
    out: dict[int, float] = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            if comm not in _DAEMONS:
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(pid)] = sum(int(x) for x in fields[11:15]) / _TICK
    return out


class CpuMeter:
    """This process in a cgroup of its own (see the module doc); a context manager."""

    def __init__(self, name: str = "atlas-bench") -> None:
        self.name = f"{name}-{os.getpid()}"
        self.path: Path | None = None
        self.note = ""

    @property
    def cgroup_parent(self) -> str | None:
        """The value to create containers with (Docker's ``--cgroup-parent``)."""
        return f"/{self.name}" if self.path is not None else None

    def __enter__(self) -> CpuMeter:
        path = _CPUACCT / self.name
        try:
            path.mkdir()
            (path / "cgroup.procs").write_text(str(os.getpid()))
            self.path = path
        except OSError as e:
            self.note = f"no cgroup of our own ({e}): only machine-wide CPU figures"
            with contextlib.suppress(OSError):
                path.rmdir()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            (_CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
        # Docker made the same folder in every controller for the containers' cgroups.
        for controller in Path("/sys/fs/cgroup").iterdir():
            with contextlib.suppress(OSError):
                (controller / self.name).rmdir()

    def sample(self) -> CpuSample:
        ours = None
        if self.path is not None:
            ours = int((self.path / "cpuacct.usage").read_text()) / 1e9
        by_pid = daemon_seconds_by_pid()
        return CpuSample(ours, sum(by_pid.values()), machine_busy_seconds(), by_pid)
