"""Write the table of the ARC DSL's ops (docs/arc-dsl-ops.md) from their declarations.

One row per op, by family: its name, its parameters after the input grid (name and
kind), the first sentence of its docstring, and whether it has a parameter generator
(ops without one are reached by mutation or by the search's finishers)::

    python scripts/arc_op_table.py            # rewrite docs/arc-dsl-ops.md
    python scripts/arc_op_table.py --check    # exit 1 if the file is stale
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atlas_actors.arc.ops import FAMILIES, OPS  # noqa: E402
from atlas_actors.arc.registry import Kind, OneOf, OpSpec, ParamKind  # noqa: E402

OUT = ROOT / "docs" / "arc-dsl-ops.md"
COMMAND = "python scripts/arc_op_table.py"


def _kind(k: ParamKind) -> str:
    if isinstance(k, OneOf):
        if len(k.values) <= 6:
            return " \\| ".join(k.values)
        return f"one of {len(k.values)} names"
    assert isinstance(k, Kind)
    return k.value


def _params(spec: OpSpec) -> str:
    names = list(inspect.signature(spec.fn).parameters)[1:]
    return (
        ", ".join(f"`{n}`: {_kind(k)}" for n, k in zip(names, spec.kinds[1:], strict=True)) or "—"
    )


def render() -> str:
    lines = [
        "# ARC DSL ops",
        "",
        f"Generated from the op declarations by `{COMMAND}`; do not edit by hand.",
        "",
        f"{len(OPS)} ops in {len(FAMILIES)} families, each declared on its function in",
        "`atlas_actors/arc/ops/<family>.py`. Every op takes the input grid first; the",
        "parameters below follow it. A colour may be a role (10-13) read off the grid.",
        "*Generator*: whether the search infers the op's parameters from the task (ops",
        "without one are reached by mutation or by the search's finishers).",
        "",
        "To add an op, write its function with its `@op(...)` declaration (parameter",
        "kinds, generator, cases) in the family module it belongs to (see",
        f"`atlas_actors/arc/registry.py`), then run `{COMMAND}`.",
        "",
    ]
    for mod in FAMILIES:
        family = mod.__name__.rpartition(".")[2]
        head = (mod.__doc__ or "").strip().split("\n\n")[0]
        lines += [f"## {family}", "", " ".join(head.split()), ""]
        lines += ["| op | parameters | what it does | generator |", "| --- | --- | --- | --- |"]
        for name, spec in OPS.items():
            if spec.family == family:
                doc = spec.doc.replace("|", "\\|")
                gen = "yes" if spec.generator else "no"
                lines.append(f"| `{name}` | {_params(spec)} | {doc} | {gen} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = ap.parse_args()
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(OPS)} ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
