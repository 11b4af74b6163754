"""The replay model: gold patches cut into steps that apply exactly once at whatever
state the search is in (repeated context, several hunks and files, a new file, a deleted
file, a missing final newline, context an earlier wrong edit changed), the requests it
reads as a model would, and the whole LLM path on every bundled example: the tree
search, the LLM proposer and the LLM judge against the loopback server, real tests in
Docker, backing off the wrong edit and answering with the gold patch."""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.config import LLMConfig, SWESearchConfig
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer
from atlas_actors.search.solve import close_proposers, solve_task
from atlas_actors.swe import prompts
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.judge import judge_messages
from atlas_actors.swe.replay import (
    WRONG_COMMENT,
    Files,
    GoldReplay,
    ReplayError,
    ReplayModel,
    apply_diff,
    load_replay,
)
from atlas_actors.types import Candidate, Task, TaskResult
from tests.swe.conftest import docker_host, examples  # noqa: F401  (fixtures)

# ------------------------------------------------------------------ helpers


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout


def _write(repo: Path, files: Mapping[str, str | None]) -> None:
    for path, text in files.items():
        target = repo / path
        if text is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode())


def git_diff(tmp: Path, before: Mapping[str, str | None], after: Mapping[str, str | None]) -> str:
    """The git diff from ``before`` to ``after`` (as a SWE-bench gold patch is made)."""
    repo = tmp / f"repo{len(list(tmp.iterdir()))}"
    repo.mkdir()
    _git(repo, "init", "-q")
    _write(repo, before)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base", "--allow-empty")
    _write(repo, after)
    _git(repo, "add", "-A")
    return _git(repo, "diff", "--cached", "HEAD")


def act(tmp: Path, files: Mapping[str, str | None], action: dict[str, Any]) -> Files:
    """``action`` done as the SWE environment does it: an edit replaces the one
    occurrence of ``old`` (an empty ``old`` creates the file); a patch goes through
    ``git apply``."""
    out = dict(files)
    if action["kind"] == "edit":
        path, old, new = action["path"], action["old"], action["new"]
        if old == "":
            assert out[path] is None, f"{path} exists"
            out[path] = new
            return out
        text = out[path]
        assert text is not None and text.count(old) == 1, (path, old)
        out[path] = text.replace(old, new, 1)
        return out
    assert action["kind"] == "apply_patch"
    repo = tmp / f"apply{len(list(tmp.iterdir()))}"
    repo.mkdir()
    _git(repo, "init", "-q")
    _write(repo, out)
    (tmp / "step.diff").write_text(action["patch"])
    _git(repo, "apply", str(tmp / "step.diff"))
    for path in out:
        p = repo / path
        out[path] = p.read_text() if p.exists() else None
    return out


def walk(
    tmp: Path, replay: GoldReplay, files: Mapping[str, str | None], limit: int = 10
) -> tuple[Files, int]:
    """Do the replay's next gold step until none is left; the files and the steps taken."""
    now = dict(files)
    for taken in range(limit + 1):
        action = replay.next_action(now)
        if action is None:
            return now, taken
        now = act(tmp, now, action)
    raise AssertionError("the steps never end")


def replay_of(
    tmp: Path, before: Mapping[str, str | None], after: Mapping[str, str | None], wrong: int = 2
) -> GoldReplay:
    patch = git_diff(tmp, before, after)
    return GoldReplay("demo-1", "Fix the demo.", patch, before, wrong=wrong)


REPEATED = "".join(
    f"def f{i}(x):\n    if x is None:\n        return 0\n    return x + 1\n\n\n" for i in range(3)
)
"""Three functions with the same body: any one line of it occurs three times."""


# ------------------------------------------------------------- steps and edits


def test_a_hunk_in_repeated_code_is_widened_until_its_old_text_is_unique(tmp_path: Path) -> None:
    before = {"m.py": REPEATED}
    lines = REPEATED.splitlines(keepends=True)
    lines[14] = "    return x + 2\n"  # f2's last line: the same as f0's and f1's
    replay = replay_of(tmp_path, before, {"m.py": "".join(lines)})
    assert replay.n == 1
    edit = replay.action(1, before)
    assert edit is not None and edit["kind"] == "edit"
    assert REPEATED.count(edit["old"]) == 1
    assert "def f2" in edit["old"]  # widened back to the line that tells the copies apart
    assert act(tmp_path, before, edit) == replay.states[1]


def test_several_hunks_and_files_a_new_file_and_a_deleted_one_step_by_step(
    tmp_path: Path,
) -> None:
    body = "".join(f"line {i}\n" for i in range(40))
    before: Files = {"a.py": body, "old.txt": "bye\n", "new.txt": None, "b.py": REPEATED}
    a = body.replace("line 3\n", "line three\n").replace("line 30\n", "line 30\nline 30b\n")
    after: Files = {
        "a.py": a,
        "old.txt": None,
        "new.txt": "hello\nworld\n",
        "b.py": REPEATED.replace("    return x + 1\n\n\n", "    return x + 1\n\n\n# end\n", 1),
    }
    replay = replay_of(tmp_path, before, after)
    assert [s.kind for s in replay.steps].count("modify") == 3  # two hunks in a.py, one in b.py
    assert {s.kind for s in replay.steps} == {"modify", "create", "delete"}
    files = before
    for j in range(1, replay.n + 1):
        assert replay.progress(files) == j - 1
        action = replay.next_action(files)
        assert action is not None
        files = act(tmp_path, files, action)
        assert files == replay.states[j]
    assert files == after and replay.next_action(files) is None


def test_no_newline_at_end_of_file(tmp_path: Path) -> None:
    before = {"m.py": "a = 1\nb = 2"}
    after = {"m.py": "a = 1\nb = 3"}
    replay = replay_of(tmp_path, before, after)
    edit = replay.action(1, before)
    assert edit == {"kind": "edit", "path": "m.py", "old": "b = 2", "new": "b = 3"}
    assert walk(tmp_path, replay, before)[0] == after


def test_a_wrong_edit_on_the_hunks_lines_is_taken_in_and_put_right(tmp_path: Path) -> None:
    before = {"m.py": REPEATED}
    # the gold patch changes f0's first line and inserts two lines after f2's condition
    after_lines = REPEATED.splitlines(keepends=True)
    after_lines[0] = "def f0(x, y=0):\n"
    after_lines[14:14] = ["        x = 0\n", "        return x\n"]
    after = {"m.py": "".join(after_lines)}
    replay = replay_of(tmp_path, before, after, wrong=3)
    assert replay.n == 2 and len(replay.wrong_edits) == 3
    for wrong in replay.wrong_edits:
        off = act(tmp_path, before, wrong)
        assert replay.progress(off) is None  # a wrong edit leaves the gold path
        done, steps = walk(tmp_path, replay, off)
        assert done == after and steps >= 1  # the steps, made on its state, reach the gold
    # a wrong edit on the line right before an insertion (its context) is put right too
    lines = REPEATED.splitlines(keepends=True)
    lines[13] = "    if x is None:  # noqa\n"
    done, _ = walk(tmp_path, replay, {"m.py": "".join(lines)})
    assert done == after


def test_wrong_edits_are_plausible_changes_of_the_lines_the_gold_patch_changes(
    tmp_path: Path,
) -> None:
    before = {"m.py": "def ok(a, b):\n    return a == b and a is not None\n"}
    after = {"m.py": "def ok(a, b):\n    return a == b\n"}
    replay = replay_of(tmp_path, before, after, wrong=4)
    news = [w["new"] for w in replay.wrong_edits]
    assert news[0] == "    return a != b and a is not None\n"  # an operator swapped
    assert len(set(news)) == len(news) == 4
    assert all(w["old"] == "    return a == b and a is not None\n" for w in replay.wrong_edits)
    assert all(replay.progress(act(tmp_path, before, w)) is None for w in replay.wrong_edits)
    # where nothing swaps, a trailing comment (the behaviour is kept)
    plain = replay_of(tmp_path, {"m.py": "x = f(y)\n"}, {"m.py": "x = g(y)\n"}, wrong=1)
    assert plain.wrong_edits[0]["new"] == f"x = f(y){WRONG_COMMENT}\n"


def test_applied_steps_and_unknown_paths(tmp_path: Path) -> None:
    before = {"m.py": "a = 1\n"}
    replay = replay_of(tmp_path, before, {"m.py": "a = 2\n"})
    assert replay.progress(replay.states[1]) == 1 and replay.next_action(replay.states[1]) is None
    other = git_diff(tmp_path, {"n.py": "x\n"}, {"n.py": "y\n"})
    assert replay.files_at(other) is None  # a patch outside the gold paths: off the path
    with pytest.raises(ReplayError, match="does not apply"):
        apply_diff({"m.py": "b = 1\n"}, replay.patch)


# ------------------------------------------------------------- reading requests


def _proposer_request(replay: GoldReplay, patch: str, tried: list[Any], slot: int = 0) -> Any:
    messages = [
        {"role": "system", "content": prompts.system_prompt(max_info_actions=4)},
        {
            "role": "user",
            "content": prompts.node_prompt(
                statement=replay.statement,
                patch=patch,
                outcome=None,
                observation="",
                tried=tried,
                feedback=[],
                k=1,
                info_rounds=4,
                max_patch_chars=12000,
                max_text_chars=3000,
                parallel=slot,
            ),
        },
    ]
    return messages


def _ask(model: ReplayModel, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = model(ChatRequest(body={"messages": messages}, headers={}, number=0))
    block = text.split("```json\n", 1)[1].split("\n```", 1)[0]
    return list(json.loads(block))


def test_the_model_reads_the_node_from_the_prompt_and_looks_before_it_edits(
    tmp_path: Path,
) -> None:
    before = {"m.py": "def ok(a, b):\n    return a == b and a is not None\n"}
    after = {"m.py": "def ok(a, b):\n    return a == b\n"}
    replay = replay_of(tmp_path, before, after, wrong=1)
    model = ReplayModel([replay])
    root = _proposer_request(replay, "", [])
    [view] = _ask(model, root)
    assert view == {"kind": "view", "path": "m.py", "start": 2, "end": 2}
    shown = "     2      return a == b and a is not None"
    root += [
        {"role": "assistant", "content": "..."},
        {"role": "user", "content": prompts.results_prompt([(view, shown)], rounds_left=3, k=1)},
    ]
    [first] = _ask(model, root)
    assert {k: first[k] for k in ("kind", "path", "old", "new")} == replay.wrong_edits[0]
    assert model.mismatches == []
    # the wrong edit tried: the gold step; in a parallel slot: the gold step too
    no_look = ReplayModel([replay], look=False)
    [gold] = _ask(no_look, _proposer_request(replay, "", [replay.wrong_edits[0]]))
    assert act(tmp_path, before, gold) == after
    [also] = _ask(no_look, _proposer_request(replay, "", [], slot=1))
    assert also["new"] == gold["new"]
    # at the gold state: submit; once tried, nothing
    gold_patch = git_diff(tmp_path, before, after)
    assert _ask(no_look, _proposer_request(replay, gold_patch, [])) == [
        {"kind": "submit", "label": "the patch resolves the issue", "confidence": 0.6}
    ]
    assert _ask(no_look, _proposer_request(replay, gold_patch, [{"kind": "submit"}])) == []
    # a view that shows other lines is recorded
    root[-1]["content"] = prompts.results_prompt([(view, "     2  return 1")], rounds_left=3, k=1)
    _ask(model, root)
    assert model.mismatches and "m.py" in model.mismatches[0]


def test_the_judge_rewards_the_place_on_the_gold_path(tmp_path: Path) -> None:
    before = {"m.py": "a = 1\n" + "\n" * 20 + "b = 1\n"}
    after = {"m.py": "a = 2\n" + "\n" * 20 + "b = 2\n"}
    replay = replay_of(tmp_path, before, after, wrong=1)
    model = ReplayModel([replay])
    task = Task(id=replay.instance_id, domain="swe", description=replay.statement)
    half = git_diff(tmp_path, before, replay.states[1])
    wrong = git_diff(tmp_path, before, act(tmp_path, before, replay.wrong_edits[0]))
    rewards = []
    for patch in ("", half, git_diff(tmp_path, before, after), wrong):
        messages = judge_messages(task, Candidate(solution=patch), 12000)
        text = model(ChatRequest(body={"messages": messages}, headers={}, number=0))
        rewards.append(int(text.rsplit("Reward:", 1)[1]))
    assert rewards == [0, 70, 95, -50]
    with pytest.raises(ReplayError, match="issue text"):
        model(ChatRequest(body={"messages": judge_messages(
            Task(id="x", domain="swe", description="another issue"), Candidate(solution=""), 100
        )}, headers={}, number=0))  # fmt: skip
    assert model.errors and "issue text" in model.errors[0]


# ------------------------------------------------- the whole LLM path (Docker)


def _on_path(replay: GoldReplay, node: dict[str, Any]) -> int | None:
    return replay.progress(replay.files_at(node["solution"] or ""))


def _answer_path(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes from the root to the search's answer."""
    nodes = tree["nodes"]
    path = [nodes[tree["final"]]]
    while path[-1]["parent"] is not None:
        path.append(nodes[path[-1]["parent"]])
    return path[::-1]


@contextlib.asynccontextmanager
async def _hidden_tests() -> AsyncIterator[LocalEvaluator]:
    """SWE-bench's protocol: the search does not see the FAIL_TO_PASS tests."""
    evaluator = LocalEvaluator(
        lambda t: SWEEnvironment(backend="docker", visible_tests="pass_to_pass"), max_tasks=1
    )
    try:
        yield evaluator
    finally:
        await evaluator.aclose()
        await close_proposers()


async def _search(
    evaluator: LocalEvaluator, model: ReplayModel, inst: SWEInstance, trees: Path
) -> TaskResult:
    """The tree search with the LLM proposer and judge, the model on loopback, one node
    expanded at a time (so the order of the tree is the order of the answers)."""
    async with FakeLLMServer(model) as server:
        return await solve_task(
            inst.to_task(),
            evaluator,
            seed=random.Random(inst.instance_id).randrange(2**16),
            llm=LLMConfig(base_url=server.base_url, api_key_env=None, max_retries=0),
            mcts=SWESearchConfig(max_expansions=12, parallel_expansions=1),
            tree_dir=trees,
            proposer_options={"mode": "llm"},
        )


@pytest.mark.docker
@pytest.mark.timeout(900)
async def test_every_example_resolves_after_backing_off_the_wrong_edit(
    docker_host: str,  # noqa: F811
    examples: dict[str, SWEInstance],  # noqa: F811
    tmp_path: Path,
) -> None:
    """SWE-bench's protocol (the failing tests hidden from the search): the LLM proposer
    and judge against the replay model; each search first tries a wrong edit, values it
    low, goes back to the base, and submits the gold patch, which grading resolves."""
    async with _hidden_tests() as evaluator:
        replays = [await load_replay(evaluator, inst) for inst in examples.values()]
        model = ReplayModel(replays)
        for inst, replay in zip(examples.values(), replays, strict=True):
            result = await _search(evaluator, model, inst, tmp_path)
            assert result.error is None and result.solved is True, (inst.instance_id, result)
            tree = json.loads((tmp_path / f"{inst.instance_id}.json").read_text())
            root, wrong, gold = tree["nodes"][:3]
            assert wrong["parent"] == 0 and _on_path(replay, wrong) is None  # tried first
            assert gold["parent"] == 0 and _on_path(replay, gold) == replay.n  # backed off
            assert wrong["estimate"]["value"] < root["estimate"]["value"]
            path = _answer_path(tree)
            assert all(_on_path(replay, n) is not None for n in path)  # never off the gold
            assert path[-1]["done"] and path[-1]["solution"] == gold["solution"]
            assert result.solution == gold["solution"]
    assert model.errors == [] and model.mismatches == []
    assert model.requests["look"] >= len(examples) and model.requests["judge"] > 0
    assert set(model.calls) == {i.instance_id for i in examples.values()}
    assert sum(model.calls.values()) == sum(model.requests.values())


@pytest.mark.docker
@pytest.mark.timeout(600)
async def test_a_gold_patch_of_several_steps_and_files_through_the_pipeline(
    docker_host: str,  # noqa: F811
    examples: dict[str, SWEInstance],  # noqa: F811
    tmp_path: Path,
) -> None:
    """textkit with a four-step gold patch (a file deleted, one created, two hunks in
    wrap.py): after the wrong edit, each step is proposed from the state the one before
    made (a rollout carries them from the first), in the container, and submitted."""
    inst = examples["textkit"]
    async with _hidden_tests() as evaluator:
        paths = ["README.md", "textkit/NOTES.md", "textkit/wrap.py"]
        before = await evaluator.invoke(inst.to_task(), "read_files", paths=paths)
        wrap = before["textkit/wrap.py"]
        assert wrap is not None and before["README.md"] is not None
        after = {
            "README.md": None,
            "textkit/NOTES.md": "Width counts the spaces between words.\n",
            "textkit/wrap.py": wrap.replace("and slugs.", "and slugs (greedy).").replace(
                "len(word) < width", "len(word) <= width"
            ),
        }
        gold = inst.model_copy(update={"patch": git_diff(tmp_path, before, after)})
        replay = await load_replay(evaluator, gold)
        assert [s.kind for s in replay.steps] == ["delete", "create", "modify", "modify"]
        model = ReplayModel([replay])
        result = await _search(evaluator, model, gold, tmp_path)
    assert result.error is None and result.solved is True, result
    tree = json.loads((tmp_path / f"{gold.instance_id}.json").read_text())
    assert _on_path(replay, tree["nodes"][1]) is None  # the wrong edit first
    path = _answer_path(tree)
    assert [_on_path(replay, n) for n in path] == [0, 1, 2, 3, 4, 4]  # each step, submitted
    assert [n["action"]["kind"] for n in path[1:]] == [
        "apply_patch", "edit", "edit", "edit", "submit"
    ]  # fmt: skip
    assert path[-1]["done"] and model.errors == [] and model.mismatches == []
