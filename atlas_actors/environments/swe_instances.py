"""SWE-bench v5 instances: the model, loading, the example instances and image builds.

An instance carries the fields swebench 5.x grades with (``make_test_spec`` in
``swebench.harness.utils``): ``instance_id``, ``repo``, ``version``, ``image``,
``eval_script``, ``log_parser``, ``eval_type``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, plus the
task fields ``base_commit``, ``problem_statement``, ``patch`` (gold) and ``test_patch``.
Two optional extensions: ``local_repo`` (a checkout for the bubblewrap backend) and
``source_commit`` (the commit a snapshot was made from).

The example instances (small repositories written for this project, shipped as package
data under ``swe_examples/``) build with::

    python -m atlas_actors.environments.swe_instances build-examples
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from atlas_actors.errors import InvalidTaskError
from atlas_actors.types import Task

BASE_IMAGE = "atlas-swe-base:bookworm"
"""The image ``scripts/build-base-image`` builds."""
TESTBED = "/testbed"
"""Where the repository lives inside an instance image."""
EXAMPLES_DIR = Path(__file__).with_name("swe_examples")
"""Package data: one folder per example instance."""
DEFAULT_TEST_CMD = "python3 -m pytest -rA -p no:cacheprovider"
"""The default test command for Python repositories (``-rA`` lists every test's status)."""
HEREDOC = "EOF_ATLAS_114329324912"

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "atlas",
    "GIT_AUTHOR_EMAIL": "atlas@localhost",
    "GIT_COMMITTER_NAME": "atlas",
    "GIT_COMMITTER_EMAIL": "atlas@localhost",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def _parser_names() -> list[str]:
    from swebench.harness.log_parsers import PARSER_REGISTRY

    return sorted(PARSER_REGISTRY)


class SWEInstance(BaseModel):
    """One SWE-bench (v5) task instance."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    instance_id: str = Field(min_length=1)
    repo: str = Field(min_length=1)
    """``owner/name`` of the repository."""
    base_commit: str = Field(min_length=4)
    """The commit the patch applies to (checked out at ``/testbed`` in the image)."""
    problem_statement: str
    patch: str = ""
    """The gold patch (reference fix); may be empty in a test-only dataset."""
    test_patch: str
    """The tests that grade a fix (applied by the eval script)."""
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    image: str = Field(min_length=1)
    """The Docker image the eval script runs in."""
    eval_script: str = Field(min_length=1)
    """Bash script: applies ``test_patch``, runs the tests between the start/end markers."""
    log_parser: str = "parse_log_pytest"
    """A key of ``swebench.harness.log_parsers.PARSER_REGISTRY``."""
    eval_type: Literal["pass_and_fail", "fail_only"] = "pass_and_fail"
    version: str = ""
    hints_text: str = ""
    created_at: str = ""
    environment_setup_commit: str = ""
    local_repo: str | None = None
    """Extension: a git checkout holding ``base_commit`` (bubblewrap backend)."""
    source_commit: str | None = None
    """Extension: the commit of the original repository the snapshot was made from."""

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_list(cls, v: Any) -> Any:
        if isinstance(v, str):  # SWE-bench's HF datasets ship these as JSON strings
            try:
                return json.loads(v)
            except json.JSONDecodeError as e:
                raise ValueError(f"not a JSON list of test names: {e}") from e
        return v

    @field_validator("log_parser")
    @classmethod
    def _known_parser(cls, v: str) -> str:
        names = _parser_names()
        if v not in names:
            raise ValueError(f"unknown log parser {v!r}; allowed: {', '.join(names)}")
        return v

    @field_validator("eval_script")
    @classmethod
    def _markers(cls, v: str) -> str:
        from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT

        for marker in (START_TEST_OUTPUT, END_TEST_OUTPUT):
            if marker not in v:
                raise ValueError(f"eval_script must print the marker {marker!r}")
        return v

    def swebench_dict(self) -> dict[str, Any]:
        """The fields ``swebench.harness.utils.make_test_spec`` reads."""
        return self.model_dump(exclude={"local_repo", "source_commit"})

    def to_task(self) -> Task:
        """A :class:`Task` (domain ``swe``) whose context holds these fields."""
        return Task(
            id=self.instance_id,
            domain="swe",
            description=self.problem_statement,
            context=self.model_dump(),
        )

    @classmethod
    def from_task(cls, task: Task) -> SWEInstance:
        """The instance in ``task.context`` (InvalidTaskError naming the bad field)."""
        context = dict(task.context)
        context.setdefault("instance_id", task.id)
        context.setdefault("problem_statement", task.description)
        return parse_instance(context, where=f"task {task.id!r} context")


def _describe(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        field = ".".join(str(x) for x in e["loc"]) or "(instance)"
        msg = e["msg"]
        if e["type"] == "missing":
            msg = "required field is missing"
        parts.append(f"field {field!r}: {msg}")
    return "; ".join(parts)


def parse_instance(data: Any, *, where: str = "instance") -> SWEInstance:
    """Validate one instance dict; errors name the field and ``where`` it came from."""
    if not isinstance(data, dict):
        raise InvalidTaskError(
            f"{where}: an instance must be a JSON object, got {type(data).__name__}"
        )
    try:
        return SWEInstance.model_validate(data)
    except ValidationError as e:
        iid = data.get("instance_id")
        label = f"{where} (instance_id={iid!r})" if iid else where
        raise InvalidTaskError(f"{label}: {_describe(e)}") from None


def load_instances(path: str | Path) -> list[SWEInstance]:
    """Instances from a JSON file (an object or a list) or a JSONL file (one per line).

    Errors name the file, the line (JSONL) or index (JSON list) and the field.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidTaskError(f"cannot read instances file {p}: {e}") from e
    out: list[SWEInstance] = []
    stripped = text.lstrip()
    if p.suffix == ".jsonl" or (stripped and stripped[0] == "{" and "\n{" in stripped):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise InvalidTaskError(f"{p}, line {n}: invalid JSON: {e}") from None
            out.append(parse_instance(data, where=f"{p}, line {n}"))
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidTaskError(f"{p}: invalid JSON: {e}") from None
        if isinstance(data, list):
            for i, item in enumerate(data):
                out.append(parse_instance(item, where=f"{p}, item {i}"))
        else:
            out.append(parse_instance(data, where=str(p)))
    ids = [i.instance_id for i in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InvalidTaskError(f"{p}: duplicate instance_id(s): {', '.join(dupes)}")
    return out


def make_eval_script(
    base_commit: str,
    test_files: Sequence[str],
    test_patch: str,
    test_cmd: str = DEFAULT_TEST_CMD,
    *,
    workdir: str = TESTBED,
) -> str:
    """An eval script in SWE-bench's shape: reset the test files, apply ``test_patch``,
    run ``test_cmd`` between the start/end markers, restore the test files."""
    files = " ".join(_shell_quote(f) for f in test_files)
    patch = test_patch if test_patch.endswith("\n") else test_patch + "\n"
    return (
        "#!/bin/bash\n"
        "set -uxo pipefail\n"
        f"cd {workdir}\n"
        f"git checkout {base_commit} -- {files}\n"
        f"git apply --verbose - <<'{HEREDOC}'\n"
        f"{patch}"
        f"{HEREDOC}\n"
        ": '>>>>> Start Test Output'\n"
        f"{test_cmd} {files}\n"
        ": '>>>>> End Test Output'\n"
        f"git checkout {base_commit} -- {files}\n"
    )


def _shell_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


# --- git helpers (blocking: used by the build commands, or via a worker thread) ---


def git(repo: str | Path, *args: str, check: bool = True, input: bytes | None = None) -> str:
    """Run git in ``repo`` with a fixed identity and dates (deterministic commits)."""
    env = {**os.environ, **_GIT_ENV}
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=input,
        capture_output=True,
        env=env,
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)} failed in {repo}: {proc.stderr.decode(errors='replace')}"
        )
    return proc.stdout.decode("utf-8", errors="replace")


def snapshot_repo(files_from: Path, dest: Path) -> str:
    """Make ``dest`` a fresh git repository with one commit holding ``files_from``'s files.

    Deterministic (fixed identity and dates): the same files give the same commit id.
    """
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(files_from, dest, ignore=shutil.ignore_patterns(".git"))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--no-gpg-sign", "-m", "base")
    return git(dest, "rev-parse", "HEAD").strip()


# --- example instances (package data) ---


def example_names(root: Path = EXAMPLES_DIR) -> list[str]:
    """Names of the instances stored under ``root`` (default: the shipped examples in
    ``swe_examples/``): its folders that hold an ``instance.json``."""
    return sorted(
        d.name for d in Path(root).iterdir() if d.is_dir() and (d / "instance.json").is_file()
    )


def cache_dir() -> Path:
    """Where example checkouts are materialised (``$ATLAS_CACHE_DIR`` or ~/.cache)."""
    root = os.environ.get("ATLAS_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "atlas-actors"
    return base / "swe-examples"


def materialize_example(name: str, dest: Path | None = None, *, root: Path = EXAMPLES_DIR) -> Path:
    """Write example ``name``'s repository (a git repo at its base commit); its path.

    Files are stored as ``<path>.txt`` in the package data (so they are shipped as data
    and never collected or linted as project code); the suffix is stripped here.
    ``root`` is the folder holding the stored instances (default: the shipped examples;
    any folder in the same format, such as ``tests/data/repair_bugs``, works).
    """
    src = Path(root) / name
    instance = json.loads((src / "instance.json").read_text())
    target = dest or cache_dir() / instance["instance_id"] / "repo"
    if (target / ".git").is_dir():
        head = git(target, "rev-parse", "HEAD", check=False).strip()
        clean = git(target, "status", "--porcelain", check=False).strip() == ""
        if head == instance["base_commit"] and clean:
            return target
    staging = target.with_name(target.name + ".files")
    if staging.exists():
        shutil.rmtree(staging)
    for f in (src / "repo").rglob("*.txt"):
        rel = f.relative_to(src / "repo")
        out = staging / str(rel)[: -len(".txt")]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(f.read_bytes())
    commit = snapshot_repo(staging, target)
    shutil.rmtree(staging)
    if commit != instance["base_commit"]:
        raise InvalidTaskError(
            f"example {name}: materialised commit {commit} differs from the instance's "
            f"base_commit {instance['base_commit']} (package data edited?)"
        )
    return target


def load_example_instances(
    names: Iterable[str] | None = None, *, root: Path = EXAMPLES_DIR
) -> list[SWEInstance]:
    """The instances stored under ``root`` (default: the shipped examples), each with
    ``local_repo`` set to a materialised checkout."""
    out = []
    for name in names or example_names(root):
        data = json.loads((Path(root) / name / "instance.json").read_text())
        inst = parse_instance(data, where=f"example {name}")
        repo = materialize_example(name, root=root)
        out.append(inst.model_copy(update={"local_repo": str(repo)}))
    return out


# --- image builds ---


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
) -> list[tuple[str, bool]]:
    """Build the example instances' images; ``(image, built)`` per example."""
    import anyio

    results = []
    for name in names or example_names():
        data = json.loads((EXAMPLES_DIR / name / "instance.json").read_text())
        inst = parse_instance(data, where=f"example {name}")
        repo = await anyio.to_thread.run_sync(materialize_example, name)
        built = await build_instance_image(inst, repo, docker_host=docker_host, force=force)
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

    from atlas_actors.environments.swe import SWEEnvironment

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
    """``python -m atlas_actors.environments.swe_instances {build-examples,make,list,export}``."""
    import anyio

    ap = argparse.ArgumentParser(prog="python -m atlas_actors.environments.swe_instances")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build-examples", help="build the example instances' Docker images")
    b.add_argument("--docker-host", default=None, help="default: $DOCKER_HOST")
    b.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    b.add_argument("names", nargs="*", help="examples to build (default: all)")
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
            args.names or None, docker_host=args.docker_host, force=args.force
        )
    )
    for image, built in results:
        print(f"{image}\t{'built' if built else 'cached'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
