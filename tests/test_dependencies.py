"""Every third-party package atlas_actors imports is declared in pyproject.toml.

A package that only arrives through another one's dependencies (``docker`` through
swebench) disappears the day that one drops it; so each import must name a declared
distribution: a module-level import one of the required ``dependencies``, an import
inside a function (loaded on use) a required dependency or one of an extra's.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "atlas_actors"
IN_CONTAINER = PACKAGE / "swe" / "repair" / "incontainer"
"""Scripts copied into SWE containers and run by the container's Python: their imports
(pytest, each other) are the container's, not this package's."""


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> tuple[set[str], set[str]]:
    """(required distributions, distributions of the extras), canonical names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(specs: list[str]) -> set[str]:
        return {_canon(re.split(r"[\s<>=!~;\[]", s, maxsplit=1)[0]) for s in specs}

    extras: set[str] = set()
    for specs in project.get("optional-dependencies", {}).values():
        extras |= names(specs)
    return names(project["dependencies"]), extras


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(top-level module, line, at module level) of each absolute import in ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    nested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nested.update(id(n) for n in ast.walk(node) if n is not node)
    found: list[tuple[str, int, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module]
        else:
            continue
        for mod in mods:
            found.append((mod.split(".")[0], node.lineno, id(node) not in nested))
    return found


def _problems() -> list[str]:
    required, extras = _declared()
    dists = importlib.metadata.packages_distributions()
    problems: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(IN_CONTAINER):
            continue
        where = path.relative_to(ROOT)
        for top, line, module_level in _imports(path):
            if top in sys.stdlib_module_names or top in ("atlas_actors", "__future__"):
                continue
            owners = {_canon(d) for d in dists.get(top, [])}
            if not owners:
                problems.append(f"{where}:{line}: {top} is not installed (which package?)")
            elif module_level and not owners & required:
                problems.append(
                    f"{where}:{line}: {top} ({', '.join(sorted(owners))}) is imported at "
                    "module level but is not in [project] dependencies"
                )
            elif not owners & (required | extras):
                problems.append(
                    f"{where}:{line}: {top} ({', '.join(sorted(owners))}) is not declared "
                    "in pyproject.toml (dependencies or an extra)"
                )
    return problems


def test_every_third_party_import_is_declared() -> None:
    assert _problems() == []


def test_the_check_sees_an_undeclared_import(tmp_path: Path) -> None:
    """The scan finds imports where they are: at module level and inside functions."""
    src = tmp_path / "m.py"
    src.write_text("import docker\n\ndef f():\n    from PIL import Image\n    import json\n")
    assert _imports(src) == [("docker", 1, True), ("PIL", 4, False), ("json", 5, False)]
