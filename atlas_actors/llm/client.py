"""Async client for any OpenAI-compatible chat-completions endpoint.

Two HTTP paths behind one interface (``LLMConfig.http_backend``): the default
``direct`` path (:mod:`atlas_actors.llm.transport`: one aiohttp session, the SDK's retry
policy re-stated) and the ``openai`` SDK's :class:`~openai.AsyncOpenAI` (``aiohttp`` or
``httpx`` transport). Both pass the same fault-injection tests. What the client adds:

* **Concurrency limit**: an :class:`anyio.CapacityLimiter` of ``max_concurrency``
  requests in flight (and an HTTP connection pool of the same size).
* **Retries** follow the SDK's policy (``max_retries``). In the installed SDK (openai
  3.x, ``_base_client.py``) it covers 408, 409, 429, every 5xx, connection errors and
  timeouts, never other 4xx (400, 401, 403, 404, 422); the wait honours
  ``retry-after-ms`` / ``Retry-After`` when it is > 0 and <= 120 s, otherwise it is
  exponential backoff 0.5 s · 2^k capped at 8 s, minus up to 25 % jitter. A
  ``Retry-After`` above 120 s disables the retry. The client only adds retries of a
  200 answer whose body is not a valid completion (malformed JSON), which the SDK
  does not retry, and counts every attempt (a request event hook sees them all).
* **Timeouts**: ``timeout_s`` bounds each attempt (the SDK's per-request timeout) and
  ``total_timeout_s`` the whole call including retries and waits; either raises
  :class:`~atlas_actors.errors.LLMTimeout`.
* **Errors**: after the retries, a failure raises an :class:`~atlas_actors.errors.LLMError`
  subclass (:class:`LLMStatusError` with the HTTP status, :class:`LLMConnectionError`,
  :class:`LLMResponseError`, :class:`~atlas_actors.errors.LLMTimeout`). Cancellation is
  never caught: a cancelled call closes its connection at once.
* **``n`` samples per request**: samples ``sample_index .. sample_index+n-1`` are asked
  for in one request (at most ``max_n_per_request``); if the server answers fewer
  choices (llama.cpp, some Ollama versions), the missing ones are asked one by one.
* **Usage accounting** (:class:`~atlas_actors.llm.usage.Usage`) per call, per run
  (:attr:`LLMClient.usage`) and into any accumulator the caller passes.
* **Response cache** (``cache_dir``): keyed by (model, messages, parameters, sample
  index); a rerun with the same seeds makes zero calls and replays identically.
* **Cheap per request**: the direct path spends a fraction of the SDK's client CPU per
  request, which bounds how close a busy coordinator comes to the concurrency limit's
  C / L (``scripts/bench_llm.py``; the figures are in docs/benchmarks.md, "LLM client").

API key: the environment variable named by ``api_key_env`` is read when the client is
constructed. When it is unset (or ``api_key_env`` is None) the key ``"EMPTY"`` is sent:
local servers (vLLM without ``--api-key``, llama.cpp, Ollama) accept any key, and a
hosted API answers 401, which is not retried and raises :class:`LLMStatusError`
naming the variable to set.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import openai

from atlas_actors.config import LLMConfig
from atlas_actors.errors import LLMError, LLMTimeout
from atlas_actors.llm.cache import ResponseCache, cache_key
from atlas_actors.llm.transport import (
    AttemptTimeout,
    ConnectFailure,
    DirectTransport,
    StatusFailure,
)
from atlas_actors.llm.usage import Usage
from atlas_actors.resources import AsyncResource, shared_resource

log = logging.getLogger(__name__)

PLACEHOLDER_API_KEY = "EMPTY"
"""Key sent when no key is configured (local servers accept any key)."""

Message = dict[str, Any]

SAMPLE_SLOTS = 64
"""Sample indices one proposer call may use, from its drawn base index."""


def draw_sample_index(rng: random.Random) -> int:
    """A per-call base sample index from the search's rng (deterministic when seeded);
    the call may use the ``SAMPLE_SLOTS`` indices from it."""
    return rng.getrandbits(30) * SAMPLE_SLOTS


def shared_client(config: LLMConfig) -> LLMClient:
    """The process's client for ``config`` (one concurrency limit, connection pool and
    cache for every proposer and judge of the endpoint; closed by
    :func:`~atlas_actors.resources.close_shared_resources`)."""
    client: LLMClient = shared_resource(
        ("llm-client", config.model_dump_json()), lambda: LLMClient(config)
    )
    return client


class LLMStatusError(LLMError):
    """The endpoint answered an HTTP error status (after retries, if retryable)."""

    def __init__(self, message: str, status_code: int, retries: int = 0) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retries = retries


class LLMConnectionError(LLMError, ConnectionError):
    """The endpoint could not be reached or dropped the connection (after retries)."""


class LLMResponseError(LLMError):
    """The endpoint answered 200 with a body that is not a valid completion."""


@dataclass
class _Attempts:
    count: int = 0


_ATTEMPTS: contextvars.ContextVar[_Attempts | None] = contextvars.ContextVar(
    "atlas_llm_attempts", default=None
)


@dataclass(frozen=True)
class Completion:
    """The answer to one :meth:`LLMClient.complete` call."""

    texts: list[str]
    """One text per sample, in sample order."""
    sample_indices: list[int]
    finish_reasons: list[str | None]
    cached: list[bool]
    """Whether each sample was replayed from the cache."""
    usage: Usage = field(default_factory=Usage)
    """What this call cost."""

    @property
    def text(self) -> str:
        """The first sample's text."""
        return self.texts[0] if self.texts else ""


def resolve_api_key(api_key_env: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The API key from the environment variable ``api_key_env``, else ``"EMPTY"``."""
    env = os.environ if environ is None else environ
    if api_key_env:
        value = env.get(api_key_env, "").strip()
        if value:
            return value
    return PLACEHOLDER_API_KEY


class LLMClient(AsyncResource):
    """Async chat completions with limits, retries, usage accounting and a cache.

    Use as ``async with LLMClient(config) as client:`` or call :meth:`aclose`.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        api_key: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self._api_key_from_env = (
            api_key is None
            and bool(config.api_key_env)
            and (resolve_api_key(config.api_key_env, environ) != PLACEHOLDER_API_KEY)
        )
        key = api_key if api_key is not None else resolve_api_key(config.api_key_env, environ)
        self._api_key = key
        self._limiter = anyio.CapacityLimiter(config.max_concurrency)
        self._transport: DirectTransport | _SDKTransport | None = None
        self._loop: object = None
        self._cache = ResponseCache(config.cache_dir) if config.cache_dir else None
        self._key_locks: dict[str, anyio.Lock] = {}
        self.usage = Usage()
        """Everything this client spent (the run's total)."""

    # -- lifecycle ----------------------------------------------------------------------

    def _http(self) -> DirectTransport | _SDKTransport:
        """The HTTP path for the running event loop (made on first use).

        HTTP connection pools belong to one event loop: a client used again under a
        new loop (a second ``anyio.run``) gets a fresh pool and limiter.
        """
        try:
            loop: object = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio
            loop = None
        if self._transport is None or loop is not self._loop:
            if self._transport is not None:
                log.debug("LLM client reused under a new event loop: new connection pool")
                self._limiter = anyio.CapacityLimiter(self.config.max_concurrency)
            self._transport = self._make_transport(asyncio_loop=loop is not None)
            self._loop = loop
        return self._transport

    def _make_transport(self, *, asyncio_loop: bool) -> DirectTransport | _SDKTransport:
        cfg = self.config
        backend = cfg.http_backend
        if backend == "direct" or (backend == "auto" and asyncio_loop):
            return DirectTransport(
                cfg.base_url,
                self._api_key,
                max_connections=cfg.max_concurrency,
                timeout_s=cfg.timeout_s,
                max_retries=cfg.max_retries,
                on_attempt=_note_attempt,
            )
        timeout = openai.Timeout(cfg.timeout_s, connect=min(cfg.timeout_s, 10.0))
        return _SDKTransport(
            openai.AsyncOpenAI(
                base_url=cfg.base_url,
                api_key=self._api_key,
                max_retries=cfg.max_retries,
                timeout=timeout,
                http_client=_make_http_client(cfg, timeout),
            )
        )

    async def aclose(self) -> None:
        """Close the HTTP connections (the client may be used again afterwards)."""
        transport, self._transport = self._transport, None
        if transport is not None:
            with anyio.CancelScope(shield=True):
                await transport.aclose()

    @property
    def in_flight(self) -> int:
        """Requests currently holding a concurrency slot."""
        return int(self._limiter.borrowed_tokens)

    # -- calls ----------------------------------------------------------------------------

    def _params(
        self, temperature: float | None, max_tokens: int | None, stop: Sequence[str] | None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "temperature": self.config.temperature if temperature is None else temperature,
            "max_tokens": self.config.max_tokens if max_tokens is None else max_tokens,
        }
        if stop:
            params["stop"] = list(stop)
        return params

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        sample_index: int = 0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
        usage: Usage | None = None,
    ) -> Completion:
        """Ask for ``n`` samples (indices ``sample_index ..``) for ``messages``.

        ``usage``, when given, is an accumulator (e.g. per task) this call's usage is
        added to, as well as to :attr:`usage`, also when the call fails.
        """
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        msgs = [dict(m) for m in messages]
        params = self._params(temperature, max_tokens, stop)
        indices = [sample_index + i for i in range(n)]
        call_usage = Usage()
        try:
            if self._cache is None:
                texts, reasons = await self._fetch(msgs, params, indices, call_usage)
                cached = [False] * n
            else:
                keys = [cache_key(self.config.model, msgs, params, i) for i in indices]
                lock = self._key_locks.setdefault(keys[0], anyio.Lock())
                try:
                    async with lock:
                        texts, reasons, cached = await self._cached_fetch(
                            msgs, params, indices, keys, call_usage
                        )
                finally:
                    if not lock.locked() and lock.statistics().tasks_waiting == 0:
                        self._key_locks.pop(keys[0], None)
        finally:
            self.usage.add(call_usage)
            if usage is not None:
                usage.add(call_usage)
        return Completion(
            texts=texts,
            sample_indices=indices,
            finish_reasons=reasons,
            cached=cached,
            usage=call_usage,
        )

    async def _cached_fetch(
        self,
        msgs: list[Message],
        params: dict[str, Any],
        indices: list[int],
        keys: list[str],
        call_usage: Usage,
    ) -> tuple[list[str], list[str | None], list[bool]]:
        assert self._cache is not None
        records = await self._cache.get_many(keys)
        texts: list[str] = [r["text"] if r else "" for r in records]
        reasons: list[str | None] = [r.get("finish_reason") if r else None for r in records]
        cached = [r is not None for r in records]
        call_usage.cache_hits += sum(cached)
        missing = [i for i, hit in enumerate(cached) if not hit]
        if missing:
            got, got_reasons = await self._fetch(
                msgs, params, [indices[i] for i in missing], call_usage
            )
            writes: list[tuple[str, dict[str, Any]]] = []
            for pos, text, reason in zip(missing, got, got_reasons, strict=True):
                texts[pos], reasons[pos] = text, reason
                writes.append(
                    (
                        keys[pos],
                        {
                            "model": self.config.model,
                            "sample": indices[pos],
                            "text": text,
                            "finish_reason": reason,
                        },
                    )
                )
            await self._cache.put_many(writes)
        return texts, reasons, cached

    async def _fetch(
        self,
        msgs: list[Message],
        params: dict[str, Any],
        indices: list[int],
        call_usage: Usage,
    ) -> tuple[list[str], list[str | None]]:
        """Samples ``indices`` from the endpoint, batched by ``max_n_per_request``."""
        texts: list[str] = []
        reasons: list[str | None] = []
        todo = list(indices)
        while todo:
            batch = todo[: self.config.max_n_per_request]
            got, got_reasons = await self._request(msgs, params, batch, call_usage)
            if not got:
                raise LLMResponseError("the endpoint answered a completion with no choices")
            texts += got
            reasons += got_reasons
            todo = todo[len(got) :]
        return texts, reasons

    async def _request(
        self,
        msgs: list[Message],
        params: dict[str, Any],
        batch: list[int],
        call_usage: Usage,
    ) -> tuple[list[str], list[str | None]]:
        """One chat-completions request for the samples ``batch`` (SDK retries inside)."""
        cfg = self.config
        kwargs: dict[str, Any] = dict(params)
        if len(batch) > 1:
            kwargs["n"] = len(batch)
        if cfg.send_seed:
            kwargs["seed"] = batch[0] % (2**31)
        deadline = cfg.total_timeout_s
        if deadline is None:
            deadline = (cfg.max_retries + 1) * cfg.timeout_s + 30.0
        attempts = _Attempts()
        token = _ATTEMPTS.set(attempts)
        own_retries = 0
        start = time.perf_counter()
        try:
            http = self._http()
            async with self._limiter:
                with anyio.fail_after(deadline):
                    while True:
                        try:
                            data = await http.post(
                                "/chat/completions",
                                {"model": cfg.model, "messages": msgs, **kwargs},
                            )
                            texts, reasons, tokens = _parse_completion(data, len(batch))
                            break
                        except (ValueError, KeyError, TypeError, AttributeError) as exc:
                            # a 200 whose body is not a chat completion (malformed JSON, ...)
                            if own_retries >= cfg.max_retries:
                                raise LLMResponseError(
                                    f"{cfg.base_url}: the answer is not a valid chat completion "
                                    f"({type(exc).__name__}: {_short(str(exc))}) after "
                                    f"{attempts.count} attempt(s)"
                                ) from exc
                            own_retries += 1
                            log.info("malformed completion from %s, retrying", cfg.base_url)
        except TimeoutError as exc:
            call_usage.errors += 1
            raise LLMTimeout(
                f"{cfg.base_url}: the call did not complete within {deadline:g} s "
                f"(total_timeout_s) after {attempts.count} attempt(s)"
            ) from exc
        except (openai.APITimeoutError, AttemptTimeout) as exc:
            call_usage.errors += 1
            if _connection_failure(exc):  # the aiohttp transport reports these as timeouts
                raise LLMConnectionError(
                    f"{cfg.base_url}: connection failed after {attempts.count} attempt(s): "
                    f"{_short(_root_cause(exc))}"
                ) from exc
            raise LLMTimeout(
                f"{cfg.base_url}: no answer within timeout_s={cfg.timeout_s:g} s, "
                f"{attempts.count} attempt(s)"
            ) from exc
        except (openai.APIStatusError, StatusFailure) as exc:
            call_usage.errors += 1
            hint = ""
            if exc.status_code == 401:
                hint = (
                    f" (set the API key in ${cfg.api_key_env})"
                    if cfg.api_key_env and not self._api_key_from_env
                    else " (check the API key)"
                )
            raise LLMStatusError(
                f"{cfg.base_url}: HTTP {exc.status_code} after {attempts.count} attempt(s): "
                f"{_short(exc.message)}{hint}",
                status_code=exc.status_code,
                retries=max(0, attempts.count - 1),
            ) from exc
        except (openai.APIConnectionError, ConnectFailure) as exc:
            call_usage.errors += 1
            raise LLMConnectionError(
                f"{cfg.base_url}: connection failed after {attempts.count} attempt(s): "
                f"{_short(_root_cause(exc))}"
            ) from exc
        except LLMResponseError:
            call_usage.errors += 1
            raise
        finally:
            _ATTEMPTS.reset(token)
            call_usage.retries += max(0, attempts.count - 1)
            call_usage.seconds += time.perf_counter() - start
        call_usage.calls += 1
        call_usage.samples += len(texts)
        tin, tout = tokens
        call_usage.tokens_in += tin
        call_usage.tokens_out += tout
        call_usage.cost += (
            (cfg.price_input_per_mtok or 0.0) * tin + (cfg.price_output_per_mtok or 0.0) * tout
        ) / 1e6
        return texts, reasons


class _SDKTransport:
    """The ``openai`` SDK's client behind the same two calls as :class:`DirectTransport`."""

    def __init__(self, sdk: openai.AsyncOpenAI) -> None:
        self._sdk = sdk

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        # The SDK's low-level post: its retries, timeouts and errors, without its
        # per-call typing transform and response models.
        return await self._sdk.post(path, body=body, cast_to=dict)

    async def aclose(self) -> None:
        await self._sdk.close()


def _make_http_client(config: LLMConfig, timeout: openai.Timeout) -> Any:
    """The SDK's HTTP client: aiohttp transport (``http_backend`` auto/aiohttp) or httpx.

    Both are the SDK's own clients (``DefaultAioHttpClient``, ``DefaultAsyncHttpxClient``)
    with a connection pool of ``max_concurrency`` and a hook counting every attempt.
    The aiohttp transport costs about half the CPU per request of httpx's pool.
    """
    import httpx2  # the SDK's HTTP library (a dependency of openai 3.x)

    pool = max(config.max_concurrency, 1)
    kwargs: dict[str, Any] = {
        "timeout": timeout,
        "limits": httpx2.Limits(max_connections=pool, max_keepalive_connections=pool),
        "event_hooks": {"request": [_count_attempt]},
    }
    backend = config.http_backend
    if backend in ("auto", "aiohttp"):
        try:
            import aiohttp  # noqa: F401

            return openai.DefaultAioHttpClient(**kwargs)
        except (ImportError, RuntimeError):
            if backend == "aiohttp":
                raise
    return openai.DefaultAsyncHttpxClient(**kwargs)


def _parse_completion(
    data: Any, wanted: int
) -> tuple[list[str], list[str | None], tuple[int, int]]:
    """Texts, finish reasons and (prompt, completion) tokens of a chat-completion body.

    Raises ValueError/KeyError/TypeError when ``data`` is not a chat completion.
    """
    if not isinstance(data, dict):
        raise TypeError(f"expected a JSON object, got {type(data).__name__}")
    choices = data["choices"]
    if not isinstance(choices, list) or not choices:
        raise ValueError("no choices in the completion")
    ordered = sorted(choices, key=lambda c: int(c.get("index", 0)))[:wanted]
    texts: list[str] = []
    reasons: list[str | None] = []
    for choice in ordered:
        message = choice["message"]
        content = message.get("content") if isinstance(message, dict) else None
        if content is not None and not isinstance(content, str):
            raise TypeError(f"message content is {type(content).__name__}, not a string")
        texts.append(content or "")
        reasons.append(_reason(choice.get("finish_reason")))
    usage = data.get("usage") or {}
    tokens = (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    return texts, reasons, tokens


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}"


def _connection_failure(exc: BaseException) -> bool:
    """Whether a timeout error really was a refused or dropped connection."""
    try:
        import aiohttp
    except ImportError:
        return False
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, aiohttp.ClientConnectionError) and not isinstance(seen, TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _reason(value: object) -> str | None:
    return str(value) if value else None


def _note_attempt() -> None:
    attempts = _ATTEMPTS.get()
    if attempts is not None:
        attempts.count += 1


async def _count_attempt(_request: Any) -> None:
    _note_attempt()


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
