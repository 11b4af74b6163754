"""``atlas-actors arc`` end to end, in process (``--no-ray``) and as a real command."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.arc.environment import load_arc_task
from atlas_actors.cli import ResultsLog, main
from atlas_actors.types import Task, TaskResult
from tests.helpers.arc import ROW_SHIFT_PROGRAM, row_shift_task

# Training tasks of different kinds that the offline DSL solves within a second or two:
# a rotation, a mirror, a colour map and a tiling.
EASY = ["3c9b0459", "67a3c6ac", "0d3d703e", "a416b8f3"]
FAST = ["--split", "train", "--time-limit", "10", "--seed", "0", "--quiet", "--no-memory"]
BUDGETED = ["--split", "train", "--budget", "400", "--seed", "0", "--quiet", "--no-memory"]
"""Bounded by evaluations and op applications alone: the same answers however busy the
machine is (a time limit also stops the search for a second attempt where it stands)."""


def run_cli(*argv: str) -> int:
    return main(list(argv))


def read_results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_writes_results_and_submission(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli("arc", "--no-ray", "--ids", ",".join(EASY), "--out", str(out), *FAST) == 0
    rows = read_results(out)
    assert [r["task_id"] for r in rows] == EASY
    for r in rows:
        TaskResult.model_validate(r)
        assert r["solved"] is True, r
        assert r["train_fitness"] == 1.0
        assert r["evaluations"] > 0 and r["seconds"] > 0
        assert "def transform" in r["program"]
    sub = json.loads((out / "submission.json").read_text())
    assert sorted(sub) == sorted(EASY)
    for tid, entries in sub.items():
        data = load_arc_task(Task(id=tid, domain="arc", context={"arc_task_id": tid}))
        assert len(entries) == len(data.test_inputs)
        assert all(set(e) == {"attempt_1", "attempt_2"} for e in entries)
        assert any(
            e["attempt_1"] == o.tolist() or e["attempt_2"] == o.tolist()
            for e, o in zip(entries, data.test_outputs or [], strict=True)
        )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"] == 4 and summary["solved"] == 4


def test_refuses_to_overwrite_and_resume_redoes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli("arc", "--no-ray", "--ids", EASY[0], "--out", str(out), *FAST) == 0
    before = (out / "results.jsonl").read_bytes()
    # Same folder without --resume: a clear error, nothing touched.
    assert run_cli("arc", "--no-ray", "--ids", EASY[0], "--out", str(out), *FAST) == 2
    assert (out / "results.jsonl").read_bytes() == before
    # --resume with one more task: only the new one is searched.
    assert (
        run_cli(
            "arc", "--no-ray", "--ids", ",".join(EASY[:2]), "--resume", "--out", str(out), *FAST
        )
        == 0
    )
    after = (out / "results.jsonl").read_bytes()
    assert after.startswith(before)
    assert [r["task_id"] for r in read_results(out)] == EASY[:2]


def test_a_partial_last_line_is_dropped_and_redone(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    good = TaskResult(task_id=EASY[0], domain="arc", solved=True).model_dump_json()
    (out / "results.jsonl").write_text(good + "\n" + '{"task_id": "67a3c6ac", "sol')
    assert [r.task_id for r in ResultsLog(out).load()] == [EASY[0]]
    assert (out / "results.jsonl").read_text() == good + "\n"


def _export_without_outputs(tmp_path: Path, ids: list[str]) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    for tid in ids:
        data = load_arc_task(Task(id=tid, domain="arc", context={"arc_task_id": tid}))
        grids = {
            "train": [{"input": a.tolist(), "output": b.tolist()} for a, b in data.train],
            "test": [{"input": a.tolist()} for a in data.test_inputs],
        }
        (folder / f"{tid}.json").write_text(json.dumps(grids))
    return folder


def test_test_outputs_are_unreachable_from_the_search(tmp_path: Path) -> None:
    """The same tasks with their test outputs removed give identical submissions."""
    ids = [EASY[0], EASY[3], "007bbfb7"]
    budget = ["--budget", "600", "--seed", "3", "--quiet", "--no-memory"]
    with_outputs, without = tmp_path / "a", tmp_path / "b"
    assert (
        run_cli(
            "arc",
            "--no-ray",
            "--split",
            "train",
            "--ids",
            ",".join(ids),
            "--out",
            str(with_outputs),
            *budget,
        )
        == 0
    )
    folder = _export_without_outputs(tmp_path, ids)
    assert run_cli("arc", "--no-ray", "--tasks", str(folder), "--out", str(without), *budget) == 0
    sub_a = json.loads((with_outputs / "submission.json").read_text())
    sub_b = json.loads((without / "submission.json").read_text())
    assert sub_a == sub_b
    rows_b = read_results(without)
    assert all(r["solved"] is None for r in rows_b)  # unknown, not pretended
    rows_a = {r["task_id"]: r for r in read_results(with_outputs)}
    for r in rows_b:
        assert r["program"] == rows_a[r["task_id"]]["program"]
        assert r["evaluations"] == rows_a[r["task_id"]]["evaluations"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dataset", "arc9"], "invalid choice: 'arc9'"),
        (["--time-limit", "-3"], "must be a positive number"),
        (["--limit", "zero"], "expected a whole number"),
        (["--split", "dev"], "invalid choice: 'dev'"),
    ],
)
def test_bad_flags_are_named(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        run_cli("arc", *argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_unknown_ids_and_missing_task_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("arc", "--no-ray", "--ids", "ffffffff", "--out", str(tmp_path / "x")) == 2
    assert "--ids: not found" in capsys.readouterr().err
    assert (
        run_cli("arc", "--no-ray", "--tasks", str(tmp_path / "nope"), "--out", str(tmp_path / "y"))
        == 2
    )
    assert "does not exist" in capsys.readouterr().err


GOOD_TASK = {"train": [{"input": [[1, 2]], "output": [[2, 1]]}], "test": [{"input": [[3, 4]]}]}


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (
            {**GOOD_TASK, "train": [{"input": [[1, 2]], "output": [[12, 1]]}]},
            "task bad train pair 0 output: colours must be 0-9, found 12",
        ),
        (
            {**GOOD_TASK, "test": [{"inp": [[1]]}]},
            "task bad: test pair 0 needs an 'input' grid ('output' optional), has keys 'inp'",
        ),
        (
            {"k1": {**GOOD_TASK, "train": [{"input": [[1, 2]]}]}},
            "task k1: train pair 0 needs 'input' and 'output' grids, has keys 'input'",
        ),
        ([1, 2], "expected an ARC task"),
        ("{not json", "not valid JSON"),
    ],
)
def test_a_bad_task_file_is_named_with_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, what: str
) -> None:
    """One bad file among good ones: the run stops before searching, naming the file's
    path and the field that is wrong (with what is allowed)."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(GOOD_TASK))
    bad = folder / "bad.json"
    bad.write_text(content if isinstance(content, str) else json.dumps(content))
    out = tmp_path / "out"
    assert run_cli("arc", "--no-ray", "--tasks", str(folder), "--out", str(out), *FAST) == 2
    err = capsys.readouterr().err
    assert f"--tasks: {bad}: " in err and what in err
    assert not (out / "results.jsonl").exists()


@pytest.mark.slow
def test_killed_run_resumes_without_redoing_finished_tasks(tmp_path: Path) -> None:
    """A real ``atlas-actors`` process killed mid-run; ``--resume`` finishes the rest."""
    out = tmp_path / "run"
    ids = ",".join([*EASY, "007bbfb7", "c8f0f002"])
    exe = Path(sys.executable).with_name("atlas-actors")
    cmd = [str(exe), "arc", "--no-ray", "--ids", ids, "--out", str(out), *FAST]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    log = out / "results.jsonl"
    deadline = time.monotonic() + 300  # a loaded machine may take long to finish two tasks
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = ResultsLog(out).load()
    assert 2 <= len(done_before) < 6, "the kill should land mid-run"
    kept = log.read_bytes()
    subprocess.run(
        [*cmd, "--resume"],
        check=True,
        timeout=300,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rows = read_results(out)
    assert log.read_bytes().startswith(kept), "finished results were rewritten"
    assert sorted(r["task_id"] for r in rows) == sorted(ids.split(","))
    assert len(rows) == 6, "a finished task was searched again"


def test_default_run_goes_through_the_actor_engine(ray_session: Any, tmp_path: Path) -> None:
    """Without --no-ray the CLI runs through the Engine (here joining the test session's
    Ray), with the same answers as the in-process run."""
    ids = ",".join(EASY[:2])
    ray_out, local_out = str(tmp_path / "ray"), str(tmp_path / "local")
    assert run_cli("arc", "--ids", ids, "--workers", "2", "--out", ray_out, *BUDGETED) == 0
    assert run_cli("arc", "--no-ray", "--ids", ids, "--out", local_out, *BUDGETED) == 0
    by_ray = {r["task_id"]: r for r in read_results(tmp_path / "ray")}
    local = {r["task_id"]: r for r in read_results(tmp_path / "local")}
    assert sorted(by_ray) == sorted(local) == sorted(EASY[:2])
    for tid, r in by_ray.items():
        assert r["solved"] is True
        assert r["program"] == local[tid]["program"]
        assert r["attempts"] == local[tid]["attempts"]
    assert json.loads((tmp_path / "ray" / "submission.json").read_text()) == json.loads(
        (tmp_path / "local" / "submission.json").read_text()
    )


def test_memory_routes_a_second_run_to_what_the_first_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = str(tmp_path / "memory.sqlite3")
    cold = [a for a in FAST if a != "--no-memory"]
    ids = ",".join(EASY[:2])
    for run in ("one", "two"):
        out = str(tmp_path / run)
        assert (
            run_cli("arc", "--no-ray", "--ids", ids, "--out", out, "--memory", memory, *cold) == 0
        )
    first, second = read_results(tmp_path / "one"), read_results(tmp_path / "two")
    assert {r["routing"]["strategy"] for r in first} == {"evolutionary"}
    assert {r["routing"]["strategy"] for r in second} == {"adapt"}
    for a, b in zip(first, second, strict=True):
        assert b["solved"] and b["solution"] == a["solution"]
        assert b["evaluations"] < a["evaluations"]
    summary = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert summary["routes"] == {"adapt": 2}


def test_an_unsolved_task_is_recalled_on_a_second_run_unless_retried(tmp_path: Path) -> None:
    memory = str(tmp_path / "memory.sqlite3")
    argv = ["arc", "--no-ray", "--ids", "3bd67248", "--split", "train", "--budget", "60"]
    argv += ["--seed", "0", "--quiet", "--memory", memory]
    for run, extra in (("one", []), ("two", []), ("three", ["--retry-unsolved"])):
        assert run_cli(*argv, "--out", str(tmp_path / run), *extra) == 0
    [one], [two], [three] = (read_results(tmp_path / r) for r in ("one", "two", "three"))
    assert not one["checks_passed"] and one["evaluations"] == 60
    assert two["stopped"] == "recalled" and two["routing"]["rule"] == "recall"
    assert two["evaluations"] <= 3 and two["attempts"] == one["attempts"]
    assert three["stopped"] == "evaluations" and three["evaluations"] == 60


def test_a_corrupt_memory_file_is_a_clear_error_or_reset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "memory.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    cold = [a for a in FAST if a != "--no-memory"]
    argv = ["arc", "--no-ray", "--ids", EASY[0], "--memory", str(bad), *cold]
    assert run_cli(*argv, "--out", str(tmp_path / "a")) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "--memory-reset" in err
    assert run_cli(*argv, "--out", str(tmp_path / "b"), "--memory-reset") == 0
    assert read_results(tmp_path / "b")[0]["solved"] is True
    assert list(tmp_path.glob("memory.sqlite3.corrupt-*"))  # the old file is kept aside


def test_outside_a_terminal_progress_is_one_line_per_task(tmp_path: Path) -> None:
    """With its output going to pipes (a CI log, ``| tee``), a run prints one plain line
    per finished task, never a (cut) progress bar."""
    exe = Path(sys.executable).with_name("atlas-actors")
    ids = EASY[:3]
    argv = [str(exe), "arc", "--no-ray", "--ids", ",".join(ids), "--out", str(tmp_path / "run")]
    argv += [a for a in FAST if a != "--quiet"]
    env = {**os.environ, "COLUMNS": "50", "TERM": "xterm-256color"}
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        env.pop(var, None)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, check=True)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("ARC ")]
    assert len(lines) == 3, proc.stderr
    line = re.compile(
        r"ARC (\d)/3  solved (\d)/(\d)  [\d.]+ tasks/min  elapsed \d:\d\d:\d\d  "
        r"remaining ~\d:\d\d:\d\d  (\w+): solved in [\d.]+ s"
    )
    finished = []
    for n, text in enumerate(lines, start=1):
        m = line.fullmatch(text)
        assert m is not None, text
        assert m[1] == m[2] == m[3] == str(n)
        finished.append(m[4])
    assert sorted(finished) == sorted(ids)
    assert "…" not in proc.stderr and "━" not in proc.stderr


def test_progress_notes_outside_a_terminal_are_lines() -> None:
    """A running note (a tree search's counters) becomes a line too, at most every
    ``note_every_s`` seconds: every one at 0, the first one only at an hour."""
    import io

    from rich.console import Console

    from atlas_actors.cli.common import RunProgress

    for every, expected in ((0.0, 2), (3600.0, 1)):
        out = io.StringIO()
        console = Console(file=out, width=40)
        assert not console.is_terminal
        with RunProgress(console, 2, 0, [], label="SWE", note_every_s=every) as progress:
            progress.note("nodes 3  test runs 5")
            progress.note("nodes 9  test runs 12")
        noted = [ln for ln in out.getvalue().splitlines() if "test runs" in ln]
        assert len(noted) == expected, out.getvalue()
        assert noted[0] == "SWE 0/2  solved 0/0  elapsed 0:00:00  nodes 3  test runs 5"


@pytest.mark.parametrize(
    ("argv", "limit"),
    [
        ([], 15.0),  # the default
        (["--budget", "100"], None),  # a budget bounds the search: no clock
        (["--budget", "100", "--time-limit", "2"], 2.0),  # unless a limit is asked for
        (["--time-limit", "1.2"], 1.2),
    ],
)
def test_the_time_limit_and_the_budget(argv: list[str], limit: float | None) -> None:
    from atlas_actors.cli import build_parser
    from atlas_actors.cli.arc import search_config, time_limit

    args = build_parser().parse_args(["arc", *argv])
    assert time_limit(args) == limit
    assert search_config(args).time_limit_s == limit


@pytest.mark.parametrize(
    ("argv", "mode", "ends"),
    [
        ([], "offline", False),
        (["--llm-base-url", "http://127.0.0.1:9/v1"], "llm", False),  # stays fixed by seed
        (["--llm-base-url", "http://127.0.0.1:9/v1", "--proposer", "offline"], "offline", False),
        (["--llm-base-url", "http://127.0.0.1:9/v1", "--proposer", "hybrid"], "hybrid", True),
    ],
)
def test_the_proposer_mode_and_what_it_sets(argv: list[str], mode: str, ends: bool) -> None:
    from atlas_actors.cli import build_parser
    from atlas_actors.cli.arc import arc_options, search_config

    args = build_parser().parse_args(["arc", *argv])
    assert arc_options(args)["mode"] == mode
    # a hybrid search depends on timing anyway: a success also ends the generation's
    # other turns (saving their LLM calls)
    assert search_config(args).end_generation_on_success is ends


def test_proposer_hybrid_without_an_endpoint_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "x")
    argv = ["--split", "train", "--ids", EASY[0], "--proposer", "hybrid", "--out", out]
    assert run_cli("arc", "--no-ray", *argv) == 2
    assert "--proposer hybrid needs --llm-base-url" in capsys.readouterr().err


async def test_proposer_hybrid_asks_the_llm_only_where_the_dsl_has_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio.to_thread
    import numpy as np

    from atlas_actors.arc import prompts
    from atlas_actors.llm.testing import ChatRequest, FakeLLMServer

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    folder = tmp_path / "tasks"
    folder.mkdir()
    easy = load_arc_task(Task(id=EASY[1], domain="arc", context={"arc_task_id": EASY[1]}))
    assert easy.test_outputs is not None
    (folder / "mirror.json").write_text(
        json.dumps(
            {
                "train": [{"input": i.tolist(), "output": o.tolist()} for i, o in easy.train],
                "test": [
                    {"input": i.tolist(), "output": o.tolist()}
                    for i, o in zip(easy.test_inputs, easy.test_outputs, strict=True)
                ],
            }
        )
    )
    (folder / "arith.json").write_text(json.dumps(row_shift_task()))
    right = ROW_SHIFT_PROGRAM
    asked_about: list[str] = []

    def respond(req: ChatRequest) -> str:
        asked_about.append(req.text)
        if req.system == prompts.CRITIC_SYSTEM:
            return "Add the row index to every cell, modulo 10."
        return f"```python\n{right}\n```"

    out = tmp_path / "run"
    async with FakeLLMServer(respond) as server:
        argv = [
            "arc", "--no-ray", "--tasks", str(folder), "--out", str(out), "--proposer",
            "hybrid", "--llm-base-url", server.base_url, "--time-limit", "30", "--seed", "0",
            "--quiet", "--no-memory",
        ]  # fmt: skip
        code = await anyio.to_thread.run_sync(run_cli, *argv)
    assert code == 0
    rows = {r["task_id"]: r for r in read_results(out)}
    assert rows["mirror"]["solved"] is True and rows["arith"]["solved"] is True
    assert not isinstance(rows["mirror"]["solution"], str)  # the DSL's program
    assert rows["arith"]["solution"] == right
    assert rows["mirror"]["usage"]["calls"] == 0  # solved by the DSL: no LLM call
    assert rows["arith"]["usage"]["calls"] == server.requests
    # every request was about the task the DSL could not fit
    mirror_grid = prompts.render_grid(easy.train[0][0])
    assert server.requests >= 1 and not any(mirror_grid in t for t in asked_about)
    arith_grid = prompts.render_grid(np.asarray(row_shift_task()["train"][0]["input"]))
    assert all(arith_grid in t for t in asked_about)
    run = json.loads((out / "run.json").read_text())
    assert run["proposer"] == "hybrid"
