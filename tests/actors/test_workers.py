"""The plain classes behind the actors work without Ray (DESIGN rule 1), and the
runtime ships the package only to clusters it joins."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.actors.engine import RayRuntime, package_dir
from atlas_actors.actors.workers import EnvironmentWorker, ScorerWorker, llm_judge_factory
from atlas_actors.config import EngineConfig, LLMConfig
from atlas_actors.types import Candidate, Outcome, Task, TestReport


class Env:
    instances = 0

    def __init__(self) -> None:
        Env.instances += 1
        self._task: Task | None = None
        self.closed = False

    async def reset(self, task: Task) -> str:
        self._task = task
        return ""

    async def verify(self, solution: Any) -> Outcome:
        return Outcome(success=solution == "ok", partial_score=1.0 if solution == "ok" else 0.0)

    @property
    def task(self) -> Task:
        assert self._task is not None
        return self._task

    async def aclose(self) -> None:
        self.closed = True


async def test_environment_worker_caches_per_domain() -> None:
    Env.instances = 0
    worker = EnvironmentWorker(lambda task: Env(), cache_sizes={"swe": 1})
    arc = [Task(id=f"a{i}", domain="arc") for i in range(3)]
    swe = [Task(id=f"s{i}", domain="swe") for i in range(3)]
    for t in arc + swe + arc + swe:
        out = await worker.evaluate(t, ["ok", "no"])
        assert [o.success for o in out] == [True, False]
    # ARC tasks stay cached (3 environments); SWE holds one at a time (3 + 3 resets)
    assert Env.instances == 3 + 6
    info = await worker.info()
    assert info["evaluations"] == 24 and "pid" in info
    await worker.aclose()


async def test_the_default_discriminator_backend_reads_the_verdict() -> None:
    task = Task(id="t")
    worker = ScorerWorker()
    # no test evidence: the verifier's partial score
    outcome = Outcome(success=False, partial_score=0.9)
    value, _ = await worker.score(task, Candidate(solution=1, outcome=outcome))
    assert value == pytest.approx(0.9, abs=0.02)
    # test evidence: a regression costs more than a fix gains
    fixed = TestReport(fail_to_pass_passed=["a"], pass_to_pass_passed=["b", "c"])
    broke = TestReport(
        fail_to_pass_passed=["a"], pass_to_pass_failed=["b"], pass_to_pass_passed=["c"]
    )
    good = await worker.assess(
        task, Candidate(solution="p", outcome=Outcome(success=True, tests=fixed))
    )
    bad = await worker.assess(
        task, Candidate(solution="p", outcome=Outcome(success=False, tests=broke))
    )
    assert good.value > bad.value and good.explanation
    await worker.aclose()


async def test_the_documented_discriminator_backends_are_the_real_defaults() -> None:
    """docs/engine.md names the discriminator actors' backends: without an LLM and with
    one (the coordinator's factory for ``EngineConfig.llm``)."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "engine.md").read_text()
    found = re.search(
        r"Default backend: `(\w+)`.*?with `EngineConfig\.llm`,\s+`(\w+)`",
        docs,
        re.S,
    )
    assert found is not None, "docs/engine.md no longer says what the default backend is"
    llm = LLMConfig(base_url="http://127.0.0.1:9/v1")
    offline, with_llm = ScorerWorker(), ScorerWorker(functools.partial(llm_judge_factory, llm))
    try:
        assert type(offline._scorer).__name__ == found[1]
        assert type(with_llm._scorer).__name__ == found[2]
    finally:
        await offline.aclose()
        await with_llm.aclose()


def test_runtime_ships_the_package_only_to_joined_clusters() -> None:
    rt = RayRuntime(EngineConfig(runtime_env={"env_vars": {"A": "1"}}))
    assert rt.runtime_env(remote=False) == {"env_vars": {"A": "1"}}
    remote = rt.runtime_env(remote=True)
    assert remote is not None and remote["py_modules"] == [package_dir()]
    assert package_dir().endswith("atlas_actors")
    assert RayRuntime(EngineConfig(ship_package=False)).runtime_env(remote=True) is None


def test_engine_config_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="workerz"):
        EngineConfig(workerz=2)  # type: ignore[call-arg]
