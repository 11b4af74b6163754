"""Every prompt the LLM proposers and the LLM discriminator send, in one place.

Grids are rendered compactly: one line per row, one digit per cell (ARC colours are
0-9), under a heading with the grid's height x width. Only the train pairs and the
test *inputs* are ever shown; test outputs never reach a prompt.

Mutation follows Mind Evolution's *refinement through critical conversation*: a
critic turn reads the program and the verifier's per-pair feedback and says what is
wrong; an author turn then rewrites the program with that critique in hand.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from atlas_actors.arc.dsl import readable
from atlas_actors.types import Candidate, Outcome

Message = dict[str, Any]
GridLike = npt.NDArray[np.int_] | Sequence[Sequence[int]]

MAX_FEEDBACK_CHARS = 4000
"""Verifier feedback text longer than this is cut (long error tracebacks)."""

# -- the roles ----------------------------------------------------------------------------

SOLVER_SYSTEM = """\
You solve ARC-AGI puzzles by writing Python programs.
A puzzle shows example input/output grid pairs that share one hidden transformation.
A grid is a list of rows; each cell is a colour 0-9 (0 is usually the background).
Write a function `transform(grid)` that takes an input grid (a list of lists of int)
and returns the output grid (a list of lists of int). It must work for every example
and for the test inputs. You may use numpy and the Python standard library; import
what you use. Do not read files, use the network or print.
Answer with a short explanation of the rule, then exactly one ```python code block
that defines `transform`."""

CRITIC_SYSTEM = """\
You are a sharp, critical reviewer of programs written for ARC-AGI puzzles.
You are shown a puzzle, a candidate `transform(grid)` program and what a verifier
found when it ran the program on the examples. Explain precisely what the program
gets wrong: which examples fail, how its output differs from the expected output,
and what the true transformation must be. Be concrete and brief. Do not write code."""

JUDGE_SYSTEM = """\
You judge candidate solutions without running them. Estimate how likely the
candidate is to be fully correct, including on inputs it has not been checked on.
Answer on the first line with `Score: N/10` (N from 0 to 10), then one or two
sentences giving the reason."""

# -- rendering ------------------------------------------------------------------------------


def render_grid(grid: GridLike) -> str:
    """A grid as rows of digits, e.g. ``"010\\n111"`` (colours above 9 get spaces)."""
    arr = np.asarray(grid)
    if arr.ndim != 2:
        return repr(grid)
    if arr.size and (arr.min() < 0 or arr.max() > 9):
        return "\n".join(" ".join(str(int(v)) for v in row) for row in arr)
    return "\n".join("".join(str(int(v)) for v in row) for row in arr)


def _shape(grid: GridLike) -> str:
    arr = np.asarray(grid)
    return f"{arr.shape[0]}x{arr.shape[1]}" if arr.ndim == 2 else "?"


def render_task(train: Sequence[tuple[GridLike, GridLike]], test_inputs: Sequence[GridLike]) -> str:
    """The train pairs and the test inputs (never test outputs)."""
    parts = ["# Puzzle", ""]
    for i, (a, b) in enumerate(train):
        parts += [
            f"## train {i} input ({_shape(a)})",
            render_grid(a),
            f"## train {i} output ({_shape(b)})",
            render_grid(b),
            "",
        ]
    for i, a in enumerate(test_inputs):
        parts += [f"## test {i} input ({_shape(a)})", render_grid(a), ""]
    return "\n".join(parts).rstrip()


def render_program(solution: Any) -> str:
    """A candidate's solution as a code block: Python source as it is, a DSL program as
    the standalone Python it compiles to (what a model can read and rewrite: the
    programs the offline search found, in the hybrid mode), other data as JSON."""
    if isinstance(solution, str):
        return f"```python\n{solution.strip()}\n```"
    data = json.dumps(solution)
    text = readable(solution)
    if text is not None and text != data:
        return f"```python\n{text.strip()}\n```"
    return f"```json\n{data}\n```"


def render_feedback(
    outcome: Outcome | None,
    train: Sequence[tuple[GridLike, GridLike]] = (),
    max_wrong_shown: int = 2,
) -> str:
    """The verifier's verdict on a candidate: score, per-pair results, its feedback
    text, and, for up to ``max_wrong_shown`` wrong pairs, the program's output next
    to the expected one (when the verifier reported outputs)."""
    if outcome is None:
        return "The program has not been run yet."
    lines: list[str] = []
    checks = outcome.checks
    exact = sum(1 for c in checks if c.passed)
    head = f"Score {outcome.partial_score:.2f}"
    if checks:
        head += f": {exact} of {len(checks)} train examples exactly right"
    lines.append(head + ("." if not outcome.success else " (all correct)."))
    for c in checks:
        if c.passed:
            lines.append(f"- {c.name}: correct")
        elif c.error:
            lines.append(f"- {c.name}: ERROR: {c.error}")
        else:
            shape = "right shape" if c.well_formed else "WRONG SHAPE"
            lines.append(f"- {c.name}: wrong ({shape}, {c.similarity:.0%} of cells match)")
    text = outcome.feedback.strip()
    if text:
        if len(text) > MAX_FEEDBACK_CHARS:
            text = text[:MAX_FEEDBACK_CHARS] + "\n... (cut)"
        lines += ["", "Verifier feedback:", text]
    if train:
        shown = 0
        for i, c in enumerate(checks[: len(train)]):
            if shown >= max_wrong_shown:
                break
            if c.passed or c.output is None:
                continue
            want = train[i][1]
            lines += [
                "",
                f"train {i}: the program returned ({_shape(c.output)}):",
                render_grid(c.output),
                f"train {i}: expected ({_shape(want)}):",
                render_grid(want),
            ]
            shown += 1
    return "\n".join(lines)


# -- the conversations -------------------------------------------------------------------------


def initial_messages(task_text: str, examples: Sequence[str] = ()) -> list[Message]:
    """Write a first program for the puzzle (``examples``: programs, as Python source,
    that solved similar puzzles before, shown as possible starting points)."""
    shown = ""
    if examples:
        blocks = "\n\n".join(render_program(e) for e in examples)
        shown = (
            "# Programs that solved similar puzzles before\n"
            "They may not fit this puzzle; reuse what applies.\n\n"
            f"{blocks}\n\n"
        )
    return [
        {"role": "system", "content": SOLVER_SYSTEM},
        {
            "role": "user",
            "content": (
                f"{task_text}\n\n{shown}"
                "Find the transformation that maps every train input to its output, "
                "then write `transform(grid)`."
            ),
        },
    ]


def critic_messages(task_text: str, program: Any, feedback: str) -> list[Message]:
    """The critic turn: what is wrong with ``program`` given the verifier's feedback."""
    return [
        {"role": "system", "content": CRITIC_SYSTEM},
        {
            "role": "user",
            "content": (
                f"{task_text}\n\n# Candidate program\n{render_program(program)}\n\n"
                f"# What the verifier found\n{feedback}\n\n"
                "What is wrong with this program, and what is the correct rule?"
            ),
        },
    ]


def author_messages(task_text: str, program: Any, feedback: str, critique: str) -> list[Message]:
    """The author turn: rewrite ``program`` using the feedback and the critique."""
    return [
        {"role": "system", "content": SOLVER_SYSTEM},
        {
            "role": "user",
            "content": (
                f"{task_text}\n\n# Your previous program\n{render_program(program)}\n\n"
                f"# What the verifier found\n{feedback}\n\n"
                f"# A critic's review\n{critique.strip() or '(no review)'}\n\n"
                "Rewrite the program so that every train example comes out exactly right. "
                "Explain the fix briefly, then give the complete new program."
            ),
        },
    ]


def crossover_messages(
    task_text: str, a: Candidate, b: Candidate, feedback_a: str, feedback_b: str
) -> list[Message]:
    """Combine two parents, each shown with its verifier feedback."""
    return [
        {"role": "system", "content": SOLVER_SYSTEM},
        {
            "role": "user",
            "content": (
                f"{task_text}\n\n"
                f"# Program A\n{render_program(a.solution)}\n\n"
                f"# What the verifier found for A\n{feedback_a}\n\n"
                f"# Program B\n{render_program(b.solution)}\n\n"
                f"# What the verifier found for B\n{feedback_b}\n\n"
                "Each program gets part of the puzzle right. Combine what each does well "
                "into one new program that gets every train example exactly right."
            ),
        },
    ]


def judge_messages(task_text: str, solution: Any, feedback: str | None) -> list[Message]:
    """The discriminator: score a candidate in 0-10 with a short reason."""
    checked = f"\n\n# What a verifier found so far\n{feedback}" if feedback else ""
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {
            "role": "user",
            "content": (
                f"{task_text}\n\n# Candidate solution\n{render_program(solution)}{checked}\n\n"
                "How likely is this candidate to be fully correct? "
                "Reply `Score: N/10` and a short reason."
            ),
        },
    ]
