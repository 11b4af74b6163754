"""Edit operators for offline program repair: every single edit of a file's suspicious lines
that the catalogue's families propose, checked, keyed and ranked.

API
---
``generate_edits(source, path, suspicious, *, families=None, max_per_line=None,
hints=None)`` returns
a list of :class:`~atlas_actors.swe.repair.patch.CandidateEdit`:

- ``source`` is the file's text (any text: the original, or one an edit produced, which is
  how two edits compose: call again on ``edit.new_text`` with
  :func:`~atlas_actors.swe.repair.patch.remap_suspicious`); ``path`` is the file's path
  relative to the repository root, used in labels and diffs.
- ``suspicious`` maps 1-based lines to suspiciousness (fault localisation's scores, any
  non-negative scale). A statement is edited when one of its lines (of its header, for a
  compound statement) has a score above zero; its suspiciousness is the highest such
  score. Lines outside the file are ignored.
- ``families`` restricts the families (names of
  :data:`~atlas_actors.swe.repair.catalogue.FAMILIES`); ``max_per_line`` keeps at most
  that many candidates per line, the best first.

Every candidate compiles, differs from ``source`` by its normalised AST, differs from
every other candidate of the call, and changes only the bytes of its edit. The list is
sorted by ``prior`` (highest first), then suspiciousness, then catalogue order of the
family, then line, then the order the family proposes its variants in (most plausible
first); the same input gives the same list. A text that does not parse (or that has
carriage returns not followed by a newline) gives no candidates.

Prior
-----
``prior = FAMILIES[family].prior * suspiciousness``: the family's share of real fixes
(see :mod:`~atlas_actors.swe.repair.catalogue`) times how suspicious the edited statement
is. ``rank`` numbers the candidates of one family on one line, so a consumer that wants
a per-candidate probability can spread the family's prior over its variants.

How it stays fast
-----------------
The file is parsed once with ``ast`` (scopes, names, literals, donors, and a Merkle hash
of its statements) and only the top-level statements that hold suspicious lines are
parsed with libcst. A candidate is a splice of the original text; it is checked and keyed
by parsing just the statement it changes (inside stubs of its enclosing ``def``/``class``/
loop, so ``return``, ``break`` and ``await`` are checked in context) and re-hashing that
statement's ancestors. Statement insertions and keyword edits are also ``compile()``-d in
that stub; chunks with ``global``, ``nonlocal`` or ``yield`` compile the whole chunk.
``tests/swe/repair/test_performance.py`` exercises it on a 313-line file (the figures are
in docs/benchmarks.md, "Offline repair").

``generate_edits`` is plain synchronous CPU work with no shared state: call it from a
worker thread or process in async code.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Collection, Mapping

from atlas_actors.swe.repair.analysis.ast_keys import DigestTree, header_of, stmt_digest
from atlas_actors.swe.repair.analysis.file_facts import Facts
from atlas_actors.swe.repair.analysis.source_text import Source
from atlas_actors.swe.repair.analysis.statement_map import StmtInfo, map_statements
from atlas_actors.swe.repair.catalogue import CATALOGUE, FAMILIES
from atlas_actors.swe.repair.families.missing import MISSING_FAMILIES
from atlas_actors.swe.repair.families.names_calls import EXPRESSION_FAMILIES
from atlas_actors.swe.repair.families.statement_view import Raw, Unit
from atlas_actors.swe.repair.families.statements import STATEMENT_FAMILIES
from atlas_actors.swe.repair.hints import RepairHints
from atlas_actors.swe.repair.patch import CandidateEdit, edit_diff, split_lines

__all__ = ["CandidateEdit", "generate_edits"]

_IMPLEMENTATIONS = {**EXPRESSION_FAMILIES, **STATEMENT_FAMILIES, **MISSING_FAMILIES}
_ORDER = {family.name: k for k, family in enumerate(CATALOGUE)}

if set(_IMPLEMENTATIONS) != set(FAMILIES):  # pragma: no cover - a wiring error
    raise RuntimeError("catalogue and implementations disagree")


def _check_arguments(
    suspicious: Mapping[int, float],
    families: Collection[str] | None,
    max_per_line: int | None,
) -> tuple[dict[int, float], list[str]]:
    if families is None:
        chosen = [f.name for f in CATALOGUE]
    else:
        if isinstance(families, str):
            families = [families]
        unknown = sorted(set(families) - set(FAMILIES))
        if unknown:
            raise ValueError(
                f"families: unknown {', '.join(unknown)}; allowed: {', '.join(FAMILIES)}"
            )
        chosen = [f.name for f in CATALOGUE if f.name in set(families)]
    if max_per_line is not None and (
        isinstance(max_per_line, bool) or not isinstance(max_per_line, int) or max_per_line < 1
    ):
        raise ValueError(f"max_per_line: must be None or an integer >= 1, not {max_per_line!r}")
    lines: dict[int, float] = {}
    for key, score in suspicious.items():
        try:
            line = operator.index(key)
        except TypeError:
            line = None
        if line is None or isinstance(key, bool):
            raise ValueError(f"suspicious: line numbers must be integers, not {key!r}")
        value = float(score)
        if not math.isfinite(value) or value < 0:
            raise ValueError(
                f"suspicious: scores must be finite and >= 0, not {score!r} (line {line})"
            )
        if value > 0:
            lines[line] = value
    return lines, chosen


def _susp(lines: Mapping[int, float], first: int, last: int) -> float:
    if last - first < len(lines):
        return max((lines.get(n, 0.0) for n in range(first, last + 1)), default=0.0)
    return max((v for n, v in lines.items() if first <= n <= last), default=0.0)


class _Checker:
    """Checks and keys raw edits by parsing the fragment each one changes."""

    def __init__(self, src: Source, path: str, digests: DigestTree, tree: ast.Module) -> None:
        self.src = src
        self.path = path
        self.digests = digests
        self.future_end = max(
            (
                k
                for k, stmt in enumerate(tree.body)
                if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
            ),
            default=-1,
        )
        """Index of the module's last ``from __future__`` import: nothing goes before it."""

    def key(self, raw: Raw) -> str | None:
        """The normalised key of the edited file, or ``None`` if the edit is invalid."""
        info = raw.info
        text = self.src.text
        if raw.kind == "stmts":
            assert raw.snippet is not None
            if info.parent is self.digests.root and raw.i <= self.future_end:
                return None
            body = raw.snippet
        else:
            start = self.src.line_start(info.first)
            stop = self.src.line_end(info.head_last if raw.kind == "header" else info.last)
            if not start <= raw.start <= raw.end <= stop:
                return None
            body = text[start : raw.start] + raw.text + text[raw.end : stop]
            if info.is_elif:
                cut = len(info.indent)
                if not body.startswith("elif", cut):
                    return None
                body = body[:cut] + body[cut + 2 :]
            if raw.kind == "header":
                if not body.endswith("\n"):
                    body += "\n"
                body += f"{info.indent} pass\n"
        stmts: list[ast.stmt] = []
        module: ast.Module | None = None
        if body.strip():
            tree = self._parse(info, body)
            if tree is None:
                return None
            module, stmts = tree
        elif raw.kind != "stmts":
            return None
        whole = info.risky or (raw.kind == "stmts" and "yield" in body)
        if (raw.compile or whole) and not self._compiles(raw, module, whole):
            return None
        if raw.kind == "header":
            if len(stmts) != 1 or type(stmts[0]) is not type(info.asts[0]):
                return None
            assert info.dnode is not None
            digest = info.dnode.reheaded(header_of(stmts[0]))
        else:
            if raw.kind != "stmts" and not stmts:
                return None
            i, j = (raw.i, raw.j) if raw.kind == "stmts" else (info.start, info.stop)
            new = [stmt_digest(s) for s in stmts]
            digest = info.parent.replaced(info.field, i, j, new)
        return digest.hex()

    @staticmethod
    def _parse(info: StmtInfo, body: str) -> tuple[ast.Module, list[ast.stmt]] | None:
        frames = info.frames
        lead = frames[0][0] if frames else info.indent
        parts = []
        depth = len(frames)
        if lead:
            parts.append("if 1:\n")
            depth += 1
        parts.extend(f"{indent}{stub}\n" for indent, stub in frames)
        parts.append(body)
        try:
            module = ast.parse("".join(parts))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        stmts: list[ast.stmt] = module.body
        for _ in range(depth):
            stmts = stmts[0].body  # type: ignore[attr-defined]
        return module, stmts

    def _compiles(self, raw: Raw, module: ast.Module | None, whole: bool) -> bool:
        """Compile the fragment in its stub, or (``whole``) the top-level statement it is
        in: global/nonlocal declarations and generators need all of their function."""
        try:
            if whole:
                first, last = raw.info.group
                start = self.src.line_start(first)
                stop = self.src.line_end(last)
                text = self.src.text
                compile(
                    text[start : raw.start] + raw.text + text[raw.end : stop],
                    self.path,
                    "exec",
                    dont_inherit=True,
                )
            elif module is not None:
                compile(module, self.path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return True


def generate_edits(
    source: str,
    path: str,
    suspicious: Mapping[int, float],
    *,
    families: Collection[str] | None = None,
    max_per_line: int | None = None,
    hints: RepairHints | None = None,
) -> list[CandidateEdit]:
    """Candidate single edits of ``source`` at its suspicious lines, best first.

    See the module docstring for the contract; ``ValueError`` names a bad argument.
    ``hints`` (the issue's constants and messages, the failing tests' exceptions) feed
    the families that synthesise what the file does not hold; without them those
    families propose nothing.
    """
    lines, chosen = _check_arguments(suspicious, families, max_per_line)
    if not lines or "\r" in source.replace("\r\n", ""):
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    src = Source(source)
    facts = Facts(src, tree)
    digests = DigestTree(tree)
    raws: list[Raw] = []
    for info in map_statements(src, facts, digests, tree, lines):
        susp = _susp(lines, info.first, info.head_last)
        stmt = info.asts[0]
        if isinstance(stmt, ast.Try) and "handler_widen" in chosen:
            # what its except clauses catch bears on its body's lines and its except lines
            heads = [h.lineno for h in stmt.handlers]
            body = _susp(lines, info.first, heads[0] - 1) if heads else susp
            whole = max([body, *(lines.get(n, 0.0) for n in heads)])
            if whole > 0:
                _IMPLEMENTATIONS["handler_widen"](Unit(src, facts, info, whole, raws, hints))
        if susp <= 0:
            continue
        unit = Unit(src, facts, info, susp, raws, hints)
        for name in chosen:
            if name != "handler_widen":
                _IMPLEMENTATIONS[name](unit)
    return _finish(src, path, tree, digests, raws, max_per_line)


def _finish(
    src: Source,
    path: str,
    tree: ast.Module,
    digests: DigestTree,
    raws: list[Raw],
    max_per_line: int | None,
) -> list[CandidateEdit]:
    raws.sort(
        key=lambda r: (-FAMILIES[r.family].prior * r.susp, -r.susp, _ORDER[r.family], r.line, r.seq)
    )
    checker = _Checker(src, path, digests, tree)
    original_key = digests.key
    seen_keys = {original_key}
    seen_splices: set[tuple[int, int, str]] = set()
    per_line: dict[int, int] = {}
    ranks: dict[tuple[int, str], int] = {}
    out: list[CandidateEdit] = []
    text = src.text
    old_lines = split_lines(text)
    for raw in raws:
        if max_per_line is not None and per_line.get(raw.line, 0) >= max_per_line:
            continue
        splice = (raw.start, raw.end, raw.text)
        if splice in seen_splices:
            continue
        seen_splices.add(splice)
        key = checker.key(raw)
        if key is None or key in seen_keys:
            continue
        seen_keys.add(key)
        per_line[raw.line] = per_line.get(raw.line, 0) + 1
        rank = ranks.get((raw.line, raw.family), 0)
        ranks[(raw.line, raw.family)] = rank + 1
        new_text = text[: raw.start] + raw.text + text[raw.end :]
        # The changed block runs to the line holding the splice's end: when the splice
        # ends at a line start, that line joins the edited one unless the text ends with
        # a newline (then it is unchanged and drops out of the diff).
        first_line = src.line_of(raw.start)
        last_line = min(src.line_of(raw.end), src.nlines)
        segment = (
            text[src.line_start(first_line) : raw.start]
            + raw.text
            + text[raw.end : src.line_end(last_line)]
        )
        diff, hunk = edit_diff(path, old_lines, first_line, last_line, split_lines(segment))
        out.append(
            CandidateEdit(
                path=path,
                family=raw.family,
                line=raw.line,
                label=f"{raw.what} at {path}:{raw.line}",
                prior=FAMILIES[raw.family].prior * raw.susp,
                suspiciousness=raw.susp,
                rank=rank,
                key=key,
                hunk=hunk,
                new_text=new_text,
                diff=diff,
                original=text,
            )
        )
    return out
