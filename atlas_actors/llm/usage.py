"""Usage accounting: calls, tokens, retries and cost, per call, per task and per run."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Usage(BaseModel):
    """What LLM calls cost. Usages add up: ``total = a + b`` or ``total.add(a)``.

    Answers replayed from the response cache count in ``cache_hits`` only: they cost
    no tokens, no calls and nothing.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    calls: int = Field(default=0, ge=0)
    """Requests answered by the endpoint (retries of one request count once)."""
    samples: int = Field(default=0, ge=0)
    """Completions (choices) received from the endpoint."""
    cache_hits: int = Field(default=0, ge=0)
    """Completions replayed from the on-disk cache."""
    tokens_in: int = Field(default=0, ge=0)
    """Prompt tokens, as reported by the endpoint."""
    tokens_out: int = Field(default=0, ge=0)
    """Completion tokens, as reported by the endpoint."""
    retries: int = Field(default=0, ge=0)
    """HTTP attempts beyond the first (429, 5xx, timeouts, connection errors, bad bodies)."""
    errors: int = Field(default=0, ge=0)
    """Calls that failed after all retries."""
    cost: float = Field(default=0.0, ge=0.0)
    """Money spent, from the configured prices per million tokens (0 when unpriced)."""
    seconds: float = Field(default=0.0, ge=0.0)
    """Wall time spent in calls to the endpoint, summed over calls."""

    def add(self, other: Usage) -> None:
        """Add ``other`` into this usage, in place."""
        self.calls += other.calls
        self.samples += other.samples
        self.cache_hits += other.cache_hits
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        self.retries += other.retries
        self.errors += other.errors
        self.cost += other.cost
        self.seconds += other.seconds

    def __add__(self, other: Usage) -> Usage:
        total = self.model_copy()
        total.add(other)
        return total

    def as_dict(self) -> dict[str, float]:
        """Flat numbers for ``results.jsonl``'s ``usage`` field and summaries."""
        return {
            "calls": float(self.calls),
            "samples": float(self.samples),
            "cache_hits": float(self.cache_hits),
            "tokens_in": float(self.tokens_in),
            "tokens_out": float(self.tokens_out),
            "retries": float(self.retries),
            "errors": float(self.errors),
            "cost": round(self.cost, 8),
            "seconds": round(self.seconds, 4),
        }

    @staticmethod
    def total(usages: list[Usage]) -> Usage:
        """The sum of ``usages``."""
        out = Usage()
        for u in usages:
            out.add(u)
        return out


class UsageLedger:
    """What an LLM-backed component spent: in total (:attr:`usage`) and per task.

    A search reads a task's live accumulator (:meth:`usage_for`) for its LLM counters
    and cost cap; the caller pops it (:meth:`pop_usage`) when the task is done.
    """

    def __init__(self) -> None:
        self.usage = Usage()
        """Usage of every call this component made (the run's total)."""
        self._task_usage: dict[str, Usage] = {}

    def usage_for(self, task_id: str) -> Usage:
        """Usage of the calls made for one task (a live accumulator)."""
        return self._task_usage.setdefault(task_id, Usage())

    def pop_usage(self, task_id: str) -> Usage:
        """Usage for ``task_id``, forgotten afterwards (call when the task is done)."""
        return self._task_usage.pop(task_id, Usage())

    def charge(self, task_id: str, call: Usage) -> None:
        """Add one call's usage to the total and to its task's."""
        self.usage.add(call)
        self.usage_for(task_id).add(call)
