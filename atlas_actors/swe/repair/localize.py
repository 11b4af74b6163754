"""Spectrum-based fault localisation for SWE instances, inside the container or sandbox.

:func:`localize` applies the instance's test patch (the eval script's own set-up), runs
its ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` tests twice with a small pytest plugin shipped into
the workspace (``incontainer/atlas_trace.py``, standard library only): once with per-test
line coverage (``sys.settrace``, only repository code outside the tests), once plain for
the outcomes and baseline durations the batch loop's timeouts scale from. It then ranks
lines by a spectrum formula over the tests that fail and pass:

* :func:`ochiai` (default) ``ef / sqrt((ef + nf) * (ef + ep))``,
* :func:`dstar` ``ef**star / (ep + nf)`` (``star=2``),
* :func:`tarantula` ``(ef/F) / (ef/F + ep/P)``,

where ``ef``/``ep`` count the failing/passing tests that execute the line and ``nf``/``np``
those that do not. Two refinements, both general:

* a condition (``if``/``elif``/``while``) is at least as suspicious as the first line of
  each block it chooses: a wrong decision and a wrong block have the same spectrum, and
  the decision is where a single-statement fix usually goes (``via`` names that line);
* ties are broken by the failing tests' tracebacks (a line nearer the innermost repository
  frame first), then by path and line number (deterministic).

With no coverage (``coverage=False``, or the tracer recorded nothing for the failing tests)
the ranking falls back to the failing tests' tracebacks: frames in repository files,
innermost first. Results are cached per instance (:class:`LocalizationCache`: instance id,
base commit, test patch and test lists; in memory and optionally on disk); the ranking is
recomputed from the cached spectra for any formula.

Example::

    loc = await localize(env)             # env: an SWEEnvironment after reset(task)
    for line in loc.lines[:5]:
        print(line.path, line.line, round(line.score, 3))
"""

from __future__ import annotations

import hashlib
import json
import math
import posixpath
import re
import shlex
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from atlas_actors.errors import ConfigError, SandboxError
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.repair.incontainer.atlas_trace import is_test_path, matches
from atlas_actors.swe.repair.workspace_driver import (
    Target,
    check_tests,
    driver,
    emit_file,
    exec_cpu_seconds,
    has_runtime,
    marker,
    read_emitted,
    resolve_instance,
    shipped,
    warm_cleanup,
    warm_setup,
    workspace_of,
)
from atlas_actors.swe.testrun import TestCommand, run_warm
from atlas_actors.swe.workspace import IO_DIR, SHIP_DIR, TESTBED

Formula = Literal["ochiai", "dstar", "tarantula"]
Method = Literal["spectrum", "traceback", "none"]
FAILING = ("failed", "error")
"""Outcomes that make a test failing in the spectrum (skips and xfails are left out)."""
PASSING = ("passed",)


# ------------------------------------------------------------------------ formulas


def ochiai(ef: int, ep: int, nf: int, np: int) -> float:
    """Ochiai: ``ef / sqrt((ef + nf) * (ef + ep))``; 0 when a factor is 0."""
    denom = math.sqrt((ef + nf) * (ef + ep))
    return ef / denom if denom else 0.0


def dstar(ef: int, ep: int, nf: int, np: int, star: int = 2) -> float:
    """DStar: ``ef**star / (ep + nf)``. When ``ep + nf`` is 0 (every failing test and no
    passing one runs the line) the denominator is taken as 0.5: a finite score above that
    of any line some passing test runs or some failing test misses."""
    if ef == 0:
        return 0.0
    denom = ep + nf
    return float(ef**star) / (denom if denom else 0.5)


def tarantula(ef: int, ep: int, nf: int, np: int) -> float:
    """Tarantula: ``(ef/F) / (ef/F + ep/P)`` with ``F = ef + nf``, ``P = ep + np``."""
    failed, passed = ef + nf, ep + np
    if ef == 0 or failed == 0:
        return 0.0
    f = ef / failed
    p = ep / passed if passed else 0.0
    return f / (f + p)


FORMULAS: dict[str, Callable[[int, int, int, int], float]] = {
    "ochiai": ochiai,
    "dstar": dstar,
    "tarantula": tarantula,
}


# -------------------------------------------------------------------------- models


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TestRecord(_Model):
    """One test's run: outcome, duration, and where it failed."""

    __test__ = False

    test: str
    outcome: str
    """passed, failed, error, skipped, xfailed, xpassed (pytest's outcomes)."""
    seconds: float = 0.0
    """Setup + call + teardown, as pytest measured it."""
    message: str = ""
    """The failure, ``Type: first line`` (empty when it passed); a record folded from
    several tests (a cut id) holds each distinct failure, one per line."""
    tb: list[tuple[str, int]] = Field(default_factory=list)
    """Repository frames of the failure (path, line), innermost first; tests excluded."""
    lines: dict[str, list[int]] = Field(default_factory=dict)
    """Lines it executed per repository file (coverage runs only)."""

    @property
    def failing(self) -> bool:
        return self.outcome in FAILING

    @property
    def passing(self) -> bool:
        return self.outcome in PASSING


class CoverageRun(_Model):
    """What one localisation run measured (cached; the ranking is computed from it)."""

    traced: list[TestRecord] = Field(default_factory=list)
    """The coverage run's tests (with ``lines``)."""
    plain: list[TestRecord] = Field(default_factory=list)
    """The run without tracing: outcomes and baseline durations."""
    branches: dict[str, list[tuple[int, list[int]]]] = Field(default_factory=dict)
    """Per file: (line of an if/elif/while, first line of each block it chooses)."""
    collect_seconds: float = 0.0
    """pytest's collection time in the plain run (the batch loop's collection timeout)."""
    seconds: float = 0.0
    """Wall time of the run (both passes)."""
    cpu_seconds: float = 0.0
    """CPU time of the run in the workspace (every process of the exec)."""
    coverage: bool = True
    notes: list[str] = Field(default_factory=list)


class SuspiciousLine(_Model):
    """A ranked line (path relative to the repository root, 1-based line)."""

    path: str
    line: int
    score: float
    failed: int = 0
    """Failing tests that execute it (ef); for traceback ranking, that show it."""
    passed: int = 0
    """Passing tests that execute it (ep)."""
    via: int | None = None
    """For a condition that took its score from a block it chooses: that block's line."""
    traceback_rank: int | None = None
    """Its best position in a failing test's traceback (0 = innermost repository frame)."""


class Localization(_Model):
    """Ranked suspicious lines, the tests' verdicts and durations, and how it was made."""

    instance_id: str
    base_commit: str
    method: Method
    """``spectrum`` (coverage), ``traceback`` (fallback) or ``none`` (nothing to rank)."""
    formula: str
    lines: list[SuspiciousLine]
    tests: list[TestRecord]
    """The plain run (no tracing): outcomes and baseline durations, without coverage."""
    failing: list[str]
    passing: list[str]
    missing: list[str] = Field(default_factory=list)
    """Selected tests that did not run (not found, or the run was cut short)."""
    collect_seconds: float = 0.0
    seconds: float = 0.0
    """Wall time of the measuring run (0 when served from the cache)."""
    cpu_seconds: float = 0.0
    """CPU time of the measuring run in the workspace (0 when served from the cache)."""
    cached: bool = False
    notes: list[str] = Field(default_factory=list)

    def top(self, n: int = 5) -> list[tuple[str, int]]:
        """The ``n`` best (path, line) pairs."""
        return [(x.path, x.line) for x in self.lines[:n]]

    def durations(self) -> dict[str, float]:
        """Baseline seconds per test (the batch loop scales its timeouts from them)."""
        return {t.test: t.seconds for t in self.tests}


# ------------------------------------------------------------------------- ranking


def by_selected(records: Sequence[TestRecord], selected: Sequence[str]) -> list[TestRecord]:
    """One record per selected test, named as selected, in the order of ``selected``.

    SWE-bench's ids are cut at the first whitespace (swebench's log parsers cut them
    there), so one selected id can stand for several parametrised tests: their records
    fold into one that fails when one of them fails (the first failure's traceback, every
    distinct failure message), passes when all pass, and takes the sum of their seconds,
    as the grading reads a cut id (it passes only when every test it stands for passes).
    A selected test no record matches is left out (it is ``missing``)."""
    wanted = dict.fromkeys(selected)
    groups: dict[str, list[TestRecord]] = {}
    for rec in records:
        key = matches(rec.test, wanted)
        if key is not None:
            groups.setdefault(key, []).append(rec)
    out = []
    for test in wanted:
        group = groups.get(test)
        if not group:
            continue
        if len(group) == 1:
            out.append(group[0].model_copy(update={"test": test}))
            continue
        first = next((r for r in group if r.failing), None)
        if first is None:
            first = next((r for r in group if not r.passing), group[0])
        out.append(
            first.model_copy(
                update={
                    "test": test,
                    "seconds": sum(r.seconds for r in group),
                    "message": "\n".join(
                        dict.fromkeys(r.message for r in group if r.failing and r.message)
                    )
                    or first.message,
                    "lines": {},
                }
            )
        )
    return out


def _tb_ranks(tests: Iterable[TestRecord]) -> dict[tuple[str, int], int]:
    best: dict[tuple[str, int], int] = {}
    for t in tests:
        if t.failing:
            for pos, (path, line) in enumerate(t.tb):
                key = (path, line)
                best[key] = min(best.get(key, pos), pos)
    return best


def rank_spectrum(
    tests: Sequence[TestRecord],
    formula: str = "ochiai",
    *,
    branches: Mapping[str, Sequence[tuple[int, Sequence[int]]]] | None = None,
    inherit: bool = True,
) -> list[SuspiciousLine]:
    """Rank the lines the failing tests execute by ``formula`` over ``tests``' coverage.

    ``branches`` (per file: condition line, first lines of its blocks) lets a condition
    take the score of a block it chooses (``inherit``). Ties: traceback position, then
    lines of a file the failing tests' tracebacks pass through, then path and line.
    """
    fn = FORMULAS.get(formula)
    if fn is None:
        raise ConfigError(f"formula={formula!r}: allowed values are {', '.join(FORMULAS)}")
    failing = [t for t in tests if t.failing]
    passing = [t for t in tests if t.passing]
    total_f, total_p = len(failing), len(passing)
    counts: dict[tuple[str, int], list[int]] = {}
    for slot, group in ((0, failing), (1, passing)):
        for t in group:
            for path, lines in t.lines.items():
                for line in set(lines):
                    counts.setdefault((path, line), [0, 0])[slot] += 1
    own = {
        key: fn(ef, ep, total_f - ef, total_p - ep) for key, (ef, ep) in counts.items() if ef > 0
    }
    score = dict(own)
    via: dict[tuple[str, int], int] = {}
    if inherit and branches:
        for path, items in branches.items():
            for cond, kids in items:
                key = (path, cond)
                if key not in own:
                    continue
                for kid in kids:
                    kid_score = own.get((path, kid), 0.0)
                    if kid_score > score[key]:
                        score[key] = kid_score
                        via[key] = kid
    tb = _tb_ranks(tests)
    inf = len(tb) + 10**9
    tb_files = {path for path, _ in tb}
    order = sorted(
        score,
        key=lambda k: (-round(score[k], 12), tb.get(k, inf), k[0] not in tb_files, k[0], k[1]),
    )
    return [
        SuspiciousLine(
            path=k[0],
            line=k[1],
            score=score[k],
            failed=counts[k][0],
            passed=counts[k][1],
            via=via.get(k),
            traceback_rank=tb.get(k),
        )
        for k in order
    ]


def rank_tracebacks(tests: Sequence[TestRecord]) -> list[SuspiciousLine]:
    """Rank the repository frames of the failing tests' tracebacks: score = the mean over
    failing tests of ``1 / (1 + position)`` (innermost = position 0); ties by path, line."""
    failing = [t for t in tests if t.failing]
    if not failing:
        return []
    score: dict[tuple[str, int], float] = {}
    shown: dict[tuple[str, int], int] = {}
    for t in failing:
        seen = set()
        for pos, (path, line) in enumerate(t.tb):
            key = (path, line)
            if key in seen:
                continue
            seen.add(key)
            score[key] = score.get(key, 0.0) + 1.0 / (1 + pos) / len(failing)
            shown[key] = shown.get(key, 0) + 1
    tb = _tb_ranks(failing)
    order = sorted(score, key=lambda k: (-round(score[k], 12), tb[k], k[0], k[1]))
    return [
        SuspiciousLine(path=k[0], line=k[1], score=score[k], failed=shown[k], traceback_rank=tb[k])
        for k in order
    ]


_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")


def tracebacks_from_log(log: str, root: str = TESTBED) -> dict[str, list[tuple[str, int]]]:
    """Repository frames (innermost first) per failure section of a pytest log run with
    ``--tb=native`` (the last resort when the plugin wrote nothing). Keys: section titles."""
    prefix = root.rstrip("/") + "/"
    out: dict[str, list[tuple[str, int]]] = {}
    current: str | None = None
    for line in log.splitlines():
        m = _SECTION.match(line.strip())
        if m:
            current = m.group(1)
            out.setdefault(current, [])
            continue
        f = _FRAME.match(line)
        if f and current is not None:
            path = f.group(1)
            if path.startswith(prefix):
                path = path[len(prefix) :]
            elif path.startswith("/"):
                continue
            if is_test_path(path):
                continue
            out[current].append((path, int(f.group(2))))
    return {k: list(reversed(v)) for k, v in out.items() if v}


def rank(run: CoverageRun, formula: str = "ochiai") -> tuple[Method, list[SuspiciousLine]]:
    """The ranking a run supports: the spectrum when the failing tests have coverage,
    else their tracebacks, else nothing."""
    if run.coverage and any(t.failing and t.lines for t in run.traced):
        return "spectrum", rank_spectrum(run.traced, formula, branches=run.branches)
    lines = rank_tracebacks(run.plain or run.traced)
    return ("traceback", lines) if lines else ("none", [])


# --------------------------------------------------------------------------- cache


class LocalizationCache:
    """Coverage runs by instance (id, base commit, test patch, tests): in memory, and as
    JSON files under ``directory`` when one is given."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory else None
        self.memory: dict[str, CoverageRun] = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(instance: SWEInstance, tests: Sequence[str], coverage: bool) -> str:
        data = json.dumps(
            [
                instance.instance_id,
                instance.base_commit,
                hashlib.sha256(instance.test_patch.encode()).hexdigest(),
                list(instance.FAIL_TO_PASS),
                list(instance.PASS_TO_PASS),
                list(tests),
                coverage,
            ]
        )
        return hashlib.sha256(data.encode()).hexdigest()[:32]

    def _path(self, key: str) -> Path | None:
        return self.directory / f"{key}.json" if self.directory else None

    async def get(self, key: str) -> CoverageRun | None:
        run = self.memory.get(key)
        path = self._path(key)
        if run is None and path is not None:
            apath = anyio.Path(path)
            if await apath.is_file():
                try:
                    run = CoverageRun.model_validate_json(await apath.read_text())
                except ValueError:
                    run = None
                if run is not None:
                    self.memory[key] = run
        if run is None:
            self.misses += 1
        else:
            self.hits += 1
        return run

    async def put(self, key: str, run: CoverageRun) -> None:
        self.memory[key] = run
        path = self._path(key)
        if path is not None:
            await anyio.Path(path.parent).mkdir(parents=True, exist_ok=True)
            tmp = anyio.Path(str(path) + ".tmp")
            await tmp.write_text(run.model_dump_json())
            await tmp.rename(path)

    def clear(self) -> None:
        self.memory.clear()


DEFAULT_CACHE = LocalizationCache()
"""The process-wide in-memory cache :func:`localize` uses unless told otherwise."""


# -------------------------------------------------------------------------- runner


def _records(
    text: str | None,
) -> tuple[list[TestRecord], dict[str, list[tuple[int, list[int]]]], float]:
    tests: list[TestRecord] = []
    branches: dict[str, list[tuple[int, list[int]]]] = {}
    collect = 0.0
    for line in (text or "").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut short by a killed run
        kind = rec.get("kind")
        if kind == "test":
            rec.pop("kind")
            tests.append(TestRecord.model_validate(rec))
        elif kind == "file":
            branches[rec["path"]] = [
                (int(c), [int(k) for k in kids]) for c, kids in rec["branches"]
            ]
        elif kind == "collect":
            collect = float(rec.get("seconds") or 0.0)
    return tests, branches, collect


def _from_log(log: str | None, tests: Sequence[str]) -> list[TestRecord]:
    """Failing tests with traceback frames, read from a ``--tb=native`` pytest log."""
    out = []
    for title, frames in tracebacks_from_log(log or "").items():
        name = next((t for t in tests if t.split("::")[-1] == title.split(".")[-1]), title)
        out.append(TestRecord(test=name, outcome="failed", tb=frames))
    return out


async def measure(
    target: Target,
    instance: SWEInstance | None = None,
    *,
    tests: Sequence[str] | None = None,
    coverage: bool = True,
    timeout_s: float = 900.0,
    test_timeout_s: float = 60.0,
    folders: Sequence[str] | None = None,
) -> CoverageRun:
    """Run the tests in the workspace (with coverage, then plain); the raw measurements.
    ``folders``: run every test under these folders instead of ``tests``."""
    inst = resolve_instance(target, instance)
    if folders:
        selected: list[str] = []
        sel: Selection = (list(folders), None)
    else:
        selected = check_tests(
            list(tests) if tests is not None else [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS],
            "tests",
        )
        if not selected:
            raise ConfigError("tests: nothing to run (FAIL_TO_PASS and PASS_TO_PASS are empty)")
        sel = (files_of(selected), selected)
    nonce = uuid.uuid4().hex[:12]
    limit = max(10, int(timeout_s) - 10)
    runs = [("cov", "1"), ("plain", "0")] if coverage else [("plain", "0")]
    started = time.monotonic()
    async with workspace_of(target) as ws:
        got = None
        if has_runtime(ws):
            got = await _measure_warm(ws, inst, nonce, sel, runs, limit, test_timeout_s)
        if got is None:
            got = await _measure_cold(ws, inst, nonce, sel, runs, limit, test_timeout_s,
                                      timeout_s)  # fmt: skip
    data, logs, codes, cpu, timed_out = got
    run = CoverageRun(coverage=coverage, seconds=time.monotonic() - started, cpu_seconds=cpu)
    if timed_out:
        run.notes.append(f"the run timed out after {timeout_s:g}s: results are partial")
    for tag, _ in runs:
        if codes.get(tag) in (124, 137):
            run.notes.append(f"the {tag} run was killed after {limit // len(runs)}s: partial")
    plain, _, collect = _records(data.get("plain"))
    run.plain, run.collect_seconds = plain, collect
    if coverage:
        traced, branches, _ = _records(data.get("cov"))
        run.traced, run.branches = traced, branches
        if not any(t.failing and t.lines for t in traced):
            run.notes.append("no coverage recorded for a failing test")
    if not plain and not run.traced:
        run.plain = _from_log(logs.get("plain"), selected)
        run.notes.append("the plugin recorded nothing: tracebacks read from the pytest log")
    return run


Selection = tuple[list[str], list[str] | None]
"""What pytest is given (test files or folders) and the tests the plugin keeps (None:
every test collected)."""

Measured = tuple[dict[str, str | None], dict[str, str | None], dict[str, int | None], float, bool]
"""Per run tag: the plugin's records and the pytest log; per tag the exit code; the CPU
seconds; whether the whole run timed out."""


def _trace_env(
    io: str, tag: str, flag: str, test_timeout_s: float, select: Sequence[str] | None
) -> dict[str, str]:
    env = {
        "ATLAS_TRACE_ROOT": TESTBED,
        "ATLAS_TRACE_TIMEOUT": f"{test_timeout_s:g}",
        "ATLAS_TRACE_OUT": f"{io}-{tag}.jsonl",
        "ATLAS_TRACE_COVERAGE": flag,
    }
    if select is not None:
        env["ATLAS_TRACE_SELECT"] = json.dumps(list(select))
    return env


def files_of(selected: Sequence[str]) -> list[str]:
    """The files of the selected tests, once each, in order: pytest is given the files and
    the plugin keeps the selected tests (an id cut at a space is no node id pytest knows)."""
    return list(dict.fromkeys(t.split("::", 1)[0] for t in selected))


_PYTEST_ARGS = ["-p", "atlas_trace", "-p", "no:cacheprovider", "-q", "-rA", "--tb=native"]


async def _measure_warm(
    ws: Any,
    inst: SWEInstance,
    nonce: str,
    sel: Selection,
    runs: list[tuple[str, str]],
    limit: int,
    test_timeout_s: float,
) -> Measured | None:
    """Both runs in the runtime's zygote, between the driver's halves; None when the
    tests cannot run there (then the cold path runs)."""
    io = f"{IO_DIR}/atlas-{nonce}"
    first, cmd = await warm_setup(ws, inst, nonce, timeout_s=300)
    if cmd is None:
        await warm_cleanup(ws, inst, nonce)
        return None
    logs: dict[str, str | None] = {}
    codes: dict[str, int | None] = {}
    cpu = first.cpu_seconds
    for tag, flag in runs:
        warm = await _warm_run(ws, cmd, io, tag, flag, sel, limit // len(runs),
                               test_timeout_s)  # fmt: skip
        if warm is None:
            await warm_cleanup(ws, inst, nonce)
            return None
        logs[tag] = warm.output
        codes[tag] = 137 if warm.timed_out else warm.exit_code
        cpu += warm.cpu_seconds
    found = await ws.read_files([f"{io}-{tag}.jsonl" for tag, _ in runs]) or {}
    data = {
        tag: (found.get(f"{io}-{tag}.jsonl") or b"").decode("utf-8", "replace") or None
        for tag, _ in runs
    }
    last = await warm_cleanup(ws, inst, nonce)
    return data, logs, codes, cpu + last.cpu_seconds, False


async def _warm_run(
    ws: Any,
    cmd: TestCommand,
    io: str,
    tag: str,
    flag: str,
    sel: Selection,
    timeout_s: float,
    test_timeout_s: float,
) -> Any:
    return await run_warm(
        ws,
        cmd,
        env=_trace_env(io, tag, flag, test_timeout_s, sel[1]),
        argv=[cmd.argv[0], *_PYTEST_ARGS, *sel[0]],
        path=[SHIP_DIR],
        timeout_s=timeout_s,
        output_limit_bytes=200_000,
    )


async def _measure_cold(
    ws: Any,
    inst: SWEInstance,
    nonce: str,
    sel: Selection,
    runs: list[tuple[str, str]],
    limit: int,
    test_timeout_s: float,
    timeout_s: float,
) -> Measured:
    """Both runs in one driver script, each a new interpreter."""
    io = f"{IO_DIR}/atlas-{nonce}"
    names = " ".join(shlex.quote(t) for t in sel[0])
    body = [f'export PYTHONPATH={SHIP_DIR}"${{PYTHONPATH:+:$PYTHONPATH}}"']
    for tag, flag in runs:
        trace_env = _trace_env(io, tag, flag, test_timeout_s, sel[1])
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in trace_env.items())
        body.append(
            f'{env} timeout -s KILL {limit // len(runs)} "$PY" -m pytest '
            f"{' '.join(_PYTEST_ARGS)} {names} >{io}-{tag}.log 2>&1"
        )
        body.append(f'echo "{marker(nonce)}rc-{tag} $?"')
        body.append(emit_file(nonce, f"data-{tag}", f"{io}-{tag}.jsonl"))
        body.append(emit_file(nonce, f"log-{tag}", f"{io}-{tag}.log", limit=200_000))
    script = driver(inst, nonce, "\n".join(body))
    files = {**(shipped() if not has_runtime(ws) else {}), f"{io}.sh": script.encode()}
    result = await ws.run_with_files(
        files, f"bash {io}.sh", timeout_s=timeout_s, output_limit_bytes=200_000_000
    )
    out = result.output
    err = re.search(re.escape(marker(nonce)) + r"error (.*)", out)
    if err:
        raise SandboxError(f"fault localisation of {inst.instance_id}: {err.group(1)}")
    codes: dict[str, int | None] = {}
    for tag, _ in runs:
        rc = re.search(re.escape(marker(nonce)) + f"rc-{tag} (\\d+)", out)
        codes[tag] = int(rc.group(1)) if rc else None
    data = {tag: read_emitted(out, nonce, f"data-{tag}") for tag, _ in runs}
    logs = {tag: read_emitted(out, nonce, f"log-{tag}") for tag, _ in runs}
    return data, logs, codes, exec_cpu_seconds(out, nonce) or 0.0, result.timed_out


async def localize(
    target: Target,
    instance: SWEInstance | None = None,
    *,
    formula: Formula = "ochiai",
    tests: Sequence[str] | None = None,
    coverage: bool = True,
    cache: LocalizationCache | None = DEFAULT_CACHE,
    timeout_s: float = 900.0,
    test_timeout_s: float = 60.0,
) -> Localization:
    """Rank suspicious lines of ``instance`` (default: the environment's) in ``target``.

    ``target`` is an :class:`~atlas_actors.swe.environment.SWEEnvironment` after
    ``reset`` (its agent state is kept) or a bare workspace. ``tests`` defaults to
    ``FAIL_TO_PASS + PASS_TO_PASS``; ``coverage=False`` ranks by tracebacks only.
    ``test_timeout_s`` stops a hanging test (it then counts as failing, with its
    coverage); ``timeout_s`` bounds the whole run.
    """
    if formula not in FORMULAS:
        raise ConfigError(f"formula={formula!r}: allowed values are {', '.join(FORMULAS)}")
    inst = resolve_instance(target, instance)
    selected = list(tests) if tests is not None else [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS]
    key = LocalizationCache.key(inst, selected, coverage)
    run = await cache.get(key) if cache is not None else None
    cached = run is not None
    if run is None:
        run = await measure(
            target,
            inst,
            tests=selected,
            coverage=coverage,
            timeout_s=timeout_s,
            test_timeout_s=test_timeout_s,
        )
        if cache is not None:
            await cache.put(key, run)
    return build(inst, run, formula, selected, cached=cached)


def build(
    instance: SWEInstance,
    run: CoverageRun,
    formula: str,
    selected: Sequence[str],
    *,
    cached: bool = False,
) -> Localization:
    """The :class:`Localization` of a measured run under ``formula``."""
    method, lines = rank(run, formula)
    plain = by_selected(
        run.plain or [t.model_copy(update={"lines": {}}) for t in run.traced], selected
    )
    ran = {t.test for t in plain}
    return Localization(
        instance_id=instance.instance_id,
        base_commit=instance.base_commit,
        method=method,
        formula=formula,
        lines=lines,
        tests=[t.model_copy(update={"lines": {}}) for t in plain],
        failing=[t.test for t in plain if t.failing],
        passing=[t.test for t in plain if t.passing],
        missing=[t for t in selected if t not in ran],
        collect_seconds=run.collect_seconds,
        seconds=0.0 if cached else run.seconds,
        cpu_seconds=0.0 if cached else run.cpu_seconds,
        cached=cached,
        notes=list(run.notes),
    )


class WiderSuite(_Model):
    """The tests beyond the graded ones that pass at the base commit: a patch that breaks
    one of them passes the graded tests but is wrong (green but wrong)."""

    folders: list[str]
    """The folders run: those of the graded tests' files."""
    passing: list[str]
    """Tests that passed at base and are not graded, in run order."""
    durations: dict[str, float] = Field(default_factory=dict)
    """Their seconds at base (the screen's timeouts scale from them)."""
    seconds: float = 0.0
    notes: list[str] = Field(default_factory=list)


def folders_of(tests: Sequence[str]) -> list[str]:
    """The folders of ``tests``' files, once each, in order (``.`` for the root)."""
    return list(dict.fromkeys(posixpath.dirname(f) or "." for f in files_of(tests)))


async def wider_suite(
    target: Target,
    instance: SWEInstance | None = None,
    *,
    timeout_s: float = 120.0,
    test_timeout_s: float = 20.0,
) -> WiderSuite:
    """Run every test in the folders of the graded tests' files at the base commit (after
    the eval script's set-up), without coverage, within ``timeout_s`` (a run cut short
    keeps the tests that finished), and list those that pass and are not graded."""
    inst = resolve_instance(target, instance)
    graded = dict.fromkeys([*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS])
    folders = folders_of(list(graded))
    run = await measure(
        target,
        inst,
        coverage=False,
        timeout_s=timeout_s,
        test_timeout_s=test_timeout_s,
        folders=folders,
    )
    kept = [t for t in run.plain if t.passing and matches(t.test, graded) is None]
    return WiderSuite(
        folders=folders,
        passing=[t.test for t in kept],
        durations={t.test: t.seconds for t in kept},
        seconds=run.seconds,
        notes=run.notes,
    )
