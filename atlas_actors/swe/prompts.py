"""The prompts of the LLM action proposer for SWE tree search (see
:mod:`atlas_actors.swe.llm_proposer`).

One conversation per expansion: a system prompt with the actions and the answer
format, a user prompt with the issue, the node's cumulative patch, its test evidence
and what came of earlier attempts from it; then, while the model asks for information
(``view``, ``list``, ``search``, ``run``), a user turn with the results. The answer is
one fenced JSON list: information actions, or up to ``k`` alternative next steps.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from atlas_actors.swe.judge import render_evidence
from atlas_actors.types import Outcome

Message = dict[str, Any]

EDIT_KINDS = ("edit", "apply_patch", "submit")
"""Kinds a proposal may have (they change the patch, or end the episode)."""
INFO_KINDS = ("view", "list", "search", "run")
"""Kinds the proposer runs itself, from the node's state, to show the model."""

_ACTIONS = """\
Actions that change the code (one is one step; the patch accumulates):
* {"kind": "edit", "path": "pkg/mod.py", "old": "exact text", "new": "replacement"}
  replaces the one occurrence of `old` in the file as it is now (with the current patch
  applied). Copy `old` verbatim, indentation included, with enough lines to be unique.
  An empty `old` creates a new file with `new`.
* {"kind": "apply_patch", "patch": "<unified diff against the current tree>"}
* {"kind": "submit"}: the current patch resolves the issue; stop here."""

_INFO = """\
Actions that only look (their results are shown to you, nothing changes):
* {"kind": "view", "path": "pkg/mod.py", "start": 1, "end": 80}  (lines optional)
* {"kind": "list", "path": "pkg"}
* {"kind": "search", "pattern": "def wrap", "path": ".", "fixed": true}  (git grep -n;
  `fixed`: a plain string, else an extended regex)
* {"kind": "run", "command": "python -m pytest -x -q tests/test_mod.py"}  (in the
  repository root; files it changes are thrown away)"""


def system_prompt(*, max_info_actions: int) -> str:
    """The system prompt; ``max_info_actions``: information actions allowed per round
    (0: none are available)."""
    info = max_info_actions > 0
    look = (
        "First, if you need to, look at the code: answer a JSON list of up to "
        f"{max_info_actions} information actions and their results come back (a few "
        "rounds at most). When you know enough, answer your proposals."
        if info
        else "Propose from what you are shown."
    )
    parts = [
        "You are a software engineer fixing an issue in a repository. A tree search "
        "explores patches: at each step it asks you for several *different* next actions "
        "from the current patch, tries each as its own branch, runs the tests, and comes "
        "back to you with what happened.",
        _ACTIONS,
    ]
    if info:
        parts.append(_INFO)
    parts.append(
        look + "\n\n"
        "Answer with a short thought, then exactly one ```json block holding a JSON list. "
        "Proposals look like this, best first, each with a short `label` and your "
        "`confidence` (0 to 1) that it is the right next step:\n"
        "```json\n"
        '[{"kind": "edit", "path": "pkg/mod.py", "old": "if n < width:", '
        '"new": "if n <= width:", "label": "off-by-one in the width check", '
        '"confidence": 0.7}]\n'
        "```\n"
        "Alternatives should differ in substance (another place, another fix), not in "
        "wording. Never propose an action listed as already tried. Answer `[]` only when "
        "you see nothing left worth trying from this patch."
    )
    return "\n\n".join(parts)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its head and tail, the middle elided."""
    if len(text) <= limit:
        return text
    head = max(0, limit * 2 // 3)
    tail = max(0, limit - head - 40)
    return f"{text[:head]}\n... ({len(text) - head - tail} characters cut) ...\n{text[-tail:]}"


def _quote(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def describe_action(action: Any) -> str:
    """One line for an action (tried lists, logs, default labels)."""
    if not isinstance(action, dict):
        return _quote(str(action), 120)
    kind = action.get("kind")
    if kind == "edit":
        old, new = str(action.get("old", "")), str(action.get("new", ""))
        if not old:
            return f"create {action.get('path')}"
        return f"edit {action.get('path')}: {_quote(old)} -> {_quote(new)}"
    if kind == "apply_patch":
        patch = str(action.get("patch", ""))
        files = [ln[6:] for ln in patch.splitlines() if ln.startswith("+++ b/")]
        return f"apply_patch to {', '.join(files) or '?'} ({len(patch.splitlines())} lines)"
    if kind == "submit":
        return "submit"
    shown = {k: v for k, v in action.items() if k != "kind" and v is not None}
    return f"{kind} {json.dumps(shown, sort_keys=True)[:150]}"


def node_prompt(
    *,
    statement: str,
    patch: str,
    outcome: Outcome | None,
    observation: str,
    tried: Sequence[Any],
    feedback: Sequence[str],
    k: int,
    info_rounds: int,
    max_patch_chars: int,
    max_text_chars: int,
    parallel: int = 0,
) -> str:
    """The first user turn: the issue and the node as the search sees it (``parallel``:
    other proposals for this patch being made at the same time)."""
    diff = patch.rstrip()
    patch_text = (
        f"```diff\n{cut(diff, max_patch_chars)}\n```" if diff else "(empty: nothing changed yet)"
    )
    parts = [
        f"# Issue\n{statement.strip() or '(no description)'}",
        f"# Current patch (against the base commit)\n{patch_text}",
        f"# Test evidence for the current patch\n{render_evidence(outcome, max_text_chars)}",
    ]
    if diff and observation.strip():
        parts.append(f"# Result of the last action\n{cut(observation.strip(), max_text_chars)}")
    if tried:
        lines = "\n".join(f"- {describe_action(a)}" for a in tried)
        parts.append(f"# Already tried from this patch (do not propose again)\n{lines}")
    if feedback:
        lines = "\n".join(f"- {cut(' '.join(f.split()), 600)}" for f in feedback)
        parts.append(f"# What came of earlier attempts from this patch\n{lines}")
    look = (
        f" You may first use up to {info_rounds} rounds of information actions."
        if info_rounds
        else ""
    )
    others = (
        f" {parallel} other proposal(s) from this patch are being made at the same time "
        "and will likely take the most obvious next step: propose a different, plausible "
        "alternative."
        if parallel
        else ""
    )
    parts.append(
        f"# Your turn\nPropose up to {k} different next actions from the current patch "
        f"(edits, or submit if it already resolves the issue).{look}{others}"
    )
    return "\n\n".join(parts)


def results_prompt(
    results: Sequence[tuple[Any, str]], *, rounds_left: int, k: int, notes: Sequence[str] = ()
) -> str:
    """The user turn after an information round: each action and what it showed."""
    parts = ["Results of your information actions:"]
    for action, shown in results:
        parts.append(f"## {describe_action(action)}\n```\n{shown.rstrip()}\n```")
    parts += list(notes)
    if rounds_left > 0:
        parts.append(
            f"Look further ({rounds_left} round{'s' if rounds_left != 1 else ''} left) or "
            f"answer up to {k} different proposals."
        )
    else:
        parts.append(final_nudge(k))
    return "\n\n".join(parts)


def final_nudge(k: int) -> str:
    """No information rounds left: proposals now."""
    return (
        "No more information actions: answer now with up to "
        f"{k} different proposals (edit, apply_patch or submit) in one ```json block."
    )


def repair_prompt(problems: Sequence[str], k: int) -> str:
    """The user turn after an answer with nothing usable, saying why."""
    why = "\n".join(f"- {p}" for p in problems[:8])
    return (
        f"Your answer gave no usable proposal:\n{why}\n\n"
        f"Answer again with up to {k} different proposals (edit, apply_patch or submit) as "
        "one JSON list in a ```json block, or `[]` if nothing is left to try."
    )
