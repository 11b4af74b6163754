"""What the operators need to know about a file, read once from its ``ast``.

Scopes (parameters and names bound per function, class and module, with the lines each
name occurs on), attributes and methods used per object, calls per callee (keywords,
longest positional argument list), function signatures, literals, conditions, return
values and donor statements. Everything is kept in source order, so enumeration is
deterministic.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Literal

from atlas_actors.swe.repair.analysis.source_text import Source

__all__ = ["Donor", "Facts", "Lit", "Scope", "Signature"]

NameKind = Literal["var", "func", "class", "import"]


@dataclass(slots=True)
class Donor:
    """A simple statement of the file that may be inserted or substituted elsewhere."""

    text: str
    """Its source, from its first token to its last (continuation lines verbatim)."""
    line: int
    flow: bool
    """A return, raise, break or continue."""


@dataclass(slots=True)
class Lit:
    """A literal of the file."""

    kind: Literal["int", "float", "str", "bytes"]
    value: object
    text: str
    line: int


@dataclass(slots=True)
class Signature:
    """What a function defined in the file accepts (``self`` left out for methods)."""

    min_pos: int
    max_pos: int | None
    """``None`` with ``*args``."""
    keywords: tuple[str, ...]
    """Parameter names that may be passed by keyword, in order."""


@dataclass(slots=True)
class Scope:
    """A module, class or function body."""

    kind: Literal["module", "class", "function"]
    name: str
    parent: Scope | None
    params: list[str] = field(default_factory=list)
    bound: dict[str, NameKind] = field(default_factory=dict)
    uses: dict[str, list[int]] = field(default_factory=dict)
    declared: set[str] = field(default_factory=set)
    """Names declared ``global`` or ``nonlocal``."""
    self_name: str | None = None
    class_name: str | None = None
    conditions: list[tuple[str, int]] = field(default_factory=list)
    returns: list[tuple[str, int]] = field(default_factory=list)
    donors: list[Donor] = field(default_factory=list)

    def use(self, name: str, line: int) -> None:
        """Note an occurrence of ``name`` on ``line``."""
        self.uses.setdefault(name, []).append(line)

    def bind(self, name: str, kind: NameKind) -> None:
        """Note a binding of ``name`` in this scope (the first kind seen stays)."""
        self.bound.setdefault(name, kind)

    def distance(self, name: str, line: int) -> int:
        """Lines from ``line`` to the nearest occurrence of ``name`` in this scope."""
        lines = self.uses.get(name)
        if not lines:
            return 1 << 30
        k = bisect_left(lines, line)
        best = 1 << 30
        if k < len(lines):
            best = lines[k] - line
        if k:
            best = min(best, line - lines[k - 1])
        return best

    def variables(self) -> list[str]:
        """Variables visible here: own parameters and variables, those of enclosing
        functions, then the module's (class bodies are not visible from methods)."""
        seen: dict[str, None] = {}
        scope: Scope | None = self
        first = True
        while scope is not None:
            if first or scope.kind != "class":
                for name in scope.params:
                    seen.setdefault(name)
                for name, kind in scope.bound.items():
                    if kind == "var":
                        seen.setdefault(name)
            first = False
            scope = scope.parent
        if self.self_name is not None:
            seen.pop(self.self_name, None)
        return list(seen)

    def callables(self) -> list[str]:
        """Functions and classes defined in this scope, enclosing scopes and the module."""
        seen: dict[str, None] = {}
        scope: Scope | None = self
        while scope is not None:
            for name, kind in scope.bound.items():
                if kind in ("func", "class"):
                    seen.setdefault(name)
            scope = scope.parent
        return list(seen)

    def kind_of(self, name: str) -> NameKind | None:
        """How ``name`` is bound where this scope sees it (``None``: a builtin, unknown)."""
        scope: Scope | None = self
        first = True
        while scope is not None:
            if first or scope.kind != "class":
                if name in scope.params:
                    return "var"
                if name in scope.bound:
                    return scope.bound[name]
            first = False
            scope = scope.parent
        return None

    def nearest(self, names: list[str], line: int) -> list[str]:
        """``names`` ordered by how close to ``line`` they occur (then by name)."""

        def distance(name: str) -> int:
            scope: Scope | None = self
            best = 1 << 30
            while scope is not None:
                best = min(best, scope.distance(name, line))
                scope = scope.parent
            return best

        return sorted(names, key=lambda n: (distance(n), n))


_NOT_DONORS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
    ast.Pass,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
)
"""Statements never inserted elsewhere: compound ones, and those that do nothing there."""


def _is_docstring(stmt: ast.stmt, body: list[ast.stmt]) -> bool:
    return (
        stmt is body[0]
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _targets(node: ast.expr) -> list[ast.Name]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Name)]


class Facts:
    """Everything the operators read from one file's ast."""

    def __init__(self, src: Source, tree: ast.Module) -> None:
        self.src = src
        self.tree = tree
        """The file's ``ast`` (families that read more than these facts walk it)."""
        self.module = Scope("module", "<module>", None)
        self.scopes: dict[int, Scope] = {}
        """By ``id`` of a FunctionDef/AsyncFunctionDef/ClassDef node."""
        self.attrs: dict[str, dict[str, list[int]]] = {}
        """Attributes read or written (not called) per object key, with their lines."""
        self.methods: dict[str, dict[str, list[int]]] = {}
        """Methods called per object key, with their lines."""
        self.zero_arg_methods: dict[str, int] = {}
        """Methods called anywhere with no argument, with how often."""
        self.zero_arg_by_key: dict[str, list[str]] = {}
        """Methods called with no argument, per object key."""
        self.class_methods: dict[str, list[str]] = {}
        """Methods defined per class name."""
        self.callee_kwargs: dict[str, dict[str, str]] = {}
        """Per callee key (``f`` or ``.m``): keyword -> the value passed the first time."""
        self.callee_longest: dict[str, tuple[str, ...]] = {}
        """Per callee key: the positional arguments of its call with the most of them."""
        self.defs: dict[str, list[Signature]] = {}
        self.literals: list[Lit] = []
        self.donors: list[Donor] = []
        self.raised: dict[str, None] = {}
        """Classes the file raises by constructing them (``raise Name(...)``), in order."""
        self._nested_lits: set[int] = set()
        self._walk_body(tree.body, self.module)

    # -- keys --------------------------------------------------------------------------
    @staticmethod
    def object_key(node: ast.expr, scope: Scope) -> str | None:
        """A key naming the object an expression denotes (``self`` per class)."""
        if isinstance(node, ast.Name):
            if scope.self_name is not None and node.id == scope.self_name:
                return f"<self of {scope.class_name}>"
            return node.id
        if isinstance(node, ast.Attribute):
            base = Facts.object_key(node.value, scope)
            return None if base is None else f"{base}.{node.attr}"
        return None

    # -- walking -----------------------------------------------------------------------
    def _walk_body(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            if not (body and _is_docstring(stmt, body)):
                self._donor(stmt, scope)
                self._walk_stmt(stmt, scope)

    def _donor(self, stmt: ast.stmt, scope: Scope) -> None:
        if isinstance(stmt, _NOT_DONORS):
            return
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            return  # a bare annotation does nothing where it is inserted
        flow = isinstance(stmt, ast.Return | ast.Raise | ast.Break | ast.Continue)
        if (
            isinstance(stmt, ast.Raise)
            and isinstance(stmt.exc, ast.Call)
            and isinstance(stmt.exc.func, ast.Name)
        ):
            self.raised.setdefault(stmt.exc.func.id)
        donor = Donor(self.src.segment(stmt), stmt.lineno, flow)
        self.donors.append(donor)
        if scope.kind == "function":
            scope.donors.append(donor)

    def _walk_stmt(self, stmt: ast.stmt, scope: Scope) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self._function(stmt, scope)
            return
        if isinstance(stmt, ast.ClassDef):
            scope.bind(stmt.name, "class")
            scope.use(stmt.name, stmt.lineno)
            for expr in (*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)):
                self._walk_expr(expr, scope)
            inner = Scope("class", stmt.name, scope)
            self.scopes[id(stmt)] = inner
            self._walk_body(stmt.body, inner)
            return
        if isinstance(stmt, ast.Global | ast.Nonlocal):
            scope.declared.update(stmt.names)
            return
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                if name != "*":
                    scope.bind(name, "import")
            return
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            scope.returns.append((self.src.segment(stmt.value), stmt.lineno))
        if isinstance(stmt, ast.If | ast.While):
            self._condition(stmt.test, scope)
        if isinstance(stmt, ast.Assert):
            self._condition(stmt.test, scope)
        for name, value in ast.iter_fields(stmt):
            if name in ("body", "orelse", "finalbody"):
                self._walk_body(value, scope)
            elif name == "handlers":
                for handler in value:
                    if handler.type is not None:
                        self._walk_expr(handler.type, scope)
                    if handler.name:
                        scope.bind(handler.name, "var")
                        scope.use(handler.name, handler.lineno)
                    self._walk_body(handler.body, scope)
            elif name == "cases":
                for case in value:
                    for node in ast.walk(case.pattern):
                        captured = getattr(node, "name", None)
                        if isinstance(captured, str):
                            scope.bind(captured, "var")
                    if case.guard is not None:
                        self._walk_expr(case.guard, scope)
                    self._walk_body(case.body, scope)
            elif isinstance(value, ast.expr):
                self._walk_expr(value, scope)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.expr):
                        self._walk_expr(item, scope)
                    elif isinstance(item, ast.withitem):
                        self._walk_expr(item.context_expr, scope)
                        if item.optional_vars is not None:
                            self._walk_expr(item.optional_vars, scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        scope.bind(node.name, "func")
        scope.use(node.name, node.lineno)
        for expr in (*node.decorator_list, *node.args.defaults):
            self._walk_expr(expr, scope)
        for default in node.args.kw_defaults:
            if default is not None:
                self._walk_expr(default, scope)
        args = node.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        inner = Scope("function", node.name, scope)
        inner.params = [
            *positional,
            *([args.vararg.arg] if args.vararg else []),
            *(a.arg for a in args.kwonlyargs),
            *([args.kwarg.arg] if args.kwarg else []),
        ]
        for name in inner.params:
            inner.use(name, node.lineno)
        static = any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
        )
        if scope.kind == "class":
            self.class_methods.setdefault(scope.name, []).append(node.name)
        if scope.kind == "class" and not static and positional:
            inner.self_name = positional[0]
            inner.class_name = scope.name
            positional = positional[1:]
        n_defaults = len(args.defaults)
        self.defs.setdefault(node.name, []).append(
            Signature(
                min_pos=max(0, len(positional) - n_defaults),
                max_pos=None if args.vararg else len(positional),
                keywords=tuple(
                    [*(a.arg for a in args.args if a.arg != inner.self_name)]
                    + [a.arg for a in args.kwonlyargs]
                ),
            )
        )
        self.scopes[id(node)] = inner
        self._walk_body(node.body, inner)

    def _condition(self, test: ast.expr, scope: Scope) -> None:
        stack = [test]
        while stack:
            expr = stack.pop(0)
            text = self.src.segment(expr)
            if all(text != seen for seen, _ in scope.conditions):
                scope.conditions.append((text, expr.lineno))
            if isinstance(expr, ast.BoolOp):
                stack.extend(expr.values)

    def _walk_expr(self, node: ast.expr, scope: Scope) -> None:
        stack: list[ast.AST] = [node]
        while stack:
            expr = stack.pop()
            if isinstance(expr, ast.Name):
                scope.use(expr.id, expr.lineno)
                if isinstance(expr.ctx, ast.Store):
                    scope.bind(expr.id, "var")
                continue
            if isinstance(expr, ast.Lambda):
                stack.append(expr.body)
                stack.extend(expr.args.defaults)
                continue
            if isinstance(expr, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                for gen in expr.generators:
                    for name in _targets(gen.target):
                        scope.use(name.id, name.lineno)
                    stack.append(gen.iter)
                    for cond in gen.ifs:
                        self._condition(cond, scope)
                        stack.append(cond)
                if isinstance(expr, ast.DictComp):
                    stack.extend((expr.key, expr.value))
                else:
                    stack.append(expr.elt)
                continue
            if isinstance(expr, ast.NamedExpr):
                scope.bind(expr.target.id, "var")
                scope.use(expr.target.id, expr.target.lineno)
                stack.append(expr.value)
                continue
            if isinstance(expr, ast.IfExp):
                self._condition(expr.test, scope)
            elif isinstance(expr, ast.Call):
                self._call(expr, scope)
            elif isinstance(expr, ast.Attribute):
                key = self.object_key(expr.value, scope)
                if key is not None:
                    self.attrs.setdefault(key, {}).setdefault(expr.attr, []).append(expr.lineno)
            elif isinstance(expr, ast.Constant):
                self._literal(expr)
                continue
            elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
                if isinstance(expr.operand, ast.Constant):
                    self._literal(expr)
                    continue
            elif isinstance(expr, ast.JoinedStr):
                stack.extend(v.value for v in expr.values if isinstance(v, ast.FormattedValue))
                continue
            for child in ast.iter_child_nodes(expr):
                if isinstance(child, ast.expr):
                    stack.append(child)
                elif isinstance(child, ast.keyword | ast.comprehension | ast.arguments):
                    stack.extend(c for c in ast.iter_child_nodes(child))

    def _call(self, call: ast.Call, scope: Scope) -> None:
        func = call.func
        callee: str | None = None
        if isinstance(func, ast.Name):
            callee = func.id
        elif isinstance(func, ast.Attribute):
            callee = "." + func.attr
            key = self.object_key(func.value, scope)
            if key is not None:
                self.methods.setdefault(key, {}).setdefault(func.attr, []).append(call.lineno)
            if not call.args and not call.keywords:
                self.zero_arg_methods[func.attr] = self.zero_arg_methods.get(func.attr, 0) + 1
                if key is not None:
                    by_key = self.zero_arg_by_key.setdefault(key, [])
                    if func.attr not in by_key:
                        by_key.append(func.attr)
        if callee is None:
            return
        kwargs = self.callee_kwargs.setdefault(callee, {})
        for kw in call.keywords:
            if kw.arg is not None and kw.arg not in kwargs:
                kwargs[kw.arg] = self.src.segment(kw.value)
        if not any(isinstance(a, ast.Starred) for a in call.args):
            longest = self.callee_longest.get(callee, ())
            if len(call.args) > len(longest):
                self.callee_longest[callee] = tuple(self.src.segment(a) for a in call.args)

    def _literal(self, node: ast.Constant | ast.UnaryOp) -> None:
        const = node.operand if isinstance(node, ast.UnaryOp) else node
        assert isinstance(const, ast.Constant)
        value = const.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            return
        kind: Literal["int", "float", "str", "bytes"]
        if isinstance(value, int):
            kind = "int"
        elif isinstance(value, float):
            kind = "float"
        elif isinstance(value, str):
            kind = "str"
        elif isinstance(value, bytes):
            kind = "bytes"
        else:
            return
        if isinstance(node, ast.UnaryOp):
            if kind not in ("int", "float"):
                return
            value = -value  # type: ignore[operator]
        self.literals.append(Lit(kind, value, self.src.segment(node), node.lineno))

    def scope_of(self, node: ast.AST) -> Scope:
        """The scope a function or class node opens."""
        return self.scopes[id(node)]
