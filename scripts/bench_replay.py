#!/usr/bin/env python
"""The LLM path replayed on real SWE-bench instances: a table per instance.

    export DOCKER_HOST=$(scripts/docker-up)
    nice -n 10 python scripts/bench_replay.py --instances runs/swe-build/instances.jsonl|examples \\
        [--ids ID,...] [--wrong 2] [--tests hidden|visible] [--parallel 4] [--workers 2] \\
        [--max-expansions 20] [--out runs/bench-replay] [--json out.json]

For each instance (an instances file as ``swe-build`` writes it: ``image`` and
``eval_script`` set, the images built), a :class:`~atlas_actors.swe.replay.ReplayModel`
on a loopback :class:`~atlas_actors.llm.testing.FakeLLMServer` answers as a model would:
``--wrong`` plausible wrong edits of lines the gold patch changes first, then the gold
patch's hunks as edit actions, one step at a time, then ``submit``; it also answers the
LLM judge. ``atlas-actors swe --llm-base-url <the server> --proposer llm`` searches every
instance through the engine (Ray actors, containers, the LLM proposer with its
information rounds, the judge on the discriminator actors, rollouts, the final grading),
as a user runs it. Printed per instance:

* ``resolved``: the answer graded on every FAIL_TO_PASS and PASS_TO_PASS test;
* ``nodes``, ``LLM calls``, ``test runs``, ``seconds``, ``s/node``: the search's tree
  nodes, requests the model answered for it (proposals, looks, judgements), verifications,
  wall time and seconds per node;
* ``backed off``: the tree holds a node off the gold path (a wrong edit) and the answer's
  path never leaves the gold one (``no wrong node``: no wrong edit was tried);
* ``steps+wrong``: the gold patch's steps (hunks, files added or deleted) and the wrong
  edits the model proposes first;
* ``stopped``: why the search ended.

The model's requests by kind (proposals, looks, judgements), the views that showed
other lines than the files it expects, and the requests it could not read are printed
after the table. :func:`replay_instances` is the part a bench that builds the instances
first calls.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from benchkit import add_json_flag, print_table, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from atlas_actors.cli import main as cli_main
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.llm.testing import FakeLLMServer
from atlas_actors.search.solve import tree_file
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import SWEInstance, load_example_instances, load_instances
from atlas_actors.swe.replay import GoldReplay, ReplayModel, load_replay

Row = dict[str, Any]


def load_source(source: str) -> list[SWEInstance]:
    """The instances of ``source`` (``examples``: the bundled examples)."""
    return load_example_instances() if source == "examples" else load_instances(source)


def backed_off(replay: GoldReplay, tree: dict[str, Any]) -> str:
    """``yes`` when the tree holds a node off the gold path and the answer's path stays
    on it; else what happened."""
    nodes = tree["nodes"]

    def step(node: dict[str, Any]) -> int | None:
        return replay.progress(replay.files_at(node.get("solution") or ""))

    wrong = sum(1 for n in nodes if step(n) is None)
    if tree.get("final") is None:
        return "no answer"
    path = [nodes[tree["final"]]]
    while path[-1]["parent"] is not None:
        path.append(nodes[path[-1]["parent"]])
    if any(step(n) is None for n in path):
        return "no: the answer is off the gold path"
    return "yes" if wrong else "no wrong node"


async def replay_instances(
    instances: Sequence[SWEInstance],
    out: Path,
    *,
    wrong: int = 2,
    tests: str = "hidden",
    parallel: int = 4,
    workers: int = 2,
    max_expansions: int = 20,
    eval_timeout: float = 600.0,
    look: bool = True,
    latency: float = 0.0,
) -> tuple[dict[str, Row], ReplayModel]:
    """Replay every instance through ``atlas-actors swe`` (run folder ``out``): a row per
    instance id, and the model (its request counts, mismatches and errors)."""
    rows: dict[str, Row] = {}
    replays: dict[str, GoldReplay] = {}
    reader = LocalEvaluator(lambda t: SWEEnvironment(pull="never"), max_tasks=1)
    try:
        for inst in instances:
            try:
                replays[inst.instance_id] = await load_replay(reader, inst, wrong=wrong)
            except Exception as exc:  # an instance the replay cannot take is a row
                rows[inst.instance_id] = {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        await reader.aclose()
    model = ReplayModel(replays.values(), look=look)
    todo = [i for i in instances if i.instance_id in replays]
    if not todo:
        return rows, model
    source = out / "instances.jsonl"
    await anyio.Path(out).mkdir(parents=True, exist_ok=True)
    await anyio.Path(source).write_text("".join(i.model_dump_json() + "\n" for i in todo))
    run = out / "run"
    argv = [
        "swe", "--instances", str(source), "--out", str(run), "--proposer", "llm",
        "--tests", tests, "--max-expansions", str(max_expansions), "--parallel", str(parallel),
        "--workers", str(workers), "--eval-timeout", str(eval_timeout), "--pull", "never",
        "--no-memory", "--quiet",
    ]  # fmt: skip
    if (run / "results.jsonl").exists():
        argv.append("--resume")
    started = time.monotonic()
    async with FakeLLMServer(model, latency=latency) as server:
        code = await anyio.to_thread.run_sync(cli_main, [*argv, "--llm-base-url", server.base_url])
    wall = time.monotonic() - started
    if code != 0:
        raise SystemExit(f"atlas-actors swe exited with {code}")
    results = [json.loads(ln) for ln in (run / "results.jsonl").read_text().splitlines() if ln]
    for r in results:
        iid = r["task_id"]
        replay = replays[iid]
        tree_path = tree_file(run / "trees", iid)
        tree = json.loads(tree_path.read_text()) if tree_path.exists() else None
        nodes = int(r.get("stats", {}).get("nodes", 0))
        seconds = float(r.get("seconds", 0.0))
        rows[iid] = {
            "resolved": bool(r.get("solved")),
            "nodes": nodes,
            "llm_calls": model.calls[iid],
            "test_runs": int(r.get("evaluations", 0)),
            "seconds": seconds,
            "seconds_per_node": seconds / nodes if nodes else None,
            "backed_off": backed_off(replay, tree) if tree else "no tree",
            "steps": replay.n,
            "wrong_edits": len(replay.wrong_edits),
            "stopped": r.get("stopped"),
            "error": r.get("error"),
        }
    rows["_run"] = {"wall_seconds": wall, "requests": dict(model.requests)}
    return rows, model


async def main(args: argparse.Namespace) -> int:
    instances = load_source(args.instances)
    if args.ids:
        wanted = [i for part in args.ids for i in part.split(",") if i]
        known = {i.instance_id for i in instances}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise SystemExit(f"--ids: not in {args.instances}: {', '.join(missing)}")
        instances = [i for i in instances if i.instance_id in wanted]
    rows, model = await replay_instances(
        instances,
        Path(args.out),
        wrong=args.wrong,
        tests=args.tests,
        parallel=args.parallel,
        workers=args.workers,
        max_expansions=args.max_expansions,
        eval_timeout=args.eval_timeout,
        look=not args.no_look,
        latency=args.latency,
    )
    run = rows.pop("_run", {})
    table = []
    for iid in sorted(rows):
        r = rows[iid]
        if "resolved" not in r:
            table.append([iid, "error", *[None] * 6, r.get("error", "")[:60]])
            continue
        table.append(
            [
                iid,
                "yes" if r["resolved"] else "no",
                r["nodes"],
                r["llm_calls"],
                r["test_runs"],
                f"{r['seconds']:.0f}",
                None if r["seconds_per_node"] is None else f"{r['seconds_per_node']:.1f}",
                r["backed_off"],
                f"{r['steps']}+{r['wrong_edits']}",
                r["stopped"] if not r["error"] else f"error: {r['error'][:40]}",
            ]
        )
    print_table(
        [
            "instance",
            "resolved",
            "nodes",
            "LLM calls",
            "test runs",
            "seconds",
            "s/node",
            "backed off",
            "steps+wrong",
            "stopped",
        ],
        table,
        title=f"replay of the LLM path ({args.tests} tests, {args.wrong} wrong edits first)",
    )
    resolved = sum(1 for r in rows.values() if r.get("resolved"))
    print(
        f"\nresolved {resolved} of {len(rows)}; wall {run.get('wall_seconds', 0):.0f} s; "
        f"model requests {dict(model.requests)}"
    )
    for line in model.mismatches[:10]:
        print(f"view mismatch: {line}")
    for line in model.errors[:10]:
        print(f"request not understood: {line}")
    write_json(
        args.json,
        {
            "instances": rows,
            "run": run,
            "mismatches": model.mismatches,
            "errors": model.errors,
            "settings": {k: v for k, v in vars(args).items() if k != "json"},
        },
    )
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--instances",
        required=True,
        help="instances file (swe-build's output), or examples (the bundled ones)",
    )
    ap.add_argument("--ids", action="append", help="only these ids (comma-separated)")
    ap.add_argument("--wrong", type=int, default=2, help="wrong edits first (default 2)")
    ap.add_argument("--tests", choices=["hidden", "visible"], default="hidden")
    ap.add_argument("--parallel", type=int, default=4, help="parallel expansions (4)")
    ap.add_argument("--workers", type=int, default=2, help="environment actors (2)")
    ap.add_argument("--max-expansions", type=int, default=20)
    ap.add_argument("--eval-timeout", type=float, default=600.0)
    ap.add_argument("--latency", type=float, default=0.0, help="model latency, seconds")
    ap.add_argument("--no-look", action="store_true", help="no view before an edit")
    ap.add_argument("--out", default="runs/bench-replay", help="run folder")
    add_json_flag(ap)
    sys.exit(anyio.run(main, ap.parse_args()))
