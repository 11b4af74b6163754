#!/usr/bin/env python
"""Real SWE-bench instances built and run here: a table per instance.

    export DOCKER_HOST=$(scripts/docker-up)
    nice -n 10 python scripts/bench_swebench.py --instances ../shared/swebench/lite-dev.jsonl \\
        --mirrors ~/mirrors --out runs/bench-swebench --jobs 2 [--python-fallback] \\
        [--uploaded-prior-to DATE|newest] [--replay] [--json out.json]

Builds every instance with ``swe-build`` (``atlas_actors.swe.builder``; images that exist
unchanged are kept, and their build seconds are the ones recorded when they were built),
validates each built one (an empty patch and the gold patch,
``atlas_actors.swe.validate``), and prints per instance:

* ``env s`` / ``inst s``: seconds building the environment image (shared by the instances
  of one repository and version) and the instance image;
* ``python``: the Python the instance runs on (``3.8->3.9``: a fallback);
* ``verify s``: seconds of the gold run's tests;
* ``reproducible``: yes, or why not (skipped, failed build, the tests that misbehave);
* ``replay`` (``--replay``): the LLM path replayed on each reproducible instance
  (``bench_replay.replay_instances``: a model answering from the gold patch, wrong edits
  first): resolved, nodes, and whether the wrong edit was backed off.

Needs the git mirrors (``--mirrors DIR`` with ``<owner>__<name>`` folders, or
``--mirror OWNER/NAME=PATH``): not for CI. Columns are a list (``COLUMNS``) other
measures add to.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_replay import replay_instances
from benchkit import add_json_flag, print_table, write_json

from atlas_actors.cli.swe_build import parse_mirrors, parse_pins, parse_uploaded_prior_to
from atlas_actors.environments.local import LocalEvaluator
from atlas_actors.swe.builder import (
    DEFAULT_UPLOADED_PRIOR_TO,
    BuildConfig,
    BuildEvent,
    build_instances,
    check_row,
)
from atlas_actors.swe.environment import SWEEnvironment
from atlas_actors.swe.instances import load_instances, load_rows
from atlas_actors.swe.validate import validate_instances

Row = dict[str, Any]


def _seconds(x: Any) -> str:
    return "" if x in (None, "") else f"{float(x):.0f}"


def _python(b: Row) -> str:
    if not b.get("python"):
        return ""
    if b.get("python_fallback"):
        return f"{b['python_requested']}->{b['python']}"
    return str(b["python"])


def _verdict(b: Row, v: Row | None) -> str:
    if b.get("status") == "skipped":
        return f"no: {b.get('reason', '')}"
    if b.get("status") == "failed":
        return f"no: build failed: {b.get('reason', '')}"
    if v is None:
        return "not validated"
    if v.get("reproducible"):
        return "yes"
    return f"no: {v.get('reason', '')}"


def _replay(r: Row | None) -> str:
    if r is None:
        return ""
    if "resolved" not in r:
        return f"error: {r.get('error', '')}"
    return f"{'yes' if r['resolved'] else 'no'} ({r['nodes']} nodes, backed off: {r['backed_off']})"


COLUMNS: list[tuple[str, Callable[[Row, Row | None], str]]] = [
    ("env s", lambda b, v: _seconds(b.get("env_build_seconds"))),
    ("inst s", lambda b, v: _seconds(b.get("instance_build_seconds"))),
    ("python", lambda b, v: _python(b)),
    ("verify s", lambda b, v: _seconds(((v or {}).get("seconds") or {}).get("gold"))),
    ("reproducible", _verdict),
]
"""(header, cell from the build.json entry and the validation.json entry)."""


def table_rows(build: dict[str, Row], validation: dict[str, Row], width: int) -> list[list[str]]:
    rows = []
    for iid in sorted(build):
        cells = [f(build[iid], validation.get(iid)) for _, f in COLUMNS]
        cells[-1] = cells[-1][:width]
        rows.append([iid, *cells])
    return rows


async def main(args: argparse.Namespace) -> int:
    out = Path(args.out)
    rows = [check_row(r, where) for where, r in load_rows(args.instances)]
    config = BuildConfig(
        mirrors_dir=Path(args.mirrors) if args.mirrors else None,
        mirrors=parse_mirrors(args.mirror),
        jobs=args.jobs,
        python_fallback=args.python_fallback,
        uploaded_prior_to=parse_uploaded_prior_to(args.uploaded_prior_to),
        pip_pins=parse_pins(args.pip_pin),
        force=args.force,
        image_prefix=args.image_prefix,
    )

    def progress(e: BuildEvent) -> None:
        if e.kind in ("built", "failed", "cached"):
            print(f"  {e.kind:7} {e.image} {e.text[:160]}", file=sys.stderr, flush=True)

    started = time.monotonic()
    records = await build_instances(rows, config, out, progress=progress)
    build_s = time.monotonic() - started
    ready = {r.instance_id for r in records if r.status in ("built", "cached")}
    insts = [i for i in load_instances(out / "instances.jsonl") if i.instance_id in ready]
    evaluators = [
        LocalEvaluator(
            factory=lambda t: SWEEnvironment(eval_timeout_s=args.eval_timeout, pull="never"),
            max_tasks=1,
        )
        for _ in range(min(args.jobs, max(1, len(insts))))
    ]
    started = time.monotonic()
    try:
        await validate_instances(insts, out, evaluators)
    finally:
        for ev in evaluators:
            await ev.aclose()
    validate_s = time.monotonic() - started
    build = json.loads((out / "build.json").read_text())["instances"]
    build = {k: v for k, v in build.items() if k in {r["instance_id"] for r in rows}}
    validation = json.loads((out / "validation.json").read_text())["instances"]
    replay: dict[str, Row] = {}
    if args.replay:
        todo = [i for i in insts if (validation.get(i.instance_id) or {}).get("reproducible")]
        replay, _model = await replay_instances(
            todo, out / "replay", wrong=args.replay_wrong, workers=args.jobs
        )
        replay.pop("_run", None)
        COLUMNS.append(("replay", lambda b, v: _replay(replay.get(b["instance_id"]))))
    print_table(
        ["instance", *(h for h, _ in COLUMNS)],
        table_rows(build, validation, args.reason_width),
        title="SWE-bench instances built here",
    )
    ok = sum(1 for k in build if (validation.get(k) or {}).get("reproducible"))
    print(
        f"\nreproducible {ok} of {len(build)}; this run: build {build_s:.0f} s, "
        f"validation {validate_s:.0f} s (jobs {args.jobs})"
    )
    if args.replay:
        n = sum(1 for r in replay.values() if r.get("resolved"))
        print(f"replay resolved {n} of {ok} reproducible")
    figures = {"build": build, "validation": validation, "reproducible": ok, "replay": replay}
    await anyio.to_thread.run_sync(write_json, args.json, figures)
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", required=True, help="SWE-bench rows (JSONL)")
    ap.add_argument("--mirrors", help="folder of <owner>__<name> git mirrors")
    ap.add_argument("--mirror", action="append", default=[], help="OWNER/NAME=PATH")
    ap.add_argument("--out", required=True, help="the swe-build output folder")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--python-fallback", action="store_true")
    ap.add_argument("--uploaded-prior-to", default=DEFAULT_UPLOADED_PRIOR_TO, help="or newest")
    ap.add_argument("--pip-pin", action="append", default=[])
    ap.add_argument("--force", action="store_true", help="rebuild every image (fresh times)")
    ap.add_argument("--image-prefix", default="atlas-swe", help="image names' start")
    ap.add_argument("--eval-timeout", type=float, default=1800.0)
    ap.add_argument(
        "--replay",
        action="store_true",
        help="also replay the LLM path on every reproducible instance (bench_replay.py)",
    )
    ap.add_argument("--replay-wrong", type=int, default=2, help="replay's wrong edits (2)")
    ap.add_argument("--reason-width", type=int, default=160)
    add_json_flag(ap)
    sys.exit(anyio.run(main, ap.parse_args()))
