"""LLMClient against a real OpenAI-compatible HTTP server on 127.0.0.1.

Retries only where they should be, Retry-After honoured, timeouts, malformed bodies,
connection resets, cancellation of many in-flight calls, the concurrency limit,
``n`` samples, the response cache and usage accounting.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from atlas_actors.config import LLMConfig
from atlas_actors.errors import LLMError, LLMTimeout
from atlas_actors.llm.client import (
    PLACEHOLDER_API_KEY,
    LLMClient,
    LLMConnectionError,
    LLMResponseError,
    LLMStatusError,
)
from atlas_actors.llm.testing import ChatRequest, FakeLLMServer, Fault
from atlas_actors.llm.usage import Usage

pytestmark = pytest.mark.timeout(60)

MSGS = [{"role": "user", "content": "hello there"}]
_BACKEND = {"name": "auto"}


@pytest.fixture(autouse=True, params=["direct", "aiohttp", "httpx"])
def http_backend(request: pytest.FixtureRequest) -> str:
    """Every test runs on the direct path and on both transports under the SDK."""
    _BACKEND["name"] = request.param
    return str(request.param)


def _config(server: FakeLLMServer, **kw: Any) -> LLMConfig:
    base: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "test-model",
        "api_key_env": None,
        "timeout_s": 5.0,
        "max_retries": 3,
        "http_backend": _BACKEND["name"],
    }
    base.update(kw)
    return LLMConfig(**base)


def _numbered(req: ChatRequest) -> list[str]:
    return [f"answer {req.number}.{i} seed={req.body.get('seed')}" for i in range(req.n)]


async def test_completion_roundtrip_and_usage() -> None:
    async with FakeLLMServer(lambda r: "four words right here") as server:
        cfg = _config(server, price_input_per_mtok=1.0, price_output_per_mtok=2.0)
        async with LLMClient(cfg) as client:
            task_usage = Usage()
            c = await client.complete(MSGS, usage=task_usage)
            assert c.text == "four words right here"
            assert c.cached == [False]
            assert c.usage.calls == 1
            assert c.usage.tokens_in == 2  # the server counts words
            assert c.usage.tokens_out == 4
            assert c.usage.retries == 0
            assert c.usage.cost == pytest.approx((2 * 1.0 + 4 * 2.0) / 1e6)
            await client.complete(MSGS, usage=task_usage)
            assert task_usage.calls == 2
            assert client.usage.calls == 2
            assert client.usage.tokens_out == 8
        body = server.log[0].body
        assert body["model"] == "test-model"
        assert body["temperature"] == cfg.temperature
        assert body["max_tokens"] == cfg.max_tokens
        assert server.log[0].headers["authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"


async def test_api_key_read_from_the_named_environment_variable() -> None:
    async with FakeLLMServer() as server:
        cfg = _config(server, api_key_env="ATLAS_TEST_LLM_KEY")
        async with LLMClient(cfg, environ={"ATLAS_TEST_LLM_KEY": "sk-local-123"}) as client:
            await client.complete(MSGS)
        assert server.log[0].headers["authorization"] == "Bearer sk-local-123"


@pytest.mark.parametrize("kind", ["429", "500"])
async def test_retryable_statuses_are_retried_and_counted(kind: str) -> None:
    async with FakeLLMServer() as server:
        server.push_faults(Fault(kind, retry_after=0.01), Fault(kind, retry_after=0.01))  # type: ignore[arg-type]
        async with LLMClient(_config(server, max_retries=3)) as client:
            start = time.perf_counter()
            c = await client.complete(MSGS)
            elapsed = time.perf_counter() - start
        assert server.requests == 3
        assert server.completions == 1
        assert c.usage.retries == 2
        assert c.usage.calls == 1
        assert client.usage.retries == 2
        if kind == "500":  # no Retry-After on a 500: SDK backoff 0.5 s, 1 s (-25 % jitter)
            assert elapsed >= 0.3 + 0.7


@pytest.mark.parametrize(("kind", "status"), [("400", 400), ("401", 401)])
async def test_client_errors_are_not_retried(kind: str, status: int) -> None:
    async with FakeLLMServer() as server:
        server.push_faults(kind)  # type: ignore[arg-type]
        cfg = _config(server, max_retries=4, api_key_env="ATLAS_TEST_UNSET_KEY")
        async with LLMClient(cfg, environ={}) as client:
            with pytest.raises(LLMStatusError) as info:
                await client.complete(MSGS)
        assert info.value.status_code == status
        assert info.value.retries == 0
        assert isinstance(info.value, LLMError)
        assert server.requests == 1
        assert client.usage.errors == 1
        assert client.usage.calls == 0
        if status == 401:
            assert "ATLAS_TEST_UNSET_KEY" in str(info.value)


async def test_retry_after_is_honoured() -> None:
    async with FakeLLMServer() as server, LLMClient(_config(server)) as client:
        server.push_faults(Fault("429", retry_after=1.2))
        start = time.perf_counter()
        await client.complete(MSGS)
        long_wait = time.perf_counter() - start
        server.push_faults(Fault("429", retry_after=0.05))
        start = time.perf_counter()
        await client.complete(MSGS)
        short_wait = time.perf_counter() - start
    # SDK backoff without the header would be 0.375-0.5 s: both waits follow the header.
    assert 1.2 <= long_wait < 2.5
    assert 0.05 <= short_wait < 0.36  # below the SDK's shortest backoff (0.375 s)


async def test_retries_exhausted_raise_llm_error() -> None:
    async with FakeLLMServer() as server:
        server.push_faults(*[Fault("429", retry_after=0.01)] * 5)
        async with LLMClient(_config(server, max_retries=2)) as client:
            with pytest.raises(LLMStatusError) as info:
                await client.complete(MSGS)
        assert info.value.status_code == 429
        assert info.value.retries == 2
        assert server.requests == 3
        assert client.usage.retries == 2
        assert client.usage.errors == 1


async def test_hang_past_the_timeout_raises_llm_timeout() -> None:
    async with FakeLLMServer() as server:
        server.push_faults("hang", "hang")
        async with LLMClient(_config(server, timeout_s=0.3, max_retries=1)) as client:
            start = time.perf_counter()
            with pytest.raises(LLMTimeout) as info:
                await client.complete(MSGS)
            elapsed = time.perf_counter() - start
        assert isinstance(info.value, TimeoutError)
        assert server.requests == 2  # the SDK retries a timeout once
        assert 0.6 <= elapsed < 3.0
        assert client.usage.retries == 1
        assert await server.wait_for_connections(0, within=2.0)


async def test_total_deadline_bounds_the_whole_call() -> None:
    async with FakeLLMServer() as server:
        server.push_faults("hang")
        cfg = _config(server, timeout_s=30.0, total_timeout_s=0.4)
        async with LLMClient(cfg) as client:
            start = time.perf_counter()
            with pytest.raises(LLMTimeout, match="total_timeout_s"):
                await client.complete(MSGS)
            assert time.perf_counter() - start < 3.0  # timeout_s alone: 30 s


async def test_malformed_json_is_retried_then_reported() -> None:
    async with FakeLLMServer() as server:
        async with LLMClient(_config(server, max_retries=2)) as client:
            server.push_faults("malformed")
            c = await client.complete(MSGS)
            assert c.usage.retries == 1
            assert server.requests == 2
            server.push_faults("malformed", "malformed", "malformed")
            with pytest.raises(LLMResponseError, match="not a valid chat completion"):
                await client.complete(MSGS)
        assert server.requests == 5


async def test_connection_reset_is_retried() -> None:
    async with FakeLLMServer() as server:
        async with LLMClient(_config(server, max_retries=2)) as client:
            server.push_faults("reset")
            c = await client.complete(MSGS)
            assert c.usage.retries == 1
            assert server.requests == 2
            server.push_faults("reset", "reset", "reset")  # 1 try + max_retries=2
            with pytest.raises(LLMConnectionError):
                await client.complete(MSGS)
            assert client.usage.retries == 1 + 2
        assert server.requests == 2 + 3


async def test_unreachable_endpoint_raises_connection_error() -> None:
    async with FakeLLMServer() as server:
        url = server.base_url
    cfg = LLMConfig(
        base_url=url,
        api_key_env=None,
        max_retries=1,
        timeout_s=2.0,
        http_backend=_BACKEND["name"],
    )
    async with LLMClient(cfg) as client:
        with pytest.raises(LLMConnectionError):
            await client.complete(MSGS)
        assert client.usage.retries == 1


async def test_cancelling_100_in_flight_calls_settles_at_once_and_closes_connections() -> None:
    async with (
        FakeLLMServer(latency=60.0) as server,
        LLMClient(_config(server, max_concurrency=100)) as client,
    ):
        async with anyio.create_task_group() as tg:
            for _ in range(100):
                tg.start_soon(client.complete, MSGS)
            with anyio.fail_after(10):
                while server.in_flight < 100:
                    await anyio.sleep(0.01)
            assert server.open_connections == 100
            start = time.perf_counter()
            tg.cancel_scope.cancel()
        settled = time.perf_counter() - start
        assert settled < 2.0  # the calls would otherwise wait 60 s
        assert client.in_flight == 0
        assert await server.wait_for_connections(0, within=2.0)
        assert server.client_disconnects == 100
        assert server.completions == 0
        # the client still works after the cancellation
        server.latency = 0.0
        assert (await client.complete(MSGS)).texts


async def test_concurrency_limit_is_respected() -> None:
    # A latency long next to the client's own work per request, so the average holds on
    # a loaded machine (the suite runs on two workers).
    async with FakeLLMServer(latency=0.3) as server:
        async with (
            LLMClient(_config(server, max_concurrency=8)) as client,
            anyio.create_task_group() as tg,
        ):
            for _ in range(40):
                tg.start_soon(client.complete, MSGS)
        assert server.completions == 40
        assert server.max_in_flight == 8
        assert server.max_open_connections <= 8
        # 40 requests of 0.3 s, 8 at a time: about 8 in flight on average
        assert 5.0 <= server.mean_in_flight <= 8.0


async def test_n_samples_in_one_request_or_topped_up() -> None:
    async with FakeLLMServer(_numbered) as server:
        async with LLMClient(_config(server)) as client:
            c = await client.complete(MSGS, n=3, sample_index=100)
        assert server.requests == 1
        assert server.log[0].body["n"] == 3
        assert server.log[0].body["seed"] == 100
        assert c.texts == [f"answer 0.{i} seed=100" for i in range(3)]
        assert c.sample_indices == [100, 101, 102]
        assert c.usage.samples == 3
    async with FakeLLMServer(_numbered, supports_n=False) as server:
        async with LLMClient(_config(server)) as client:
            c = await client.complete(MSGS, n=3, sample_index=100)
        assert len(c.texts) == 3
        # one choice per answer: the missing samples are asked for with their own seeds
        assert [r.body.get("seed") for r in server.log] == [100, 101, 102]
        assert c.usage.calls == 3
    async with FakeLLMServer(_numbered) as server:
        async with LLMClient(_config(server, max_n_per_request=2)) as client:
            c = await client.complete(MSGS, n=5)
        assert [r.n for r in server.log] == [2, 2, 1]
        assert len(c.texts) == 5


async def test_cache_replays_a_run_with_zero_calls(tmp_path: Path) -> None:
    async def run(server: FakeLLMServer) -> tuple[list[list[str]], Usage]:
        cfg = _config(server, cache_dir=str(tmp_path / "cache"))
        async with LLMClient(cfg) as client:
            results: list[list[str]] = [[] for _ in range(6)]

            async def one(i: int) -> None:
                msgs = [{"role": "user", "content": f"question {i % 3}"}]
                results[i] = (await client.complete(msgs, n=2, sample_index=10 * i)).texts

            async with anyio.create_task_group() as tg:
                for i in range(6):
                    tg.start_soon(one, i)
            return results, client.usage

    async with FakeLLMServer(_numbered) as server:
        first, usage1 = await run(server)
        assert server.requests == 6
        assert usage1.calls == 6
        assert usage1.cache_hits == 0
    async with FakeLLMServer(_numbered) as server:  # a fresh server answers differently
        second, usage2 = await run(server)
        assert server.requests == 0
    assert second == first
    assert usage2.calls == 0
    assert usage2.cache_hits == 12
    assert usage2.tokens_in == 0
    assert usage2.cost == 0.0


async def test_cache_extends_to_new_samples_and_dedups_concurrent_calls(tmp_path: Path) -> None:
    async with FakeLLMServer(_numbered, latency=0.05) as server:
        cfg = _config(server, cache_dir=str(tmp_path))
        async with LLMClient(cfg) as client:
            a = await client.complete(MSGS, n=2, sample_index=0)
            b = await client.complete(MSGS, n=4, sample_index=0)
            assert b.texts[:2] == a.texts
            assert b.cached == [True, True, False, False]
            assert server.log[-1].n == 2  # only the two missing samples were asked for
            before = server.requests
            results: list[list[str]] = []

            async def same() -> None:
                results.append((await client.complete(MSGS, sample_index=999)).texts)

            async with anyio.create_task_group() as tg:
                for _ in range(10):
                    tg.start_soon(same)
            assert server.requests == before + 1
            assert all(r == results[0] for r in results)
        # a different temperature is a different key
        async with LLMClient(cfg) as client:
            await client.complete(MSGS, n=2, sample_index=0, temperature=0.1)
            assert client.usage.calls == 1


async def test_client_survives_a_new_event_loop() -> None:
    """A client kept across runs (e.g. a process-wide proposer) rebinds its pool."""
    async with FakeLLMServer() as server:
        client = LLMClient(_config(server))
        await client.complete(MSGS)

        async def in_other_loop() -> str:
            return (await client.complete(MSGS)).text

        for _ in range(2):
            text = await anyio.to_thread.run_sync(anyio.run, in_other_loop)
            assert "def transform" in text
        await client.complete(MSGS)
        await client.aclose()
        assert client.usage.calls == 4
