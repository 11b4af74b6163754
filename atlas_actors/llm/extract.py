"""Pull programs and scores out of chatty LLM answers.

Nothing here runs model-written code: programs are only *parsed* (``ast.parse``)
to check they define a top-level ``transform``; they run later in the sandbox.
"""

from __future__ import annotations

import ast
import json
import math
import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CODE_START = re.compile(r"^(?:import |from \S+ import |def |class |@|[A-Za-z_][A-Za-z0-9_]* = )")


def _defines(source: str, name: str) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
        for node in tree.body
    )


def _with_imports(source: str) -> str:
    """Add ``import numpy as np`` when the code uses ``np.`` without importing it."""
    uses_np = re.search(r"\bnp\.", source) is not None
    if uses_np and not re.search(r"^\s*import numpy as np\b", source, re.MULTILINE):
        return "import numpy as np\n\n" + source
    return source


def _trim_to_parse(lines: list[str], name: str) -> str | None:
    """The longest prefix of ``lines`` that parses and defines ``name``."""
    for end in range(len(lines), 0, -1):
        candidate = "\n".join(lines[:end]).strip()
        if candidate and _defines(candidate, name):
            return candidate
    return None


def extract_program(text: str, name: str = "transform") -> str | None:
    """The Python source defining ``def {name}(...)`` in an LLM answer, or None.

    Handles fenced blocks (```python, ```py, bare ```, an unterminated last fence),
    several blocks (the last one defining ``name`` wins; helper blocks before it that
    define other functions are kept), bare code without fences, and prose before
    or after the code.
    """
    if not text:
        return None
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    code_blocks = [
        body for lang, body in blocks if lang in ("", "python", "py", "python3", "python3.11")
    ]
    defining = [b for b in code_blocks if _defines(b, name)]
    if defining:
        main = defining[-1].strip()
        helpers = [
            b.strip()
            for b in code_blocks[: code_blocks.index(defining[-1])]
            if not _defines(b, name) and _is_helper_for(b, main)
        ]
        source = "\n\n".join([*helpers, main]) if helpers else main
        return _with_imports(source)
    # A fenced block that almost parses (prose inside the fence, a cut-off tail).
    for block in reversed(code_blocks):
        trimmed = _trim_to_parse(block.strip().splitlines(), name)
        if trimmed:
            return _with_imports(trimmed)
    # Bare code: start at the first code-looking line before `def name`.
    lines = text.splitlines()
    def_at = next(
        (i for i, ln in enumerate(lines) if re.match(rf"\s*def {re.escape(name)}\s*\(", ln)),
        None,
    )
    if def_at is None:
        return None
    start = def_at
    while start > 0 and (_CODE_START.match(lines[start - 1]) or not lines[start - 1].strip()):
        start -= 1
    trimmed = _trim_to_parse([ln for ln in lines[start:] if not ln.startswith("```")], name)
    if trimmed is None:
        # Drop prose lines after the function body (non-indented, non-code lines).
        body: list[str] = []
        for i, ln in enumerate(lines[start:]):
            if (
                i > def_at - start
                and ln.strip()
                and not ln[0].isspace()
                and not _CODE_START.match(ln)
            ):
                break
            body.append(ln)
        trimmed = _trim_to_parse(body, name)
    return _with_imports(trimmed) if trimmed else None


def _is_helper_for(block: str, main: str) -> bool:
    """A block of only imports and definitions, defining a name ``main`` uses."""
    try:
        tree = ast.parse(block)
    except (SyntaxError, ValueError):
        return False
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    if not tree.body or not all(isinstance(n, defs) for n in tree.body):
        return False
    names = [
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    return any(re.search(rf"\b{re.escape(nm)}\s*\(", main) for nm in names)


# -- scores ------------------------------------------------------------------------------------

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_SCORE_KEY = re.compile(
    rf"\b(?:score|rating|confidence|probability|likelihood)\s*(?:\([^)\n]{{0,20}}\))?\s*[:=]?\s*"
    rf"\**\s*({_NUM})\s*\**\s*(%|/\s*({_NUM})|out of\s+({_NUM}))?",
    re.IGNORECASE,
)
_FRACTION = re.compile(rf"({_NUM})\s*(?:/|out of)\s*({_NUM})", re.IGNORECASE)
_PERCENT = re.compile(rf"({_NUM})\s*%")
_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.DOTALL)
_LEADING_NUM = re.compile(rf"^\s*\**\s*({_NUM})\b")


def _normalise(value: float, scale: float | None = None) -> float | None:
    if not math.isfinite(value):
        return None
    if scale is not None:
        if scale <= 0 or not math.isfinite(scale):
            return None
        value = value / scale
    elif value > 1.0:
        value = value / 10.0 if value <= 10.0 else value / 100.0
    return min(1.0, max(0.0, value))


def _reason_after(text: str, end: int) -> str:
    """The words after the score if there are a few, else the whole answer."""
    rest = " ".join(text[end:].split()).strip(" *.:;,-)")
    if len(rest.split()) >= 3:
        return rest[:500]
    return " ".join(text.split())[:500]


def parse_score(text: str) -> tuple[float, str] | None:
    """A score in [0, 1] and a reason from a judge's answer, or None if there is none.

    Understands JSON (``{"score": 0.8, "reason": ...}``), ``Score: 7/10``,
    ``7 out of 10``, ``Score: 0.8``, ``Score: 8`` (read as out of 10), percentages
    (``80%``) and a bare leading number; values are clamped to [0, 1]. A plain number
    above 1 is read out of 10 when <= 10, else out of 100.
    """
    if not text or not text.strip():
        return None
    for match in _JSON_OBJ.finditer(text):
        try:
            obj = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict):
            for key in ("score", "rating", "value", "confidence"):
                raw = obj.get(key)
                if isinstance(raw, int | float) and not isinstance(raw, bool):
                    value = _normalise(float(raw))
                elif isinstance(raw, str) and re.fullmatch(rf"\s*{_NUM}\s*%?\s*", raw):
                    value = (
                        _normalise(float(raw.strip().rstrip("%")), 100.0)
                        if raw.strip().endswith("%")
                        else _normalise(float(raw))
                    )
                else:
                    continue
                if value is not None:
                    reason = obj.get("reason") or obj.get("explanation") or obj.get("rationale")
                    rest = text[: match.start()] + text[match.end() :]
                    return value, str(reason) if reason else " ".join(rest.split())[:500]
    m = _SCORE_KEY.search(text)
    if m:
        num, suffix, denom, out_of = m.group(1), m.group(2), m.group(3), m.group(4)
        if suffix == "%":
            value = _normalise(float(num), 100.0)
        elif denom or out_of:
            value = _normalise(float(num), float(denom or out_of))
        else:
            value = _normalise(float(num))
        if value is not None:
            return value, _reason_after(text, m.end())
    for regex, scale in ((_FRACTION, None), (_PERCENT, 100.0)):
        m = regex.search(text)
        if m:
            value = (
                _normalise(float(m.group(1)), float(m.group(2)))
                if scale is None
                else _normalise(float(m.group(1)), scale)
            )
            if value is not None:
                return value, _reason_after(text, m.end())
    m = _LEADING_NUM.match(text)
    if m:
        value = _normalise(float(m.group(1)))
        if value is not None:
            return value, _reason_after(text, m.end())
    return None
