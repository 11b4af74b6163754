"""The DSL's ops, one module per family, each op declared on its function (see
:mod:`atlas_actors.arc.registry`).

=========== ==================================================================
geometry    quarter turns, flips, rigid transforms, shifts, shears, layering
colour      colour maps, keeping, erasing, swapping and recolouring by colour
objects     objects chosen or recoloured by their features
shapes      edits inside each object (hollow, halves, trims, paths)
crops       windows cut out of the grid
scale       scaling, tiling, Kronecker products, canvases, counted layouts
parts       splitting into parts and combining or overlaying them
cells       grids cut by separator lines into cells or panels
gravity     sliding until something is hit (gravity, attraction, alignment)
moves       moves by an amount read off the grid
rays        straight rays from cells
diagonals   lines along diagonals
connect     lines joining cells or objects
lines       drawing, extending and completing whole lines
fill        painting regions (enclosed, boxes, halos, floods, holes)
regions     regions of background and empty areas
symmetry    completing or repairing symmetry
mirrors     reflecting objects across mirrors
counting    outputs summarising counts or colour rankings
periodic    periodic patterns (repair, extend, lattices, stripes)
rings       nested rings, layers and spirals
stamps      patterns painted around cells (local rules, stamps, motifs)
learned     per-cell decision trees learned from the train pairs
marks       marks relative to objects (corners, contacts, crossings)
templates   completing or copying templates
copies      repeating or repairing copies of a shape
assembly    putting pieces together
turned      twins of one-orientation ops that work under any rigid transform
=========== ==================================================================

:data:`OPS` and :data:`GENERATORS` list them in one fixed order, :data:`RANK`: the
search expands ops in that order under a budget, so the order is part of the search's
behaviour, and it is recorded here rather than left to the modules an op lives in. An op
not ranked follows every ranked one, in declaration order.
"""

from __future__ import annotations

import types

from atlas_actors.arc.ops import (
    assembly,
    cells,
    colour,
    connect,
    copies,
    counting,
    crops,
    diagonals,
    fill,
    geometry,
    gravity,
    learned,
    lines,
    marks,
    mirrors,
    moves,
    objects,
    parts,
    periodic,
    rays,
    regions,
    rings,
    scale,
    shapes,
    stamps,
    symmetry,
    templates,
    turned,
)
from atlas_actors.arc.registry import Generator, OpSpec, declared, in_order

RANK = """
rot90 rot180 rot270 flip_h flip_v transpose antitranspose shift crop_nonbg crop_object
crop_color crop_inside drop_bg_lines dedup_lines upscale downscale tile tile_t kron_self
split_combine split_overlay split_pick recolor_by filter_objects recolor_rank keep_extreme
remove_extreme map_objects gravity fill_enclosed fill_bbox halo interior border rays connect
symmetrize symmetrize_bbox sym_repair crop_noise_repair keep_color replace_color erase_color
majority_recolor minority_recolor count_row swap_colors local_rule period_repair
lattice_fill stamp rays_all attract align symmetrize_about stripes color_list fold
line_majority continue_period flood_from canvas repeat_bbox fill_regions cells_map
fill_color_bbox spiral count_fill project paint_template crop_period cells_to_pixels
upscale_by object_gravity move_to_contact trim classify extend_period crop_at const_grid
connect_diag most_common_color_cell snap_to_line recolor_nearest bounce fill_gaps
fill_squares stride_recolor denoise recolor_extremes recolor_if move_by_size recolor_except
fill_empty_lines swap_other complete_templates hollow connect_layered ring_colors
extend_ends connect_l fill_holes halo_if mark_contact corner_rays obj_diag_ray cell_connect
dashed_rays center_lines fill_corners cell_broadcast diag_period_fill cell_max_fill
snap_to_wall recolor_by_dot recolor_matching flood_alternate wall_rays corner_marks
midpoint_mark bridge cross_swap meet_middle half_recolor frame_in_markers stretch_to_dot
step_toward keep_center_line alternate_cells merge_touching recolor_in_box pointer_ray
symmetrize_mark fill_largest_rect complete_lines cell_expand cell_template_mark diag_bounce
cell_key_place mirror_marker checker_interior border_marks mark_crossings stamp_markers
role_stamp anchor_copy fit_templates repeat_toward cell_fit_templates pieces_into_holes
spill_cups extend_rings kron_eq crop_most histogram key_mask downscale_auto count_diag
color_order lookup_grid overlay_parts block_summary object_color overlay_windows pingpong
crop_marked fit_in_frame paint_fg pad_extend snake_colors largest_bars corner_quadrants
line_colors most_dotted join_pieces grow_rows sample_lattice corner_assemble crop_margin
attract_to rays_paint diag_marks center_in copy_to_match sort_stack place_halves
crop_solid_rect recolor_topology ray_to_wall crop_lines mirror_to_markers nest_colors
gather_dots mirror_across march_copies overlay_corners panel_transforms panel_colors
extend_drift extend_runs lines_by_position palette_stripes fill_panels_by_place
recolor_regions fill_windows hole_lines dot_lines_by_region spill_beam seed_motif ray_detour
repeat_count extend_layers canvas_count fill_marked_box nest_complete assemble_by_mark
kron_fill unocclude count_colors_grid line_staircase shift_by_count fill_rooms
complete_by_analogy move_by_count turn_objects extend_segments erase_contained
dot_paint_touching shear mirror_cross overlay_objects wall_gravity block_pixels
connect_corners_diag shift_by_color kron_own complete_copies legend_recolor mirror_line
cycle_recolor keep_top_colors trim_objects square_ticks nest_by_count step_to_marker
dot_to_corner reverse_path roll_by_key toggle_lines bounce_r anchor_copy_r largest_bars_r
grow_rows_r count_diag_r palette_stripes_r canvas_r stripes_r fill_squares_r
alternate_cells_r panel_transforms_r panel_colors_r
""".split()  # noqa: SIM905 - a word per op keeps the list short
"""The search order: every op with a generator, in the order the search tries them
(:data:`GENERATORS`). An op not ranked here follows every ranked one, in declaration
order; :data:`OPS` lists every op in this order too."""

FAMILIES: tuple[types.ModuleType, ...] = (
    geometry,
    colour,
    objects,
    shapes,
    crops,
    scale,
    parts,
    cells,
    gravity,
    moves,
    rays,
    diagonals,
    connect,
    lines,
    fill,
    regions,
    symmetry,
    mirrors,
    counting,
    periodic,
    rings,
    stamps,
    learned,
    marks,
    templates,
    copies,
    assembly,
    turned,
)
"""The family modules, in the order their functions go into standalone scripts."""

_DECLARED = declared()

OPS: dict[str, OpSpec] = {n: _DECLARED[n] for n in in_order(list(_DECLARED), RANK)}
"""Every op of the DSL by name, in :data:`RANK` order."""

GENERATED: tuple[OpSpec, ...] = tuple(s for s in OPS.values() if s.generator)
"""The ops with a generator, in the order the search tries them (ops absent here are
only reached by mutation or the search's finishers)."""

GENERATORS: dict[str, Generator] = {s.name: s.arguments for s in GENERATED}
"""Op name -> its inferred argument tuples for a state (none unless the op's ``when``
flags and ``only_if`` tests hold), in the order the search tries them."""
