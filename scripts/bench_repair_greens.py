"""The green pool of offline repair: which single edits pass every test, which of those are
right, and what the anti-patterns and the ranking among green patches do with them.

For every development bug (or bundled example with ``--examples``), in the bubblewrap
backend: fault localisation, then every edit the offline repair proposer plans at the
root (no anti-pattern refused, the proposer's order), screened up to ``--max-screen``
(the proposer's ``first_screen``, 640) through the environment's ``try_candidates``
tool. Each edit that passes every test (a *green* patch) runs the bug's held-back tests
(``<bug>/heldout.py.txt``, never seen by the search): *correct* when they all pass,
*wrong* otherwise. Then, with no further test run:

* per anti-pattern (``atlas_actors.swe.repair.antipatterns``): the edits it refuses,
  the green ones among them and how many of those are wrong;
* the probes (``atlas_actors.swe.repair.probes``): the greens they refuse (raising on
  inputs near the tested ones where the base does not), and how many are wrong;
* the answer the search would give: the proposer screens batches of 64 until 4 edits are
  green (or ``first_screen`` are screened); ranked by closeness
  (``atlas_actors.swe.repair.ranking``) it offers the closest alone, otherwise the 4 of
  highest prior, of which the search keeps the smallest (then the first offered).
  Reported with nothing applied, each anti-pattern alone, the proposer's defaults (its
  own plan with them refused: both plans' first ``--max-screen`` edits are screened),
  the probes, the ranking, both, and everything: whether a green answer exists and
  whether it is correct.

Screen results are cached (``--cache``, JSON, by instance and edit key), so a rerun that
changes only the refusals or the ranking screens nothing again.

    nice -n 10 python scripts/bench_repair_greens.py --cache runs/greens-cache.json \\
        --json runs/bench_repair_greens.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import astuple
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_repair import BUGS, held_back  # noqa: E402

from atlas_actors.environments.local import LocalEvaluator  # noqa: E402
from atlas_actors.search.base import NodeView  # noqa: E402
from atlas_actors.search.discriminator import solution_size  # noqa: E402
from atlas_actors.swe.environment import SWEEnvironment  # noqa: E402
from atlas_actors.swe.instances import SWEInstance, load_example_instances  # noqa: E402
from atlas_actors.swe.repair.antipatterns import (  # noqa: E402
    ANTI_PATTERNS,
    DEFAULT_ANTI_PATTERNS,
    Evidence,
    refusal,
)
from atlas_actors.swe.repair.batch import CandidatePatch  # noqa: E402
from atlas_actors.swe.repair.proposer import OfflineRepairProposer  # noqa: E402
from atlas_actors.swe.repair.ranking import closeness  # noqa: E402

BATCH = 64
ENOUGH = 4


def edit_key(edit: Any) -> str:
    """A cache key of an edit: its path and a hash of its diff."""
    return f"{edit.path}:{hashlib.blake2b(edit.diff.encode(), digest_size=12).hexdigest()}"


def answer(
    order: Sequence[dict[str, Any]], max_screen: int, *, probe: bool, close: bool
) -> dict[str, Any] | None:
    """The green edit the search would answer with, screening ``order`` as the proposer
    does: batches of 64 until 4 are green (or ``max_screen`` screened; with ``probe``, a
    green the probes refuse does not count). With ``close`` (the ranking among greens)
    the answer is the closest green edit (then the higher prior), offered alone; without
    it, the 4 greens of highest prior are offered and the search keeps the smallest
    (then the first)."""

    def green(e: dict[str, Any]) -> bool:
        return bool(e["passed"]) and not (probe and e.get("probe"))

    screened: list[dict[str, Any]] = []
    for start in range(0, min(len(order), max_screen), BATCH):
        screened += order[start : start + BATCH]
        if sum(1 for e in screened if green(e)) >= ENOUGH:
            break
    greens = sorted(
        (e for e in screened if green(e)),
        key=lambda e: ((tuple(e["closeness"]) if close else ()), -e["prior"], e["position"]),
    )[:ENOUGH]
    if not greens:
        return None
    if close:
        return greens[0]
    return min(greens, key=lambda e: (e["size"], greens.index(e)))


async def plan(
    evaluator: LocalEvaluator, task: Any, antipatterns: Sequence[str]
) -> tuple[OfflineRepairProposer, list[Any], dict[str, dict[int, float]]]:
    """A proposer refusing ``antipatterns``, its plan of the root's edits (best first),
    and the suspiciousness of the planned files' lines."""
    proposer = OfflineRepairProposer(evaluator, antipatterns=antipatterns)
    root = NodeView(node_id="root", state={}, solution="")
    suspicious = await proposer._suspicious(task)
    if not suspicious:
        return proposer, [], {}
    edits, scores = await proposer._edits(task, root, "", suspicious)
    return proposer, edits, scores


async def pool(
    inst: SWEInstance, args: argparse.Namespace, cache: dict[str, Any]
) -> dict[str, Any]:
    evaluator = LocalEvaluator(
        lambda t: SWEEnvironment(backend="bubblewrap", eval_timeout_s=120), max_tasks=1
    )
    task = inst.to_task()
    known = cache.setdefault(inst.instance_id, {})
    root = NodeView(node_id="root", state={}, solution="")
    try:
        proposer, edits, scores = await plan(evaluator, task, ())
        _, kept, _ = await plan(evaluator, task, DEFAULT_ANTI_PATTERNS)
        # what either plan screens first (with and without the anti-patterns)
        wanted = {edit_key(e): e for e in [*edits[: args.max_screen], *kept[: args.max_screen]]}
        todo = [e for key, e in wanted.items() if key not in known]
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            candidates = [CandidatePatch(files={e.path: e.new_text}, label=e.label) for e in batch]
            results = await evaluator.invoke(task, "try_candidates", candidates=candidates)
            for e, res in zip(batch, results, strict=True):
                entry: dict[str, Any] = {"passed": bool(res.passed)}
                if res.passed:
                    held = await held_back(inst, e.diff, args.examples)
                    entry["correct"] = held is not None and held[0] == held[1]
                known[edit_key(e)] = entry
        greens = [e for key, e in wanted.items() if known[key]["passed"]]
        unprobed = [e for e in greens if "probe" not in known[edit_key(e)]]
        for start in range(0, len(unprobed), ENOUGH):
            chunk = unprobed[start : start + ENOUGH]
            reasons = await proposer._probe(task, root, {}, chunk)
            for e, reason in zip(chunk, reasons, strict=True):
                known[edit_key(e)]["probe"] = reason
        covered = proposer._covered.get(task.id, {})
        evidence = Evidence(
            covered=covered, assertion_failures=proposer._assertion_failures.get(task.id, False)
        )

        def row(position: int, e: Any) -> dict[str, Any]:
            entry = known.get(edit_key(e), {"passed": False})
            refused = {
                name: why[1]
                for name in ANTI_PATTERNS
                if (why := refusal(e, evidence, [name])) is not None
            }
            return {
                "position": position,
                "label": e.label,
                "family": e.family,
                "prior": e.prior,
                "size": solution_size(e.diff),
                "passed": entry["passed"],
                "correct": entry.get("correct"),
                "refused": refused,
                "probe": entry.get("probe"),
                "closeness": astuple(closeness(e, scores)) if entry["passed"] else None,
            }

        rows = [row(n, e) for n, e in enumerate(edits[: args.max_screen])]
        kept_rows = [row(n, e) for n, e in enumerate(kept[: args.max_screen])]
    finally:
        await evaluator.aclose()
    return summarize(inst.instance_id, rows, kept_rows, args.max_screen)


def refusers(row: dict[str, Any]) -> list[str]:
    """What refuses a green edit: the anti-patterns that match it, and the probes."""
    return [*row["refused"], *(["probe"] if row["probe"] else [])]


def summarize(
    instance_id: str,
    rows: list[dict[str, Any]],
    kept_rows: list[dict[str, Any]],
    max_screen: int,
) -> dict[str, Any]:
    """One bug's pool: ``rows`` the plan without anti-patterns, ``kept_rows`` the plan
    the proposer makes with all of them refused (its own order)."""
    greens = [r for r in rows if r["passed"]]
    out: dict[str, Any] = {
        "instance_id": instance_id,
        "screened": len(rows),
        "greens": len(greens),
        "green_correct": sum(1 for r in greens if r["correct"]),
        "green_wrong": sum(1 for r in greens if not r["correct"]),
        "refused": {
            name: {
                "edits": sum(1 for r in rows if name in r["refused"]),
                "greens": sum(1 for r in greens if name in r["refused"]),
                "wrong_greens": sum(1 for r in greens if name in r["refused"] and not r["correct"]),
            }
            for name in ANTI_PATTERNS
        },
        "probe": {
            "greens": sum(1 for r in greens if r["probe"]),
            "wrong_greens": sum(1 for r in greens if r["probe"] and not r["correct"]),
        },
        "wrong_green_labels": [
            f"{r['label']} [{', '.join(refusers(r)) or 'kept'}]" for r in greens if not r["correct"]
        ],
    }
    settings: dict[str, tuple[tuple[str, ...], bool, bool]] = {
        "nothing": ((), False, False),
        **{name: ((name,), False, False) for name in ANTI_PATTERNS},
        "anti-patterns": (DEFAULT_ANTI_PATTERNS, False, False),
        "probes": ((), True, False),
        "closeness": ((), False, True),
        "probes+closeness": ((), True, True),
        "all": (DEFAULT_ANTI_PATTERNS, True, True),
    }
    answers = {}
    for setting, (names, probe, close) in settings.items():
        if names == DEFAULT_ANTI_PATTERNS:
            kept = kept_rows
        else:
            kept = [r for r in rows if not any(n in r["refused"] for n in names)]
        pick = answer(kept, max_screen, probe=probe, close=close)
        answers[setting] = (
            "none" if pick is None else ("correct" if pick["correct"] else "wrong")
        ) + ("" if pick is None else f": {pick['label']}")
    out["answers"] = answers
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    instances = load_example_instances() if args.examples else load_example_instances(root=BUGS)
    if args.only:
        instances = [i for i in instances if any(o in i.instance_id for o in args.only)]
    cache: dict[str, Any] = (
        json.loads(args.cache.read_text()) if args.cache and args.cache.exists() else {}
    )
    rows = []
    for inst in instances:
        row = await pool(inst, args, cache)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.cache:
            args.cache.parent.mkdir(parents=True, exist_ok=True)
            args.cache.write_text(json.dumps(cache))
    totals: dict[str, Any] = {
        "bugs": len(rows),
        "with_greens": sum(1 for r in rows if r["greens"]),
        "greens": sum(r["greens"] for r in rows),
        "green_wrong": sum(r["green_wrong"] for r in rows),
        "refused": {
            name: {
                k: sum(r["refused"][name][k] for r in rows)
                for k in ("edits", "greens", "wrong_greens")
            }
            for name in ANTI_PATTERNS
        },
        "probe": {k: sum(r["probe"][k] for r in rows) for k in ("greens", "wrong_greens")},
        "answers": {
            setting: {
                kind: sum(1 for r in rows if r["answers"][setting].startswith(kind))
                for kind in ("correct", "wrong", "none")
            }
            for setting in rows[0]["answers"]
        }
        if rows
        else {},
    }
    return {"rows": rows, "totals": totals}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--examples", action="store_true", help="the four bundled examples instead")
    p.add_argument("--only", nargs="*", help="only bugs whose id contains one of these")
    p.add_argument("--max-screen", type=int, default=640, help="edits screened per bug")
    p.add_argument("--cache", type=Path, help="screen results kept here between runs")
    add_json_flag(p)
    args = p.parse_args()
    out = anyio.run(main_async, args)
    t = out["totals"]
    print(
        f"\n{t['bugs']} bugs, {t['with_greens']} with a green edit; {t['greens']} greens, "
        f"{t['green_wrong']} of them wrong"
    )
    refused = [
        [name, c["edits"], c["greens"], c["wrong_greens"]] for name, c in t["refused"].items()
    ]
    refused.append(["probes", None, t["probe"]["greens"], t["probe"]["wrong_greens"]])
    print_table(["refused by", "edits", "greens", "wrong greens"], refused)
    print_table(
        ["applied", "answer correct", "wrong", "none"],
        [[k, c["correct"], c["wrong"], c["none"]] for k, c in t["answers"].items()],
    )
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
