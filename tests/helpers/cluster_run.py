"""Run the Engine on a multi-node ray.cluster_utils.Cluster (several raylets here).

Launched by tests/actors/test_cluster.py in a subprocess (a Cluster cannot share a process with
the test session's Ray). Prints one JSON line: where the actors ran, the results and
whether they match the in-process answers. With ``--remove-node``, one environment
actor's node is removed mid-run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import actor_fakes
import anyio
import ray.cloudpickle
from actor_fakes import FakeFactory, fake_solver
from ray.cluster_utils import Cluster

from atlas_actors.actors import Engine
from atlas_actors.config import EngineConfig
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.search.solve import task_seed
from atlas_actors.types import Task

ray.cloudpickle.register_pickle_by_value(actor_fakes)


async def main(cluster: Cluster, remove_node: bool) -> dict[str, Any]:
    tasks = [Task(id=f"t{i}", domain="fake", context={"generations": 5}) for i in range(8)]
    local = LocalEvaluator(FakeFactory())
    cfg = EngineConfig()
    expected = {
        t.id: await fake_solver(t, local, config=cfg.search, seed=task_seed(0, t.id)) for t in tasks
    }
    config = EngineConfig(
        address=cluster.address,
        workers=2,
        discriminators=0,
        batch_size=4,
        call_timeout_s=30,
        max_retries=6,
        max_concurrent_tasks=2,
    )
    out: dict[str, Any] = {}
    async with Engine(
        config, environment_factory=FakeFactory(delay_s=0.2), solver=fake_solver
    ) as engine:
        info = await engine.health_check()
        out["coordinator_node"] = info["coordinator"]["node_id"]
        out["env_nodes"] = sorted({e["node_id"] for e in info["environments"]})
        removed = None
        results = {}
        async for r in engine.solve_many(tasks):
            results[r.task_id] = r
            if remove_node and removed is None:
                victim = next(
                    n
                    for n in cluster.worker_nodes
                    if n.node_id in out["env_nodes"] and n.node_id != out["coordinator_node"]
                )
                removed = victim.node_id
                await anyio.to_thread.run_sync(cluster.remove_node, victim)
        out["removed"] = removed
        out["stats"] = await engine.stats()
        info = await engine.health_check()
        out["env_nodes_after"] = sorted({e["node_id"] for e in info["environments"]})
    out["same"] = all(
        results[t.id].solution == expected[t.id].solution
        and results[t.id].evaluations == expected[t.id].evaluations
        for t in tasks
    )
    out["expected_evaluations"] = sum(r.evaluations for r in expected.values())
    return out


async def local() -> dict[str, Any]:
    """No Ray running and no address: the Engine starts one on all cores, then stops it."""
    config = EngineConfig(discriminators=0)
    async with Engine(config, environment_factory=FakeFactory(), solver=fake_solver) as engine:
        during = ray.is_initialized()
        cpus = ray.cluster_resources().get("CPU")
        results = [r.task_id async for r in engine.solve_many([Task(id="a", domain="fake")])]
        workers = engine.workers
    return {
        "during": during,
        "after": ray.is_initialized(),
        "cpus": cpus,
        "cores": os.cpu_count(),
        "workers": workers,
        "results": results,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--remove-node", action="store_true")
    parser.add_argument("--local", action="store_true")
    args = parser.parse_args()
    if args.local:
        print("RESULT " + json.dumps(anyio.run(local)))
        sys.exit(0)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(3):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        result = anyio.run(main, cluster, args.remove_node)
    finally:
        cluster.shutdown()
    print("RESULT " + json.dumps(result))
    sys.exit(0)
