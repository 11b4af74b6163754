"""Offline program repair on the development bug set (``tests/data/repair_bugs``).

For every bug, the tree search with the offline repair proposer (fault localisation,
the frozen operator catalogue, the fast screen; no LLM, no network) runs in the
bubblewrap backend (or Docker with ``--backend docker`` for instances whose images are
built), with the failing tests visible (test-suite-based repair). Reported, overall and
per kind (single, two-edit, hard):

* resolved: the final patch passes every FAIL_TO_PASS and PASS_TO_PASS test
  (``SWEEnvironment.verify``);
* candidate evaluations (screened edits) to the first patch that passes every selected
  test: median and p90 over the bugs where one was found;
* candidate evaluations per second (screened edits / screening wall time) and full
  verifies per bug;
* fault localisation top-1 and top-5: the known buggy line is the first / among the
  first five ranked lines;
* how often the first passing patch *is* the known fix (its files equal the gold
  patch's, compared by normalised AST);
* correct: the final patch resolves the bug and passes the bug's held-back tests
  (``<bug>/heldout.py.txt``, tests the search never sees: the known fix's behaviour on
  other inputs), so a patch that is green but wrong counts as resolved, not correct;
  wrong: resolved but not correct;
* seconds per bug (median and the largest), and how many bugs ran over ``--time-limit``
  (by more than ``--overrun-slack`` seconds: the search checks its limit between
  iterations).

These are bugs written for development (and the four bundled examples with
``--examples``): they show what the search does, not how it generalises; the measure is
public benchmarks run separately.

    nice -n 10 python scripts/bench_repair.py --max-expansions 30 --json runs/bench_repair.json
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atlas_actors.config import SWESearchConfig  # noqa: E402
from atlas_actors.environments.local import LocalEvaluator  # noqa: E402
from atlas_actors.search.discriminator import Discriminator  # noqa: E402
from atlas_actors.search.mcts import SWESearch  # noqa: E402
from atlas_actors.swe.environment import SWEEnvironment  # noqa: E402
from atlas_actors.swe.instances import SWEInstance, load_example_instances  # noqa: E402
from atlas_actors.swe.repair.antipatterns import ANTI_PATTERNS, DEFAULT_ANTI_PATTERNS  # noqa: E402
from atlas_actors.swe.repair.catalogue import family_names  # noqa: E402
from atlas_actors.swe.repair.proposer import OfflineRepairProposer  # noqa: E402

BUGS = ROOT / "tests" / "data" / "repair_bugs"
sys.path.insert(0, str(ROOT / "scripts"))

from make_repair_bug import heldout_file, run_heldout  # noqa: E402


def _norm(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return ast.dump(ast.parse(text))
    except SyntaxError:
        return text


def gold_files(inst: SWEInstance) -> dict[str, str | None]:
    """The files the gold patch changes, as they are with it applied."""
    import subprocess
    import tempfile

    assert inst.local_repo
    with tempfile.TemporaryDirectory() as td:
        subprocess.run(["git", "clone", "-q", inst.local_repo, td], check=True)
        subprocess.run(["git", "-C", td, "apply", "-"], input=inst.patch.encode(), check=True)
        paths = [ln[6:] for ln in inst.patch.splitlines() if ln.startswith("+++ b/")]
        out: dict[str, str | None] = {}
        for p in paths:
            f = Path(td) / p
            out[p] = f.read_text() if f.exists() else None
        return out


def short_name(inst: SWEInstance) -> str:
    """``atlas-bugs__booking-1`` -> ``booking``."""
    return inst.instance_id.split("__", 1)[-1].rsplit("-", 1)[0]


async def held_back(inst: SWEInstance, patch: str, example: bool) -> tuple[int, int] | None:
    """(held-back tests passed, held-back tests) with ``patch`` applied; None without
    held-back tests."""
    tests = heldout_file(short_name(inst), BUGS, example=example)
    if not tests.exists() or not inst.local_repo:
        return None
    statuses = await run_heldout(inst.local_repo, tests, patch)
    return sum(1 for s in statuses.values() if s == "PASSED"), len(statuses)


async def one(inst: SWEInstance, args: argparse.Namespace, buggy: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {"backend": args.backend, "eval_timeout_s": 120}
    evaluator = LocalEvaluator(lambda t: SWEEnvironment(**options), max_tasks=1)
    task = inst.to_task()
    row: dict[str, Any] = {"instance_id": inst.instance_id}
    started = time.monotonic()
    try:
        loc = await evaluator.invoke(task, "localize")
        ranked = [f"{s.path}:{s.line}" for s in loc.lines]
        row["fl_top1"] = bool(ranked[:1]) and ranked[0] in buggy
        row["fl_top5"] = any(r in buggy for r in ranked[:5])
        row["fl_seconds"] = loc.seconds
        families = [f for f in family_names() if f not in set(args.families_off or ())]
        proposer = OfflineRepairProposer(
            evaluator,
            families=families if args.families_off else None,
            antipatterns=DEFAULT_ANTI_PATTERNS if args.antipatterns is None else args.antipatterns,
            probe=not args.no_probe,
            rank_greens=not args.no_rank_greens,
        )
        config = SWESearchConfig(
            max_expansions=args.max_expansions,
            time_limit_s=args.time_limit,
            children_per_expansion=4,
            max_children=4,
            parallel_expansions=1,
            rollout_depth=0,
        )
        search = SWESearch(proposer, evaluator, evaluator, Discriminator(), config)
        tree_path = args.save / f"{inst.instance_id}.tree.json" if args.save else None
        result = await search.search(task, seed=args.seed, tree_path=tree_path)
        final = result.best.solution if result.best is not None else ""
        if args.save:
            (args.save / f"{inst.instance_id}.patch").write_text(final or "")
        verdict = await evaluator.verify(task, final or "")
        report = proposer.report(task.id)
        row.update(
            patch=final or "",
            resolved=verdict.success,
            full_verifies=result.stats.evaluations,
            expansions=result.stats.expansions,
            screened=int(report["screened"]),
            passing_patches=int(report["passing_patches"]),
            first_passing_at=report.get("first_passing_at"),
            stopped=result.stopped,
            refused=int(report.get("refused", 0)),
            probe_refused=[r for r in proposer.refused.get(task.id, []) if r.startswith("probe")],
        )
        held = await held_back(inst, final, args.examples) if final else None
        if held is not None:
            row["heldout"] = f"{held[0]}/{held[1]}"
        row["correct"] = bool(verdict.success and held is not None and held[0] == held[1])
        row["wrong"] = bool(verdict.success and not row["correct"])
        first = proposer.first_passing.get(task.id)
        if first is not None:
            gold = gold_files(inst)
            row["first_is_known_fix"] = all(
                _norm(first[1].get(p)) == _norm(t) for p, t in gold.items()
            ) and set(first[1]) <= set(gold)
    except Exception as e:  # one bug's failure is a row, not the end of the benchmark
        row.update(resolved=False, error=f"{type(e).__name__}: {e}"[:300])
    finally:
        await evaluator.aclose()
    row["seconds"] = time.monotonic() - started
    row["over_time_limit"] = row["seconds"] > args.time_limit + args.overrun_slack
    return row


def quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    pos = q * (len(values) - 1)
    lo, hi = int(pos), min(len(values) - 1, int(pos) + 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    firsts = [float(r["first_passing_at"]) for r in rows if r.get("first_passing_at")]
    screened = sum(r.get("screened", 0) for r in rows)
    seconds = sum(r.get("seconds", 0.0) for r in rows)
    found = [r for r in rows if "first_is_known_fix" in r]
    times = [float(r.get("seconds", 0.0)) for r in rows]
    return {
        "bugs": len(rows),
        "resolved": sum(bool(r.get("resolved")) for r in rows),
        "correct": sum(bool(r.get("correct")) for r in rows),
        "wrong": sum(bool(r.get("wrong")) for r in rows),
        "seconds_median": statistics.median(times) if times else 0.0,
        "seconds_max": max(times, default=0.0),
        "over_time_limit": sum(bool(r.get("over_time_limit")) for r in rows),
        "first_passing_median": statistics.median(firsts) if firsts else None,
        "first_passing_p90": quantile(firsts, 0.9) if firsts else None,
        "screened_per_second": screened / seconds if seconds else 0.0,
        "full_verifies_per_bug": statistics.mean(r.get("full_verifies", 0) for r in rows),
        "fl_top1": sum(bool(r.get("fl_top1")) for r in rows),
        "fl_top5": sum(bool(r.get("fl_top5")) for r in rows),
        "first_is_known_fix": f"{sum(bool(r['first_is_known_fix']) for r in found)}/{len(found)}",
        "errors": sum(1 for r in rows if r.get("error")),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    if args.examples:
        instances = load_example_instances()
        kinds = {i.instance_id: "example" for i in instances}
        buggy: dict[str, list[str]] = {}
        for i in instances:
            path = i.patch.split("+++ b/", 1)[1].split("\n", 1)[0]
            start = int(i.patch.split("@@ -", 1)[1].split(",", 1)[0])
            lines = i.patch.split("@@", 2)[2].splitlines()[1:]
            for k, ln in enumerate(x for x in lines if not x.startswith("+")):
                if ln.startswith("-"):
                    buggy.setdefault(i.instance_id, []).append(f"{path}:{start + k}")
    else:
        manifest = json.loads((BUGS / "MANIFEST.json").read_text())
        kinds = {b["instance_id"]: b["kind"] for b in manifest["bugs"]}
        buggy = {b["instance_id"]: b["buggy_lines"] for b in manifest["bugs"]}
        instances = load_example_instances(root=BUGS)
    if args.only:
        instances = [i for i in instances if any(o in i.instance_id for o in args.only)]
    rows = []
    for inst in instances:
        row = await one(inst, args, buggy.get(inst.instance_id, []))
        row["kind"] = kinds.get(inst.instance_id, "?")
        rows.append(row)
        print(json.dumps(row), flush=True)
    kinds_run = sorted({r["kind"] for r in rows})
    by_kind = {k: summarize([r for r in rows if r["kind"] == k]) for k in kinds_run}
    return {"rows": rows, "all": summarize(rows), "by_kind": by_kind}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max-expansions", type=int, default=30)
    p.add_argument("--time-limit", type=float, default=600.0, help="seconds per bug")
    p.add_argument(
        "--overrun-slack",
        type=float,
        default=60.0,
        help="seconds past --time-limit before a bug counts as over it",
    )
    p.add_argument("--backend", choices=["bubblewrap", "docker"], default="bubblewrap")
    p.add_argument("--examples", action="store_true", help="the four bundled examples instead")
    p.add_argument("--only", nargs="*", help="only bugs whose id contains one of these")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--antipatterns",
        nargs="*",
        choices=list(ANTI_PATTERNS),
        help="the anti-patterns refused (default: DEFAULT_ANTI_PATTERNS; none given: none)",
    )
    p.add_argument("--no-probe", action="store_true", help="no probes among green patches")
    p.add_argument(
        "--no-rank-greens", action="store_true", help="greens ranked by prior, up to k offered"
    )
    p.add_argument(
        "--families-off",
        nargs="*",
        choices=list(family_names()),
        help="catalogue families left out (e.g. collection_update return_computed base_case)",
    )
    add_json_flag(p)
    p.add_argument(
        "--save",
        type=Path,
        help="write each bug's final patch (<id>.patch) and search tree (<id>.tree.json) here",
    )
    args = p.parse_args()
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    out = anyio.run(main_async, args)
    table = []
    for kind, s in [*out["by_kind"].items(), ("all", out["all"])]:
        med = s["first_passing_median"]
        p90 = s["first_passing_p90"]
        table.append(
            [
                kind,
                s["bugs"],
                s["resolved"],
                s["correct"],
                s["wrong"],
                f"{med:.0f}/{p90:.0f}" if med is not None else "-",
                f"{s['seconds_median']:.0f}/{s['seconds_max']:.0f}",
                s["over_time_limit"],
                f"{s['screened_per_second']:.1f}",
                f"{s['full_verifies_per_bug']:.1f}",
                f"{s['fl_top1']}/{s['fl_top5']}",
                s["first_is_known_fix"],
            ]
        )
    print_table(
        [
            "kind",
            "bugs",
            "resolved",
            "correct",
            "wrong",
            "first-pass med/p90",
            "s med/max",
            "over",
            "evals/s",
            "verifies/bug",
            "FL top1/top5",
            "first=fix",
        ],
        table,
    )
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
