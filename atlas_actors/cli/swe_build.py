"""``atlas-actors swe-build``: SWE-bench instances built here from git mirrors and the
package index, in layers (:mod:`atlas_actors.swe.builder`), optionally validated
(:mod:`atlas_actors.swe.validate`). Details: docs/swe-images.md.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import anyio

from atlas_actors.cli.common import positive_float, positive_int, split_ids
from atlas_actors.errors import ConfigError
from atlas_actors.swe.builder import DEFAULT_UPLOADED_PRIOR_TO, BuildConfig

PIP_PIN_HELP = (
    "install this pip first in a repository's environments: owner/name=REQ or "
    "owner/name@version=REQ (e.g. 'pylint-dev/astroid@2.12=pip<24.1'); repeatable"
)


def add_parser(sub: Any) -> None:
    """The ``swe-build`` subcommand and its flags."""
    p = sub.add_parser(
        "swe-build",
        help="build SWE-bench instance images here from git mirrors and the package index",
        description="Build the Docker images of SWE-bench instances on this machine, in "
        "layers as swebench's harness does (a base per Python version, an environment per "
        "repository and version, an image per instance), from git mirrors of the "
        "repositories and the package index, with no registry. Writes OUT/build.json and "
        "OUT/instances.jsonl (ready for 'swe' and 'swe-eval'); with --validate also "
        "OUT/validation.json. Images that exist with the same content are not rebuilt.",
    )
    src = p.add_argument_group("instances")
    src.add_argument(
        "--instances",
        required=True,
        metavar="SOURCE",
        help="SWE-bench rows (the dataset's fields; image and eval_script not needed): "
        "a .json/.jsonl/.parquet file, a dataset folder or a Hugging Face name, as 'swe' "
        "takes them",
    )
    src.add_argument("--split", default="test", metavar="NAME", help="dataset split (test)")
    src.add_argument(
        "--hub-timeout",
        type=positive_float,
        default=600.0,
        metavar="SECONDS",
        help="limit for loading a Hugging Face dataset (600)",
    )
    src.add_argument(
        "--ids",
        action="append",
        default=[],
        metavar="ID[,ID...]",
        help="only these instance ids (repeatable)",
    )
    src.add_argument("--limit", type=positive_int, metavar="N", help="only the first N instances")
    m = p.add_argument_group("repositories")
    m.add_argument(
        "--mirrors",
        metavar="DIR",
        help="a folder with one git repository (bare or not) per repository, named <owner>__<name>",
    )
    m.add_argument(
        "--mirror",
        action="append",
        default=[],
        metavar="OWNER/NAME=PATH",
        help="the git repository of one repository (repeatable; wins over --mirrors)",
    )
    b = p.add_argument_group("build")
    b.add_argument("--out", required=True, metavar="DIR", help="build.json, instances.jsonl, logs/")
    b.add_argument("--jobs", type=positive_int, default=1, metavar="N", help="builds at a time (1)")
    b.add_argument(
        "--python-fallback",
        action="store_true",
        help="build an instance whose Python no Debian suite gives (3.6, 3.8, 3.10...) on "
        "the nearest newer one (3.9, 3.11, 3.13), noted in build.json; validation decides "
        "whether it reproduces (default: skipped, with the reason)",
    )
    b.add_argument(
        "--network",
        choices=["host", "default", "none"],
        default="host",
        help="network of the environment and instance builds, which install from the "
        "package index; with dockerd's --bridge=none only 'host' reaches it (host)",
    )
    b.add_argument(
        "--index-url",
        metavar="URL",
        help="package index for pip in the images (default: this machine's pip index if "
        "it is http(s), else https://pypi.org/simple)",
    )
    b.add_argument(
        "--ca-bundle",
        metavar="FILE",
        help="CA bundle copied into the images for pip (default: this machine's pip cert)",
    )
    b.add_argument(
        "--uploaded-prior-to",
        metavar="DATE",
        default=DEFAULT_UPLOADED_PRIOR_TO,
        help="resolve dependencies as of DATE (pip's --uploaded-prior-to: an ISO 8601 date "
        "or time), or 'newest'; the repositories' old versions break with today's "
        f"setuptools and pytest (default {DEFAULT_UPLOADED_PRIOR_TO})",
    )
    b.add_argument("--pip-pin", action="append", default=[], metavar="REPO=REQ", help=PIP_PIN_HELP)
    b.add_argument(
        "--build-timeout",
        type=positive_float,
        default=3600.0,
        metavar="SECONDS",
        help="limit for one image build (3600)",
    )
    b.add_argument(
        "--no-build-bases",
        action="store_true",
        help="do not debootstrap a missing base image (atlas-swe-base:<suite>); fail instead",
    )
    b.add_argument(
        "--image-prefix",
        default="atlas-swe",
        metavar="NAME",
        help="start of the image names: NAME-python:3.9, NAME-env/..., NAME-eval/<id>:latest "
        "(atlas-swe)",
    )
    b.add_argument(
        "--force",
        action="store_true",
        help="rebuild the environment and instance images even when unchanged, every step "
        "run again (Docker's build cache not used)",
    )
    v = p.add_argument_group("validation")
    v.add_argument(
        "--validate",
        action="store_true",
        help="run each built instance with an empty patch and its gold patch: reproducible "
        "when FAIL_TO_PASS fail then pass and PASS_TO_PASS pass in both (validation.json)",
    )
    v.add_argument(
        "--eval-timeout",
        type=positive_float,
        default=1800.0,
        metavar="SECONDS",
        help="limit for one test run while validating (1800)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress display")


def _pairs(values: list[str], flag: str, form: str) -> dict[str, str]:
    """``OWNER/NAME...=VALUE`` flags as a mapping (ConfigError naming the flag)."""
    out: dict[str, str] = {}
    for v in values:
        repo, sep, value = v.partition("=")
        if not sep or "/" not in repo or not value.strip():
            raise ConfigError(f"{flag} {v!r}: expected {form}")
        out[repo.strip()] = value.strip()
    return out


def parse_mirrors(values: list[str]) -> dict[str, Path]:
    """``--mirror OWNER/NAME=PATH`` values."""
    pairs = _pairs(values, "--mirror", "OWNER/NAME=PATH")
    return {k: Path(v).expanduser() for k, v in pairs.items()}


def parse_pins(values: list[str]) -> dict[str, str]:
    """``--pip-pin OWNER/NAME[@VERSION]=REQUIREMENT`` values."""
    return _pairs(values, "--pip-pin", "OWNER/NAME[@VERSION]=REQUIREMENT")


def parse_uploaded_prior_to(value: str) -> str | None:
    """``--uploaded-prior-to``: an ISO 8601 date or time, or ``newest`` (None)."""
    if value.strip().lower() == "newest":
        return None
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?", value.strip()):
        raise ConfigError(
            f"--uploaded-prior-to {value!r}: expected an ISO 8601 date or time "
            "(2024-01-01, 2024-01-01T00:00:00Z) or 'newest'"
        )
    return value.strip()


def build_config(args: argparse.Namespace) -> BuildConfig:
    if not args.mirrors and not args.mirror:
        raise ConfigError("give the repositories with --mirrors DIR or --mirror OWNER/NAME=PATH")
    if args.mirrors and not Path(args.mirrors).is_dir():
        raise ConfigError(f"--mirrors {args.mirrors}: no such folder")
    return BuildConfig(
        mirrors_dir=Path(args.mirrors) if args.mirrors else None,
        mirrors=parse_mirrors(args.mirror),
        jobs=args.jobs,
        network=args.network,
        python_fallback=args.python_fallback,
        build_bases=not args.no_build_bases,
        index_url=args.index_url,
        ca_bundle=Path(args.ca_bundle) if args.ca_bundle else None,
        uploaded_prior_to=parse_uploaded_prior_to(args.uploaded_prior_to),
        pip_pins=parse_pins(args.pip_pin),
        build_timeout_s=args.build_timeout,
        force=args.force,
        image_prefix=args.image_prefix,
    )


def select_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The rows of ``--instances`` this run builds (``--ids``, ``--limit``), checked."""
    from atlas_actors.errors import InvalidTaskError
    from atlas_actors.swe.builder import check_row
    from atlas_actors.swe.instances import load_rows

    rows = [
        check_row(r, where)
        for where, r in load_rows(args.instances, split=args.split, hub_timeout_s=args.hub_timeout)
    ]
    ids = [r["instance_id"] for r in rows]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InvalidTaskError(f"{args.instances}: duplicate instance_id(s): {', '.join(dupes)}")
    wanted = split_ids(args.ids)
    if wanted:
        missing = sorted(set(wanted) - set(ids))
        if missing:
            raise ConfigError(f"--ids: not in {args.instances}: {', '.join(missing)}")
        rows = [r for r in rows if r["instance_id"] in set(wanted)]
    if args.limit:
        rows = rows[: args.limit]
    return rows


class BuildDisplay:
    """A rich Progress: the run's row (instances done, by status) and one row per image
    while it builds (its last log line)."""

    def __init__(self, progress: Any, total: int) -> None:
        self.progress = progress
        self.job = progress.add_task("[bold]swe-build", total=total, summary="")
        self.rows: dict[str, Any] = {}
        self.counts: dict[str, int] = {}

    def __call__(self, event: Any) -> None:
        p = self.progress
        if event.kind == "instance":
            status = event.text
            self.counts[status] = self.counts.get(status, 0) + 1
            summary = "  ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
            p.update(self.job, advance=1, summary=summary)
            if status in ("failed", "skipped") and event.result is not None:
                p.console.print(
                    f"[yellow]{event.result.instance_id}[/]: {event.result.reason}", soft_wrap=True
                )
            return
        if event.kind == "start":
            self.rows[event.image] = p.add_task(f"  {event.image}", total=None, summary="")
        row = self.rows.get(event.image)
        if event.kind == "line" and row is not None:
            p.update(row, summary=event.text[:80])
        elif event.kind in ("built", "failed") and row is not None:
            p.update(row, visible=False)
            p.console.print(f"{event.kind} {event.image} {event.text[:200]}", soft_wrap=True)


async def run_swe_build(args: argparse.Namespace) -> int:
    """``atlas-actors swe-build`` (see :func:`add_parser`); 1 when an instance failed."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from atlas_actors.swe.builder import build_instances

    console = Console(stderr=True)
    config = build_config(args)
    rows = await anyio.to_thread.run_sync(select_rows, args)
    out = Path(args.out)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[summary]}"),
        console=console,
        disable=bool(args.quiet),
    )
    with progress:
        display = BuildDisplay(progress, len(rows))
        records = await build_instances(rows, config, out, progress=display)
    counts: dict[str, int] = {}
    for r in records:
        counts[r.status] = counts.get(r.status, 0) + 1
    console.print(
        "built {built}, cached {cached}, failed {failed}, skipped {skipped} of {n}; "
        "{out}/build.json, {out}/instances.jsonl".format(
            n=len(records),
            out=out,
            **{k: counts.get(k, 0) for k in ("built", "cached", "failed", "skipped")},
        )
    )
    if args.validate:
        ready = [r for r in records if r.status in ("built", "cached")]
        await validate_built(args, [r.instance_id for r in ready], out, console)
    return 1 if counts.get("failed") else 0


async def validate_built(args: argparse.Namespace, ids: list[str], out: Path, console: Any) -> None:
    """``--validate``: the built instances run with an empty and the gold patch."""
    from atlas_actors.environments.local import LocalEvaluator
    from atlas_actors.sandbox.docker import resolve_docker_host
    from atlas_actors.swe.environment import SWEEnvironment
    from atlas_actors.swe.instances import load_instances
    from atlas_actors.swe.validate import validate_instances

    if not ids:
        return
    wanted = set(ids)
    insts = [
        i
        for i in await anyio.to_thread.run_sync(load_instances, out / "instances.jsonl")
        if i.instance_id in wanted
    ]
    host = resolve_docker_host()
    evaluators = [
        LocalEvaluator(
            factory=lambda t: SWEEnvironment(
                docker_host=host, eval_timeout_s=args.eval_timeout, pull="never"
            ),
            max_tasks=1,
        )
        for _ in range(min(args.jobs, len(insts)))
    ]

    def progress(done: int, total: int, iid: str, status: str) -> None:
        if not args.quiet:
            word = {"resolved": "reproducible", "unresolved": "NOT reproducible"}.get(
                status, status
            )
            console.print(f"validate {done}/{total} {iid}: {word}")

    try:
        verdicts = await validate_instances(insts, out, evaluators, progress=progress)
    finally:
        for ev in evaluators:
            await ev.aclose()
    ok = sum(1 for v in verdicts.values() if v["reproducible"])
    console.print(f"reproducible {ok} of {len(verdicts)}; {out}/validation.json")
    for iid, v in sorted(verdicts.items()):
        if not v["reproducible"]:
            console.print(f"[yellow]{iid}[/]: {v['reason'][:500]}", soft_wrap=True)
