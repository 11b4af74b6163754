"""The package's layering, read from the source: the generic packages name no domain, and
no import circle exists among the modules (function-level imports count)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "atlas_actors"

GENERIC = ("search", "llm", "memory", "actors", "environments", "config.py", "types.py")
"""What serves every domain: none of it may know one."""
DOMAINS = ("arc", "swe")
"""The built-in domain packages."""

KNOWN_CYCLES: list[set[str]] = [
    # Ctx.turned (arc.infer) needs the op family's rigid transform; the family imports
    # arc.infer. The arc/ops rework moves rigid into arc.grids and ends this one.
    {"atlas_actors.arc.infer", "atlas_actors.arc.ops.geometry"},
]


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Ids of the nodes inside ``if TYPE_CHECKING:`` blocks (never executed)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


def _imported(module: str, tree: ast.AST, *, typing_too: bool) -> Iterator[tuple[str, int]]:
    """``(imported name, line)`` of every import in ``tree``, at any depth (relative
    imports resolved); ``typing_too`` includes those under ``TYPE_CHECKING``."""
    skip = set() if typing_too else _type_checking_nodes(tree)
    is_package = MODULES[module].name == "__init__.py"
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".") if is_package else module.split(".")[:-1]
                parent = parent[: len(parent) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def _in_generic(module: str) -> bool:
    rest = module.removeprefix("atlas_actors.")
    return any(rest == g.removesuffix(".py") or rest.startswith(g + ".") for g in GENERIC)


def _names_a_domain(name: str) -> bool:
    return any(
        name == f"atlas_actors.{d}" or name.startswith(f"atlas_actors.{d}.") for d in DOMAINS
    )


GENERIC_MODULES = sorted(m for m in MODULES if _in_generic(m))


def test_the_generic_packages_are_all_found() -> None:
    assert len(GENERIC_MODULES) > 30
    assert {"atlas_actors.config", "atlas_actors.types", "atlas_actors.search.mcts"} <= set(
        GENERIC_MODULES
    )


@pytest.mark.parametrize("module", GENERIC_MODULES)
def test_generic_modules_import_no_domain(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text())
    found = [
        f"line {line}: {name}"
        for name, line in _imported(module, tree, typing_too=True)
        if _names_a_domain(name)
    ]
    assert not found, f"{module} imports a domain: {found}"


def _code_strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """String constants that are values (docstrings and other bare strings are text)."""
    text = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in text:
            yield node


@pytest.mark.parametrize("module", GENERIC_MODULES)
def test_generic_modules_hold_no_domain_literal(module: str) -> None:
    """No ``"arc"``/``"swe"``, no lazy reference into a domain (``"atlas_actors.swe...:x"``)
    and none of a domain's action kinds."""
    tree = ast.parse(MODULES[module].read_text())
    found = [
        f"line {node.lineno}: {node.value!r}"
        for node in _code_strings(tree)
        if node.value in DOMAINS
        or node.value == "apply_patch"
        or _names_a_domain(node.value.partition(":")[0])
    ]
    assert not found, f"{module} names a domain: {found}"


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (module level and inside functions;
    ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        edges: set[str] = set()
        for name, _ in _imported(module, ast.parse(path.read_text()), typing_too=False):
            if name in MODULES:
                edges.add(name)
            elif name.rpartition(".")[0] in MODULES:
                edges.add(name.rpartition(".")[0])
        edges.discard(module)
        graph[module] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [{"a", "b", "c"}]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle() -> None:
    """No circle, not even one closed by an import inside a function (imports under
    ``TYPE_CHECKING`` are for the type checker and never run)."""
    graph = _graph()
    assert "atlas_actors.swe.repair.batch" in graph["atlas_actors.swe.environment"]
    cycles = [c for c in _cycles(graph) if c not in KNOWN_CYCLES]
    assert not cycles, f"import circles: {[sorted(c) for c in cycles]}"


SEARCH_INTERFACES = ("atlas_actors.search.base", "atlas_actors.search.proposers")
"""What a domain may take from ``search/``: the protocols it implements and the generic
proposer combinators; never a search algorithm (the search chooses the domain's parts,
not the other way round)."""

DOMAIN_MODULES = sorted(m for m in MODULES if _names_a_domain(m))


@pytest.mark.parametrize("module", DOMAIN_MODULES)
def test_domains_import_no_search_algorithm(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text())
    found = [
        f"line {line}: {name}"
        for name, line in _imported(module, tree, typing_too=False)
        if name.startswith("atlas_actors.search")
        and not any(name == i or name.startswith(i + ".") for i in SEARCH_INTERFACES)
    ]
    assert not found, f"{module} imports a search: {found}"
