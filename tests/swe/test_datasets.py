"""SWE-bench datasets as swebench loads them: JSON, JSONL, parquet, a saved folder and a
hub name; extra fields kept; rows in the older (swebench < 5) format told how to convert;
an unreachable or silent hub gives a clear, bounded error."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_actors.errors import InvalidTaskError
from atlas_actors.swe.instances import (
    LEGACY_FORMAT_HELP,
    SWEInstance,
    load_instances,
    make_eval_script,
    parse_instance,
)
from tests.swe.registry import SilentPort, free_port


def _row(n: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "instance_id": f"o__r-{n}",
        "repo": "o/r",
        "base_commit": "abcdef12",
        "problem_statement": "it is broken",
        "patch": "",
        "test_patch": "diff --git a/t b/t\n",
        "FAIL_TO_PASS": '["tests/test_a.py::test_x"]',  # as the HF datasets ship them
        "PASS_TO_PASS": "[]",
        "image": "img:latest",
        "eval_script": make_eval_script("abcdef12", ["tests/test_a.py"], "diff\n"),
        "log_parser": "parse_log_pytest",
        "eval_type": "pass_and_fail",
        "version": "1.0",
        **extra,
    }


EXTRA = {"difficulty": "<15 min fix", "image_assets": '{"test_patch": []}', "score": 0.5}


def _check_extras(insts: list[SWEInstance]) -> None:
    assert [i.instance_id for i in insts] == ["o__r-1", "o__r-2"]
    first = insts[0]
    assert first.FAIL_TO_PASS == ["tests/test_a.py::test_x"]
    dumped = first.model_dump()
    for key, value in EXTRA.items():
        assert dumped[key] == value, key
    # Round trip through a Task (what environment actors receive) keeps them too.
    back = SWEInstance.from_task(first.to_task())
    assert back == first and back.model_dump()["difficulty"] == EXTRA["difficulty"]
    # swebench's own TestSpec builder reads the row, extras included.
    from swebench.harness.utils import make_test_spec

    assert make_test_spec(first.swebench_dict()).image_assets == {"test_patch": []}


def test_jsonl_with_extra_fields_loads(tmp_path: Path) -> None:
    f = tmp_path / "inst.jsonl"
    f.write_text("".join(json.dumps(_row(n, **EXTRA)) + "\n" for n in (1, 2)))
    _check_extras(load_instances(f))


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)


def test_parquet_with_extra_fields_and_nulls_loads(tmp_path: Path) -> None:
    # A parquet dataset gives every row every column: a column one row lacks is null.
    rows = [_row(1, **EXTRA, hints_text=None), _row(2, **EXTRA, hints_text="look at a.py")]
    rows[1]["created_at"] = None
    f = tmp_path / "test.parquet"
    _write_parquet(f, rows)
    insts = load_instances(f)
    _check_extras(insts)
    assert insts[0].hints_text == "" and insts[1].hints_text == "look at a.py"
    # A folder with <split>.parquet, as swebench's loader reads it.
    assert [i.instance_id for i in load_instances(tmp_path, split="test")] == [
        "o__r-1",
        "o__r-2",
    ]


def test_parquet_errors_name_the_row_and_field(tmp_path: Path) -> None:
    bad = _row(2)
    bad["log_parser"] = "parse_log_nope"
    f = tmp_path / "d.parquet"
    _write_parquet(f, [_row(1), bad])
    with pytest.raises(InvalidTaskError, match=r"d\.parquet, row 1 \(instance_id='o__r-2'\)"):
        load_instances(f)
    with pytest.raises(InvalidTaskError, match="no such file"):
        load_instances(tmp_path / "missing.parquet")


def test_older_format_is_told_how_to_convert(tmp_path: Path) -> None:
    old = _row(1)
    for key in ("image", "eval_script", "log_parser", "eval_type"):
        del old[key]
    f = tmp_path / "old.jsonl"
    f.write_text(json.dumps(old) + "\n")
    with pytest.raises(InvalidTaskError) as e:
        load_instances(f)
    msg = str(e.value)
    assert "line 1" in msg and "o__r-1" in msg
    assert LEGACY_FORMAT_HELP in msg
    for needle in (
        "swebench 5.x",
        "swebench < 5",
        "'image'",
        "'eval_script'",
        "'log_parser'",
        "'eval_type'",
        "make_test_spec(row, namespace='swebench')",
        "instance_image_key",
        "MAP_REPO_TO_PARSER",
        "swebench dataset build",
    ):
        assert needle in msg, needle
    # One field missing is an ordinary field error, not the conversion advice.
    with pytest.raises(InvalidTaskError, match=r"field 'image': required field is missing"):
        parse_instance({k: v for k, v in _row(1).items() if k != "image"})


def test_the_conversion_advice_names_real_swebench_5_fields() -> None:
    # The fields the advice names are the ones swebench 5.x's make_test_spec reads.
    import inspect

    from swebench.harness.utils import make_test_spec

    source = inspect.getsource(make_test_spec)
    for field in ("image", "eval_script", "log_parser", "eval_type"):
        assert f'instance["{field}"]' in source


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port on loopback that accepts connections and never answers."""
    port = SilentPort()
    yield port.port
    port.close()


def test_unreachable_hub_is_a_clear_quick_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    endpoint = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    started = time.monotonic()
    with pytest.raises(InvalidTaskError) as e:
        load_instances("lite")
    assert time.monotonic() - started < 20
    msg = str(e.value)
    assert "SWE-bench/SWE-bench_Lite" in msg and "cannot reach the Hugging Face hub" in msg
    assert endpoint in msg


def test_silent_hub_is_bounded(monkeypatch: pytest.MonkeyPatch, silent_server: int) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{silent_server}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    started = time.monotonic()
    with pytest.raises(InvalidTaskError, match=r"did not load within 2s"):
        load_instances("SWE-bench/SWE-bench_Verified", hub_timeout_s=2)
    assert time.monotonic() - started < 10


def test_names_that_are_neither_files_nor_datasets(tmp_path: Path) -> None:
    with pytest.raises(InvalidTaskError, match="not a Hugging Face dataset name"):
        load_instances("no such thing")
    other = tmp_path / "x.csv"
    other.write_text("a,b\n")
    with pytest.raises(InvalidTaskError, match=r"not a \.json, \.jsonl or \.parquet"):
        load_instances(other)


def test_missing_datasets_extra_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name)
    )
    f = tmp_path / "d.parquet"
    f.write_bytes(b"PAR1")
    with pytest.raises(InvalidTaskError, match=r"atlas_actors\[datasets\].*missing: pyarrow"):
        load_instances(f)
    # JSON and JSONL need neither.
    g = tmp_path / "d.jsonl"
    g.write_text(json.dumps(_row(1)) + "\n")
    assert len(load_instances(g)) == 1
