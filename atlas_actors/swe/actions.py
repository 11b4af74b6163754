"""The actions an agent takes in a SWE environment: typed, validated, JSON in and out.

``SWEEnvironment.step`` takes one of these (or its dict form, ``{"kind": ..., ...}``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from atlas_actors.errors import InvalidSolutionError


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApplyPatch(_Action):
    """Apply a unified diff to the working tree."""

    kind: Literal["apply_patch"] = "apply_patch"
    patch: str


class Edit(_Action):
    """Replace the one occurrence of ``old`` in ``path`` with ``new`` (search and replace).

    An empty ``old`` creates the file (which must not exist yet) with ``new``.
    """

    kind: Literal["edit"] = "edit"
    path: str
    old: str
    new: str


class ViewFile(_Action):
    """Show a file with line numbers, optionally only lines ``start``..``end`` (1-based)."""

    kind: Literal["view"] = "view"
    path: str
    start: int | None = Field(default=None, ge=1)
    end: int | None = Field(default=None, ge=1)


class ListFiles(_Action):
    """List the repository's files under ``path`` (tracked and untracked, not ignored)."""

    kind: Literal["list"] = "list"
    path: str = "."
    max_entries: int = Field(default=500, ge=1)


class Search(_Action):
    """Find ``pattern`` (an extended regular expression, or a fixed string with ``fixed``)
    in the repository's files under ``path`` (``git grep -n``: tracked and untracked,
    not ignored), at most ``max_matches`` matching lines."""

    kind: Literal["search"] = "search"
    pattern: str = Field(min_length=1)
    path: str = "."
    fixed: bool = False
    max_matches: int = Field(default=200, ge=1, le=2000)


class RunCommand(_Action):
    """Run a shell command in ``/testbed`` with a timeout."""

    kind: Literal["run"] = "run"
    command: str
    timeout_s: float = Field(default=60.0, gt=0)


class Submit(_Action):
    """Verify the current cumulative patch and end the episode (reward = partial score)."""

    kind: Literal["submit"] = "submit"


SWEAction = Annotated[
    ApplyPatch | Edit | ViewFile | ListFiles | Search | RunCommand | Submit,
    Field(discriminator="kind"),
]
_ACTION = TypeAdapter(SWEAction)


ActionModel = ApplyPatch | Edit | ViewFile | ListFiles | Search | RunCommand | Submit
"""Any one SWE action model."""

KINDS = ("apply_patch", "edit", "view", "list", "search", "run", "submit")
"""Every action kind, in the order of the docs."""


def parse_action(action: Any) -> ActionModel:
    """An action model from a model or a dict (``{"kind": ..., ...}``)."""
    if isinstance(action, ApplyPatch | Edit | ViewFile | ListFiles | Search | RunCommand | Submit):
        return action
    try:
        return _ACTION.validate_python(action)
    except ValidationError as e:
        kinds = ", ".join(KINDS)
        errs = "; ".join(
            f"field {'.'.join(str(x) for x in err['loc']) or 'kind'!r}: {err['msg']}"
            for err in e.errors()
        )
        raise InvalidSolutionError(f"invalid SWE action ({errs}); kinds: {kinds}") from None
