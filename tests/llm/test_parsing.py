"""Code extraction, score parsing, usage arithmetic (no network)."""

from __future__ import annotations

import ast

import pytest

from atlas_actors.llm.extract import extract_program, parse_score
from atlas_actors.llm.usage import Usage

FLIP = "def transform(grid):\n    return [row[::-1] for row in grid]"


def _defines_transform(src: str | None) -> bool:
    """Parsed only, never executed: LLM code runs in the sandbox."""
    assert src is not None
    tree = ast.parse(src)
    return any(isinstance(n, ast.FunctionDef) and n.name == "transform" for n in tree.body)


# -- extraction ---------------------------------------------------------------------------


def test_extract_python_fence_with_chatty_text() -> None:
    text = f"Sure! The rule is a mirror.\n\n```python\n{FLIP}\n```\n\nHope this helps!"
    assert extract_program(text) == FLIP


def test_extract_bare_fence_and_py_label() -> None:
    assert extract_program(f"```\n{FLIP}\n```") == FLIP
    assert extract_program(f"```py\n{FLIP}\n```") == FLIP


def test_extract_picks_the_block_defining_transform_among_several() -> None:
    text = (
        "First an example of the data:\n```python\ngrid = [[1, 2], [3, 4]]\nprint(grid)\n```\n"
        "A wrong idea:\n```python\ndef transform(grid):\n    return grid\n```\n"
        f"The final answer:\n```python\n{FLIP}\n```\n"
        "And the expected output:\n```\n[[2, 1], [4, 3]]\n```"
    )
    assert extract_program(text) == FLIP


def test_extract_keeps_helper_block_before_transform() -> None:
    text = (
        "Helper:\n```python\ndef mirror(row):\n    return row[::-1]\n```\n"
        "Main:\n```python\ndef transform(grid):\n    return [mirror(r) for r in grid]\n```"
    )
    src = extract_program(text)
    assert src is not None
    assert "def mirror(row)" in src
    assert src.index("def mirror") < src.index("def transform")


def test_extract_bare_code_without_fences_and_trailing_prose() -> None:
    text = (
        "Here is my solution:\n"
        "import numpy as np\n\n"
        "def transform(grid):\n"
        "    a = np.array(grid)\n"
        "    return np.fliplr(a).tolist()\n\n"
        "This mirrors each row left to right.\n"
    )
    src = extract_program(text)
    assert src is not None
    assert src.startswith("import numpy as np")
    assert "This mirrors" not in src
    assert _defines_transform(src)


def test_extract_unterminated_fence_and_missing_numpy_import() -> None:
    text = "```python\ndef transform(grid):\n    return np.rot90(np.array(grid)).tolist()\n"
    src = extract_program(text)
    assert src is not None
    assert src.startswith("import numpy as np")
    assert _defines_transform(src)


def test_extract_prose_inside_the_fence_is_trimmed() -> None:
    text = f"```python\n{FLIP}\nThat's it: it flips each row.\n```"
    assert extract_program(text) == FLIP


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I cannot solve this puzzle.",
        "```python\ndef solve(grid):\n    return grid\n```",
        "```python\ndef transform(grid)\n    return grid\n```",  # syntax error
        '```json\n{"transform": 1}\n```',
    ],
)
def test_extract_returns_none_without_a_valid_transform(text: str) -> None:
    assert extract_program(text) is None


# -- scores ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Score: 7/10\nThe program handles every example.", 0.7),
        ("score 7/10", 0.7),
        ("**Score:** 9 / 10 - looks right", 0.9),
        ("Score: **6** out of 10", 0.6),
        ("0.8", 0.8),
        ("0.8 - probably right", 0.8),
        ('{"score": 0.9, "reason": "covers all pairs"}', 0.9),
        ('Here you go: {"score": 8, "reason": "good"} thanks', 0.8),
        ('{"score": "75%"}', 0.75),
        ("I'd say it is 80% likely to be correct.", 0.8),
        ("Rating (0-10): 3 because the colours are wrong", 0.3),
        ("Score: 85", 0.85),
        ("Score: 12/10", 1.0),
        ("Score: -3", 0.0),
        ("The answer is plausible. Confidence: 0.35.", 0.35),
        ("It gets 2 out of 4 right.", 0.5),
    ],
)
def test_parse_score_variants(text: str, expected: float) -> None:
    parsed = parse_score(text)
    assert parsed is not None
    assert parsed[0] == pytest.approx(expected)
    assert 0.0 <= parsed[0] <= 1.0


def test_parse_score_reason() -> None:
    assert parse_score('{"score": 0.2, "reason": "wrong colours"}') == (0.2, "wrong colours")
    score, reason = parse_score("Score: 4/10\nIt ignores the second object entirely.") or (0, "")
    assert score == pytest.approx(0.4)
    assert reason == "It ignores the second object entirely"


# -- usage -----------------------------------------------------------------------------------


def test_usage_adds_up() -> None:
    a = Usage(calls=2, tokens_in=100, tokens_out=50, retries=1, cost=0.5, cache_hits=1)
    b = Usage(calls=3, tokens_in=10, tokens_out=5, errors=1, cost=0.25, seconds=1.5)
    total = a + b
    assert (total.calls, total.tokens_in, total.tokens_out) == (5, 110, 55)
    assert (total.retries, total.errors, total.cache_hits) == (1, 1, 1)
    assert total.cost == pytest.approx(0.75)
    assert a.calls == 2  # + does not mutate
    a.add(b)
    assert a == total
    assert Usage.total([a, b, Usage()]).calls == 8
    d = total.as_dict()
    assert d["calls"] == 5.0
    assert d["tokens_in"] == 110.0
    assert d["cost"] == pytest.approx(0.75)
    assert all(isinstance(v, float) for v in d.values())
