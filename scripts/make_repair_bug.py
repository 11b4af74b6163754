#!/usr/bin/env python
"""Add a bug to the program-repair development set (``tests/data/repair_bugs/``).

Each bug is a small Python repository written for this project, stored as a SWE-bench
instance in the bundled examples' format (``atlas_actors/swe/examples/``):
``<name>/instance.json`` and the buggy base's files as ``<name>/repo/<path>.txt``. The
folder's ``MANIFEST.json`` records each bug's kind, a one-line description and its buggy
lines; the repair search never reads it (it is the benchmark's answer key).

How to add a bug
----------------
1. Write the repository as it is *with* the bug: 1-3 modules with docstrings, a README,
   and ``tests/test_<module>.py`` whose tests all pass (at least four of them).
2. Write the fix: the corrected module(s) and the tests that expose the bug (1-3 new
   tests that fail before the fix), a bug report (``problem.md``: a user's symptoms and
   an example, never the fix or the line), and a few held-back tests (``heldout.py``: the
   same behaviour on other inputs; see below).
3. Either commit both to a git repository (buggy commit, then the fix commit) and pass
   ``--repo R --fix-commit SHA``, or keep them as two folders and pass
   ``--base-dir BUGGY --fix-dir FIX`` (the fix folder holds only the changed files, at their
   paths; the script makes the two-commit history in a temporary directory).
4. Run::

       PYTHONPATH=$PWD python scripts/make_repair_bug.py add --name NAME \\
           --kind {single,two-edit,hard} --description "one line: what is wrong" \\
           --problem-file problem.md --heldout heldout.py \\
           (--repo R --fix-commit SHA | --base-dir B --fix-dir F)

   It runs the project's instance maker
   (``python -m atlas_actors.swe.build make --backend bubblewrap``: a
   one-commit snapshot of the base, the fix split into ``patch`` and ``test_patch``, the
   tests run without and with the fix to fill ``FAIL_TO_PASS``/``PASS_TO_PASS``), checks
   the set's rules (1-3 FAIL_TO_PASS, all of them tests the fix adds, so the base's own
   tests pass; at least 4 PASS_TO_PASS; no line of the fix quoted in the problem
   statement), writes the stored form, materialises it again and re-validates it with
   ``SWEEnvironment(backend="bubblewrap")`` (every FAIL_TO_PASS test fails at the base,
   every PASS_TO_PASS test passes, the gold patch resolves the instance), and updates
   ``MANIFEST.json``. The buggy lines are read from the gold patch (the base lines it
   removes or replaces; for a pure insertion, the base line it follows); ``--buggy-line
   path:line`` (repeatable) overrides them.

``check [NAME ...]`` re-validates stored bugs the same way (default: all of them).

Held-back tests
---------------
Every bug also has ``<name>/heldout.py.txt``: a pytest file of a few tests the search
never sees (it is not part of the stored repository, the instance or its tests). They
pass with the known fix and check the same behaviour on other inputs, so a patch that
passes the visible tests but is not the fix (green but wrong) fails some of them.
``scripts/bench_repair.py`` runs them on each final patch (its *correct* column);
``check`` and ``add`` require them to pass with the gold patch (``add --heldout FILE``).
The bundled examples' held-back tests are ``_examples/<name>/heldout.py.txt``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from atlas_actors.swe.environment import SWEEnvironment  # noqa: E402
from atlas_actors.swe.instances import (  # noqa: E402
    git,
    materialize_example,
    parse_instance,
)

DEST = ROOT / "tests" / "data" / "repair_bugs"
HELDOUT = "heldout.py.txt"
"""A bug's held-back tests, beside its ``instance.json``."""
EXAMPLES_HELDOUT = DEST / "_examples"
"""The bundled examples' held-back tests: ``_examples/<name>/heldout.py.txt``."""
HELDOUT_AS = "test_atlas_heldout.py"
"""The held-back tests' file name in the checkout they run in (its root)."""
KINDS = ("single", "two-edit", "hard", "trap", "hang", "missing")
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
# The examples' instance.json keys, in their order (no local_repo/source_commit: a stored
# instance is materialised where it is used).
KEYS = (
    "instance_id",
    "repo",
    "version",
    "base_commit",
    "problem_statement",
    "patch",
    "test_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "image",
    "eval_script",
    "log_parser",
    "eval_type",
    "created_at",
)
MANIFEST_ABOUT = (
    "Development bug set for offline program repair: small repositories written "
    "for this project, one realistic bug each. Metadata for scripts/bench_repair.py; the "
    "repair search never reads it. kind: single (one edit fixes it), two-edit (two lines "
    "must both change), hard (a multi-token logic change), trap (the visible tests also "
    "pass with some wrong single edit: the held-back tests tell them apart), hang (the bug, "
    "or edits near it, make a test loop forever), missing (the fix is a statement the "
    "file does not hold). buggy_lines: path:line in the base (for a missing statement, "
    "the line it belongs after). Each bug's heldout.py.txt holds tests the search never "
    "sees."
)


def instance_id(name: str) -> str:
    return f"atlas-bugs__{name}-1"


# ------------------------------------------------------------------ the gold patch


def buggy_lines(patch: str) -> list[str]:
    """``path:line`` (base numbering) of the lines the patch removes or replaces; for a
    hunk that only inserts, the base line the insertion follows."""
    out: list[str] = []
    path = ""
    old = 0
    prev = ""
    for line in patch.splitlines():
        if line.startswith("--- "):
            continue
        if line.startswith("+++ "):
            path = line[4:].removeprefix("b/")
            continue
        m = re.match(r"@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@", line)
        if m:
            old = int(m.group(1))
            prev = "@"
            continue
        if not path or line.startswith(("diff ", "index ")):
            continue
        if line.startswith("-"):
            out.append(f"{path}:{old}")
            old += 1
            prev = "-"
        elif line.startswith("+"):
            if prev not in ("-", "+"):
                out.append(f"{path}:{old - 1}")
            prev = "+"
        else:
            old += 1
            prev = " "
    return list(dict.fromkeys(out))


def added_lines(patch: str) -> list[str]:
    return [
        ln[1:].strip()
        for ln in patch.splitlines()
        if ln.startswith("+") and not ln.startswith("+++")
    ]


# ------------------------------------------------------------------ held-back tests


def heldout_file(name: str, root: Path = DEST, *, example: bool = False) -> Path:
    """Where bug (or bundled example) ``name`` keeps its held-back tests."""
    return (EXAMPLES_HELDOUT if example else root) / name / HELDOUT


async def run_heldout(
    local_repo: str | Path, tests: Path, patch: str, *, timeout_s: float = 120.0
) -> dict[str, str]:
    """Each held-back test's status (swebench's pytest statuses: ``PASSED``, ``FAILED``,
    ...) with ``patch`` applied to a clone of ``local_repo``, run in bubblewrap.

    A patch that does not apply, or tests that do not run, give every test of the file
    the status ``ERROR``."""
    from swebench.harness.log_parsers import PARSER_REGISTRY

    from atlas_actors.sandbox.bubblewrap import run_in_bubblewrap

    text = await anyio.Path(tests).read_text()
    names = re.findall(r"^def (test\w+)", text, re.M)
    with tempfile.TemporaryDirectory(prefix="repair-heldout-") as td:
        work = Path(td) / "repo"
        await anyio.to_thread.run_sync(git, Path(td), "clone", "-q", str(local_repo), str(work))
        if patch.strip():
            try:
                await anyio.to_thread.run_sync(
                    lambda: git(work, "apply", "-", input=patch.encode())
                )
            except RuntimeError:
                return dict.fromkeys(names, "ERROR")
        await anyio.Path(work / HELDOUT_AS).write_text(text)
        await anyio.Path(work / "run_heldout.py").write_text(
            "import sys, pytest\n"
            f"sys.exit(pytest.main(['-rA', '-p', 'no:cacheprovider', '{HELDOUT_AS}']))\n"
        )
        run = await run_in_bubblewrap(work, "run_heldout.py", timeout_s=timeout_s)
    parsed = PARSER_REGISTRY["parse_log_pytest"](run.stdout, None)
    return {n: parsed.get(f"{HELDOUT_AS}::{n}", "ERROR") for n in names}


# ------------------------------------------------------------------ validation


async def validate(inst_data: dict[str, Any], local_repo: Path) -> tuple[float, float]:
    """Base: every FAIL_TO_PASS test fails, every PASS_TO_PASS test passes; gold: resolved.

    Raises AssertionError naming what is wrong; returns the two runs' seconds."""
    inst = parse_instance({**inst_data, "local_repo": str(local_repo)})
    async with SWEEnvironment(backend="bubblewrap", eval_timeout_s=120) as env:
        await env.reset(inst.to_task())
        before = await env.verify("")
        after = await env.verify(inst.patch)
    ts = before.details.get("tests_status", {})
    f2p, p2p = ts.get("FAIL_TO_PASS", {}), ts.get("PASS_TO_PASS", {})
    problems = []
    if before.success:
        problems.append("the base already resolves the instance")
    if f2p.get("success"):
        problems.append(f"FAIL_TO_PASS tests pass at the base: {f2p['success']}")
    if p2p.get("failure"):
        problems.append(f"PASS_TO_PASS tests fail at the base: {p2p['failure']}")
    if not after.success:
        problems.append(f"the gold patch does not resolve it:\n{after.feedback[-3000:]}")
    if problems:
        raise AssertionError(f"{inst.instance_id}: " + "; ".join(problems))
    return before.details["seconds"], after.details["seconds"]


def check_rules(data: dict[str, Any]) -> list[str]:
    problems = []
    if not 1 <= len(data["FAIL_TO_PASS"]) <= 3:
        problems.append(f"FAIL_TO_PASS has {len(data['FAIL_TO_PASS'])} tests (want 1-3)")
    if len(data["PASS_TO_PASS"]) < 4:
        problems.append(f"PASS_TO_PASS has {len(data['PASS_TO_PASS'])} tests (want >= 4)")
    # The base's own tests pass: only tests the fix adds may fail there.
    added = set(re.findall(r"^\+\s*def (test\w+)", data["test_patch"], re.M))
    for test in data["FAIL_TO_PASS"]:
        if test.rsplit("::", 1)[-1].split("[", 1)[0] not in added:
            problems.append(f"{test} fails at the base but is not a test the fix adds")
    statement = data["problem_statement"]
    for line in added_lines(data["patch"]):
        if len(line) >= 12 and line in statement:
            problems.append(f"the problem statement quotes the fix: {line!r}")
    return problems


# ------------------------------------------------------------------ stored form


def store(data: dict[str, Any], snapshot: Path, dest: Path) -> None:
    """Write ``dest/instance.json`` and the snapshot's files as ``dest/repo/<path>.txt``."""
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "repo").mkdir(parents=True)
    stored = {k: data[k] for k in KEYS if k in data}
    stored["created_at"] = "2024-01-01T00:00:00Z"
    (dest / "instance.json").write_text(json.dumps(stored, indent=2) + "\n")
    for rel in git(snapshot, "ls-files", "-z").split("\0"):
        if not rel:
            continue
        out = dest / "repo" / (rel + ".txt")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes((snapshot / rel).read_bytes())


def read_manifest(root: Path) -> dict[str, Any]:
    path = root / "MANIFEST.json"
    if path.exists():
        data: dict[str, Any] = json.loads(path.read_text())
        return data
    return {"about": MANIFEST_ABOUT, "bugs": []}


def write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    manifest["about"] = MANIFEST_ABOUT
    manifest["bugs"] = sorted(manifest["bugs"], key=lambda b: b["name"])
    (root / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")


def two_commit_repo(base_dir: Path, fix_dir: Path, work: Path) -> Path:
    """A git repository: ``base_dir``'s files, then ``fix_dir``'s files copied over them."""
    repo = work / "src"
    shutil.copytree(base_dir, repo, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "buggy")
    shutil.copytree(
        fix_dir,
        repo,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
        copy_function=shutil.copy,
    )
    # Rebuild the index from the files' contents: a fixed file of the same size copied
    # within the same second as the buggy one would look unchanged to git's stat check.
    (repo / ".git" / "index").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "fix")
    return repo


def add(args: argparse.Namespace) -> int:
    name: str = args.name
    if not NAME_RE.match(name):
        print(f"error: --name {name!r}: lower-case letters, digits and _", file=sys.stderr)
        return 2
    root = Path(args.dest).resolve()
    target = root / name
    if target.exists() and not args.force:
        print(f"error: {target} exists (use --force to replace it)", file=sys.stderr)
        return 2
    iid = instance_id(name)
    with tempfile.TemporaryDirectory(prefix="repair-bug-") as td:
        work = Path(td)
        if args.repo:
            repo, fix = Path(args.repo).resolve(), args.fix_commit
        else:
            repo, fix = two_commit_repo(Path(args.base_dir), Path(args.fix_dir), work), "HEAD"
        cmd = [
            sys.executable,
            "-m",
            "atlas_actors.swe.build",
            "make",
            "--backend",
            "bubblewrap",
            "--repo",
            str(repo),
            "--fix-commit",
            fix,
            "--instance-id",
            iid,
            "--repo-name",
            f"atlas-bugs/{name}",
            "--problem-file",
            str(Path(args.problem_file).resolve()),
            "--out-dir",
            str(work / "out"),
        ]
        for glob in args.test_files or ():
            cmd += ["--test-files", glob]
        made = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
        if made.returncode != 0:
            print(made.stdout + made.stderr, file=sys.stderr)
            return 1
        out = work / "out" / iid
        data = json.loads((out / "instance.json").read_text())
        problems = check_rules(data)
        if problems:
            print(f"error: {name}: " + "; ".join(problems), file=sys.stderr)
            return 1
        lines = args.buggy_line or buggy_lines(data["patch"])
        store(data, out / "repo", target)
        shutil.copy(args.heldout, target / HELDOUT)
    # The stored form must materialise at the same commit and validate on its own.
    stored = json.loads((target / "instance.json").read_text())
    with tempfile.TemporaryDirectory(prefix="repair-bug-check-") as td:
        try:
            checkout = materialize_example(name, Path(td) / "repo", root=root)
            seconds = anyio.run(validate, stored, checkout)
            problems = heldout_problems(stored, checkout, target / HELDOUT)
            if problems:
                raise AssertionError("; ".join(problems))
        except Exception as e:
            shutil.rmtree(target)
            print(f"error: the stored instance does not validate: {e}", file=sys.stderr)
            return 1
    manifest = read_manifest(root)
    manifest["bugs"] = [b for b in manifest["bugs"] if b["name"] != name]
    manifest["bugs"].append(
        {
            "name": name,
            "instance_id": iid,
            "kind": args.kind,
            "description": args.description,
            "buggy_lines": lines,
        }
    )
    write_manifest(root, manifest)
    print(
        f"{iid}: FAIL_TO_PASS {len(stored['FAIL_TO_PASS'])}, PASS_TO_PASS "
        f"{len(stored['PASS_TO_PASS'])}, buggy lines {', '.join(lines)}; validated "
        f"(base {seconds[0]:.1f}s, gold {seconds[1]:.1f}s) -> {target}"
    )
    return 0


def heldout_problems(data: dict[str, Any], checkout: Path, tests: Path) -> list[str]:
    """What is wrong with a bug's held-back tests: missing, or failing with the gold patch."""
    if not tests.exists():
        return [f"no held-back tests ({tests.name})"]
    gold = anyio.run(run_heldout, checkout, tests, data["patch"])
    if not gold:
        return [f"{tests.name} holds no test function"]
    failing = sorted(n for n, status in gold.items() if status != "PASSED")
    return [f"held-back tests fail with the gold patch: {', '.join(failing)}"] if failing else []


async def heldout_summary(data: dict[str, Any], checkout: Path, tests: Path) -> str:
    """``held-back N, M of them fail at the base``: how much of the bug they see."""
    base = await run_heldout(checkout, tests, "")
    failing = sum(1 for status in base.values() if status != "PASSED")
    return f"held-back {len(base)}, {failing} fail at the base"


def check_example_heldout() -> int:
    """Check the bundled examples' held-back tests against their gold patches; the
    number of examples with a problem."""
    from atlas_actors.swe.instances import load_example_instances

    bad = 0
    for inst in load_example_instances():
        name = inst.instance_id.split("__", 1)[1].rsplit("-", 1)[0]
        tests = heldout_file(name, example=True)
        assert inst.local_repo
        problems = heldout_problems(inst.model_dump(), Path(inst.local_repo), tests)
        if problems:
            bad += 1
            print(f"FAIL example {name}: " + "; ".join(problems))
        else:
            held = anyio.run(heldout_summary, inst.model_dump(), Path(inst.local_repo), tests)
            print(f"ok   example {name} ({held})")
    return bad


def check(args: argparse.Namespace) -> int:
    root = Path(args.dest).resolve()
    names = args.names or sorted(p.parent.name for p in root.glob("*/instance.json"))
    bad = 0
    for name in names:
        stored = json.loads((root / name / "instance.json").read_text())
        problems = check_rules(stored)
        held = ""
        with tempfile.TemporaryDirectory(prefix="repair-bug-check-") as td:
            try:
                checkout = materialize_example(name, Path(td) / "repo", root=root)
                seconds = anyio.run(validate, stored, checkout)
                problems += heldout_problems(stored, checkout, root / name / HELDOUT)
                held = anyio.run(heldout_summary, stored, checkout, root / name / HELDOUT)
            except Exception as e:
                problems.append(str(e))
        if problems:
            bad += 1
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            print(f"ok   {name} (base {seconds[0]:.1f}s, gold {seconds[1]:.1f}s; {held})")
    if not args.names:
        bad += check_example_heldout()
    listed = {b["name"] for b in read_manifest(root)["bugs"]}
    stored_names = {p.parent.name for p in root.glob("*/instance.json")}
    if listed != stored_names:
        bad += 1
        print(
            f"FAIL manifest: unlisted {sorted(stored_names - listed)}, "
            f"missing {sorted(listed - stored_names)}"
        )
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dest", default=str(DEST), help=f"the bug set's folder (default: {DEST})")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("add", help="make, store and validate one bug")
    a.add_argument("--name", required=True, help="short name: lower-case letters, digits, _")
    a.add_argument("--kind", required=True, choices=KINDS)
    a.add_argument("--description", required=True, help="one line: what the bug is")
    a.add_argument("--problem-file", required=True, help="the bug report (markdown)")
    a.add_argument(
        "--heldout",
        required=True,
        help="held-back tests (a pytest file importing the package; they pass with the fix)",
    )
    src = a.add_mutually_exclusive_group(required=True)
    src.add_argument("--repo", help="a git repository holding the buggy and fix commits")
    src.add_argument("--base-dir", help="the buggy repository's files")
    a.add_argument("--fix-commit", help="with --repo: the fix commit (base: its parent)")
    a.add_argument("--fix-dir", help="with --base-dir: the files the fix changes or adds")
    a.add_argument(
        "--test-files",
        action="append",
        metavar="GLOB",
        help="see python -m atlas_actors.swe.build make --help",
    )
    a.add_argument("--buggy-line", action="append", metavar="PATH:LINE", help="override")
    a.add_argument("--force", action="store_true", help="replace a stored bug of that name")
    c = sub.add_parser("check", help="re-validate stored bugs")
    c.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    if args.cmd == "add":
        if args.repo and not args.fix_commit:
            ap.error("--repo needs --fix-commit")
        if args.base_dir and not args.fix_dir:
            ap.error("--base-dir needs --fix-dir")
        return add(args)
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
