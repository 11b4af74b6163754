"""Expression-level operator families: each emits edits of one suspicious statement.

Replacement text is built from the original text of the nodes it keeps (fast, and
byte-faithful), parenthesised only where the new expression would otherwise parse
differently in its slot (:func:`fit` against the slot's precedence).

The builtin-swap table pairs functions and methods that take the same arguments and are
each other's usual counterpart, so one is a plausible slip for the other: extremum
(min/max, argmin/argmax), quantifier (any/all), rounding direction (floor/ceil,
int/round), order (sorted/reversed, sort/reverse), side (startswith/endswith,
find/rfind, index/rindex, lstrip/rstrip/strip, split/rsplit, ljust/rjust,
append/appendleft, pop/popleft), one-versus-many (append/extend, add/update),
case (upper/lower, isupper/islower), view (keys/values/items), strictness
(remove/discard, get/pop, isinstance/issubclass, str/repr, copy/deepcopy,
encode/decode, isdigit/isalpha/isalnum).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

import libcst as cst

from atlas_actors.swe.repair._cst import ATOM, Site, bool_needs, operand_needs, prec
from atlas_actors.swe.repair._facts import Facts, Scope
from atlas_actors.swe.repair._unit import Unit, ast_prec, fit, short

__all__ = ["EXPRESSION_FAMILIES"]

MAX_NAMES = 6
MAX_CALLABLES = 4
MAX_LITERALS = 4
MAX_DONOR_CONDITIONS = 3

_CMP: dict[type[cst.BaseCompOp], str] = {
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.Is: "is",
    cst.IsNot: "is not",
    cst.In: "in",
    cst.NotIn: "not in",
}
_CMP_ALTS: dict[str, tuple[str, ...]] = {
    "<": ("<=", ">", ">=", "!=", "=="),
    "<=": ("<", ">=", ">", "==", "!="),
    ">": (">=", "<", "<=", "!=", "=="),
    ">=": (">", "<=", "<", "==", "!="),
    "==": ("!=", "is", "<=", ">=", "<", ">"),
    "!=": ("==", "is not", "<", ">"),
    "is": ("is not", "=="),
    "is not": ("is", "!="),
    "in": ("not in",),
    "not in": ("in",),
}
_ARITH: dict[type[cst.BaseBinaryOp], str] = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.BitAnd: "&",
    cst.BitOr: "|",
    cst.BitXor: "^",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
    cst.MatrixMultiply: "@",
}
_AUG: dict[type[cst.BaseAugOp], str] = {
    cst.AddAssign: "+",
    cst.SubtractAssign: "-",
    cst.MultiplyAssign: "*",
    cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//",
    cst.ModuloAssign: "%",
    cst.PowerAssign: "**",
    cst.BitAndAssign: "&",
    cst.BitOrAssign: "|",
    cst.BitXorAssign: "^",
    cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>",
    cst.MatrixMultiplyAssign: "@",
}
_ARITH_ALTS: dict[str, tuple[str, ...]] = {
    "+": ("-", "*"),
    "-": ("+",),
    "*": ("//", "/", "+", "**"),
    "/": ("//", "*"),
    "//": ("/", "%", "*"),
    "%": ("//",),
    "**": ("*",),
    "&": ("|", "^"),
    "|": ("&", "^"),
    "^": ("|", "&"),
    "<<": (">>",),
    ">>": ("<<",),
    "@": ("*",),
}
_TOKEN_PREC = {
    "+": 10, "-": 10, "*": 11, "/": 11, "//": 11, "%": 11, "@": 11, "**": 13,
    "&": 8, "|": 6, "^": 7, "<<": 9, ">>": 9,
}  # fmt: skip
_NON_COMMUTATIVE = (
    cst.Subtract,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
    cst.LeftShift,
    cst.RightShift,
    cst.MatrixMultiply,
)
_ARITHMETIC_OPERAND_PARENTS = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
)
_UNARY = {cst.Not: "not ", cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}


def _swaps(*pairs: tuple[str, str]) -> dict[str, tuple[str, ...]]:
    """Both directions of each pair; a name's alternatives in the order of the pairs."""
    out: dict[str, tuple[str, ...]] = {}
    for a, b in pairs:
        out[a] = (*out.get(a, ()), b)
        out[b] = (*out.get(b, ()), a)
    return out


FUNCTION_SWAPS = _swaps(
    ("min", "max"),
    ("any", "all"),
    ("sorted", "reversed"),
    ("floor", "ceil"),
    ("int", "round"),
    ("str", "repr"),
    ("isinstance", "issubclass"),
)
"""Builtin (or ``from math import``) functions and their confusable twins."""

METHOD_SWAPS = _swaps(
    ("append", "extend"),
    ("append", "appendleft"),
    ("add", "update"),
    ("remove", "discard"),
    ("pop", "popleft"),
    ("get", "pop"),
    ("startswith", "endswith"),
    ("find", "rfind"),
    ("index", "rindex"),
    ("strip", "lstrip"),
    ("strip", "rstrip"),
    ("lstrip", "rstrip"),
    ("split", "rsplit"),
    ("ljust", "rjust"),
    ("upper", "lower"),
    ("isupper", "islower"),
    ("keys", "values"),
    ("keys", "items"),
    ("values", "items"),
    ("sort", "reverse"),
    ("floor", "ceil"),
    ("min", "max"),
    ("argmin", "argmax"),
    ("copy", "deepcopy"),
    ("encode", "decode"),
    ("isdigit", "isalpha"),
    ("isdigit", "isalnum"),
    ("isalpha", "isalnum"),
)
"""Method names and their confusable twins (any receiver)."""

WRAPPERS = ("len", "int", "str", "abs", "list", "sorted")
"""Functions :func:`call_wrap` wraps an expression in, most likely first."""

UNWRAPPABLE = frozenset(
    {"len", "abs", "int", "float", "str", "list", "tuple", "set", "sorted", "reversed",
     "bool", "round", "repr", "iter"}
)  # fmt: skip
"""One-argument builtins :func:`call_unwrap` removes."""

_VALUE_ROLES = frozenset({"operand", "return", "assign", "arg", "kwarg", "iter", "element"})
_ADD_ROLES = _VALUE_ROLES | {"cond"}
_DECIMAL = re.compile(r"[0-9][0-9_]*\Z")
_KEYWORD_OPS = ("is", "is not", "in", "not in")


# -- helpers ---------------------------------------------------------------------------
def object_key(node: cst.BaseExpression, scope: Scope) -> str | None:
    """The libcst twin of :meth:`Facts.object_key`."""
    if isinstance(node, cst.Name):
        if scope.self_name is not None and node.value == scope.self_name:
            return f"<self of {scope.class_name}>"
        return node.value
    if isinstance(node, cst.Attribute):
        base = object_key(node.value, scope)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def int_value(node: cst.BaseExpression) -> int | None:
    """The value of a decimal integer literal, or of ``-`` one (else ``None``)."""
    if node.lpar:
        return None
    if isinstance(node, cst.Integer) and _DECIMAL.match(node.value):
        return int(node.value.replace("_", ""))
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
        and not node.expression.lpar
        and _DECIMAL.match(node.expression.value)
    ):
        return -int(node.expression.value.replace("_", ""))
    return None


def _int_text(value: int) -> tuple[str, int]:
    return str(value), 12 if value < 0 else ATOM


def _one_line(text: str) -> tuple[str, bool]:
    """Donor text usable anywhere: multi-line text gets parentheses."""
    return (f"({text})", True) if "\n" in text else (text, False)


@lru_cache(maxsize=4096)
def _donor_prec(text: str) -> int | None:
    return ast_prec(text)


def _donor(text: str) -> tuple[str, int] | None:
    p = _donor_prec(text)
    if p is None:
        return None
    one, wrapped = _one_line(text)
    return one, ATOM if wrapped else p


def _is_string(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString)


def _callee(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Name):
        return call.func.value
    if isinstance(call.func, cst.Attribute):
        return "." + call.func.attr.value
    return None


def _builtin(u: Unit, name: str) -> bool:
    return u.scope.kind_of(name) is None


def _variable(u: Unit, site: Site, name: str) -> bool:
    if name in ("True", "False", "None") or name == u.scope.self_name:
        return False
    return name in site.local or u.scope.kind_of(name) == "var"


def pm1(u: Unit, node: cst.BaseExpression) -> list[tuple[str, int]]:
    """``node`` plus and minus one, as (text, precedence), simplest forms first."""
    value = int_value(node)
    if value is not None:
        return [_int_text(value + 1), _int_text(value - 1)]
    if (
        isinstance(node, cst.BinaryOperation)
        and not node.lpar
        and isinstance(node.operator, cst.Add | cst.Subtract)
    ):
        k = int_value(node.right)
        if k is not None and k >= 0:
            c = k if isinstance(node.operator, cst.Add) else -k
            left = u.text(node.left)
            out = []
            for c2 in (c + 1, c - 1):
                if c2 == 0:
                    out.append((left, prec(node.left)))
                else:
                    out.append((f"{left} {'+' if c2 > 0 else '-'} {abs(c2)}", 10))
            return out
    left = u.fitted(node, 10)
    return [(f"{left} + 1", 10), (f"{left} - 1", 10)]


def _spaces(u: Unit, op: cst.CSTNode) -> tuple[str, str]:
    """The whitespace before and after an operator token."""
    before = getattr(op, "whitespace_before", None)
    after = getattr(op, "whitespace_after", None)
    return (
        u.ws(before) if isinstance(before, cst.CSTNode) else "",
        u.ws(after) if isinstance(after, cst.CSTNode) else "",
    )


def _site_of(u: Unit) -> dict[int, Site]:
    return {id(site.node): site for site in u.sites}


# -- operators -------------------------------------------------------------------------
def comparison_operator(u: Unit) -> None:
    """``<`` <-> ``<=`` and the other relational, identity and membership operators."""
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Comparison):
            continue
        left: cst.BaseExpression = node.left
        for target in node.comparisons:
            op = target.operator
            token = _CMP.get(type(op))
            literal = any(
                isinstance(x, cst.Integer | cst.Float | cst.Imaginary) or _is_string(x)
                for x in (left, target.comparator)
            )
            left = target.comparator
            if token is None:
                continue
            before, after = _spaces(u, op)
            for alt in _CMP_ALTS[token]:
                if alt in ("is", "is not") and literal:
                    continue
                b, a = before, after
                if alt in _KEYWORD_OPS:
                    b, a = b or " ", a or " "
                u.replace("comparison_operator", op, f"{b}{alt}{a}", f"{token} -> {alt}")


def _binary_change(
    u: Unit,
    family: str,
    site: Site,
    node: cst.BinaryOperation | cst.BooleanOperation,
    token: str,
    new_prec: int,
    needs: tuple[int, int],
    what: str,
) -> None:
    op = node.operator
    before, after = _spaces(u, op)
    op_text = f"{before}{token}{after}"
    fits = bool(node.lpar) or new_prec >= site.need
    if fits and prec(node.left) >= needs[0] and prec(node.right) >= needs[1]:
        u.replace(family, op, op_text, what)
        return
    body = u.fitted(node.left, needs[0]) + op_text + u.fitted(node.right, needs[1])
    start, end = u.span(node.left)[0], u.span(node.right)[1]
    u.splice(family, start, end, body if fits else f"({body})", what)


def arithmetic_operator(u: Unit) -> None:
    """``+`` <-> ``-``, ``*`` -> ``/ // + **``, ``//`` <-> ``/``, ... and augmented ones."""
    family = "arithmetic_operator"
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.BinaryOperation):
            continue
        token = _ARITH[type(node.operator)]
        if token in ("+", "%") and (_is_string(node.left) or _is_string(node.right)):
            continue
        for alt in _ARITH_ALTS[token]:
            p = _TOKEN_PREC[alt]
            needs = (14, 12) if alt == "**" else (p, p + 1)
            _binary_change(u, family, site, node, alt, p, needs, f"{token} -> {alt}")
    for small in _smalls(u.node):
        if isinstance(small, cst.AugAssign):
            op = small.operator
            token = _AUG[type(op)]
            if token in ("+", "%") and _is_string(small.value):
                continue
            before, after = _spaces(u, op)
            for alt in _ARITH_ALTS[token]:
                u.replace(family, op, f"{before}{alt}={after}", f"{token}= -> {alt}=")


def boolean_operator(u: Unit) -> None:
    """``and`` <-> ``or``."""
    for site in u.sites:
        node = site.node
        if isinstance(node, cst.BooleanOperation):
            if isinstance(node.operator, cst.And):
                new, p, needs = "or", 2, bool_needs(cst.Or())
            else:
                new, p, needs = "and", 3, bool_needs(cst.And())
            old = "or" if new == "and" else "and"
            _binary_change(u, "boolean_operator", site, node, new, p, needs, f"{old} -> {new}")


def unary_operator(u: Unit) -> None:
    """Remove a unary operator, or add ``not`` to a boolean operand, ``-`` to an
    arithmetic operand."""
    family = "unary_operator"
    for site in u.sites:
        node = site.node
        if isinstance(node, cst.UnaryOperation):
            token = _UNARY[type(node.operator)]
            inner = node.expression
            u.replace(
                family,
                node,
                u.fitted(inner, site.need),
                f"{token.strip()} {short(u.text(inner), 20)} -> {short(u.text(inner), 20)}",
            )
            continue
        if site.role != "operand":
            continue
        parent = site.parent
        if isinstance(parent, cst.BooleanOperation):
            text = fit("not " + u.fitted(node, 4), 4, site.need)
            u.replace(family, node, text, f"add not: {short(text)}")
        elif (
            isinstance(parent, cst.BinaryOperation)
            and isinstance(parent.operator, _ARITHMETIC_OPERAND_PARENTS)
            and isinstance(node, cst.Name | cst.Attribute | cst.Subscript | cst.Call)
            and not (isinstance(node, cst.Name) and not _variable(u, site, node.value))
        ):
            text = fit("-" + u.fitted(node, 12), 12, site.need)
            u.replace(family, node, text, f"add -: {short(text)}")


_COND_PARENTS = (cst.If, cst.While, cst.IfExp, cst.CompIf, cst.Assert)


def _conditions(u: Unit) -> Iterable[Site]:
    return (s for s in u.sites if s.role == "cond" and isinstance(s.parent, _COND_PARENTS))


def condition_negate(u: Unit) -> None:
    """``if c`` -> ``if not c`` (and ``not c`` -> ``c``) for if/while/ternary/comprehension
    and assert conditions."""
    for site in _conditions(u):
        node = site.node
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            if not node.lpar:
                u.replace(
                    "condition_negate",
                    node,
                    u.fitted(node.expression, site.need),
                    "negate condition",
                )
            continue
        inner = u.text(node) if prec(node) >= 6 else f"({u.bare(node)})"
        u.replace("condition_negate", node, fit("not " + inner, 4, site.need), "negate condition")


def condition_drop(u: Unit) -> None:
    """``a and b`` -> ``a`` / ``b`` (and the same for ``or``)."""
    for site in u.sites:
        node = site.node
        if isinstance(node, cst.BooleanOperation):
            for keep, drop in ((node.left, node.right), (node.right, node.left)):
                u.replace(
                    "condition_drop",
                    node,
                    u.fitted(keep, site.need),
                    f"drop `{short(u.text(drop), 30)}`",
                )


def condition_widen(u: Unit) -> None:
    """``c`` -> ``c and d`` / ``c or d``, ``d`` a condition of the same function."""
    info = u.info
    for site in _conditions(u):
        node = site.node
        own = " ".join(u.text(node).split())
        line = u.line(node)
        donors = sorted(
            (
                (abs(dline - line), text)
                for text, dline in u.scope.conditions
                if not (info.first <= dline <= info.head_last) and " ".join(text.split()) != own
            ),
        )
        for _, text in donors[:MAX_DONOR_CONDITIONS]:
            donor = _donor(text)
            if donor is None:
                continue
            d_text, d_prec = donor
            for op, p, (lneed, rneed) in (("and", 3, (3, 4)), ("or", 2, (2, 3))):
                new = f"{u.fitted(node, lneed)} {op} {fit(d_text, d_prec, rneed)}"
                u.replace(
                    "condition_widen", node, fit(new, p, site.need), f"{op} {short(d_text, 30)}"
                )


def _direct_range_arg(site: Site) -> bool:
    parent = site.parent
    return (
        site.role == "arg"
        and isinstance(parent, cst.Call)
        and isinstance(parent.func, cst.Name)
        and parent.func.value == "range"
    )


def off_by_one_constant(u: Unit) -> None:
    """An integer constant moves by one; so does any argument of ``range()``."""
    family = "off_by_one_constant"
    sites = _site_of(u)
    for site in u.sites:
        node = site.node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            if node.func.value == "range" and _builtin(u, "range"):
                for arg in node.args:
                    if arg.keyword is None and not arg.star:
                        for text, p in pm1(u, arg.value):
                            u.replace(
                                family,
                                arg.value,
                                fit(text, p, 0),
                                f"{short(u.text(arg.value), 20)} -> {short(text, 20)}",
                            )
            continue
        value = int_value(node)
        if value is None or site.role in ("index", "slice") or _direct_range_arg(site):
            continue
        if isinstance(node, cst.Integer) and isinstance(site.parent, cst.UnaryOperation):
            continue
        parent = sites.get(id(site.parent)) if site.parent is not None else None
        if parent is not None and (parent.role in ("index", "slice") or _direct_range_arg(parent)):
            continue
        for new in (value + 1, value - 1):
            text, p = _int_text(new)
            u.replace(family, node, fit(text, p, site.need), f"{value} -> {new}")


def off_by_one_index(u: Unit) -> None:
    """``a[i]`` -> ``a[i + 1]`` / ``a[i - 1]``; ``a[0]`` <-> ``a[-1]``."""
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
            continue
        index = node.slice[0].slice
        if not isinstance(index, cst.Index) or index.star is not None:
            continue
        value = index.value
        if _is_string(value) or isinstance(value, cst.Tuple | cst.Float):
            continue
        options = pm1(u, value)
        number = int_value(value)
        if number == 0:
            options.append(("-1", 12))
        elif number == -1:
            options.append(("0", ATOM))
        seen: set[str] = set()
        for text, p in options:
            if text not in seen:
                seen.add(text)
                u.replace(
                    "off_by_one_index",
                    value,
                    fit(text, p, 1),
                    f"[{short(u.text(value), 20)}] -> [{short(text, 20)}]",
                )


def slice_bound(u: Unit) -> None:
    """A slice bound moves by one; an absent lower bound becomes 1, an absent upper -1,
    an upper -1 goes."""
    family = "slice_bound"
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Subscript):
            continue
        for element in node.slice:
            piece = element.slice
            if not isinstance(piece, cst.Slice):
                continue
            for bound in (piece.lower, piece.upper):
                if bound is None:
                    continue
                for text, p in pm1(u, bound):
                    u.replace(
                        family,
                        bound,
                        fit(text, p, 1),
                        f"slice {short(u.text(bound), 20)} -> {short(text, 20)}",
                    )
            if piece.lower is None:
                start = u.span(piece)[0]
                u.splice(family, start, start, "1", "slice lower bound 1")
            if piece.upper is None:
                at = u.span(piece.first_colon)[1]
                u.splice(family, at, at, "-1", "slice upper bound -1")
            elif int_value(piece.upper) == -1:
                start, end = u.span(piece.upper)
                u.splice(family, start, end, "", "slice upper bound -1 removed")


def operand_swap(u: Unit) -> None:
    """``a - b`` -> ``b - a`` for non-commutative operators; ``x in y`` -> ``y in x``."""
    for site in u.sites:
        node = site.node
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _NON_COMMUTATIVE):
            if isinstance(node.operator, cst.Modulo) and _is_string(node.left):
                continue
            lneed, rneed = operand_needs(node.operator)
            left, right = node.left, node.right
            text = u.fitted(right, lneed) + u.text(node.operator) + u.fitted(left, rneed)
            start, end = u.span(left)[0], u.span(right)[1]
            u.splice("operand_swap", start, end, text, f"swap operands of {short(text, 30)}")
        elif (
            isinstance(node, cst.Comparison)
            and len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, cst.In | cst.NotIn)
        ):
            target = node.comparisons[0]
            text = u.text(target.comparator) + u.text(target.operator) + u.text(node.left)
            start, end = u.span(node.left)[0], u.span(target.comparator)[1]
            u.splice("operand_swap", start, end, text, f"swap operands of {short(text, 30)}")


def call_args_swap(u: Unit) -> None:
    """Two positional arguments of a call swap places."""
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call):
            continue
        positional = [(k, a) for k, a in enumerate(node.args) if a.keyword is None and not a.star]
        pairs = [
            (positional[x], positional[y])
            for x in range(len(positional))
            for y in range(x + 1, len(positional))
            if len(positional) <= 4 or y == x + 1
        ]
        for (ka, a), (kb, b) in pairs:
            a0, a1 = u.span(a.value)
            b0, b1 = u.span(b.value)
            text = u.text(b.value) + u.src.text[a1:b0] + u.text(a.value)
            u.splice(
                "call_args_swap",
                a0,
                b1,
                text,
                f"swap arguments {ka + 1} and {kb + 1} of {short(u.text(node.func), 20)}",
            )


def identifier_replace(u: Unit) -> None:
    """A variable becomes another variable in scope (a function name another function)."""
    scope = u.scope
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Name) or site.role in ("callee", "receiver", "target"):
            continue
        name = node.value
        if name in ("True", "False", "None") or name == scope.self_name:
            continue
        line = u.line(node)
        kind = "var" if name in site.local else scope.kind_of(name)
        if kind == "var":
            pool = [n for n in scope.variables() if n != name and n not in site.local]
            local = [n for n in site.local if n != name]
            if site.role == "store":
                local = []
            options = local + scope.nearest(pool, line)
            limit = MAX_NAMES
        elif kind in ("func", "class"):
            options = scope.nearest(
                [n for n in scope.callables() if n != name and scope.kind_of(n) == kind], line
            )
            limit = MAX_CALLABLES
        else:
            continue
        for new in options[:limit]:
            u.replace("identifier_replace", node, new, f"{name} -> {new}")


def attribute_replace(u: Unit) -> None:
    """``obj.a`` -> ``obj.b``, ``b`` used on the same object elsewhere in the file."""
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Attribute) or site.role == "callee":
            continue
        key = object_key(node.value, u.scope)
        if key is None:
            continue
        line = u.line(node)
        attr = node.attr.value
        used = u.facts.attrs.get(key, {})
        options = sorted(
            (n for n in used if n != attr),
            key=lambda n: (min(abs(x - line) for x in used[n]), n),
        )
        for new in options[:MAX_NAMES]:
            u.replace("attribute_replace", node.attr, new, f".{attr} -> .{new}")


def _nearest_literals(u: Unit, kind: str, line: int, exclude: set[object]) -> list[str]:
    seen = set(exclude)
    out = []
    for lit in sorted(
        (lit for lit in u.facts.literals if lit.kind == kind),
        key=lambda lit: (abs(lit.line - line), lit.line),
    ):
        if lit.value not in seen and "\n" not in lit.text:
            seen.add(lit.value)
            out.append(lit.text)
    return out


def literal_replace(u: Unit) -> None:
    """A literal becomes another of its type in the file (or 0/1, '' or an empty
    container)."""
    family = "literal_replace"
    for site in u.sites:
        node = site.node
        line = u.line(node)
        if isinstance(node, cst.Integer) and isinstance(site.parent, cst.UnaryOperation):
            continue
        number: object = None
        if isinstance(node, cst.Integer | cst.Float):
            number = node.evaluated_value
        elif (
            isinstance(node, cst.UnaryOperation)
            and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, cst.Integer | cst.Float)
        ):
            number = -node.expression.evaluated_value
        if isinstance(number, int | float):
            kind = "int" if isinstance(number, int) else "float"
            exclude: set[object] = {number}
            if isinstance(number, int):
                base = [t for t in ("0", "1") if int(t) != number]
                exclude |= {number + 1, number - 1, 0, 1}  # ±1: off_by_one_constant's
            else:
                base = [t for t in ("0.0", "1.0") if float(t) != number]
                exclude |= {0.0, 1.0}
            options = base + _nearest_literals(u, kind, line, exclude)
            for text in options[:MAX_LITERALS]:
                p = 12 if text.startswith("-") else ATOM
                u.replace(
                    family, node, fit(text, p, site.need), f"{short(u.text(node), 20)} -> {text}"
                )
        elif isinstance(node, cst.SimpleString) and not isinstance(site.parent, cst.Expr):
            value = node.evaluated_value
            kind = "bytes" if isinstance(value, bytes) else "str"
            options = []
            if value:
                options.append(f"{node.prefix}{node.quote}{node.quote}")
            options += _nearest_literals(u, kind, line, {value})
            for text in options[:MAX_LITERALS]:
                u.replace(family, node, text, f"{short(u.text(node), 20)} -> {short(text, 20)}")
        elif site.role in _VALUE_ROLES:
            empty = _empty_display(node)
            if empty is not None:
                u.replace(family, node, empty, f"{short(u.text(node), 20)} -> {empty}")


def _empty_display(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.List) and node.elements:
        return "[]"
    if isinstance(node, cst.Dict) and node.elements:
        return "{}"
    if isinstance(node, cst.Set) and node.elements:
        return "set()"
    if isinstance(node, cst.Tuple) and node.elements and node.lpar:
        return "()"
    return None


def boolean_literal(u: Unit) -> None:
    """``True`` <-> ``False``."""
    for site in u.sites:
        node = site.node
        if isinstance(node, cst.Name) and node.value in ("True", "False") and site.role != "store":
            new = "False" if node.value == "True" else "True"
            u.replace("boolean_literal", node, new, f"{node.value} -> {new}")


def builtin_swap(u: Unit) -> None:
    """``min`` <-> ``max``, ``append`` <-> ``extend``, ... (the table in the module
    docstring)."""
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Name) and func.value in FUNCTION_SWAPS:
            if u.scope.kind_of(func.value) in (None, "import"):
                for alt in FUNCTION_SWAPS[func.value]:
                    u.replace("builtin_swap", func, alt, f"{func.value} -> {alt}")
        elif isinstance(func, cst.Attribute) and func.attr.value in METHOD_SWAPS:
            for alt in METHOD_SWAPS[func.attr.value]:
                u.replace("builtin_swap", func.attr, alt, f".{func.attr.value} -> .{alt}")


def _accepts(facts: Facts, name: str, call: cst.Call) -> bool:
    signatures = facts.defs.get(name)
    if not signatures:
        return True
    n_pos = sum(1 for a in call.args if a.keyword is None and not a.star)
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return any(
        s.min_pos <= n_pos
        and (s.max_pos is None or n_pos <= s.max_pos)
        and keywords <= set(s.keywords)
        for s in signatures
    )


def function_name_replace(u: Unit) -> None:
    """A call calls another function (or method of the same object) of the file that
    accepts its arguments."""
    scope, facts = u.scope, u.facts
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        line = u.line(node)
        if isinstance(func, cst.Name):
            kind = scope.kind_of(func.value)
            if kind not in ("func", "class"):
                continue
            options = [
                n
                for n in scope.callables()
                if n != func.value and scope.kind_of(n) == kind and _accepts(facts, n, node)
            ]
            for new in scope.nearest(options, line)[:MAX_CALLABLES]:
                u.replace("function_name_replace", func, new, f"{func.value}() -> {new}()")
        elif isinstance(func, cst.Attribute):
            key = object_key(func.value, scope)
            if key is None:
                continue
            names = list(facts.methods.get(key, {}))
            if key.startswith("<self of ") and scope.class_name is not None:
                names += facts.class_methods.get(scope.class_name, [])
            attr = func.attr.value
            seen: set[str] = {attr}
            options = []
            for n in names:
                if n not in seen and not n.startswith("__") and _accepts(facts, n, node):
                    seen.add(n)
                    options.append(n)
            for new in options[:MAX_CALLABLES]:
                u.replace("function_name_replace", func.attr, new, f".{attr}() -> .{new}()")


def _wrappable(u: Unit, site: Site) -> bool:
    node = site.node
    if site.role not in _VALUE_ROLES:
        return False
    if isinstance(node, cst.Name):
        return _variable(u, site, node.value)
    return isinstance(node, cst.Attribute | cst.Subscript | cst.Call)


def call_wrap(u: Unit) -> None:
    """``x`` -> ``len(x)`` (and int, str, abs, list, sorted)."""
    for site in u.sites:
        node = site.node
        if not _wrappable(u, site):
            continue
        parent = site.parent
        if (
            site.role == "arg"
            and isinstance(parent, cst.Call)
            and isinstance(parent.func, cst.Name)
            and parent.func.value in UNWRAPPABLE
        ):
            continue
        inner_callee = (
            node.func.value
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
            else None
        )
        bare = u.bare(node)
        for wrapper in WRAPPERS:
            if wrapper != inner_callee and _builtin(u, wrapper):
                u.replace(
                    "call_wrap",
                    node,
                    f"{wrapper}({bare})",
                    f"{short(bare, 20)} -> {wrapper}({short(bare, 20)})",
                )


def call_unwrap(u: Unit) -> None:
    """``len(x)`` -> ``x`` for one-argument builtins; ``x.m()`` -> ``x``."""
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call) or isinstance(site.parent, cst.Expr):
            continue
        func = node.func
        if isinstance(func, cst.Name) and func.value in UNWRAPPABLE and _builtin(u, func.value):
            if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                inner = node.args[0].value
                u.replace(
                    "call_unwrap",
                    node,
                    u.fitted(inner, site.need),
                    f"{func.value}({short(u.text(inner), 20)}) -> {short(u.text(inner), 20)}",
                )
        elif isinstance(func, cst.Attribute) and not node.args:
            u.replace(
                "call_unwrap",
                node,
                u.fitted(func.value, site.need),
                f".{func.attr.value}() removed",
            )


def method_call_add(u: Unit) -> None:
    """``x`` -> ``x.m()``, ``m`` called with no argument on ``x`` in the file (and, for a
    variable, the two such methods the file calls most)."""
    facts = u.facts
    common = sorted(facts.zero_arg_methods, key=lambda m: (-facts.zero_arg_methods[m], m))
    for site in u.sites:
        node = site.node
        if site.role not in _ADD_ROLES or not isinstance(node, cst.Name | cst.Attribute):
            continue
        if isinstance(node, cst.Name) and not _variable(u, site, node.value):
            continue
        key = object_key(node, u.scope)
        own = facts.zero_arg_by_key.get(key, []) if key is not None else []
        options = list(own)
        if isinstance(node, cst.Name):  # an attribute's type is less of a guess: its own only
            options += [m for m in common[:2] if m not in own]
        base = u.fitted(node, 15)
        for method in options[:3]:
            u.replace(
                "method_call_add",
                node,
                f"{base}.{method}()",
                f"{short(base, 20)} -> {short(base, 20)}.{method}()",
            )


def attribute_access_add(u: Unit) -> None:
    """``x`` -> ``x.a``, ``a`` read on ``x`` elsewhere in the file."""
    for site in u.sites:
        node = site.node
        if site.role not in _ADD_ROLES or not isinstance(node, cst.Name):
            continue
        if not _variable(u, site, node.value):
            continue
        key = object_key(node, u.scope)
        used = u.facts.attrs.get(key, {}) if key is not None else {}
        line = u.line(node)
        options = sorted(used, key=lambda n: (min(abs(x - line) for x in used[n]), n))
        for attr in options[:3]:
            u.replace(
                "attribute_access_add",
                node,
                f"{node.value}.{attr}",
                f"{node.value} -> {node.value}.{attr}",
            )


def call_args_more(u: Unit) -> None:
    """A call gains a keyword another call of the same function passes, the next
    positional argument a longer call passes, or ``p=p`` for a parameter ``p`` of a
    function of the file that a variable in scope is named after."""
    facts, scope = u.facts, u.scope
    variables = set(scope.variables())
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call):
            continue
        callee = _callee(node)
        if callee is None:
            continue
        args = node.args
        positional = [a for a in args if a.keyword is None and not a.star]
        passed = {a.keyword.value for a in args if a.keyword is not None}
        starred = any(a.star for a in args)
        if args:
            at = u.span(args[-1].value)[1]
            sep = ", "
        else:
            at = u.span(node.func)[1] + len(u.ws(node.whitespace_after_func)) + 1
            sep = ""
        options: list[str] = []
        for kw, value in facts.callee_kwargs.get(callee, {}).items():
            if kw not in passed:
                options.append(f"{kw}={_one_line(value)[0]}")
        longest = facts.callee_longest.get(callee, ())
        if not passed and not starred and len(longest) > len(positional):
            options.append(_one_line(longest[len(positional)])[0])
        for signature in facts.defs.get(callee.lstrip("."), []):
            for k, param in enumerate(signature.keywords):
                if k >= len(positional) and param not in passed and param in variables:
                    options.append(f"{param}={param}")
        seen: set[str] = set()
        for text in options:
            if text not in seen and len(seen) < 4:
                seen.add(text)
                u.splice(
                    "call_args_more",
                    at,
                    at,
                    sep + text,
                    f"add argument {short(text, 30)}",
                    compile=True,
                )


def call_args_less(u: Unit) -> None:
    """A call loses one argument."""
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call) or not node.args:
            continue
        args = node.args
        for k, arg in enumerate(args):
            if len(args) == 1:
                start, end = u.span(arg)
            elif k < len(args) - 1:
                start, end = u.span(arg)[0], u.span(args[k + 1])[0]
            else:
                start, end = u.span(args[k - 1].value)[1], u.span(arg.value)[1]
            u.splice(
                "call_args_less",
                start,
                end,
                "",
                f"drop argument {short(u.text(arg).strip(' ,'), 30)}",
            )


def keyword_arg_replace(u: Unit) -> None:
    """``f(a=x)`` -> ``f(b=x)``, ``b`` another keyword of ``f`` in the file."""
    facts = u.facts
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call):
            continue
        callee = _callee(node)
        if callee is None:
            continue
        names = list(facts.callee_kwargs.get(callee, {}))
        for signature in facts.defs.get(callee.lstrip("."), []):
            names += list(signature.keywords)
        passed = {a.keyword.value for a in node.args if a.keyword is not None}
        options = list(dict.fromkeys(n for n in names if n not in passed))
        for arg in node.args:
            if arg.keyword is None:
                continue
            for new in options[:MAX_CALLABLES]:
                u.replace(
                    "keyword_arg_replace",
                    arg.keyword,
                    new,
                    f"{arg.keyword.value}= -> {new}=",
                    compile=True,
                )


def caller_replace(u: Unit) -> None:
    """``a.m()`` -> ``b.m()``, ``b`` a variable in scope (those ``m`` is called on first)."""
    facts, scope = u.facts, u.scope
    for site in u.sites:
        node = site.node
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            continue
        base = node.func.value
        if not isinstance(base, cst.Name) or not _variable(u, site, base.value):
            continue
        method = node.func.attr.value
        line = u.line(node)
        pool = [n for n in scope.variables() if n != base.value]
        near = scope.nearest(pool, line)
        options = [n for n in near if method in facts.methods.get(n, {})]
        options += [n for n in near if n not in options]
        for new in options[:MAX_CALLABLES]:
            u.replace("caller_replace", base, new, f"{base.value}.{method}() -> {new}.{method}()")


def return_value(u: Unit) -> None:
    """A return value becomes another value the function returns, a variable or a
    literal; a bare ``return`` returns what another return does."""
    scope = u.scope
    for small in _smalls(u.node):
        if not isinstance(small, cst.Return):
            continue
        line = u.line(small)
        others = [
            text for text, rline in sorted(scope.returns, key=lambda r: (abs(r[1] - line), r[1]))
        ]
        if small.value is None:
            start = u.span(small)[0] + len("return")
            for text in list(dict.fromkeys(others))[:MAX_NAMES]:
                u.splice(
                    "return_value",
                    start,
                    start,
                    " " + _one_line(text)[0],
                    f"return -> return {short(text, 30)}",
                )
            continue
        current = " ".join(u.text(small.value).split())
        options = [_one_line(t)[0] for t in others]
        options += scope.nearest(scope.variables(), line)[:3]
        options += ["None", "True", "False", "0", "-1", "[]"]
        seen = {current}
        count = 0
        for text in options:
            flat = " ".join(text.split())
            if flat in seen or count >= 8:
                continue
            seen.add(flat)
            count += 1
            u.replace(
                "return_value",
                small.value,
                text,
                f"return {short(current, 20)} -> return {short(text, 20)}",
            )


def decorator_change(u: Unit) -> None:
    """``@staticmethod``/``@classmethod``/``@property`` removed, static <-> class."""
    node = u.node
    if not isinstance(node, cst.FunctionDef) or u.kind != "header":
        return
    for decorator in node.decorators:
        expr = decorator.decorator
        if not isinstance(expr, cst.Name):
            continue
        name = expr.value
        if name not in ("staticmethod", "classmethod", "property"):
            continue
        line = u.line(expr)
        start, end = u.src.line_start(line), u.src.line_end(line)
        if u.src.text[start:end].strip() == f"@{name}":
            u.splice("decorator_change", start, end, "", f"@{name} removed")
        if name in ("staticmethod", "classmethod"):
            other = "classmethod" if name == "staticmethod" else "staticmethod"
            u.replace("decorator_change", expr, other, f"@{name} -> @{other}")


def _smalls(node: cst.CSTNode | None) -> list[cst.BaseSmallStatement]:
    if isinstance(node, cst.SimpleStatementLine):
        return list(node.body)
    body = getattr(node, "body", None)
    if isinstance(body, cst.SimpleStatementSuite):
        return list(body.body)
    return []


EXPRESSION_FAMILIES: dict[str, Callable[[Unit], None]] = {
    "comparison_operator": comparison_operator,
    "arithmetic_operator": arithmetic_operator,
    "boolean_operator": boolean_operator,
    "unary_operator": unary_operator,
    "condition_negate": condition_negate,
    "condition_drop": condition_drop,
    "condition_widen": condition_widen,
    "off_by_one_constant": off_by_one_constant,
    "off_by_one_index": off_by_one_index,
    "slice_bound": slice_bound,
    "operand_swap": operand_swap,
    "call_args_swap": call_args_swap,
    "identifier_replace": identifier_replace,
    "attribute_replace": attribute_replace,
    "literal_replace": literal_replace,
    "boolean_literal": boolean_literal,
    "builtin_swap": builtin_swap,
    "function_name_replace": function_name_replace,
    "call_wrap": call_wrap,
    "call_unwrap": call_unwrap,
    "method_call_add": method_call_add,
    "attribute_access_add": attribute_access_add,
    "call_args_more": call_args_more,
    "call_args_less": call_args_less,
    "keyword_arg_replace": keyword_arg_replace,
    "caller_replace": caller_replace,
    "return_value": return_value,
    "decorator_change": decorator_change,
}
"""Expression-level families by name (statement-level ones are in ``_ops_stmt``)."""
