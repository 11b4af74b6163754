#!/usr/bin/env python
"""The offline search on real SWE-bench instances (built here with ``swe-build``): a
table per instance.

    export DOCKER_HOST=$(scripts/docker-up)
    nice -n 10 python scripts/bench_swe_search.py \\
        --instances /path/to/swe-build-out/instances.jsonl --time-limit 300 \\
        --out runs/bench-swe-search [--ids ID,...] [--limit N] [--runs 3] [--json out.json]

Per instance, in one environment (Docker, the instance's image):

* ``loc s``: fault localisation's wall seconds (coverage run and plain run, a fresh
  cache; bounded by ``--localize-timeout``), and its method (``spectrum``, ``traceback``);
* ``top5 file`` / ``top5 func``: whether a file / a function the gold patch changes holds
  one of the five most suspicious lines (the function: the innermost ``def`` around a
  line the gold patch removes or changes, at the base commit);
* ``bare s``: the instance's eval script run as the harness runs it (a plain exec of
  ``bash eval.sh``: a new interpreter, the test files of the test patch), median of
  ``--runs``; ``node s``: one node's verdict as the search gets it (``verify`` of the gold
  patch: apply, the tests in the in-container runtime, grading), median of ``--runs``;
  ``x bare``: their ratio (target: at most 2);

then ``atlas-actors swe --proposer offline --tests visible --grade`` over all of them (one
run, ``--time-limit`` per instance, ``--workers 1``, no memory) and per instance:
``resolved`` (the search's verdict on the visible tests), ``correct`` (the grader's:
swe-eval on the prediction, FAIL_TO_PASS and PASS_TO_PASS with the gold test patch),
``nodes``, ``test runs`` (full verifies), ``screened`` (edits through the fast screen),
``swapped`` (of those, the ones whose tests ran with the changed functions' code swapped
in, the repository not imported again),
``edits/s`` (screened per search second), ``s`` and why it stopped.

``--search-out DIR`` reads an earlier search run instead of running one. Needs the
instance images (``swe-build``): not for CI.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchkit import add_json_flag, print_table, write_json

from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import SWEInstance, load_instances
from atlas_actors.swe.repair.localize import LocalizationCache, localize

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def gold_lines(patch: str) -> dict[str, set[int]]:
    """Per file, the base lines the patch removes or changes (for a pure insertion: the
    base lines around it)."""
    out: dict[str, set[int]] = {}
    path = ""
    old = 0
    for row in patch.splitlines():
        if row.startswith("--- "):
            path = row[6:] if row.startswith("--- a/") else ""
            continue
        m = _HUNK.match(row)
        if m:
            old = int(m.group(1))
            continue
        if not path or row.startswith(("+++", "diff ", "index ")):
            continue
        if row.startswith("-"):
            out.setdefault(path, set()).add(old)
            old += 1
        elif row.startswith("+"):
            out.setdefault(path, set()).update({max(1, old - 1), old})
        else:
            old += 1
    return out


def functions(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function in ``text``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    out.append((start, child.end_lineno or child.lineno, name))
                walk(child, name + ".")

    walk(tree, "")
    return out


def function_of(funcs: list[tuple[int, int, str]], line: int) -> str | None:
    """The innermost function around ``line`` (None: module level)."""
    inside = [f for f in funcs if f[0] <= line <= f[1]]
    return min(inside, key=lambda f: f[1] - f[0])[2] if inside else None


async def bare_run(env: SWEEnvironment, inst: SWEInstance) -> float:
    """Seconds of the eval script as the harness runs it: a plain exec, a new interpreter."""
    ws = env.workspace
    started = time.perf_counter()
    await ws.run_with_files(
        {"/tmp/atlas-bare-eval.sh": inst.eval_script.encode()},
        "bash /tmp/atlas-bare-eval.sh >/dev/null 2>&1",
        timeout_s=900,
    )
    return time.perf_counter() - started


async def measure(inst: SWEInstance, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"instance": inst.instance_id}
    async with SWEEnvironment(
        backend="docker",
        visible_tests="all",
        localize_timeout_s=args.localize_timeout,
        eval_timeout_s=600,
    ) as env:
        await env.reset(inst.to_task())
        started = time.perf_counter()
        loc = await localize(
            env,
            cache=LocalizationCache(),
            timeout_s=args.localize_timeout,
            test_timeout_s=min(60.0, args.localize_timeout / 4),
        )
        row["loc_seconds"] = time.perf_counter() - started
        row["loc_method"] = loc.method
        row["loc_missing"] = len(loc.missing)
        row["loc_notes"] = loc.notes
        gold = gold_lines(inst.patch)
        texts = await env.read_files(sorted(gold))
        gold_funcs = {
            (path, function_of(functions(texts.get(path) or ""), line))
            for path, lines in gold.items()
            for line in lines
        }
        top = loc.lines[:5]
        row["top5"] = [f"{x.path}:{x.line}" for x in top]
        row["top5_file"] = any(x.path in gold for x in top)
        row["top5_function"] = any(
            (x.path, function_of(functions(texts.get(x.path) or ""), x.line)) in gold_funcs
            for x in top
        )
        row["top5_line"] = any(x.line in gold.get(x.path, set()) for x in top)
        bare, node = [], []
        for _ in range(args.runs):
            bare.append(await bare_run(env, inst))
            started = time.perf_counter()
            outcome = await env.verify(inst.patch)
            node.append(time.perf_counter() - started)
            row["gold_verifies"] = outcome.success
        row["bare_seconds"] = statistics.median(bare)
        row["node_seconds"] = statistics.median(node)
        row["node_over_bare"] = row["node_seconds"] / row["bare_seconds"]
    return row


def run_search(args: argparse.Namespace, ids: list[str], out: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "atlas_actors.cli",
        "swe",
        "--instances",
        str(args.instances),
        "--ids",
        ",".join(ids),
        "--proposer",
        "offline",
        "--tests",
        "visible",
        "--time-limit",
        f"{args.time_limit:g}",
        "--localize-timeout",
        f"{args.localize_timeout:g}",
        "--pull",
        "never",
        "--workers",
        "1",
        "--no-memory",
        "--grade",
        "--quiet",
        "--out",
        str(out),
    ]
    print("search:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def search_rows(out: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    results = out / "results.jsonl"
    if results.is_file():
        for line in results.read_text().splitlines():
            r = json.loads(line)
            rows[r["task_id"]] = r
    report = out / "grade" / "report.json"
    resolved: set[str] = set()
    if report.is_file():
        resolved = set(json.loads(report.read_text()).get("resolved_ids") or [])
    for task_id, r in rows.items():
        r["correct"] = task_id in resolved
    return rows


def yes(x: Any) -> str:
    return "-" if x is None else ("yes" if x else "no")


async def main_async(args: argparse.Namespace) -> None:
    instances = load_instances(str(args.instances))
    if args.ids:
        wanted = {i for part in args.ids for i in part.split(",") if i}
        instances = [i for i in instances if i.instance_id in wanted]
    if args.limit:
        instances = instances[: args.limit]
    rows: dict[str, dict[str, Any]] = {}
    if not args.no_measure:
        for inst in instances:
            print(f"measuring {inst.instance_id}", flush=True)
            try:
                rows[inst.instance_id] = await measure(inst, args)
            except Exception as exc:  # one instance's fault is reported, the rest go on
                rows[inst.instance_id] = {"instance": inst.instance_id, "error": repr(exc)}
    out = args.search_out or args.out / "search"
    if args.search_out is None:
        run_search(args, [i.instance_id for i in instances], out)
    found = search_rows(out)
    table = []
    for inst in instances:
        row = rows.setdefault(inst.instance_id, {"instance": inst.instance_id})
        r = found.get(inst.instance_id)
        if r is not None:
            stats = r.get("stats") or {}
            seconds = float(r.get("seconds") or 0.0)
            row.update(
                resolved=bool(r.get("solved")),
                correct=bool(r.get("correct")),
                nodes=int(stats.get("nodes", 0)),
                test_runs=int(r.get("evaluations") or 0),
                screened=int(stats.get("screened", 0)),
                swapped=int(stats.get("swapped", 0)),
                edits_per_second=stats.get("screened", 0) / seconds if seconds else None,
                search_seconds=seconds,
                stopped=r.get("stopped"),
                why=r.get("stop_detail") or r.get("error") or "",
            )
        table.append(
            [
                inst.instance_id,
                f"{row['loc_seconds']:.1f} {row['loc_method']}" if "loc_seconds" in row else "-",
                yes(row.get("top5_file")),
                yes(row.get("top5_function")),
                yes(row.get("resolved")),
                yes(row.get("correct")),
                row.get("nodes"),
                row.get("test_runs"),
                row.get("screened"),
                row.get("swapped"),
                f"{row['edits_per_second']:.1f}" if row.get("edits_per_second") else "-",
                f"{row['bare_seconds']:.2f}" if "bare_seconds" in row else "-",
                f"{row['node_seconds']:.2f}" if "node_seconds" in row else "-",
                f"{row['node_over_bare']:.2f}" if "node_over_bare" in row else "-",
                f"{row.get('search_seconds', 0):.0f} {row.get('stopped', '')}",
            ]
        )
    headers = [
        "instance",
        "loc s",
        "top5 file",
        "top5 func",
        "resolved",
        "correct",
        "nodes",
        "test runs",
        "screened",
        "swapped",
        "edits/s",
        "bare s",
        "node s",
        "x bare",
        "s, stopped",
    ]
    print_table(headers, table, title="Offline search on SWE-bench instances")
    ratios = [r["node_over_bare"] for r in rows.values() if "node_over_bare" in r]
    summary = {
        "instances": len(instances),
        "resolved": sum(1 for r in rows.values() if r.get("resolved")),
        "correct": sum(1 for r in rows.values() if r.get("correct")),
        "top5_file": sum(1 for r in rows.values() if r.get("top5_file")),
        "top5_function": sum(1 for r in rows.values() if r.get("top5_function")),
        "median_node_over_bare": statistics.median(ratios) if ratios else None,
        "time_limit": args.time_limit,
    }
    print(json.dumps(summary))
    for inst in instances:
        why = rows[inst.instance_id].get("why")
        if why:
            print(f"{inst.instance_id}: {why[:400]}")
    write_json(args.json, {"summary": summary, "instances": list(rows.values())})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--instances", type=Path, required=True, help="swe-build's instances file")
    p.add_argument("--ids", action="append", default=[], help="only these ids (comma-separated)")
    p.add_argument("--limit", type=int, default=0, help="only the first N instances")
    p.add_argument("--time-limit", type=float, default=300.0, help="search seconds per instance")
    p.add_argument("--localize-timeout", type=float, default=120.0, help="localisation's bound (s)")
    p.add_argument("--runs", type=int, default=3, help="bare runs and verifies per instance")
    p.add_argument("--out", type=Path, default=Path("runs/bench-swe-search"))
    p.add_argument("--search-out", type=Path, help="read this search run instead of running one")
    p.add_argument("--no-measure", action="store_true", help="skip localisation and timings")
    add_json_flag(p)
    anyio.run(main_async, p.parse_args())


if __name__ == "__main__":
    main()
