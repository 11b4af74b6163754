"""Instance images on demand, against a real dockerd and a private registry on 127.0.0.1
(tests/swe/registry.py): swe-eval pulls a missing image once (two actors need it),
reports progress per layer, lists and prunes it; --pull never and a registry that is
down or silent give clear, bounded errors; credentials come from the Docker config;
a run killed mid-pull or mid-test leaves no container."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from atlas_actors.errors import ConfigError, DockerError, ImageMissing, ImagePullError
from atlas_actors.sandbox.docker import LABEL_MANAGED, LABEL_OWNER, DockerClient
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.images import (
    LayerProgress,
    PullOptions,
    ensure_image,
    registry_auth,
    registry_of,
)
from atlas_actors.swe.instances import SWEInstance
from tests.swe.conftest import ROOT, TEST_IMAGE_BASE
from tests.swe.registry import (
    LocalRegistry,
    SilentPort,
    ThrottledProxy,
    containers_from,
    free_port,
    pull_events,
    push_unique_image,
    remove_local,
)

docker_marks = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(900)]


def _instance(base: SWEInstance, image: str, suffix: str, *, sleep_s: int = 0) -> dict[str, Any]:
    data = base.model_dump(exclude={"local_repo"})
    data.update(instance_id=f"{base.instance_id}-{suffix}", image=image)
    if sleep_s:
        start = ": '>>>>> Start Test Output'\n"
        data["eval_script"] = data["eval_script"].replace(start, f"{start}sleep {sleep_s}\n")
    return data


def _write_run(tmp: Path, rows: list[dict[str, Any]], patches: dict[str, str]) -> tuple[Path, Path]:
    inst_file, pred_file = tmp / "instances.jsonl", tmp / "preds.jsonl"
    inst_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pred_file.write_text(
        "".join(
            json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": p}) + "\n"
            for i, p in patches.items()
        )
    )
    return inst_file, pred_file


# ------------------------------------------------------------------ credentials (no Docker)


async def test_registry_auth_from_docker_config(tmp_path: Path) -> None:
    assert registry_of("ubuntu:22.04") == "docker.io"
    assert registry_of("swebench/sweb.eval.x86_64.a_1776_b-1:latest") == "docker.io"
    assert registry_of("ghcr.io/o/i:1") == "ghcr.io"
    assert registry_of("127.0.0.1:5000/atlas/x:1") == "127.0.0.1:5000"
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "auths": {
                    "https://index.docker.io/v1/": {
                        "auth": base64.b64encode(b"alice:s3cret").decode()
                    },
                    "ghcr.io": {"identitytoken": "tok"},
                    "http://127.0.0.1:5000": {"username": "bob", "password": "pw"},
                }
            }
        )
    )
    hub = await registry_auth("docker.io", config_path=cfg)
    assert hub.auth == {"username": "alice", "password": "s3cret", "serveraddress": "docker.io"}
    assert (await registry_auth("ghcr.io", config_path=cfg)).auth == {
        "identitytoken": "tok",
        "serveraddress": "ghcr.io",
    }
    assert (await registry_auth("127.0.0.1:5000", config_path=cfg)).auth is not None
    none = await registry_auth("quay.io", config_path=cfg)
    assert none.auth is None and "no credentials for quay.io" in none.note
    cfg.write_text("{not json")
    with pytest.raises(ConfigError, match=r"config\.json"):
        await registry_auth("docker.io", config_path=cfg)


async def test_credential_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    helper = bindir / "docker-credential-atlasfake"
    helper.write_text(
        "#!/bin/sh\nread server\n"
        'echo "{\\"ServerURL\\": \\"$server\\", \\"Username\\": \\"carol\\", '
        '\\"Secret\\": \\"pw-$server\\"}"\n'
    )
    helper.chmod(helper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"auths": {}, "credHelpers": {"ghcr.io": "atlasfake"}}))
    got = await registry_auth("ghcr.io", config_path=cfg)
    assert got.auth == {"username": "carol", "password": "pw-ghcr.io", "serveraddress": "ghcr.io"}
    assert "docker-credential-atlasfake" in got.source
    # A helper that is not installed: anonymous, and the note says why.
    cfg.write_text(json.dumps({"credsStore": "desktop"}))
    missing = await registry_auth("docker.io", config_path=cfg)
    assert missing.auth is None
    assert "docker-credential-desktop" in missing.note and "not installed" in missing.note


# ------------------------------------------------------------------ pulling


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_pull_reports_layers_and_a_process_pulls_once(pushed_image: str) -> None:
    await remove_local(pushed_image)
    events: list[LayerProgress] = []
    since = time.time()
    async with DockerClient() as docker:
        assert await ensure_image(docker, pushed_image, progress=events.append) == "pulled"
        assert await ensure_image(docker, pushed_image) == "present"
    assert await pull_events(pushed_image, since) == 1
    layers = {e.layer for e in events if e.layer}
    assert len(layers) >= 2
    downloading = [e for e in events if e.status == "Downloading" and e.total]
    assert downloading and all(e.current is not None for e in downloading)
    assert any(e.total and e.total > 3_000_000 for e in downloading)  # the 4 MB layer
    assert {e.status for e in events} >= {"Pull complete", "Already exists"}
    # Two environments of one process reset at once on a missing image: one pull.
    await remove_local(pushed_image)
    since = time.time()
    inst = _instance(_textkit(), pushed_image, "lock")
    task = SWEInstance.model_validate(inst).to_task()
    async with SWEEnvironment() as a, SWEEnvironment() as b, anyio.create_task_group() as tg:
        tg.start_soon(a.reset, task)
        tg.start_soon(b.reset, task)
    assert await pull_events(pushed_image, since) == 1


def _textkit() -> SWEInstance:
    from atlas_actors.swe.instances import load_example_instances

    return load_example_instances(["textkit"])[0]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_pull_never_and_registry_down_are_clear(
    pushed_image: str, registry: LocalRegistry
) -> None:
    await remove_local(pushed_image)
    async with DockerClient() as docker:
        with pytest.raises(ImageMissing) as e:
            await ensure_image(docker, pushed_image, "never")
        assert pushed_image in str(e.value) and "--pull" in str(e.value)
        # SWEEnvironment(pull="never") says the same at reset.
        task = SWEInstance.model_validate(_instance(_textkit(), pushed_image, "n")).to_task()
        async with SWEEnvironment(pull="never") as env:
            with pytest.raises(ImageMissing, match="--pull"):
                await env.reset(task)
        # Nothing listens: a clear error after the bounded tries, in seconds.
        down = f"127.0.0.1:{free_port()}/atlas/textkit:1"
        started = time.monotonic()
        with pytest.raises(ImagePullError) as e2:
            await ensure_image(docker, down, options=PullOptions(attempts=3, backoff_s=0.5))
        took = time.monotonic() - started
        msg = str(e2.value)
        assert took < 30, took
        assert down in msg and "cannot be reached" in msg and "3 tries" in msg
        assert "--pull never" in msg
        # A registry that accepts and never answers: the stall limit bounds each try.
        silent = SilentPort()
        try:
            hung = f"127.0.0.1:{silent.port}/atlas/textkit:1"
            started = time.monotonic()
            with pytest.raises(ImagePullError, match=r"no progress for 2s.*2 tries"):
                await ensure_image(
                    docker,
                    hung,
                    options=PullOptions(attempts=2, backoff_s=0.2, stall_timeout_s=2),
                )
            assert time.monotonic() - started < 30
        finally:
            silent.close()
        # An image the registry does not have is not retried.
        absent = f"{registry.host}/atlas/nothing:1"
        with pytest.raises(ImagePullError, match=r"has no image.*1 try"):
            await ensure_image(docker, absent)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_swe_eval_pulls_once_for_two_actors_and_prunes(
    pushed_image: str,
    tmp_path: Path,
    ray_session: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from atlas_actors.cli import main

    anyio.run(remove_local, pushed_image)
    base = _textkit()
    rows = [_instance(base, pushed_image, s) for s in ("a", "b")]
    inst_file, pred_file = _write_run(tmp_path, rows, {r["instance_id"]: base.patch for r in rows})
    out = tmp_path / "out"
    since = time.time()
    argv = ["swe-eval", "--instances", str(inst_file), "--predictions", str(pred_file),
            "--out", str(out), "--workers", "2", "--prune"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["resolved_instances"] == 2, report
    assert report["images"]["pulled"] == [pushed_image]
    assert report["images"]["pruned"] == [pushed_image]
    assert json.loads((out / "images.json").read_text())["pulled"] == [pushed_image]
    assert anyio.run(pull_events, pushed_image, since) == 1  # once, for both actors
    assert not anyio.run(_exists, pushed_image)  # pruned
    assert anyio.run(containers_from, pushed_image) == []
    err = capsys.readouterr().err
    assert f"pull {pushed_image[:20]}" in err and "1 pulled" in err  # the progress display
    # --pull never: the clear error, naming the image and the flag; nothing graded.
    assert main([*argv[:5], "--out", str(tmp_path / "never"), "--pull", "never", "--no-ray"]) == 2
    err = capsys.readouterr().err
    assert pushed_image in err and "--pull" in err and "never" in err


async def _exists(image: str) -> bool:
    async with DockerClient() as docker:
        return await docker.image_exists(image)


@pytest.mark.docker
@pytest.mark.slow
async def test_build_missing_is_guarded(pushed_image: str, tmp_path: Path) -> None:
    from atlas_actors.cli import main

    base = _textkit()
    row = _instance(base, pushed_image, "build")
    inst_file, pred_file = _write_run(tmp_path, [row], {row["instance_id"]: base.patch})
    argv = ["swe-eval", "--instances", str(inst_file), "--predictions", str(pred_file),
            "--out", str(tmp_path / "o"), "--no-ray", "--pull", "never",
            "--build-missing"]  # fmt: skip
    assert await anyio.to_thread.run_sync(main, argv) == 2  # no --task-repo
    repo = tmp_path / "tasks-repo"
    (repo / "tasks" / row["instance_id"]).mkdir(parents=True)
    (repo / "tasks" / row["instance_id"] / "Dockerfile").write_text(f"FROM {TEST_IMAGE_BASE}\n")
    await remove_local(pushed_image)
    from atlas_actors.swe.images import build_with_swebench

    if shutil.which("docker") is not None:
        buildx = subprocess.run(["docker", "buildx", "version"], capture_output=True, check=False)
        if buildx.returncode == 0:
            pytest.skip("docker buildx is installed here: the guard does not apply")
    with pytest.raises(DockerError, match=r"docker buildx build --load.*--pull missing"):
        await build_with_swebench(pushed_image, row, repo, docker_host=os.environ["DOCKER_HOST"])
    # Through the CLI: the same error, exit 2, nothing left behind.
    argv += ["--task-repo", str(repo), "--out", str(tmp_path / "o2")]
    assert await anyio.to_thread.run_sync(main, argv) == 2
    assert not await _exists(pushed_image)
    assert await containers_from(pushed_image) == []


@pytest.mark.docker
async def test_reap_orphans_removes_dead_owners_only(docker_host: str) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    import socket

    from atlas_actors.sandbox.docker import owner_label

    labels = {
        "dead": f"{socket.gethostname()}:{dead.pid}:1",
        "alive": owner_label(),
        "elsewhere": "another-host:1:1",
    }
    ids: dict[str, str] = {}
    async with DockerClient() as docker:
        for name, owner in labels.items():
            c = await docker.api.containers.create(
                {
                    "Image": "atlas-swe-base:bookworm",
                    "Cmd": ["true"],
                    "Labels": {LABEL_MANAGED: "1", LABEL_OWNER: owner},
                    "NetworkDisabled": True,
                }
            )
            ids[name] = c.id
        try:
            assert await docker.orphans() == [ids["dead"]]
            assert await docker.reap_orphans() == 1
            left = await docker.list_containers()
            assert ids["dead"] not in left and ids["alive"] in left and ids["elsewhere"] in left
        finally:
            for cid in ids.values():
                with contextlib.suppress(Exception):
                    await docker.api.containers.container(cid).delete(force=True)


# ------------------------------------------------------------------ killed runs


def _default_sigint() -> None:
    """In the child: SIGINT back to its default. A shell starts a background job with
    SIGINT ignored, and a child inherits that; the test sends SIGINT as a user's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("wb") as f:
        return subprocess.Popen(
            [sys.executable, "-m", "atlas_actors.cli", *argv],
            stdout=f,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            preexec_fn=_default_sigint,
        )


def _wait_for(
    what: str, check: Any, timeout_s: float, proc: subprocess.Popen[bytes], log: Path
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {what}: {log.read_text()[-3000:]}")
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"no {what} within {timeout_s}s: {log.read_text()[-3000:]}")


def _left(image: str, wait_s: float) -> list[str]:
    """Our containers from ``image`` once the dust settles (at most ``wait_s``)."""
    deadline = time.monotonic() + wait_s
    while True:
        left = anyio.run(containers_from, image)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


@pytest.mark.parametrize(
    ("phase", "sig", "ray"),
    [
        ("pull", signal.SIGKILL, False),
        ("pull", signal.SIGINT, False),
        ("test", signal.SIGKILL, False),
        ("test", signal.SIGINT, False),
        ("test", signal.SIGKILL, True),
    ],
    ids=["pull-kill", "pull-int", "test-kill", "test-int", "test-kill-ray"],
)
@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_run_leaves_no_container(
    registry: LocalRegistry,
    tmp_path: Path,
    phase: str,
    sig: signal.Signals,
    ray: bool,
) -> None:
    proxy = ThrottledProxy(registry.port, rate=400_000)  # 4 MB layer: about 10 s
    try:
        image = f"127.0.0.1:{proxy.port}/atlas/kill:{os.urandom(4).hex()}"
        if phase == "pull":
            anyio.run(_push_direct, registry, image, proxy.port)
        else:
            anyio.run(_tag_local, image)
        base = _textkit()
        row = _instance(base, image, "k", sleep_s=300 if phase == "test" else 0)
        inst_file, pred_file = _write_run(tmp_path, [row], {row["instance_id"]: base.patch})
        log = tmp_path / "cli.log"
        argv = ["swe-eval", "--instances", str(inst_file), "--predictions", str(pred_file),
                "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]  # fmt: skip
        proc = _cli([*argv, *([] if ray else ["--no-ray"])], log)
        try:
            if phase == "pull":
                _wait_for("pull under way", lambda: proxy.forwarded > 300_000, 120, proc, log)
            else:
                _wait_for("container", lambda: anyio.run(containers_from, image), 240, proc, log)
                time.sleep(3)  # inside the eval script's sleep
            proc.send_signal(sig)
            code = proc.wait(120)
        finally:
            if proc.poll() is None:
                proc.kill()
        if sig == signal.SIGINT:
            assert code == 130, log.read_text()[-3000:]
            assert anyio.run(containers_from, image) == []  # cleaned before it exited
        else:
            assert code == -signal.SIGKILL
            # The watcher removes what the killed run (and its actors) left.
            assert _left(image, wait_s=90) == [], log.read_text()[-3000:]
        if phase == "pull":
            assert not anyio.run(_exists, image)
    finally:
        proxy.close()
        anyio.run(remove_local, image)


async def _push_direct(registry: LocalRegistry, image: str, proxy_port: int) -> None:
    """Push the test image to the registry (straight, not through the slow proxy), so
    that ``image`` (the proxy's name for it) is in the registry and not on the engine."""
    direct = image.replace(f"127.0.0.1:{proxy_port}", registry.host)
    await push_unique_image(TEST_IMAGE_BASE, direct, blob_mb=4)


async def _tag_local(image: str) -> None:
    repo, _, tag = image.rpartition(":")
    async with DockerClient() as docker:
        await docker.api.images.tag(TEST_IMAGE_BASE, repo=repo, tag=tag)
