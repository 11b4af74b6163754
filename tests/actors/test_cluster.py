"""The Engine starting its own Ray, and on a multi-node Ray cluster
(ray.cluster_utils.Cluster: several raylets on this machine), including a node
removed mid-run.

Runs ``tests/helpers/cluster_run.py`` in a subprocess: neither case can share a process with the
test session's Ray.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HELPERS = Path(__file__).resolve().parent.parent / "helpers"


def run_script(*args: str) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run(
        [sys.executable, str(HELPERS / "cluster_run.py"), *args],
        cwd=HELPERS,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT "))
    return out


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_engine_starts_and_stops_its_own_local_ray() -> None:
    out = run_script("--local")
    assert out["during"] is True and out["after"] is False  # it shut down what it started
    assert out["cpus"] == out["cores"] == out["workers"]  # all cores, one actor per core
    assert out["results"] == ["a"]


@pytest.mark.slow
@pytest.mark.timeout(280)
def test_multi_node_run_spreads_actors_and_survives_node_removal() -> None:
    out = run_script("--remove-node")
    # two environment actors on two different nodes (SPREAD)
    assert len(out["env_nodes"]) == 2
    # one of those nodes was removed mid-run; its actor came back elsewhere
    assert out["removed"] in out["env_nodes"]
    assert out["removed"] not in out["env_nodes_after"]
    assert len(out["env_nodes_after"]) == 2
    # the run finished with the undisturbed answers, every evaluation counted once
    assert out["same"] is True
    assert out["stats"]["tasks_finished"] == 8
    assert out["stats"]["evaluations"] == out["expected_evaluations"]
    assert out["stats"]["retries"] >= 1
