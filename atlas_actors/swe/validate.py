"""Is an instance reproducible here? Its tests run with an empty patch and with the gold
patch (behind ``swe-build --validate`` and ``swe-eval --gold``).

An instance is *reproducible* when, graded as swebench grades (the instance's log parser
and ``swebench.harness.grading``, through :meth:`SWEEnvironment.verify`):

* every ``FAIL_TO_PASS`` test fails with the empty patch and passes with the gold one;
* every ``PASS_TO_PASS`` test passes (or is skipped, as swebench's ``test_maintained``
  allows) in both runs;
* both runs finish within the timeout and their logs are parsed and trusted.

``validation.json`` lists, for an instance that is not, each test that misbehaved: the
list it is in, the run, what was expected, and its status in that run's log (``FAILED``,
``ERROR``, ``SKIPPED``, or ``absent`` when the log does not name it at all: a test that
was not collected, or an id the parser never produces).

SWE-bench's test ids come from its log parsers, which split pytest's summary lines at
spaces: a parametrised id whose parameter holds a space is cut there
(``test_make_error[required-Missing``), and the parsers produce the same cut id from
the log, so it is matched exactly. When several parametrised tests share the cut id, the
log parser keeps the status of the last summary line with that id; pytest's ``-rA``
summary lists passes before failures and errors, so the cut id passes only when none of
the tests it stands for fails. (swebench's grading also matches an id with an unclosed
``[`` as a prefix of the log's ids when they all agree on pass or fail.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from atlas_actors.environments.base import Evaluator
from atlas_actors.errors import AtlasError
from atlas_actors.swe.evaluate import for_each
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.types import Outcome

_HOW = {
    ("FAIL_TO_PASS", "empty"): "pass without the fix",
    ("FAIL_TO_PASS", "gold"): "fail with the gold patch",
    ("PASS_TO_PASS", "empty"): "fail without the fix",
    ("PASS_TO_PASS", "gold"): "fail with the gold patch",
}

ValidationProgress = Callable[[int, int, str, str], None]
"""``progress(done, total, instance_id, status)``; status ``resolved`` (reproducible),
``unresolved`` or ``error``, as ``swe-eval``'s display counts them."""


def judge(instance: SWEInstance, empty: Outcome, gold: Outcome) -> dict[str, Any]:
    """The verdict on one instance from its empty-patch and gold-patch outcomes."""
    problems: list[str] = []
    misbehaving: list[dict[str, str]] = []
    for name, run in (("empty", empty), ("gold", gold)):
        d = run.details
        if d.get("timed_out"):
            problems.append(f"the {name} run timed out")
        elif not d.get("patch_applied", True):
            problems.append(f"the {name} patch does not apply")
        elif d.get("error"):
            problems.append(f"the {name} run failed: {d['error']}")
        elif run.tests is not None and not run.tests.log_trusted:
            problems.append(f"the {name} run's test log was not parsed or not trusted")

    def status(run: Outcome, test: str) -> str:
        smap: dict[str, str] = run.details.get("status_map") or {}
        return smap.get(test, "absent")

    def flag(test: str, kind: str, run_name: str, run: Outcome, expected: str) -> None:
        misbehaving.append(
            {
                "test": test,
                "list": kind,
                "run": run_name,
                "expected": expected,
                "status": status(run, test),
            }
        )

    if not problems:
        e, g = empty.tests, gold.tests
        assert e is not None and g is not None
        for t in e.fail_to_pass_passed:
            flag(t, "FAIL_TO_PASS", "empty", empty, "fail")
        for t in g.fail_to_pass_failed:
            flag(t, "FAIL_TO_PASS", "gold", gold, "pass")
        for t in e.pass_to_pass_failed:
            flag(t, "PASS_TO_PASS", "empty", empty, "pass")
        for t in g.pass_to_pass_failed:
            flag(t, "PASS_TO_PASS", "gold", gold, "pass")
        for (kind, run_name), how in _HOW.items():
            tests = [m["test"] for m in misbehaving if (m["list"], m["run"]) == (kind, run_name)]
            if tests:
                shown = ", ".join(tests[:3]) + (
                    f" and {len(tests) - 3} more" if len(tests) > 3 else ""
                )
                problems.append(f"{len(tests)} {kind} {how}: {shown}")
    return {
        "instance_id": instance.instance_id,
        "reproducible": not problems,
        "reason": "; ".join(problems),
        "misbehaving": misbehaving,
        "seconds": {
            "empty": empty.details.get("seconds"),
            "gold": gold.details.get("seconds"),
        },
    }


async def validate_instances(
    instances: Sequence[SWEInstance],
    out_dir: str | Path,
    evaluator: Evaluator | Sequence[Evaluator],
    *,
    progress: ValidationProgress | None = None,
    concurrency: int = 1,
) -> dict[str, Any]:
    """Run every instance with an empty and its gold patch; write ``validation.json``
    (merged with an earlier run's) and per-instance logs; the verdicts by instance id.

    ``evaluator`` as in :func:`atlas_actors.swe.evaluate.grade_predictions`: one shared
    by ``concurrency`` workers (an actor pool) or one per worker."""
    out = Path(out_dir)
    results: dict[str, dict[str, Any]] = {}
    total = len(instances)

    async def validate(inst: SWEInstance, ev: Evaluator) -> None:
        verdict = await _validate_one(inst, ev, out / "validation" / inst.instance_id)
        results[inst.instance_id] = verdict
        if progress is not None:
            status = "resolved" if verdict["reproducible"] else "unresolved"
            progress(
                len(results), total, inst.instance_id, "error" if verdict.get("error") else status
            )

    await for_each(instances, evaluator, validate, concurrency=concurrency)
    await anyio.to_thread.run_sync(write_validation, out / "validation.json", results)
    return results


async def _validate_one(inst: SWEInstance, ev: Evaluator, log_dir: Path) -> dict[str, Any]:
    try:
        empty, gold = await ev.evaluate(inst.to_task(), ["", inst.patch])
    except (AtlasError, OSError, TimeoutError) as e:
        return {
            "instance_id": inst.instance_id,
            "reproducible": False,
            "reason": f"the runs failed: {type(e).__name__}: {e}",
            "error": f"{type(e).__name__}: {e}",
            "misbehaving": [],
        }
    verdict = judge(inst, empty, gold)

    def write() -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        for name, run in (("empty", empty), ("gold", gold)):
            text = run.details.get("test_output")
            (log_dir / f"{name}.txt").write_text(text if isinstance(text, str) else run.feedback)

    await anyio.to_thread.run_sync(write)
    return verdict


def write_validation(path: Path, results: dict[str, dict[str, Any]]) -> None:
    """``validation.json``: this run's verdicts over an earlier run's."""
    entries: dict[str, Any] = {}
    if path.is_file():
        try:
            entries = dict(json.loads(path.read_text()).get("instances") or {})
        except (OSError, ValueError):
            entries = {}
    entries.update(results)
    reproducible = sorted(k for k, v in entries.items() if v.get("reproducible"))
    report = {
        "reproducible": len(reproducible),
        "validated": len(entries),
        "reproducible_ids": reproducible,
        "not_reproducible": {
            k: v.get("reason", "") for k, v in sorted(entries.items()) if not v.get("reproducible")
        },
        "instances": dict(sorted(entries.items())),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def gold_report(
    instances: Sequence[SWEInstance], verdicts: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """A ``swe-eval`` report of a ``--gold`` run: resolved = reproducible."""
    done = set(verdicts)
    resolved = sorted(k for k, v in verdicts.items() if v.get("reproducible"))
    errors = sorted(k for k, v in verdicts.items() if v.get("error"))
    unresolved = sorted(done - set(resolved) - set(errors))
    return {
        "total_instances": len(instances),
        "submitted_instances": len(done),
        "completed_instances": len(resolved) + len(unresolved),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": 0,
        "error_instances": len(errors),
        "completed_ids": sorted(resolved + unresolved),
        "incomplete_ids": sorted({i.instance_id for i in instances} - done),
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "empty_patch_ids": [],
        "error_ids": errors,
        "model_name_or_path": ["gold"],
        "gold": "resolved = reproducible: FAIL_TO_PASS fail with an empty patch and pass "
        "with the gold one, PASS_TO_PASS pass with both (validation.json)",
    }


def gold_predictions(instances: Sequence[SWEInstance]) -> list[dict[str, Any]]:
    """Every instance's gold patch as a prediction (``model_name_or_path`` ``gold``)."""
    return [
        {"instance_id": i.instance_id, "model_name_or_path": "gold", "model_patch": i.patch}
        for i in instances
    ]


async def grade_gold(
    instances: Sequence[SWEInstance],
    predictions: Sequence[dict[str, Any]],
    out_dir: str | Path,
    evaluator: Evaluator | Sequence[Evaluator],
    *,
    progress: ValidationProgress | None = None,
    concurrency: int = 1,
) -> dict[str, Any]:
    """``swe-eval --gold``: :func:`validate_instances` on the predicted instances (in
    :func:`~atlas_actors.swe.evaluate.grade_predictions`' shape); writes ``report.json``
    (:func:`gold_report`) beside ``validation.json``."""
    wanted = {p["instance_id"] for p in predictions}
    chosen = [i for i in instances if i.instance_id in wanted]
    verdicts = await validate_instances(
        chosen, out_dir, evaluator, progress=progress, concurrency=concurrency
    )
    report = gold_report(chosen, verdicts)
    path = Path(out_dir) / "report.json"
    await anyio.to_thread.run_sync(lambda: path.write_text(json.dumps(report, indent=2) + "\n"))
    return report
