"""What the ``bench_*`` scripts share: one way to print a table of figures and one
``--json`` output.

A script imports it as ``benchkit`` (``python scripts/bench_x.py`` puts ``scripts/`` on
the path)::

    add_json_flag(parser)                          # --json FILE
    ...
    print_table(["split", "solved", "evals/s"], rows, title="ARC benchmark")
    write_json(args.json, figures)                 # nothing without --json

Tables are plain text: a title, a header row, a rule, one row per line; the first column
is left-aligned and the others right-aligned. Cells are printed as given when they are
strings (so a script keeps its own number formats), ``-`` for None, and other numbers
with :func:`cell`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """``--json FILE``: also write the figures there."""
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write the figures here (JSON)",
    )


def write_json(path: Path | None, figures: Any) -> None:
    """``figures`` as indented JSON at ``path`` (folders made); nothing when ``path`` is
    None."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=1, default=str) + "\n")


def cell(value: Any) -> str:
    """A table cell: strings as given, ``-`` for None, integers in full, other numbers
    to four significant digits."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str = "") -> str:
    """The table as text (see the module docstring)."""
    cells = [[cell(v) for v in row] for row in rows]
    for row in cells:
        if len(row) != len(headers):
            raise ValueError(f"a row has {len(row)} cells for {len(headers)} columns: {row}")
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.ljust(w) if i == 0 else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out = [title] if title else []
    out += [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    return "\n".join(out)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str = "") -> None:
    """Print :func:`format_table` (after a blank line)."""
    print("\n" + format_table(headers, rows, title=title), flush=True)
