"""What the task says beyond the code: constants and messages from the issue text, and the
exceptions the failing tests raise.

Two operator families need material the file does not hold. ``condition_synthesize``
builds comparisons with the numbers an issue names ("a year divisible by 100 is a leap
year only when it is also divisible by 400"), as condition synthesis in program repair
mines predicates from a project's documentation (ACS, Xiong et al. 2017) or test
executions (Nopol, Xuan et al. 2017). ``exception_translate`` turns a builtin exception
that escapes a failing test into the project's own exception, with a message the issue
quotes ("should raise ``CalcError("division by zero")``").

Nothing here reads the tests' source or the fix: the issue text is every SWE task's
input, and the failing tests' exception types are what the localisation run printed.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["MAX_NUMBERS", "MAX_STRINGS", "RepairHints", "hints_from"]

MAX_NUMBERS = 8
"""Distinct integers kept from the issue text, in the order they first occur."""
MAX_STRINGS = 4
"""Distinct quoted strings kept from the issue text, in order."""
MAX_EXCEPTIONS = 3
"""Distinct exception types kept from the failing tests' failures."""

_NUMBER = re.compile(r"(?<![\w.])(\d{1,9})(?![\w.]|\.\d)")
_QUOTED = re.compile(r"\"([^\"\n\\]{1,60})\"|'([^'\n\\]{1,60})'")
_EXC_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?::|$)")


@dataclass(frozen=True, slots=True)
class RepairHints:
    """Material for the families that synthesise what the file does not hold."""

    numbers: tuple[int, ...] = ()
    """Integers of the issue text (at most :data:`MAX_NUMBERS`, first occurrence first)."""
    strings: tuple[str, ...] = ()
    """Quoted strings of the issue text (at most :data:`MAX_STRINGS`)."""
    exceptions: tuple[str, ...] = ()
    """Builtin exception types the failing tests fail with (not ``AssertionError``)."""
    test_numbers: tuple[int, ...] = ()
    """Integers in the failing tests' own functions (at most :data:`MAX_NUMBERS`, in
    source order; only the ``base_case`` family reads them)."""

    def __bool__(self) -> bool:
        return bool(self.numbers or self.strings or self.exceptions or self.test_numbers)


def _builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return (
        isinstance(value, type)
        and issubclass(value, Exception)
        and value is not AssertionError
        and not issubclass(value, Warning)
    )


def hints_from(statement: str, failures: Iterable[str] = ()) -> RepairHints:
    """Hints from an issue's text and the failing tests' failure messages
    (``Type: first line``, as the localisation run reports them; several lines for a
    test id that stands for several tests)."""
    numbers: dict[int, None] = {}
    for match in _NUMBER.finditer(statement):
        if len(numbers) >= MAX_NUMBERS:
            break
        numbers.setdefault(int(match.group(1)))
    strings: dict[str, None] = {}
    for match in _QUOTED.finditer(statement):
        if len(strings) >= MAX_STRINGS:
            break
        text = match.group(1) if match.group(1) is not None else match.group(2)
        if text.strip():
            strings.setdefault(text)
    exceptions: dict[str, None] = {}
    for message in failures:
        for line in message.splitlines():  # a folded record: one failure per line
            found = _EXC_NAME.match(line.strip())
            if found and _builtin_exception(found.group(1)) and len(exceptions) < MAX_EXCEPTIONS:
                exceptions.setdefault(found.group(1))
    return RepairHints(tuple(numbers), tuple(strings), tuple(exceptions))
