"""``atlas-actors swe`` end to end: the tree search over the bundled example instances in
real containers, driven by a scripted model on the loopback test server that proposes a
wrong edit first and the right one second; the run folder, --resume and --grade."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from atlas_actors.cli import main
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer
from atlas_actors.swe.instances import SWEInstance
from tests.swe.conftest import docker_host, examples  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.docker, pytest.mark.timeout(600)]

WRONG_MARK = "  # wrong: unchanged behaviour"


def _first_removed_line(patch: str) -> tuple[str, str]:
    """``(path, line)``: the first line the gold patch removes (the bug)."""
    path = re.search(r"^\+\+\+ b/(\S+)", patch, re.MULTILINE)
    line = re.search(r"^-(?!--)(.*)$", patch, re.MULTILINE)
    assert path and line
    return path.group(1), line.group(1)


def _answer(actions: list[dict[str, Any]]) -> str:
    return "Plan:\n\n```json\n" + json.dumps(actions) + "\n```\n"


def scripted_model(instances: list[SWEInstance]) -> Any:
    """A model that, for each instance, first proposes a wrong edit (a comment on the
    buggy line: the tests still fail) and, once that was tried, the gold patch."""

    def reply(req: ChatRequest) -> str:
        text = req.text
        inst = next(i for i in instances if i.problem_statement.splitlines()[0] in text)
        path, bug = _first_removed_line(inst.patch)
        if WRONG_MARK.strip() in text:  # the wrong edit was tried: now the right one
            right = {"kind": "apply_patch", "patch": inst.patch, "label": "the fix"}
            return _answer([{**right, "confidence": 0.9}])
        wrong = {"kind": "edit", "path": path, "old": bug, "new": bug + WRONG_MARK}
        return _answer([{**wrong, "label": "annotate the line", "confidence": 0.4}])

    return reply


def _run(argv: list[str]) -> int:
    return main(argv)


@pytest.fixture
def instances_file(examples: dict[str, SWEInstance], tmp_path: Path) -> Path:  # noqa: F811
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(i.model_dump_json() + "\n" for i in examples.values()))
    return path


async def _serve(instances: list[SWEInstance], argv: list[str]) -> tuple[int, int]:
    async with FakeLLMServer(scripted_model(instances)) as server:
        code = await anyio.to_thread.run_sync(_run, [*argv, "--llm-base-url", server.base_url])
        return code, server.completions


async def test_llm_search_backs_off_and_resolves_every_example(
    docker_host: str,  # noqa: F811
    examples: dict[str, SWEInstance],  # noqa: F811
    instances_file: Path,
    tmp_path: Path,
    ray_session: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    out = tmp_path / "run"
    argv = [
        "swe", "--instances", str(instances_file), "--out", str(out), "--proposer", "llm",
        "--tests", "visible", "--max-expansions", "6", "--parallel", "1", "--children", "1",
        "--workers", "2", "--quiet", "--grade",
    ]  # fmt: skip
    code, completions = await _serve(list(examples.values()), argv)
    assert code == 0
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in results) == sorted(i.instance_id for i in examples.values())
    for r in results:
        assert r["error"] is None and r["solved"] is True, r
        assert r["strategy"] == "mcts" and r["stopped"] == "success"
        tree = json.loads((out / "trees" / f"{r['task_id']}.json").read_text())
        _root, wrong, right = tree["nodes"]
        assert WRONG_MARK in json.dumps(wrong["action"])  # tried first, then backed off
        assert wrong["children"] == [] and right["parent"] == 0
        assert right["outcome"]["success"] is True
    predictions = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    by_id = {p["instance_id"]: p for p in predictions}
    for inst in examples.values():
        assert by_id[inst.instance_id]["model_name_or_path"] == "atlas-actors"
        assert by_id[inst.instance_id]["model_patch"].strip()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["resolved"] == len(examples) and summary["tests"] == "visible"
    assert summary["graded"]["resolved_instances"] == len(examples)  # swe-eval agrees
    assert completions >= 2 * len(examples)

    # resume: nothing left to do, nothing redone
    again, completions = await _serve(list(examples.values()), [*argv, "--resume"])
    assert again == 0 and completions == 0
    assert len((out / "results.jsonl").read_text().splitlines()) == len(examples)


def test_clear_errors_for_bad_flag_combinations(instances_file: Path, tmp_path: Path) -> None:
    base = ["swe", "--instances", str(instances_file), "--out", str(tmp_path / "o"), "--quiet"]
    assert _run([*base, "--proposer", "llm"]) == 2  # no endpoint
    assert _run([*base, "--tests", "hidden"]) == 2  # offline needs the failing tests
    assert _run([*base, "--ids", "nope"]) == 2


def test_search_flags_become_the_search_settings() -> None:
    from atlas_actors.cli import build_parser
    from atlas_actors.cli.swe import search_settings

    argv = ["swe", "--instances", "x.jsonl", "--out", "o", "--parallel", "6"]
    plain = search_settings(build_parser().parse_args(argv), "llm")
    piped = search_settings(build_parser().parse_args([*argv, "--pipeline"]), "llm")
    assert plain.parallel_expansions == piped.parallel_expansions == 6
    assert not plain.pipeline and piped.pipeline


def test_every_instance_gets_a_time_limit_a_user_can_raise_and_the_summary_counts_cuts() -> None:
    from atlas_actors.cli import build_parser
    from atlas_actors.cli.swe import DEFAULT_TIME_LIMIT_S, search_settings, summarize
    from atlas_actors.types import TaskResult

    argv = ["swe", "--instances", "x.jsonl", "--out", "o"]
    assert search_settings(build_parser().parse_args(argv), "offline").time_limit_s == (
        DEFAULT_TIME_LIMIT_S
    )
    raised = build_parser().parse_args([*argv, "--time-limit", "3600"])
    assert search_settings(raised, "offline").time_limit_s == 3600
    results = [
        TaskResult(task_id="a", domain="swe", solved=True, stopped="success"),
        TaskResult(task_id="b", domain="swe", solved=False, stopped="time"),
    ]
    results.append(
        TaskResult(
            task_id="c",
            domain="swe",
            stopped="exhausted",
            stop_detail="exhausted: fault localisation found no suspicious line",
        )
    )
    summary = summarize(results, 1.0, proposer="offline", tests="visible")
    assert summary["cut_by_time_limit"] == 1
    # every instance's stop reason is counted; an unresolved one's is said in words
    assert summary["stopped"] == {"exhausted": 1, "success": 1, "time": 1}
    assert summary["why_stopped"] == {
        "b": "time",
        "c": "exhausted: fault localisation found no suspicious line",
    }
    assert build_parser().parse_args([*argv, "--localize-timeout", "30"]).localize_timeout == 30
