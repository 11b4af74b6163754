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

from atlas_actors.swe.repair.analysis.cst_sites import ATOM, Site, bool_needs, operand_needs, prec
from atlas_actors.swe.repair.analysis.file_facts import Scope
from atlas_actors.swe.repair.families.statement_view import Unit, ast_prec, fit, short

__all__ = ["OPERATOR_FAMILIES"]

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

VALUE_ROLES = frozenset({"operand", "return", "assign", "arg", "kwarg", "iter", "element"})
ADD_ROLES = VALUE_ROLES | {"cond"}
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


def one_line(text: str) -> tuple[str, bool]:
    """Donor text usable anywhere: multi-line text gets parentheses."""
    return (f"({text})", True) if "\n" in text else (text, False)


@lru_cache(maxsize=4096)
def _donor_prec(text: str) -> int | None:
    return ast_prec(text)


def _donor(text: str) -> tuple[str, int] | None:
    p = _donor_prec(text)
    if p is None:
        return None
    one, wrapped = one_line(text)
    return one, ATOM if wrapped else p


def _is_string(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString)


def callee_name(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Name):
        return call.func.value
    if isinstance(call.func, cst.Attribute):
        return "." + call.func.attr.value
    return None


def is_builtin(u: Unit, name: str) -> bool:
    return u.scope.kind_of(name) is None


def is_variable(u: Unit, site: Site, name: str) -> bool:
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
    for small in small_statements(u.node):
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
            and not (isinstance(node, cst.Name) and not is_variable(u, site, node.value))
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


MAX_SYNTHESIZED = 32
"""Comparisons ``condition_synthesize`` builds per statement at most."""
_SYNTH_OPS: dict[str, tuple[str, ...]] = {
    "==": ("==", "!="),
    "!=": ("!=", "=="),
    # an ordering: itself, its complement, the other direction and its complement
    # (``age < 12`` -> ``age >= 65`` for a second range; ``n >= 3`` -> ``n <= 20`` for a
    # bound on the other side)
    "<": ("<", ">=", ">", "<="),
    "<=": ("<=", ">", ">=", "<"),
    ">": (">", "<=", "<", ">="),
    ">=": (">=", "<", "<=", ">"),
}


def _boolean_sites(u: Unit) -> Iterable[Site]:
    """Conditions, and comparisons or boolean operations returned or assigned."""
    for site in u.sites:
        if (site.role == "cond" and isinstance(site.parent, _COND_PARENTS)) or (
            site.role in ("return", "assign")
            and isinstance(site.node, cst.Comparison | cst.BooleanOperation)
        ):
            yield site


def _synthesized(u: Unit, numbers: tuple[int, ...]) -> list[str]:
    """Comparisons like the statement's own with one integer constant replaced by a number
    of the issue, under the comparison's operator and its variants (:data:`_SYNTH_OPS`):
    ``year % 4 == 0`` gives ``year % 100 != 0``, ``age < 12`` gives ``age >= 65``.
    Operands first on the left, numbers in the issue's order."""
    own = {" ".join(u.text(s.node).split()) for s in u.sites if isinstance(s.node, cst.Comparison)}
    ints = [s.node for s in u.sites if isinstance(s.node, cst.Integer)]
    text = u.src.text
    out: dict[str, None] = {}
    for site in u.sites:
        cmp = site.node
        if not isinstance(cmp, cst.Comparison) or len(cmp.comparisons) != 1:
            continue
        target = cmp.comparisons[0]
        op = _CMP.get(type(target.operator))
        ops = _SYNTH_OPS.get(op or "")
        if not ops:
            continue
        for side, other, left in ((cmp.left, target.comparator, True),
                                  (target.comparator, cmp.left, False)):  # fmt: skip
            s0, s1 = u.span(side)
            rest = " ".join(u.text(other).split())
            for node in ints:
                a, b = u.span(node)
                value = int_value(node)
                if not (s0 <= a and b <= s1) or value is None:
                    continue
                for n in numbers:
                    if n == value:
                        continue
                    changed = " ".join((text[s0:a] + str(n) + text[b:s1]).split())
                    for o in ops:
                        atom = f"{changed} {o} {rest}" if left else f"{rest} {o} {changed}"
                        if atom not in own:
                            out.setdefault(atom)
                        if len(out) >= MAX_SYNTHESIZED:
                            return list(out)
    return list(out)


def condition_synthesize(u: Unit) -> None:
    """``c`` -> ``c and d`` / ``c or d``, ``d`` a comparison shaped like one of the
    statement's with a constant the issue names (needs hints: without the issue's
    numbers it proposes nothing). Conditions, and boolean values returned or assigned."""
    numbers = u.hints.numbers
    if not numbers:
        return
    sites = list(_boolean_sites(u))
    if not sites:
        return
    atoms = _synthesized(u, numbers)
    for site in sites:
        node = site.node
        for atom in atoms:
            for op, p, (lneed, rneed) in (("and", 3, (3, 4)), ("or", 2, (2, 3))):
                new = f"{u.fitted(node, lneed)} {op} {fit(atom, 5, rneed)}"
                u.replace(
                    "condition_synthesize", node, fit(new, p, site.need), f"{op} {short(atom, 30)}"
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
            if node.func.value == "range" and is_builtin(u, "range"):
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


def small_statements(node: cst.CSTNode | None) -> list[cst.BaseSmallStatement]:
    if isinstance(node, cst.SimpleStatementLine):
        return list(node.body)
    body = getattr(node, "body", None)
    if isinstance(body, cst.SimpleStatementSuite):
        return list(body.body)
    return []


OPERATOR_FAMILIES: dict[str, Callable[[Unit], None]] = {
    "comparison_operator": comparison_operator,
    "arithmetic_operator": arithmetic_operator,
    "boolean_operator": boolean_operator,
    "unary_operator": unary_operator,
    "condition_negate": condition_negate,
    "condition_drop": condition_drop,
    "condition_widen": condition_widen,
    "condition_synthesize": condition_synthesize,
    "off_by_one_constant": off_by_one_constant,
    "off_by_one_index": off_by_one_index,
    "slice_bound": slice_bound,
    "operand_swap": operand_swap,
    "call_args_swap": call_args_swap,
}
"""The families that change operators, conditions, constants, indices and operands."""
