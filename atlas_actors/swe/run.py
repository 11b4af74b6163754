"""What a SWE run needs around its environment actors (``atlas-actors swe`` and
``swe-eval`` use it): containers of killed runs reaped, a watcher that reaps this run's
if it dies, the instances' images present up front (pulled once each, or built), a
progress display per image and layer, and the clean-up at the end.

A SWE run uses it like this::

    async with swe_run(instances, out_dir=out, pull="missing", progress=display) as run:
        pool = EnvironmentPool(n, options={"swe": run.environment_options}, ...)
        ...                                          # run.images.record: what was pulled
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from atlas_actors.sandbox.docker import LABEL_SESSION, DockerClient, resolve_docker_host
from atlas_actors.swe.images import (
    LayerProgress,
    PullOptions,
    PullPolicy,
    RunImages,
    build_with_swebench,
)
from atlas_actors.swe.instances import SWEInstance


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
    instances: Sequence[SWEInstance],
    *,
    out_dir: Path,
    backend: str = "docker",
    pull: PullPolicy = "missing",
    pull_retries: int = 3,
    pull_stall_timeout_s: float = 120.0,
    build_from: str | None = None,
    prune: bool = False,
    progress: Any | None = None,
) -> AsyncIterator[SWERun]:
    """Everything a SWE run needs around its environment actors.

    With the docker backend: containers of earlier runs whose process died are removed;
    a watcher process is started (its own session, so Ctrl-C does not reach it) that
    removes this run's containers if this process dies without doing so (SIGKILL); the
    images of ``instances`` are made present up front, in this process, once each (so
    environment actors never pull the same image at once), per ``pull`` (``pull_retries``
    tries, a pull silent for ``pull_stall_timeout_s`` abandoned), with per-layer progress
    on ``progress`` (a rich Progress) and recorded in ``out_dir/images.json``; an image
    still missing is built from the swebench task repo ``build_from`` when given. On exit
    (shielded from cancellation): this run's containers are removed and, with ``prune``,
    the images it pulled or built.
    """
    actor_pull = "never" if pull == "never" else "missing"  # the driver pulled already
    if backend != "docker":
        yield SWERun({"backend": backend}, None)
        return
    docker_host = resolve_docker_host()
    session = "run-" + uuid.uuid4().hex[:12]
    options: dict[str, Any] = {
        "backend": backend,
        "docker_host": docker_host,
        "pull": actor_pull,
        "labels": {LABEL_SESSION: session},
    }
    by_image: dict[str, SWEInstance] = {}
    for inst in instances:
        by_image.setdefault(inst.image, inst)
    build = None
    if build_from is not None:
        task_repo = build_from

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
            policy=pull,
            prune=prune,
            record_path=out_dir / "images.json",
            progress=display,
            options=PullOptions(attempts=pull_retries, stall_timeout_s=pull_stall_timeout_s),
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


def run_display(console: Any, *, quiet: bool = False) -> Any:
    """The rich Progress a SWE run shows: the run's row (done/total) and, while images
    are pulled, a row per image and per layer (bytes); rows have ``kind`` and
    ``summary`` fields (see :class:`PullDisplay`)."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class Count(ProgressColumn):
        def __init__(self) -> None:
            super().__init__()
            self.mofn = MofNCompleteColumn()
            self.bytes = DownloadColumn()

        def render(self, task: Task) -> Text:
            kind = task.fields.get("kind")
            if kind == "layer":
                return self.bytes.render(task) if task.total else Text("")
            if kind == "image":
                return Text("")
            return self.mofn.render(task)

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        Count(),
        TextColumn("{task.fields[summary]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
    )
