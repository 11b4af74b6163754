"""The enumeration API: contract, ordering, filters, determinism, composition, patches,
the catalogue, and smoke tests (bugs injected into functions of our own are undone)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

import atlas_actors
from atlas_actors.swe.repair.analysis.ast_keys import normalised_key
from atlas_actors.swe.repair.catalogue import CATALOGUE, FAMILIES, family_names
from atlas_actors.swe.repair.operators import generate_edits
from atlas_actors.swe.repair.patch import CandidateEdit, combine_patches, remap_suspicious

Generate = Callable[..., list[CandidateEdit]]
Check = Callable[..., None]
Apply = Callable[[str, str], str]

EXAMPLES = Path(atlas_actors.__file__).parent / "swe" / "examples"

SEARCH = """
def search(items, target):
    # Binary search over a sorted list; -1 when absent.
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target:
            return mid
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
"""


# -- the contract on whole files ---------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["plain", "crlf", "no final newline", "tabs"])
def test_every_candidate_of_odd_syntax_keeps_the_contract(
    data_dir: Path, check_edits: Check, variant: str
) -> None:
    source = (data_dir / "odd_syntax.py.txt").read_text()
    if variant == "crlf":
        source = source.replace("\n", "\r\n")
    elif variant == "no final newline":
        source = source.rstrip("\n")
    elif variant == "tabs":
        source = source.replace("    ", "\t")
    lines = dict.fromkeys(range(1, source.count("\n") + 2), 1.0)
    edits = generate_edits(source, "pkg/odd.py", lines)
    assert len(edits) > 1000
    check_edits(source, edits, every=3 if variant == "plain" else 9)
    assert len({e.family for e in edits}) >= 28


@pytest.mark.slow
@pytest.mark.parametrize("name", ["datecalc", "exprcalc", "intervals", "textkit"])
def test_every_candidate_of_the_bundled_examples_keeps_the_contract(
    check_edits: Check, name: str
) -> None:
    for path in sorted((EXAMPLES / name / "repo").rglob("*.py.txt")):
        source = path.read_text()
        lines = dict.fromkeys(range(1, source.count("\n") + 2), 1.0)
        edits = generate_edits(source, path.name.removesuffix(".txt"), lines)
        check_edits(source, edits, every=4)


@pytest.mark.parametrize(
    ("name", "path", "line", "bug", "fix", "label"),
    [
        ("textkit", "textkit/wrap.py", 18, "< width:", "<= width:", "< -> <="),
        ("intervals", "intervals/core.py", 21, "b.end or b.start", "b.end and b.start",
         "or -> and"),
    ],
)  # fmt: skip
def test_bundled_single_edit_bugs_are_among_the_candidates(
    name: str, path: str, line: int, bug: str, fix: str, label: str
) -> None:
    source = (EXAMPLES / name / "repo" / f"{path}.txt").read_text()
    assert bug in source
    edits = generate_edits(source, path, {line: 1.0})
    fixed = [e for e in edits if e.new_text == source.replace(bug, fix)]
    assert len(fixed) == 1
    assert fixed[0].label == f"{label} at {path}:{line}"


def test_git_apply_takes_the_diffs(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    source = (EXAMPLES / "textkit" / "repo" / "textkit" / "wrap.py.txt").read_text()
    edits = generate_edits(source, "textkit/wrap.py", {18: 1.0, 19: 0.5, 40: 0.2})
    picks = [edits[0], edits[len(edits) // 2], edits[-1]]
    picks += [e for e in edits if e.family in ("stmt_insert", "stmt_delete", "guard_insert")][:3]
    for k, edit in enumerate(picks):
        repo = tmp_path / str(k)
        (repo / "textkit").mkdir(parents=True)
        (repo / "textkit" / "wrap.py").write_text(source)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / "fix.patch").write_text(edit.diff)
        subprocess.run(["git", "apply", "fix.patch"], cwd=repo, check=True)
        assert (repo / "textkit" / "wrap.py").read_text() == edit.new_text, edit.label


# -- ordering, priors, filters -----------------------------------------------------------
def test_priors_are_family_prior_times_suspiciousness(generate: Generate) -> None:
    edits = generate(SEARCH, {5: 0.9, 9: 0.4})
    for edit in edits:
        assert edit.prior == pytest.approx(FAMILIES[edit.family].prior * edit.suspiciousness)
        assert edit.suspiciousness in (0.9, 0.4)


def test_priors_order_by_suspiciousness_then_family(generate: Generate) -> None:
    edits = generate(SEARCH, {6: 1.0, 9: 0.5})
    position = {id(e): k for k, e in enumerate(edits)}
    for family in {e.family for e in edits}:
        ours = [e for e in edits if e.family == family]
        high = [position[id(e)] for e in ours if e.suspiciousness == 1.0]
        low = [position[id(e)] for e in ours if e.suspiciousness == 0.5]
        if high and low:
            assert max(high) < min(low), family
    order = {f.name: k for k, f in enumerate(CATALOGUE)}
    for line in (6, 9):
        families = [e.family for e in edits if e.line == line]
        ranks = [order[f] for f in dict.fromkeys(families)]
        assert ranks == sorted(ranks), line


def test_ranks_number_each_familys_candidates_on_a_line(generate: Generate) -> None:
    edits = generate(SEARCH, {9: 1.0})
    seen: dict[tuple[int, str], int] = {}
    for edit in edits:
        key = (edit.line, edit.family)
        assert edit.rank == seen.get(key, 0)
        seen[key] = edit.rank + 1


def test_same_input_same_list(generate: Generate) -> None:
    lines = {5: 1.0, 6: 0.7, 9: 0.7, 11: 0.3}
    first = generate(SEARCH, lines)
    again = generate(SEARCH, dict(reversed(list(lines.items()))))
    assert [(e.label, e.key, e.prior, e.diff) for e in first] == [
        (e.label, e.key, e.prior, e.diff) for e in again
    ]


def test_only_suspicious_statements_are_edited(generate: Generate) -> None:
    edits = generate(SEARCH, {9: 1.0, 10: 0.0, 99: 1.0})
    assert edits
    assert {e.line for e in edits} == {9}
    assert generate(SEARCH, {1: 1.0, 2: 1.0}) == []  # a def line and a comment line
    assert generate(SEARCH, {}) == []


def test_a_multi_line_statement_is_edited_from_any_of_its_lines(generate: Generate) -> None:
    source = """
    def total(xs):
        return sum(
            x * 2
            for x in xs
        )
    """
    from_first = generate(source, {2: 1.0})
    from_middle = generate(source, {3: 1.0})
    assert [e.key for e in from_first] == [e.key for e in from_middle]
    assert any(e.line == 3 and "* -> //" in e.label for e in from_first)


def test_families_and_max_per_line(generate: Generate) -> None:
    edits = generate(SEARCH, {8: 1.0, 9: 1.0}, families=["comparison_operator", "stmt_delete"])
    assert {e.family for e in edits} == {"comparison_operator", "stmt_delete"}
    every = generate(SEARCH, {9: 1.0, 11: 1.0})
    capped = generate(SEARCH, {9: 1.0, 11: 1.0}, max_per_line=3)
    kept: dict[int, int] = {}
    expected = []
    for edit in every:
        if kept.get(edit.line, 0) < 3:
            kept[edit.line] = kept.get(edit.line, 0) + 1
            expected.append(edit.key)
    assert [e.key for e in capped] == expected
    assert sorted(kept.values()) == [3, 3]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"families": ["comparison_operator", "no_such_family"]}, "families"),
        ({"max_per_line": 0}, "max_per_line"),
        ({"max_per_line": 2.5}, "max_per_line"),
        ({"suspicious": {3: -1.0}}, "suspicious"),
        ({"suspicious": {3: float("nan")}}, "suspicious"),
        ({"suspicious": {"3": 1.0}}, "suspicious"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict[str, object], field: str) -> None:
    suspicious = kwargs.pop("suspicious", {3: 1.0})
    with pytest.raises(ValueError, match=field):
        generate_edits(SEARCH, "m.py", suspicious, **kwargs)  # type: ignore[arg-type]


def test_text_that_does_not_parse_gives_nothing() -> None:
    assert generate_edits("def f(:\n    return 1\n", "m.py", {1: 1.0, 2: 1.0}) == []
    assert generate_edits("x = 1\ry = 2\n", "m.py", {1: 1.0}) == []


# -- keys --------------------------------------------------------------------------------
def test_normalised_key_ignores_formatting_comments_and_parentheses() -> None:
    a = "def f(x):\n    return (x+1)  # one\n"
    b = "def f( x ):\n    # two\n    return x + 1\n"
    c = "def f(x):\n    return x + 2\n"
    assert normalised_key(a) == normalised_key(b) != normalised_key(c)


def test_equivalent_edits_are_one_candidate(generate: Generate) -> None:
    # Dropping ``not`` (unary_operator) and negating the condition (condition_negate)
    # give the same file: one candidate, from the family with the higher prior.
    edits = generate(
        """
        def f(x):
            if not x:
                return 1
        """,
        {2: 1.0},
        families=["unary_operator", "condition_negate"],
    )
    dropped = [e for e in edits if e.new_text == "def f(x):\n    if x:\n        return 1\n"]
    assert len(dropped) == 1
    assert dropped[0].family == "unary_operator"


# -- composition -------------------------------------------------------------------------
CLAMP = """
def clamp_all(values, lo, hi):
    out = []
    for v in values:
        if v < lo:
            out.append(lo)
        elif v > hi:
            out.append(hi)
        else:
            out.append(v)
    return out
"""


def test_two_edits_compose_at_depth_two(apply_diff: Apply, dedent: Callable[[str], str]) -> None:
    fixed = dedent(CLAMP)
    buggy = fixed.replace("out.append(lo)", "out.append(hi)").replace("v > hi", "v < hi")
    suspicious = {5: 1.0, 6: 0.8}
    first = generate_edits(buggy, "m.py", suspicious)
    assert all(e.new_text != fixed for e in first)  # one edit cannot fix both
    step = next(
        e for e in first if e.new_text == buggy.replace("out.append(hi)", "out.append(lo)", 1)
    )
    assert step.family == "identifier_replace"
    second = generate_edits(step.new_text, "m.py", remap_suspicious(step, suspicious))
    done = [e for e in second if e.new_text == fixed]
    assert [e.family for e in done] == ["comparison_operator"]
    patch = combine_patches([step, done[0]])
    assert apply_diff(buggy, patch) == fixed


def test_combine_patches_merges_independent_edits_and_files(apply_diff: Apply) -> None:
    source = "def f(a, b):\n    x = a + 1\n    y = b - 1\n    z = 0\n    return x * y\n"
    edits = generate_edits(source, "m.py", {2: 1.0, 5: 1.0}, families=["arithmetic_operator"])
    a = next(e for e in edits if e.label.startswith("+ -> -"))
    b = next(e for e in edits if e.label.startswith("* -> //"))
    merged = combine_patches([b, a])
    assert apply_diff(source, merged) == source.replace("a + 1", "a - 1").replace("x * y", "x // y")
    assert merged.count("diff --git") == 1
    other = generate_edits(source, "n.py", {3: 1.0})[0]
    both = combine_patches([other, a])
    assert both.count("diff --git") == 2
    assert both.index("a/m.py") < both.index("a/n.py")
    clash = next(e for e in edits if e.line == 2 and e.key != a.key)
    with pytest.raises(ValueError, match="overlap"):
        combine_patches([a, clash])
    unrelated = generate_edits(a.new_text.replace("z = 0", "z = 1"), "m.py", {5: 1.0})[0]
    with pytest.raises(ValueError, match="neither"):
        combine_patches([a, unrelated])


def test_remap_suspicious_follows_inserted_lines(generate: Generate) -> None:
    edits = generate(SEARCH, {9: 1.0, 11: 0.5}, families=["stmt_insert"])
    before = next(e for e in edits if e.line == 9 and "before" in e.label)
    remapped = remap_suspicious(before, {9: 1.0, 11: 0.5, 2: 0.1})
    assert remapped == {2: 0.1, 9: 1.0, 10: 1.0, 12: 0.5}


# -- smoke: an operator undoes its own kind of mutation -----------------------------------
INJECTED = [
    ("comparison_operator", "while lo <= hi:", "while lo < hi:"),
    ("arithmetic_operator", "(lo + hi) // 2", "(lo + hi) / 2"),
    ("off_by_one_constant", "lo = mid + 1", "lo = mid + 2"),
    ("identifier_replace", "hi = mid - 1", "lo = mid - 1"),
    ("return_value", "return -1", "return None"),
    ("stmt_delete", "            return mid\n", "            return mid\n            mid += 1\n"),
    ("off_by_one_index", "if items[mid] < target", "if items[mid + 1] < target"),
    ("comparison_operator", "if items[mid] == target", "if items[mid] != target"),
]


@pytest.mark.parametrize(("family", "good", "bad"), INJECTED)
def test_injected_bug_is_undone_by_its_inverse_family(
    check_edits: Check, dedent: Callable[[str], str], family: str, good: str, bad: str
) -> None:
    original = dedent(SEARCH)
    assert good in original
    buggy = original.replace(good, bad, 1)
    last = bad.strip().splitlines()[-1].strip()
    line = next(k for k, text in enumerate(buggy.splitlines(), 1) if last in text)
    alone = generate_edits(buggy, "search.py", {line: 1.0}, families=[family])
    check_edits(buggy, alone)
    assert any(e.new_text == original for e in alone), family
    every = generate_edits(buggy, "search.py", {line: 1.0})
    assert any(e.new_text == original for e in every)


# -- the catalogue -----------------------------------------------------------------------
def test_catalogue_is_frozen_and_documented() -> None:
    assert len(CATALOGUE) == len(FAMILIES) == len(set(family_names())) >= 30
    assert sum(f.prior for f in CATALOGUE) == pytest.approx(1.0)
    assert [f.prior for f in CATALOGUE] == sorted((f.prior for f in CATALOGUE), reverse=True)
    for family in CATALOGUE:
        assert family.description and family.source and family.prior > 0
        assert "\n" not in family.description
    with pytest.raises(TypeError):
        FAMILIES["new"] = CATALOGUE[0]  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        CATALOGUE[0].prior = 1.0  # type: ignore[misc]
