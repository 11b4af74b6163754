"""The statements of a file as the operators see them, read from its ``ast``.

Each :class:`StmtInfo` is a simple statement line (the ast statements sharing its lines)
or a compound statement, with where it sits (its ast container and index, its siblings),
its lines, its header's last line, and the context a fragment of it must compile in.
Only the top-level statements that hold suspicious lines are walked.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from atlas_actors.swe.repair.analysis.ast_keys import DigestTree, DNode
from atlas_actors.swe.repair.analysis.file_facts import Facts, Scope
from atlas_actors.swe.repair.analysis.source_text import Source

__all__ = ["StmtInfo", "map_statements", "top_level_groups"]

COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Try,
    ast.TryStar,
    ast.Match,
)


@dataclass(slots=True, eq=False)
class StmtInfo:
    """A simple statement line or a compound statement."""

    asts: tuple[ast.stmt, ...]
    parent: DNode
    """The ast container whose ``field`` list holds ``asts`` at ``start:stop``."""
    field: str
    start: int
    stop: int
    dnode: DNode | None
    """The statement's own container (compound statements)."""
    siblings: list[StmtInfo] | None
    """The statements of its block, itself included (``None`` for an ``elif``)."""
    index: int
    frames: tuple[tuple[str, str], ...]
    """(indent, stub header) of each enclosing def, class and loop: the context a
    fragment of this statement must compile in."""
    scope: Scope
    first: int
    """First line (decorators included)."""
    last: int
    header_last: int | None
    """Last line of a compound statement's header when its body starts on a later line."""
    indent: str
    loop_names: tuple[str, ...]
    """Variables in the tests of the enclosing ``while`` loops (increment candidates)."""
    in_loop: bool
    in_function: bool
    is_elif: bool
    group: tuple[int, int]
    """First and last line of its top-level statement."""
    risky: bool
    """Its top-level statement has global/nonlocal or generators: compile it whole."""

    @property
    def compound(self) -> bool:
        """A compound statement (if, for, def, ...)."""
        return isinstance(self.asts[0], COMPOUND)

    @property
    def head_last(self) -> int:
        """Last line of the part expression edits touch: the header, or the whole."""
        return self.header_last if self.header_last is not None else self.last


def first_line(stmt: ast.AST) -> int:
    """A statement's first line, decorators included."""
    decorators: list[ast.expr] = getattr(stmt, "decorator_list", [])
    line: int = getattr(stmt, "lineno", 0)
    return min([line] + [d.lineno for d in decorators])


def top_level_groups(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Runs of top-level statements that share lines: ``(k0, k1, first, last)``."""
    out: list[tuple[int, int, int, int]] = []
    for k, stmt in enumerate(tree.body):
        first = first_line(stmt)
        last = stmt.end_lineno or stmt.lineno
        if out and first <= out[-1][3]:
            k0, _, f0, l0 = out[-1]
            out[-1] = (k0, k + 1, f0, max(l0, last))
        else:
            out.append((k, k + 1, first, last))
    return out


@dataclass(frozen=True, slots=True)
class _Ctx:
    frames: tuple[tuple[str, str], ...]
    scope: Scope
    loop_names: tuple[str, ...]
    in_loop: bool
    in_function: bool
    group: tuple[int, int]
    risky: bool


class _Mapper:
    def __init__(self, src: Source, facts: Facts, digests: DigestTree) -> None:
        self.src = src
        self.facts = facts
        self.digests = digests
        self.out: list[StmtInfo] = []

    def block(
        self,
        stmts: Sequence[ast.stmt],
        base: int,
        parent: DNode,
        field: str,
        ctx: _Ctx,
    ) -> None:
        if stmts and self.in_suite(stmts[0]):
            return  # a one-line body: edited with its compound statement, never alone
        siblings: list[StmtInfo] = []
        k = 0
        while k < len(stmts):
            stmt = stmts[k]
            run: list[ast.stmt] = [stmt]
            if not isinstance(stmt, COMPOUND):
                last = stmt.end_lineno or stmt.lineno
                while (
                    k + len(run) < len(stmts)
                    and not isinstance(stmts[k + len(run)], COMPOUND)
                    and stmts[k + len(run)].lineno <= last
                ):
                    last = max(last, stmts[k + len(run)].end_lineno or last)
                    run.append(stmts[k + len(run)])
            info = self.info(
                tuple(run), parent, field, base + k, siblings, len(siblings), ctx, False
            )
            siblings.append(info)
            if isinstance(stmt, COMPOUND):
                self.compound(stmt, info, ctx)
            k += len(run)

    def in_suite(self, stmt: ast.stmt) -> bool:
        """Whether ``stmt`` does not start its line (it follows a colon or semicolon)."""
        line = stmt.lineno
        start = self.src.line_start(line)
        return bool(self.src.text[start : self.src.ast_offset(line, stmt.col_offset)].strip())

    def info(
        self,
        asts: tuple[ast.stmt, ...],
        parent: DNode,
        field: str,
        start: int,
        siblings: list[StmtInfo] | None,
        index: int,
        ctx: _Ctx,
        is_elif: bool,
    ) -> StmtInfo:
        head = asts[0]
        first = first_line(head)
        last = max(s.end_lineno or s.lineno for s in asts)
        dnode = self.digests.node(head) if isinstance(head, COMPOUND) else None
        info = StmtInfo(
            asts=asts,
            parent=parent,
            field=field,
            start=start,
            stop=start + len(asts),
            dnode=dnode,
            siblings=siblings,
            index=index,
            frames=ctx.frames,
            scope=ctx.scope,
            first=first,
            last=last,
            header_last=self.header_last(head) if dnode is not None else None,
            indent=self.src.indent(first),
            loop_names=ctx.loop_names,
            in_loop=ctx.in_loop,
            in_function=ctx.in_function,
            is_elif=is_elif,
            group=ctx.group,
            risky=ctx.risky,
        )
        self.out.append(info)
        return info

    def header_last(self, stmt: ast.stmt) -> int | None:
        children: list[ast.AST] = list(getattr(stmt, "body", None) or ())
        if isinstance(stmt, ast.Match):
            children = [case.pattern for case in stmt.cases]
        if not children:
            return None
        child = children[0]
        line = first_line(child)
        col = min(
            [child.col_offset]  # type: ignore[attr-defined]
            + [d.col_offset for d in getattr(child, "decorator_list", ()) if d.lineno == line]
        )
        if isinstance(stmt, ast.Match):
            return line - 1
        before = self.src.text[self.src.line_start(line) : self.src.ast_offset(line, col)]
        if before.strip() or line <= first_line(stmt):
            return None
        return line - 1

    def compound(self, stmt: ast.stmt, info: StmtInfo, ctx: _Ctx) -> None:
        dnode = info.dnode
        assert dnode is not None
        indent = info.indent
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            stub = "async def _f():" if isinstance(stmt, ast.AsyncFunctionDef) else "def _f():"
            inner = _Ctx(
                (*ctx.frames, (indent, stub)),
                self.facts.scope_of(stmt),
                (),
                False,
                True,
                ctx.group,
                ctx.risky,
            )
            self.block(stmt.body, 0, dnode, "body", inner)
        elif isinstance(stmt, ast.ClassDef):
            inner = _Ctx(
                (*ctx.frames, (indent, "class _C:")),
                self.facts.scope_of(stmt),
                (),
                False,
                False,
                ctx.group,
                ctx.risky,
            )
            self.block(stmt.body, 0, dnode, "body", inner)
        elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            names = ctx.loop_names
            if isinstance(stmt, ast.While):
                names = names + tuple(
                    dict.fromkeys(
                        n.id
                        for n in ast.walk(stmt.test)
                        if isinstance(n, ast.Name)
                        and ctx.scope.kind_of(n.id) == "var"
                        and n.id not in names
                    )
                )
            stub = "while _:" if isinstance(stmt, ast.While) else "for _ in _:"
            inner = _Ctx(
                (*ctx.frames, (indent, stub)),
                ctx.scope,
                names,
                True,
                ctx.in_function,
                ctx.group,
                ctx.risky,
            )
            self.block(stmt.body, 0, dnode, "body", inner)
            self.block(stmt.orelse, 0, dnode, "orelse", ctx)
        elif isinstance(stmt, ast.If):
            self.block(stmt.body, 0, dnode, "body", ctx)
            orelse = stmt.orelse
            if (
                len(orelse) == 1
                and isinstance(orelse[0], ast.If)
                and self.src.text.startswith(
                    "elif", self.src.ast_offset(orelse[0].lineno, orelse[0].col_offset)
                )
            ):
                elif_info = self.info((orelse[0],), dnode, "orelse", 0, None, 0, ctx, True)
                self.compound(orelse[0], elif_info, ctx)
            else:
                self.block(orelse, 0, dnode, "orelse", ctx)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            self.block(stmt.body, 0, dnode, "body", ctx)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            self.block(stmt.body, 0, dnode, "body", ctx)
            for handler in stmt.handlers:
                self.block(handler.body, 0, self.digests.node(handler), "body", ctx)
            self.block(stmt.orelse, 0, dnode, "orelse", ctx)
            self.block(stmt.finalbody, 0, dnode, "finalbody", ctx)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                self.block(case.body, 0, self.digests.node(case), "body", ctx)


def map_statements(
    src: Source,
    facts: Facts,
    digests: DigestTree,
    tree: ast.Module,
    lines: Mapping[int, float],
) -> list[StmtInfo]:
    """Every statement of the top-level statements that hold a line of ``lines``."""
    mapper = _Mapper(src, facts, digests)
    for k0, k1, first, last in top_level_groups(tree):
        if not any(first <= line <= last for line in lines):
            continue
        stmts = tree.body[k0:k1]
        risky = any(
            isinstance(n, ast.Global | ast.Nonlocal | ast.Yield | ast.YieldFrom)
            for stmt in stmts
            for n in ast.walk(stmt)
        )
        ctx = _Ctx((), facts.module, (), False, False, (first, last), risky)
        mapper.block(stmts, k0, digests.root, "body", ctx)
    return mapper.out
