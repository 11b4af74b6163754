"""SWEEnvironment against a real dockerd (and the bubblewrap backend), on the example
instances: verdicts, containment, cleanup, state and actions."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.errors import InvalidSolutionError
from atlas_actors.sandbox.docker import DockerClient
from atlas_actors.swe.environment import (
    ApplyPatch,
    Edit,
    ListFiles,
    RunCommand,
    Search,
    Submit,
    SWEEnvironment,
    ViewFile,
)
from atlas_actors.swe.evaluate import grade_predictions
from atlas_actors.swe.instances import SWEInstance

# The first test also pays for the one-time set-up (docker.io install, debootstrap of the
# base image: minutes on a fresh machine); every Docker call inside a test is bounded anyway.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1200)]

MakePatch = Callable[..., str]

WRAP = "textkit/wrap.py"
BUG = "elif len(current) + 1 + len(word) < width:"
FIX = "elif len(current) + 1 + len(word) <= width:"
BODY = '    if width < 1:\n        raise ValueError("width must be at least 1")\n'


def wrap_patch(make_patch: MakePatch, inst: SWEInstance, prefix: str, fix: bool = False) -> str:
    edits = [(BODY, prefix + BODY)]
    if fix:
        edits.append((BUG, FIX))
    return make_patch(inst, {WRAP: edits})


@pytest.fixture(params=["docker", "bubblewrap"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_host")
    return str(request.param)


@pytest.fixture
async def textkit_env(
    backend: str, examples: dict[str, SWEInstance]
) -> AsyncIterator[SWEEnvironment]:
    async with SWEEnvironment(backend=backend, eval_timeout_s=60) as env:  # type: ignore[arg-type]
        await env.reset(examples["textkit"].to_task())
        yield env


async def _count(run: str | None = None) -> int:
    async with DockerClient() as d:
        return len(await d.list_containers(run))


# ---------------------------------------------------------------- verdicts


async def test_gold_patch_resolves_every_example(
    docker_host: str, examples: dict[str, SWEInstance]
) -> None:
    for name, inst in examples.items():
        async with SWEEnvironment() as env:
            statement = await env.reset(inst.to_task())
            assert statement == inst.problem_statement
            out = await env.verify(inst.patch)
            assert out.success, (name, out.feedback)
            assert out.partial_score == 1.0
            assert out.details["tests_status"]["FAIL_TO_PASS"]["success"] == inst.FAIL_TO_PASS
            assert out.details["tampered"] == []
            assert out.details["junit_checked"] is True


async def test_gold_resolves(textkit_env: SWEEnvironment, examples: dict[str, SWEInstance]) -> None:
    patch = examples["textkit"].patch
    out = await textkit_env.verify(patch)
    assert out.success and out.partial_score == 1.0, out.feedback
    # the size the search's tie-break reads: the lines the patch removes and adds
    changed = [ln for ln in patch.splitlines() if ln[:1] in "+-" and ln[:4] not in ("+++ ", "--- ")]
    assert out.size == len(changed) > 0


async def test_empty_patch_unresolved_names_failing_tests(
    textkit_env: SWEEnvironment, examples: dict[str, SWEInstance]
) -> None:
    inst = examples["textkit"]
    out = await textkit_env.verify("")
    assert not out.success and out.size == 0
    for test in inst.FAIL_TO_PASS:
        assert test in out.feedback
    graded = len(inst.FAIL_TO_PASS) + len(inst.PASS_TO_PASS)
    assert out.partial_score == pytest.approx(len(inst.PASS_TO_PASS) / graded)
    assert "AssertionError" in out.feedback or "assert" in out.feedback


async def test_fix_that_breaks_a_passing_test_gets_partial_score(
    textkit_env: SWEEnvironment, examples: dict[str, SWEInstance], make_patch: MakePatch
) -> None:
    inst = examples["textkit"]
    patch = make_patch(
        inst, {WRAP: [(BUG, FIX), ('return "-".join(words)', 'return "_".join(words)')]}
    )
    out = await textkit_env.verify(patch)
    assert not out.success
    graded = len(inst.FAIL_TO_PASS) + len(inst.PASS_TO_PASS)
    assert out.partial_score == pytest.approx((graded - 1) / graded)
    assert out.details["tests_status"]["PASS_TO_PASS"]["failure"] == [
        "tests/test_wrap.py::test_slugify"
    ]
    assert "PASS_TO_PASS tests now failing: tests/test_wrap.py::test_slugify" in out.feedback


async def test_patch_that_does_not_apply_is_a_failed_outcome(
    textkit_env: SWEEnvironment, examples: dict[str, SWEInstance]
) -> None:
    bad = examples["textkit"].patch.replace("-        elif", "-        ELIF")
    out = await textkit_env.verify(bad)
    assert not out.success and out.partial_score == 0.0
    assert out.details["patch_applied"] is False
    assert "does not apply" in out.feedback
    # The environment still works afterwards.
    assert (await textkit_env.verify(examples["textkit"].patch)).success


@pytest.mark.parametrize("fake_exit_zero", [False, True])
async def test_fake_passed_lines_do_not_pass(
    textkit_env: SWEEnvironment,
    examples: dict[str, SWEInstance],
    fake_exit_zero: bool,
    make_patch: MakePatch,
) -> None:
    inst = examples["textkit"]
    lines = "".join(f'    print("PASSED {t}")\n' for t in inst.FAIL_TO_PASS + inst.PASS_TO_PASS)
    conftest = "import os\n\n\ndef pytest_unconfigure(config):\n" + lines
    if fake_exit_zero:
        conftest += "    import sys\n    sys.stdout.flush()\n    os._exit(0)\n"
    out = await textkit_env.verify(make_patch(inst, {"conftest.py": [("", conftest)]}))
    assert not out.success, out.feedback
    assert out.partial_score == 0.0
    assert out.details["tampered"], out.details
    assert "test log rejected" in out.feedback


# ------------------------------------------------------------- containment


async def test_hanging_test_times_out_and_container_is_replaced(
    backend: str, examples: dict[str, SWEInstance], make_patch: MakePatch
) -> None:
    """Without the in-container runtime (exec path; tests/swe/test_runtime.py has the
    runtime's own: no container replaced, no process left)."""
    inst = examples["textkit"]
    async with SWEEnvironment(backend=backend, eval_timeout_s=6, runtime=False) as env:  # type: ignore[arg-type]
        await env.reset(inst.to_task())
        if backend == "docker":
            before = env.workspace.container.id  # type: ignore[attr-defined]
        out = await env.verify(wrap_patch(make_patch, inst, "    while width:\n        pass\n"))
        assert not out.success and out.details["timed_out"] is True
        assert "timeout" in out.feedback
        if backend == "docker":
            assert env.workspace.container.id != before  # type: ignore[attr-defined]
            async with DockerClient() as d:
                ids = await d.list_containers(env.run_label)
            assert ids == [env.workspace.container.id]  # type: ignore[attr-defined]
        # A new verify works in the replacement.
        assert (await env.verify(inst.patch)).success


@pytest.fixture(params=["docker", "bubblewrap"])
def contained_backend(request: pytest.FixtureRequest) -> str:
    """Backends that contain fork bombs here (bubblewrap only with a pids cgroup)."""
    if request.param == "docker":
        request.getfixturevalue("docker_host")
    else:
        from atlas_actors.sandbox import _bwrap

        if _bwrap._pids_cgroup_base() is None:
            pytest.skip("no writable pids cgroup: bubblewrap cannot cap processes as root")
    return str(request.param)


async def test_fork_bomb_is_contained(
    contained_backend: str, examples: dict[str, SWEInstance], make_patch: MakePatch
) -> None:
    inst = examples["textkit"]
    bomb = (
        "    import os\n    while True:\n        try:\n            os.fork()\n"
        "        except OSError:\n            pass\n"
    )
    async with SWEEnvironment(backend=contained_backend, eval_timeout_s=6, pids=128) as env:  # type: ignore[arg-type]
        await env.reset(inst.to_task())
        out = await env.verify(wrap_patch(make_patch, inst, bomb, fix=True))
        assert not out.success
        # The host is fine: it can still start processes, and the environment recovers.
        assert subprocess.run(["true"], timeout=10).returncode == 0
        assert (await env.verify(inst.patch)).success


async def test_10gb_allocation_is_contained(
    contained_backend: str, examples: dict[str, SWEInstance], make_patch: MakePatch
) -> None:
    inst = examples["textkit"]
    async with SWEEnvironment(backend=contained_backend, eval_timeout_s=60, memory_mb=512) as env:  # type: ignore[arg-type]
        await env.reset(inst.to_task())
        big = '    _ = b"x" * (10 * 1024**3)\n'
        out = await env.verify(wrap_patch(make_patch, inst, big, fix=True))
        assert not out.success
        assert out.partial_score < 1.0
        assert (await env.verify(inst.patch)).success


async def test_fresh_container_per_verify(
    docker_host: str, examples: dict[str, SWEInstance]
) -> None:
    inst = examples["exprcalc"]
    async with SWEEnvironment(fresh_container_per_verify=True) as env:
        await env.reset(inst.to_task())
        assert (await env.verify(inst.patch)).success
        assert not (await env.verify("")).success
        assert env.workspace.starts == 2  # type: ignore[attr-defined]
        async with DockerClient() as d:
            assert len(await d.list_containers(env.run_label)) == 1


async def test_no_container_left_after_runs(
    docker_host: str, examples: dict[str, SWEInstance]
) -> None:
    env = SWEEnvironment(eval_timeout_s=5)
    try:
        await env.reset(examples["intervals"].to_task())
        assert await _count(env.run_label) == 1
        await env.verify(examples["intervals"].patch)
        await env.reset(examples["datecalc"].to_task())  # switching task replaces it
        assert await _count(env.run_label) == 1
    finally:
        await env.aclose()
    assert await _count(env.run_label) == 0
    async with DockerClient() as d:  # the reaper removes a run's leftovers by label
        from atlas_actors.sandbox.docker import Container

        c = Container(d, examples["datecalc"].image, run="reap-test")
        await c.start()
        assert await d.reap("reap-test") == 1
        assert await d.list_containers("reap-test") == []


# --------------------------------------------------------- state and steps


async def test_state_round_trip(
    textkit_env: SWEEnvironment, examples: dict[str, SWEInstance]
) -> None:
    inst = examples["textkit"]
    obs, _, _, info = await textkit_env.step(Edit(path=WRAP, old=BUG, new=FIX))
    assert info["ok"], obs
    state = await textkit_env.get_state()
    assert FIX in state["patch"] and state["instance_id"] == inst.instance_id
    json.dumps(state)  # JSON values only
    # A verify in between does not disturb the agent's tree.
    assert (await textkit_env.verify("")).success is False
    assert (await textkit_env.get_state())["patch"] == state["patch"]
    # Branch: back to a clean tree, then restore the state.
    await textkit_env.set_state({"patch": "", "steps": 0})
    obs, *_ = await textkit_env.step(ViewFile(path=WRAP, start=18, end=18))
    assert "<" in obs and "<=" not in obs
    await textkit_env.set_state(state)
    obs, *_ = await textkit_env.step(ViewFile(path=WRAP, start=18, end=18))
    assert "<=" in obs
    assert (await textkit_env.verify(state["patch"])).success
    with pytest.raises(InvalidSolutionError):
        await textkit_env.set_state({"patch": "not a patch\n"})


async def test_each_step_action(
    textkit_env: SWEEnvironment, examples: dict[str, SWEInstance]
) -> None:
    env = textkit_env
    obs, reward, done, info = await env.step(ListFiles())
    assert "textkit/wrap.py" in obs and "tests/test_wrap.py" in obs and reward == 0.0
    obs, *_ = await env.step({"kind": "view", "path": WRAP, "start": 6, "end": 7})
    assert obs.splitlines()[0].strip().startswith("6") and len(obs.splitlines()) == 2
    obs, *_ = await env.step(ViewFile(path="missing.py"))
    assert "no such file" in obs
    obs, _, _, info = await env.step(Edit(path=WRAP, old="nothing like this", new="x"))
    assert not info["ok"] and "not found" in obs
    for missing in ("missing.py", "textkit"):  # no file; a directory
        obs, _, _, info = await env.step(Edit(path=missing, old="a", new="b"))
        assert not info["ok"] and obs == f"no such file: {missing}"
    obs, _, _, info = await env.step(RunCommand(command="echo hi; exit 3"))
    assert "hi" in obs and info["exit_code"] == 3
    obs, _, _, info = await env.step(RunCommand(command="sleep 30", timeout_s=1))
    assert info["timed_out"] and "timed out" in obs
    obs, _, _, info = await env.step(ApplyPatch(patch=examples["textkit"].patch))
    assert info["ok"], obs
    obs, _, _, info = await env.step(Edit(path="NOTES.md", old="", new="notes\n"))
    assert info["ok"]
    assert "NOTES.md" in (await env.get_state())["patch"]
    with pytest.raises(InvalidSolutionError):
        await env.step(ViewFile(path="/etc/passwd"))
    with pytest.raises(InvalidSolutionError):
        await env.step({"kind": "fly"})
    obs, reward, done, info = await env.step(Submit())
    assert done and reward == 1.0 and info["outcome"]["success"], obs


async def test_search_action(textkit_env: SWEEnvironment) -> None:
    env = textkit_env
    obs, _, _, info = await env.step(Search(pattern="len(current) + 1", fixed=True))
    assert info["ok"] and info["matches"] == 1 and obs.startswith("textkit/wrap.py:18:"), obs
    obs, _, _, info = await env.step({"kind": "search", "pattern": "^def (wrap|slugify)"})
    assert "textkit/wrap.py" in obs and info["matches"] >= 2, obs
    obs, _, _, info = await env.step(Search(pattern="def", path="tests", max_matches=2))
    assert obs.count("tests/test_wrap.py:") == 2 and "more than 2 matches" in obs, obs
    obs, _, _, info = await env.step(Search(pattern="no such text anywhere"))
    assert info["matches"] == 0 and "no matches" in obs
    obs, _, _, info = await env.step(Search(pattern="([unclosed"))
    assert not info["ok"], obs
    with pytest.raises(InvalidSolutionError, match="outside"):
        await env.step(Search(pattern="root", path="/etc"))
    assert (await env.get_state())["patch"] == ""


# ------------------------------------------------------------- evaluation


@pytest.mark.parametrize("workers", [1, 2])
async def test_grade_predictions(
    docker_host: str, examples: dict[str, SWEInstance], tmp_path: Path, workers: int
) -> None:
    insts = list(examples.values())
    preds = [
        {"instance_id": examples["textkit"].instance_id, "model_name_or_path": "m",
         "model_patch": examples["textkit"].patch},
        {"instance_id": examples["intervals"].instance_id, "model_name_or_path": "m",
         "model_patch": examples["intervals"].patch},
        {"instance_id": examples["exprcalc"].instance_id, "model_name_or_path": "m",
         "model_patch": ""},
        {"instance_id": examples["datecalc"].instance_id, "model_name_or_path": "m",
         "model_patch": examples["textkit"].patch},  # wrong repo: does not apply
    ]  # fmt: skip
    evaluators = [
        LocalEvaluator(factory=lambda t: SWEEnvironment(eval_timeout_s=60), max_tasks=1)
        for _ in range(workers)
    ]
    seen: list[tuple[int, int, str, str]] = []
    try:
        report = await grade_predictions(
            insts, preds, tmp_path, evaluators, progress=lambda *a: seen.append(a)
        )
    finally:
        for ev in evaluators:
            await ev.aclose()
    assert report["resolved_ids"] == sorted(
        [examples["textkit"].instance_id, examples["intervals"].instance_id]
    )
    assert report["unresolved_ids"] == [examples["datecalc"].instance_id]
    assert report["empty_patch_ids"] == [examples["exprcalc"].instance_id]
    assert report["error_ids"] == []
    assert json.loads((tmp_path / "report.json").read_text()) == report
    iid = examples["textkit"].instance_id
    assert (tmp_path / "logs" / iid / "patch.diff").read_text() == examples["textkit"].patch
    assert "passed" in (tmp_path / "logs" / iid / "test_output.txt").read_text()
    assert len(seen) == 4 and seen[-1][0] == 4
    # Resuming does not redo finished work.
    again = await grade_predictions(insts, preds, tmp_path, LocalEvaluator(factory=_boom))
    assert again["resolved_ids"] == report["resolved_ids"]


def _boom(task: object) -> SWEEnvironment:
    raise AssertionError("a resumed run must not evaluate again")


# ------------------------------------------------------ instances from a repo


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        timeout=60,
    )


async def test_build_instance_from_a_local_repository(docker_host: str, tmp_path: Path) -> None:
    from atlas_actors.swe.build import make_instance_from_repo

    repo = tmp_path / "stats"
    (repo / "stats").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "stats" / "__init__.py").write_text(
        "def median(xs):\n    xs = sorted(xs)\n    return xs[len(xs) // 2]\n"
    )
    (repo / "tests" / "test_stats.py").write_text(
        "from stats import median\n\n\ndef test_odd():\n    assert median([3, 1, 2]) == 2\n"
    )
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    (repo / "stats" / "__init__.py").write_text(
        "def median(xs):\n    xs = sorted(xs)\n    n = len(xs)\n"
        "    if n % 2 == 0:\n        return (xs[n // 2 - 1] + xs[n // 2]) / 2\n"
        "    return xs[n // 2]\n"
    )
    with (repo / "tests" / "test_stats.py").open("a") as f:
        f.write("\n\ndef test_even():\n    assert median([4, 1, 3, 2]) == 2.5\n")
    _git(repo, "commit", "-qam", "median of an even-sized list averages the middle pair")
    inst = await make_instance_from_repo(
        repo, "HEAD", tmp_path / "out", instance_id="stats-1", force=True
    )
    assert inst.FAIL_TO_PASS == ["tests/test_stats.py::test_even"]
    assert inst.PASS_TO_PASS == ["tests/test_stats.py::test_odd"]
    assert inst.problem_statement.startswith("median of an even-sized list")
    saved = json.loads((tmp_path / "out" / "stats-1" / "instance.json").read_text())
    assert saved["FAIL_TO_PASS"] == inst.FAIL_TO_PASS
    async with SWEEnvironment() as env:
        await env.reset(inst.to_task())
        assert (await env.verify(inst.patch)).success
        assert not (await env.verify("")).success
    async with DockerClient() as d:
        await d.remove_image(inst.image)


@pytest.mark.parametrize("ray", [False, True])
def test_swe_eval_cli(
    docker_host: str,
    examples: dict[str, SWEInstance],
    tmp_path: Path,
    ray: bool,
    request: pytest.FixtureRequest,
) -> None:
    from atlas_actors.cli import main

    if ray:
        request.getfixturevalue("ray_session")
    inst_file = tmp_path / "instances.jsonl"
    pred_file = tmp_path / "preds.jsonl"
    chosen = [examples["textkit"], examples["datecalc"]]
    inst_file.write_text("".join(i.model_dump_json() + "\n" for i in chosen))
    pred_file.write_text(
        json.dumps({"instance_id": chosen[0].instance_id, "model_name_or_path": "m",
                    "model_patch": chosen[0].patch}) + "\n"
        + json.dumps({"instance_id": chosen[1].instance_id, "model_name_or_path": "m",
                      "model_patch": chosen[0].patch}) + "\n"
    )  # fmt: skip
    argv = ["swe-eval", "--instances", str(inst_file), "--predictions", str(pred_file),
            "--out", str(tmp_path / "out"), "--workers", "2", "--quiet"]  # fmt: skip
    assert main([*argv, *([] if ray else ["--no-ray"])]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["resolved_ids"] == [chosen[0].instance_id]
    assert report["unresolved_ids"] == [chosen[1].instance_id]
