"""LLMJudge (SWE-Search's value function) against the loopback OpenAI-compatible server,
and its answer parser."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from atlas_actors.config import LLMConfig
from atlas_actors.errors import LLMError, LLMTimeout
from atlas_actors.llm.client import LLMClient
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer, Fault
from atlas_actors.search.base import Assessor, Scorer
from atlas_actors.search.discriminator import Discriminator
from atlas_actors.swe.judge import LLMJudge, parse_reward, reward_to_value
from atlas_actors.types import Candidate, Outcome, Task, TestReport

pytestmark = pytest.mark.timeout(60)

TASK = Task(
    id="demo__repo-1",
    domain="swe",
    description="wrap() drops the last word when the line is exactly full",
)
PATCH = "--- a/wrap.py\n+++ b/wrap.py\n@@ -18 +18 @@\n-    if n < width:\n+    if n <= width:\n"


def _candidate() -> Candidate:
    report = TestReport(
        fail_to_pass_passed=["tests/test_wrap.py::test_full_line"],
        pass_to_pass_failed=["tests/test_wrap.py::test_empty"],
        pass_to_pass_passed=["tests/test_wrap.py::test_short"],
    )
    outcome = Outcome(success=False, partial_score=0.67, feedback="1 regression", tests=report)
    return Candidate(solution=PATCH, outcome=outcome, fitness=0.67)


def _config(server: FakeLLMServer, **kw: Any) -> LLMConfig:
    base: dict[str, Any] = {"base_url": server.base_url, "api_key_env": None, "max_retries": 0}
    base.update(kw)
    return LLMConfig(**base)


# ------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "reward", "strict"),
    [
        ("The fix is right.\nReward: 75", 75.0, True),
        ("**Reward:** -20\nIt breaks a test.", -20.0, True),
        ("<explanation>fine</explanation>\n<reward>40</reward>", 40.0, True),
        ('{"explanation": "good", "reward": 90}', 90.0, True),
        ('Sure!\n```json\n{"explanation": "meh", "reward": "-5"}\n```', -5.0, True),
        ("value = 150", 100.0, True),  # clamped
        ("Reward: 8/10", 80.0, True),
        ("I would rate it 7 out of 10 overall.", 70.0, False),
        ("Score is 30.", 30.0, True),
        ("Reward: 10, no wait. Reward: 60", 60.0, True),  # the last labelled one
    ],
)
def test_parse_reward(text: str, reward: float, strict: bool) -> None:
    parsed = parse_reward(text)
    assert parsed is not None
    assert parsed[0] == pytest.approx(reward) and parsed[2] is strict


@pytest.mark.parametrize("text", ["", "   ", "I cannot judge this.", '{"reward": null}', "[1, 2"])
def test_parse_reward_none(text: str) -> None:
    assert parse_reward(text) is None


def test_reward_to_value() -> None:
    assert reward_to_value(-100) == 0.0 and reward_to_value(100) == 1.0
    assert reward_to_value(0) == 0.5 and reward_to_value(50) == 0.75
    assert reward_to_value(-500) == 0.0


# ----------------------------------------------------------------- against a server


async def test_a_good_answer_and_what_the_judge_was_shown() -> None:
    answer = "The change fixes the off-by-one, but breaks test_empty.\nReward: 40"
    async with FakeLLMServer(lambda r: answer) as server:
        async with LLMJudge(LLMClient(_config(server, price_output_per_mtok=1.0))) as judge:
            assert isinstance(judge, Scorer) and isinstance(judge, Assessor)
            est = await judge.assess(TASK, _candidate())
            value, reason = await judge.score(TASK, _candidate())
        prompt = server.log[0].text
    assert est.value == pytest.approx(0.7) and est.confidence == 1.0 and est.source == "llm"
    assert "off-by-one" in est.explanation and "Reward" not in est.explanation.split(":", 1)[1]
    assert (value, reason) == (est.value, est.explanation)
    assert TASK.description in prompt and "if n <= width" in prompt
    assert "test_full_line" in prompt and "Previously passing tests now failing (1)" in prompt
    assert judge.usage.calls == 2 and judge.usage_for(TASK.id).calls == 2
    assert judge.usage.cost > 0


async def test_a_json_answer() -> None:
    answer = 'Here you go:\n{"explanation": "Resolves the issue.", "reward": 95}'
    async with (
        FakeLLMServer(lambda r: answer) as server,
        LLMJudge(LLMClient(_config(server))) as judge,
    ):
        est = await judge.assess(TASK, _candidate())
    assert est.value == pytest.approx(0.975)
    assert est.explanation == "reward 95: Resolves the issue."


async def test_a_garbage_answer_is_a_logged_low_confidence_estimate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    turtles = FakeLLMServer(lambda r: "As an AI, I like turtles.")
    async with turtles as server, LLMJudge(LLMClient(_config(server))) as judge:
        with caplog.at_level(logging.WARNING, logger="atlas_actors.swe.judge"):
            est = await judge.assess(TASK, _candidate())
    assert est.value == 0.5 and est.confidence == 0.0
    assert est.explanation.startswith("unparseable:") and "turtles" in est.explanation
    assert judge.unreadable == 1 and "no reward" in caplog.text


async def test_a_timeout_raises_as_the_client_does_and_the_discriminator_falls_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with FakeLLMServer(lambda r: "Reward: 50") as server:
        cfg = _config(server, timeout_s=0.3, max_retries=0, total_timeout_s=1.0)
        async with LLMJudge(LLMClient(cfg)) as judge:
            server.push_faults(Fault("hang", hang_s=5.0))
            with pytest.raises(LLMTimeout):
                await judge.assess(TASK, _candidate())
            assert judge.usage.errors == 1
            server.push_faults(Fault("hang", hang_s=5.0))
            disc = Discriminator(judge)
            with caplog.at_level(logging.WARNING, logger="atlas_actors.search.discriminator"):
                est = await disc.assess(TASK, _candidate())
            assert est.confidence == 0.0 and est.source == "fallback"
            assert est.value == pytest.approx(0.67)  # the verifier's partial score
            assert "LLMTimeout" in est.explanation and "LLMTimeout" in caplog.text
            # The endpoint answers again: the judge is used again.
            ok = await disc.assess(TASK, _candidate())
            assert ok.source == "llm" and ok.value == pytest.approx(0.75)


async def test_a_server_error_is_an_llm_error() -> None:
    fifty = FakeLLMServer(lambda r: "Reward: 50")
    async with fifty as server, LLMJudge(LLMClient(_config(server))) as judge:
        server.push_faults("400")
        with pytest.raises(LLMError):
            await judge.assess(TASK, _candidate())


async def test_judge_prompt_without_evidence_or_with_data_solutions() -> None:
    seen: list[ChatRequest] = []

    def answer(req: ChatRequest) -> str:
        seen.append(req)
        return "Reward: -100"

    async with FakeLLMServer(answer) as server, LLMJudge(LLMClient(_config(server))) as judge:
        est = await judge.assess(TASK, Candidate(solution={"edits": [1, 2]}))
        empty = await judge.assess(TASK, Candidate(solution=""))
    assert est.value == 0.0 and empty.value == 0.0
    assert "has not been tested" in seen[0].text and '"edits": [1, 2]' in seen[0].text
    assert "empty: no change yet" in seen[1].text
