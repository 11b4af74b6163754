"""A replay model: a scripted stand-in for an LLM that answers the SWE tree search from an
instance's gold patch, so the whole LLM path (prompts with real file views, edit actions
on real files, tests, the judge, the answer) runs on real repositories without a model.

:class:`GoldReplay` (one instance) cuts the gold patch into *steps*: each hunk, in the
patch's order, is one step, and so is a file the patch adds or deletes. ``S_0`` (the base
files), ``S_1``, ..., ``S_n`` (the gold patch applied) are the states the steps lead
through. From whatever state the search is in (the base files with a node's patch
applied) a step becomes an action that applies there exactly once:

* a hunk becomes an ``edit`` whose ``old`` text is the hunk's changed lines as they are
  in the file at that state, widened by the neighbouring lines until it occurs once in
  the file (and there); when earlier edits changed lines the hunk touches (a wrong edit on
  the branch), the region they changed is taken in and put back as the gold patch has it;
* a file the gold patch adds becomes an ``edit`` with an empty ``old`` (create it);
* a file it deletes becomes an ``apply_patch`` deleting it (no edit deletes a file).

It also makes *wrong edits*: plausible changes of a line the gold patch changes (an
operator or a constant swapped; a harmless trailing comment where no swap applies) that
do not give the gold patch's state.

:class:`ReplayModel` answers requests to a
:class:`~atlas_actors.llm.testing.FakeLLMServer` as a model would, from the request
alone: the instance by its issue text, the node by the patch the prompt shows, the
actions already tried and the parallel slot from the prompt; answers are in the
proposer's format (a fenced JSON list):

* at the base state: the wrong edits first, then the first gold step;
* at a state on the gold path: the next gold step; at the gold state: ``submit``;
* off the gold path (a wrong edit applied): ``submit`` (the model believes its change),
  then the next gold step made on that state;
* ``[]`` once all of these were tried from the node.

Before an edit it looks: it asks to ``view`` the lines it is about to replace, and on
the next turn checks what the view shows against the file it expects (a difference is
recorded in :attr:`ReplayModel.mismatches`). The judge's requests (SWE-Search's value
function, :mod:`atlas_actors.swe.judge`) get a reward from the candidate patch's place
on the path: the gold state 95, a state on the gold path 50 to 90, the base state 0, a
state off the path -50.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from unidiff.constants import LINE_TYPE_NO_NEWLINE
from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk, PatchedFile, PatchSet

from atlas_actors.environments.base import Toolbox
from atlas_actors.errors import AtlasError
from atlas_actors.llm.testing import ChatRequest
from atlas_actors.swe.instances import SWEInstance
from atlas_actors.swe.judge import JUDGE_SYSTEM
from atlas_actors.swe.prompts import describe_action
from atlas_actors.swe.repair.patch import split_lines

__all__ = [
    "Files",
    "GoldReplay",
    "ReplayError",
    "ReplayModel",
    "Step",
    "apply_diff",
    "gold_paths",
    "load_replay",
    "read_base_files",
]

Files = dict[str, str | None]
"""File texts by repository path (None: no such file)."""

Action = dict[str, Any]


class ReplayError(AtlasError, ValueError):
    """A gold patch the replay cannot cut into steps, or a request it cannot read."""


# ------------------------------------------------------------------------ diffs


def _parse(patch: str) -> PatchSet:
    """The patch, parsed; a diff shown with its trailing whitespace stripped (prompts
    do) loses the blank context lines at its end, which are put back."""
    text = patch if patch.endswith("\n") else patch + "\n"
    for _ in range(8):
        try:
            return PatchSet(text)
        except UnidiffParseError as exc:
            if "shorter than expected" not in str(exc):
                raise ReplayError(f"unreadable patch: {exc}") from None
            text += " \n"
    raise ReplayError("unreadable patch: a hunk is shorter than its header says")


def _path_of(pf: PatchedFile) -> str:
    if pf.is_binary_file:
        raise ReplayError(f"{pf.path}: binary patches are not replayed")
    source = pf.source_file[2:] if pf.source_file.startswith("a/") else pf.source_file
    target = pf.target_file[2:] if pf.target_file.startswith("b/") else pf.target_file
    if not (pf.is_added_file or pf.is_removed_file) and source != target:
        raise ReplayError(f"{source} -> {target}: renames are not replayed")
    return str(pf.path)


def _sides(hunk: Hunk) -> list[tuple[str, str]]:
    """The hunk's lines as ``(type, text with its line ending)``; ``\\ No newline at end
    of file`` takes the ending off the line before it."""
    out: list[tuple[str, str]] = []
    for line in hunk:
        if line.line_type == LINE_TYPE_NO_NEWLINE:
            if out and out[-1][1].endswith("\n"):
                out[-1] = (out[-1][0], out[-1][1][:-1])
            continue
        out.append((line.line_type, line.value))
    return out


def _source_start(hunk: Hunk) -> int:
    """0-based index of the hunk's first source line (where an empty one inserts)."""
    start = int(hunk.source_start)
    return start if hunk.source_length == 0 else start - 1


def gold_paths(patch: str) -> list[str]:
    """The paths a patch touches, in its order."""
    return [_path_of(pf) for pf in _parse(patch)]


def apply_diff(files: Mapping[str, str | None], patch: str) -> Files:
    """``files`` with a git diff against them applied, exactly (every hunk at its line
    numbers; ReplayError when one does not match). A path the diff touches and ``files``
    does not hold raises too."""
    out: Files = dict(files)
    for pf in _parse(patch):
        path = _path_of(pf)
        if path not in out:
            raise ReplayError(f"the patch touches {path}, whose base text is not known")
        if pf.is_added_file:
            if out[path] is not None:
                raise ReplayError(f"the patch adds {path}, which exists")
            out[path] = (
                "".join(text for kind, text in _sides(pf[0]) if kind != "-") if len(pf) else ""
            )
            continue
        current = out[path]
        if current is None:
            raise ReplayError(f"the patch changes {path}, which does not exist")
        if pf.is_removed_file:
            out[path] = None
            continue
        lines = split_lines(current)
        shift = 0
        for hunk in pf:
            sides = _sides(hunk)
            at = _source_start(hunk) + shift
            source = [text for kind, text in sides if kind != "+"]
            if lines[at : at + len(source)] != source:
                raise ReplayError(f"{path}: the hunk at line {hunk.source_start} does not apply")
            target = [text for kind, text in sides if kind != "-"]
            lines[at : at + len(source)] = target
            shift += len(target) - len(source)
        out[path] = "".join(lines)
    return out


def _deletion(path: str, text: str) -> str:
    """A git diff deleting ``path`` whose text is ``text``."""
    lines = split_lines(text)
    body = []
    for line in lines:
        body.append(
            "-" + line if line.endswith("\n") else f"-{line}\n\\ No newline at end of file\n"
        )
    head = f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n+++ /dev/null\n"
    if not lines:
        return head.replace(f"--- a/{path}\n+++ /dev/null\n", "")
    return head + f"@@ -1,{len(lines)} +0,0 @@\n" + "".join(body)


# ------------------------------------------------------------------------ edits


def _region(
    target: list[str], start: int, stop: int, cur: list[str]
) -> tuple[int, int, list[str]] | None:
    """What makes lines ``start:stop`` of ``target`` hold in ``cur`` too: ``(first, end,
    new lines)``, lines ``first:end`` of ``cur`` to replace; None when they already
    hold there. A region where ``cur`` differs from ``target`` that overlaps or borders
    those lines is taken in and made as in ``target`` (the step wins over an edit made
    there or next to it)."""
    if target == cur:
        return None
    matcher = difflib.SequenceMatcher(None, target, cur, autojunk=False)
    ops = [op[1:] for op in matcher.get_opcodes() if op[0] != "equal"]
    lo, hi = start, stop
    touched = False
    grown = True
    while grown:
        grown = False
        for i1, i2, _j1, _j2 in ops:
            if i1 <= hi and i2 >= lo:
                touched = True
                if i1 < lo or i2 > hi:
                    lo, hi = min(lo, i1), max(hi, i2)
                    grown = True
    if not touched:
        return None
    # every op now lies before lo (i2 < lo), inside lo:hi, or after hi (i1 > hi)
    first = lo + sum((j2 - j1) - (i2 - i1) for i1, i2, j1, j2 in ops if i2 < lo)
    end = hi + sum((j2 - j1) - (i2 - i1) for i1, i2, j1, j2 in ops if i1 <= hi)
    return first, end, target[lo:hi]


def _unique_edit(path: str, text: str, first: int, end: int, new: Sequence[str]) -> Action | None:
    """An ``edit`` replacing lines ``first:end`` of ``text`` by ``new``: the lines that
    really change, widened by neighbouring lines (before, then after, in turn) until the
    ``old`` text occurs exactly once in ``text``, there. None when nothing changes."""
    lines = split_lines(text)
    block = list(new)
    while first < end and block and lines[first] == block[0]:
        first, block = first + 1, block[1:]
    while end > first and block and lines[end - 1] == block[-1]:
        end, block = end - 1, block[:-1]
    if first == end and not block:
        return None
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    a, b = first, end
    turn = 0
    while True:
        old = text[offsets[a] : offsets[b]]
        if old and text.count(old) == 1 and text.find(old) == offsets[a]:
            break
        can_lead, can_trail = a > 0, b < len(lines)
        if not (can_lead or can_trail):
            raise ReplayError(f"{path}: no unique text to replace (the file is empty)")
        if can_lead and (turn % 2 == 0 or not can_trail):
            a -= 1
        else:
            b += 1
        turn += 1
    new_text = "".join([*lines[a:first], *block, *lines[end:b]])
    return {"kind": "edit", "path": path, "old": old, "new": new_text}


# ------------------------------------------------------------------------ steps


@dataclass(frozen=True)
class Step:
    """One step of the gold patch: a hunk, or a whole file added or deleted."""

    path: str
    kind: Literal["modify", "create", "delete"]
    start: int = 0
    """``modify``: first line (0-based) of the changed block (the same before and after
    the step)."""
    stop: int = 0
    """``modify``: end of the changed block (exclusive) in the file before the step."""
    lines: tuple[str, ...] = ()
    """``modify``: the block's lines after the step."""


_WORD_SWAPS = (("True", "False"), ("False", "True"), ("None", "0"))
_OP_SWAPS = (
    (" == ", " != "),
    (" != ", " == "),
    (" is not ", " is "),
    (" is ", " is not "),
    (" and ", " or "),
    (" or ", " and "),
    (" <= ", " < "),
    (" >= ", " > "),
    (" < ", " <= "),
    (" > ", " >= "),
    (" + 1", " - 1"),
    (" - 1", " + 1"),
)
WRONG_COMMENT = "  # noqa"
"""What a wrong edit appends to a line where no swap applies (the behaviour is kept)."""


def _mutations(line: str) -> list[str]:
    """Plausible wrong versions of a line: an operator or constant swapped, else a
    trailing comment."""
    body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
    out = []
    for old, new in _OP_SWAPS:
        if old in body:
            out.append(body.replace(old, new, 1) + end)
    for old, new in _WORD_SWAPS:
        m = re.search(rf"\b{old}\b", body)
        if m:
            out.append(body[: m.start()] + new + body[m.end() :] + end)
    if not body.rstrip().endswith("\\"):
        out.append(body.rstrip("\r") + WRONG_COMMENT + body[len(body.rstrip("\r")) :] + end)
    return out


@dataclass
class GoldReplay:
    """One instance's gold patch as steps, states and wrong edits (see module docs).

    Args:
        instance_id, statement: the instance (its issue text finds it in a prompt).
        patch: the gold patch.
        base: the base text of every path the gold patch touches (None: absent).
        wrong: wrong edits to make (fewer when the patch changes too few lines).
    """

    instance_id: str
    statement: str
    patch: str
    base: Mapping[str, str | None]
    wrong: int = 1
    steps: list[Step] = field(init=False)
    states: list[Files] = field(init=False)
    """``S_0`` (the base) .. ``S_n`` (the gold patch applied)."""
    wrong_edits: list[Action] = field(init=False)
    """The wrong edits, made at the base state."""

    def __post_init__(self) -> None:
        self.base = dict(self.base)
        self.steps, self.states = [], [dict(self.base)]
        candidates: list[tuple[str, int]] = []  # (path, 0-based base line) for wrong edits
        for pf in _parse(self.patch):
            path = _path_of(pf)
            if path not in self.base:
                raise ReplayError(f"{self.instance_id}: no base text given for {path}")
            if pf.is_added_file:
                self._step(Step(path, "create"), apply_diff(self.states[-1], str(pf)))
                continue
            if pf.is_removed_file:
                self._step(Step(path, "delete"), {**self.states[-1], path: None})
                continue
            shift = 0
            for hunk in pf:
                step, hunk_lines = self._hunk_step(path, hunk, shift)
                shift += hunk.target_length - hunk.source_length
                state = self.states[-1]
                before = split_lines(state[path] or "")
                after = before[: step.start] + list(step.lines) + before[step.stop :]
                self._step(step, {**state, path: "".join(after)})
                candidates += [(path, n) for n in hunk_lines]
        self.wrong_edits = self._make_wrong(candidates)

    def _step(self, step: Step, state: Files) -> None:
        self.steps.append(step)
        self.states.append(state)

    def _hunk_step(self, path: str, hunk: Hunk, shift: int) -> tuple[Step, list[int]]:
        """The hunk as a block replacement in the state before it, and the base lines a
        wrong edit may change (the lines it removes, else the line before its insertion)."""
        sides = _sides(hunk)
        changed = [i for i, (kind, _) in enumerate(sides) if kind != " "]
        lo, hi = changed[0], changed[-1] + 1
        base_at = _source_start(hunk)
        start = base_at + shift + sum(1 for kind, _ in sides[:lo] if kind != "+")
        length = sum(1 for kind, _ in sides[lo:hi] if kind != "+")
        lines = tuple(text for kind, text in sides[lo:hi] if kind != "-")
        state = split_lines(self.states[-1][path] or "")
        source = [text for kind, text in sides if kind != "+"]
        at = base_at + shift
        if state[at : at + len(source)] != source:
            raise ReplayError(
                f"{self.instance_id}: the gold hunk of {path} at line {hunk.source_start} "
                "does not match the base text"
            )
        removed = [
            base_at + sum(1 for kind, _ in sides[:i] if kind != "+")
            for i, (kind, _) in enumerate(sides)
            if kind == "-"
        ]
        if not removed:  # a pure insertion: the line before it (or after, at the top)
            anchor = base_at + sum(1 for kind, _ in sides[:lo] if kind != "+")
            removed = [anchor - 1] if anchor > 0 else [anchor]
        return Step(path, "modify", start, start + length, lines), removed

    def _make_wrong(self, candidates: list[tuple[str, int]]) -> list[Action]:
        """Up to ``wrong`` wrong edits at the base state: the first mutation of each
        candidate line in turn, then the second, ...; none gives a gold-path state, and
        each reads differently from the first gold step in a tried list."""
        per_line: list[list[tuple[str, int, str]]] = []
        for path, n in dict.fromkeys(candidates):
            lines = split_lines(self.base[path] or "")
            if n >= len(lines):
                continue
            line = lines[n]
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            per_line.append([(path, n, m) for m in _mutations(line)])
        first_gold = self.action(1, self.states[0])
        taken = {describe_action(first_gold)} if first_gold else set()
        out: list[Action] = []
        for rank in range(max((len(m) for m in per_line), default=0)):
            for options in per_line:
                if len(out) >= self.wrong or rank >= len(options):
                    continue
                path, n, mutated = options[rank]
                text = self.base[path] or ""
                edit = _unique_edit(path, text, n, n + 1, [mutated])
                if edit is None or describe_action(edit) in taken:
                    continue
                state = {**self.states[0], path: text.replace(edit["old"], edit["new"], 1)}
                if self.progress(state) is not None:
                    continue
                taken.add(describe_action(edit))
                out.append(edit)
        return out

    # -- states -------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Steps of the gold patch."""
        return len(self.steps)

    def files_at(self, patch: str) -> Files | None:
        """The gold paths' texts at the state a node's patch (a diff against the base)
        gives; None when the patch touches a path the gold patch does not (off the path)."""
        touched = gold_paths(patch) if patch.strip() else []
        if any(p not in self.base for p in touched):
            return None
        return apply_diff(self.base, patch) if patch.strip() else dict(self.base)

    def progress(self, files: Mapping[str, str | None] | None) -> int | None:
        """``i`` when ``files`` is the state ``S_i`` on the gold path, else None."""
        if files is None:
            return None
        for i, state in enumerate(self.states):
            if state == files:
                return i
        return None

    def action(self, j: int, files: Mapping[str, str | None]) -> Action | None:
        """Step ``j`` (1-based) as an action on ``files``; None when it changes nothing
        there."""
        step = self.steps[j - 1]
        current = files.get(step.path)
        if step.kind == "create":
            text = self.states[j][step.path] or ""
            if current is None:
                return {"kind": "edit", "path": step.path, "old": "", "new": text}
            if current == text:
                return None
            if current == "":
                raise ReplayError(f"{step.path}: an empty file cannot be replaced by an edit")
            return {"kind": "edit", "path": step.path, "old": current, "new": text}
        if step.kind == "delete":
            if current is None:
                return None
            return {"kind": "apply_patch", "patch": _deletion(step.path, current)}
        if current is None:
            return None
        target = split_lines(self.states[j][step.path] or "")
        region = _region(target, step.start, step.start + len(step.lines), split_lines(current))
        return None if region is None else _unique_edit(step.path, current, *region)

    def next_action(self, files: Mapping[str, str | None]) -> Action | None:
        """The first gold step that changes something in ``files``, as an action there."""
        at = self.progress(files)
        if at is not None:
            return self.action(at + 1, files) if at < self.n else None
        for j in range(1, self.n + 1):
            action = self.action(j, files)
            if action is not None:
                return action
        return None

    def choices(
        self, files: Mapping[str, str | None] | None, tried: Iterable[str] = ()
    ) -> list[tuple[Action, str]]:
        """What the model proposes from a node whose files are ``files`` (None: a node
        off the gold path whose files are not known), best first, as ``(action,
        label)``; those whose description is in ``tried`` left out."""
        at = self.progress(files)
        out: list[Action] = []
        if at == 0:
            out += self.wrong_edits
        if at == self.n:
            out.append({"kind": "submit"})
        elif at is not None:
            step = self.action(at + 1, files or {})
            out += [step] if step is not None else []
        else:
            out.append({"kind": "submit"})
            step = self.next_action(files) if files is not None else None
            out += [step] if step is not None else []
        seen = set(tried)
        return [(a, _label(a, files or {})) for a in out if describe_action(a) not in seen]

    def reward(self, files: Mapping[str, str | None] | None) -> tuple[int, str]:
        """The judge's reward for a state, and why."""
        at = self.progress(files)
        if at is None:
            return -50, "The change does not address the root cause of the issue."
        if at == self.n:
            return 95, "The patch fixes the root cause of the issue."
        if at == 0:
            return 0, "Nothing has been changed yet."
        return 50 + 40 * at // self.n, f"The patch is part of the fix ({at} of {self.n} steps)."


def _label(action: Action, files: Mapping[str, str | None]) -> str:
    """What a model would call the action."""
    if action["kind"] == "submit":
        return "the patch resolves the issue"
    if action["kind"] == "apply_patch":
        return f"remove {gold_paths(action['patch'])[0]}"
    if not action["old"]:
        return f"add {action['path']}"
    text = files.get(action["path"]) or ""
    line = text[: text.find(action["old"])].count("\n") + 1
    return f"change {action['path']} at line {line}"


async def read_base_files(toolbox: Toolbox, instance: SWEInstance) -> Files:
    """The base text of every path the instance's gold patch touches, read from its
    environment (``read_files`` at the base commit)."""
    paths = gold_paths(instance.patch)
    files = await toolbox.invoke(instance.to_task(), "read_files", paths=paths)
    return {p: files.get(p) for p in paths}


async def load_replay(toolbox: Toolbox, instance: SWEInstance, *, wrong: int = 1) -> GoldReplay:
    """The instance's :class:`GoldReplay`, its base files read from its environment."""
    base = await read_base_files(toolbox, instance)
    return GoldReplay(
        instance.instance_id, instance.problem_statement, instance.patch, base, wrong=wrong
    )


# ------------------------------------------------------------------------ the model

_PROPOSER_MARK = "A tree search explores patches"
_INFO_MARK = "Actions that only look"
_PATCH_HEAD = "# Current patch (against the base commit)\n"
_PATCH_END = "\n```\n\n# Test evidence for the current patch"
_JUDGE_HEAD = "# Candidate patch\n```diff\n"
_JUDGE_END = "\n```\n\n# Test evidence\n"
_TRIED_HEAD = "# Already tried from this patch (do not propose again)\n"
_RESULTS_HEAD = "Results of your information actions:"
_K = re.compile(r"Propose up to (\d+) different next actions")
_SLOT = re.compile(r"(\d+) other proposal\(s\) from this patch are being made at the same time")
_VIEW = re.compile(r"^## view (\{.*?\})\n```\n(.*?)\n```", re.MULTILINE | re.DOTALL)
_VIEW_LINE = re.compile(r"^ *(\d+)  (.*)$")
_CUT = re.compile(r"\n\.\.\. \(\d+ characters cut\) \.\.\.\n|\n\.\.\. \(cut\)$")


def _section(text: str, head: str, end: str) -> str | None:
    at = text.find(head)
    if at < 0:
        return None
    body = text[at + len(head) :]
    stop = body.find(end)
    return body if stop < 0 else body[:stop]


def _answer(thought: str, actions: Sequence[Action]) -> str:
    return f"{thought}\n\n```json\n{json.dumps(list(actions), indent=1)}\n```\n"


class ReplayModel:
    """A responder for :class:`~atlas_actors.llm.testing.FakeLLMServer` that answers the
    SWE tree search's proposer and judge from gold patches (see module docs).

    Args:
        replays: one per instance the server may be asked about.
        look: ask to ``view`` the lines of an edit before proposing it (when the
            proposer offers information actions), and check the view.
    """

    def __init__(self, replays: Iterable[GoldReplay], *, look: bool = True) -> None:
        self.replays = {r.instance_id: r for r in replays}
        self.look = look
        self.mismatches: list[str] = []
        """Views whose lines differed from the file the replay expects."""
        self.errors: list[str] = []
        """Requests it could not answer (the server answered them 500)."""
        self.requests: Counter[str] = Counter()
        """Requests answered, by kind: ``propose``, ``look``, ``judge``."""
        self.calls: Counter[str] = Counter()
        """Requests answered, by instance id."""

    def __call__(self, req: ChatRequest) -> str:
        try:
            return self._reply(req)
        except Exception as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            raise

    def replay_for(self, text: str) -> GoldReplay:
        """The instance whose issue text the prompt shows (the longest that matches)."""
        found = [r for r in self.replays.values() if r.statement.strip() in text]
        if not found:
            raise ReplayError("no known instance's issue text is in the request")
        return max(found, key=lambda r: len(r.statement.strip()))

    def _reply(self, req: ChatRequest) -> str:
        if req.system.strip() == JUDGE_SYSTEM.strip():
            return self._judge(req)
        if _PROPOSER_MARK not in req.system:
            raise ReplayError("neither a proposer nor a judge request")
        users = [str(m.get("content", "")) for m in req.messages if m.get("role") == "user"]
        prompt = users[0]
        replay = self.replay_for(prompt)
        self.calls[replay.instance_id] += 1
        shown = _section(prompt, _PATCH_HEAD, _PATCH_END)
        if shown is None:
            raise ReplayError("no current patch in the prompt")
        patch = "" if shown.startswith("(empty") else shown.removeprefix("```diff\n")
        if _CUT.search(patch):
            raise ReplayError(f"{replay.instance_id}: the prompt's patch is cut")
        files = replay.files_at(patch)
        tried_text = _section(prompt, _TRIED_HEAD, "\n\n# ") or ""
        tried = [ln[2:] for ln in tried_text.splitlines() if ln.startswith("- ")]
        k = int(m.group(1)) if (m := _K.search(prompt)) else 1
        slot = int(m.group(1)) if (m := _SLOT.search(prompt)) else 0
        picked = replay.choices(files, tried)[slot * k : slot * k + k]
        if not picked:
            self.requests["propose"] += 1
            return _answer("Nothing is left worth trying from this patch.", [])
        edits = [a for a, _ in picked if a["kind"] == "edit" and a["old"]]
        can_look = _INFO_MARK in req.system
        if len(users) > 1 and users[-1].startswith(_RESULTS_HEAD) and files is not None:
            self._check_views(replay, files, users[-1])
        elif self.look and can_look and len(users) == 1 and edits and files is not None:
            self.requests["look"] += 1
            return _answer("Let me look at the code I am about to change.", _views(files, edits))
        self.requests["propose"] += 1
        actions = [{**a, "label": label, "confidence": 0.6} for a, label in picked]
        return _answer("Here is what I would change next.", actions)

    def _check_views(
        self, replay: GoldReplay, files: Mapping[str, str | None], results: str
    ) -> None:
        """Every line a view showed against the file the replay expects."""
        for head, body in _VIEW.findall(results):
            try:
                view = json.loads(head)
            except ValueError:
                continue
            path, start = view.get("path"), view.get("start")
            lines = split_lines(files.get(path) or "")
            shown = [
                (int(m.group(1)), m.group(2))
                for ln in body.split("\n")
                if (m := _VIEW_LINE.match(ln))
            ]
            wrong = [
                (n, text)
                for n, text in shown
                if not 0 < n <= len(lines) or lines[n - 1].rstrip() != text.rstrip()
            ]
            if wrong or not shown or shown[0][0] != start:
                self.mismatches.append(
                    f"{replay.instance_id}: the view of {path} from line {start} showed "
                    f"{body[:300]!r}; differing lines: {wrong[:3]}"
                )

    def _judge(self, req: ChatRequest) -> str:
        self.requests["judge"] += 1
        prompt = req.last_user
        replay = self.replay_for(prompt)
        self.calls[replay.instance_id] += 1
        shown = _section(prompt, _JUDGE_HEAD, _JUDGE_END)
        if shown is None:
            raise ReplayError("no candidate patch in the judge's request")
        if _CUT.search(shown):
            raise ReplayError(f"{replay.instance_id}: the judge's patch is cut")
        patch = "" if shown.startswith("(empty") else shown
        reward, why = replay.reward(replay.files_at(patch))
        return f"{why}\n\nReward: {reward}\n"


def _views(files: Mapping[str, str | None], edits: Sequence[Action]) -> list[Action]:
    """A ``view`` of the lines each edit replaces, in the file as it is."""
    views = []
    for edit in edits:
        text = files.get(edit["path"]) or ""
        first = text[: text.find(edit["old"])].count("\n") + 1
        last = first + edit["old"].rstrip("\n").count("\n")
        views.append({"kind": "view", "path": edit["path"], "start": first, "end": last})
    return views
