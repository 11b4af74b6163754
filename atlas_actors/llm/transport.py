"""The lean HTTP path for chat completions: one aiohttp session, the SDK's retry policy.

Why it exists: through the ``openai`` SDK every request spends client CPU on building
an ``httpx`` request, header normalisation, URL parsing and option copies, enough to
hold a busy client below the concurrency limit's C / L. This path posts the JSON body
on a kept-alive aiohttp connection and parses the answer with :mod:`json`, at a
fraction of that CPU (``scripts/bench_llm.py`` compares the two side by side; the
figures are in docs/benchmarks.md).

It keeps the SDK's retry policy (``openai._base_client``), re-stated here:

* retried: 408, 409, 429, every 5xx, connection errors and per-attempt timeouts;
  never other 4xx; a server's ``x-should-retry: true|false`` overrides that;
* the wait honours ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date)
  when it is > 0 and <= 120 s; a ``Retry-After`` above 120 s disables the retry;
  otherwise it is 0.5 s * 2^k capped at 8 s, minus up to 25 % jitter.

It raises the private failures below; :class:`~atlas_actors.llm.client.LLMClient`
turns them into its public :class:`~atlas_actors.errors.LLMError` subclasses exactly as
it does the SDK's errors.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp
import anyio

MAX_RETRY_AFTER_S = 120.0
INITIAL_RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 8.0


class StatusFailure(Exception):
    """An HTTP error status (retries exhausted, or not retryable)."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message


class ConnectFailure(Exception):
    """The connection could not be made or was dropped (the cause is chained)."""


class AttemptTimeout(Exception):
    """The last attempt got no complete answer within ``timeout_s``."""


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's requested wait in seconds (``retry-after-ms`` first), or None."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        if math.isinf(delay) and value.strip().lower().lstrip("+") not in ("inf", "infinity"):
            return MAX_RETRY_AFTER_S + 1  # an overflowing number: far too long
        return delay / divisor
    parsed = email.utils.parsedate_tz(headers.get("retry-after") or "")
    if parsed is None:
        return None
    try:
        return float(email.utils.mktime_tz(parsed) - time.time())
    except (OverflowError, ValueError):
        return None


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether an error status is worth another attempt (the SDK's rule)."""
    wait = retry_after_seconds(headers)
    if wait is not None and math.isfinite(wait) and wait > MAX_RETRY_AFTER_S:
        return False
    explicit = headers.get("x-should-retry")
    if explicit in ("true", "false"):
        return explicit == "true"
    return status in (408, 409, 429) or status >= 500


def retry_delay(
    retries_done: int, headers: Mapping[str, str] | None, rng: Callable[[], float] = random.random
) -> float:
    """Seconds to wait before retry number ``retries_done + 1``."""
    wait = retry_after_seconds(headers)
    if wait is not None and math.isfinite(wait) and 0 < wait <= MAX_RETRY_AFTER_S:
        return wait
    backoff = min(INITIAL_RETRY_DELAY_S * 2.0 ** min(retries_done, 1000), MAX_RETRY_DELAY_S)
    return backoff * (1.0 - 0.25 * rng())


def error_message(status: int, raw: bytes) -> str:
    """A readable message for an error answer (the API's ``error.message`` if any)."""
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return f"Error code: {status} - {err['message']}"
        if isinstance(err, str) and err:
            return f"Error code: {status} - {err}"
    return f"Error code: {status} - {text.strip() or '(empty body)'}"


class DirectTransport:
    """POSTs JSON to an OpenAI-compatible endpoint; one instance per event loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_connections: int,
        timeout_s: float,
        max_retries: int,
        on_attempt: Callable[[], None] | None = None,
        user_agent: str = "atlas-actors",
    ) -> None:
        self._base = base_url.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, connect=min(timeout_s, 10.0))
        self._max_retries = max_retries
        self._on_attempt = on_attempt
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=max(max_connections, 1), limit_per_host=0),
            headers={
                "Authorization": f"Bearer {api_key}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                "User-Agent": user_agent,
            },
            timeout=self._timeout,
        )

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """The decoded JSON answer to ``body`` (raises ``ValueError`` if it is not JSON)."""
        url = self._base + path
        payload = json.dumps(body, separators=(",", ":")).encode()
        retries = 0
        while True:
            if self._on_attempt is not None:
                self._on_attempt()
            headers: Mapping[str, str] | None = None
            failure: Exception
            try:
                async with self._session.post(url, data=payload) as resp:
                    raw = await resp.read()
                    status, headers = resp.status, resp.headers
            except TimeoutError as exc:  # aiohttp's timeouts subclass TimeoutError
                failure = AttemptTimeout(f"no answer within {self._timeout.total:g} s")
                failure.__cause__ = exc
            except aiohttp.ClientError as exc:
                failure = ConnectFailure(f"{type(exc).__name__}: {exc}")
                failure.__cause__ = exc
            else:
                if 200 <= status < 300:
                    return json.loads(raw)
                failure = StatusFailure(status, error_message(status, raw))
                if not should_retry(status, headers):
                    raise failure
            if retries >= self._max_retries:
                raise failure
            await anyio.sleep(retry_delay(retries, headers))
            retries += 1

    async def aclose(self) -> None:
        await self._session.close()
