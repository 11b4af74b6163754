"""PNG pictures of ARC tasks and predictions (``atlas-actors arc --render``).

One row per train pair (``train N input``, ``train N output``) and per test input
(``test N input``, ``attempt 1``, ``attempt 2`` and, when the test output is known,
``expected``), each grid under its label. Where the expected output is known each
attempt is marked: ``PASS`` in its label and a green frame when it equals the expected
output, ``FAIL`` and a red frame when not. The title line gives the task id, the verdict
and the train fitness.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from atlas_actors.types import Task, TaskResult

# The usual ARC palette, colours 0-9.
PALETTE = [
    (0, 0, 0),
    (0, 116, 217),
    (255, 65, 54),
    (46, 204, 64),
    (255, 220, 0),
    (170, 170, 170),
    (240, 18, 190),
    (255, 133, 27),
    (127, 219, 255),
    (135, 12, 37),
]
CELL = 12
"""Pixels per grid cell."""
GAP = 16
"""Pixels between panels and around the picture."""
LABEL_H = 14
"""Height of the label line above each grid."""
FRAME = 3
"""Width of the pass/fail frame around an attempt."""
WHITE = (255, 255, 255)
TEXT = (0, 0, 0)
PASS = (0, 160, 0)
FAIL = (220, 0, 0)


@dataclass(frozen=True)
class Panel:
    """One labelled grid of the picture."""

    label: str
    grid: Any
    """The grid drawn (a 2-D array of colours)."""
    x: int
    y: int
    """Top-left corner of the grid (inside a ``FRAME``-wide margin, its label above)."""
    passed: bool | None = None
    """An attempt's mark: True (equals the expected output), False, None (no mark)."""

    @property
    def width(self) -> int:
        return int(np.asarray(self.grid).shape[1]) * CELL

    @property
    def height(self) -> int:
        return int(np.asarray(self.grid).shape[0]) * CELL

    @property
    def label_at(self) -> tuple[int, int]:
        """Where the label text is drawn (its top-left corner)."""
        return self.x - FRAME, self.y - FRAME - LABEL_H


@dataclass(frozen=True)
class Layout:
    """Where everything goes in a task's picture."""

    size: tuple[int, int]
    title: str
    panels: list[Panel]


def font() -> Any:
    """The font of the labels (Pillow's built-in one)."""
    from PIL import ImageFont

    return ImageFont.load_default()


def text_width(text: str) -> int:
    return int(np.ceil(font().getlength(text)))


def _grid_image(grid: Any) -> Any:
    from PIL import Image

    arr = np.asarray(grid, dtype=np.int64)
    rgb = np.array(PALETTE, dtype=np.uint8)[np.clip(arr, 0, 9)]
    return Image.fromarray(rgb, "RGB").resize(
        (arr.shape[1] * CELL, arr.shape[0] * CELL), Image.Resampling.NEAREST
    )


def _mark(passed: bool | None) -> str:
    return "" if passed is None else " PASS" if passed else " FAIL"


def task_layout(result: TaskResult, data: Any) -> Layout:
    """The picture of ``result`` for a task's grids ``data`` (an ``ARCTaskData``)."""
    rows: list[list[tuple[str, Any, bool | None]]] = []
    for i, (a, b) in enumerate(data.train):
        rows.append([(f"train {i + 1} input", a, None), (f"train {i + 1} output", b, None)])
    for i, a in enumerate(data.test_inputs):
        expected = data.test_outputs[i] if data.test_outputs is not None else None
        row: list[tuple[str, Any, bool | None]] = [(f"test {i + 1} input", a, None)]
        if result.attempts and i < len(result.attempts):
            for n in (1, 2):
                grid = np.asarray(result.attempts[i][f"attempt_{n}"], dtype=np.int64)
                passed = None
                if expected is not None:
                    passed = grid.shape == expected.shape and bool((grid == expected).all())
                row.append((f"attempt {n}{_mark(passed)}", grid, passed))
        if expected is not None:
            row.append(("expected", expected, None))
        rows.append(row)
    panels: list[Panel] = []
    y = GAP + LABEL_H  # the title line
    width = 0
    for row in rows:
        x = GAP
        for label, grid, passed in row:
            panel = Panel(label, np.asarray(grid), x + FRAME, y + LABEL_H + FRAME, passed)
            panels.append(panel)
            x += max(panel.width + 2 * FRAME, text_width(label)) + GAP
        width = max(width, x)
        y += LABEL_H + max(p.height for p in panels[-len(row) :]) + 2 * FRAME + GAP
    verdict = {True: "solved", False: "not solved", None: "test outputs unknown"}[result.solved]
    title = f"{result.task_id}: {verdict}, train fitness {result.train_fitness:.2f}"
    width = max(width, GAP + text_width(title) + GAP)
    return Layout(size=(width, y), title=title, panels=panels)


def render_task_png(result: TaskResult, path: Path, task: Task | None = None) -> Layout | None:
    """Draw ``result`` on its task's grids into ``path`` (see the module docstring); the
    layout drawn, or None when the task's grids cannot be loaded."""
    from PIL import Image, ImageDraw

    from atlas_actors.arc.environment import load_arc_task

    task = task or Task(id=result.task_id, domain="arc", context={"arc_task_id": result.task_id})
    try:
        data = load_arc_task(task)
    except Exception:
        return None  # tasks from files not named by id: nothing to draw without the grids
    layout = task_layout(result, data)
    canvas = Image.new("RGB", layout.size, WHITE)
    draw = ImageDraw.Draw(canvas)
    draw.text((GAP, GAP - 4), layout.title, fill=TEXT, font=font())
    for p in layout.panels:
        draw.text(p.label_at, p.label, fill=TEXT, font=font())
        if p.passed is not None:
            draw.rectangle(
                (p.x - FRAME, p.y - FRAME, p.x + p.width + FRAME - 1, p.y + p.height + FRAME - 1),
                fill=PASS if p.passed else FAIL,
            )
        canvas.paste(_grid_image(p.grid), (p.x, p.y))
    canvas.save(path)
    return layout
