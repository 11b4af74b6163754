"""The direct HTTP path's retry policy (the SDK's rule, re-stated in transport.py)."""

from __future__ import annotations

import email.utils
import time

import pytest

from atlas_actors.llm.transport import (
    MAX_RETRY_DELAY_S,
    error_message,
    retry_after_seconds,
    retry_delay,
    should_retry,
)


@pytest.mark.parametrize(
    ("status", "retry"),
    [
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (503, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (422, False),
    ],
)
def test_which_statuses_are_retried(status: int, retry: bool) -> None:
    assert should_retry(status, {}) is retry


def test_server_can_force_or_forbid_a_retry() -> None:
    assert should_retry(400, {"x-should-retry": "true"})
    assert not should_retry(503, {"x-should-retry": "false"})


def test_retry_after_over_two_minutes_disables_the_retry() -> None:
    assert not should_retry(429, {"retry-after": "121"})
    assert should_retry(429, {"retry-after": "120"})
    assert not should_retry(429, {"retry-after": "1e999"})  # overflow: far too long


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    got = retry_after_seconds({"retry-after": when})
    assert got is not None and 27 <= got <= 31


def test_delay_honours_retry_after_else_backs_off_with_jitter() -> None:
    assert retry_delay(3, {"retry-after": "2"}) == 2.0
    # out of range (0 or > 120 s): exponential backoff instead
    assert retry_delay(0, {"retry-after": "0"}, rng=lambda: 0.0) == 0.5
    assert [retry_delay(k, None, rng=lambda: 0.0) for k in range(6)] == [
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        MAX_RETRY_DELAY_S,
    ]
    assert retry_delay(1, None, rng=lambda: 1.0) == 0.75  # at most 25 % less


def test_error_message_reads_the_api_error_body() -> None:
    assert error_message(400, b'{"error": {"message": "bad model"}}') == (
        "Error code: 400 - bad model"
    )
    assert error_message(502, b"<html>gateway</html>") == "Error code: 502 - <html>gateway</html>"
    assert error_message(500, b"") == "Error code: 500 - (empty body)"
