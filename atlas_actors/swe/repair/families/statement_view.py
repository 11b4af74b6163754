"""What an operator family sees of one suspicious statement, and how it emits edits.

A family never builds a file: it emits a *raw edit*, a splice of the original text
(offsets ``start:end`` replaced by ``text``) plus what the edit replaces in the AST (the
statement, its header, or a range of sibling statements), so the generator can check and
key the edit by parsing that fragment alone.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import libcst as cst

from atlas_actors.swe.repair.analysis.cst_sites import Mini, Site, prec, walk_statement
from atlas_actors.swe.repair.analysis.file_facts import Facts, Scope
from atlas_actors.swe.repair.analysis.source_text import Source
from atlas_actors.swe.repair.analysis.statement_map import StmtInfo
from atlas_actors.swe.repair.hints import RepairHints

__all__ = ["Raw", "Unit", "ast_prec", "fit", "short"]

Kind = Literal["line", "header", "whole", "stmts"]


@dataclass(slots=True, eq=False)
class Raw:
    """An edit before it is checked: a splice of the original plus its AST scope."""

    family: str
    line: int
    what: str
    start: int
    end: int
    text: str
    info: StmtInfo
    kind: Kind
    """``line``: inside a simple statement line; ``header``: inside a compound statement's
    header; ``whole``: inside a one-line compound statement; ``stmts``: sibling statements
    ``i:j`` of ``info``'s block become ``snippet``."""
    i: int
    j: int
    snippet: str | None
    compile: bool
    """Needs a full ``compile()`` (context-dependent errors: keywords, flow statements)."""
    susp: float
    seq: int


_CONTEXTUAL = re.compile(r"\b(return|yield|await|async|break|continue|global|nonlocal)\b")
"""Words whose statements compile only in some contexts: fragments holding them are
compiled in their context stub, not only parsed."""


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def fit(text: str, have: int, need: int) -> str:
    """``text`` (an expression binding as tightly as ``have``) parenthesised if its slot
    needs a tighter binding."""
    return f"({text})" if have < need else text


def short(text: str, width: int = 40) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


_AST_BINOP_PREC: dict[type[ast.operator], int] = {
    ast.BitOr: 6,
    ast.BitXor: 7,
    ast.BitAnd: 8,
    ast.LShift: 9,
    ast.RShift: 9,
    ast.Add: 10,
    ast.Sub: 10,
    ast.Mult: 11,
    ast.Div: 11,
    ast.FloorDiv: 11,
    ast.Mod: 11,
    ast.MatMult: 11,
    ast.Pow: 13,
}


def ast_prec(text: str) -> int | None:
    """The precedence of an expression given as source (``None`` if it does not parse)."""
    try:
        tree = ast.parse(f"({text})", mode="eval")
    except (SyntaxError, ValueError):
        return None
    node = tree.body
    if isinstance(node, ast.Lambda | ast.NamedExpr | ast.Yield | ast.YieldFrom):
        return 0
    if isinstance(node, ast.IfExp):
        return 1
    if isinstance(node, ast.BoolOp):
        return 3 if isinstance(node.op, ast.And) else 2
    if isinstance(node, ast.UnaryOp):
        return 4 if isinstance(node.op, ast.Not) else 12
    if isinstance(node, ast.Compare):
        return 5
    if isinstance(node, ast.BinOp):
        return _AST_BINOP_PREC[type(node.op)]
    if isinstance(node, ast.Await):
        return 14
    if isinstance(node, ast.Tuple) and not text.lstrip().startswith("("):
        return 0
    return 15


class Unit:
    """One suspicious statement, as the families see it."""

    def __init__(
        self,
        src: Source,
        facts: Facts,
        info: StmtInfo,
        susp: float,
        sink: list[Raw],
        hints: RepairHints | None = None,
    ) -> None:
        self.src = src
        self.hints = hints if hints is not None else RepairHints()
        """What the task says beyond the code (the issue's constants and messages)."""
        self.facts = facts
        self.info = info
        self.susp = susp
        self.sink = sink
        self.scope: Scope = info.scope
        if not info.compound:
            self.kind: Kind = "line"
        elif info.header_last is not None:
            self.kind = "header"
        else:
            self.kind = "whole"

    @cached_property
    def mini(self) -> Mini | None:
        """The statement (a compound one's header, with a stub body) parsed with libcst."""
        info = self.info
        text = self.src.lines(info.first, info.head_last)
        cut = 0
        if info.is_elif:
            at = len(info.indent)
            if not text.startswith("elif", at):
                return None
            text = text[:at] + text[at + 2 :]
            cut = 2
        if self.kind == "header":
            text += ("" if text.endswith("\n") else "\n") + info.indent + " pass\n"
        try:
            return Mini(self.src, info.first, text, cut)
        except (cst.ParserSyntaxError, IndexError, AssertionError):
            return None

    @property
    def node(self) -> cst.BaseStatement | None:
        """The libcst statement (``None`` if libcst cannot parse it)."""
        mini = self.mini
        return None if mini is None else mini.node

    @cached_property
    def sites(self) -> list[Site]:
        """Every expression site of the statement (header only for compound ones)."""
        node = self.node
        return [] if node is None else walk_statement(node)

    # -- reading ----------------------------------------------------------------------
    @property
    def _mini(self) -> Mini:
        mini = self.mini
        assert mini is not None
        return mini

    def span(self, node: cst.CSTNode) -> tuple[int, int]:
        """Absolute offsets of a node (whitespace-inclusive)."""
        return self._mini.span(node)

    def text(self, node: cst.CSTNode) -> str:
        """A node's original text."""
        return self._mini.text(node)

    def line(self, node: cst.CSTNode) -> int:
        """The line a node starts on."""
        return self._mini.line(node)

    def bare(self, node: cst.BaseExpression) -> str:
        """A node's text without its own outer parentheses."""
        if not node.lpar:
            return self.text(node)
        return self._mini.module.code_for_node(node.with_changes(lpar=[], rpar=[]))

    def fitted(self, node: cst.BaseExpression, need: int) -> str:
        """A node's original text, parenthesised if ``need`` asks for it."""
        return fit(self.text(node), prec(node), need)

    def ws(self, node: cst.CSTNode) -> str:
        """Text of a whitespace node."""
        if isinstance(node, cst.SimpleWhitespace):
            return node.value
        return self._mini.module.code_for_node(node)

    # -- emitting ---------------------------------------------------------------------
    def _emit(
        self,
        family: str,
        start: int,
        end: int,
        text: str,
        what: str,
        line: int,
        *,
        kind: Kind,
        i: int = 0,
        j: int = 0,
        snippet: str | None = None,
        compile: bool = False,
    ) -> None:
        if kind != "stmts":
            whole = self.src.text
            if whole[start:end] == text:
                return
            # Keep tokens apart: ``if(x)`` -> ``if not(x)``, never ``ifnot(x)``.
            if text and start and _word(whole[start - 1]) and _word(text[0]):
                text = " " + text
            if text and end < len(whole) and _word(whole[end]) and _word(text[-1]):
                text += " "
        self.sink.append(
            Raw(
                family=family,
                line=line,
                what=what,
                start=start,
                end=end,
                text=text,
                info=self.info,
                kind=kind,
                i=i,
                j=j,
                snippet=snippet,
                compile=compile,
                susp=self.susp,
                seq=len(self.sink),
            )
        )

    def replace(
        self, family: str, node: cst.CSTNode, text: str, what: str, *, compile: bool = False
    ) -> None:
        """Replace ``node`` (its whitespace-inclusive range) by ``text``."""
        start, end = self.span(node)
        self._emit(family, start, end, text, what, self.line(node), kind=self.kind, compile=compile)

    def splice(
        self,
        family: str,
        start: int,
        end: int,
        text: str,
        what: str,
        *,
        compile: bool = False,
    ) -> None:
        """Replace offsets ``start:end`` of the statement by ``text``."""
        self._emit(
            family, start, end, text, what, self.src.line_of(start), kind=self.kind, compile=compile
        )

    def statements(
        self,
        family: str,
        start: int,
        end: int,
        text: str,
        what: str,
        *,
        i: int,
        j: int,
        line: int,
    ) -> None:
        """Replace whole lines ``start:end`` by ``text`` (whole lines too, or nothing); in
        the AST, statements ``i:j`` of ``self.info``'s block become what ``text`` parses
        to."""
        self._emit(
            family,
            start,
            end,
            text,
            what,
            line,
            kind="stmts",
            i=i,
            j=j,
            snippet=text,
            compile=_CONTEXTUAL.search(text) is not None,
        )

    def insert_around(
        self, family: str, statement: str, note: str = "", *, before: bool = True
    ) -> None:
        """Insert ``statement`` after the unit's statement (unless that ends in a
        return, raise, break or continue) and, with ``before``, before it; ``note`` is
        added to each candidate's label in parentheses."""
        info = self.info
        nl = self.src.newline
        at_start = self.src.line_start(info.first)
        at_end = self.src.line_end(info.last)
        text = f"{info.indent}{statement}{nl}"
        why = f" ({note})" if note else ""
        if before:
            self.statements(
                family,
                at_start,
                at_start,
                text,
                f"insert `{short(statement)}` before line {info.first}{why}",
                i=info.start,
                j=info.start,
                line=info.first,
            )
        if isinstance(info.asts[-1], ast.Return | ast.Raise | ast.Break | ast.Continue):
            return
        open_end = self.src.text[at_end - 1 : at_end] != "\n"
        self.statements(
            family,
            at_end,
            at_end,
            f"{nl}{info.indent}{statement}" if open_end else text,
            f"insert `{short(statement)}` after line {info.last}{why}",
            i=info.stop,
            j=info.stop,
            line=info.first,
        )
