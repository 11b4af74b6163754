"""The ARC DSL: primitives on hand-made grids, JSON round-trips, standalone Python."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import OPS, Program, compile_program
from atlas_actors.errors import InvalidSolutionError


def G(rows: list[list[int]]) -> np.ndarray[Any, Any]:
    return np.array(rows, dtype=np.int64)


A = G([[1, 2, 0], [0, 3, 0]])

# (program JSON, input, expected output)
CASES: list[tuple[Any, np.ndarray[Any, Any], list[list[int]]]] = [
    (["rot90", "x"], A, [[0, 1], [3, 2], [0, 0]]),
    (["rot180", "x"], A, [[0, 3, 0], [0, 2, 1]]),
    (["rot270", "x"], A, [[0, 0], [2, 3], [1, 0]]),
    (["flip_h", "x"], A, [[0, 2, 1], [0, 3, 0]]),
    (["flip_v", "x"], A, [[0, 3, 0], [1, 2, 0]]),
    (["transpose", "x"], A, [[1, 0], [2, 3], [0, 0]]),
    (["antitranspose", "x"], A, [[0, 0], [3, 2], [0, 1]]),
    (["rigid", "x", 4], A, [[0, 2, 1], [0, 3, 0]]),
    (["shift", "x", 1, 1, 0], A, [[0, 0, 0], [0, 1, 2]]),
    (["recolor", "x", [[1, 5], [0, 7]]], A, [[5, 2, 7], [7, 3, 7]]),
    (["replace_color", "x", 2, 9], A, [[1, 9, 0], [0, 3, 0]]),
    (["keep_color", "x", 3, 0], A, [[0, 0, 0], [0, 3, 0]]),
    (["erase_color", "x", 3, 0], A, [[1, 2, 0], [0, 0, 0]]),
    (["swap_colors", "x", 1, 2], A, [[2, 1, 0], [0, 3, 0]]),
    (["majority_recolor", "x", 0], G([[1, 1, 2]]), [[1, 1, 1]]),
    (["minority_recolor", "x", 0], G([[1, 1, 2]]), [[2, 2, 2]]),
    (["crop_nonbg", "x", 0], G([[0, 0, 0], [0, 4, 0], [0, 4, 4]]), [[4, 0], [4, 4]]),
    (["crop_color", "x", 5], G([[5, 0, 0], [0, 1, 5]]), [[5, 0, 0], [0, 1, 5]]),
    (
        ["crop_inside", "x", 2],
        G([[2, 2, 2, 2], [2, 7, 8, 2], [2, 2, 2, 2], [0, 0, 0, 0]]),
        [[7, 8]],
    ),
    (
        ["crop_object", "x", "largest", 4, 0, 0, 1],
        G([[1, 0, 0, 0], [0, 0, 3, 3], [0, 0, 3, 0]]),
        [[3, 3], [3, 0]],
    ),
    (
        ["crop_object", "x", "smallest", 4, 0, 0, 1],
        G([[1, 0, 0, 0], [0, 0, 3, 3], [0, 0, 3, 0]]),
        [[1]],
    ),
    (
        ["crop_object", "x", "unique_color", 8, 1, 0, 0],
        G([[1, 0, 2, 0], [0, 0, 0, 0], [1, 0, 0, 1]]),
        [[2]],
    ),
    (["drop_bg_lines", "x", 0], G([[0, 0, 0], [1, 0, 2], [0, 0, 0]]), [[1, 2]]),
    (["dedup_lines", "x"], G([[1, 1, 2], [1, 1, 2], [3, 3, 4]]), [[1, 2], [3, 4]]),
    (["upscale", "x", 2, 1], G([[1, 2]]), [[1, 2], [1, 2]]),
    (["downscale", "x", 2, 2], G([[1, 1, 2, 2], [1, 1, 2, 2]]), [[1, 2]]),
    (["tile", "x", 1, 2], G([[1, 2]]), [[1, 2, 1, 2]]),
    (["tile_t", "x", 1, 2, [0, 4]], G([[1, 2]]), [[1, 2, 2, 1]]),
    (
        ["kron_self", "x", 0, 0],
        G([[1, 0], [0, 0]]),
        [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    ),
    (["hcat", "x", ["flip_h", "x"]], G([[1, 2]]), [[1, 2, 2, 1]]),
    (["layer", "x", ["flip_h", "x"], 0], G([[1, 0, 3]]), [[3, 0, 1]]),
    (["layer", "x", ["rigid", "x", 2], 0], G([[0, 0], [0, 5]]), [[5, 0], [0, 5]]),
    (["vcat", "x", "x"], G([[1, 2]]), [[1, 2], [1, 2]]),
    (["split_combine", "x", "h2", "and", 4, 0], G([[1, 1, 5, 1, 0]]), [[4, 0]]),
    (["split_combine", "x", "h2", "xor", 4, 0], G([[1, 0, 5, 1, 1]]), [[0, 4]]),
    (["split_overlay", "x", "v2", 0, 0], G([[1, 0], [0, 2]]), [[1, 2]]),
    (["split_pick", "x", "sep", "unique", 0], G([[1, 5, 1, 5, 2], [1, 5, 1, 5, 1]]), [[2], [1]]),
    (["split_pick", "x", "h3", "most", 0], G([[1, 0, 2, 2, 0, 3]]), [[2, 2]]),
    (["gravity", "x", "down", 0], G([[1, 0], [0, 0], [0, 2]]), [[0, 0], [0, 0], [1, 2]]),
    (["gravity", "x", "left", 0], G([[0, 1, 0, 2]]), [[1, 2, 0, 0]]),
    (
        ["fill_enclosed", "x", 4, 0],
        G([[1, 1, 1, 0], [1, 0, 1, 0], [1, 1, 1, 0]]),
        [[1, 1, 1, 0], [1, 4, 1, 0], [1, 1, 1, 0]],
    ),
    (["fill_bbox", "x", 6, 8, 0, 0], G([[1, 0, 0], [0, 1, 0]]), [[1, 6, 0], [6, 1, 0]]),
    (["halo", "x", 2, 0, 0], G([[0, 0, 0], [0, 1, 0]]), [[0, 2, 0], [2, 1, 2]]),
    (["halo", "x", 2, 1, 0], G([[0, 0, 0], [0, 1, 0]]), [[2, 2, 2], [2, 1, 2]]),
    (["halo", "x", 2, 2, 0], G([[0, 0, 0], [0, 1, 0]]), [[2, 0, 2], [0, 1, 0]]),
    (["interior", "x", 2, 0], G([[1] * 3] * 3), [[1, 1, 1], [1, 2, 1], [1, 1, 1]]),
    (["border", "x", 3], G([[0] * 3] * 3), [[3, 3, 3], [3, 0, 3], [3, 3, 3]]),
    (["rays", "x", 1, "right", 1, 0], G([[1, 0, 2, 0]]), [[1, 1, 2, 0]]),
    (["rays", "x", 1, "right", 0, 0], G([[1, 0, 2, 0]]), [[1, 1, 2, 1]]),
    (["connect", "x", 1, 7, 0], G([[1, 0, 0, 1], [0, 0, 0, 0]]), [[1, 7, 7, 1], [0, 0, 0, 0]]),
    (["symmetrize", "x", "h", 0], G([[1, 2, 0, 0]]), [[1, 2, 2, 1]]),
    (
        ["sym_repair", "x", 9],
        G([[1, 2, 2, 1], [3, 9, 4, 3], [1, 2, 2, 1]]),
        [[1, 2, 2, 1], [3, 4, 4, 3], [1, 2, 2, 1]],
    ),
    (
        ["map_objects", "x", ["flip_h", "x"], 8, 0, 0],
        G([[1, 2, 0, 0], [0, 0, 0, 3]]),
        [[2, 1, 0, 0], [0, 0, 0, 3]],
    ),
    (
        ["recolor_by", "x", "size", [[1, 5], [2, 6]], -1, 4, 0, 0],
        G([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 0]]),
        [[5, 0, 6, 6], [0, 0, 0, 0], [1, 1, 1, 0]],
    ),
    (
        ["recolor_rank", "x", "size", [3, 4], 4, 0, 0],
        G([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 0]]),
        [[4, 0, 4, 4], [0, 0, 0, 0], [3, 3, 3, 0]],
    ),
    (
        ["filter_objects", "x", "size", [1], 0, 4, 0, 0],
        G([[1, 0, 1, 1], [0, 0, 0, 0], [1, 0, 0, 0]]),
        [[0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
    ),
    (
        ["keep_extreme", "x", "largest", 4, 0, 0],
        G([[1, 0, 2, 2]]),
        [[0, 0, 2, 2]],
    ),
    (
        ["remove_extreme", "x", "largest", 4, 0, 0],
        G([[1, 0, 2, 2]]),
        [[1, 0, 0, 0]],
    ),
    (["crop_noise_repair", "x", 9], G([[1, 2, 2, 1], [3, 9, 4, 3], [1, 2, 2, 1]]), [[4]]),
    (["count_row", "x", "objects", 5, 4, 0], G([[1, 0, 1, 0, 1]]), [[5, 5, 5]]),
    (["most_common_color_cell", "x", 0], G([[1, 3, 3, 0]]), [[3]]),
    (
        ["period_repair", "x", 9],
        G([[1, 2, 1, 2, 1], [3, 4, 3, 9, 3], [1, 2, 9, 2, 1]]),
        [[1, 2, 1, 2, 1], [3, 4, 3, 4, 3], [1, 2, 1, 2, 1]],
    ),
    (["crop_period", "x"], G([[1, 2, 1, 2], [3, 4, 3, 4]]), [[1, 2], [3, 4]]),
    (
        ["cells_to_pixels", "x", 0],
        G([[1, 0, 5, 0, 0], [0, 0, 5, 0, 2], [5, 5, 5, 5, 5], [0, 3, 5, 0, 0]]),
        [[1, 2], [3, 0]],
    ),
    (["upscale_by", "x", "ncolors", 0], G([[1, 2]]), [[1, 1, 2, 2], [1, 1, 2, 2]]),
    (
        ["object_gravity", "x", "down", 8, 0],
        G([[1, 1, 0], [0, 1, 0], [0, 0, 0], [0, 0, 2]]),
        [[0, 0, 0], [0, 0, 0], [1, 1, 0], [0, 1, 2]],
    ),
    (
        ["move_to_contact", "x", "smallest", 8, 1, 0],
        G([[2, 0, 0, 0, 3, 3]]),
        [[0, 0, 0, 2, 3, 3]],
    ),
    (["connect", "x", -1, -1, 0], G([[1, 0, 1], [2, 0, 2]]), [[1, 1, 1], [2, 2, 2]]),
    (["crop_at", "x", -1, 0, 1, 2], G([[1, 2, 3], [4, 5, 6]]), [[4, 5]]),
    (["classify", "x", "ncolors", [[1, 4], [2, 7]], 1, 1, 0], G([[1, 2, 0]]), [[7]]),
    (
        ["extend_period", "x", 3, 5],
        G([[1, 2, 1, 2], [3, 4, 3, 4]]),
        [[1, 2, 1, 2, 1], [3, 4, 3, 4, 3], [1, 2, 1, 2, 1]],
    ),
    (["symmetrize_bbox", "x", "h", 0], G([[0, 1, 2, 0, 0, 0]]), [[0, 1, 2, 0, 0, 0]]),
    (["symmetrize_bbox", "x", "h", 0], G([[0, 1, 2, 0, 3, 0, 0]]), [[0, 1, 2, 2, 3, 0, 0]]),
    (["trim", "x"], G([[1, 1, 1], [1, 2, 1], [1, 1, 1]]), [[2]]),
    (["const_grid", "x", 1, 2, 10], G([[0, 0, 0, 3, 3, 4]]), [[3, 3]]),
    (
        ["connect_diag", "x", 1, 6, 0],
        G([[1, 0, 0], [0, 0, 0], [0, 0, 1]]),
        [[1, 0, 0], [0, 6, 0], [0, 0, 1]],
    ),
    # a skewed tiling (each row is the one above shifted left by one), 0 = hole
    (
        ["lattice_fill", "x", 0, 0],
        G([[1, 2, 3, 1, 2, 3], [2, 3, 1, 0, 0, 1], [3, 1, 2, 0, 0, 2], [1, 2, 3, 1, 2, 3]]),
        [[1, 2, 3, 1, 2, 3], [2, 3, 1, 2, 3, 1], [3, 1, 2, 3, 1, 2], [1, 2, 3, 1, 2, 3]],
    ),
    (
        ["lattice_fill", "x", 0, 1],
        G([[1, 2, 3, 1, 2, 3], [2, 3, 1, 0, 0, 1], [3, 1, 2, 0, 0, 2], [1, 2, 3, 1, 2, 3]]),
        [[2, 3], [3, 1]],
    ),
    # colour 1 paints 4 above and below itself (keys 1*25 + 1*5 + 2, 1*25 + 3*5 + 2),
    # colour 2 turns into 6 (key 2*25 + 12)
    (
        ["stamp", "x", [[32, 4], [42, 4], [62, 6]], 0],
        G([[0, 0, 0], [0, 1, 2], [0, 0, 0]]),
        [[0, 4, 0], [0, 1, 6], [0, 4, 0]],
    ),
    (
        ["rays_all", "x", "down", 1, 0],
        G([[1, 0, 2], [0, 0, 0], [3, 0, 0]]),
        [[1, 0, 2], [1, 0, 2], [3, 0, 2]],
    ),
    (
        ["attract", "x", 2, 0, 0],
        G([[2, 0, 0, 0], [0, 0, 0, 0], [2, 0, 0, 5], [0, 0, 0, 0]]),
        [[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 5], [0, 0, 0, 0]],
    ),
    (
        ["attract", "x", 2, 1, 0],
        G([[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 5]]),
        [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 5]],
    ),
    (
        ["align", "x", 1, "top", 0],
        G([[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 3], [2, 0, 0, 3]]),
        [[2, 1, 0, 3], [0, 1, 0, 3], [0, 0, 0, 0], [0, 0, 0, 0]],
    ),
    (
        ["project", "x", 5, 0],
        G([[1, 0, 0, 5], [0, 0, 0, 5], [0, 2, 0, 0], [0, 0, 0, 0]]),
        [[1, 1, 1, 5], [0, 0, 0, 5], [0, 2, 0, 0], [0, 0, 0, 0]],
    ),
    (
        ["paint_template", "x", "shape", 0, 8, 0],
        G([[1, 2, 0, 0], [0, 0, 0, 0], [0, 0, 5, 5], [0, 0, 0, 0]]),
        [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 2], [0, 0, 0, 0]],
    ),
    (
        ["paint_template", "x", "cell", 1, 8, 0],
        G([[1, 2, 0, 0, 0], [3, 4, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 5, 0], [0, 0, 0, 0, 0]]),
        [[1, 2, 0, 0, 0], [3, 4, 0, 0, 0], [0, 0, 1, 2, 0], [0, 0, 3, 4, 0], [0, 0, 0, 0, 0]],
    ),
    (
        ["rays", "x", 1, "dr", 1, 0],
        G([[1, 0, 0], [0, 0, 0], [0, 0, 0]]),
        [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    ),
    (
        ["symmetrize_about", "x", 4, "h", 0],
        G([[2, 0, 0, 0, 0], [0, 0, 4, 0, 0], [0, 3, 0, 0, 0]]),
        [[2, 0, 0, 0, 2], [0, 0, 4, 0, 0], [0, 3, 0, 3, 0]],
    ),
    (
        ["symmetrize_about", "x", 4, "rot", 0],
        G([[2, 0, 0], [0, 4, 0], [0, 0, 0]]),
        [[2, 0, 2], [0, 4, 0], [2, 0, 2]],
    ),
    (
        ["stripes", "x", 0],
        G([[0, 1, 0, 0, 0, 0, 0], [0, 0, 0, 2, 0, 0, 0]]),
        [[0, 1, 0, 2, 0, 1, 0], [0, 1, 0, 2, 0, 1, 0]],
    ),
    (
        ["spiral", "x", 3],
        G([[0] * 5] * 5),
        [[3, 3, 3, 3, 3], [0, 0, 0, 0, 3], [3, 3, 3, 0, 3], [3, 0, 0, 0, 3], [3, 3, 3, 3, 3]],
    ),
    (
        ["count_fill", "x", "big", 1, 1, 4, 0],
        G([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1]]),
        [[1, 1, 0, 0]],
    ),
    (["count_fill", "x", "cells", 2, 2, 2, 0], G([[2, 0, 2, 2]]), [[2, 2], [2, 0]]),
    (
        ["fill_color_bbox", "x", 0],
        G([[1, 0, 0], [0, 0, 1], [2, 0, 2]]),
        [[1, 1, 1], [1, 1, 1], [2, 2, 2]],
    ),
    # cells with 2 coloured cells become 1, others background
    (
        ["cells_map", "x", "ncells", [[2, 1]], 0],
        G([[6, 6, 5, 6, 0], [0, 0, 5, 0, 0], [5, 5, 5, 5, 5], [6, 0, 5, 6, 6]]),
        [[1, 0], [0, 1]],
    ),
    (
        ["fill_regions", "x", "smallest", 7, 0],
        G([[0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]),
        [[7, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]],
    ),
    (
        ["fill_regions", "x", "largest", 7, 0],
        G([[0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]),
        [[0, 1, 7, 7], [1, 1, 7, 7], [7, 7, 7, 7]],
    ),
    (
        ["flood_from", "x", 2, 0],
        G([[0, 1, 0], [1, 1, 2], [0, 1, 0]]),
        [[0, 1, 2], [1, 1, 2], [0, 1, 2]],
    ),
    (["canvas", "x", 2, 1, 0], G([[3, 4]]), [[3, 4], [0, 0]]),
    (
        ["repeat_bbox", "x", "v", 0],
        G([[0, 0], [0, 0], [1, 2], [3, 0], [0, 0]]),
        [[1, 2], [3, 0], [1, 2], [3, 0], [1, 2]],
    ),
    (["fold", "x", "h", 0], G([[1, 0, 5, 3, 0], [0, 0, 5, 0, 2]]), [[1, 3], [2, 0]]),
    (["line_majority", "x", "rows"], G([[1, 1, 2], [3, 4, 4]]), [[1, 1, 1], [4, 4, 4]]),
    (
        ["line_majority", "x", "auto"],
        G([[1, 2, 3], [1, 2, 3], [5, 2, 3]]),
        [[1, 2, 3], [1, 2, 3], [1, 2, 3]],
    ),
    (
        ["continue_period", "x", "right", 0],
        G([[1, 2, 1, 2, 0, 0, 0], [0, 3, 0, 3, 0, 0, 0]]),
        [[1, 2, 1, 2, 1, 2, 1], [0, 3, 0, 3, 0, 3, 0]],
    ),
    (["color_list", "x", "desc", "v", 0], G([[1, 2, 2], [3, 3, 3]]), [[3], [2], [1]]),
    (["color_list", "x", "desc1", "h", 0], G([[1, 2, 2], [3, 3, 3]]), [[2, 1]]),
    (
        ["split_pick", "x", "h3", "asym", 0],
        G([[1, 1, 2, 3, 6, 6], [1, 1, 4, 5, 6, 6]]),
        [[2, 3], [4, 5]],
    ),
    (
        ["crop_object", "x", "symmetric", 8, 0, 0, 1],
        G([[1, 1, 0, 0, 0, 0], [0, 1, 0, 0, 2, 0], [0, 0, 0, 2, 2, 2]]),
        [[0, 2, 0], [2, 2, 2]],
    ),
    # cells of colour 0 with exactly 2 non-background 4-neighbours become 5: key 0*11+2
    (
        ["local_rule", "x", "n4count", [[2, 5]], 0],
        G([[1, 0, 1], [0, 0, 0]]),
        [[1, 5, 1], [0, 0, 0]],
    ),
]


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_primitive_outputs(prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]) -> None:
    out = compile_program(prog)(grid)
    assert out.tolist() == want


def test_every_op_has_a_case() -> None:
    from atlas_actors.arc.dsl import extension_modules

    tested = {c[0][0] for c in CASES}
    # the extension modules' ops have their cases in their own test files
    elsewhere = {row[0] for mod in extension_modules() for row in mod.OP_TABLE}
    assert set(OPS) - tested - elsewhere == set()


def _grids() -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    out = []
    for _ in range(6):
        h, w = rng.integers(2, 8, size=2)
        g = rng.integers(0, 4, size=(h, w))
        g[rng.random((h, w)) < 0.5] = 0
        out.append(g)
    return out


@pytest.mark.parametrize(("prog", "grid", "want"), CASES, ids=[str(c[0][0]) for c in CASES])
def test_json_round_trip_and_standalone_python(
    prog: Any, grid: np.ndarray[Any, Any], want: list[list[int]]
) -> None:
    p = Program.from_json(prog)
    q = Program.from_json(json.loads(json.dumps(p.to_json())))
    assert p == q
    assert hash(p) == hash(q)
    assert p.to_json() == prog
    src = p.to_python()
    compile(src, "<program>", "exec")
    assert "import atlas_actors" not in src and "from atlas_actors" not in src
    ns: dict[str, Any] = {}
    exec(src, ns)
    for g in [grid, *_grids()]:
        try:
            expected = p(g)
        except Exception:
            with pytest.raises(Exception):  # noqa: B017 - same failure standalone
                ns["transform"](g)
            continue
        assert np.array_equal(ns["transform"](g), expected)


def test_nested_program_str_and_python() -> None:
    p = Program.from_json(["recolor", ["crop_object", "x", "largest", 4, 0, 0, 1], [[1, 2]]])
    assert str(p) == "recolor(crop_object(x, 'largest', 4, 0, 0, 1), [[1, 2]])"
    assert p.size() == 2
    assert "def transform(grid" in p.to_python()
    with pytest.raises(AttributeError):
        p.expr = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (["nope", "x"], "unknown op 'nope'"),
        (["rot90"], "takes 1 arguments"),
        (["keep_color", "x", 14, 0], "0..13"),
        (["crop_object", "x", "biggest", 4, 0, 0, 1], "expected one of"),
        (["crop_object", "x", "largest", 5, 0, 0, 1], "connectivity 4 or 8"),
        (["recolor", "x", [[1, 2, 3]]], "pairs"),
        (42, 'expected "x"'),
        (["rot90", "y"], 'expected "x"'),
        (["upscale", "x", 0, 2], "1..30"),
        (["halo", "x", 2, 3, 0], "0..2"),
        (["keep_color", "x", True, 0], "integer"),
    ],
)
def test_invalid_programs_name_the_problem(bad: Any, needle: str) -> None:
    with pytest.raises(InvalidSolutionError, match=None) as ei:
        compile_program(bad)
    assert needle in str(ei.value)


def test_colour_roles_resolve_per_grid() -> None:
    # 12 = least common colour other than the most common one, resolved on the input
    p = Program.from_json(["keep_color", "x", 12, 0])
    assert p(G([[1, 1, 2, 0, 0, 0]])).tolist() == [[0, 0, 2, 0, 0, 0]]
    assert p(G([[3, 4, 4, 0, 0, 0]])).tolist() == [[3, 0, 0, 0, 0, 0]]
    assert "role_color(x, 12)" in str(p)
    ns: dict[str, Any] = {}
    exec(p.to_python(), ns)
    assert ns["transform"](G([[3, 4, 4, 0, 0, 0]])).tolist() == [[3, 0, 0, 0, 0, 0]]


def test_compile_program_is_cached_and_accepts_program() -> None:
    a = compile_program(["flip_h", "x"])
    b = compile_program(["flip_h", "x"])
    c = compile_program(Program.from_json(["flip_h", "x"]))
    assert a is b is c


def test_grid_level_errors_raise() -> None:
    with pytest.raises(ValueError, match="empty"):
        compile_program(["crop_nonbg", "x", 0])(G([[0, 0]]))
    with pytest.raises(ValueError, match="divide"):
        compile_program(["downscale", "x", 2, 2])(G([[1, 2, 3]]))


def test_standalone_python_of_extension_ops_copies_their_helpers() -> None:
    # an op of an extension module whose primitive calls helpers of prims and of its
    # own module: the standalone script defines them all and runs without atlas_actors
    p = Program.from_json(["downscale_auto", "x"])
    src = p.to_python()
    assert "import atlas_actors" not in src and "from atlas_actors" not in src
    assert "def block_factors(" in src  # the op's own module's helper
    ns: dict[str, Any] = {}
    exec(src, ns)
    g = G([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 0, 0], [3, 3, 0, 0]])
    assert ns["transform"](g).tolist() == p(g).tolist() == [[1, 2], [3, 0]]


def test_attract_slides_the_whole_width_of_a_wide_grid() -> None:
    # a 2x9 grid: the 1 must travel 6 columns (more than the grid's height) to the 2
    g = G([[1, 0, 0, 0, 0, 0, 0, 2, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]])
    got = compile_program(["attract", "x", 1, 0, 0])(g)
    assert got.tolist() == [[0, 0, 0, 0, 0, 0, 1, 2, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]]


def test_search_finds_a_diagonal_halo_after_a_tile() -> None:
    """Targets: the input tiled 2x2, with colour 8 on the background cells diagonal to
    a coloured one (and not on side neighbours): needs halo's diagonal-only mode."""
    from atlas_actors.arc.prims import halo
    from atlas_actors.arc.solver import TaskSolver

    rng = np.random.default_rng(3)
    grids = []
    for h, w, c in ((2, 4, 5), (4, 4, 6), (3, 5, 4), (5, 3, 2)):
        g = np.zeros((h, w), dtype=np.int64)
        g[rng.integers(0, h), rng.integers(0, w)] = c
        grids.append(g)
    pairs = [(g, halo(np.tile(g, (2, 2)), 8, 2, 0)) for g in grids[:3]]
    s = TaskSolver(pairs, [grids[3]])
    s.search(4000, max_seconds=20.0)
    assert s.exact
    fn = compile_program(s.solutions()[0].expr)
    want = halo(np.tile(grids[3], (2, 2)), 8, 2, 0)
    assert (fn(grids[3]) == want).all()
    assert (want == 8).sum() > 0 and (
        (want == 8) != (halo(np.tile(grids[3], (2, 2)), 8, 1, 0) == 8)
    ).any()
