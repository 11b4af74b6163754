"""Expression edit families on names and calls: identifier, attribute and literal
replacement, builtin and function-name swaps, wrapped and unwrapped calls, added and
dropped arguments, changed callers, return values and decorators (see
:mod:`atlas_actors.swe.repair.catalogue`). The operator families are in
:mod:`atlas_actors.swe.repair.families.expressions`."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from atlas_actors.swe.repair.analysis.cst_sites import ATOM, Site
from atlas_actors.swe.repair.analysis.file_facts import Facts
from atlas_actors.swe.repair.families.expressions import (
    ADD_ROLES,
    FUNCTION_SWAPS,
    MAX_CALLABLES,
    MAX_LITERALS,
    MAX_NAMES,
    METHOD_SWAPS,
    OPERATOR_FAMILIES,
    UNWRAPPABLE,
    VALUE_ROLES,
    WRAPPERS,
    callee_name,
    is_builtin,
    is_variable,
    object_key,
    one_line,
    small_statements,
)
from atlas_actors.swe.repair.families.statement_view import Unit, fit, short


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
        elif site.role in VALUE_ROLES:
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
    if site.role not in VALUE_ROLES:
        return False
    if isinstance(node, cst.Name):
        return is_variable(u, site, node.value)
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
            if wrapper != inner_callee and is_builtin(u, wrapper):
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
        if isinstance(func, cst.Name) and func.value in UNWRAPPABLE and is_builtin(u, func.value):
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
        if site.role not in ADD_ROLES or not isinstance(node, cst.Name | cst.Attribute):
            continue
        if isinstance(node, cst.Name) and not is_variable(u, site, node.value):
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
        if site.role not in ADD_ROLES or not isinstance(node, cst.Name):
            continue
        if not is_variable(u, site, node.value):
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
        callee = callee_name(node)
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
                options.append(f"{kw}={one_line(value)[0]}")
        longest = facts.callee_longest.get(callee, ())
        if not passed and not starred and len(longest) > len(positional):
            options.append(one_line(longest[len(positional)])[0])
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
        callee = callee_name(node)
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
        if not isinstance(base, cst.Name) or not is_variable(u, site, base.value):
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
    for small in small_statements(u.node):
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
                    " " + one_line(text)[0],
                    f"return -> return {short(text, 30)}",
                )
            continue
        current = " ".join(u.text(small.value).split())
        options = [one_line(t)[0] for t in others]
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


EXPRESSION_FAMILIES: dict[str, Callable[[Unit], None]] = {
    **OPERATOR_FAMILIES,
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
"""Every expression family by name."""
