"""Instance images and instances made from a repository (blocking helpers and commands).

``python -m atlas_actors.swe.build {build-examples,make,list,export}``: build the example
instances' Docker images on the offline base image; make an instance (and its image) from
a local git repository and a bug-fixing commit; list or export the examples.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from atlas_actors.errors import InvalidTaskError
from atlas_actors.swe.instances import (
    BASE_IMAGE,
    DEFAULT_TEST_CMD,
    EXAMPLES_DIR,
    TESTBED,
    SWEInstance,
    example_names,
    git,
    load_example_instances,
    make_eval_script,
    materialize_example,
    parse_instance,
    snapshot_repo,
)


def dockerfile(base_image: str, base_commit: str, install_cmd: str | None = None) -> str:
    """The Dockerfile of an instance image: the repo at /testbed at ``base_commit``."""
    lines = [
        f"FROM {base_image}",
        f"COPY repo {TESTBED}",
        f"WORKDIR {TESTBED}",
        "RUN git config --global --add safe.directory /testbed"
        " && git config --global user.email atlas@localhost"
        " && git config --global user.name atlas"
        f" && git -c advice.detachedHead=false checkout -q {base_commit}"
        " && git clean -fdxq",
    ]
    if install_cmd:
        lines.append(f"RUN {install_cmd}")
    lines.append('CMD ["/bin/bash"]')
    return "\n".join(lines) + "\n"


def build_context(repo_dir: Path, dockerfile_text: str) -> bytes:
    """A tar build context: the Dockerfile plus ``repo/`` (with its .git)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        data = dockerfile_text.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        tar.add(str(repo_dir), arcname="repo")
    return out.getvalue()


async def build_instance_image(
    instance: SWEInstance,
    repo_dir: Path,
    *,
    docker_host: str | None = None,
    base_image: str = BASE_IMAGE,
    install_cmd: str | None = None,
    force: bool = False,
    timeout_s: float = 900.0,
) -> bool:
    """Build ``instance.image`` from ``repo_dir`` (no network); False when cached."""
    import anyio

    from atlas_actors.sandbox.docker import DockerClient

    async with DockerClient(docker_host) as docker:
        if not force and await docker.image_exists(instance.image):
            return False
        if not await docker.image_exists(base_image):
            from atlas_actors.errors import DockerError

            raise DockerError(
                f"base image {base_image} is missing: run scripts/build-base-image first"
            )
        ctx = await anyio.to_thread.run_sync(
            build_context, repo_dir, dockerfile(base_image, instance.base_commit, install_cmd)
        )
        await docker.build_image(
            ctx,
            instance.image,
            timeout_s=timeout_s,
            labels={"org.atlas-actors.instance": instance.instance_id},
        )
    return True


async def build_example_images(
    names: Iterable[str] | None = None,
    *,
    docker_host: str | None = None,
    force: bool = False,
    root: Path = EXAMPLES_DIR,
) -> list[tuple[str, bool]]:
    """Build the images of the instances stored under ``root`` (default: the shipped
    examples), each with its ``install_cmd`` field when it has one; ``(image, built)``
    per instance."""
    import anyio

    results = []
    for name in names or example_names(root):
        data = json.loads((root / name / "instance.json").read_text())
        inst = parse_instance(data, where=f"example {name}")
        repo = await anyio.to_thread.run_sync(
            functools.partial(materialize_example, name, root=root)
        )
        install = data.get("install_cmd")
        built = await build_instance_image(
            inst,
            repo,
            docker_host=docker_host,
            force=force,
            install_cmd=install if isinstance(install, str) else None,
        )
        results.append((inst.image, built))
    return results


_TEST_HINTS = (
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "tests/*",
    "test/*",
    "*/tests/*",
    "*/test/*",
    "testing/*",
)


def _is_test_file(path: str, patterns: Sequence[str]) -> bool:
    import fnmatch

    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(name, p) for p in patterns)


def prepare_instance_from_repo(
    repo: str | Path,
    fix_commit: str,
    out_dir: str | Path,
    *,
    base_commit: str | None = None,
    test_files: Sequence[str] | None = None,
    test_cmd: str = DEFAULT_TEST_CMD,
    log_parser: str = "parse_log_pytest",
    instance_id: str | None = None,
    repo_name: str | None = None,
    problem_statement: str | None = None,
    image: str | None = None,
) -> SWEInstance:
    """Turn ``fix_commit`` of the git repository ``repo`` into an instance (blocking).

    The base is ``fix_commit^`` (or ``base_commit``). Changed files matching
    ``test_files`` (glob patterns; default: test-looking paths) form ``test_patch``, the
    rest the gold ``patch``. The repository at the base is snapshotted into
    ``out_dir/<instance_id>/repo`` (one commit, no history: the fix cannot leak); the
    instance's ``base_commit`` is that snapshot commit and ``source_commit`` the original.
    ``FAIL_TO_PASS``/``PASS_TO_PASS`` are left empty: :func:`make_instance_from_repo` fills
    them by running the tests.
    """
    src = Path(repo).resolve()
    if not (src / ".git").exists():
        raise InvalidTaskError(f"--repo {src}: not a git repository")
    try:
        fix = git(src, "rev-parse", "--verify", f"{fix_commit}^{{commit}}").strip()
        base = git(src, "rev-parse", "--verify", f"{base_commit or fix + '^'}^{{commit}}").strip()
    except RuntimeError as e:
        raise InvalidTaskError(f"--fix-commit {fix_commit!r}: {e}") from None
    changed = [f for f in git(src, "diff", "--name-only", base, fix).splitlines() if f]
    patterns = list(test_files) if test_files else list(_TEST_HINTS)
    tests = [f for f in changed if _is_test_file(f, patterns)]
    code = [f for f in changed if f not in tests]
    if not tests:
        raise InvalidTaskError(
            f"the fix commit {fix[:12]} changes no test file (changed: {', '.join(changed)}); "
            "name them with --test-files"
        )
    if not code:
        raise InvalidTaskError(f"the fix commit {fix[:12]} changes only test files")
    patch = git(src, "diff", "--binary", base, fix, "--", *code)
    test_patch = git(src, "diff", "--binary", base, fix, "--", *tests)
    name = repo_name or src.name
    iid = instance_id or f"{name.replace('/', '__')}-{fix[:8]}"
    message = git(src, "log", "-1", "--format=%B", fix).strip()
    out = Path(out_dir).resolve() / iid
    out.mkdir(parents=True, exist_ok=True)
    staging = out / "repo.files"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(src), "archive", "--format=tar", base],
        capture_output=True,
        timeout=600,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(staging, filter="data")
    snapshot = snapshot_repo(staging, out / "repo")
    shutil.rmtree(staging)
    for what, diff in (("patch", patch), ("test_patch", test_patch)):
        check = subprocess.run(
            ["git", "-C", str(out / "repo"), "apply", "--check", "-"],
            input=diff.encode(),
            capture_output=True,
            timeout=120,
        )
        if check.returncode != 0:
            raise InvalidTaskError(f"the {what} does not apply to the snapshot: {check.stderr!r}")
    data = {
        "instance_id": iid,
        "repo": name if "/" in name else f"local/{name}",
        "version": "1.0",
        "base_commit": snapshot,
        "source_commit": base,
        "problem_statement": problem_statement or message,
        "patch": patch,
        "test_patch": test_patch,
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
        "image": image or f"atlas-swe-eval/{iid}:latest".lower(),
        "eval_script": make_eval_script(snapshot, tests, test_patch, test_cmd),
        "log_parser": log_parser,
        "eval_type": "pass_and_fail",
        "local_repo": str(out / "repo"),
    }
    return parse_instance(data, where=f"instance from {src}@{fix[:12]}")


async def make_instance_from_repo(
    repo: str | Path,
    fix_commit: str,
    out_dir: str | Path,
    *,
    backend: Literal["docker", "bubblewrap"] = "docker",
    docker_host: str | None = None,
    install_cmd: str | None = None,
    base_image: str = BASE_IMAGE,
    force: bool = False,
    eval_timeout_s: float = 600.0,
    **prepare: Any,
) -> SWEInstance:
    """Make a validated instance from a repository and a bug-fixing commit.

    Snapshots the repository (:func:`prepare_instance_from_repo`), builds its image with
    no network (docker backend), runs the tests without and with the fix, and keeps as
    ``FAIL_TO_PASS`` the tests the fix makes pass and as ``PASS_TO_PASS`` those passing
    both times. Writes ``out_dir/<instance_id>/instance.json``.
    """
    import anyio

    from atlas_actors.swe.environment import SWEEnvironment

    inst = await anyio.to_thread.run_sync(
        lambda: prepare_instance_from_repo(repo, fix_commit, out_dir, **prepare)
    )
    if backend == "docker":
        assert inst.local_repo is not None
        await build_instance_image(
            inst,
            Path(inst.local_repo),
            docker_host=docker_host,
            base_image=base_image,
            install_cmd=install_cmd,
            force=force,
        )
    async with SWEEnvironment(
        backend=backend, docker_host=docker_host, eval_timeout_s=eval_timeout_s
    ) as env:
        await env.reset(inst.to_task())
        before = await env.verify("")
        after = await env.verify(inst.patch)
    if before.details.get("timed_out") or after.details.get("timed_out"):
        raise InvalidTaskError("the tests timed out while validating the instance")
    passed = ("PASSED", "XFAIL")
    b_map: dict[str, str] = before.details.get("status_map", {})
    a_map: dict[str, str] = after.details.get("status_map", {})
    if not a_map:
        raise InvalidTaskError(
            "no test results could be parsed from the run with the fix (check --test-cmd "
            f"and --log-parser):\n{after.feedback[-3000:]}"
        )
    f2p = sorted(t for t, st in a_map.items() if st in passed and b_map.get(t) not in passed)
    p2p = sorted(t for t, st in a_map.items() if st in passed and b_map.get(t) in passed)
    if not f2p:
        raise InvalidTaskError(
            "the fix makes no failing test pass: nothing to grade (FAIL_TO_PASS is empty)"
        )
    inst = inst.model_copy(update={"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p})
    assert inst.local_repo is not None
    path = Path(inst.local_repo).parent / "instance.json"
    await anyio.Path(path).write_text(json.dumps(inst.model_dump(), indent=2) + "\n")
    return inst


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m atlas_actors.swe.build {build-examples,make,list,export}``."""
    import anyio

    ap = argparse.ArgumentParser(prog="python -m atlas_actors.swe.build")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build-examples", help="build the example instances' Docker images")
    b.add_argument("--docker-host", default=None, help="default: $DOCKER_HOST")
    b.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    b.add_argument("names", nargs="*", help="examples to build (default: all)")
    b.add_argument(
        "--root",
        type=Path,
        default=EXAMPLES_DIR,
        help="a folder of instances in the examples' format (default: the examples)",
    )
    m = sub.add_parser(
        "make",
        help="make an instance (and its image) from a local git repository and a fix commit",
    )
    m.add_argument("--repo", required=True, help="path of a local git repository")
    m.add_argument("--fix-commit", required=True, help="the bug-fixing commit (base: its parent)")
    m.add_argument("--base-commit", default=None, help="the base (default: FIX^)")
    m.add_argument(
        "--test-files",
        action="append",
        default=None,
        metavar="GLOB",
        help="glob of the test files among the changed ones (repeatable; default: "
        "test_*.py, *_test.py, conftest.py, tests/*, test/*)",
    )
    m.add_argument(
        "--test-cmd",
        default=DEFAULT_TEST_CMD,
        help=f"test command; the test files are appended (default: {DEFAULT_TEST_CMD!r})",
    )
    m.add_argument(
        "--log-parser",
        default="parse_log_pytest",
        help="swebench log parser for the test output (default: parse_log_pytest)",
    )
    m.add_argument(
        "--install-cmd",
        default=None,
        help="run in the image after the checkout (no network), e.g. 'pip install "
        "--no-build-isolation --no-deps -e .'",
    )
    m.add_argument("--instance-id", default=None, help="default: <repo dir>-<fix sha[:8]>")
    m.add_argument("--repo-name", default=None, help="owner/name (default: the directory name)")
    m.add_argument("--problem-statement", default=None, help="text (default: the fix's message)")
    m.add_argument("--problem-file", default=None, help="read the problem statement from a file")
    m.add_argument("--image", default=None, help="image tag (default: atlas-swe-eval/<id>:latest)")
    m.add_argument("--base-image", default=BASE_IMAGE, help=f"default: {BASE_IMAGE}")
    m.add_argument(
        "--out-dir",
        default="swe-instances",
        help="where to write <id>/instance.json and <id>/repo (default: ./swe-instances)",
    )
    m.add_argument(
        "--backend",
        choices=["docker", "bubblewrap"],
        default="docker",
        help="where to run the validation (bubblewrap builds no image)",
    )
    m.add_argument("--docker-host", default=None, help="default: $DOCKER_HOST")
    m.add_argument("--force", action="store_true", help="rebuild the image if it exists")
    m.add_argument("--jsonl", default=None, help="also append the instance to this JSONL file")
    sub.add_parser("list", help="list the example instances")
    e = sub.add_parser("export", help="write the example instances as JSONL")
    e.add_argument("out", help="output .jsonl path")
    args = ap.parse_args(argv)
    if args.cmd == "list":
        for name in example_names():
            data = json.loads((EXAMPLES_DIR / name / "instance.json").read_text())
            print(f"{data['instance_id']}\t{data['image']}")
        return 0
    if args.cmd == "export":
        with open(args.out, "w") as f:
            for inst in load_example_instances():
                f.write(inst.model_dump_json() + "\n")
        print(args.out)
        return 0
    if args.cmd == "make":
        statement = args.problem_statement
        if args.problem_file:
            statement = Path(args.problem_file).read_text()
        try:
            inst = anyio.run(
                lambda: make_instance_from_repo(
                    args.repo,
                    args.fix_commit,
                    args.out_dir,
                    backend=args.backend,
                    docker_host=args.docker_host,
                    install_cmd=args.install_cmd,
                    base_image=args.base_image,
                    force=args.force,
                    base_commit=args.base_commit,
                    test_files=args.test_files,
                    test_cmd=args.test_cmd,
                    log_parser=args.log_parser,
                    instance_id=args.instance_id,
                    repo_name=args.repo_name,
                    problem_statement=statement,
                    image=args.image,
                )
            )
        except InvalidTaskError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                f.write(inst.model_dump_json() + "\n")
        assert inst.local_repo is not None
        print(Path(inst.local_repo).parent / "instance.json")
        print(
            f"{inst.instance_id}: image {inst.image}, FAIL_TO_PASS {len(inst.FAIL_TO_PASS)}, "
            f"PASS_TO_PASS {len(inst.PASS_TO_PASS)}",
            file=sys.stderr,
        )
        return 0
    results = anyio.run(
        lambda: build_example_images(
            args.names or None, docker_host=args.docker_host, force=args.force, root=args.root
        )
    )
    for image, built in results:
        print(f"{image}\t{'built' if built else 'cached'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
