"""The libcst side: one suspicious statement parsed on its own, and the expression sites
inside it with the precedence each slot needs.

Only the suspicious statements are parsed with libcst (a simple statement line, or a
compound statement's header with a stub body); positions are whitespace-inclusive ranges
mapped back to the file, so replacing a node's range by new text keeps every other byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, WhitespaceInclusivePositionProvider

from atlas_actors.swe.repair.analysis.source_text import Source

__all__ = ["ATOM", "Mini", "Site", "prec", "walk_statement"]

ATOM = 16
"""Precedence of anything that never needs parentheses (parenthesised, names, calls)."""

_BINARY_PREC: dict[type[cst.BaseBinaryOp], int] = {
    cst.BitOr: 6,
    cst.BitXor: 7,
    cst.BitAnd: 8,
    cst.LeftShift: 9,
    cst.RightShift: 9,
    cst.Add: 10,
    cst.Subtract: 10,
    cst.Multiply: 11,
    cst.Divide: 11,
    cst.FloorDivide: 11,
    cst.Modulo: 11,
    cst.MatrixMultiply: 11,
    cst.Power: 13,
}


def binary_prec(op: cst.BaseBinaryOp) -> int:
    """Precedence of a binary operator (higher binds tighter)."""
    return _BINARY_PREC[type(op)]


def operand_needs(op: cst.BaseBinaryOp) -> tuple[int, int]:
    """The precedence the left and right operands of ``op`` need without parentheses."""
    p = binary_prec(op)
    if isinstance(op, cst.Power):
        return 14, 12
    return p, p + 1


def bool_needs(op: cst.BaseBooleanOp) -> tuple[int, int]:
    """The precedence the operands of ``and``/``or`` need without parentheses."""
    return (3, 4) if isinstance(op, cst.And) else (2, 3)


def prec(node: cst.CSTNode) -> int:
    """How tightly an expression binds as written (``ATOM`` if parenthesised)."""
    if getattr(node, "lpar", None):
        return ATOM
    if isinstance(node, cst.Lambda | cst.NamedExpr | cst.Yield):
        return 0
    if isinstance(node, cst.IfExp):
        return 1
    if isinstance(node, cst.BooleanOperation):
        return 3 if isinstance(node.operator, cst.And) else 2
    if isinstance(node, cst.UnaryOperation):
        return 4 if isinstance(node.operator, cst.Not) else 12
    if isinstance(node, cst.Comparison):
        return 5
    if isinstance(node, cst.BinaryOperation):
        return binary_prec(node.operator)
    if isinstance(node, cst.Await):
        return 14
    return 15


@dataclass(slots=True, eq=False)
class Site:
    """An expression of a suspicious statement, with what its slot allows."""

    node: cst.BaseExpression
    need: int
    """The precedence an expression put here needs to go without parentheses."""
    role: str
    """``value``, ``cond``, ``store``, ``callee``, ``receiver``, ``base``, ``index``,
    ``slice``, ``arg``, ``kwarg``, ``return``, ``iter``, ``operand``, ``element``,
    ``assign``, ``comp``, ``target`` (comprehension target)."""
    parent: cst.CSTNode | None
    local: tuple[str, ...]
    """Names bound by enclosing comprehensions and lambdas."""


class _Walker:
    def __init__(self, out: list[Site]) -> None:
        self.out = out

    def expr(
        self,
        node: cst.BaseExpression,
        need: int,
        role: str,
        parent: cst.CSTNode | None,
        local: tuple[str, ...],
    ) -> None:
        self.out.append(Site(node, need, role, parent, local))
        e = self.expr
        if isinstance(node, cst.BinaryOperation):
            left, right = operand_needs(node.operator)
            e(node.left, left, "operand", node, local)
            e(node.right, right, "operand", node, local)
        elif isinstance(node, cst.BooleanOperation):
            left, right = bool_needs(node.operator)
            e(node.left, left, "operand", node, local)
            e(node.right, right, "operand", node, local)
        elif isinstance(node, cst.UnaryOperation):
            e(
                node.expression,
                4 if isinstance(node.operator, cst.Not) else 12,
                "operand",
                node,
                local,
            )
        elif isinstance(node, cst.Comparison):
            e(node.left, 6, "operand", node, local)
            for target in node.comparisons:
                e(target.comparator, 6, "operand", node, local)
        elif isinstance(node, cst.IfExp):
            e(node.body, 2, "value", node, local)
            e(node.test, 2, "cond", node, local)
            e(node.orelse, 1, "value", node, local)
        elif isinstance(node, cst.Attribute):
            e(node.value, 15, "receiver" if role == "callee" else "base", node, local)
        elif isinstance(node, cst.Subscript):
            e(node.value, 15, "base", node, local)
            for part in node.slice:
                inner = part.slice
                if isinstance(inner, cst.Index):
                    e(inner.value, 1, "index", node, local)
                elif isinstance(inner, cst.Slice):
                    for bound in (inner.lower, inner.upper, inner.step):
                        if bound is not None:
                            e(bound, 1, "slice", inner, local)
        elif isinstance(node, cst.Call):
            e(node.func, 15, "callee", node, local)
            for arg in node.args:
                e(arg.value, 0, "kwarg" if arg.keyword is not None else "arg", node, local)
        elif isinstance(node, cst.Await):
            e(node.expression, 15, "value", node, local)
        elif isinstance(node, cst.Tuple | cst.List | cst.Set):
            for element in node.elements:
                e(element.value, 1, "store" if role == "store" else "element", node, local)
        elif isinstance(node, cst.Dict):
            for item in node.elements:
                if isinstance(item, cst.DictElement):
                    e(item.key, 1, "element", node, local)
                    e(item.value, 1, "element", node, local)
                else:
                    e(item.value, 6, "element", node, local)
        elif isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp):
            self.comprehension(node, local)
        elif isinstance(node, cst.Lambda):
            names = tuple(p.name.value for p in _params(node.params))
            e(node.body, 0, "value", node, local + names)
        elif isinstance(node, cst.NamedExpr):
            e(node.target, 0, "store", node, local)
            e(node.value, 1, "value", node, local)
        elif isinstance(node, cst.StarredElement):
            e(node.value, 6, "store" if role == "store" else "element", node, local)

    def comprehension(
        self,
        node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp,
        local: tuple[str, ...],
    ) -> None:
        comp: cst.CompFor | None = node.for_in
        inner = local
        while comp is not None:
            self.expr(comp.iter, 2, "iter", comp, inner)
            inner = inner + tuple(n.value for n in _names(comp.target))
            self.expr(comp.target, 0, "target", comp, inner)
            for cond in comp.ifs:
                self.expr(cond.test, 2, "cond", cond, inner)
            comp = comp.inner_for_in
        if isinstance(node, cst.DictComp):
            self.expr(node.key, 1, "element", node, inner)
            self.expr(node.value, 1, "element", node, inner)
        else:
            self.expr(node.elt, 1, "element", node, inner)


def _params(params: cst.Parameters) -> list[cst.Param]:
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def _names(node: cst.CSTNode) -> list[cst.Name]:
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, cst.Tuple | cst.List):
        return [n for element in node.elements for n in _names(element.value)]
    if isinstance(node, cst.StarredElement):
        return _names(node.value)
    return []


def walk_small(stmt: cst.BaseSmallStatement, walker: _Walker) -> None:
    """Sites of one small statement."""
    e = walker.expr
    if isinstance(stmt, cst.Expr):
        e(stmt.value, 0, "value", stmt, ())
    elif isinstance(stmt, cst.Assign):
        for target in stmt.targets:
            e(target.target, 0, "store", stmt, ())
        e(stmt.value, 0, "assign", stmt, ())
    elif isinstance(stmt, cst.AugAssign):
        e(stmt.target, 0, "store", stmt, ())
        e(stmt.value, 0, "assign", stmt, ())
    elif isinstance(stmt, cst.AnnAssign):
        e(stmt.target, 0, "store", stmt, ())
        if stmt.value is not None:
            e(stmt.value, 0, "assign", stmt, ())
    elif isinstance(stmt, cst.Return):
        if stmt.value is not None:
            e(stmt.value, 0, "return", stmt, ())
    elif isinstance(stmt, cst.Raise):
        if stmt.exc is not None:
            e(stmt.exc, 0, "value", stmt, ())
    elif isinstance(stmt, cst.Assert):
        e(stmt.test, 1, "cond", stmt, ())


def walk_statement(node: cst.CSTNode) -> list[Site]:
    """Every expression site of a simple statement line, or of a compound statement's
    header (and its body too when that is a one-line suite)."""
    out: list[Site] = []
    walker = _Walker(out)
    if isinstance(node, cst.SimpleStatementLine):
        for small in node.body:
            walk_small(small, walker)
        return out
    if isinstance(node, cst.If | cst.While):
        walker.expr(node.test, 0, "cond", node, ())
    elif isinstance(node, cst.For):
        walker.expr(node.target, 0, "store", node, ())
        walker.expr(node.iter, 0, "iter", node, ())
    elif isinstance(node, cst.With):
        for item in node.items:
            walker.expr(item.item, 0, "value", node, ())
            if item.asname is not None:
                walker.expr(item.asname.name, 0, "store", node, ())
    body = getattr(node, "body", None)
    if isinstance(body, cst.SimpleStatementSuite):
        for small in body.body:
            walk_small(small, walker)
    return out


class Mini:
    """One statement's text parsed with libcst on its own, positions mapped to the file.

    ``text`` is lines ``first``.. of the file, their indentation kept; an indented
    statement is parsed inside an ``if 1:`` line (``wrapped``). ``cut`` characters of the
    statement's first line are missing from ``text`` (2 when ``elif`` became ``if``).
    """

    def __init__(self, src: Source, first: int, text: str, cut: int) -> None:
        self.src = src
        self.cut = cut
        wrapped = text[:1] in (" ", "\t", "\f")
        self.module = cst.parse_module("if 1:\n" + text if wrapped else text)
        node: cst.BaseStatement = self.module.body[0]
        if wrapped:
            assert isinstance(node, cst.If) and isinstance(node.body, cst.IndentedBlock)
            node = node.body.body[0]
        self.node = node
        self.head = 2 if wrapped else 1
        """The line of ``text`` that is the file's line ``first``."""
        self.first = first
        wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.pos: dict[cst.CSTNode, CodeRange] = dict(
            wrapper.resolve(WhitespaceInclusivePositionProvider)
        )

    def _offset(self, line: int, column: int) -> int:
        return (
            self.src.starts[self.first + line - self.head - 1]
            + column
            + (self.cut if line == self.head else 0)
        )

    def span(self, node: cst.CSTNode) -> tuple[int, int]:
        """Absolute text offsets of a node's whitespace-inclusive range."""
        r = self.pos[node]
        return self._offset(r.start.line, r.start.column), self._offset(r.end.line, r.end.column)

    def line(self, node: cst.CSTNode) -> int:
        """The absolute line a node starts on."""
        return self.pos[node].start.line + self.first - self.head

    def text(self, node: cst.CSTNode) -> str:
        """A node's original text."""
        start, end = self.span(node)
        return self.src.text[start:end]
