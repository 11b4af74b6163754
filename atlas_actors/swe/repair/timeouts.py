"""How long the screen lets a candidate's test run: a multiple of what the base run
measured, with a floor.

A test's timeout is ``max(floor_s, factor * reference)``, where the reference is the
test's own time in the base run (fault localisation's plain pass) when it ended by
itself. A test that *hung* at the base (it ran into a timeout there: the localisation's
own, or one the project sets) has no time of its own worth scaling: a candidate that
still hangs would be given many times the hang. Its reference is the slowest test of
the base run that did end by itself: a fix makes the test end about as fast as the
others. A test the base run did not time gets ``default_s``.

The screen asks :meth:`TimeoutPolicy.timeouts` for the tests it runs; the proposer asks
:func:`timed_out` whether a candidate's run hit one (it then counts the candidate once
and screens the same family's other edits of that line last).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["TimeoutPolicy", "hung", "timed_out"]

_TIMEOUT_TYPE = re.compile(r"^\w*Timeout\w*\b")


def hung(record: Any) -> bool:
    """Whether a base-run test record (``outcome``, ``message``) ended by a timeout."""
    if str(getattr(record, "outcome", "")) == "timeout":
        return True
    message = str(getattr(record, "message", "") or "")
    return bool(_TIMEOUT_TYPE.match(message)) or "timeout)" in message


def timed_out(result: Any) -> bool:
    """Whether a screened candidate's run (a ``CandidateResult``) hit a test timeout."""
    return any(str(getattr(t, "outcome", "")) == "timeout" for t in getattr(result, "tests", ()))


class TimeoutPolicy(BaseModel):
    """Per-test timeouts of the fast screen (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    factor: float = Field(default=10.0, gt=0)
    """A test may run this many times its reference time ..."""
    floor_s: float = Field(default=1.0, gt=0)
    """... but at least this long."""
    default_s: float = Field(default=10.0, gt=0)
    """The timeout of a test the base run did not time."""

    def references(self, records: Iterable[Any]) -> dict[str, float]:
        """Each timed test's reference seconds, from the base run's records (``test``,
        ``seconds``, ``outcome``, ``message``)."""
        records = list(records)
        ended = [float(r.seconds) for r in records if not hung(r)]
        slowest = max(ended, default=0.0)
        return {str(r.test): slowest if hung(r) else float(r.seconds) for r in records}

    def timeouts(
        self, tests: Sequence[str], baseline: Iterable[Any] | Mapping[str, float] | None
    ) -> list[float]:
        """The timeout of each of ``tests``: from the base run's records, or from a
        mapping of reference seconds per test."""
        if baseline is None:
            refs: Mapping[str, float] = {}
        elif isinstance(baseline, Mapping):
            refs = baseline
        else:
            refs = self.references(baseline)
        return [
            max(self.floor_s, self.factor * refs[t]) if t in refs else self.default_s for t in tests
        ]
