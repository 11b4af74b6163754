"""The fast inner loop of offline repair: many candidate patches per container exec.

:class:`BatchEvaluator` ships a worker (``incontainer/atlas_batch.py``) into the workspace
and runs it once per batch, after the eval script's own set-up (the test patch applied).
The worker imports pytest once, prepares a pytest session for the selected tests, and for
each candidate: applies it (whole-file replacements or a diff), checks the changed files
compile, forks a child that imports the code under test fresh and runs the **failing
tests first**, stopping at the **first test that does not pass**, with a **timeout per
test scaled from the base run's time** (:class:`~atlas_actors.swe.repair.timeouts.
TimeoutPolicy`: ``max(min_timeout_s, timeout_factor * reference)``, the reference being
the test's own baseline time, or the slowest ended test's for one that hung), then puts
the original files back. A test that hangs, forks without end or fills the disk costs
that candidate a timeout (or a crash verdict: file-size limit), never the batch: the
child runs in its own process group under rlimits, the worker kills what it leaves, and
the host bounds the whole exec as well.

A candidate that passes every selected test is only a *candidate*: confirm it with the
full eval and swebench grading (:meth:`BatchEvaluator.confirm`, which calls
``SWEEnvironment.verify`` with the candidate's diff).

Example::

    loc = await localize(env)
    evaluator = BatchEvaluator()
    results = await evaluator.evaluate(env, None, [{"pkg/mod.py": new_text}, diff_text],
                                       baseline=loc)
    outcomes = await evaluator.confirm(env, results)   # verify() for those that passed
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from atlas_actors.errors import ConfigError, SandboxError
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.repair.localize import Localization
from atlas_actors.swe.repair.timeouts import TimeoutPolicy
from atlas_actors.swe.repair.workspace_driver import (
    PYCACHE_DIR,
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
from atlas_actors.swe.workspace import IO_DIR, SHIP_DIR, TESTBED
from atlas_actors.types import Outcome

if TYPE_CHECKING:  # the environment runs this loop: it imports this package
    from atlas_actors.swe.environment import SWEEnvironment

TestOutcome = Literal[
    "passed",
    "failed",
    "error",
    "skipped",
    "xfailed",
    "xpassed",
    "timeout",
    "crashed",
    "not_found",
]
PASSING = ("passed", "xfailed")
"""Verdicts that count as a pass (as swebench grades: PASSED, XFAIL)."""
_GAP_S = 2.0  # the worker's allowance between tests (see atlas_batch._GAP_S)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CandidatePatch(_Model):
    """One candidate: whole-file replacements, or a unified diff against the base commit."""

    files: dict[str, str | None] = Field(default_factory=dict)
    """Path relative to the repository root -> its new text (None deletes the file)."""
    diff: str = ""
    """A unified (git) diff against the base commit."""
    label: str = ""
    """Free text carried into the result (an operator name, a node id)."""

    @model_validator(mode="after")
    def _one_kind(self) -> CandidatePatch:
        if self.files and self.diff.strip():
            raise ValueError("a candidate has either 'files' or 'diff', not both")
        return self


CandidateLike = CandidatePatch | str | Mapping[str, str | None]
"""A candidate as :class:`CandidatePatch`, a diff (str) or ``{path: new text}``."""


def as_candidate(c: CandidateLike) -> CandidatePatch:
    """Normalise a candidate (ConfigError for anything else)."""
    if isinstance(c, CandidatePatch):
        return c
    if isinstance(c, str):
        return CandidatePatch(diff=c)
    if isinstance(c, Mapping):
        return CandidatePatch(files=dict(c))
    raise ConfigError(
        f"candidates: expected a CandidatePatch, a diff (str) or {{path: text}}, "
        f"got {type(c).__name__}"
    )


class TestVerdict(_Model):
    """What one selected test did under one candidate."""

    __test__ = False

    test: str
    outcome: TestOutcome
    seconds: float = 0.0
    message: str = ""
    """The failure's ``Type: first line`` (empty when it passed)."""
    line: int = 0
    """Where in the test's own file the failure passed last (the failing assertion or
    call of the test; 0 when no frame of that file is on the traceback)."""

    @property
    def passed(self) -> bool:
        return self.outcome in PASSING


class CandidateResult(_Model):
    """The verdict on one candidate (in the order the candidates were given)."""

    index: int
    label: str = ""
    applied: bool
    compiled: bool
    """Every changed Python file compiles (False: no test ran)."""
    error: str = ""
    """Why it did not apply or compile, or what went wrong outside the tests."""
    tests: list[TestVerdict] = Field(default_factory=list)
    """The tests that ran, in order; with fail-fast the last one is the first failure."""
    not_run: list[str] = Field(default_factory=list)
    passed: bool = False
    """Applied, compiled, and every selected test passed (confirm it with verify)."""
    seconds: float = 0.0
    """Wall time in the worker: apply, compile, tests, restore."""
    cpu_seconds: float = 0.0
    """CPU time of the worker and the candidate's test processes for it."""
    mode: Literal["fork", "swap", "rebind", "reload", "fresh", "none"] = "none"
    """How its tests ran: forked from the prepared worker (``fork``); forked with the
    changed functions given their new code (``swap``: it changed only function bodies of
    code a conftest had imported); forked with the repository's code imported again and
    the session's conftests pointed at it (``rebind``: it changed other code a conftest
    had imported); forked with the repository's modules dropped and a new session
    (``reload``: it changed a conftest or the pytest configuration, or a rebind was not
    safe); in a new interpreter (``fresh``)."""
    why: str = ""
    """Why a candidate that changed code a conftest had imported was not swapped."""
    patch: str | None = None
    """The candidate as a diff against the base commit (for passing candidates)."""
    note: str = ""
    removed: list[str] = Field(default_factory=list)
    """Files the tests left in the repository (removed after the candidate)."""

    @property
    def first_failure(self) -> TestVerdict | None:
        return next((t for t in self.tests if not t.passed), None)

    @property
    def timed_out(self) -> bool:
        return any(t.outcome == "timeout" for t in self.tests)


class BatchOptions(_Model):
    """How :class:`BatchEvaluator` runs candidates."""

    timeout_factor: float = Field(default=10.0, gt=0)
    """A test's timeout is this many times its baseline duration (for a test that hung in
    the baseline, the slowest baseline test that ended by itself) ..."""
    min_timeout_s: float = Field(default=1.0, gt=0)
    """... but at least this."""
    default_timeout_s: float = Field(default=10.0, gt=0)
    """The timeout of a test without a baseline duration."""
    collect_min_s: float = Field(default=5.0, gt=0)
    """Collection timeout: at least this, or ``timeout_factor`` x the baseline collection."""
    fail_fast: bool = True
    """Stop a candidate at its first test that does not pass."""
    keep_going: int = Field(default=0, ge=0)
    """With ``fail_fast``, the first this many tests of the order run whatever happens
    (a search passes the FAIL_TO_PASS count: which of the failing tests an edit fixes is
    the signal; the regressions after the first are not)."""
    fastest_first: bool = False
    """Default test order: within FAIL_TO_PASS and within PASS_TO_PASS, by baseline time
    (fastest first) instead of the instance's order (which is deterministic)."""
    batch_size: int = Field(default=64, ge=1)
    """Candidates per container exec."""
    file_limit_mb: int = Field(default=64, ge=1)
    """Largest file a test may write (RLIMIT_FSIZE; beyond it the test process dies)."""
    memory_mb: int = Field(default=0, ge=0)
    """Address-space limit of a test process in MiB (RLIMIT_AS; 0: only the workspace's
    memory limit, which kills the biggest process; a low limit can fail imports of
    libraries that reserve much address space, e.g. BLAS thread buffers)."""
    want_diff: bool = True
    """Return passing candidates as diffs against the base commit (for verify)."""
    fresh: bool = False
    """Run every candidate in a fresh interpreter (slow; for cross-checks)."""
    exec_overhead_s: float = Field(default=120.0, gt=0)
    """Allowance per exec for starting the worker, on top of the sum of test timeouts."""
    pytest_args: list[str] = Field(
        default_factory=lambda: [
            "-p",
            "no:cacheprovider",
            "-s",
            "-q",
            "--tb=native",
            "--continue-on-collection-errors",
        ]
    )
    """Options for the worker's pytest session (the test ids are appended)."""


class BatchStats(_Model):
    """What the last :meth:`BatchEvaluator.evaluate` call cost."""

    execs: int = 0
    candidates: int = 0
    seconds: float = 0.0
    prepare_seconds: list[float] = Field(default_factory=list)
    """Per exec: worker start-up (pytest import and session preparation)."""
    modes: list[str] = Field(default_factory=list)
    """Per exec: ``fork`` (prepared session), ``reload`` (preparation failed: every
    candidate in a new session) or ``fresh`` (a new interpreter each, when asked)."""
    warm: list[bool] = Field(default_factory=list)
    """Per exec: the worker was forked from the runtime's zygote (pytest already
    imported), not started as a new interpreter."""
    cpu_seconds: float = 0.0
    """CPU time in the workspace: every process of the execs (the driver's git commands,
    the workers with their start-up, their children)."""
    worker_cpu_seconds: float = 0.0
    """The workers' share of ``cpu_seconds`` (start-up included)."""
    notes: list[str] = Field(default_factory=list)


class BatchEvaluator:
    """Evaluates candidate patches in batches inside the workspace (see module doc)."""

    def __init__(self, options: BatchOptions | None = None, **overrides: Any) -> None:
        base = options or BatchOptions()
        self.options = base.model_copy(update=overrides) if overrides else base
        if overrides:
            self.options = BatchOptions.model_validate(self.options.model_dump())
        self.stats = BatchStats()

    # --------------------------------------------------------------- planning

    def plan(
        self,
        instance: SWEInstance,
        tests: Sequence[str] | None,
        baseline: Localization | Mapping[str, float] | None,
    ) -> tuple[list[str], list[float], float]:
        """Tests in run order, their timeouts, and the collection timeout."""
        durations: Mapping[str, float] = {}
        collect = 0.0
        timed: Iterable[Any] | Mapping[str, float] | None = baseline
        if isinstance(baseline, Localization):
            durations, collect = baseline.durations(), baseline.collect_seconds
            timed = baseline.tests
        elif baseline is not None:
            durations = baseline
        if tests is None:

            def by_time(group: Sequence[str]) -> list[str]:
                if not self.options.fastest_first:
                    return list(group)
                return sorted(group, key=lambda t: durations.get(t, float("inf")))

            f2p = by_time(instance.FAIL_TO_PASS)
            p2p = by_time([t for t in instance.PASS_TO_PASS if t not in f2p])
            ordered = [*f2p, *p2p]
        else:
            ordered = list(dict.fromkeys(tests))
        ordered = check_tests(ordered, "tests")
        if not ordered:
            raise ConfigError("tests: nothing to run (FAIL_TO_PASS and PASS_TO_PASS are empty)")
        o = self.options
        policy = TimeoutPolicy(
            factor=o.timeout_factor, floor_s=o.min_timeout_s, default_s=o.default_timeout_s
        )
        timeouts = policy.timeouts(ordered, timed)
        return ordered, timeouts, max(o.collect_min_s, o.timeout_factor * collect)

    # ------------------------------------------------------------- evaluation

    async def evaluate(
        self,
        target: Target,
        instance: SWEInstance | None,
        candidates: Sequence[CandidateLike],
        *,
        tests: Sequence[str] | None = None,
        baseline: Localization | Mapping[str, float] | None = None,
    ) -> list[CandidateResult]:
        """Evaluate ``candidates`` (in order) in ``target``.

        ``target``: an :class:`SWEEnvironment` after ``reset`` (its agent state is kept;
        do not run other work on it concurrently) or a bare workspace with ``instance``.
        ``tests``: the tests to run, in order (default: ``FAIL_TO_PASS`` then
        ``PASS_TO_PASS``). ``baseline``: per-test baseline seconds (a
        :class:`Localization` also gives the collection time) for the timeouts.
        """
        inst = resolve_instance(target, instance)
        cands = [as_candidate(c) for c in candidates]
        ordered, timeouts, collect = self.plan(inst, tests, baseline)
        started = time.monotonic()
        self.stats = BatchStats(candidates=len(cands))
        results: dict[int, CandidateResult] = {}
        pending = list(range(len(cands)))
        async with workspace_of(target) as ws:
            while pending:
                chunk = pending[: self.options.batch_size]
                got, why = await self._run_chunk(ws, inst, cands, chunk, ordered, timeouts, collect)
                results.update(got)
                pending = [i for i in pending if i not in results]
                if pending and pending[0] in chunk:
                    # The worker stopped (host timeout, crash) while on this candidate.
                    first = pending.pop(0)
                    results[first] = CandidateResult(
                        index=first,
                        label=cands[first].label,
                        applied=False,
                        compiled=False,
                        error=f"the batch worker stopped on this candidate: {why}",
                        not_run=list(ordered),
                    )
                    self.stats.notes.append(f"candidate {first}: {why}")
        self.stats.seconds = time.monotonic() - started
        return [results[i] for i in range(len(cands))]

    async def _run_chunk(
        self,
        ws: Any,
        inst: SWEInstance,
        cands: Sequence[CandidatePatch],
        chunk: Sequence[int],
        tests: list[str],
        timeouts: list[float],
        collect: float,
    ) -> tuple[dict[int, CandidateResult], str]:
        o = self.options
        nonce = uuid.uuid4().hex[:12]
        job = {
            "nonce": nonce,
            "root": TESTBED,
            "tests": tests,
            "timeouts": timeouts,
            "collect_timeout": collect,
            "fail_fast": o.fail_fast,
            "keep_going": o.keep_going,
            "pytest_args": list(o.pytest_args),
            "file_limit_bytes": o.file_limit_mb * 1024 * 1024,
            "memory_bytes": o.memory_mb * 1024 * 1024,
            "want_diff": o.want_diff,
            "force_fresh": o.fresh,
            "base_commit": inst.base_commit,
            "tmp": f"/tmp/atlas-batch-{nonce}",
            "pycache": PYCACHE_DIR,
            "candidates": [
                {"index": i, "files": cands[i].files, "diff": cands[i].diff} for i in chunk
            ],
        }
        per_candidate = collect + sum(t + _GAP_S for t in timeouts)
        exec_timeout = o.exec_overhead_s + per_candidate * len(chunk)
        out, timed_out, cpu = await self._run_worker(ws, inst, nonce, job, exec_timeout)
        self.stats.execs += 1
        mark = marker(nonce)
        err = re.search(re.escape(mark) + r"error (.*)", out)
        if err:
            raise SandboxError(f"batch evaluation of {inst.instance_id}: {err.group(1)}")
        got: dict[int, CandidateResult] = {}
        started_ok = False
        for line in out.splitlines():
            if line.startswith(mark + "ready "):
                started_ok = True
                ready = json.loads(line[len(mark) + 6 :])
                self.stats.prepare_seconds.append(float(ready.get("seconds", 0.0)))
                self.stats.modes.append(str(ready.get("mode")))
                if ready.get("error"):
                    self.stats.notes.append(f"session preparation failed: {ready['error']}")
            elif line.startswith(mark + "done "):
                worker_cpu = float(json.loads(line[len(mark) + 5 :])["cpu"])
                self.stats.worker_cpu_seconds += worker_cpu
            elif line.startswith(mark + "result "):
                raw = json.loads(line[len(mark) + 7 :])
                got[int(raw["index"])] = self._result(raw, cands, tests)
        self.stats.cpu_seconds += cpu
        if not started_ok and not timed_out:
            stderr = read_emitted(out, nonce, "stderr") or out[-2000:]
            raise SandboxError(
                f"the batch worker did not start in the workspace of {inst.instance_id}: "
                f"{stderr.strip()[-2000:]}"
            )
        why = ""
        if len(got) < len(chunk):
            if timed_out:
                why = f"the worker timed out after {exec_timeout:g}s"
            else:
                fatal = re.search(re.escape(mark) + r"fatal (.*)", out)
                stderr = read_emitted(out, nonce, "stderr") or ""
                why = (fatal.group(1) if fatal else "the worker died") + (
                    f"; stderr: {stderr[-1000:]}" if stderr.strip() else ""
                )
        return got, why

    async def _run_worker(
        self, ws: Any, inst: SWEInstance, nonce: str, job: dict[str, Any], timeout_s: float
    ) -> tuple[str, bool, float]:
        """Run the batch worker on ``job``: forked from the runtime's zygote between the
        driver's halves when the workspace has the runtime (pytest already imported),
        else as a new interpreter inside the one-script driver. Its output (the result
        lines), whether it timed out, and the CPU seconds of everything it ran."""
        io = f"{IO_DIR}/atlas-{nonce}"
        if has_runtime(ws) and not self.options.fresh:
            first, cmd = await warm_setup(ws, inst, nonce, timeout_s=300)
            got = None
            if cmd is not None:
                job = {**job, "results_file": f"{io}-results.jsonl"}
                request = {"op": "batch", "job": job, "env": cmd.env, "cwd": TESTBED}
                got = await ws.tests(
                    python=cmd.python, env=cmd.env, cwd=cmd.cwd, request=request,
                    timeout_s=timeout_s,
                )  # fmt: skip
            if got is not None and not got[0].get("unavailable"):
                answer, data = got
                out = data.decode("utf-8", errors="replace")
                if answer.get("runtime_died") or answer.get("zygote_died"):
                    # what the worker finished before it went, from its results file
                    found = await ws.read_files([f"{io}-results.jsonl"])
                    saved = (found or {}).get(f"{io}-results.jsonl") or b""
                    why = answer.get("runtime_died") or answer.get("zygote_died")
                    out = saved.decode("utf-8", "replace") + f"\n{marker(nonce)}fatal {why}\n"
                last = await warm_cleanup(ws, inst, nonce)
                self.stats.warm.append(True)
                cpu = first.cpu_seconds + float(answer.get("cpu") or 0.0) + last.cpu_seconds
                return out, bool(answer.get("timed_out")), cpu
            await warm_cleanup(ws, inst, nonce)
        body = "\n".join(
            [
                f'"$PY" {SHIP_DIR}/atlas_batch.py {io}-job.json 2>{io}-err.log',
                f'echo "{marker(nonce)}worker-rc $?"',
                emit_file(nonce, "stderr", f"{io}-err.log", limit=4000),
            ]
        )
        script = driver(inst, nonce, body)
        files = {
            **(shipped() if not has_runtime(ws) else {}),
            f"{io}-job.json": json.dumps(job).encode(),
            f"{io}.sh": script.encode(),
        }
        result = await ws.run_with_files(
            files, f"bash {io}.sh", timeout_s=timeout_s, output_limit_bytes=500_000_000
        )
        self.stats.warm.append(False)
        out = result.output
        return out, result.timed_out, exec_cpu_seconds(out, nonce) or 0.0

    @staticmethod
    def _result(
        raw: dict[str, Any], cands: Sequence[CandidatePatch], tests: list[str]
    ) -> CandidateResult:
        i = int(raw["index"])
        verdicts = [TestVerdict.model_validate(t) for t in raw.get("tests") or []]
        ran = {v.test for v in verdicts}
        passed = (
            bool(raw["applied"])
            and bool(raw["compiled"])
            and len(verdicts) == len(tests)
            and all(v.passed for v in verdicts)
        )
        return CandidateResult(
            index=i,
            label=cands[i].label,
            applied=bool(raw["applied"]),
            compiled=bool(raw["compiled"]),
            error=str(raw.get("error") or ""),
            tests=verdicts,
            not_run=[t for t in tests if t not in ran],
            passed=passed,
            seconds=float(raw.get("seconds") or 0.0),
            cpu_seconds=float(raw.get("cpu") or 0.0),
            mode=raw.get("mode") or "none",
            why=str(raw.get("why") or ""),
            patch=raw.get("patch"),
            note=str(raw.get("note") or ""),
            removed=list(raw.get("removed") or []),
        )

    # --------------------------------------------------------- confirmation

    async def confirm(
        self, env: SWEEnvironment, results: Sequence[CandidateResult]
    ) -> list[Outcome | None]:
        """The full ``SWEEnvironment.verify`` (eval script + swebench grading) of every
        result that passed; None for the others (and for passing ones without a diff)."""
        out: list[Outcome | None] = []
        for r in results:
            if r.passed and r.patch is not None:
                out.append(await env.verify(r.patch))
            else:
                out.append(None)
        return out
