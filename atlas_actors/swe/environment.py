"""SWEEnvironment: SWE-bench tasks in real containers (or a bubblewrap sandbox), graded
as swebench 5.x grades them.

``reset(task)`` starts a container from the instance image (repository at ``/testbed``,
at the base commit) and returns the problem statement. ``step(action)`` takes typed
actions (:class:`ApplyPatch`, :class:`Edit`, :class:`ViewFile`, :class:`ListFiles`,
:class:`Search`, :class:`RunCommand`, :class:`Submit`). The state is the cumulative patch
(``get_state``/``set_state``), so a tree search branches without snapshotting containers.

``verify(patch)`` applies ``patch`` on a clean tree, runs the instance's eval script,
parses the log with the instance's swebench log parser and grades it with swebench's
grading (``FAIL_TO_PASS`` / ``PASS_TO_PASS``), cross-checking the log against the test
command's real exit code and pytest's JUnit XML report. ``score(patches)`` verifies each
(the search's fitness is ``partial_score`` = tests passing / tests graded).

Example::

    async with SWEEnvironment() as env:
        print(await env.reset(instance.to_task()))
        outcome = await env.verify(instance.patch)   # the gold patch resolves it
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
import shlex
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal

import anyio

from atlas_actors.environments.base import TaskHolder
from atlas_actors.errors import (
    ConfigError,
    DockerError,
    EnvironmentNotReady,
    InvalidSolutionError,
    SandboxError,
)
from atlas_actors.sandbox.docker import ContainerLimits, DockerClient, ExecResult
from atlas_actors.swe.actions import (
    ApplyPatch,
    Edit,
    ListFiles,
    RunCommand,
    Search,
    Submit,
    ViewFile,
    parse_action,
)
from atlas_actors.swe.grading import (
    FEEDBACK_TAIL,
    changed_lines,
    failed_report,
    grade_log,
    graded_outcome,
    hide_fail_to_pass,
    tail,
)
from atlas_actors.swe.images import PULL_POLICIES, PullPolicy, ensure_image
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.testrun import (
    WarmRun,
    capture_lines,
    captured_command,
    run_warm,
    warmable,
)
from atlas_actors.swe.workspace import (
    IO_DIR,
    TESTBED,
    BubblewrapWorkspace,
    DockerWorkspace,
    Workspace,
    new_run_label,
    reset_command,
)
from atlas_actors.types import Outcome, Task

log = logging.getLogger(__name__)

Backend = Literal["docker", "bubblewrap"]
VisibleTests = Literal["all", "pass_to_pass"]
"""Which graded tests' results a search sees (``score``); ``verify`` always grades all."""

_RESET_FAILED = 97
"""Exit code of a restore whose reset (:func:`reset_command`) failed (the patch did not
get to be applied): the tree is broken, so a fresh workspace is started."""

# swebench's order of patch-apply attempts (run_evaluation.GIT_APPLY_CMDS).
_APPLY_CMDS = (
    "git apply --verbose",
    "git apply --verbose --3way",
    "git apply --verbose --reject",
    "patch --batch --forward --fuzz=5 -p1 -i",
)


# ------------------------------------------------------------------- environment


class SWEEnvironment(TaskHolder):
    """SWE-bench instances in Docker containers (or bubblewrap), graded by swebench.

    Every argument is optional (``create_environment(task)`` passes none).

    Args:
        backend: ``"docker"`` (default) or ``"bubblewrap"`` (a local checkout, the
            instance's ``local_repo``, in a bubblewrap sandbox; no Docker needed).
        docker_host: Docker URL or socket path; default ``$DOCKER_HOST``.
        eval_timeout_s: limit for one run of the eval script (a hang -> timeout outcome).
        command_timeout_s: default limit for other commands (apply, git, views).
        start_timeout_s: limit for starting a container.
        api_timeout_s: limit for any other Docker call.
        memory_mb, pids, cpus: container (or sandbox) limits.
        max_steps: steps per episode before ``done``.
        output_limit_bytes: output kept from a test run (the tail).
        fresh_container_per_verify: start a new container for every verify (slower);
            by default the container is reused after a hard reset of the repository
            and killing every leftover process, and replaced after a timeout.
        python_bin: interpreter for the bubblewrap backend (default: this process's).
        visible_tests: what ``score`` (a search's view) shows: ``"all"`` graded tests
            (the program-repair setting) or only ``"pass_to_pass"`` (SWE-bench's: the
            tests that check the fix stay hidden until the final ``verify``).
        pull: what ``reset`` does when the instance image is not on the engine
            (:mod:`atlas_actors.swe.images`): ``"missing"`` (default) pulls it (once per
            image per process, with the Docker config's credentials), ``"always"`` pulls
            it once per process even when present, ``"never"`` raises ImageMissing.
        labels: extra labels for this environment's containers (the CLI sets the
            session label it reaps by).
        cgroup_parent: the cgroup its containers are created under (Docker's
            ``--cgroup-parent``; default: the engine's), e.g. to account their CPU time
            with the process that runs them.
        runtime: run commands, file reads and writes and tests through the in-container
            runtime (:mod:`atlas_actors.sandbox.runtime`), started once per container;
            False: one ``docker exec`` per command, as when the runtime cannot start.
        warm_tests: run the eval script's test command in the runtime's zygote (pytest
            imported once, a forked child per run) when it is a plain pytest
            invocation; False: a new interpreter per run.
        test_output_cap_bytes: a warm test run that writes more than this is killed
            (a failed verdict that says so); the tail kept is ``output_limit_bytes``.
        test_file_limit_mb: the largest file a warm test run may write (RLIMIT_FSIZE).
        localize_timeout_s: limit for the ``localize`` tool's run (both passes); a test
            still running after a quarter of it (at most 60 s) is stopped and counts as
            failing.
    """

    def __init__(
        self,
        *,
        backend: Backend = "docker",
        docker_host: str | None = None,
        eval_timeout_s: float = 300.0,
        command_timeout_s: float = 60.0,
        start_timeout_s: float = 60.0,
        api_timeout_s: float = 60.0,
        memory_mb: int = 2048,
        pids: int = 512,
        cpus: float = 1.0,
        max_steps: int = 50,
        output_limit_bytes: int = 20_000_000,
        fresh_container_per_verify: bool = False,
        python_bin: str | None = None,
        visible_tests: VisibleTests = "all",
        pull: PullPolicy = "missing",
        labels: Mapping[str, str] | None = None,
        cgroup_parent: str | None = None,
        runtime: bool = True,
        warm_tests: bool = True,
        test_output_cap_bytes: int = 256_000_000,
        test_file_limit_mb: int = 1024,
        localize_timeout_s: float = 120.0,
    ) -> None:
        if pull not in PULL_POLICIES:
            raise ConfigError(f"pull={pull!r}: allowed values are {', '.join(PULL_POLICIES)}")
        if backend not in ("docker", "bubblewrap"):
            raise ConfigError(f"backend={backend!r}: allowed values are 'docker', 'bubblewrap'")
        if visible_tests not in ("all", "pass_to_pass"):
            raise ConfigError(
                f"visible_tests={visible_tests!r}: allowed values are 'all', 'pass_to_pass'"
            )
        self.visible_tests: VisibleTests = visible_tests
        for name, value in (
            ("eval_timeout_s", eval_timeout_s),
            ("command_timeout_s", command_timeout_s),
            ("start_timeout_s", start_timeout_s),
            ("api_timeout_s", api_timeout_s),
            ("memory_mb", memory_mb),
            ("pids", pids),
            ("cpus", cpus),
            ("max_steps", max_steps),
            ("output_limit_bytes", output_limit_bytes),
            ("test_output_cap_bytes", test_output_cap_bytes),
            ("test_file_limit_mb", test_file_limit_mb),
            ("localize_timeout_s", localize_timeout_s),
        ):
            if value <= 0:
                raise ConfigError(f"{name}={value!r}: must be > 0")
        self.backend: Backend = backend
        self.docker_host = docker_host
        self.eval_timeout_s = eval_timeout_s
        self.command_timeout_s = command_timeout_s
        self.start_timeout_s = start_timeout_s
        self.api_timeout_s = api_timeout_s
        self.localize_timeout_s = localize_timeout_s
        self._wider: dict[str, Any] = {}
        self.limits = ContainerLimits(
            memory_mb=memory_mb,
            pids=pids,
            cpus=cpus,
            extra_host_config={"CgroupParent": cgroup_parent} if cgroup_parent else {},
        )
        self._max_steps = max_steps
        self.output_limit_bytes = output_limit_bytes
        self.fresh_container_per_verify = fresh_container_per_verify
        self.runtime = runtime
        self.warm_tests = warm_tests
        self.test_output_cap_bytes = test_output_cap_bytes
        self.test_file_limit_bytes = test_file_limit_mb * 1024 * 1024
        self._cold_reason = ""
        """Why this instance's tests run cold (empty: warm when the workspace can)."""
        self.python_bin = python_bin
        self.pull: PullPolicy = pull
        self.labels = dict(labels or {})
        self.run_label = new_run_label()
        """Label value of this environment's containers (see ``DockerClient.reap``)."""
        self._task: Task | None = None
        self._instance: SWEInstance | None = None
        self._client: DockerClient | None = None
        self._ws: Workspace | None = None
        self._steps = 0
        self._tree: Literal["agent", "verify"] = "agent"
        self._agent_patch = ""
        self._agent_dirty = False
        self._lock = anyio.Lock()
        self.verifications = 0

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> SWEEnvironment:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Remove the container (and any leftover of this environment's run)."""
        with anyio.CancelScope(shield=True):
            ws, self._ws = self._ws, None
            if ws is not None:
                await ws.close()
            client, self._client = self._client, None
            if client is not None:
                try:
                    with anyio.move_on_after(30):
                        await client.reap(self.run_label)
                except Exception:
                    pass
                await client.close()

    @property
    def instance(self) -> SWEInstance:
        """The current SWE-bench instance."""
        if self._instance is None:
            raise EnvironmentNotReady("no task set: call reset(task) first")
        return self._instance

    @property
    def max_steps(self) -> int:
        return self._max_steps

    @property
    def is_deterministic(self) -> bool:
        return True

    @property
    def workspace(self) -> Workspace:
        """The backend workspace (container or sandbox) of the current task."""
        if self._ws is None:
            raise EnvironmentNotReady("no task set: call reset(task) first")
        return self._ws

    async def reset(self, task: Task) -> str:
        """Start a container (or checkout) for ``task`` (domain ``swe``); the problem statement."""
        instance = SWEInstance.from_task(task)
        async with self._lock:
            if self._ws is not None:
                await self._ws.close()
                self._ws = None
            ws: Workspace
            if self.backend == "docker":
                if self._client is None:
                    client = DockerClient(self.docker_host, api_timeout_s=self.api_timeout_s)
                    await client.connect()
                    self._client = client
                await ensure_image(self._client, instance.image, self.pull)
                ws = DockerWorkspace(
                    self._client,
                    instance.image,
                    run=self.run_label,
                    limits=self.limits,
                    start_timeout_s=self.start_timeout_s,
                    labels=self.labels,
                    runtime=self.runtime,
                )
            else:
                if not instance.local_repo:
                    raise ConfigError(
                        f"instance {instance.instance_id}: the bubblewrap backend needs "
                        "'local_repo' (a git checkout containing base_commit)"
                    )
                ws = BubblewrapWorkspace(
                    instance.local_repo,
                    instance.base_commit,
                    memory_mb=self.limits.memory_mb,
                    pids=self.limits.pids,
                    python_bin=self.python_bin,
                )
            await ws.start()
            self._ws = ws
            self._task = task
            self._instance = instance
            self._steps = 0
            self._tree = "agent"
            self._agent_patch = ""
            self._agent_dirty = False
            self._cold_reason = ""
        return instance.problem_statement

    # ----------------------------------------------------------------- state

    async def _run(self, cmd: str, timeout_s: float | None = None) -> ExecResult:
        return await self.workspace.run(
            cmd, timeout_s=timeout_s or self.command_timeout_s, output_limit_bytes=2_000_000
        )

    async def _run_with(self, files: Mapping[str, bytes], cmd: str) -> ExecResult:
        """:meth:`_run` with ``files`` written first, in the same container call."""
        return await self.workspace.run_with_files(
            files, cmd, timeout_s=self.command_timeout_s, output_limit_bytes=2_000_000
        )

    def _diff_cmd(self) -> str:
        base = shlex.quote(self.instance.base_commit)
        return (
            f"git add -A && git -c core.fileMode=false diff --cached --binary {base}; "
            "rc=$?; git reset -q; exit $rc"
        )

    def _diffed(self, r: ExecResult) -> str:
        if not r.ok:
            raise InvalidSolutionError(f"cannot compute the working-tree diff: {r.output[-2000:]}")
        return r.output

    async def _diff(self) -> str:
        return self._diffed(await self._run(self._diff_cmd()))

    async def _restore(self, patch: str) -> ExecResult | None:
        """Clean tree at the base commit, then ``patch`` applied; None when it applied.
        One command (the patch travels with it): a tree search restores a state for
        every action it tries."""
        reset = f"{reset_command(self.instance.base_commit)} || exit {_RESET_FAILED}"
        state = f"{IO_DIR}/state.diff"
        apply = f"git apply --binary {state}"
        if patch.strip():
            r = await self._run_with({state: patch.encode()}, f"{reset}\n{apply}")
        else:
            r = await self._run(reset)
        if r.ok:
            return None
        if r.exit_code == _RESET_FAILED or r.timed_out:
            # A broken tree (or a hung git): start from a fresh workspace, then apply.
            await self.workspace.restart()
            if not patch.strip():
                return None
            r = await self._run_with({state: patch.encode()}, apply)
            return None if r.ok else r
        return r

    async def _agent_tree(self) -> None:
        """Make sure the working tree holds the agent's state (after a verify)."""
        if self._tree == "verify":
            failed = await self._restore(self._agent_patch)
            if failed is not None:
                raise InvalidSolutionError(
                    f"cannot restore the working tree: {failed.output[-2000:]}"
                )
            self._tree = "agent"
            self._agent_dirty = False

    async def get_state(self) -> dict[str, Any]:
        """``{"instance_id", "patch", "steps"}``: the cumulative patch (git diff vs base)."""
        async with self._lock:
            await self._agent_tree()
            if self._agent_dirty:
                self._agent_patch = await self._diff()
                self._agent_dirty = False
            return {
                "instance_id": self.instance.instance_id,
                "patch": self._agent_patch,
                "steps": self._steps,
            }

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[Workspace]:
        """The workspace for a tool that runs its own scripts on the tree (fault
        localisation, batch candidate runs): held alone until the block ends. The agent's
        state is kept (its patch saved first) and put back before its next action."""
        async with self._lock:
            if self._tree == "agent" and self._agent_dirty:
                self._agent_patch = await self._diff()
                self._agent_dirty = False
            self._tree = "verify"  # whatever the tool leaves, the agent's tree is restored
            yield self.workspace

    # ---------------------------------------------------------------- tools

    tools = frozenset({"localize", "try_candidates", "read_files", "wider_tests"})
    """Methods a search may call through its stepper (``invoke``): the offline repair
    proposer's fault localisation, fast candidate runs, file reads and the wider suite."""

    def _needs_visible_tests(self, tool: str) -> None:
        if self.visible_tests != "all":
            raise ConfigError(
                f"{tool}: runs the FAIL_TO_PASS tests, which are hidden from the search "
                "here (visible_tests='pass_to_pass'); the offline repair tools need "
                "visible_tests='all' (atlas-actors swe --tests visible)"
            )

    async def localize(self, formula: str = "ochiai") -> Any:
        """Rank suspicious lines by the tests' coverage (see
        :func:`atlas_actors.swe.repair.localize.localize`; cached per instance). It runs
        the FAIL_TO_PASS tests, so it needs ``visible_tests="all"``."""
        from atlas_actors.swe.repair.localize import localize

        self._needs_visible_tests("localize")
        return await localize(
            self,
            formula=formula,  # type: ignore[arg-type]
            timeout_s=self.localize_timeout_s,
            test_timeout_s=min(60.0, self.localize_timeout_s / 4),
        )

    async def wider_tests(self) -> Any:
        """The tests beyond the graded ones that pass at base, in the folders of the graded
        tests' files (see :func:`atlas_actors.swe.repair.localize.wider_suite`; once per
        instance, within ``localize_timeout_s``). It runs the FAIL_TO_PASS tests' files,
        so it needs ``visible_tests="all"``."""
        from atlas_actors.swe.repair.localize import wider_suite

        self._needs_visible_tests("wider_tests")
        key = self.instance.instance_id
        found = self._wider.get(key)
        if found is None:
            found = await wider_suite(
                self,
                timeout_s=self.localize_timeout_s,
                test_timeout_s=min(20.0, self.localize_timeout_s / 4),
            )
            self._wider[key] = found
        return found

    async def try_candidates(
        self,
        candidates: Sequence[Any],
        tests: Sequence[str] | None = None,
        durations: Mapping[str, float] | None = None,
    ) -> list[Any]:
        """Run candidate patches fast, failing tests first, one fork per candidate (see
        :class:`atlas_actors.swe.repair.batch.BatchEvaluator`): every FAIL_TO_PASS test,
        then the PASS_TO_PASS ones up to the first that fails; the localisation's test
        times set the per-test timeouts (``durations``: seconds per test at base, for
        tests localisation did not run, e.g. the wider suite's)."""
        from atlas_actors.swe.repair.batch import BatchEvaluator

        self._needs_visible_tests("try_candidates")
        baseline = await self.localize()
        # every failing test runs (which of them an edit fixes is the signal); the
        # passing ones stop at the first regression
        evaluator = BatchEvaluator(keep_going=len(self.instance.FAIL_TO_PASS))
        timed: Any = baseline
        if durations is not None:
            timed = {**baseline.durations(), **durations}
        return await evaluator.evaluate(self, None, candidates, tests=tests, baseline=timed)

    async def read_files(
        self, paths: Sequence[str], state: dict[str, Any] | None = None
    ) -> dict[str, str | None]:
        """The text of ``paths`` at ``state`` (default: the base commit); None for a path
        that is not a file there."""
        patch = self.solution_of(state or {})
        out: dict[str, str | None] = {}
        async with self.exclusive():
            failed = await self._restore(patch)
            if failed is not None:
                raise InvalidSolutionError(f"state patch does not apply: {failed.output[-2000:]}")
            for rel in paths:
                path = self._path(rel)
                r = await self._run(f"test -f {shlex.quote(path)}")
                if not r.ok:
                    out[rel] = None
                    continue
                data = await self.workspace.read_file(path)
                out[rel] = data.decode("utf-8", errors="surrogateescape")
        return out

    @staticmethod
    def solution_of(state: dict[str, Any]) -> str:
        """The solution a state stands for: its cumulative patch (what ``verify`` takes;
        a ``LocalEvaluator`` stepping this environment hands it to the search)."""
        patch = state.get("patch", "")
        return patch if isinstance(patch, str) else ""

    async def set_state(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`get_state` result: a clean tree with its patch applied."""
        patch = state.get("patch", "")
        if not isinstance(patch, str):
            raise InvalidSolutionError("state['patch'] must be a string (a git diff)")
        iid = state.get("instance_id")
        async with self._lock:
            if iid is not None and iid != self.instance.instance_id:
                raise InvalidSolutionError(
                    f"state is for instance {iid!r}, not {self.instance.instance_id!r}"
                )
            failed = await self._restore(patch)
            if failed is not None:
                raise InvalidSolutionError(f"state patch does not apply: {failed.output[-2000:]}")
            self._tree = "agent"
            self._agent_patch = patch
            self._agent_dirty = False
            steps = state.get("steps", self._steps)
            self._steps = int(steps) if isinstance(steps, int) else self._steps

    # ----------------------------------------------------------------- steps

    async def step(self, action: Any) -> tuple[str, float, bool, dict[str, Any]]:
        """Apply an action; ``(observation, reward, done, info)``.

        Reward is 0 except for :class:`Submit` (the verified partial score). ``done`` when
        submitted or after ``max_steps`` steps.
        """
        act = parse_action(action)
        self.instance  # noqa: B018 - raises EnvironmentNotReady before reset
        if isinstance(act, Submit):
            state = await self.get_state()
            # what the agent may see of its own patch: the search's view, never the
            # hidden tests (``verify`` grades the final answer for the report only)
            [outcome] = await self.score([state["patch"]])
            self._steps += 1
            return (
                outcome.feedback,
                outcome.partial_score,
                True,
                {"action": act.kind, "outcome": outcome.model_dump()},
            )
        async with self._lock:
            await self._agent_tree()
            self._steps += 1
            obs, info = await self._do(act)
        info["action"] = act.kind
        info["steps"] = self._steps
        return obs, 0.0, self._steps >= self._max_steps, info

    def _path(self, path: str) -> str:
        norm = os.path.normpath(path if path.startswith("/") else f"{TESTBED}/{path}")
        if norm != TESTBED and not norm.startswith(TESTBED + "/"):
            raise InvalidSolutionError(f"path {path!r} is outside the repository ({TESTBED})")
        return norm

    async def _do(
        self, act: ApplyPatch | Edit | ViewFile | ListFiles | Search | RunCommand
    ) -> tuple[str, dict[str, Any]]:
        if isinstance(act, ApplyPatch):
            r = await self._run_with(
                {f"{IO_DIR}/step.diff": act.patch.encode()},
                f"git apply --verbose {IO_DIR}/step.diff || "
                f"patch --batch --forward -p1 -i {IO_DIR}/step.diff",
            )
            self._agent_dirty = True
            status = "applied" if r.ok else "patch did not apply"
            return f"{status}\n{r.output[-FEEDBACK_TAIL:]}", {"ok": r.ok}
        if isinstance(act, Edit):
            return await self._edit(act)
        if isinstance(act, ViewFile):
            path = shlex.quote(self._path(act.path))
            start, end = act.start or 1, act.end or 10**9
            if start > end:
                return f"start {start} is after end {end}", {"ok": False}
            r = await self._run(
                f"if [ -d {path} ]; then ls -la {path}; elif [ -f {path} ]; then "
                f"awk -v s={start} -v e={end} 'NR>=s && NR<=e {{printf \"%6d  %s\\n\", NR, $0}}' "
                f"{path} | head -c 200000; else echo 'no such file: '{path}; exit 1; fi"
            )
            return r.output, {"ok": r.ok}
        if isinstance(act, ListFiles):
            path = shlex.quote(self._path(act.path))
            r = await self._run(
                "git ls-files --cached --others --exclude-standard -- "
                f"{path} | head -n {act.max_entries}"
            )
            return r.output, {"ok": r.ok}
        if isinstance(act, Search):
            return await self._search(act)
        r = await self.workspace.run(
            act.command, timeout_s=act.timeout_s, output_limit_bytes=200_000
        )
        self._agent_dirty = True
        if r.timed_out:
            tail = f"\n[timed out after {act.timeout_s:g}s; its processes were killed]"
        else:
            tail = f"\n[exit code {r.exit_code}]"
        info = {"ok": r.ok, "exit_code": r.exit_code, "timed_out": r.timed_out}
        return r.output + tail, info

    async def _search(self, act: Search) -> tuple[str, dict[str, Any]]:
        path = shlex.quote(self._path(act.path))
        mode = "-F" if act.fixed else "-E"
        r = await self._run(
            f"git grep -n -I --untracked {mode} -e {shlex.quote(act.pattern)} -- {path} 2>&1 "
            f"| head -n {act.max_matches + 1}"
        )
        lines = r.output.splitlines()
        if not lines:
            return f"no matches for {act.pattern!r} in {act.path}", {"ok": True, "matches": 0}
        if lines[0].startswith(("fatal:", "error:")):
            return r.output[-FEEDBACK_TAIL:], {"ok": False}
        shown = [ln if len(ln) <= 300 else ln[:297] + "..." for ln in lines[: act.max_matches]]
        if len(lines) > act.max_matches:
            shown.append(f"[more than {act.max_matches} matches: narrow the pattern or path]")
        return "\n".join(shown), {"ok": True, "matches": min(len(lines), act.max_matches)}

    async def _edit(self, act: Edit) -> tuple[str, dict[str, Any]]:
        path = self._path(act.path)
        q = shlex.quote(path)
        if act.old == "":
            if (await self._run(f"test -f {q}")).ok:
                return f"{act.path} exists: give the text to replace", {"ok": False}
            await self._run(f"mkdir -p $(dirname {q})")
            await self.workspace.write_file(path, act.new.encode())
            self._agent_dirty = True
            return f"created {act.path}", {"ok": True}
        try:
            raw = await self.workspace.read_file(path)
        except (DockerError, SandboxError):
            if not (await self._run(f"test -f {q}")).ok:
                return f"no such file: {act.path}", {"ok": False}
            raise
        text = raw.decode("utf-8", errors="surrogateescape")
        count = text.count(act.old)
        if count != 1:
            what = "not found" if count == 0 else f"found {count} times (add context)"
            return f"the text to replace was {what} in {act.path}", {"ok": False}
        new_text = text.replace(act.old, act.new, 1)
        # the new text and the new state's diff in one command (get_state reads it)
        r = await self._run_with(
            {path: new_text.encode("utf-8", errors="surrogateescape")}, self._diff_cmd()
        )
        self._agent_patch = self._diffed(r)
        self._agent_dirty = False
        line = text[: text.index(act.old)].count("\n") + 1
        return f"edited {act.path} at line {line}", {"ok": True, "line": line}

    # ---------------------------------------------------------------- verify

    async def score(self, solutions: Sequence[Any]) -> list[Outcome]:
        """What a search may see of each patch's verdict (its fitness is
        ``partial_score``): everything with ``visible_tests="all"`` (program repair: the
        failing tests come with the bug); with ``"pass_to_pass"`` (SWE-bench's protocol)
        the FAIL_TO_PASS results are hidden, so the search sees only regressions."""
        outcomes = [await self.verify(s) for s in solutions]
        if self.visible_tests == "all":
            return outcomes
        return [hide_fail_to_pass(o) for o in outcomes]

    async def verify(self, solution: Any) -> Outcome:
        """Apply ``solution`` (a patch) on a clean tree, run the eval script, grade it."""
        if solution is None:
            solution = ""
        if not isinstance(solution, str):
            raise InvalidSolutionError(
                f"a SWE solution is a patch (str), got {type(solution).__name__}"
            )
        instance = self.instance
        async with self._lock:
            if self._tree == "agent" and self._agent_dirty:
                self._agent_patch = await self._diff()
                self._agent_dirty = False
            if self.fresh_container_per_verify and self.verifications > 0:
                await self.workspace.restart()
            self._tree = "verify"
            self.verifications += 1
            outcome = await self._verify(instance, solution)
        return outcome.model_copy(update={"size": len(changed_lines(solution))})

    async def _verify(self, instance: SWEInstance, patch: str) -> Outcome:
        from swebench.harness.utils import make_test_spec

        started = time.monotonic()
        spec = make_test_spec(instance.swebench_dict())
        nonce = uuid.uuid4().hex
        marker = f"@@atlas:{nonce}"
        lines = list(spec.eval_script_list)
        for i, line in enumerate(lines):
            if line.startswith("SWEBENCH_TEST_EXIT_CODE=$?"):
                lines.insert(i + 1, f'echo "{marker}:rc $SWEBENCH_TEST_EXIT_CODE@@"')
                break
        junit = f"{IO_DIR}/{nonce}.xml"
        addopts = (os.environ.get("PYTEST_ADDOPTS", "") + f" --junitxml={junit}").strip()
        ws = self.workspace
        result: ExecResult | None = None
        warm: WarmRun | None = None
        split = _split_eval(lines) if self.warm_tests and not self._cold_reason else None
        if split is not None and getattr(ws, "runtime", None) is not None:
            result, warm = await self._verify_warm(
                instance, patch, nonce, marker, junit, addopts, split, started
            )
        if result is None:
            eval_script = "\n".join([*_EVAL_HEADER, *lines]) + "\n"
            runtime = getattr(ws, "runtime", None) is not None
            if runtime:
                await ws.sweep()  # type: ignore[attr-defined]
            head = _driver_head(instance.base_commit, marker, junit, patch, not runtime)
            driver = head + f"bash {IO_DIR}/eval.sh 2>&1\n" + _driver_tail(marker, junit)
            files = {
                f"{IO_DIR}/{name}": data.encode()
                for name, data in (
                    ("patch.diff", patch),
                    ("eval.sh", eval_script),
                    ("driver.sh", driver),
                )
            }
            result = await ws.run_with_files(
                files,
                f"bash {IO_DIR}/driver.sh",
                timeout_s=self.eval_timeout_s,
                env={"PYTEST_ADDOPTS": addopts},
                output_limit_bytes=self.output_limit_bytes,
            )
        seconds = time.monotonic() - started
        details: dict[str, Any] = {
            "instance_id": instance.instance_id,
            "backend": self.backend,
            "seconds": round(seconds, 3),
            "tests_run": "warm" if warm is not None else "cold",
        }
        out = result.output
        if result.killed or (warm is not None and warm.failure and warm.exit_code is None):
            why = result.killed or (warm.failure if warm is not None else "")
            details.update(timed_out=False, patch_applied=f"{marker}:applied" in out, error=why)
            return Outcome(
                success=False,
                partial_score=0.0,
                feedback=f"the test run failed: {why}\n{tail(out)}",
                tests=failed_report(instance, applied=f"{marker}:applied" in out),
                details=details,
            )
        if result.timed_out:
            if warm is None:
                await ws.restart()  # the container is replaced: nothing of the hung run survives
            killed = "environment replaced" if warm is None else "every process it started"
            details.update(timed_out=True, patch_applied=f"{marker}:applied" in out)
            return Outcome(
                success=False,
                partial_score=0.0,
                feedback=(
                    f"timeout: the tests did not finish in {self.eval_timeout_s:g}s "
                    f"(killed; {killed})\n{tail(out)}"
                ),
                tests=failed_report(instance, applied=f"{marker}:applied" in out, timed_out=True),
                details=details,
            )
        if f"{marker}:reset-failed" in out or f"{marker}:" not in out:
            await ws.restart()
            details.update(patch_applied=False, error="reset failed")
            return Outcome(
                success=False,
                feedback=f"could not reset the repository to the base commit\n{tail(out)}",
                tests=failed_report(instance, applied=False),
                details=details,
            )
        if f"{marker}:apply-failed" in out:
            details.update(patch_applied=False)
            return Outcome(
                success=False,
                partial_score=0.0,
                feedback=f"patch does not apply:\n{tail(out.split(f'{marker}:apply-failed')[0])}",
                tests=failed_report(instance, applied=False),
                details=details,
            )
        test_log = out.split(f"{marker}:eval@@\n", 1)[-1]
        test_log, _, trailer = test_log.rpartition(f"{marker}:end@@")
        real_rc = _find_rc(test_log, marker)
        junit_xml = _find_junit(trailer, marker)
        grading = await anyio.to_thread.run_sync(
            grade_log, instance, spec, test_log, real_rc, junit_xml
        )
        details.update(grading)
        details.update(timed_out=False, patch_applied=True, test_exit_code=real_rc)
        if warm is not None and warm.failure:
            details["test_process"] = warm.failure
        details["test_output"] = tail(test_log, 100_000)
        return graded_outcome(instance, details, test_log)

    async def _verify_warm(
        self,
        instance: SWEInstance,
        patch: str,
        nonce: str,
        marker: str,
        junit: str,
        addopts: str,
        split: tuple[list[str], str, list[str]],
        started: float,
    ) -> tuple[ExecResult | None, WarmRun | None]:
        """Verify with the tests run in the runtime's zygote: the driver and the eval
        script's set-up in bash, the test command in a forked child, the clean-up in bash.
        The combined output is what the one-script driver would print. ``(None, None)``
        when the test command cannot run warm here (the caller runs it cold)."""
        ws = self.workspace
        pre, line, post = split
        await ws.sweep()  # type: ignore[attr-defined]
        pre_script = [*_EVAL_HEADER, *pre[:-1], capture_lines(nonce, line), pre[-1]]
        head = _driver_head(instance.base_commit, marker, junit, patch, False)
        files = {
            f"{IO_DIR}/patch.diff": patch.encode(),
            f"{IO_DIR}/eval-pre.sh": ("\n".join(pre_script) + "\n").encode(),
            f"{IO_DIR}/driver.sh": (head + f"bash {IO_DIR}/eval-pre.sh 2>&1\n").encode(),
        }
        first = await ws.run_with_files(
            files,
            f"bash {IO_DIR}/driver.sh",
            timeout_s=self.eval_timeout_s,
            env={"PYTEST_ADDOPTS": addopts},
            output_limit_bytes=self.output_limit_bytes,
        )
        if first.killed or first.timed_out or f"{marker}:eval@@" not in first.output:
            return first, None  # reset or apply failed, or the set-up hung: as the cold run
        cmd = await captured_command(ws, nonce)
        warm = None
        if cmd is not None:
            left = self.eval_timeout_s - (time.monotonic() - started)
            warm = await run_warm(
                ws,
                cmd,
                env={"PYTEST_ADDOPTS": addopts},
                timeout_s=max(1.0, left),
                output_limit_bytes=self.output_limit_bytes,
                output_cap_bytes=self.test_output_cap_bytes,
                file_limit_bytes=self.test_file_limit_bytes,
                prepare=True,
            )
        if warm is None:
            self._cold_reason = f"the test command {line!r} cannot run in the zygote here"
            log.info("%s: %s; tests run cold", instance.instance_id, self._cold_reason)
            return None, None
        out = first.output + warm.output
        if warm.timed_out or (warm.failure and warm.exit_code is None):
            return ExecResult(
                exit_code=None, output=out, timed_out=warm.timed_out, killed=warm.failure
            ), warm
        rc = warm.exit_code if warm.exit_code is not None else 1
        post_script = [*_EVAL_HEADER, f"SWEBENCH_TEST_EXIT_CODE={rc}", *post]
        left = self.eval_timeout_s - (time.monotonic() - started)
        last = await ws.run_with_files(
            {f"{IO_DIR}/eval-post.sh": ("\n".join(post_script) + "\n").encode()},
            f"bash {IO_DIR}/eval-post.sh 2>&1",
            timeout_s=max(30.0, left),
            output_limit_bytes=self.output_limit_bytes,
        )
        # the driver's tail, read through the runtime rather than run in bash
        report = ((await ws.read_files([junit])) or {}).get(junit)  # type: ignore[attr-defined]
        await ws.remove_files([junit])  # type: ignore[attr-defined]
        trailer = f"{marker}:end@@\n"
        if report is not None:
            trailer += f"{marker}:junit {base64.b64encode(report[:5_000_000]).decode()}@@\n"
        return ExecResult(
            exit_code=last.exit_code,
            output=out + last.output + trailer,
            timed_out=last.timed_out,
            killed=last.killed,
            seconds=time.monotonic() - started,
        ), warm


# ------------------------------------------------------------------ helpers


_EVAL_HEADER = ("#!/bin/bash", "set -uxo pipefail")
"""The first lines of an eval script (swebench strips them from ``eval_script_list``)."""


def _split_eval(lines: list[str]) -> tuple[list[str], str, list[str]] | None:
    """An eval script's lines as (set-up up to the start marker, the test command,
    everything after it) when the tests are one plain pytest command; else None."""
    from swebench.harness.constants import START_TEST_OUTPUT

    start = next((i for i, x in enumerate(lines) if START_TEST_OUTPUT in x), None)
    rc = next((i for i, x in enumerate(lines) if x.startswith("SWEBENCH_TEST_EXIT_CODE=$?")), None)
    if start is None or rc is None or rc != start + 2 or not warmable(lines[start + 1]):
        return None
    return lines[: start + 1], lines[start + 1], lines[rc + 1 :]


def _driver_head(
    base_commit: str, marker: str, junit: str, patch: str, kill_leftovers: bool
) -> str:
    """The start of a verify's driver: kill what earlier runs left (without the runtime:
    the runtime sweeps instead), reset to the image's state, apply the patch with
    swebench's chain; the eval script follows."""
    apply_lines = []
    for i, cmd in enumerate(_APPLY_CMDS):
        reset = "git checkout -q -- . ; git clean -fdq ; " if i else ""
        apply_lines.append(
            f'if [ "$applied" = 0 ]; then {reset}if {cmd} {IO_DIR}/patch.diff; '
            "then applied=1; fi; fi"
        )
    apply_block = "\n".join(apply_lines)
    kill = "kill -9 -1 2>/dev/null" if kill_leftovers else ""
    return f"""#!/bin/bash
cd {TESTBED} || {{ echo "{marker}:reset-failed@@"; exit 1; }}
# Leftover processes of earlier runs (PID 1 and this shell survive).
{kill}
{reset_command(base_commit)} || {{ echo "{marker}:reset-failed@@"; exit 1; }}
applied=0
if [ {1 if patch.strip() else 0} = 1 ]; then
{apply_block}
if [ "$applied" = 0 ] && git apply --check --reverse {IO_DIR}/patch.diff 2>/dev/null; then
  applied=1
fi
else
  applied=1
fi
if [ "$applied" = 0 ]; then echo "{marker}:apply-failed@@"; exit 0; fi
echo "{marker}:applied@@"
echo "{marker}:eval@@"
"""


def _driver_tail(marker: str, junit: str) -> str:
    """The end of a verify's driver, after the eval script: the end marker and the JUnit
    report."""
    return f"""echo "{marker}:end@@"
if [ -f {shlex.quote(junit)} ]; then
  echo "{marker}:junit $(head -c 5000000 {shlex.quote(junit)} | base64 -w0)@@"
fi
rm -f {shlex.quote(junit)}
"""


def _find_rc(log: str, marker: str) -> int | None:
    found = re.findall(re.escape(marker) + r":rc (-?\d+)@@", log)
    return int(found[-1]) if found else None


def _find_junit(trailer: str, marker: str) -> str | None:
    m = re.search(re.escape(marker) + r":junit ([A-Za-z0-9+/=]*)@@", trailer)
    if not m:
        return None
    try:
        return base64.b64decode(m.group(1)).decode("utf-8", errors="replace")
    except ValueError:
        return None
