"""Per-cell rules learned from the train pairs: a small decision tree over features of
each cell (its colour, its neighbours, its row and column, the objects and rays it is
part of) that gives the cell's output colour, either a fixed colour or the colour of
one of its features (keep the cell, take the colour above it, take the mirror cell's).

The other learned rules (``local_rule``, ``cells_map``, ``stamp``) are tables keyed by
one neighbourhood; a tree picks, from every feature, the few the train pairs need, so
one op covers rules that would need a table per neighbourhood kind. A tree is proposed
only when it generalises across the train pairs: one learned without a pair must give
that pair's output exactly, for every pair (on the task's inputs, a tree of two
leaves, one test and two outcomes, needs no such check)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from atlas_actors.arc.grids import Grid, components, obj_box, object_labels, ray_hits
from atlas_actors.arc.infer import Args, Ctx, closer_than_inputs
from atlas_actors.arc.registry import Case, K, W, op

CELL_FEATURES = (
    "colour",
    "up",
    "down",
    "left",
    "right",
    "up_left",
    "up_right",
    "down_left",
    "down_right",
    "row",
    "col",
    "row_from_bottom",
    "col_from_right",
    "row_mod2",
    "col_mod2",
    "row_mod3",
    "col_mod3",
    "region_size",
    "region_at_border",
    "fg_neighbours4",
    "fg_neighbours8",
    "ray_up",
    "ray_down",
    "ray_left",
    "ray_right",
    "ray_up_dist",
    "ray_down_dist",
    "ray_left_dist",
    "ray_right_dist",
    "fg_in_row",
    "fg_in_col",
    "enclosed",
    "colour_rank",
    "mirror_rows",
    "mirror_cols",
    "mirror_both",
    "mirror_diag",
    "object_size",
    "object_colours",
    "object_height",
    "object_width",
    "object_y",
    "object_x",
    "object_rank_largest",
    "object_rank_smallest",
    "between_h",
    "between_v",
    "object_major",
    "object_box_edge",
)
"""What :func:`cell_features` computes for each cell, column by column. Colours of cells
off the grid or absent are -1. ``up`` .. ``down_right``: the neighbours' colours;
``region_*``: the 4-connected region of the cell's colour (size up to 30, whether it
touches the border); ``fg_neighbours*``: neighbours that are not background;
``ray_*``: the first non-background colour seen looking that way, and how many steps
away (0 when none); ``fg_in_row``/``fg_in_col``: other non-background cells in the
cell's row and column; ``enclosed``: background that cannot reach the border;
``colour_rank``: 0 for the grid's commonest colour, 1 the next, ...; ``mirror_*``: the
colour of the cell mirrored top-bottom, left-right, both, and across the main diagonal
(square grids); ``object_*``: the 8-connected object of non-background cells (of any
colour) the cell is in: its size (up to 30), colours, box height and width, the cell's
place in the box, its size's rank from the largest and from the smallest (0 and -1 on
background), its commonest colour and whether the cell is on the edge of its box;
``between_h``/``between_v``: the colour seen both left and right (up and down) of the
cell when it is the same, else -1."""

COLOUR_FEATURES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 21, 22, 23, 24, 33, 34, 35, 36, 45, 46, 47)
"""The features whose values are colours: a leaf may copy one of them."""

EQUALS, AT_MOST, LEAF_COLOUR, LEAF_COPY = 0, 1, 2, 3
"""Node codes of a tree (:func:`tree_predict`), which is a flat list of ints in
preorder. A test ``[0, f, v]`` (feature ``f == v``) or ``[1, f, v]`` (``f <= v``) is
followed by the subtree for the cells that pass it, then the subtree for the rest;
a leaf ``[2, c]`` gives colour ``c``, ``[3, f]`` the colour of feature ``f``."""

MAX_TREE_DEPTH = 6
"""Tests on the way from the root to a leaf."""


def _at_border(lab: Grid) -> Grid:
    """Per label of ``lab`` (0 is none), whether some cell with it is on the border."""
    edge = np.zeros(int(lab.max()) + 1, dtype=bool)
    edge[np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]])] = True
    edge[0] = False
    return edge


def cell_features(g: Grid, bg: int) -> Grid:
    """One row of features (:data:`CELL_FEATURES`) per cell of ``g``, in reading order."""
    g = np.asarray(g, dtype=np.int64)
    h, w = g.shape
    p = np.pad(g, 1, constant_values=-1)
    cols: list[Grid] = [g]
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)):
        cols.append(p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w])
    yy, xx = np.mgrid[0:h, 0:w]
    cols += [yy, xx, h - 1 - yy, w - 1 - xx, yy % 2, xx % 2, yy % 3, xx % 3]
    lab = object_labels(g, 4, 1, -1)  # every cell, background too, by colour
    sizes = np.bincount(lab.ravel())
    cols += [np.minimum(sizes[lab], 30), _at_border(lab)[lab].astype(np.int64)]
    fg = (g != bg).astype(np.int64)
    q = np.pad(fg, 1)
    n4 = q[:-2, 1:-1] + q[2:, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:]
    cols += [n4, n4 + q[:-2, :-2] + q[:-2, 2:] + q[2:, :-2] + q[2:, 2:]]
    rays = [ray_hits(g, bg, k) for k in (1, 3, 0, 2)]  # up, down, left, right
    cols += [r[0] for r in rays] + [r[1] for r in rays]
    cols += [fg.sum(1, keepdims=True) - fg, fg.sum(0, keepdims=True) - fg]
    free = (g == bg).astype(np.int64)
    hl = object_labels(free, 4, 1, 0)
    cols.append(((hl > 0) & ~_at_border(hl)[hl]).astype(np.int64))
    vals, cnt = np.unique(g, return_counts=True)
    rank = np.zeros(10, dtype=np.int64)
    rank[vals[np.lexsort((vals, -cnt))]] = np.arange(len(vals))
    cols.append(rank[g])
    cols += [g[::-1, :], g[:, ::-1], g[::-1, ::-1], g.T if h == w else np.full_like(g, -1)]
    objs = components(g, 8, 0, bg)
    ol = object_labels(g, 8, 0, bg)
    n = len(objs)
    per_colour = np.bincount((ol * 10 + g).ravel(), minlength=(n + 1) * 10).reshape(n + 1, 10)
    per_colour[0] = 0  # background cells are in no object
    size = per_colour.sum(1)
    ncol = (per_colour > 0).sum(1)
    box = np.zeros((n + 1, 4), dtype=np.int64)  # top, bottom, left, right
    for i, o in enumerate(objs, 1):
        box[i] = obj_box(o)
    top, bottom, left, right = box.T
    bh = np.where(size > 0, bottom - top + 1, 0)
    bw = np.where(size > 0, right - left + 1, 0)
    distinct = np.unique(size[1:])[::-1]  # largest first
    big = np.full(n + 1, -1, dtype=np.int64)
    small = np.full(n + 1, -1, dtype=np.int64)
    if n:
        big[1:] = np.searchsorted(-distinct, -size[1:])
        small[1:] = len(distinct) - 1 - big[1:]
    inside = ol > 0
    cols += [
        np.minimum(size[ol], 30),
        ncol[ol],
        bh[ol],
        bw[ol],
        np.where(inside, yy - top[ol], 0),
        np.where(inside, xx - left[ol], 0),
        big[ol],
        small[ol],
    ]
    r_up, r_down, r_left, r_right = (r[0] for r in rays)
    cols += [np.where(r_left == r_right, r_left, -1), np.where(r_up == r_down, r_up, -1)]
    major = np.where(size > 0, np.argmax(per_colour, axis=1), -1)
    edge = inside & ((yy == top[ol]) | (yy == bottom[ol]) | (xx == left[ol]) | (xx == right[ol]))
    cols += [major[ol], edge.astype(np.int64)]
    return np.stack([np.asarray(c, dtype=np.int64).ravel() for c in cols], axis=1)


def check_tree(tree: list[int]) -> None:
    """Raise ``ValueError`` naming the first item where ``tree`` is not a whole tree
    (node codes: :data:`EQUALS`)."""
    nf = len(CELL_FEATURES)
    i, missing = 0, 1  # subtrees still to read
    while missing:
        if i >= len(tree):
            raise ValueError(f"invalid tree: it ends at item {i} with {missing} subtree(s) missing")
        code = tree[i]
        if code in (EQUALS, AT_MOST):
            if i + 2 >= len(tree) or not 0 <= tree[i + 1] < nf:
                raise ValueError(f"invalid tree: item {i + 1}: a test needs a feature 0..{nf - 1}")
            i, missing = i + 3, missing + 1
        elif code in (LEAF_COLOUR, LEAF_COPY):
            ok = i + 1 < len(tree) and (
                0 <= tree[i + 1] <= 9 if code == LEAF_COLOUR else tree[i + 1] in COLOUR_FEATURES
            )
            if not ok:
                wanted = "0..9" if code == LEAF_COLOUR else f"one of {list(COLOUR_FEATURES)}"
                raise ValueError(f"invalid tree: item {i + 1}: expected {wanted}")
            i, missing = i + 2, missing - 1
        else:
            raise ValueError(
                f"invalid tree: item {i}: node code {code}; expected 0 (==), 1 (<=), 2 (colour)"
                " or 3 (copy)"
            )
    if i != len(tree):
        raise ValueError(f"invalid tree: {len(tree) - i} item(s) after its last leaf")


def tree_predict(tree: list[int], x: Grid) -> Grid:
    """The colour the tree (node codes: :data:`EQUALS`) gives each row of features."""
    out = np.full(len(x), -1, dtype=np.int64)
    todo = [(0, np.arange(len(x)))]
    subtree_end: dict[int, int] = {}

    def end(i: int) -> int:  # index just past the subtree starting at i
        if i not in subtree_end:
            subtree_end[i] = i + 2 if tree[i] > AT_MOST else end(end(i + 3))
        return subtree_end[i]

    while todo:
        i, rows = todo.pop()
        if tree[i] == LEAF_COLOUR:
            out[rows] = tree[i + 1]
        elif tree[i] == LEAF_COPY:
            out[rows] = x[rows, tree[i + 1]]
        else:
            f, v = tree[i + 1], tree[i + 2]
            col = x[rows, f]
            yes = col == v if tree[i] == EQUALS else col <= v
            todo.append((i + 3, rows[yes]))
            todo.append((end(i + 3), rows[~yes]))
    return out


def _hits(x: Grid, y: Grid) -> Grid:
    """Per cell, which leaves give its target colour: keep the cell, then the colours
    0-9, then a copy of each other colour feature."""
    copy = x[:, list(COLOUR_FEATURES)] == y[:, None]
    fixed = y[:, None] == np.arange(10)[None, :]
    return np.concatenate([copy[:, :1], fixed, copy[:, 1:]], axis=1)


def _leaf(rule: int) -> list[int]:
    if rule == 0:
        return [LEAF_COPY, 0]
    if rule <= 10:
        return [LEAF_COLOUR, rule - 1]
    return [LEAF_COPY, COLOUR_FEATURES[rule - 10]]


def _spread(side: Grid, total: Grid) -> Grid:
    """Per candidate test (every index but the last axis), the entropy (times the cell
    count) of the cells' outcomes (unchanged, or the colour they become) on the two
    sides, summed."""
    out = np.zeros(side.shape[:-1])
    for part in (side.astype(np.float64), (total - side).astype(np.float64)):
        n = part.sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out += np.where(n > 0, n * np.log(np.maximum(n, 1)), 0.0)
            out -= np.where(part > 0, part * np.log(np.maximum(part, 1)), 0.0).sum(-1)
    return np.round(out, 9)


_COPIED = np.isin(np.arange(len(CELL_FEATURES)), COLOUR_FEATURES)
"""Which features are colours (no ``<=`` test on them)."""


def _best_split(x: Grid, hits: Grid) -> tuple[int, int, int] | None:
    """The test that leaves the fewest cells wrong when each side takes its best leaf.
    When no test fixes a cell, the one that best separates the cells' outcomes (so a
    rule of two tests, each of which alone fixes nothing, is still found). Ties:
    equality tests first, then the lower feature, then the lower value.

    Every test at once: per feature and value, the cells of each leaf's target and of
    each outcome are counted in one pass (feature values are small integers)."""
    n, nr = hits.shape
    nf = x.shape[1]
    total = hits.sum(0)
    outcome = np.where(hits[:, 0], 10, np.argmax(hits[:, 1:11], axis=1))
    outcomes = np.bincount(outcome, minlength=11)
    now = n - int(total.max())  # cells wrong with no test
    lo = int(x.min())
    nv = int(x.max()) - lo + 1
    cell = (x - lo) + np.arange(nf)[None, :] * nv  # (feature, value) of each cell
    rows, rules = np.nonzero(hits)
    cnt = np.bincount((cell[rows] * nr + rules[:, None]).ravel(), minlength=nf * nv * nr).reshape(
        nf, nv, nr
    )
    by_outcome = np.bincount(
        (cell * 11 + outcome[:, None]).ravel(), minlength=nf * nv * 11
    ).reshape(nf, nv, 11)
    seen = by_outcome.sum(2) > 0  # values some cell has
    usable = seen.sum(1) >= 2
    last = nv - 1 - np.argmax(seen[:, ::-1], axis=1)  # each feature's largest value
    keys = []
    for kind, side, side_out, ok in (
        (EQUALS, cnt, by_outcome, seen & usable[:, None]),
        (
            AT_MOST,
            np.cumsum(cnt, axis=1),
            np.cumsum(by_outcome, axis=1),
            seen & (usable & ~_COPIED)[:, None] & (np.arange(nv)[None, :] < last[:, None]),
        ),
    ):
        f, v = np.nonzero(ok)
        if not len(f):
            continue
        s = side[f, v]
        err = n - s.max(1) - (total - s).max(1)
        spread = _spread(side_out[f, v], outcomes)
        spread = np.where(err >= now, spread, 0.0)  # only among tests that fix no cell
        keys.append((err, spread, np.full(len(f), kind), f, v + lo))
    if not keys:
        return None
    err, spread, kinds, fs, vs = (np.concatenate(k) for k in zip(*keys, strict=True))
    j = int(np.lexsort((vs, fs, kinds, spread, err))[0])
    return int(kinds[j]), int(fs[j]), int(vs[j])


def _leaves(tree: list[int]) -> int:
    """A whole tree of L leaves has L - 1 tests: 2L + 3(L - 1) items."""
    return (len(tree) + 3) // 5


def fit_tree(
    x: Grid, hits: Grid, depth: int = 0, max_leaves: list[int] | None = None
) -> list[int] | None:
    """A tree (node codes: :data:`EQUALS`) that gives every row its target, from
    :func:`_hits`, or None when :data:`MAX_TREE_DEPTH` tests do not suffice, or when it
    would have more leaves than ``max_leaves[0]`` (a one-item list the fit counts down:
    a fit that will be refused for its size stops as soon as it is too big)."""
    counts = hits.sum(0)
    rule = int(np.argmax(counts))
    if counts[rule] == len(hits):
        if max_leaves is not None:
            max_leaves[0] -= 1
            if max_leaves[0] < 0:
                return None
        return _leaf(rule)
    if depth >= MAX_TREE_DEPTH:
        return None
    split = _best_split(x, hits)
    if split is None:
        return None
    kind, f, v = split
    yes = x[:, f] == v if kind == EQUALS else x[:, f] <= v
    a = fit_tree(x[yes], hits[yes], depth + 1, max_leaves)
    b = None if a is None else fit_tree(x[~yes], hits[~yes], depth + 1, max_leaves)
    return None if a is None or b is None else [kind, f, v, *a, *b]


MAX_TREE_LEAVES = 13
"""The largest tree :func:`g_cell_tree` proposes (62 items): a larger one fits the
train pairs by listing their cells."""


def g_cell_tree(ctx: Ctx) -> Iterator[Args]:
    """The tree learned from every train pair, when each pair is also given by the tree
    learned without it (or, on the inputs, the tree has two leaves), and every test cell
    gets a colour (run on the states :func:`cell_tree`'s declaration allows)."""
    if ctx.n < 2:
        return
    xs = [cell_features(s, ctx.bg) for s in ctx.train]
    ys = [t.ravel() for t in ctx.targets]
    hits = [_hits(x, y) for x, y in zip(xs, ys, strict=True)]
    tree = fit_tree(np.concatenate(xs), np.concatenate(hits), max_leaves=[MAX_TREE_LEAVES])
    if tree is None:
        return
    if _leaves(tree) > 2 or ctx.depth:  # one op deep, a single test may only patch the op
        for i in range(ctx.n):  # learned without pair i, it must give pair i
            rest = [j for j in range(ctx.n) if j != i]
            t = fit_tree(
                np.concatenate([xs[j] for j in rest]), np.concatenate([hits[j] for j in rest])
            )
            if t is None or not np.array_equal(tree_predict(t, xs[i]), ys[i]):
                return
    for s in ctx.states[ctx.n :]:
        out = tree_predict(tree, cell_features(s, ctx.bg))
        if (out < 0).any():
            return
    yield (tree, ctx.bg)


@op(
    params=(K.INTS, K.COLOR),
    generator=g_cell_tree,
    when=W.CHANGED | W.NOT_TINY,
    # on the inputs, or one op from them when that op brought the states nearer their
    # targets (cropped or scaled to the targets' shapes, or more cells right), so that a
    # tree can finish a crop or a symmetry; other states one op deep are left alone
    # (a tree costs a fit per pair)
    only_if=lambda ctx: ctx.depth == 0 or closer_than_inputs(ctx),
    # cells of colour 1 become 2, the rest are kept
    cases=[Case(([0, 0, 1, 2, 2, 3, 0], 0), "100 011", "200 022")],
)
def cell_tree(g: Grid, tree: list[int], bg: int) -> Grid:
    """Each cell coloured by a decision tree over its features (:func:`cell_features`);
    the tree is learned from the train pairs."""
    nodes = list(tree)
    check_tree(nodes)
    out = tree_predict(nodes, cell_features(g, bg))
    if (out < 0).any() or (out > 9).any():
        raise ValueError("the tree copies a colour some cell does not have")
    return out.reshape(g.shape).astype(g.dtype)
