"""PNG pictures of ARC tasks and predictions (``atlas-actors arc --render``)."""

from __future__ import annotations

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
GAP = 16


def _grid_image(grid: Any) -> Any:
    from PIL import Image

    arr = np.asarray(grid, dtype=np.int64)
    rgb = np.array(PALETTE, dtype=np.uint8)[np.clip(arr, 0, 9)]
    img = Image.fromarray(rgb, "RGB").resize(
        (arr.shape[1] * CELL, arr.shape[0] * CELL), Image.Resampling.NEAREST
    )
    return img


def render_task_png(result: TaskResult, path: Path, task: Task | None = None) -> None:
    """One row per train pair (input, output) and per test input (input, attempt 1,
    attempt 2, expected when known)."""
    from PIL import Image, ImageDraw

    from atlas_actors.arc.environment import load_arc_task

    task = task or Task(id=result.task_id, domain="arc", context={"arc_task_id": result.task_id})
    try:
        data = load_arc_task(task)
    except Exception:
        return  # tasks from files not named by id: nothing to draw without the grids
    rows: list[tuple[str, list[Any]]] = []
    for i, (a, b) in enumerate(data.train):
        rows.append((f"train {i}", [a, b]))
    for i, a in enumerate(data.test_inputs):
        cells: list[Any] = [a]
        if result.attempts and i < len(result.attempts):
            cells += [result.attempts[i]["attempt_1"], result.attempts[i]["attempt_2"]]
        if data.test_outputs is not None:
            cells.append(data.test_outputs[i])
        rows.append((f"test {i}", cells))
    images = [[_grid_image(g) for g in cells] for _, cells in rows]
    width = GAP + max(sum(im.width + GAP for im in row) for row in images) + 60
    height = GAP + sum(max(im.height for im in row) + GAP + 14 for row in images)
    canvas = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(canvas)
    y = GAP
    for (label, _), row in zip(rows, images, strict=True):
        draw.text((GAP, y), label, fill=(0, 0, 0))
        x = GAP
        for im in row:
            canvas.paste(im, (x, y + 14))
            x += im.width + GAP
        y += max(im.height for im in row) + GAP + 14
    title = f"{result.task_id}: solved={result.solved} train_fitness={result.train_fitness:.2f}"
    draw.text((GAP, 2), title, fill=(200, 0, 0))
    canvas.save(path)
