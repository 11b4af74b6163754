"""``atlas-actors swe-eval``: grade SWE-bench-format predictions in containers; and the
flags every SWE command shares (:func:`add_swe_data_flags`, :func:`load_swe_instances`,
:func:`swe_run_of`): where instances come from and how missing images are pulled or
built (the run set-up itself is :func:`atlas_actors.swe.run.swe_run`).

A SWE command uses them like this::

    add_swe_data_flags(parser)                       # --instances --split --pull ...
    ...
    instances = await load_swe_instances(args)
    async with swe_run_of(args, instances, out_dir=out, progress=bar) as run:
        pool = EnvironmentPool(n, options={"swe": run.environment_options}, ...)
        ...                                          # run.images.record: what was pulled
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio

from atlas_actors.cli.common import add_engine_flags, positive_float, positive_int
from atlas_actors.errors import ConfigError
from atlas_actors.swe.evaluate import grade_predictions, load_predictions, write_report
from atlas_actors.swe.images import PULL_POLICIES
from atlas_actors.swe.instances import DEFAULT_HUB_TIMEOUT_S, SWEInstance, load_instances
from atlas_actors.swe.run import SWERun, run_display, swe_run
from atlas_actors.swe.validate import gold_predictions, grade_gold

SWE_DATA_DEFAULTS: dict[str, Any] = {
    "split": "test",
    "hub_timeout": DEFAULT_HUB_TIMEOUT_S,
    "pull": "missing",
    "pull_retries": 3,
    "pull_stall_timeout": 120.0,
    "build_missing": False,
    "task_repo": None,
    "prune": False,
}
"""Defaults of the shared SWE flags; a Namespace built by hand (another command calling
``swe-eval``'s code) may leave any of them out."""


def swe_data_flags(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with every shared SWE flag present (defaults for the missing ones)."""
    return argparse.Namespace(**{**SWE_DATA_DEFAULTS, **vars(args)})


def add_swe_data_flags(p: argparse.ArgumentParser) -> None:
    """The flags every SWE command shares: instances, images, and leftovers."""
    g = p.add_argument_group("instances and images")
    g.add_argument(
        "--instances",
        required=True,
        metavar="SOURCE",
        help="SWE-bench instances (swebench 5.x rows: image, eval_script, log_parser, "
        "eval_type, ...; other fields are kept): a .json file (an object or a list), a "
        ".jsonl file, a .parquet file, a folder with <split>.parquet or a saved dataset, "
        "or a Hugging Face dataset name (e.g. SWE-bench/SWE-bench_Verified, or swebench's "
        "short names lite, verified, full, multilingual, multimodal). Parquet, folders and "
        "names need the 'datasets' extra (pip install 'atlas_actors[datasets]'); a name "
        "needs the hub to be reachable (HF_ENDPOINT, HF_TOKEN are honoured)",
    )
    g.add_argument(
        "--split",
        default=SWE_DATA_DEFAULTS["split"],
        metavar="NAME",
        help="the dataset split for a parquet folder or a Hugging Face name (default: test)",
    )
    g.add_argument(
        "--hub-timeout",
        type=positive_float,
        default=SWE_DATA_DEFAULTS["hub_timeout"],
        metavar="SECONDS",
        help="limit for loading a Hugging Face dataset, download included "
        f"(default: {DEFAULT_HUB_TIMEOUT_S:g})",
    )
    g.add_argument(
        "--pull",
        choices=PULL_POLICIES,
        default=SWE_DATA_DEFAULTS["pull"],
        help="instance images not on the Docker engine: 'missing' pulls them before the run "
        "starts, once each, with the registry credentials of your Docker config "
        "($DOCKER_CONFIG or ~/.docker/config.json: 'auths' entries, or a credential helper "
        "on PATH); 'always' pulls every image the run needs, present or not (a newer image "
        "under the same tag); 'never' pulls nothing and stops with an error naming the first "
        "missing image (default: missing)",
    )
    g.add_argument(
        "--pull-retries",
        type=positive_int,
        default=SWE_DATA_DEFAULTS["pull_retries"],
        metavar="N",
        help="tries per image when the registry cannot be reached or fails (5xx), with a "
        "doubling wait from 1 s; a missing image or refused credentials are not retried "
        "(default: 3)",
    )
    g.add_argument(
        "--pull-stall-timeout",
        type=positive_float,
        default=SWE_DATA_DEFAULTS["pull_stall_timeout"],
        metavar="SECONDS",
        help="a pull that reports no progress for this long is abandoned (and retried) "
        "(default: 120)",
    )
    g.add_argument(
        "--build-missing",
        action="store_true",
        help="build an image that is still missing (not pulled: --pull never, or the pull "
        "failed) from --task-repo with swebench's image builder (docker buildx build of "
        "tasks/<instance_id>/Dockerfile; needs the docker CLI with buildx and network for "
        "what the Dockerfile fetches)",
    )
    g.add_argument(
        "--task-repo",
        metavar="DIR",
        help="a swebench 5.x task repo (tasks/<instance_id>/Dockerfile) for --build-missing",
    )
    g.add_argument(
        "--prune",
        action="store_true",
        help="at the end, remove the images this run pulled or built (listed in "
        "<out>/images.json and report.json; images that were there before are kept)",
    )


def add_eval_parser(sub: Any) -> None:
    """The ``swe-eval`` subcommand and its flags."""
    swe = sub.add_parser(
        "swe-eval",
        help="grade SWE-bench predictions in containers",
        description="Grade SWE-bench-format predictions (instance_id, model_name_or_path, "
        "model_patch) against instances, through a pool of environment actors. Missing "
        "instance images are pulled first (see --pull); containers are removed even when "
        "the run is killed (a watcher process, and orphan reaping at the next start).",
    )
    what = swe.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--predictions",
        metavar="FILE",
        help="predictions JSONL (instance_id, model_name_or_path, model_patch)",
    )
    what.add_argument(
        "--gold",
        action="store_true",
        help="validate the instances instead: each runs with an empty patch and its gold "
        "patch; resolved = reproducible (FAIL_TO_PASS fail then pass, PASS_TO_PASS pass "
        "in both); writes validation.json naming the tests that misbehave",
    )
    swe.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="folder for report.json, images.json and per-instance logs",
    )
    swe.add_argument(
        "--backend",
        choices=["docker", "bubblewrap"],
        default="docker",
        help="where tests run (default: docker)",
    )
    swe.add_argument("--quiet", action="store_true", help="no progress display")
    add_swe_data_flags(swe)
    add_engine_flags(swe)


async def run_swe_eval(args: argparse.Namespace) -> int:
    """``atlas-actors swe-eval``: grade ``--predictions`` (or, with ``--gold``, validate each
    instance with an empty and its gold patch) against ``--instances`` into ``--out``.

    Reads ``predictions``, ``out``, ``backend``, ``quiet``, ``workers``, ``address``,
    ``no_ray`` and the shared SWE flags (:func:`add_swe_data_flags`)
    from ``args``. The images of the predicted instances are made present first (pulled
    per ``--pull``, progress per layer in the same display); then, with Ray (default), a
    pool of ``--workers`` environment actors grades in parallel, or with ``--no-ray``
    ``--workers`` in-process environments do. ``report.json`` gets an ``images`` section
    (what was present, pulled, built, pruned).
    """
    from rich.console import Console

    from atlas_actors.environments.local import LocalEvaluator
    from atlas_actors.swe.environment import SWEEnvironment

    console = Console(stderr=True)
    insts = await load_swe_instances(args)
    gold = bool(getattr(args, "gold", False))
    grade = grade_gold if gold else grade_predictions
    if gold:
        preds = gold_predictions(insts)
    else:
        preds = await anyio.to_thread.run_sync(load_predictions, args.predictions)
    by_id = {i.instance_id: i for i in insts}
    wanted = [by_id[i] for i in dict.fromkeys(p["instance_id"] for p in preds) if i in by_id]
    workers = int(args.workers or os.cpu_count() or 1)
    counts = {"resolved": 0, "unresolved": 0, "empty": 0, "error": 0}
    bar = run_display(console, quiet=bool(args.quiet))
    job = bar.add_task(
        "[bold]swe-eval", total=len({p["instance_id"] for p in preds}), summary="", kind="tasks"
    )

    def progress(done: int, total: int, iid: str, status: str) -> None:
        counts[status.removeprefix("cached-")] += 1
        summary = f"resolved {counts['resolved']}  unresolved {counts['unresolved']}"
        if counts["empty"] or counts["error"]:
            summary += f"  empty {counts['empty']}  error {counts['error']}"
        bar.update(job, completed=done, summary=summary)

    out_dir = Path(args.out)
    with bar:
        async with swe_run_of(args, wanted, out_dir=out_dir, progress=bar) as run:
            options = run.environment_options
            if args.no_ray:
                evaluators = [
                    LocalEvaluator(factory=lambda t: SWEEnvironment(**options), max_tasks=1)
                    for _ in range(workers)
                ]
                try:
                    report = await grade(insts, preds, out_dir, evaluators, progress=progress)
                finally:
                    for ev in evaluators:
                        await ev.aclose()
            else:
                from atlas_actors.actors.engine import RayRuntime
                from atlas_actors.actors.pool import EnvironmentPool
                from atlas_actors.config import EngineConfig

                runtime = RayRuntime(EngineConfig(workers=workers, address=args.address))
                await anyio.to_thread.run_sync(runtime.start)
                pool = EnvironmentPool(
                    workers,
                    options={"swe": options},
                    cache_sizes={"swe": 1},
                    max_in_flight_per_actor=1,  # one container per actor: no sharing
                    call_timeout_s=3600.0,
                    actor_options={"num_cpus": 0},  # actors wait on containers, not CPU
                )
                try:
                    await pool.start()
                    report = await grade(
                        insts, preds, out_dir, pool, progress=progress, concurrency=workers
                    )
                finally:
                    with anyio.CancelScope(shield=True):
                        await pool.aclose()
                        await anyio.to_thread.run_sync(runtime.shutdown)
        if run.images is not None:
            report["images"] = run.images.record.as_dict()
            await anyio.to_thread.run_sync(write_report, out_dir / "report.json", report)
    out = out_dir / "report.json"
    console.print(
        f"resolved {report['resolved_instances']} / {report['submitted_instances']} submitted "
        f"({report['unresolved_instances']} unresolved, {report['empty_patch_instances']} "
        f"empty, {report['error_instances']} errors); report: {out}"
    )
    if run.images is not None and (run.images.record.pulled or run.images.record.pruned):
        rec = run.images.record
        console.print(
            f"images: {len(rec.pulled)} pulled, {len(rec.built)} built, "
            f"{len(rec.pruned)} pruned (see {out_dir / 'images.json'})"
        )
    return 0


# ------------------------------------------------------------------ shared run set-up


async def load_swe_instances(args: argparse.Namespace) -> list[SWEInstance]:
    """``--instances`` (with ``--split``, ``--hub-timeout``), loaded in a worker thread."""
    args = swe_data_flags(args)

    def load() -> list[SWEInstance]:
        return load_instances(args.instances, split=args.split, hub_timeout_s=args.hub_timeout)

    return await anyio.to_thread.run_sync(load)


def check_swe_data_flags(args: argparse.Namespace) -> None:
    """Flag combinations argparse cannot check (ConfigError naming the flags)."""
    if args.build_missing and not args.task_repo:
        raise ConfigError(
            "--build-missing needs --task-repo DIR (a swebench 5.x task repo with "
            "tasks/<instance_id>/Dockerfile)"
        )
    if args.task_repo and not Path(args.task_repo, "tasks").is_dir():
        raise ConfigError(f"--task-repo {args.task_repo}: no tasks/ folder there")


def swe_run_of(
    args: argparse.Namespace,
    instances: Sequence[SWEInstance],
    *,
    out_dir: Path,
    progress: Any | None = None,
) -> AbstractAsyncContextManager[SWERun]:
    """:func:`~atlas_actors.swe.run.swe_run` as the shared SWE flags ask (``--backend``,
    ``--pull``, ``--pull-retries``, ``--pull-stall-timeout``, ``--build-missing``,
    ``--task-repo``, ``--prune``)."""
    args = swe_data_flags(args)
    check_swe_data_flags(args)
    return swe_run(
        instances,
        out_dir=out_dir,
        backend=getattr(args, "backend", "docker"),
        pull=args.pull,
        pull_retries=args.pull_retries,
        pull_stall_timeout_s=args.pull_stall_timeout,
        build_from=str(args.task_repo) if args.build_missing else None,
        prune=bool(args.prune),
        progress=progress,
    )
