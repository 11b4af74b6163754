"""The batch candidate evaluator in real workspaces (Docker and bubblewrap): verdicts in
order, files restored, hostile candidates contained, agreement with the full verify."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from atlas_actors.errors import ConfigError
from atlas_actors.swe.environment import Edit
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.repair.batch import (
    BatchEvaluator,
    CandidateLike,
    CandidatePatch,
    CandidateResult,
    as_candidate,
)
from atlas_actors.swe.repair.localize import localize
from tests.swe.repair.repair_cases import base_text


def in_workspaces(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Marks for the tests that run in real workspaces."""
    for mark in (pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1200)):
        fn = mark(fn)
    return fn


WRAP = "textkit/wrap.py"
BUG = "elif len(current) + 1 + len(word) < width:"
FIXED = "elif len(current) + 1 + len(word) <= width:"
BODY = '    if width < 1:\n        raise ValueError("width must be at least 1")\n'
F2P_FIRST = "tests/test_wrap.py::test_wrap_exact_width_lines"
MakePatch = Callable[..., str]


def wrap_variants(inst: SWEInstance) -> dict[str, str]:
    """textkit/wrap.py: the fix, and candidates that break, do not compile, hang, fork
    without end, fill the disk, hang at import, or kill the worker."""
    src = base_text(inst, WRAP)
    fix = src.replace(BUG, FIXED)

    def prefix(code: str) -> str:
        return fix.replace(BODY, code + BODY)

    return {
        "fix": fix,
        "breaks": fix.replace('return "-".join(words)', 'return "_".join(words)'),
        "syntax": src.replace(BUG, FIXED[:-1]),
        "hangs": src.replace(BUG, "elif any(x for x in iter(int, 1)):"),
        "forks": prefix(
            "    import os\n    while True:\n        try:\n            os.fork()\n"
            "        except OSError:\n            pass\n"
        ),
        "fills": prefix(
            '    with open("big.bin", "wb") as f:\n        while True:\n'
            '            f.write(b"x" * (1 << 20))\n'
        ),
        "litters": prefix('    open("litter.txt", "w").close()\n'),
        "import_hangs": fix + "\nwhile True:\n    pass\n",
        "kills_worker": prefix(
            "    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n"
        ),
    }


async def _git_status(env: Any) -> str:
    r = await env.workspace.run("git status --porcelain --untracked-files=all", timeout_s=60)
    assert r.ok, r.output
    return str(r.output.strip())


def _outcomes(r: CandidateResult) -> list[str]:
    return [t.outcome for t in r.tests]


@in_workspaces
async def test_verdicts_in_order_and_files_restored(
    backend: str,
    examples: dict[str, SWEInstance],
    env_factory: Callable[..., Any],
) -> None:
    inst = examples["textkit"]
    v = wrap_variants(inst)
    ev = BatchEvaluator()
    cands: list[CandidateLike] = [
        {WRAP: v["fix"]},
        {WRAP: v["breaks"]},
        CandidatePatch(files={WRAP: v["syntax"]}, label="syntax"),
        {WRAP: v["hangs"]},
        inst.patch,  # the gold fix, as a diff
        {WRAP: base_text(inst, WRAP)},  # unchanged: the bug is still there
    ]
    async with env_factory("textkit", backend) as env:
        loc = await localize(env, cache=None)  # baseline durations: 1 s timeouts here
        results = await ev.evaluate(env, None, cands, baseline=loc)
        assert ev.stats.execs == 1 and ev.stats.modes == ["fork"]
        assert ev.stats.cpu_seconds > ev.stats.worker_cpu_seconds > 0
        # The workspace is back at the base commit, nothing left behind.
        assert await _git_status(env) == ""
        assert (await env.workspace.read_file(f"/testbed/{WRAP}")).decode() == base_text(inst, WRAP)
    tests = [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS]
    fix, breaks, syntax, hangs, gold, unchanged = results
    assert [r.index for r in results] == list(range(6))
    assert fix.passed and _outcomes(fix) == ["passed"] * len(tests) and fix.mode == "fork"
    assert fix.patch is not None and "+        " + FIXED in fix.patch
    # Breaking: the failing tests pass, then the first regression stops it.
    assert not breaks.passed and breaks.compiled
    failure = breaks.first_failure
    assert failure is not None and failure.test == "tests/test_wrap.py::test_slugify"
    assert failure.outcome == "failed" and "hello_world" in failure.message
    # where in the test it failed: its assertion's line in the test file
    test_lines = base_text(inst, "tests/test_wrap.py").splitlines()
    assert test_lines[failure.line - 1].strip().startswith('assert slugify("Hello, World!")')
    assert breaks.tests[-1] is failure and all(t.passed for t in breaks.tests[:-1])
    assert breaks.not_run == tests[len(breaks.tests) :] and breaks.patch is None
    # Not compiling: no test ran.
    assert syntax.applied and not syntax.compiled and syntax.tests == []
    assert "SyntaxError" in syntax.error and syntax.label == "syntax"
    # Hanging: the first failing test times out (1 s minimum), the candidate stops.
    assert _outcomes(hangs) == ["timeout"] and hangs.timed_out and hangs.tests[0].seconds == 1.0
    assert hangs.seconds < 5
    assert gold.passed and gold.patch == inst.patch
    assert _outcomes(unchanged) == ["failed"] and unchanged.first_failure is not None
    assert unchanged.first_failure.test == F2P_FIRST


@in_workspaces
async def test_forks_full_disks_and_litter_cost_only_their_candidate(
    backend: str,
    examples: dict[str, SWEInstance],
    env_factory: Callable[..., Any],
) -> None:
    inst = examples["textkit"]
    v = wrap_variants(inst)
    ev = BatchEvaluator(file_limit_mb=8, collect_min_s=3, default_timeout_s=2)
    names = ["forks", "fix", "fills", "fix", "litters", "import_hangs", "fix"]
    async with env_factory("textkit", backend) as env:
        results = await ev.evaluate(env, None, [{WRAP: v[n]} for n in names])
        assert await _git_status(env) == ""
    forks, fix1, fills, fix2, litters, import_hangs, fix3 = results
    assert ev.stats.execs == 1
    assert not forks.passed and forks.tests[-1].outcome in ("timeout", "crashed")
    assert not fills.passed and fills.tests[-1].outcome == "crashed"
    assert "file size" in fills.tests[-1].message and "big.bin" in fills.removed
    assert litters.passed and litters.removed == ["litter.txt"]
    assert _outcomes(import_hangs) == ["timeout"]
    assert "collection" in import_hangs.tests[0].message
    assert fix1.passed and fix2.passed and fix3.passed
    # The host is fine: it still starts processes.
    assert subprocess.run(["true"], timeout=10).returncode == 0


@in_workspaces
async def test_a_candidate_that_kills_the_worker_costs_one_exec(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    inst = examples["textkit"]
    v = wrap_variants(inst)
    ev = BatchEvaluator(default_timeout_s=2)
    async with env_factory("textkit", "docker") as env:
        results = await ev.evaluate(
            env, None, [{WRAP: v["fix"]}, {WRAP: v["kills_worker"]}, {WRAP: v["fix"]}]
        )
        assert await _git_status(env) == ""
    assert [r.passed for r in results] == [True, False, True]
    assert "worker stopped" in results[1].error and results[1].tests == []
    assert ev.stats.execs == 2


@in_workspaces
async def test_results_agree_with_verify(
    docker_host: str,
    examples: dict[str, SWEInstance],
    env_factory: Callable[..., Any],
    make_patch: MakePatch,
) -> None:
    cases = {
        "textkit": [
            (WRAP, [(BUG, FIXED)]),
            (WRAP, [(BUG, FIXED), ('"-".join', '"_".join')]),
            (WRAP, [(BUG, "elif len(current) + len(word) < width:")]),  # also a fix
            (WRAP, [(BUG, FIXED[:-1])]),
        ],
        "exprcalc": [
            (
                "exprcalc/parser.py",
                [("value /= self.factor()", "value = value / self.factor() if True else 0")],
            ),
            (
                "exprcalc/parser.py",
                [
                    (
                        "                value /= self.factor()",
                        "                d = self.factor()\n"
                        "                if d == 0:\n"
                        '                    raise CalcError("div")\n'
                        "                value /= d",
                    )
                ],
            ),
        ],
    }
    # gold, empty, the edits above, a diff that does not apply; `len(current) +
    # len(word) < width` is another correct fix of textkit.
    expected = {
        "textkit": [True, False, True, False, True, False, False],
        "exprcalc": [True, False, False, False, False],
    }
    for name, edits in cases.items():
        inst = examples[name]
        diffs = [inst.patch, ""] + [make_patch(inst, {path: e}) for path, e in edits]
        path = edits[0][0]
        diffs.append(  # does not apply: the line it removes is not there
            f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            "@@ -1,1 +1,1 @@\n-no such line in this file\n+anything\n"
        )
        ev = BatchEvaluator()
        async with env_factory(name, "docker") as env:
            results = await ev.evaluate(env, None, diffs)
            verdicts = [(await env.verify(d)).success for d in diffs]
            confirmed = await ev.confirm(env, results)
        assert [r.passed for r in results] == verdicts, (name, results)
        assert verdicts == expected[name]
        assert [o is not None and o.success for o in confirmed] == verdicts
        assert not results[-1].applied and "does not apply" in results[-1].error


@in_workspaces
async def test_fresh_interpreters_give_the_same_verdicts_and_conftest_changes_use_them(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    inst = examples["textkit"]
    v = wrap_variants(inst)
    cands: list[Any] = [{WRAP: v[n]} for n in ("fix", "breaks", "syntax", "hangs")]
    boom = (
        "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _boom():\n"
        '    raise RuntimeError("boom")\n'
    )
    async with env_factory("textkit", "docker") as env:
        fork = await BatchEvaluator(default_timeout_s=2).evaluate(env, None, cands)
        fresh_ev = BatchEvaluator(fresh=True, default_timeout_s=2)
        fresh = await fresh_ev.evaluate(env, None, cands)
        assert fresh_ev.stats.modes == ["fresh"]
        # A new conftest is read by a new session (reloaded), not the prepared one.
        conftest = await BatchEvaluator().evaluate(
            env, None, [{WRAP: v["fix"], "tests/conftest.py": boom}, {WRAP: v["fix"]}]
        )
        assert await _git_status(env) == ""
    assert [_outcomes(r) for r in fork] == [_outcomes(r) for r in fresh], fresh
    assert [r.passed for r in fresh] == [True, False, False, False]
    assert all(r.mode == "fresh" for r in fresh if r.compiled)
    assert conftest[0].mode == "reload" and _outcomes(conftest[0]) == ["error"]
    assert "boom" in conftest[0].tests[0].message
    assert conftest[1].mode == "fork" and conftest[1].passed


@in_workspaces
async def test_agent_state_kept_batches_split_and_timeouts_scale(
    docker_host: str, examples: dict[str, SWEInstance], env_factory: Callable[..., Any]
) -> None:
    inst = examples["textkit"]
    v = wrap_variants(inst)
    async with env_factory("textkit", "docker") as env:
        await env.step(Edit(path=WRAP, old=BUG, new=FIXED))
        before = await env.get_state()
        ev = BatchEvaluator(batch_size=2)
        results = await ev.evaluate(env, None, [{WRAP: v["fix"]}] * 3 + [{WRAP: v["breaks"]}])
        assert ev.stats.execs == 2
        after = await env.get_state()
        assert after["patch"] == before["patch"] and FIXED in after["patch"]
    assert [r.passed for r in results] == [True, True, True, False]
    # Timeouts: max(min, factor * baseline), the default for unknown tests.
    ev = BatchEvaluator(timeout_factor=10, min_timeout_s=1, default_timeout_s=7)
    order, timeouts, collect = ev.plan(inst, None, {F2P_FIRST: 0.5})
    assert order == [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS]
    assert timeouts[0] == 5.0 and set(timeouts[1:]) == {7.0} and collect == 5.0
    with pytest.raises(ConfigError, match="pytest node id"):
        ev.plan(inst, ["not a test id"], None)
    with pytest.raises(ConfigError, match="candidates"):
        as_candidate(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not both"):
        CandidatePatch(files={WRAP: "x"}, diff="y")


# ------------------------------------------------ the worker's file handling, on the host


@pytest.fixture
def worker_module() -> Any:
    """``atlas_batch`` imported as the workspace imports it (beside ``atlas_trace`` and
    the runtime's ``atlas_zygote``)."""
    import sys
    from pathlib import Path

    import atlas_actors.swe.repair
    from atlas_actors.sandbox.runtime import INCONTAINER

    dirs = [str(INCONTAINER), str(Path(atlas_actors.swe.repair.__file__).with_name("incontainer"))]
    sys.path[:0] = dirs
    try:
        import atlas_batch  # type: ignore[import-not-found]

        yield atlas_batch
    finally:
        for d in dirs:
            sys.path.remove(d)


def test_tree_guard_removes_new_files_only_and_never_git(worker_module: Any, tmp_path: Any) -> None:
    import os
    import time as _time

    root = tmp_path / "repo"
    (root / ".git" / "objects").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    guard = worker_module.TreeGuard(str(root))
    _time.sleep(0.01)
    (root / "junk.txt").write_text("j")
    (root / "pkg" / "out").mkdir()
    (root / "pkg" / "out" / "f").write_text("f")
    (root / ".git" / "index.lock").write_text("")  # inside .git: not our business
    removed = sorted(os.path.relpath(p, root) for p in guard.clean())
    assert removed == ["junk.txt", "pkg/out"]
    assert (root / ".git" / "objects").is_dir() and (root / ".git" / "index.lock").exists()
    assert (root / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert guard.clean() == []


def test_changes_restore_content_mode_and_mtime(worker_module: Any, tmp_path: Any) -> None:
    import os

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    mod = root / "pkg" / "mod.py"
    mod.write_text("x = 1\n")
    os.utime(mod, ns=(1_000_000_000_000_000_000, 1_500_000_000_123_456_789))
    stamps = worker_module._Stamps()
    changes = worker_module.Changes(str(root), stamps)
    changes.write("pkg/mod.py", b"x = 2\n")
    changes.write("pkg/new/deep.py", b"y = 1\n")
    first = mod.stat().st_mtime_ns
    assert mod.read_text() == "x = 2\n" and first != 1_500_000_000_123_456_789
    changes.restore()
    assert mod.read_text() == "x = 1\n"
    assert mod.stat().st_mtime_ns == 1_500_000_000_123_456_789
    assert not (root / "pkg" / "new").exists()
    # Every later write gets a modification time no content of the file had before.
    changes.write("pkg/mod.py", b"x = 3\n")
    assert mod.stat().st_mtime_ns not in (first, 1_500_000_000_123_456_789)
    changes.restore()
    for bad in ("../out.py", "/etc/passwd", ".git/config", ""):
        with pytest.raises(ValueError, match="bad path"):
            changes.write(bad, b"")
    (root / "link").symlink_to(tmp_path)
    with pytest.raises(ValueError, match="outside"):
        changes.write("link/x.py", b"")


def test_diff_paths(worker_module: Any) -> None:
    diff = (
        "diff --git a/a/x.py b/a/x.py\n--- a/a/x.py\n+++ b/a/x.py\n@@ -1 +1 @@\n-1\n+2\n"
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
        "diff --git a/old.py b/renamed.py\nrename from old.py\nrename to renamed.py\n"
    )
    assert worker_module._diff_paths(diff) == ["a/x.py", "new.py", "old.py", "renamed.py"]


def test_rebinding_points_conftests_at_the_reimported_code_or_says_it_cannot(
    worker_module: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conftest that imported the package (a module, a class, a function) is pointed at
    the package imported again; one that holds an instance of its class cannot be."""
    import importlib
    import sys

    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # the rewrite keeps size and second
    root = tmp_path / "repo"
    (root / "pkgx").mkdir(parents=True)
    (root / "pkgx" / "__init__.py").write_text("class A:\n    V = 1\n\ndef f():\n    return 1\n")
    (root / "confa.py").write_text("import pkgx\nfrom pkgx import A, f\nN = 3\n")
    (root / "confb.py").write_text("import pkgx\nOBJ = pkgx.A()\n")
    sys.path.insert(0, str(root))
    try:
        confa, confb = importlib.import_module("confa"), importlib.import_module("confb")
        old = sys.modules["pkgx"]
        (root / "pkgx" / "__init__.py").write_text(
            "class A:\n    V = 2\n\ndef f():\n    return 2\n"
        )
        assert worker_module.rebind_repository(str(root), [confa])
        assert confa.pkgx is sys.modules["pkgx"] and confa.pkgx is not old
        assert confa.A.V == 2 and confa.f() == 2 and confa.N == 3
        assert not worker_module.rebind_repository(str(root), [confb])
    finally:
        sys.path.remove(str(root))
        for name in ("pkgx", "confa", "confb"):
            sys.modules.pop(name, None)
