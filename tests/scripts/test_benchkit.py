"""The benchmark scripts' shared table and ``--json`` output (scripts/benchkit.py)."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _benchkit() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchkit", SCRIPTS / "benchkit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


benchkit = _benchkit()


def test_a_table_aligns_text_left_and_figures_right() -> None:
    text = benchkit.format_table(
        ["kind", "bugs", "evals/s", "note"],
        [["single", 18, "17.0", None], ["all", 29, 1.23456, "x"]],
        title="offline repair",
    )
    assert text.splitlines() == [
        "offline repair",
        "kind    bugs  evals/s  note",
        "------  ----  -------  ----",
        "single    18     17.0     -",
        "all       29    1.235     x",
    ]


def test_a_row_of_the_wrong_width_is_an_error() -> None:
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        benchkit.format_table(["a", "b", "c"], [[1, 2]])


def test_json_goes_where_the_flag_says_and_nowhere_without_it(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    benchkit.add_json_flag(parser)
    target = tmp_path / "deep" / "figures.json"
    args = parser.parse_args(["--json", str(target)])
    benchkit.write_json(args.json, {"rate": 1.5, "path": tmp_path})
    assert json.loads(target.read_text()) == {"rate": 1.5, "path": str(tmp_path)}
    assert parser.parse_args([]).json is None
    benchkit.write_json(None, {"ignored": True})  # no file, no error


def test_every_bench_script_uses_it() -> None:
    scripts = sorted(SCRIPTS.glob("bench_*.py"))
    assert len(scripts) >= 10
    for script in scripts:
        text = script.read_text()
        assert "from benchkit import" in text, script.name
        assert "add_json_flag(" in text and "write_json" in text, script.name
        assert "print_table(" in text, script.name
