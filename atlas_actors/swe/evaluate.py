"""Grade SWE-bench predictions: ``grade_predictions`` (behind ``atlas-actors swe-eval``,
:mod:`atlas_actors.cli.swe_eval`).

Predictions are SWE-bench's JSONL (``instance_id``, ``model_name_or_path``,
``model_patch``). Each is verified by an :class:`~atlas_actors.environments.base.Evaluator`
(a :class:`~atlas_actors.environments.base.LocalEvaluator` of SWE environments, or a
pool of environment actors), and the run writes::

    out_dir/report.json                    resolved / unresolved / empty / error ids, counts
    out_dir/logs/<instance_id>/patch.diff  the prediction's patch
    out_dir/logs/<instance_id>/report.json the verdict (outcome, tests status)
    out_dir/logs/<instance_id>/test_output.txt   the test log (tail)

A run resumes: an instance whose ``report.json`` exists for the same patch is not redone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio

from atlas_actors.environments.base import Evaluator
from atlas_actors.errors import AtlasError, InvalidTaskError
from atlas_actors.swe.instances import SWEInstance, load_instances
from atlas_actors.types import Outcome

ProgressCallback = Callable[[int, int, str, str], None]
"""``progress(done, total, instance_id, status)``; status is ``resolved``,
``unresolved``, ``empty``, ``error`` or ``cached-<status>``."""

SCHEMA_VERSION = 2
T = TypeVar("T")


def load_predictions(path: str | Path) -> list[dict[str, Any]]:
    """SWE-bench predictions from JSONL (or a JSON list / dict keyed by instance id)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidTaskError(f"cannot read predictions file {p}: {e}") from e
    rows: list[tuple[str, Any]] = []
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and p.suffix == ".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidTaskError(f"{p}: invalid JSON: {e}") from None
        if isinstance(data, dict):
            data = [{"instance_id": k, **v} if isinstance(v, dict) else v for k, v in data.items()]
        rows = [(f"{p}, item {i}", item) for i, item in enumerate(data)]
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((f"{p}, line {n}", json.loads(line)))
                except json.JSONDecodeError as e:
                    raise InvalidTaskError(f"{p}, line {n}: invalid JSON: {e}") from None
    return [_check_prediction(item, where) for where, item in rows]


def _check_prediction(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise InvalidTaskError(f"{where}: a prediction must be a JSON object")
    if not isinstance(item.get("instance_id"), str) or not item["instance_id"]:
        raise InvalidTaskError(f"{where}: field 'instance_id' is missing or not a string")
    if "model_patch" not in item:
        raise InvalidTaskError(f"{where}: field 'model_patch' is missing")
    if item["model_patch"] is not None and not isinstance(item["model_patch"], str):
        raise InvalidTaskError(f"{where}: field 'model_patch' must be a string or null")
    out = dict(item)
    out.setdefault("model_name_or_path", "unknown")
    return out


def _patch_hash(patch: str | None) -> str:
    return hashlib.sha256((patch or "").encode()).hexdigest()[:16]


async def grade_predictions(
    instances: Sequence[SWEInstance] | str | Path,
    predictions: Sequence[dict[str, Any]] | str | Path,
    out_dir: str | Path,
    evaluator: Evaluator | Sequence[Evaluator],
    *,
    progress: ProgressCallback | None = None,
    concurrency: int = 1,
) -> dict[str, Any]:
    """Verify every prediction; write ``report.json`` and per-instance logs; the report.

    ``evaluator`` is one Evaluator (used by ``concurrency`` workers at once: right for an
    actor pool) or a list of them (one per worker: right for in-process
    ``LocalEvaluator(max_tasks=1)`` instances, which must not be shared).
    """
    insts = load_instances(instances) if isinstance(instances, str | Path) else list(instances)
    preds = (
        load_predictions(predictions)
        if isinstance(predictions, str | Path)
        else [_check_prediction(p, f"prediction {i}") for i, p in enumerate(predictions)]
    )
    by_id = {i.instance_id: i for i in insts}
    unknown = [p["instance_id"] for p in preds if p["instance_id"] not in by_id]
    if unknown:
        raise InvalidTaskError(
            f"predictions for unknown instance ids: {', '.join(sorted(unknown)[:10])}"
        )
    seen: dict[str, dict[str, Any]] = {}
    for p in preds:
        seen[p["instance_id"]] = p  # the last prediction for an id wins
    preds = list(seen.values())
    out = Path(out_dir)
    (out / "logs").mkdir(parents=True, exist_ok=True)

    results: dict[str, str] = {}
    model_names = sorted({str(p["model_name_or_path"]) for p in preds})
    total = len(preds)

    async def grade(pred: dict[str, Any], ev: Evaluator) -> None:
        iid = pred["instance_id"]
        status = await _grade_one(by_id[iid], pred, out / "logs" / iid, ev)
        results[iid] = status.removeprefix("cached-")
        if progress is not None:
            progress(len(results), total, iid, status)

    await for_each(preds, evaluator, grade, concurrency=concurrency)

    def ids(status: str) -> list[str]:
        return sorted(i for i, s in results.items() if s == status)

    report = {
        "total_instances": len(insts),
        "submitted_instances": total,
        "completed_instances": len(ids("resolved")) + len(ids("unresolved")),
        "resolved_instances": len(ids("resolved")),
        "unresolved_instances": len(ids("unresolved")),
        "empty_patch_instances": len(ids("empty")),
        "error_instances": len(ids("error")),
        "completed_ids": sorted(ids("resolved") + ids("unresolved")),
        "incomplete_ids": sorted(set(by_id) - set(results)),
        "resolved_ids": ids("resolved"),
        "unresolved_ids": ids("unresolved"),
        "empty_patch_ids": ids("empty"),
        "error_ids": ids("error"),
        "model_name_or_path": model_names,
        "schema_version": SCHEMA_VERSION,
    }
    await anyio.to_thread.run_sync(write_report, out / "report.json", report)
    return report


async def for_each(
    items: Sequence[T],
    evaluator: Evaluator | Sequence[Evaluator],
    work: Callable[[T, Evaluator], Awaitable[None]],
    *,
    concurrency: int = 1,
) -> None:
    """``work(item, evaluator)`` for every item, by workers: one per evaluator when given
    a list (in-process ``LocalEvaluator``s must not be shared), else ``concurrency``
    sharing the one (an actor pool)."""
    evaluators = list(evaluator) if isinstance(evaluator, Sequence) else [evaluator]
    if not evaluators:
        raise InvalidTaskError("evaluator: give at least one Evaluator")
    workers = len(evaluators) if len(evaluators) > 1 else max(1, concurrency)
    send, receive = anyio.create_memory_object_stream[T](len(items) or 1)
    for item in items:
        send.send_nowait(item)
    send.close()

    async def worker(ev: Evaluator) -> None:
        async with receive.clone() as queue:
            async for item in queue:
                await work(item, ev)

    async with anyio.create_task_group() as tg:
        for w in range(workers):
            tg.start_soon(worker, evaluators[w % len(evaluators)])
    receive.close()


async def _grade_one(
    instance: SWEInstance, pred: dict[str, Any], log_dir: Path, ev: Evaluator
) -> str:
    patch = pred.get("model_patch")
    digest = _patch_hash(patch)
    entry: dict[str, Any] = {
        "instance_id": instance.instance_id,
        "model_name_or_path": pred.get("model_name_or_path"),
        "patch_sha256_16": digest,
    }
    cached = await anyio.to_thread.run_sync(_start_log, log_dir, patch, digest)
    if cached is not None:
        return "cached-" + cached
    if not (patch or "").strip():
        entry.update(status="empty", resolved=False)
        await anyio.to_thread.run_sync(write_report, log_dir / "report.json", entry)
        return "empty"
    try:
        outcomes = await ev.evaluate(instance.to_task(), [patch])
        outcome = outcomes[0]
    except (AtlasError, OSError, TimeoutError) as e:
        entry.update(status="error", resolved=False, error=f"{type(e).__name__}: {e}")
        await anyio.to_thread.run_sync(write_report, log_dir / "report.json", entry)
        return "error"
    status = "resolved" if outcome.success else "unresolved"
    await anyio.to_thread.run_sync(_write_outcome, log_dir, entry, outcome, status)
    return status


def _start_log(log_dir: Path, patch: str | None, digest: str) -> str | None:
    """The cached status when this patch was graded before; else write patch.diff."""
    report_path = log_dir / "report.json"
    if report_path.is_file():
        try:
            old = json.loads(report_path.read_text())
            if old.get("patch_sha256_16") == digest and old.get("status") != "error":
                return str(old["status"])
        except (OSError, ValueError, KeyError):
            pass
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "patch.diff").write_text(patch or "")
    return None


def write_report(path: Path, data: dict[str, Any]) -> None:
    """``data`` as JSON at ``path`` (and its ``error``, if any, in ``error.txt`` beside it)."""
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")
    if data.get("error"):
        (path.parent / "error.txt").write_text(str(data["error"]) + "\n")


def _write_outcome(log_dir: Path, entry: dict[str, Any], outcome: Outcome, status: str) -> None:
    details = dict(outcome.details)
    test_output = details.pop("test_output", None)
    if isinstance(test_output, str):
        (log_dir / "test_output.txt").write_text(test_output)
    entry.update(
        status=status,
        resolved=outcome.success,
        partial_score=outcome.partial_score,
        feedback=outcome.feedback,
        details=details,
    )
    write_report(log_dir / "report.json", entry)
