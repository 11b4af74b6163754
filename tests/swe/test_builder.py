"""``swe-build`` on a small git repository made here (with a spec for its versions), and
validation on the bundled examples: real Docker builds on the offline bookworm base,
no network (the specs install without pip)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.swe.builder import BuildConfig, BuildEvent, build_instances, choose_python
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import SWEInstance, git, load_instances
from atlas_actors.swe.mirrors import MirrorNotFound, blob_id, checkout_commit, find_mirror
from atlas_actors.swe.validate import validate_instances

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1200)]

# Installs without pip or network: the repository on the venv's path.
INSTALL = (
    "python -c \"import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], "
    "'testbed.pth').write_text('/testbed\\n')\""
)
TEST_CMD = "python -m pytest -rA -p no:cacheprovider"
SPEC = {"python": "3.11", "install": INSTALL, "test_cmd": TEST_CMD}
TABLE = {
    "source": "written for this test",
    "repos": {
        "local/tiny": {
            "log_parser": "parse_log_pytest",
            "versions": {
                "1.0": {**SPEC, "pre_install": ["sed -i s/MARK/edited/ notes.cfg"]},
                "2.0": {**SPEC, "install": "echo installing; exit 3"},
                "0.1": {**SPEC, "python": "3.6"},
            },
        },
        "local/partial": {"log_parser": "parse_log_pytest", "versions": {"1.0": SPEC}},
        "other/missing": {"log_parser": "parse_log_pytest", "versions": {"1.0": SPEC}},
    },
}

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
OLD_TESTS = "from tiny import add\n\n\ndef test_add_zero():\n    assert add(1, 0) == 1\n"
NEW_TESTS = OLD_TESTS + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def diff(repo: Path, path: str, new_text: str) -> str:
    """A git diff of ``path`` changed to ``new_text`` (the work tree left unchanged)."""
    target = repo / path
    old = target.read_text() if target.exists() else None
    target.write_text(new_text)
    out = git(repo, "diff", "--", path) if old is not None else ""
    if old is None:
        git(repo, "add", "-N", path)
        out = git(repo, "diff", "--", path)
        git(repo, "rm", "-q", "--cached", path)
        target.unlink()
    else:
        target.write_text(old)
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A repository with a bug, two base commits and a partial clone of it."""
    root = tmp_path_factory.mktemp("tiny")
    repo = root / "tiny"
    (repo / "tiny").mkdir(parents=True)
    (repo / "tests").mkdir()
    git(repo, "init", "-q")
    (repo / "tiny" / "__init__.py").write_text(BUGGY)
    (repo / "tests" / "test_tiny.py").write_text(OLD_TESTS)
    (repo / "notes.cfg").write_text("MARK\n")
    (repo / "big.dat").write_text("x" * 5000)
    base_a = commit_all(repo, "base a")
    git(repo, "tag", "v1.0.0")
    (repo / "README").write_text("tiny\n")
    base_b = commit_all(repo, "base b")
    (repo / "README").write_text("tiny, version 1.0\n")
    env_commit = commit_all(repo, "environment set-up")
    patch = diff(repo, "tiny/__init__.py", FIXED)
    test_patch = diff(repo, "tests/test_tiny.py", NEW_TESTS)
    git(repo, "config", "uploadpack.allowFilter", "true")
    partial = root / "partial.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--filter=blob:limit=1k", f"file://{repo}", str(partial)],
        check=True,
        timeout=60,
    )

    def row(iid: str, repo_name: str, version: str, base: str) -> dict[str, Any]:
        return {
            "instance_id": iid,
            "repo": repo_name,
            "version": version,
            "base_commit": base,
            "environment_setup_commit": env_commit,
            "problem_statement": "add() subtracts",
            "patch": patch,
            "test_patch": test_patch,
            "FAIL_TO_PASS": json.dumps(["tests/test_tiny.py::test_add"]),
            "PASS_TO_PASS": json.dumps(["tests/test_tiny.py::test_add_zero"]),
        }

    rows = [
        row("local__tiny-1", "local/tiny", "1.0", base_a),
        row("local__tiny-2", "local/tiny", "1.0", base_b),
        row("local__tiny-3", "local/tiny", "2.0", base_a),
        row("local__tiny-4", "local/tiny", "0.1", base_a),
        row("local__tiny-5", "local/tiny", "9.9", base_a),
        row("other__missing-1", "other/missing", "1.0", base_a),
        row("local__partial-1", "local/partial", "1.0", base_a),
    ]
    table = root / "specs.json"
    table.write_text(json.dumps(TABLE))
    return {"repo": repo, "partial": partial, "rows": rows, "table": table, "base_a": base_a}


@pytest.fixture(scope="module")
def prefix(docker_host: str) -> Iterator[str]:
    """An image prefix of this test run's own; its images are removed afterwards, with
    what grew on them (the steps a failed build kept for Docker's cache)."""
    name = f"atlas-swe-test-{os.urandom(3).hex()}"
    yield name

    def docker(*args: str) -> str:
        return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=300).stdout

    ours = {
        line.split()[1]
        for line in docker(
            "images", "--no-trunc", "--format", "{{.Repository}} {{.ID}}"
        ).splitlines()
        if line.startswith(name)
    }
    every = docker("images", "-a", "-q", "--no-trunc").split()
    parent = dict(
        line.split(" ", 1)
        for line in docker(
            "image", "inspect", "--format", "{{.Id}} {{.Parent}}", *every
        ).splitlines()
        if line.strip()
    )

    def depth(image: str) -> int:  # how many of ours it grew on
        n = 0
        while image:
            n += image in ours
            image = parent.get(image, "").strip()
        return n

    doomed = sorted((i for i in every if depth(i)), key=depth, reverse=True)  # children first
    if doomed:
        docker("rmi", *doomed)


def config(tiny: dict[str, Any], prefix: str) -> BuildConfig:
    return BuildConfig(
        mirrors={"local/tiny": tiny["repo"], "local/partial": tiny["partial"]},
        pythons={"3.11": "bookworm"},
        build_bases=False,
        bootstrap_packages=(),
        system_site_packages=True,
        network="none",
        spec_table=tiny["table"],
        image_prefix=prefix,
        jobs=2,
        recover_missing_files=False,  # no package index in tests
    )


@pytest.fixture(scope="module")
async def first_build(
    tiny: dict[str, Any], prefix: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[Path, dict[str, Any], list[BuildEvent]]]:
    out = tmp_path_factory.mktemp("build")
    events: list[BuildEvent] = []
    records = await build_instances(tiny["rows"], config(tiny, prefix), out, progress=events.append)
    yield out, {r.instance_id: r for r in records}, events


async def test_layers_are_built_once_and_each_failure_is_the_instances_own(
    first_build: tuple[Path, dict[str, Any], list[BuildEvent]], prefix: str
) -> None:
    out, recs, events = first_build
    started = [e.image for e in events if e.kind == "start"]
    env = f"{prefix}-env/local__tiny:1.0"
    # two instances on one environment: it is built once, the python layer once
    assert started.count(env) == 1
    assert started.count(f"{prefix}-python:3.11") == 1
    assert recs["local__tiny-1"].status == "built"
    assert recs["local__tiny-2"].status == "built"
    assert recs["local__tiny-1"].env_image == recs["local__tiny-2"].env_image == env
    # a failing install fails its own instance, naming the step, and the batch went on
    failed = recs["local__tiny-3"]
    assert failed.status == "failed"
    assert "exit 3" in failed.reason and "logs/" in failed.reason
    assert recs["local__tiny-4"].status == "skipped"
    assert "needs Python 3.6" in recs["local__tiny-4"].reason
    assert "--python-fallback" in recs["local__tiny-4"].reason
    assert "no spec for repo local/tiny version 9.9" in recs["local__tiny-5"].reason
    missing = recs["other__missing-1"]
    assert missing.status == "skipped"
    assert "--mirror other/missing=PATH" in missing.reason
    # build.json and the instances file
    report = json.loads((out / "build.json").read_text())
    assert report["instances"]["local__tiny-3"]["status"] == "failed"
    assert report["counts"] == {"built": 3, "failed": 1, "skipped": 3}
    built = {i.instance_id: i for i in load_instances(out / "instances.jsonl")}
    assert set(built) == {"local__tiny-1", "local__tiny-2", "local__partial-1"}
    assert built["local__tiny-1"].image == f"{prefix}-eval/local__tiny-1:latest"
    assert (out / "logs").is_dir() and any((out / "logs").iterdir())


async def test_a_partial_mirror_gives_a_snapshot_without_its_missing_files(
    first_build: tuple[Path, dict[str, Any], list[BuildEvent]], tiny: dict[str, Any]
) -> None:
    _, recs, _ = first_build
    rec = recs["local__partial-1"]
    assert rec.status == "built"
    assert rec.missing_files == ["big.dat"]
    assert rec.source_commit == tiny["base_a"] != rec.base_commit
    assert rec.row["base_commit"] == rec.base_commit
    assert rec.row["source_commit"] == tiny["base_a"]


async def test_a_rebuild_is_a_no_op(
    first_build: tuple[Path, dict[str, Any], list[BuildEvent]],
    tiny: dict[str, Any],
    prefix: str,
) -> None:
    out, _, _ = first_build
    events: list[BuildEvent] = []
    records = await build_instances(tiny["rows"], config(tiny, prefix), out, progress=events.append)
    status = {r.instance_id: r.status for r in records}
    assert status["local__tiny-1"] == status["local__tiny-2"] == "cached"
    assert status["local__partial-1"] == "cached"
    started = {e.image for e in events if e.kind == "start"}
    assert started == {f"{prefix}-env/local__tiny:2.0"}  # only the failing one is tried again
    report = json.loads((out / "build.json").read_text())
    entry = report["instances"]["local__tiny-1"]
    assert entry["status"] == "cached" and entry["seconds"] == 0
    assert entry["instance_build_seconds"] > 0  # kept from the run that built it


def image_id(tag: str) -> str:
    return subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", tag],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()


async def test_force_rebuilds_every_step(
    first_build: tuple[Path, dict[str, Any], list[BuildEvent]],
    tiny: dict[str, Any],
    prefix: str,
    tmp_path: Path,
) -> None:
    _, recs, _ = first_build
    rec = recs["local__tiny-1"]
    before = [image_id(rec.image), image_id(rec.env_image)]  # children first
    forced = config(tiny, prefix).model_copy(update={"force": True})
    try:
        events: list[BuildEvent] = []
        [again] = await build_instances([tiny["rows"][0]], forced, tmp_path, progress=events.append)
        assert again.status == "built"
        assert {e.image for e in events if e.kind == "start"} == {rec.env_image, rec.image}
        lines = [e.text for e in events if e.kind == "line"]
        assert lines and not any("Using cache" in t for t in lines)
    finally:  # the images the rebuild replaced, untagged now
        subprocess.run(["docker", "rmi", *before], capture_output=True, timeout=300)


async def test_built_instances_validate_with_their_tests(
    first_build: tuple[Path, dict[str, Any], list[BuildEvent]],
) -> None:
    out, _, _ = first_build
    insts = load_instances(out / "instances.jsonl")
    ev = LocalEvaluator(factory=lambda t: SWEEnvironment(eval_timeout_s=120), max_tasks=1)
    try:
        verdicts = await validate_instances(insts, out, ev)
    finally:
        await ev.aclose()
    for iid in ("local__tiny-1", "local__tiny-2", "local__partial-1"):
        assert verdicts[iid]["reproducible"], verdicts[iid]
    saved = json.loads((out / "validation.json").read_text())
    assert saved["reproducible"] == 3
    # the pre-install edit is made by the eval script, not left in the image
    inst = next(i for i in insts if i.instance_id == "local__tiny-1")
    assert "sed -i s/MARK/edited/ notes.cfg" in inst.eval_script
    async with SWEEnvironment() as env:
        await env.reset(inst.to_task())
        r = await env.workspace.run("cat notes.cfg; git status --short", timeout_s=30)
    assert r.output.strip() == "MARK"


async def test_validation_names_the_tests_of_a_corrupted_instance(
    docker_host: str, examples: dict[str, SWEInstance], tmp_path: Path
) -> None:
    good = examples["intervals"]
    moved = good.FAIL_TO_PASS[0]
    corrupted = good.model_copy(
        update={
            "instance_id": "atlas-examples__intervals-corrupted",
            "FAIL_TO_PASS": good.FAIL_TO_PASS[1:],
            "PASS_TO_PASS": [*good.PASS_TO_PASS, moved],
        }
    )
    ev = LocalEvaluator(factory=lambda t: SWEEnvironment(eval_timeout_s=120), max_tasks=1)
    try:
        verdicts = await validate_instances([good, corrupted], tmp_path, ev)
    finally:
        await ev.aclose()
    assert verdicts[good.instance_id]["reproducible"]
    bad = verdicts[corrupted.instance_id]
    assert not bad["reproducible"]
    assert bad["misbehaving"] == [
        {
            "test": moved,
            "list": "PASS_TO_PASS",
            "run": "empty",
            "expected": "pass",
            "status": "FAILED",
        }
    ]
    assert moved in bad["reason"] and "fail without the fix" in bad["reason"]
    assert (tmp_path / "validation" / good.instance_id / "gold.txt").is_file()


def test_python_choice_and_fallback() -> None:
    have = ["3.9", "3.11", "3.13"]
    assert choose_python("3.9", have, False) == "3.9"
    assert choose_python("3.8", have, False) is None
    assert choose_python("3.8", have, True) == "3.9"
    assert choose_python("3.10", have, True) == "3.11"
    assert choose_python("3.6", have, True) == "3.9"
    assert choose_python("3.14", have, True) is None


def test_mirrors_are_found_or_named_with_the_flag(tmp_path: Path, tiny: dict[str, Any]) -> None:
    (tmp_path / "local__tiny").symlink_to(tiny["repo"])
    assert find_mirror("local/tiny", tmp_path, {}) == tmp_path / "local__tiny"
    assert find_mirror("local/tiny", None, {"local/tiny": tiny["partial"]}) == tiny["partial"]
    with pytest.raises(MirrorNotFound, match=r"--mirror a/b=PATH.*DIR/a__b and pass --mirrors"):
        find_mirror("a/b", tmp_path, {})


def test_a_checkout_holds_the_commit_and_its_release_tag(
    tmp_path: Path, tiny: dict[str, Any]
) -> None:
    full = checkout_commit(tiny["repo"], tiny["base_a"], tmp_path / "full")
    assert full.commit == tiny["base_a"] and not full.missing
    assert git(full.path, "rev-list", "--count", "HEAD").strip() == "1"  # no history
    snap = checkout_commit(tiny["partial"], tiny["base_a"], tmp_path / "snap")
    assert snap.missing == ["big.dat"] and not (snap.path / "big.dat").exists()
    assert (snap.path / "tiny" / "__init__.py").read_text() == BUGGY
    again = checkout_commit(tiny["partial"], tiny["base_a"], tmp_path / "snap2")
    assert again.commit == snap.commit  # snapshots are deterministic
    # the missing file found elsewhere (by its blob id): the commit itself after all
    big = (tiny["repo"] / "big.dat").read_bytes()

    def recover(checkout: Path, wanted: dict[str, str], tag: str | None) -> dict[str, bytes]:
        assert list(wanted.values()) == ["big.dat"] and tag == "v1.0.0"
        return {blob_id(big): big, blob_id(b"not it"): b"not it"}

    whole = checkout_commit(tiny["partial"], tiny["base_a"], tmp_path / "whole", recover)
    assert whole.commit == tiny["base_a"] and whole.recovered == ["big.dat"]
    assert not whole.missing and (whole.path / "big.dat").read_bytes() == big
    assert git(whole.path, "status", "--porcelain").strip() == ""
    for c in (full, snap, whole):  # the release tag, for versions derived from git
        assert c.tag == "v1.0.0"
        assert git(c.path, "describe", "--tags").strip() == "v1.0.0"


def test_swe_eval_gold_validates(
    docker_host: str, examples: dict[str, SWEInstance], tmp_path: Path
) -> None:
    from atlas_actors.cli import main

    good, other = examples["textkit"], examples["datecalc"]
    wrong_gold = other.model_copy(
        update={"instance_id": "atlas-examples__datecalc-wrong-gold", "patch": good.patch}
    )
    inst_file = tmp_path / "instances.jsonl"
    inst_file.write_text("".join(i.model_dump_json() + "\n" for i in (good, wrong_gold)))
    out = tmp_path / "out"
    argv = ["swe-eval", "--instances", str(inst_file), "--gold", "--out", str(out)]
    assert main([*argv, "--no-ray", "--workers", "2", "--quiet"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["resolved_ids"] == [good.instance_id]
    assert report["unresolved_ids"] == [wrong_gold.instance_id]
    verdict = json.loads((out / "validation.json").read_text())["instances"][wrong_gold.instance_id]
    assert not verdict["reproducible"]
    assert verdict["reason"] == "the gold patch does not apply"


def test_swe_build_flag_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from atlas_actors.cli import main

    rows = tmp_path / "rows.jsonl"
    rows.write_text("{}\n")
    base = ["swe-build", "--instances", str(rows), "--out", str(tmp_path / "o")]
    assert main(base) == 2
    assert "--mirrors DIR or --mirror OWNER/NAME=PATH" in capsys.readouterr().err
    assert main([*base, "--mirror", "nothing"]) == 2
    assert "--mirror 'nothing': expected OWNER/NAME=PATH" in capsys.readouterr().err
    assert main([*base, "--mirrors", str(tmp_path), "--uploaded-prior-to", "last year"]) == 2
    assert "--uploaded-prior-to 'last year': expected an ISO 8601" in capsys.readouterr().err
    assert main([*base, "--mirrors", str(tmp_path)]) == 2
    assert "line 1: field 'instance_id' is missing" in capsys.readouterr().err
