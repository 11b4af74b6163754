"""A reset returns the repository to the image's state, not to a clean checkout: the
ignored build outputs an install left (an ``*.egg-info``, a generated ``_version.py``)
survive every reset, on both backends, while anything else untracked goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_actors.swe.environment import RunCommand, SWEEnvironment
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.workspace import BubblewrapWorkspace, DockerWorkspace, reset_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

READ_METADATA = (
    "python3 -c 'import importlib.metadata as m, measures; "
    'print(m.version("measures"), measures.__version__)\''
)
LITTER = (
    "touch scratch.txt measures/scratch.py && mkdir -p other.egg-info build && "
    "touch other.egg-info/PKG-INFO build/out.o"
)


def _install(root: Path) -> None:
    """What the image's install step does (see the instance's ``install_cmd``)."""
    (root / "measures" / "_version.py").write_text('version = "1.4.0"\n')
    info = root / "measures.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: measures\nVersion: 1.4.0\n")


class _InstalledCheckout(BubblewrapWorkspace):
    """A bubblewrap workspace whose checkout had the install step run in it."""

    def _prepare(self, root: Path) -> None:
        super()._prepare(root)
        _install(root / "testbed")


@pytest.fixture(params=["docker", "bubblewrap"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("test_instance_images")
    return str(request.param)


async def test_reset_keeps_the_ignored_outputs_the_workspace_started_with(
    backend: str, test_instances: dict[str, SWEInstance]
) -> None:
    inst = test_instances["measures"]
    ws: DockerWorkspace | BubblewrapWorkspace
    if backend == "docker":
        from atlas_actors.sandbox.docker import ContainerLimits, DockerClient

        client = DockerClient()
        await client.connect()
        ws = DockerWorkspace(client, inst.image, run="reset-test", limits=ContainerLimits())
    else:
        assert inst.local_repo
        ws = _InstalledCheckout(inst.local_repo, inst.base_commit)
    try:
        await ws.start()
        before = await ws.run(READ_METADATA, timeout_s=60)
        assert before.output.split() == ["1.4.0", "1.4.0"], before.output
        r = await ws.run(f"{LITTER} && {reset_command(inst.base_commit)}", timeout_s=60)
        assert r.ok, r.output
        listing = await ws.run("git status --porcelain --ignored", timeout_s=60)
        assert "measures.egg-info/" in listing.output
        assert "measures/_version.py" in listing.output
        for gone in ("scratch.txt", "measures/scratch.py", "other.egg-info", "build/"):
            assert gone not in listing.output, listing.output
        after = await ws.run(READ_METADATA, timeout_s=60)
        assert after.output.split() == ["1.4.0", "1.4.0"], after.output
    finally:
        await ws.close()
        if backend == "docker":
            await client.reap("reset-test")
            await client.close()


async def test_verify_and_restore_keep_the_package_metadata(
    test_instance_images: str, test_instances: dict[str, SWEInstance]
) -> None:
    """The gold patch resolves the instance only if the package's metadata reads (one of
    its PASS_TO_PASS tests compares it with the generated version file); a verify, a
    restore and a command that litters the tree leave it readable."""
    inst = test_instances["measures"]
    async with SWEEnvironment(eval_timeout_s=120) as env:
        await env.reset(inst.to_task())
        assert not (await env.verify("")).success
        gold = await env.verify(inst.patch)
        assert gold.success, gold.feedback
        await env.step(RunCommand(command=LITTER, timeout_s=30))
        await env.set_state({"patch": ""})
        r = await env.workspace.run(READ_METADATA, timeout_s=60)
        assert r.output.split() == ["1.4.0", "1.4.0"], r.output
        assert not (await env.workspace.run("test -e scratch.txt", timeout_s=30)).ok
        assert (await env.verify(inst.patch)).success
