"""``atlas-actors swe-eval``: grade SWE-bench-format predictions in containers; and what
every SWE command shares (:func:`add_swe_data_flags`, :func:`load_swe_instances`,
:func:`swe_run`): where instances come from, how missing images are pulled or built, and
the guard that leaves no container behind.

A SWE command uses them like this::

    add_swe_data_flags(parser)                       # --instances --split --pull ...
    ...
    instances = await load_swe_instances(args)
    async with swe_run(args, instances, out_dir=out, progress=bar) as run:
        pool = EnvironmentPool(n, options={"swe": run.environment_options}, ...)
        ...                                          # run.images.record: what was pulled
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from atlas_actors.cli.common import add_engine_flags, positive_float, positive_int
from atlas_actors.swe.images import PULL_POLICIES, LayerProgress, PullOptions, RunImages
from atlas_actors.swe.instances import DEFAULT_HUB_TIMEOUT_S, SWEInstance

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
    swe.add_argument(
        "--predictions",
        required=True,
        metavar="FILE",
        help="predictions JSONL (instance_id, model_name_or_path, model_patch)",
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
    from atlas_actors.swe.evaluate import run_swe_eval_command

    return await run_swe_eval_command(args)


# ------------------------------------------------------------------ shared run set-up


async def load_swe_instances(args: argparse.Namespace) -> list[SWEInstance]:
    """``--instances`` (with ``--split``, ``--hub-timeout``), loaded in a worker thread."""
    from atlas_actors.swe.instances import load_instances

    args = swe_data_flags(args)

    def load() -> list[SWEInstance]:
        return load_instances(args.instances, split=args.split, hub_timeout_s=args.hub_timeout)

    return await anyio.to_thread.run_sync(load)


def check_swe_data_flags(args: argparse.Namespace) -> None:
    """Flag combinations argparse cannot check (ConfigError naming the flags)."""
    from atlas_actors.errors import ConfigError

    if args.build_missing and not args.task_repo:
        raise ConfigError(
            "--build-missing needs --task-repo DIR (a swebench 5.x task repo with "
            "tasks/<instance_id>/Dockerfile)"
        )
    if args.task_repo and not Path(args.task_repo, "tasks").is_dir():
        raise ConfigError(f"--task-repo {args.task_repo}: no tasks/ folder there")


@dataclass
class SWERun:
    """What :func:`swe_run` set up for a command run."""

    environment_options: dict[str, Any]
    """Options for every SWEEnvironment of the run (``EngineConfig.environment_options
    ['swe']`` or ``EnvironmentPool(options={'swe': ...})``)."""
    images: RunImages | None
    """The run's images (None for the bubblewrap backend)."""
    session: str = ""
    """Label value on every container of the run (``org.atlas-actors.session``)."""
    reaped_orphans: int = 0
    """Containers of earlier killed runs removed at the start."""
    notes: list[str] = field(default_factory=list)


@asynccontextmanager
async def swe_run(
    args: argparse.Namespace,
    instances: Sequence[SWEInstance],
    *,
    out_dir: Path,
    progress: Any | None = None,
) -> AsyncIterator[SWERun]:
    """Everything a SWE command run needs around its environment actors.

    With the docker backend: containers of earlier runs whose process died are removed;
    a watcher process is started (its own session, so Ctrl-C does not reach it) that
    removes this run's containers if this process dies without doing so (SIGKILL); the
    images of ``instances`` are made present up front, in this process, once each (so
    environment actors never pull the same image at once), with per-layer progress on
    ``progress`` (a rich Progress) and recorded in ``out_dir/images.json``. On exit
    (shielded from cancellation): this run's containers are removed and, with
    ``--prune``, the images it pulled or built.
    """
    args = swe_data_flags(args)
    check_swe_data_flags(args)
    backend = getattr(args, "backend", "docker")
    pull = "never" if args.pull == "never" else "missing"  # the driver pulled already
    if backend != "docker":
        yield SWERun({"backend": backend}, None)
        return
    from atlas_actors.sandbox.docker import LABEL_SESSION, DockerClient, resolve_docker_host
    from atlas_actors.swe.images import build_with_swebench

    docker_host = resolve_docker_host()
    session = "run-" + uuid.uuid4().hex[:12]
    options: dict[str, Any] = {
        "backend": backend,
        "docker_host": docker_host,
        "pull": pull,
        "labels": {LABEL_SESSION: session},
    }
    by_image: dict[str, SWEInstance] = {}
    for inst in instances:
        by_image.setdefault(inst.image, inst)
    build = None
    if args.build_missing:
        task_repo = str(args.task_repo)

        async def build(image: str) -> None:
            inst = by_image[image]
            await build_with_swebench(
                image, inst.swebench_dict(), task_repo, docker_host=docker_host
            )

    await anyio.to_thread.run_sync(lambda: out_dir.mkdir(parents=True, exist_ok=True))
    display = PullDisplay(progress) if progress is not None else None
    async with DockerClient(docker_host) as client:
        reaped = await client.reap_orphans()
        watcher = await _start_watcher(session, docker_host, out_dir / "reaper.log")
        images = RunImages(
            client,
            by_image,
            policy=args.pull,
            prune=bool(args.prune),
            record_path=out_dir / "images.json",
            progress=display,
            options=PullOptions(
                attempts=args.pull_retries, stall_timeout_s=args.pull_stall_timeout
            ),
            build=build,
        )
        run = SWERun(options, images, session=session, reaped_orphans=reaped)
        try:
            await images.prepare()
            yield run
        finally:
            with anyio.CancelScope(shield=True):
                with suppress(Exception), anyio.move_on_after(60):
                    await client.reap(session=session)
                with suppress(Exception):
                    await images.finish()
                await _stop_watcher(watcher)


async def _start_watcher(session: str, docker_host: str, log_path: Path) -> Any:
    """``python -m atlas_actors.sandbox.docker watch --session S``, detached from our
    terminal's signals, holding our end of its stdin: when we die, it reaps."""
    import os
    import subprocess

    log = await anyio.to_thread.run_sync(lambda: open(log_path, "ab"))  # noqa: SIM115
    try:
        return await anyio.open_process(
            [
                sys.executable,
                "-m",
                "atlas_actors.sandbox.docker",
                "watch",
                "--session",
                session,
                "--host",
                docker_host,
            ],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        )
    finally:
        log.close()


async def _stop_watcher(proc: Any) -> None:
    """A clean end: tell the watcher we are done (it exits without waiting)."""
    with suppress(Exception):
        await proc.stdin.send(b"done\n")
        await proc.stdin.aclose()
    with anyio.move_on_after(15):
        await proc.wait()


class PullDisplay:
    """Renders :class:`LayerProgress` in a rich Progress (the run's own display): one row
    per image (layers done), one per layer while it downloads and extracts (bytes; hidden
    when done). Rows carry ``kind`` (``image``/``layer``) and ``summary`` fields."""

    _DONE = ("Pull complete", "Already exists")

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.layers: dict[tuple[str, str], Any] = {}
        self.done: dict[str, set[str]] = {}
        self.images: dict[str, Any] = {}
        self.events: list[LayerProgress] = []
        """Every event seen (for tests and the benchmark)."""

    def _image_row(self, image: str) -> Any:
        if image not in self.images:
            self.images[image] = self.progress.add_task(
                f"pull {image}", total=None, summary="", kind="image"
            )
            self.done[image] = set()
        return self.images[image]

    def __call__(self, ev: LayerProgress) -> None:
        self.events.append(ev)
        row = self._image_row(ev.image)
        if not ev.layer:
            if ev.status == "Retrying":
                self.progress.update(row, summary=f"retrying (try {ev.attempt})")
            elif ev.status.startswith("Status:"):
                self.progress.update(row, summary=ev.status.removeprefix("Status: ")[:60])
            return
        key = (ev.image, ev.layer)
        if key not in self.layers:
            self.layers[key] = self.progress.add_task(
                f"  layer {ev.layer}", total=None, summary="", kind="layer"
            )
        task = self.layers[key]
        if ev.status in self._DONE:
            self.progress.update(task, summary=ev.status, visible=False)
            self.done[ev.image].add(ev.layer)
        elif ev.total:
            self.progress.update(task, summary=ev.status, total=ev.total, completed=ev.current or 0)
        else:
            self.progress.update(task, summary=ev.status)
        n = sum(1 for img, _ in self.layers if img == ev.image)
        self.progress.update(row, summary=f"{len(self.done[ev.image])}/{n} layers")
