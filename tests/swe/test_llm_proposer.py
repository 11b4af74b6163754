"""LLMActionProposer (the LLM proposer of SWE tree search) against the loopback
OpenAI-compatible server: answers, information rounds, garbage, tried actions,
determinism, usage; and whole searches that back off a wrong edit and resolve the
textkit example in a real SWEEnvironment (bubblewrap, and Docker)."""

from __future__ import annotations

import json
import logging
import random
import re
from typing import Any

import pytest

from atlas_actors.config import LLMConfig, SWESearchConfig
from atlas_actors.environments.base import Transition
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.errors import LLMError
from atlas_actors.llm.client import LLMClient
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer, Fault
from atlas_actors.search.base import ActionProposer, NodeView
from atlas_actors.search.discriminator import Discriminator, TestEvidenceScorer
from atlas_actors.search.mcts import SWESearch
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import load_example_instances
from atlas_actors.swe.llm_proposer import (
    LLMActionProposer,
    Proposals,
    parse_answer,
    read_answer,
)
from atlas_actors.types import Outcome, Task, TestReport
from tests.swe.conftest import docker_host  # noqa: F401  (the Docker set-up fixture)

pytestmark = pytest.mark.timeout(120)

WRAP = "textkit/wrap.py"
BUG = "elif len(current) + 1 + len(word) < width:"
FIX = "elif len(current) + 1 + len(word) <= width:"
GUARD = "if width < 1:"
BROKEN_GUARD = "if width < 0:"
F2P = "tests/test_wrap.py::test_wrap_line_of_exactly_width_fits"
P2P = "tests/test_wrap.py::test_slugify"

TASK = Task(
    id="atlas-examples__textkit-1",
    domain="swe",
    description="wrap() breaks lines that fit exactly",
)


def edit(old: str, new: str, path: str = WRAP, **meta: Any) -> dict[str, Any]:
    return {"kind": "edit", "path": path, "old": old, "new": new, **meta}


def answer(items: Any, prose: str = "Here is my plan.") -> str:
    return f"{prose}\n\n```json\n{json.dumps(items, indent=1)}\n```\n"


def _config(server: FakeLLMServer, **kw: Any) -> LLMConfig:
    base: dict[str, Any] = {"base_url": server.base_url, "api_key_env": None, "max_retries": 0}
    base.update(kw)
    return LLMConfig(**base)


def _node(**kw: Any) -> NodeView:
    report = TestReport(
        fail_to_pass_failed=[F2P],
        pass_to_pass_passed=[P2P],
    )
    base: dict[str, Any] = {
        "node_id": "0",
        "state": {"instance_id": TASK.id, "patch": "", "steps": 0},
        "solution": "",
        "outcome": Outcome(success=False, partial_score=0.5, feedback="1 test fails", tests=report),
    }
    base.update(kw)
    return NodeView(**base)


class FakeStepper:
    """Answers views with a fixed file and records what it was asked."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.calls: list[tuple[dict[str, Any], Any]] = []

    async def root(self, task: Task) -> Transition:
        return Transition(state={"patch": ""}, solution="")

    async def transition(self, task: Task, state: dict[str, Any], action: Any) -> Transition:
        self.calls.append((state, action))
        if action.get("kind") == "view" and action.get("path") in self.files:
            obs = self.files[action["path"]]
        elif action.get("kind") == "run":
            raise RuntimeError("the sandbox is down")
        else:
            obs = f"no such file: {action.get('path')}"
        return Transition(state={**state, "steps": 99}, solution="ignored", observation=obs)


async def _propose(
    server: FakeLLMServer,
    node: NodeView | None = None,
    *,
    k: int = 3,
    seed: int = 0,
    **options: Any,
) -> tuple[Proposals, LLMActionProposer]:
    async with LLMActionProposer(LLMClient(_config(server)), **options) as proposer:
        out = await proposer.propose(TASK, node or _node(), k, random.Random(seed))
    assert isinstance(out, Proposals)
    return out, proposer


# ------------------------------------------------------------------------ parsing


def test_parse_answer_reads_fences_bare_json_and_objects() -> None:
    items, why = parse_answer(answer([edit("a", "b")]))
    assert why is None and items == [edit("a", "b")]
    items, _ = parse_answer('I would do: [{"kind": "submit"}] and stop.')
    assert items == [{"kind": "submit"}]
    items, _ = parse_answer('```\n{"actions": [{"kind": "submit"}]}\n```')
    assert items == [{"kind": "submit"}]
    items, _ = parse_answer('```json\n{"kind": "edit", "path": "a", "old": "x", "new": "y"}\n```')
    assert items == [edit("x", "y", path="a")]
    # Literal newlines inside strings (models write code that way) are accepted.
    items, _ = parse_answer('```json\n[{"kind": "edit", "path": "a", "old": "x\n y", "new": "z"}]')
    assert items is not None and items[0]["old"] == "x\n y"
    # Two blocks: the last one holding JSON wins.
    items, _ = parse_answer('```json\n[{"kind": "submit"}]\n```\n```json\n[]\n```')
    assert items == []


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("I think the bug is in wrap().", "no JSON list"),
        ("```json\n[{'kind': 'edit',}]\n```", "not valid JSON"),
        ('```json\n"edit"\n```', "no JSON list"),
    ],
)
def test_parse_answer_says_why_not(text: str, why: str) -> None:
    items, reason = parse_answer(text)
    assert items is None and reason is not None and why in reason


def test_read_answer_normalises_and_reports() -> None:
    read = read_answer(
        answer(
            [
                edit(BUG, FIX, path="./textkit/wrap.py", label="off by one", confidence=80),
                {"action": edit(GUARD, BROKEN_GUARD), "label": "wrapped form", "confidence": 0.2},
                {"type": "edit", "path": "/testbed/textkit/wrap.py", "old": "a", "new": "b"},
                edit("x", "y", line=18, thought="extra keys are dropped"),
                {"kind": "view", "path": WRAP},
                {"kind": "teleport"},
                {"kind": "edit", "path": WRAP},
                edit("same", "same"),
                "not an object",
            ]
        )
    )
    assert [p.action for p in read.proposals] == [
        edit(BUG, FIX),
        edit(GUARD, BROKEN_GUARD),
        edit("a", "b"),
        edit("x", "y"),
    ]
    assert read.proposals[0].label == "off by one" and read.proposals[0].confidence == 0.8
    assert read.proposals[1].label == "wrapped form" and read.proposals[1].confidence == 0.2
    assert read.proposals[2].confidence is None
    assert read.info == [{"kind": "view", "path": WRAP, "start": None, "end": None}]
    problems = " | ".join(read.problems)
    assert len(read.problems) == 4, problems
    assert "item 6 (teleport)" in problems and "kinds: apply_patch" in problems
    assert "item 7 (edit)" in problems and "old" in problems and "new" in problems
    assert "changes nothing" in problems and "item 9 is not a JSON object" in problems


# ------------------------------------------------------------------------ answers


async def test_implements_the_protocol() -> None:
    async with (
        FakeLLMServer() as server,
        LLMActionProposer(LLMClient(_config(server))) as proposer,
    ):
        assert isinstance(proposer, ActionProposer)


async def test_good_answer_with_three_alternatives_gives_three_proposals() -> None:
    reply = answer(
        [
            edit(BUG, FIX, label="off-by-one in the fit check", confidence=0.6),
            edit("len(current) + 1", "len(current)", label="drop the space", confidence=0.3),
            {
                "kind": "apply_patch",
                "patch": "--- a/textkit/wrap.py\n+++ b/textkit/wrap.py\n",
                "label": "rewrite",
                "confidence": 0.9,
            },
        ]
    )
    async with FakeLLMServer(lambda r: reply) as server:
        out, proposer = await _propose(server)
        assert server.completions == 1
        request = server.log[0]
    # Best first by the model's confidence; every proposal labelled, sourced "llm".
    assert [p.label for p in out] == ["rewrite", "off-by-one in the fit check", "drop the space"]
    assert [p.prior for p in out] == [0.9, 0.6, 0.3]
    assert out[1].action == edit(BUG, FIX) and all(p.source == "llm" for p in out)
    assert out.problems == []
    # The prompt: the issue, the (empty) patch, the test evidence, k and the format.
    text = request.text
    assert TASK.description in text and "nothing changed yet" in text
    assert F2P in text and "still failing" in text and "Previously passing tests" in text
    assert "up to 3 different next actions" in request.last_user
    assert '"kind": "edit"' in request.system and "```json" in request.system
    assert '"kind": "search"' not in request.system  # no stepper: no information actions offered
    assert proposer.usage_for(TASK.id).calls == 1 and proposer.usage.calls == 1


async def test_without_confidences_the_rank_is_the_prior_and_k_caps() -> None:
    reply = answer([edit("a", "b"), edit("c", "d"), edit("e", "f")])
    async with FakeLLMServer(lambda r: reply) as server:
        out, _ = await _propose(server, k=2)
    assert [p.prior for p in out] == [1.0, 0.5] and [p.action["old"] for p in out] == ["a", "c"]
    assert out[0].label.startswith("edit textkit/wrap.py:")  # a default label


async def test_prompt_shows_the_patch_observation_tried_and_feedback() -> None:
    patch = "--- a/textkit/wrap.py\n+++ b/textkit/wrap.py\n@@ -18 +18 @@\n-a\n+b\n"
    node = _node(
        state={"patch": patch},
        solution=patch,
        depth=1,
        observation="edited textkit/wrap.py at line 18",
        tried=[edit(GUARD, BROKEN_GUARD)],
        feedback=["edit textkit/wrap.py led to no change: the text to replace was not found"],
    )
    async with FakeLLMServer(lambda r: answer([edit(BUG, FIX)])) as server:
        out, _ = await _propose(server, node)
        text = server.log[0].text
    assert len(out) == 1
    assert "```diff\n" + patch.rstrip() in text
    assert "edited textkit/wrap.py at line 18" in text
    assert "Already tried" in text and '"if width < 1:" -> "if width < 0:"' in text
    assert "the text to replace was not found" in text


async def test_a_parallel_expansion_is_asked_for_an_alternative() -> None:
    async with FakeLLMServer(lambda r: answer([edit(BUG, FIX)])) as server:
        await _propose(server, _node())
        await _propose(server, _node(slot=2))
        first, again = server.log[0].text, server.log[1].text
    assert "at the same time" not in first
    assert "2 other proposal(s) from this patch are being made at the same time" in again


async def test_info_round_views_a_file_then_answers_edits() -> None:
    file_text = "    18  " + BUG + "\n"
    stepper = FakeStepper({WRAP: file_text})

    def respond(req: ChatRequest) -> str:
        if "Results of your information actions" not in req.last_user:
            return answer([{"kind": "view", "path": WRAP, "start": 10, "end": 30}])
        assert BUG in req.last_user  # the file reached the model
        return answer([edit(BUG, FIX, label="fix", confidence=0.8)])

    node = _node()
    async with FakeLLMServer(respond) as server:
        out, proposer = await _propose(server, node, k=2, stepper=stepper)
        log = list(server.log)
    assert [p.action for p in out] == [edit(BUG, FIX)]
    assert len(log) == 2 and proposer.info_actions == 1
    # The view ran from the node's state; the state it led to was thrown away.
    assert stepper.calls == [(node.state, {"kind": "view", "path": WRAP, "start": 10, "end": 30})]
    # The conversation: system, issue, the model's view request, the results.
    roles = [m["role"] for m in log[1].messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert '"kind": "search"' in log[0].system and "3 rounds left" in log[1].last_user
    # Consecutive turns of one call use consecutive sample indices.
    assert log[1].body["seed"] == log[0].body["seed"] + 1


async def test_info_rounds_are_bounded_then_the_model_must_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stepper = FakeStepper({WRAP: BUG})
    looks = [
        {"kind": "view", "path": WRAP},
        {"kind": "run", "command": "pytest"},  # the stepper fails: shown to the model
        {"kind": "search", "pattern": "wrap"},
        {"kind": "list"},
    ]
    async with FakeLLMServer(lambda r: answer(looks)) as server:
        with caplog.at_level(logging.WARNING, logger="atlas_actors.swe.llm_proposer"):
            out, proposer = await _propose(
                server, stepper=stepper, info_rounds=2, max_info_actions=3, repair_turns=1
            )
        log = list(server.log)
    assert list(out) == [] and "still asked for information" in " ".join(out.problems)
    assert len(log) == 4  # 1 + 2 information rounds + 1 repair turn
    assert len(stepper.calls) == 6 and proposer.info_actions == 6  # 3 per round
    assert "failed: RuntimeError: the sandbox is down" in log[1].last_user
    assert "Only the first 3 information actions" in log[1].last_user
    assert "1 round left" in log[1].last_user
    assert "No more information actions" in log[2].last_user
    assert "no information rounds are left" in log[3].last_user
    assert "still asked for information" in caplog.text
    assert proposer.unusable == 1


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("```json\n[{'kind': 'edit', 'path': 'textkit/wrap.py'}]\n```", "not valid JSON"),
        ("The fix is to change < to <= in wrap().", "no JSON list"),
        (answer([{"kind": "rewrite_everything"}]), "rewrite_everything"),
        (answer([{"kind": "edit", "path": WRAP, "old": BUG}]), "field 'edit.new'"),
        (answer([{"kind": "submit"}]), "submit with no change"),
    ],
    ids=["invalid-json", "no-action", "unknown-kind", "missing-field", "empty-submit"],
)
async def test_malformed_answers_give_no_proposal_and_a_logged_reason(
    bad: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeLLMServer(lambda r: bad) as server:
        with caplog.at_level(logging.WARNING, logger="atlas_actors.swe.llm_proposer"):
            out, proposer = await _propose(server)  # never raises
        log = list(server.log)
    assert list(out) == [] and any(reason in p for p in out.problems), out.problems
    assert reason in caplog.text and proposer.unusable == 1
    # The model was told why and asked once more (repair_turns=1).
    assert len(log) == 2 and "Your answer gave no usable proposal" in log[1].last_user
    assert reason in log[1].last_user


async def test_a_repaired_answer_gives_proposals() -> None:
    def respond(req: ChatRequest) -> str:
        if "no usable proposal" in req.last_user:
            return answer([edit(BUG, FIX)])
        return "Let me think about it..."

    async with FakeLLMServer(respond) as server:
        out, proposer = await _propose(server)
    assert [p.action for p in out] == [edit(BUG, FIX)]
    assert any("no JSON list" in p for p in out.problems) and proposer.unusable == 0


async def test_partly_bad_answer_keeps_the_good_proposals() -> None:
    reply = answer([edit(BUG, FIX), {"kind": "fly"}, {"kind": "edit", "path": WRAP}])
    async with FakeLLMServer(lambda r: reply) as server:
        out, _ = await _propose(server)
        assert server.completions == 1  # no repair turn needed
    assert [p.action for p in out] == [edit(BUG, FIX)] and len(out.problems) == 2


async def test_an_empty_list_means_no_ideas() -> None:
    async with FakeLLMServer(lambda r: answer([])) as server:
        out, proposer = await _propose(server)
        assert server.completions == 1
    assert list(out) == [] and out.problems == [] and proposer.unusable == 0


async def test_tried_actions_are_not_proposed_again() -> None:
    tried = [edit(GUARD, BROKEN_GUARD)]

    def respond(req: ChatRequest) -> str:
        if "no usable proposal" in req.last_user:
            return answer([edit(BUG, FIX)])
        # The tried edit again (path spelled differently) and a duplicate of it.
        return answer([edit(GUARD, BROKEN_GUARD, path="./" + WRAP), edit(GUARD, BROKEN_GUARD)])

    async with FakeLLMServer(respond) as server:
        out, _ = await _propose(server, _node(tried=tried))
        log = list(server.log)
    assert [p.action for p in out] == [edit(BUG, FIX)]
    assert "already tried: edit textkit/wrap.py" in log[1].last_user
    # A good answer mixing tried and new actions needs no second turn.
    reply = answer([edit(GUARD, BROKEN_GUARD), edit(BUG, FIX), edit(BUG, FIX)])
    async with FakeLLMServer(lambda r: reply) as server:
        out, _ = await _propose(server, _node(tried=tried))
        assert server.completions == 1
    assert [p.action for p in out] == [edit(BUG, FIX)]


async def test_samples_are_merged_and_deduplicated() -> None:
    replies = [
        answer([edit(BUG, FIX), edit("a", "b")]),
        answer([edit(BUG, FIX), edit("c", "d")]),
    ]
    async with FakeLLMServer(lambda r: replies) as server:
        out, _ = await _propose(server, k=5, samples=2)
        assert server.completions == 1 and server.log[0].n == 2
    # Interleaved by rank across samples, equal actions once.
    assert [p.action["old"] for p in out] == [BUG, "a", "c"]


async def test_the_same_rng_gives_the_same_sample_indices() -> None:
    async def seeds(seed: int) -> list[int]:
        async with FakeLLMServer(lambda r: answer([edit(BUG, FIX)])) as server:
            await _propose(server, seed=seed)
            return [int(r.body["seed"]) for r in server.log]

    first, again, other = await seeds(7), await seeds(7), await seeds(8)
    assert first == again and first != other


async def test_the_response_cache_replays_a_call(tmp_path: Any) -> None:
    async with FakeLLMServer(lambda r: answer([edit(BUG, FIX)])) as server:
        config = _config(server, cache_dir=str(tmp_path))
        outs = []
        for _ in range(2):
            async with LLMActionProposer(LLMClient(config)) as proposer:
                outs.append(await proposer.propose(TASK, _node(), 2, random.Random(3)))
        assert server.completions == 1  # the second call was replayed from the cache
    assert outs[0] == outs[1] and proposer.usage.cache_hits == 1


async def test_an_endpoint_failure_propagates_as_llm_error() -> None:
    async with FakeLLMServer() as server:
        server.push_faults(Fault("500"))
        with pytest.raises(LLMError):
            await _propose(server)


async def test_usage_is_kept_per_task_and_popped() -> None:
    async with (
        FakeLLMServer(lambda r: answer([edit(BUG, FIX)])) as server,
        LLMActionProposer(LLMClient(_config(server))) as proposer,
    ):
        for seed in range(3):
            await proposer.propose(TASK, _node(), 1, random.Random(seed))
        other = TASK.model_copy(update={"id": "other"})
        await proposer.propose(other, _node(), 1, random.Random(0))
        assert proposer.usage_for(TASK.id).calls == 3
        assert proposer.usage_for("other").calls == 1 and proposer.usage.calls == 4
        assert proposer.pop_usage(TASK.id).calls == 3
        assert proposer.usage_for(TASK.id).calls == 0


def test_constructor_checks() -> None:
    client = LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", api_key_env=None))
    with pytest.raises(ValueError, match="samples"):
        LLMActionProposer(client, samples=0)
    with pytest.raises(ValueError, match="sample indices"):
        LLMActionProposer(client, samples=16, info_rounds=4)
    assert LLMActionProposer(client).info_rounds == 0  # no stepper: no information rounds


# ----------------------------------------------------------------- whole searches


def _scripted_model(req: ChatRequest) -> str:
    """Views wrap.py first; then the wrong edit (it breaks the width check), and once
    that was tried, the right one (the gold patch's change)."""
    if "Results of your information actions" not in req.last_user:
        return answer([{"kind": "view", "path": WRAP}], "Let me read wrap.py.")
    assert BUG in req.last_user  # the real file came back through the stepper
    if re.search(r"Already tried.*if width < 0", req.text, re.DOTALL):
        return answer([edit(BUG, FIX, label="<= in the fit check", confidence=0.9)])
    return answer([edit(GUARD, BROKEN_GUARD, label="relax the width guard", confidence=0.5)])


async def _resolve(backend: str) -> None:
    task = load_example_instances(["textkit"])[0].to_task()
    envs = LocalEvaluator(lambda t: SWEEnvironment(backend=backend, eval_timeout_s=120))  # type: ignore[arg-type]
    try:
        async with FakeLLMServer(_scripted_model) as server:
            proposer = LLMActionProposer(LLMClient(_config(server)), stepper=envs)
            config = SWESearchConfig(
                max_expansions=6, parallel_expansions=1, children_per_expansion=1
            )
            search = SWESearch(proposer, envs, envs, Discriminator(TestEvidenceScorer()), config)
            async with proposer:
                result = await search.search(task, seed=3)
            requests = server.completions
    finally:
        await envs.aclose()
    nodes = result.tree.nodes
    assert result.stopped == "success" and result.solved, result.tree.model_dump_json()[:3000]
    root, wrong, right = nodes
    assert wrong.parent == 0 and wrong.action == edit(GUARD, BROKEN_GUARD)
    assert wrong.label == "relax the width guard" and wrong.source == "llm"
    assert wrong.outcome is not None and wrong.outcome.tests is not None
    assert wrong.outcome.tests.pass_to_pass_failed  # it broke the zero-width test
    assert wrong.value < root.value and wrong.children == []  # backed off, never extended
    assert right.parent == 0 and right.action == edit(BUG, FIX) and right.succeeded
    assert root.tried == [wrong.action, right.action]
    assert result.best is not None and "+        elif len(current) + 1 + len(word) <= width:" in (
        result.best.solution
    )
    # Two expansions, each a view round and an answer; the search counted them.
    assert result.stats.expansions == 2 and requests == 4 and result.stats.llm_calls == 4


async def test_search_backs_off_a_wrong_edit_and_resolves_textkit_bubblewrap() -> None:
    await _resolve("bubblewrap")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_search_backs_off_a_wrong_edit_and_resolves_textkit_docker(
    request: pytest.FixtureRequest,
) -> None:
    request.getfixturevalue("docker_host")  # dockerd up, the example images built
    await _resolve("docker")
