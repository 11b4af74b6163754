"""SWE-bench v5 instances: the model, loading, and the example instances.

An instance carries the fields swebench 5.x grades with (``make_test_spec`` in
``swebench.harness.utils``): ``instance_id``, ``repo``, ``version``, ``image``,
``eval_script``, ``log_parser``, ``eval_type``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, plus the
task fields ``base_commit``, ``problem_statement``, ``patch`` (gold) and ``test_patch``.
Two optional extensions: ``local_repo`` (a checkout for the bubblewrap backend) and
``source_commit`` (the commit a snapshot was made from). Any other field of a row
(``image_assets``, ``difficulty``, ...) is kept as it is and round-trips.

:func:`load_instances` reads what swebench's ``load_swebench_dataset`` reads: a JSON or
JSONL file, a parquet file, a folder holding ``<split>.parquet`` or a ``save_to_disk``
dataset, or a Hugging Face dataset name (the last three through swebench's loader,
which needs the ``datasets`` package: ``pip install 'atlas_actors[datasets]'``). Rows in
the older format (swebench < 5: no ``image``/``eval_script``) get an error that says how
to convert them (:data:`LEGACY_FORMAT_HELP`).

The example instances (small repositories written for this project, shipped as package
data under ``examples/``) build with ``python -m atlas_actors.swe.build build-examples``
(see :mod:`atlas_actors.swe.build`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

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

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    """Fields beyond these (a dataset's own columns) are kept and round-trip."""

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

    @model_validator(mode="before")
    @classmethod
    def _nulls_to_defaults(cls, data: Any) -> Any:
        # A parquet dataset gives every row every column, null where a row has none.
        if isinstance(data, dict):
            return {
                k: v
                for k, v in data.items()
                if not (v is None and k in _DEFAULTED and k not in _NULLABLE)
            }
        return data

    @field_validator("version", "created_at", mode="before")
    @classmethod
    def _as_text(cls, v: Any) -> Any:
        # Parquet may hold a version as a number and created_at as a timestamp.
        return v if isinstance(v, str) else str(v)

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


_NULLABLE = {"local_repo", "source_commit"}
_DEFAULTED = {name for name, f in SWEInstance.model_fields.items() if not f.is_required()}

LEGACY_FORMAT_HELP = (
    "atlas_actors reads SWE-bench rows in swebench 5.x's format, which carry 'image', "
    "'eval_script', 'log_parser' and 'eval_type' (swebench.harness.utils.make_test_spec "
    "reads them); this row has neither 'image' nor 'eval_script', the format of swebench "
    "< 5, where the harness derived them from the repository and version. To convert: "
    "load the dataset as swebench 5.x publishes it (a dataset 5.x's 'swebench eval' "
    "accepts), or compile a task repo with 'swebench dataset build TASK_REPO'; or derive "
    "the fields per row with swebench 4.x installed (pip install 'swebench>=4,<5' in "
    "another environment): spec = swebench.harness.test_spec.test_spec.make_test_spec(row, "
    "namespace='swebench'); image = spec.instance_image_key; eval_script = spec.eval_script; "
    "log_parser = swebench.harness.log_parsers.MAP_REPO_TO_PARSER[row['repo']].__name__; "
    "eval_type = 'fail_only' if row['repo'] in swebench.harness.constants.FAIL_ONLY_REPOS "
    "else 'pass_and_fail' (docs/swe-images.md shows the script)"
)
"""What a row in the older SWE-bench format is told (names the fields and the fix)."""


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
    iid = data.get("instance_id")
    label = f"{where} (instance_id={iid!r})" if iid else where
    legacy = not data.get("image") and not data.get("eval_script")
    if legacy and data.get("base_commit") and "test_patch" in data:  # a SWE-bench row
        raise InvalidTaskError(f"{label}: {LEGACY_FORMAT_HELP}")
    try:
        return SWEInstance.model_validate(data)
    except ValidationError as e:
        raise InvalidTaskError(f"{label}: {_describe(e)}") from None


DEFAULT_HUB_TIMEOUT_S = 600.0
"""Limit for loading a dataset from the Hugging Face hub (download included)."""
HUB_PROBE_TIMEOUT_S = 15.0
"""Limit for the first question to the hub (is the dataset there?)."""
DATASETS_EXTRA = "pip install 'atlas_actors[datasets]'"


def load_instances(
    source: str | Path,
    *,
    split: str = "test",
    hub_timeout_s: float = DEFAULT_HUB_TIMEOUT_S,
) -> list[SWEInstance]:
    """Instances from a file, a folder or a Hugging Face dataset, as swebench loads them.

    ``source`` is a JSON file (an object or a list), a JSONL file (one object per line), a
    ``.parquet`` file, a folder holding ``<split>.parquet`` or a dataset saved with
    ``save_to_disk``, or a Hugging Face dataset name (``SWE-bench/SWE-bench_Lite``, or
    one of swebench's short names: ``lite``, ``verified``, ``full``, ...). Parquet,
    folders and names go through ``swebench.harness.utils.load_swebench_dataset`` and
    need the ``datasets`` package; a name needs the hub to be reachable (a clear error
    within ``hub_timeout_s`` when it is not). Errors name the file, the line (JSONL),
    index (JSON list) or row, and the field.
    """
    rows = load_rows(source, split=split, hub_timeout_s=hub_timeout_s)
    out = [parse_instance(row, where=where) for where, row in rows]
    ids = [i.instance_id for i in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InvalidTaskError(f"{source}: duplicate instance_id(s): {', '.join(dupes)}")
    return out


def load_rows(
    source: str | Path,
    *,
    split: str = "test",
    hub_timeout_s: float = DEFAULT_HUB_TIMEOUT_S,
) -> list[tuple[str, Any]]:
    """The rows of ``source`` (what :func:`load_instances` reads), unchecked, each with
    where it came from (``file, line 3``): for a command that takes rows in any
    SWE-bench format (``swe-build`` reads rows without ``image``/``eval_script``)."""
    text_source = str(source)
    p = Path(source)
    if p.suffix in (".json", ".jsonl"):
        return _json_rows(p)
    if p.suffix == ".parquet" or p.is_dir():
        if not p.exists():
            raise InvalidTaskError(f"cannot read instances file {p}: no such file")
        rows = _swebench_rows(str(p), split, timeout_s=hub_timeout_s, hub=False)
        return [(f"{p}, row {i}", r) for i, r in enumerate(rows)]
    if p.exists():
        raise InvalidTaskError(
            f"--instances: {p} is not a .json, .jsonl or .parquet file nor a dataset folder"
        )
    if not _HUB_NAME.fullmatch(text_source):
        raise InvalidTaskError(
            f"--instances: {text_source!r} is no file or folder here, and not a Hugging "
            "Face dataset name (owner/name, or a swebench short name such as 'lite', "
            "'verified')"
        )
    name = _resolve_hub_name(text_source)
    rows = _swebench_rows(name, split, timeout_s=hub_timeout_s, hub=True)
    where = f"dataset {name} (split {split})"
    return [(f"{where}, row {i}", r) for i, r in enumerate(rows)]


_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def _json_rows(p: Path) -> list[tuple[str, Any]]:
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidTaskError(f"cannot read instances file {p}: {e}") from e
    out: list[tuple[str, Any]] = []
    stripped = text.lstrip()
    if p.suffix == ".jsonl" or (stripped and stripped[0] == "{" and "\n{" in stripped):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append((f"{p}, line {n}", json.loads(line)))
            except json.JSONDecodeError as e:
                raise InvalidTaskError(f"{p}, line {n}: invalid JSON: {e}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidTaskError(f"{p}: invalid JSON: {e}") from None
        if isinstance(data, list):
            out.extend((f"{p}, item {i}", item) for i, item in enumerate(data))
        else:
            out.append((str(p), data))
    return out


def _resolve_hub_name(name: str) -> str:
    """swebench's short names (``lite``, ``verified``, ...) to hub ids; others unchanged."""
    try:
        from swebench.cli._datasets import resolve_dataset
    except ImportError:  # an older swebench 5.x without the CLI's alias table
        return name
    resolved: str = resolve_dataset(name)
    if name.lower() in {"swe-bench-lite", "swebench-lite", "swe_bench_lite", "lite"}:
        resolved = "SWE-bench/SWE-bench_Lite"
    return resolved


def _swebench_rows(name: str, split: str, *, timeout_s: float, hub: bool) -> list[dict[str, Any]]:
    """Rows through swebench's loader, bounded by ``timeout_s`` (a daemon thread: a hung
    download does not keep the process alive)."""
    missing = [m for m in ("datasets", "pyarrow") if importlib.util.find_spec(m) is None]
    if missing:
        raise InvalidTaskError(
            f"--instances {name}: reading parquet files and Hugging Face datasets needs the "
            f"'datasets' extra ({DATASETS_EXTRA}); missing: {', '.join(missing)}"
        )
    result: list[list[dict[str, Any]]] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            if hub:
                _probe_hub(name)
            from swebench.harness.utils import load_swebench_dataset

            result.append([dict(r) for r in load_swebench_dataset(name, split)])
        except BaseException as e:
            failure.append(e)

    t = threading.Thread(target=work, name=f"load {name}", daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        raise InvalidTaskError(
            f"--instances {name}: the dataset did not load within {timeout_s:g}s "
            "(is the Hugging Face hub reachable from here? set HF_ENDPOINT for a mirror, "
            "or download it and pass the parquet file)"
        )
    if failure:
        err = failure[0]
        if isinstance(err, InvalidTaskError):
            raise err
        what = "the Hugging Face dataset" if hub else "the dataset"
        raise InvalidTaskError(
            f"--instances {name}: cannot load {what} (split {split!r}): "
            f"{type(err).__name__}: {str(err)[:500]}"
        ) from None
    return result[0]


def _probe_hub(name: str) -> None:
    """Ask the hub about ``name`` once, quickly: a clear error instead of minutes of
    retries inside ``datasets`` when the hub cannot be reached."""
    from huggingface_hub import HfApi, constants

    if constants.HF_HUB_OFFLINE:
        return  # offline mode: the datasets cache answers, or datasets says it cannot
    try:
        HfApi().dataset_info(name, timeout=HUB_PROBE_TIMEOUT_S)
    except Exception as e:
        kind = type(e).__name__
        if "NotFound" in kind or "RepositoryNotFound" in kind:
            raise InvalidTaskError(
                f"--instances {name}: no such dataset on the Hugging Face hub "
                f"({constants.ENDPOINT}): {str(e)[:300]}"
            ) from None
        raise InvalidTaskError(
            f"--instances {name}: cannot reach the Hugging Face hub at {constants.ENDPOINT} "
            f"({kind}: {str(e)[:300]}); check the network (HF_ENDPOINT for a mirror, "
            "HF_TOKEN for a gated dataset), or download the dataset and pass its parquet file"
        ) from None


def make_eval_script(
    base_commit: str,
    test_files: Sequence[str],
    test_patch: str,
    test_cmd: str = DEFAULT_TEST_CMD,
    *,
    workdir: str = TESTBED,
    run_files: Sequence[str] | None = None,
    preamble: Sequence[str] = (),
) -> str:
    """An eval script in SWE-bench's shape: the ``preamble`` commands, reset the test
    files, apply ``test_patch``, run ``test_cmd`` on ``run_files`` (default: the test
    files) between the start/end markers, reset the test files again.

    ``test_files`` are the files the test patch changes that exist at the base (reset
    with ``git checkout``); ``run_files`` the files the test command is given (those
    the patch adds included)."""
    files = " ".join(_shell_quote(f) for f in test_files)
    run = files if run_files is None else " ".join(_shell_quote(f) for f in run_files)
    patch = test_patch if test_patch.endswith("\n") else test_patch + "\n"
    reset = f"git checkout {base_commit} -- {files}\n" if files else ""
    return (
        "#!/bin/bash\n"
        "set -uxo pipefail\n"
        f"cd {workdir}\n"
        + "".join(f"{line}\n" for line in preamble)
        + reset
        + f"git apply --verbose - <<'{HEREDOC}'\n"
        f"{patch}"
        f"{HEREDOC}\n"
        ": '>>>>> Start Test Output'\n"
        f"{test_cmd} {run}\n"
        ": '>>>>> End Test Output'\n" + reset
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
