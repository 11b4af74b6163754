"""SWE-bench v5 instances: the model, loading, and the example instances.

An instance carries the fields swebench 5.x grades with (``make_test_spec`` in
``swebench.harness.utils``): ``instance_id``, ``repo``, ``version``, ``image``,
``eval_script``, ``log_parser``, ``eval_type``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, plus the
task fields ``base_commit``, ``problem_statement``, ``patch`` (gold) and ``test_patch``.
Two optional extensions: ``local_repo`` (a checkout for the bubblewrap backend) and
``source_commit`` (the commit a snapshot was made from).

The example instances (small repositories written for this project, shipped as package
data under ``examples/``) build with ``python -m atlas_actors.swe.build build-examples``
(see :mod:`atlas_actors.swe.build`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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
EXAMPLES_DIR = Path(__file__).with_name("examples")
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
    ``examples/``): its folders that hold an ``instance.json``."""
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
