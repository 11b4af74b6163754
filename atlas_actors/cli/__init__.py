"""The ``atlas-actors`` command.

Settings from flags and environment variables are read here, at the edge, and turned
into config models; nothing below this package reads them. One module per subcommand:
:mod:`~atlas_actors.cli.arc` (``arc``), :mod:`~atlas_actors.cli.swe` (``swe``),
:mod:`~atlas_actors.cli.swe_eval` (``swe-eval``),
:mod:`~atlas_actors.cli.swe_build` (``swe-build``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import anyio

from atlas_actors.cli import arc, swe, swe_build, swe_eval
from atlas_actors.cli.arc import run_arc, summarize
from atlas_actors.cli.common import ResultsLog
from atlas_actors.errors import AtlasError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="atlas-actors",
        description="Inference-time search over verifiable environments, on Ray actors.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    arc.add_parser(sub)
    swe.add_parser(sub)
    swe_eval.add_eval_parser(sub)
    swe_build.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "arc":
            return anyio.run(run_arc, args)
        if args.command == "swe":
            return anyio.run(swe.run_swe, args)
        if args.command == "swe-eval":
            return anyio.run(swe_eval.run_swe_eval, args)
        if args.command == "swe-build":
            return anyio.run(swe_build.run_swe_build, args)
    except KeyboardInterrupt:
        print("\ninterrupted: finished tasks are saved; run again with --resume", file=sys.stderr)
        return 130
    except AtlasError as e:
        print(f"atlas-actors: error: {e}", file=sys.stderr)
        return 2
    return 2


__all__ = ["ResultsLog", "build_parser", "main", "run_arc", "summarize"]
