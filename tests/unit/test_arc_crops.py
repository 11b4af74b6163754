"""DSL ops of :mod:`atlas_actors.arc.ops_crops` (shape-changing: counts, layers,
canvases): primitives on hand-made grids (compiled and as standalone Python) and their
parameter generators on tiny hand-made tasks (they fire with the right parameters, and
stay quiet otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arc_cases import G, check_case, check_registered, ctx, gen

from atlas_actors.arc import ops_crops as ocr
from atlas_actors.arc.infer import Ctx

NEW_OPS = {
    "repeat_count",
    "extend_layers",
    "canvas_count",
    "fill_marked_box",
    "nest_complete",
    "assemble_by_mark",
}

_Z4 = [0, 0, 0, 0]
_BOX = G([[4, 0, 0, 0, 4, 0], [2, 0, 0, 0, 0, 0], [4, 0, 0, 0, 4, 0], [0] * 6, [1, 1, 2, 0, 0, 0]])
_CUT = [[0] * 7, [3, 0, 0, 0, 3, 0, 0], [3, 3, 0, 3, 3, 0, 0], [0] * 7, [0, 0, 0, 0, 0, 0, 1]]
_NESTED = [[3, 3, 0, 3, 3], [3, 0, 0, 0, 3], [0, 0, 1, 0, 0], [3, 0, 0, 0, 3], [3, 3, 0, 3, 3]]
_MID = np.zeros((9, 9), dtype=np.int64)
_MID[4, 4] = _MID[4, 5] = _MID[5, 4] = 1
_MID[8, 8] = 2
_PIECES = [[5, 5, 0, 1, 5], [5, 4, 0, 5, 5], [0] * 5, [5, 2, 5, 5, 0], [5, 5, 3, 5, 0]]
_PICTURE = [[1, 5, 5, 2], [5, 5, 5, 5], [5, 5, 5, 5], [3, 5, 5, 4]]
_BOX_OUT = [[4, 0, 0, 0, 4], [2, 2, 1, 1, 0], [4, 0, 0, 0, 4]]

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    # two non-background cells: two copies in a row
    (["repeat_count", "x", "ncells", "row", 0], G([[1, 2]]), [[1, 2, 1, 2]]),
    # two objects: two copies in a column
    (
        ["repeat_count", "x", "nobjects", "col", 0],
        G([[5], [0], [5]]),
        [[5], [0], [5], [5], [0], [5]],
    ),
    # two colours: a full 2 x 2 block of copies
    (
        ["repeat_count", "x", "ncolors", "square", 0],
        G([[3, 4]]),
        [[3, 4, 3, 4], [3, 4, 3, 4]],
    ),
    # two cells copied into the first two tiles of a canvas 2 (background cells) wide
    (
        ["repeat_count", "x", "ncells", "side_nbg", 0],
        G([[1, 0], [0, 2]]),
        [[1, 0, 1, 0], [0, 2, 0, 2], _Z4, _Z4],
    ),
    # nested L layers 1, 2 continued on a grid twice as big
    (
        ["extend_layers", "x", 2, "tl", 0],
        G([[1, 2, 0], [2, 2, 0], [0, 0, 0]]),
        [
            [1, 2, 1, 2, 1, 2],
            [2, 2, 1, 2, 1, 2],
            [1, 1, 1, 2, 1, 2],
            [2, 2, 2, 2, 1, 2],
            [1, 1, 1, 1, 1, 2],
            [2, 2, 2, 2, 2, 2],
        ],
    ),
    # the same about the bottom-right corner: the layers grow up and left
    (
        ["extend_layers", "x", 2, "br", 0],
        G([[0, 0, 0], [0, 2, 2], [0, 2, 1]]),
        [
            [2, 2, 2, 2, 2, 2],
            [2, 1, 1, 1, 1, 1],
            [2, 1, 2, 2, 2, 2],
            [2, 1, 2, 1, 1, 1],
            [2, 1, 2, 1, 2, 2],
            [2, 1, 2, 1, 2, 1],
        ],
    ),
    # two cells: a square canvas of side 2 x 2, the grid at its bottom-left
    (
        ["canvas_count", "x", "ncells", "square", "bl", 0],
        G([[1, 2]]),
        [_Z4, _Z4, _Z4, [1, 2, 0, 0]],
    ),
    # two cells: the shape scaled by 2, the grid at its top-right
    (
        ["canvas_count", "x", "ncells", "scale", "tr", 0],
        G([[1, 2]]),
        [[0, 0, 1, 2], _Z4],
    ),
    # the 1 2 outside the box of the 4 corners goes where it agrees with the 1 inside
    (
        ["fill_marked_box", "x", "id", 0],
        G(
            [
                [4, 0, 0, 0, 4, 0, 0],
                [0, 0, 0, 0, 0, 0, 0],
                [0, 0, 1, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 0, 0],
                [4, 0, 0, 0, 4, 0, 0],
                [0, 0, 0, 0, 0, 0, 0],
                [1, 2, 0, 0, 0, 0, 0],
            ]
        ),
        [[4, 0, 0, 0, 4], [0, 0, 0, 0, 0], [0, 0, 1, 2, 0], [0, 0, 0, 0, 0], [4, 0, 0, 0, 4]],
    ),
    # a whole frame marks the box too: the 5 goes inside, scaled to fill it
    (
        ["fill_marked_box", "x", "id", 0],
        G(
            [
                [3, 3, 3, 3, 0],
                [3, 0, 0, 3, 0],
                [3, 0, 0, 3, 0],
                [3, 3, 3, 3, 0],
                [0, 0, 0, 0, 5],
            ]
        ),
        [[3, 3, 3, 3], [3, 5, 5, 3], [3, 5, 5, 3], [3, 3, 3, 3]],
    ),
    # the 3 frame is cut by the top edge: completed by mirroring, the 1 nested inside
    (["nest_complete", "x", 0], G(_CUT), _NESTED),
    # four 2 x 2 pieces (two of them touching), each put in the corner its mark is at
    (["assemble_by_mark", "x", 0], G(_PIECES), _PICTURE),
    # 1 1 2 flipped so that its 2 touches the box's 2
    (["fill_marked_box", "x", "flips", 0], _BOX, _BOX_OUT),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_case(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    check_case(prog, grid, want)


def test_new_ops_registered_with_cases_and_generators() -> None:
    check_registered(ocr, NEW_OPS, CASES)


def test_errors_raise() -> None:
    with pytest.raises(ValueError):
        ocr.repeat_count(G([[0, 0]]), "ncells", "row", 0)  # nothing to count
    with pytest.raises(ValueError):
        ocr.repeat_count(G([[1, 2, 3]]), "ncells", "side_nbg", 0)  # no background tiles
    with pytest.raises(ValueError):
        ocr.extend_layers(G([[1, 2], [1, 2]]), 2, "tl", 0)  # columns, not layers
    with pytest.raises(ValueError):
        ocr.extend_layers(G([[0, 0], [0, 1]]), 2, "tl", 0)  # pattern not at the corner
    with pytest.raises(ValueError):
        ocr.canvas_count(G([[1] * 10]), "ncells", "square", "tl", 0)  # 100 x 100
    with pytest.raises(ValueError):
        ocr.fill_marked_box(G([[4, 0, 4], [0, 0, 0], [4, 0, 4]]), "id", 0)  # no shape
    with pytest.raises(ValueError):
        ocr.fill_marked_box(G([[4, 0, 4, 0], [0] * 4, [4, 0, 4, 0], [1] * 4]), "id", 0)  # no room
    with pytest.raises(ValueError):
        ocr.nest_complete(G([[0, 1, 1], [0, 0, 0]]), 0)  # one colour only
    with pytest.raises(ValueError):
        ocr.assemble_by_mark(G([[5, 5, 0, 1, 5], [5, 4, 0, 5, 5], [0] * 5, [5, 5, 1, 5, 0]]), 0)
    with pytest.raises(ValueError):  # two pieces point at the same corner
        ocr.assemble_by_mark(
            G([[1, 5, 0, 1, 5], [5, 5, 0, 5, 5], [0] * 5, [5, 2, 5, 5, 0], [5, 5, 3, 5, 0]]), 0
        )
    with pytest.raises(ValueError, match="completion"):  # not symmetric, not cut
        ocr.nest_complete(_MID, 0)


# ---------------------------------------------------------------- generators


def _same(pairs: list[list[list[int]]]) -> Ctx:
    return ctx([(p, p) for p in pairs])


def test_repeat_count_generator() -> None:
    one = ocr.repeat_count(G([[1, 0], [0, 0]]), "ncells", "side_nbg", 0).tolist()
    two = ocr.repeat_count(G([[1, 2], [0, 0]]), "ncells", "side_nbg", 0).tolist()
    c = ctx([([[1, 0], [0, 0]], one), ([[1, 2], [0, 0]], two)])
    assert ("ncells", "side_nbg", 0) in gen("repeat_count", c)
    assert gen("repeat_count", _same([[[1, 0]], [[0, 2]]])) == []
    # a constant ratio is a plain tile's job
    assert gen("repeat_count", ctx([([[1]], [[1, 1]]), ([[2]], [[2, 2]])])) == []


def test_extend_layers_generator() -> None:
    s = [[1, 2, 0], [2, 2, 0], [0, 0, 0]]
    c = ctx([(s, ocr.extend_layers(G(s), 2, "tl", 0).tolist())])
    assert gen("extend_layers", c) == [(2, "tl", 0)]
    r = np.fliplr(G(s))  # the same layers about the top-right corner
    c = ctx([(r.tolist(), ocr.extend_layers(r, 2, "tr", 0).tolist())])
    assert gen("extend_layers", c) == [(2, "tr", 0)]
    assert gen("extend_layers", ctx([(s, np.tile(G(s), (2, 2)).tolist())])) == []


def test_canvas_count_generator() -> None:
    a, b = [[1, 2]], [[3, 0, 0]]
    c = ctx(
        [
            (a, ocr.canvas_count(G(a), "ncells", "square", "bl", 0).tolist()),
            (b, [[0, 0, 0], [0, 0, 0], [3, 0, 0]]),
        ]
    )
    got = gen("canvas_count", c)
    assert ("ncells", "square", "bl", 0) in got
    assert all(g[2] == "bl" for g in got)
    assert gen("canvas_count", _same([a, b])) == []


def test_nest_complete_generator() -> None:
    assert gen("nest_complete", ctx([(_CUT, _NESTED)])) == [(0,)]
    assert gen("nest_complete", _same([_CUT])) == []


def test_fill_marked_box_generator() -> None:
    c = ctx([(_BOX.tolist(), _BOX_OUT)])
    assert gen("fill_marked_box", c) == [("flips", 0)]
    assert gen("fill_marked_box", _same([_BOX.tolist()])) == []


def test_assemble_by_mark_generator() -> None:
    assert gen("assemble_by_mark", ctx([(_PIECES, _PICTURE)])) == [(0,)]
    assert gen("assemble_by_mark", _same([_PIECES])) == []
