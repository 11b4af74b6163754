"""``--render`` pictures: every grid under its label, attempts marked against the expected
output. Checked on the image itself: the grids' cells, the label text where the layout
puts it, the frames' colours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from atlas_actors.arc.render import (
    CELL,
    FAIL,
    FRAME,
    LABEL_H,
    PALETTE,
    PASS,
    Layout,
    Panel,
    font,
    render_task_png,
    text_width,
)
from atlas_actors.types import Task, TaskResult

TRAIN = [
    {"input": [[1, 0], [0, 0]], "output": [[2, 0], [0, 0]]},
    {"input": [[0, 1, 1]], "output": [[0, 2, 2]]},
]
TEST_IN = [[1, 1], [0, 1]]
RIGHT = [[2, 2], [0, 2]]
WRONG = [[1, 1], [0, 1]]


def _task(with_output: bool) -> Task:
    test: dict[str, Any] = {"input": TEST_IN}
    if with_output:
        test["output"] = RIGHT
    return Task(id="recolour", domain="arc", context={"grids": {"train": TRAIN, "test": [test]}})


def _result(solved: bool | None) -> TaskResult:
    return TaskResult(
        task_id="recolour",
        domain="arc",
        solved=solved,
        train_fitness=1.0,
        attempts=[{"attempt_1": WRONG, "attempt_2": RIGHT}],
    )


def _draw(tmp_path: Path, with_output: bool) -> tuple[Layout, np.ndarray[Any, Any]]:
    path = tmp_path / "t.png"
    layout = render_task_png(_result(True if with_output else None), path, _task(with_output))
    assert layout is not None
    image = np.asarray(Image.open(path).convert("RGB"))
    assert (image.shape[1], image.shape[0]) == layout.size
    return layout, image


def _text_alone(text: str, size: tuple[int, int]) -> np.ndarray[Any, Any]:
    """``text`` drawn alone on white in the labels' font."""
    img = Image.new("RGB", size, (255, 255, 255))
    ImageDraw.Draw(img).text((0, 0), text, fill=(0, 0, 0), font=font())
    return np.asarray(img)


def _label_region(image: np.ndarray[Any, Any], p: Panel) -> np.ndarray[Any, Any]:
    x, y = p.label_at
    return image[y : y + LABEL_H, x : x + text_width(p.label)]


def _check_grid(image: np.ndarray[Any, Any], p: Panel) -> None:
    grid = np.asarray(p.grid)
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            pixel = image[p.y + r * CELL + CELL // 2, p.x + c * CELL + CELL // 2]
            assert tuple(pixel) == PALETTE[grid[r, c]], (p.label, r, c)


def test_every_grid_is_drawn_under_its_label_and_attempts_are_marked(tmp_path: Path) -> None:
    layout, image = _draw(tmp_path, with_output=True)
    labels = [p.label for p in layout.panels]
    assert labels == [
        "train 1 input",
        "train 1 output",
        "train 2 input",
        "train 2 output",
        "test 1 input",
        "attempt 1 FAIL",
        "attempt 2 PASS",
        "expected",
    ]
    for p in layout.panels:
        _check_grid(image, p)
        region = _label_region(image, p)
        assert (region < 128).any(), f"no text where {p.label!r} should be"
        assert np.array_equal(region, _text_alone(p.label, (region.shape[1], LABEL_H))), p.label
    # the frames: red around the wrong attempt, green around the right one, none elsewhere
    by_label = {p.label: p for p in layout.panels}
    for label, colour in (("attempt 1 FAIL", FAIL), ("attempt 2 PASS", PASS)):
        p = by_label[label]
        assert tuple(image[p.y - 1, p.x - 1]) == colour
        assert tuple(image[p.y + p.height, p.x + p.width]) == colour
    for label in ("expected", "test 1 input", "train 1 output"):
        p = by_label[label]
        assert tuple(image[p.y - FRAME, p.x - FRAME]) == (255, 255, 255), label
    # the title says the verdict
    assert layout.title == "recolour: solved, train fitness 1.00"


def test_nothing_overlaps(tmp_path: Path) -> None:
    layout, _ = _draw(tmp_path, with_output=True)
    boxes = []
    for p in layout.panels:
        lx, ly = p.label_at
        boxes.append((lx, ly, lx + text_width(p.label), ly + LABEL_H))  # the label
        boxes.append((p.x - FRAME, p.y - FRAME, p.x + p.width + FRAME, p.y + p.height + FRAME))
    for i, a in enumerate(boxes):
        assert a[2] <= layout.size[0] and a[3] <= layout.size[1]
        for b in boxes[i + 1 :]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)


def test_without_the_expected_output_attempts_are_unmarked(tmp_path: Path) -> None:
    layout, image = _draw(tmp_path, with_output=False)
    labels = [p.label for p in layout.panels]
    assert labels[-3:] == ["test 1 input", "attempt 1", "attempt 2"]
    for p in layout.panels:
        _check_grid(image, p)
        assert tuple(image[p.y - FRAME, p.x - FRAME]) == (255, 255, 255), p.label
    assert layout.title == "recolour: test outputs unknown, train fitness 1.00"
