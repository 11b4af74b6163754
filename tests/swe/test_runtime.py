"""The in-container runtime (atlas_actors.sandbox.runtime and incontainer/): the same
answers as one exec per command, warm test runs, hostile tests as a node's failure, the
fallback when it cannot start, and its programs on the oldest Python the images carry."""

from __future__ import annotations

import ast
import json
import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import atlas_actors.swe.workspace as workspace_module
from atlas_actors.config import SWESearchConfig
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.sandbox.runtime import INCONTAINER
from atlas_actors.search.solve import solve_task
from atlas_actors.swe.actions import Edit, ListFiles, RunCommand, Search, ViewFile
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.repair.batch import BatchEvaluator
from atlas_actors.swe.repair.localize import LocalizationCache, localize
from atlas_actors.types import Outcome

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = [
    *sorted(INCONTAINER.glob("atlas_*.py")),
    *sorted((ROOT / "atlas_actors" / "swe" / "repair" / "incontainer").glob("atlas_*.py")),
]
WRAP = "textkit/wrap.py"
BODY = '    if width < 1:\n        raise ValueError("width must be at least 1")\n'
BUG = "elif len(current) + 1 + len(word) < width:"
FIX = "elif len(current) + 1 + len(word) <= width:"
MakePatch = Callable[..., str]


def _hostile(make_patch: MakePatch, inst: SWEInstance, code: str) -> str:
    """The fix, plus ``code`` run by every call of ``wrap()`` (so by the tests)."""
    return make_patch(inst, {WRAP: [(BODY, code + BODY), (BUG, FIX)]})


def _report(o: Outcome) -> Any:
    return (o.success, o.partial_score, o.tests.model_dump() if o.tests else None)


async def _leftovers(env: SWEEnvironment) -> list[str]:
    """Processes in the container besides its init, the runtime and its zygotes."""
    out = await env.workspace.container.exec(  # type: ignore[attr-defined]
        [
            "bash",
            "-c",
            "for p in /proc/[0-9]*; do echo \"$(basename $p) $(tr '\\0' ' ' < $p/cmdline)\"; done",
        ],
        timeout_s=30,
    )
    keep = ("atlas_runtime.py", "atlas_zygote.py", "sleep 3600", "trap ", "/proc/[0-9]")
    rows = [r for r in out.output.splitlines() if r.strip() and len(r.split(" ", 1)) == 2]
    return [r for r in rows if r.split(" ", 1)[1].strip() and not any(k in r for k in keep)]


# ----------------------------------------------------------- oldest Python


def test_the_programs_parse_as_python_36() -> None:
    """Syntax (ast, feature_version 3.6) and the library names they use (vermin: nothing
    newer than 3.6 unless guarded)."""
    assert len(PROGRAMS) == 4
    for path in PROGRAMS:
        ast.parse(path.read_text(), filename=str(path), feature_version=(3, 6))
        assert "from __future__ import annotations" not in path.read_text(), path
    found = subprocess.run(
        [
            str(Path(sys.executable).with_name("vermin")),
            "--no-tips",
            "-t=3.6-",
            "--violations",
            *map(str, PROGRAMS),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stdout + found.stderr


@pytest.fixture(scope="session")
def bullseye_textkit(docker_host: str, examples: dict[str, SWEInstance]) -> SWEInstance:
    """The textkit example on Debian bullseye (Python 3.9, pytest 6): the base image by
    scripts/build-base-image with ATLAS_DEBIAN_SUITE=bullseye, both cached by tag."""
    import os

    env = {
        **os.environ,
        "ATLAS_DEBIAN_SUITE": "bullseye",
        "ATLAS_BASE_IMAGE": "atlas-swe-base:bullseye",
    }
    base = subprocess.run(
        [str(ROOT / "scripts" / "build-base-image")], env=env, capture_output=True, text=True,
        timeout=1800,
    )  # fmt: skip
    if base.returncode != 0:
        pytest.fail(f"building the bullseye base image failed:\n{base.stderr[-3000:]}")
    inst = examples["textkit"].model_copy(
        update={"image": "atlas-swe-eval/atlas-examples__textkit-1:bullseye"}
    )
    code = (
        "import anyio, pathlib, sys; from atlas_actors.swe.build import build_instance_image; "
        "from atlas_actors.swe.instances import SWEInstance; "
        "inst = SWEInstance.model_validate_json(sys.stdin.read()); "
        "anyio.run(lambda: build_instance_image(inst, pathlib.Path(inst.local_repo), "
        "base_image='atlas-swe-base:bullseye'))"
    )
    built = subprocess.run(
        [sys.executable, "-c", code], input=inst.model_dump_json(), capture_output=True,
        text=True, timeout=900,
    )  # fmt: skip
    if built.returncode != 0:
        pytest.fail(f"building the bullseye textkit image failed:\n{built.stderr[-3000:]}")
    return inst


async def test_the_runtime_and_warm_tests_run_on_bullseyes_python(
    bullseye_textkit: SWEInstance,
) -> None:
    async with SWEEnvironment(eval_timeout_s=120) as env:
        await env.reset(bullseye_textkit.to_task())
        runtime = env.workspace.runtime  # type: ignore[attr-defined]
        assert runtime is not None
        assert runtime.client.hello["python"].startswith("3.9.")
        gold = await env.verify(bullseye_textkit.patch)
        assert gold.success and gold.details["tests_run"] == "warm", gold.feedback
        assert not (await env.verify("")).success


# ------------------------------------------------------- same answers


async def test_transitions_and_verdicts_are_the_same_through_the_runtime_and_exec(
    docker_host: str, examples: dict[str, SWEInstance], make_patch: MakePatch
) -> None:
    """Every bundled example: the same states, diffs, observations and test reports."""
    for name, inst in examples.items():
        path = inst.patch.split("+++ b/", 1)[1].split("\n", 1)[0]
        bug = next(
            line[1:]
            for line in inst.patch.splitlines()
            if line.startswith("-") and not line.startswith("---")
        )
        seen: dict[bool, list[Any]] = {}
        for runtime in (True, False):
            async with SWEEnvironment(runtime=runtime, eval_timeout_s=120) as env:
                await env.reset(inst.to_task())
                assert (env.workspace.runtime is not None) is runtime  # type: ignore[attr-defined]
                root = await env.get_state()
                got: list[Any] = [root]
                for action in (
                    Edit(path=path, old=bug, new=bug + "  # wrong"),
                    ViewFile(path=path, start=1, end=30),
                    Search(pattern="def ", path="."),
                    ListFiles(path="."),
                    RunCommand(command="git status --short; echo done", timeout_s=30),
                ):
                    obs, _, _, info = await env.step(action)
                    got.append((obs, info.get("ok")))
                state = await env.get_state()
                got.append(state)
                await env.set_state(root)
                got.append(await env.get_state())
                for patch in (inst.patch, "", state["patch"], "not a patch"):
                    outcome = await env.verify(patch)
                    got.append(_report(outcome))
                    if runtime and patch.strip() == inst.patch.strip():
                        assert outcome.details["tests_run"] == "warm"
                seen[runtime] = got
        assert seen[True] == seen[False], name


async def test_a_seeded_search_grows_the_same_tree_through_either_path(
    docker_host: str, examples: dict[str, SWEInstance], tmp_path: Path
) -> None:
    trees = []
    for runtime in (True, False):
        evaluator = LocalEvaluator(lambda t, r=runtime: SWEEnvironment(runtime=r), max_tasks=1)
        out = tmp_path / str(runtime)
        try:
            result = await solve_task(
                examples["datecalc"].to_task(),  # two edits deep: a tree, not a lucky child
                evaluator,
                seed=3,
                tree_dir=out,
                mcts=SWESearchConfig(
                    max_expansions=6, children_per_expansion=3, parallel_expansions=1,
                    rollout_depth=0,
                ),
            )  # fmt: skip
        finally:
            await evaluator.aclose()
        assert result.error is None, result
        tree = json.loads(next(out.glob("*.json")).read_text())
        trees.append(
            [(n["key"], n.get("parent"), (n.get("outcome") or {}).get("partial_score"))
             for n in tree["nodes"]]
        )  # fmt: skip
    assert trees[0] == trees[1]
    assert len(trees[0]) > 2


async def test_warm_localisation_and_screen_agree_with_cold_ones(
    test_instance_images: str, test_instances: dict[str, SWEInstance]
) -> None:
    """On ``measures`` (its conftest imports the package): the same ranking; every mutant
    of the package (each changes a method's body) is swapped in the worker (the loaded
    functions given the new code) and gets the verdicts a fresh interpreter gives."""
    inst = test_instances["measures"]
    seen = []
    for runtime in (True, False):
        async with SWEEnvironment(runtime=runtime, eval_timeout_s=120) as env:
            await env.reset(inst.to_task())
            loc = await localize(env, cache=LocalizationCache())
            source = (await env.read_files(["measures/quantity.py"]))["measures/quantity.py"]
            assert source is not None
            cands: list[Any] = [
                {"measures/quantity.py": source.replace(a, b, 1)}
                for a, b in (
                    ("self.value < other.value", "self.value < self._common(other).value"),
                    ("self.value < other.value", "self.value > other.value"),
                    ("return Quantity(self.value + ", "return Quantity(self.value - "),
                )
            ]
            ev = BatchEvaluator()
            results = await ev.evaluate(env, None, cands, baseline=loc)
            fresh = await BatchEvaluator(fresh=True).evaluate(env, None, cands, baseline=loc)
            assert [r.mode for r in results] == ["swap"] * 3
            assert [r.passed for r in results] == [True, False, False]
            verdicts = [[(t.test, t.outcome) for t in r.tests] for r in results]
            assert verdicts == [[(t.test, t.outcome) for t in r.tests] for r in fresh]
            assert ev.stats.warm == [runtime]
            seen.append(([(x.path, x.line) for x in loc.lines[:10]], loc.failing, verdicts))
    assert seen[0] == seen[1]


# ------------------------------------------------------------- hostile tests


HOSTILE = {
    "kills every process": ("    import os\n    os.system('kill -9 -1')\n", "runtime"),
    "fork bomb": (
        "    import os\n    while True:\n        try:\n            os.fork()\n"
        "        except OSError:\n            pass\n",
        "timeout",
    ),
    "infinite loop": ("    while width:\n        pass\n", "timeout"),
    "1 GB of output": (
        "    import os\n    for _ in range(1024):\n        os.write(1, b'x' * 2**20)\n",
        "file size limit",
    ),
    "closes stdout": (
        "    import os, sys\n    os.close(1)\n    os.close(2)\n    sys.stdout.close()\n",
        "",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_a_hostile_test_is_a_node_failure_and_the_next_node_runs(
    name: str, docker_host: str, examples: dict[str, SWEInstance], make_patch: MakePatch
) -> None:
    inst = examples["textkit"]
    code, reason = HOSTILE[name]
    async with SWEEnvironment(eval_timeout_s=8, pids=128, test_file_limit_mb=64) as env:
        await env.reset(inst.to_task())
        out = await env.verify(_hostile(make_patch, inst, code))
        assert not out.success, out.feedback
        text = out.feedback + json.dumps(out.details, default=str)
        assert reason in text, text[-3000:]
        assert await _leftovers(env) == []
        assert (await env.verify(inst.patch)).success  # the next node runs normally
        assert await _leftovers(env) == []


async def test_a_command_that_kills_the_runtime_is_retried_once_then_reported(
    docker_host: str, examples: dict[str, SWEInstance]
) -> None:
    async with SWEEnvironment() as env:
        await env.reset(examples["textkit"].to_task())
        runtime = env.workspace.runtime  # type: ignore[attr-defined]
        starts = runtime.starts
        obs, _, _, info = await env.step(RunCommand(command="kill -9 -1", timeout_s=10))
        assert info["ok"] is False and "died twice" in obs, obs
        assert runtime.starts == starts + 1  # restarted for the retry
        obs, _, _, info = await env.step(RunCommand(command="echo still here", timeout_s=10))
        assert info["ok"] is True and "still here" in obs
        assert runtime.starts == starts + 2  # and again for the next call


async def test_a_timed_out_command_leaves_no_process(
    docker_host: str, examples: dict[str, SWEInstance]
) -> None:
    async with SWEEnvironment() as env:
        await env.reset(examples["textkit"].to_task())
        cmd = "setsid sleep 300 & (sleep 301 &) ; sleep 302"
        obs, _, _, info = await env.step(RunCommand(command=cmd, timeout_s=2))
        assert info["timed_out"] is True, obs
        assert await _leftovers(env) == []


# ----------------------------------------------------------------- fallback


async def test_without_a_runtime_the_exec_path_runs_and_says_so_once(
    docker_host: str,
    examples: dict[str, SWEInstance],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(
        workspace_module, "boot_command", lambda prepare: "exec /no/such/python3 runtime.py"
    )
    monkeypatch.setattr(workspace_module, "_FELL_BACK", set())
    inst = examples["intervals"]
    with caplog.at_level(logging.WARNING, logger="atlas_actors.swe.workspace"):
        for _ in range(2):
            async with SWEEnvironment() as env:
                await env.reset(inst.to_task())
                assert env.workspace.runtime is None  # type: ignore[attr-defined]
                out = await env.verify(inst.patch)
                assert out.success and out.details["tests_run"] == "cold"
    said = [r for r in caplog.records if "runtime cannot run here" in r.getMessage()]
    assert len(said) == 1 and inst.image in said[0].getMessage()


async def test_a_cancelled_call_does_not_desynchronise_the_next_one(
    docker_host: str, examples: dict[str, SWEInstance]
) -> None:
    """A search that stops cancels calls in flight: their answers, when they come, are
    skipped, and the next call gets its own."""
    import anyio

    async with SWEEnvironment() as env:
        await env.reset(examples["textkit"].to_task())
        ws: Any = env.workspace
        with anyio.move_on_after(0.5):
            await ws.run("sleep 2; echo late", timeout_s=30)
        r = await ws.run("echo mine", timeout_s=30)
        assert r.ok and r.output == "mine\n", r
        with anyio.move_on_after(0.3):
            await env.verify(examples["textkit"].patch)
        assert (await env.verify("")).success is False
        assert (await env.verify(examples["textkit"].patch)).success
