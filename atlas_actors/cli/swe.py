"""``atlas-actors swe-eval``: grade SWE-bench-format predictions in containers."""

from __future__ import annotations

import argparse
from typing import Any

from atlas_actors.cli.common import add_engine_flags


def add_eval_parser(sub: Any) -> None:
    """The ``swe-eval`` subcommand and its flags."""
    swe = sub.add_parser(
        "swe-eval",
        help="grade SWE-bench predictions in containers",
        description="Grade SWE-bench-format predictions (instance_id, model_name_or_path, "
        "model_patch) against instances, through a pool of environment actors.",
    )
    swe.add_argument(
        "--instances", required=True, metavar="FILE", help="SWE-bench instances, JSON or JSONL"
    )
    swe.add_argument(
        "--predictions",
        required=True,
        metavar="FILE",
        help="predictions JSONL (instance_id, model_name_or_path, model_patch)",
    )
    swe.add_argument(
        "--out", required=True, metavar="DIR", help="folder for report.json and per-instance logs"
    )
    swe.add_argument(
        "--backend",
        choices=["docker", "bubblewrap"],
        default="docker",
        help="where tests run (default: docker)",
    )
    swe.add_argument("--quiet", action="store_true", help="no progress bar")
    add_engine_flags(swe)


async def run_swe_eval(args: argparse.Namespace) -> int:
    from atlas_actors.swe.evaluate import run_swe_eval_command

    return await run_swe_eval_command(args)
