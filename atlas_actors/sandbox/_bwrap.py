"""Shared plumbing for the bubblewrap sandboxes: the bwrap command line, the Python
install mounts, the resource limits and the per-sandbox pids cgroup.

Containment recipe (used by :func:`run_in_bubblewrap` and the :class:`ProgramRunner` worker):

* every namespace unshared (``--unshare-all``: user, pid, net, ipc, uts, cgroup), so the
  sandbox has no network at all (not even loopback to the host);
* inside uid/gid 65534 with no capabilities, ``--disable-userns`` (no nested namespaces),
  ``--die-with-parent`` and ``--new-session`` (no TIOCSTI on the caller's terminal);
* a fresh root with the system directories (``/usr``, ``/bin``, ``/lib*``, a few ``/etc``
  files) and the Python install read-only, the attempt directory read-write at ``/work``,
  size-capped tmpfs on ``/tmp`` and ``/dev/shm``, private ``/proc`` and minimal ``/dev``;
* a cleared environment;
* rlimits (address space, CPU time, file size, processes, no core files) set by a tiny
  launcher right before it execs bwrap, so they are inherited by everything inside;
* a pids cgroup per sandbox when the caller may create one (root with a writable ``pids``
  hierarchy). As root, the sandbox's uid maps to host uid 0, which the kernel exempts from
  ``RLIMIT_NPROC``; the cgroup's ``pids.max`` is what really stops a fork bomb there.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from atlas_actors.errors import BubblewrapNotFound, ConfigError

log = logging.getLogger(__name__)

SANDBOX_UID = 65534
INSTALL_HINT = (
    "bubblewrap (bwrap) is required for the sandbox: install it with "
    "`apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap` (Fedora)"
)
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
)
_RESERVED = ("/work", "/tmp", "/proc", "/dev", "/run/atlas")

# Runs on the host (``python -S -c``) right before bwrap: join the cgroup, set the
# rlimits (soft = hard, so nothing inside can raise them), exec bwrap.
_LAUNCHER = r"""
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
if cfg["cgroup_procs"]:
    try:
        with open(cfg["cgroup_procs"], "w") as f:
            f.write(str(os.getpid()))
    except OSError as e:
        sys.stderr.write("atlas sandbox: could not join cgroup: %s\n" % e)
for name, value in cfg["limits"].items():
    res = getattr(resource, name)
    try:
        resource.setrlimit(res, (value, value))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(res)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(res, (value, value if hard == resource.RLIM_INFINITY else hard))
os.execv(cfg["bwrap"], cfg["argv"])
"""


def find_bwrap(bwrap_path: str | None = None) -> str:
    """Absolute path of the bwrap executable, or :class:`BubblewrapNotFound`."""
    if bwrap_path is not None:
        p = Path(bwrap_path)
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
        raise BubblewrapNotFound(f"bwrap not found at bwrap_path={bwrap_path!r}; {INSTALL_HINT}")
    found = shutil.which("bwrap")
    if found is None:
        raise BubblewrapNotFound(f"bwrap not found on PATH; {INSTALL_HINT}")
    return found


def default_python() -> str:
    """The interpreter used when none is given: this process's own (it has numpy)."""
    exe = sys.executable
    if exe and Path(exe).is_file():
        return exe
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(cand).is_file():
            return cand
    raise ConfigError("no Python interpreter found for the sandbox; pass python_bin=")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class PythonMounts:
    """bwrap arguments exposing a Python install read-only, and its path inside."""

    args: list[str] = field(default_factory=list)
    inside_exe: str = ""


def python_mounts(python_bin: str) -> PythonMounts:
    """Read-only mounts for ``python_bin`` (system, pyenv/conda install, or a venv).

    A venv living under a reserved sandbox path (e.g. ``/work/...``) is mounted at
    ``/run/atlas/venv`` instead; a venv is relocatable for the interpreter itself.
    """
    exe = shutil.which(python_bin) if not os.path.isabs(python_bin) else python_bin
    if exe is None or not Path(exe).is_file():
        raise ConfigError(f"python_bin={python_bin!r} is not an existing interpreter")
    exe = os.path.abspath(exe)
    real = os.path.realpath(exe)
    out = PythonMounts(inside_exe=exe)
    roots: list[str] = []
    venv = Path(exe).parent.parent
    cfg = venv / "pyvenv.cfg"
    if cfg.is_file():
        home = ""
        for line in cfg.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                home = value.strip()
        if home:
            roots.append(os.path.dirname(os.path.realpath(home)))
        venv_s = str(venv)
        if any(_under(venv_s, r) for r in _RESERVED):
            out.args += ["--ro-bind", venv_s, "/run/atlas/venv"]
            out.inside_exe = "/run/atlas/venv/" + os.path.relpath(exe, venv_s)
        elif not _under(venv_s, "/usr"):
            roots.append(venv_s)
    roots.append(os.path.dirname(os.path.dirname(real)))
    seen: set[str] = set()
    for root in roots:
        if root in seen or _under(root, "/usr") or root in ("/", ""):
            continue
        seen.add(root)
        if any(_under(root, r) for r in _RESERVED):
            raise ConfigError(
                f"python_bin={python_bin!r}: its install {root} lies under a sandbox path "
                f"({', '.join(_RESERVED)}); use an interpreter installed elsewhere"
            )
        out.args += ["--ro-bind", root, root]
    if not (_under(exe, "/usr") or exe.startswith(("/bin/", "/lib"))) and out.inside_exe == exe:
        # exe may be a symlink outside every mounted root (e.g. /usr/local/bin -> ...)
        parent = os.path.dirname(exe)
        if parent not in seen and not any(_under(parent, r) for r in seen):
            if any(_under(parent, r) for r in _RESERVED):
                raise ConfigError(f"python_bin={python_bin!r} lies under a sandbox path")
            out.args += ["--ro-bind", parent, parent]
    return out


def system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for d in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in _ETC_FILES:
        args += ["--ro-bind-try", f, f]
    return args


def sandbox_env(python_inside: str, extra_env: dict[str, str] | None) -> dict[str, str]:
    env = {
        "PATH": f"{os.path.dirname(python_inside)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for key, value in (extra_env or {}).items():
        if not key or "=" in key or "\0" in key or "\0" in str(value):
            raise ConfigError(f"extra_env: invalid variable name or value for {key!r}")
        env[key] = str(value)
    return env


def bwrap_argv(
    bwrap: str,
    *,
    python: PythonMounts,
    env: dict[str, str],
    command: list[str],
    work_dir: str | None,
    tmpfs_mb: int,
    extra_ro: Sequence[tuple[str, str]] = (),
) -> list[str]:
    argv = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid", str(SANDBOX_UID),
        "--gid", str(SANDBOX_UID),
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        "--hostname", "sandbox",
        *system_mounts(),
        *python.args,
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp",
        "--size", str(16 * 1024 * 1024), "--tmpfs", "/dev/shm",
    ]  # fmt: skip
    for src, dst in extra_ro:
        argv += ["--ro-bind", src, dst]
    if work_dir is not None:
        argv += ["--bind", work_dir, "/work"]
    argv += ["--remount-ro", "/"]  # the sandbox's own root tmpfs: nothing writable but /work, /tmp
    if work_dir is not None:
        argv += ["--chdir", "/work"]
    else:
        argv += ["--chdir", "/tmp"]
    argv.append("--clearenv")
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += ["--", *command]
    return argv


# ----------------------------------------------------------------------------- cgroups


def _pids_cgroup_base() -> Path | None:
    """A directory where we may create child pids cgroups (v1 or v2), or None."""
    if os.geteuid() != 0:
        return None
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        mnt, fstype, opts = fields[4], rfields[0], rfields[2].split(",")
        if fstype == "cgroup" and "pids" in opts:
            rel = next((c.split(":", 2)[2] for c in own if ":pids:" in c), "/")
            base = Path(mnt) / rel.lstrip("/")
            if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
                return base
        if fstype == "cgroup2":
            rel = next((c.split(":", 2)[2] for c in own if c.startswith("0::")), "/")
            base = Path(mnt) / rel.lstrip("/")
            try:
                if "pids" not in (base / "cgroup.controllers").read_text().split():
                    continue
                if "pids" not in (base / "cgroup.subtree_control").read_text().split():
                    (base / "cgroup.subtree_control").write_text("+pids")
                return base
            except OSError:
                continue
    return None


_CGROUP_BASE: list[Path | None] = []
# Every cgroup this process created and has not removed yet: a sandbox whose owner is
# never closed (a long-lived worker, say) must not leave an empty cgroup behind when the
# process exits.
_LIVE_CGROUPS: set[PidsCgroup] = set()


@atexit.register
def _remove_live_cgroups() -> None:
    for cgroup in list(_LIVE_CGROUPS):
        cgroup.remove(wait_s=2.0)


class PidsCgroup:
    """A throw-away pids cgroup capping the processes of one sandbox."""

    def __init__(self, max_processes: int) -> None:
        self.path: Path | None = None
        if not _CGROUP_BASE:
            _CGROUP_BASE.append(_pids_cgroup_base())
            if _CGROUP_BASE[0] is None and os.geteuid() == 0:
                log.warning(
                    "no writable pids cgroup: as root the sandbox's process cap "
                    "(RLIMIT_NPROC) is not enforced; fork bombs are only bounded by timeouts"
                )
        base = _CGROUP_BASE[0]
        if base is None:
            return
        path = base / f"atlas_sandbox_{os.getpid()}_{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_processes))
            self.path = path
            _LIVE_CGROUPS.add(self)
        except OSError as exc:
            log.warning("could not create pids cgroup %s: %s", path, exc)
            with contextlib.suppress(OSError):
                path.rmdir()

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs") if self.path else ""

    def kill_all(self) -> None:
        if self.path is None:
            return
        for _ in range(50):
            try:
                pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
            except OSError:
                return
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self, wait_s: float = 10.0) -> None:
        """Kill what is left in the cgroup and remove it.

        The kernel refuses ``rmdir`` while a killed process still counts against the group
        (on a loaded host a ``SIGKILL``-ed tree can take a second or more to be torn down),
        so this kills again and retries for up to ``wait_s`` seconds before giving up with
        a warning.
        """
        if self.path is None:
            return
        deadline = time.monotonic() + wait_s
        while True:
            self.kill_all()
            try:
                self.path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if time.monotonic() >= deadline:
                    log.warning("could not remove pids cgroup %s: %s", self.path, exc)
                    break
                time.sleep(0.02)
        self.path = None
        _LIVE_CGROUPS.discard(self)


def launcher_argv(
    bwrap: str, argv: list[str], limits: dict[str, int], cgroup: PidsCgroup
) -> list[str]:
    cfg = {"bwrap": bwrap, "argv": argv, "limits": limits, "cgroup_procs": cgroup.procs_file}
    return [sys.executable, "-S", "-I", "-c", _LAUNCHER, json.dumps(cfg)]


def rlimits(
    *,
    memory_mb: int | None,
    cpu_time_s: float | None,
    max_processes: int | None,
    max_file_bytes: int | None,
) -> dict[str, int]:
    limits: dict[str, int] = {"RLIMIT_CORE": 0}
    if memory_mb is not None:
        limits["RLIMIT_AS"] = int(memory_mb) * 1024 * 1024
    if cpu_time_s is not None:
        limits["RLIMIT_CPU"] = max(1, int(-(-cpu_time_s // 1)))
    if max_processes is not None:
        nproc = int(max_processes)
        if os.geteuid() != 0:
            # RLIMIT_NPROC counts every process of the real uid, not just ours.
            nproc += _count_own_processes()
        limits["RLIMIT_NPROC"] = nproc
    if max_file_bytes is not None:
        limits["RLIMIT_FSIZE"] = int(max_file_bytes)
    return limits


def _count_own_processes() -> int:
    uid, n = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    n += 1
    return n
