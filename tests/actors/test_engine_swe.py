"""Tree search through the Engine: an environment actor and a discriminator actor killed
mid-search are replaced, and the search completes with every node counted once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
import ray

from atlas_actors.actors import Engine
from atlas_actors.config import EngineConfig, LLMConfig, SWESearchConfig
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer
from atlas_actors.swe.instances import load_example_instances

pytestmark = pytest.mark.timeout(300)

WRAP = "textkit/wrap.py"
BUG = "        elif len(current) + 1 + len(word) < width:"
FIX = "        elif len(current) + 1 + len(word) <= width:"


def model(until: list[str] | None = None) -> Any:
    """Five harmless wrong edits (a comment each: the tests still fail), then the fix;
    with ``until``, wrong edits also while it holds fewer than two entries (the search
    cannot end before the test has done what it waits for)."""
    calls = 0

    def reply(req: ChatRequest) -> str:
        nonlocal calls
        calls += 1
        if calls <= 5 or (until is not None and len(until) < 2):
            action = {"kind": "edit", "path": WRAP, "old": BUG, "new": f"{BUG}  # try {calls}"}
        else:
            action = {"kind": "edit", "path": WRAP, "old": BUG, "new": FIX}
        return "```json\n" + json.dumps([{**action, "label": f"call {calls}"}]) + "\n```"

    return reply


async def test_killed_actors_are_replaced_mid_search(ray_session: Any, tmp_path: Path) -> None:
    [inst] = load_example_instances(["textkit"])
    killed: list[str] = []
    async with FakeLLMServer(model(until=killed), latency=0.3) as server:
        config = EngineConfig(
            workers=2,
            discriminators=1,
            llm=LLMConfig(base_url=server.base_url, api_key_env=None, max_retries=0),
            mcts=SWESearchConfig(
                max_expansions=40, parallel_expansions=2, children_per_expansion=1
            ),
            environment_options={"swe": {"backend": "bubblewrap", "eval_timeout_s": 120}},
            proposer_options={"swe": {"mode": "llm"}},
            tree_dir=str(tmp_path),
            call_timeout_s=180,
        )
        async with Engine(config) as engine:

            async def killer() -> None:
                while True:  # once the tree has grown, kill one actor of each pool
                    await anyio.sleep(0.2)
                    if (await engine.stats()).get("tree_nodes", 0) >= 2:
                        break
                ray.kill((await engine.environment_actors())[0], no_restart=True)
                killed.append("environment")
                ray.kill((await engine.discriminator_actors())[0], no_restart=True)
                killed.append("discriminator")

            async with anyio.create_task_group() as tg:
                tg.start_soon(killer)
                result = await engine.solve(inst.to_task())
                tg.cancel_scope.cancel()  # a search that ended first fails below, not hangs
            stats = await engine.stats()
    assert killed == ["environment", "discriminator"]
    assert result.error is None and result.solved is True and result.strategy == "mcts"
    assert stats["replacements"] >= 1 and stats["discriminator_replacements"] >= 1
    tree = json.loads((tmp_path / f"{inst.instance_id}.json").read_text())
    keys = [n["key"] for n in tree["nodes"]]
    assert len(keys) == len(set(keys))  # every state once
    assert tree["stats"]["nodes"] == len(tree["nodes"]) == result.stats["nodes"]
    ids = [n["id"] for n in tree["nodes"]]
    assert ids == list(range(len(ids)))
