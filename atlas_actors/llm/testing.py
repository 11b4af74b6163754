"""A small OpenAI-compatible chat-completions server for tests and benchmarks.

Real HTTP/1.1 (keep-alive; an asyncio protocol with a minimal parser, cheap enough
to serve thousands of requests a second) on ``127.0.0.1`` with an ephemeral port. It
answers ``POST /v1/chat/completions`` (``n`` choices and a ``usage`` block) with text
from a scripted *responder*, after a configurable latency, and can inject faults:
429 with ``Retry-After``, 500, 400, 401, a hang, a malformed JSON body and a
connection reset. Counters (requests seen, open connections, ...) let tests assert
what reached the wire.

Use it as an async context manager::

    async with FakeLLMServer(lambda req: "```python\\ndef transform(g): return g\\n```") as s:
        config = LLMConfig(base_url=s.base_url, api_key_env=None)
        ...
        assert s.completions == 1

or run it in its own process (the benchmark does)::

    python -m atlas_actors.llm.testing --latency 0.2 --rate-429 0.1 --retry-after 0.1

which prints ``READY <base_url>`` and, on SIGTERM/SIGINT, ``STATS <json>``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import random
import signal
import socket
import struct
import sys
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

FaultKind = Literal["429", "500", "400", "401", "hang", "malformed", "reset"]
FAULT_KINDS: tuple[FaultKind, ...] = ("429", "500", "400", "401", "hang", "malformed", "reset")


@dataclass(frozen=True)
class Fault:
    """A fault injected into one request."""

    kind: FaultKind
    retry_after: float | None = None
    """For ``429``: the ``Retry-After`` header in seconds (None: no header)."""
    hang_s: float = 3600.0
    """For ``hang``: how long to hold the request without answering."""


@dataclass
class ChatRequest:
    """One chat-completions request as the server saw it."""

    body: dict[str, Any]
    headers: dict[str, str]
    number: int
    """0-based arrival number of this HTTP request."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages", [])
        return msgs if isinstance(msgs, list) else []

    @property
    def n(self) -> int:
        n = self.body.get("n") or 1
        return int(n)

    @property
    def text(self) -> str:
        """All message contents joined by newlines."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def system(self) -> str:
        return "\n".join(
            str(m.get("content", "")) for m in self.messages if m.get("role") == "system"
        )

    @property
    def last_user(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return str(m.get("content", ""))
        return ""


ResponderResult = str | Sequence[str]
Responder = Callable[[ChatRequest], ResponderResult | Awaitable[ResponderResult]]
"""Maps a request to the content of its choices: one string (used for every choice)
or one string per choice."""

DEFAULT_REPLY = "```python\ndef transform(grid):\n    return grid\n```"


def _count_tokens(text: str) -> int:
    return max(1, len(text.split())) if text else 0


@dataclass
class _Counters:
    requests: int = 0
    completions: int = 0
    connections_opened: int = 0
    open_connections: int = 0
    max_open_connections: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    in_flight_seconds: float = 0.0
    """The integral of ``in_flight`` over time (request-seconds)."""
    first_request_at: float | None = None
    changed_at: float | None = None
    """When ``in_flight`` last changed (monotonic clock)."""
    client_disconnects: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


@dataclass
class _HTTPRequest:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


class _Connection(asyncio.Protocol):
    """One client connection: parses HTTP/1.1 requests, one at a time (no pipelining)."""

    def __init__(self, server: FakeLLMServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.busy = False
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None

    # asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server._connection_opened(self)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._next_request()

    def eof_received(self) -> bool:
        self._gone()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self._gone()
        self.server._connection_closed(self)

    # helpers
    def _gone(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def close(self, abort: bool = False) -> None:
        if self.transport is not None and not self.transport.is_closing():
            if abort:
                self.transport.abort()
            else:
                self.transport.close()

    def _next_request(self) -> None:
        if self.busy or self.closed.done():
            return
        head_end = self.buf.find(b"\r\n\r\n")
        if head_end < 0:
            if len(self.buf) > 65536:
                self.close(abort=True)
            return
        lines = bytes(self.buf[:head_end]).decode("latin-1").split("\r\n")
        try:
            method, target, _version = lines[0].split(" ", 2)
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
        except ValueError:
            self.close(abort=True)
            return
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.close(abort=True)  # clients of this server send Content-Length bodies
            return
        total = head_end + 4 + length
        if len(self.buf) < total:
            return
        body = bytes(self.buf[head_end + 4 : total])
        del self.buf[:total]
        self.busy = True
        request = _HTTPRequest(method, target, headers, body)
        self.task = asyncio.get_running_loop().create_task(self._serve(request))

    async def _serve(self, request: _HTTPRequest) -> None:
        keep = False
        try:
            keep = await self.server._respond(self, request)
        except asyncio.CancelledError:
            self.close(abort=True)
            raise
        except Exception as exc:  # a responder bug: answer 500 rather than hang
            self.server._c.faults["responder-error"] += 1
            self.send(500, _error_body(f"responder failed: {exc!r}", "server_error"))
        finally:
            self.busy = False
            self.task = None
        if request.headers.get("connection", "").lower() == "close":
            keep = False
        if keep:
            self._next_request()
        else:
            self.close()

    def send(
        self,
        status: int,
        payload: bytes,
        extra_headers: Sequence[tuple[str, str]] = (),
        content_type: str = "application/json",
    ) -> None:
        self.server._c.statuses[status] += 1
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            f"content-type: {content_type}",
            f"content-length: {len(payload)}",
        ]
        head += [f"{k}: {v}" for k, v in extra_headers]
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)

    async def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the client hangs up first; True if still connected."""
        if self.closed.done():
            return False
        if seconds <= 0:
            return True
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[bool] = loop.create_future()

        def wake(alive: bool) -> None:
            if not woken.done():
                woken.set_result(alive)

        def on_close(_f: asyncio.Future[None]) -> None:
            wake(False)

        timer = loop.call_later(seconds, wake, True)
        self.closed.add_done_callback(on_close)
        try:
            return await woken
        finally:
            timer.cancel()
            self.closed.remove_done_callback(on_close)


class FakeLLMServer:
    """An OpenAI-compatible chat-completions server on loopback (see module docs).

    Runs on the asyncio event loop (the one pytest-asyncio and Ray use).

    Args:
        responder: content for each request (default: an identity ``transform``).
        latency: seconds to wait before answering each request.
        fault_rates: probability per request of each fault kind (seeded by ``seed``).
        retry_after: ``Retry-After`` seconds sent with random 429s (None: no header).
        supports_n: when False, answers only one choice whatever ``n`` asked.
        record: keep every :class:`ChatRequest` in :attr:`log`.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        fault_rates: dict[FaultKind, float] | None = None,
        retry_after: float | None = 0.1,
        supports_n: bool = True,
        seed: int = 0,
        record: bool = True,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"host must be a loopback address, got {host!r}")
        self.responder: Responder = responder or (lambda _req: DEFAULT_REPLY)
        self.latency = latency
        self.host = host
        self.port = port
        self.fault_rates: dict[FaultKind, float] = dict(fault_rates or {})
        for kind in self.fault_rates:
            if kind not in FAULT_KINDS:
                raise ValueError(f"fault_rates: unknown fault {kind!r}; allowed: {FAULT_KINDS}")
        self.retry_after = retry_after
        self.supports_n = supports_n
        self.record = record
        self.log: list[ChatRequest] = []
        self._faults: deque[Fault] = deque()
        self._rng = random.Random(seed)
        self._c = _Counters()
        self._server: asyncio.Server | None = None
        self._conns: set[_Connection] = set()

    # -- counters ---------------------------------------------------------------------

    @property
    def requests(self) -> int:
        """HTTP requests received (every attempt, including faulted ones)."""
        return self._c.requests

    @property
    def completions(self) -> int:
        """Requests answered with a 200 completion."""
        return self._c.completions

    @property
    def open_connections(self) -> int:
        return self._c.open_connections

    @property
    def max_open_connections(self) -> int:
        return self._c.max_open_connections

    @property
    def connections_opened(self) -> int:
        return self._c.connections_opened

    @property
    def in_flight(self) -> int:
        """Requests received and not yet answered."""
        return self._c.in_flight

    @property
    def max_in_flight(self) -> int:
        return self._c.max_in_flight

    @property
    def mean_in_flight(self) -> float:
        """Requests in flight on average, from the first request to the last change."""
        c = self._c
        if c.first_request_at is None or c.changed_at is None:
            return 0.0
        span = c.changed_at - c.first_request_at
        return c.in_flight_seconds / span if span > 0 else float(c.in_flight)

    @property
    def client_disconnects(self) -> int:
        """Requests whose client went away before the answer."""
        return self._c.client_disconnects

    @property
    def statuses(self) -> Counter[int]:
        return self._c.statuses

    @property
    def faults_served(self) -> Counter[str]:
        return self._c.faults

    def stats(self) -> dict[str, Any]:
        c = self._c
        return {
            "requests": c.requests,
            "completions": c.completions,
            "connections_opened": c.connections_opened,
            "open_connections": c.open_connections,
            "max_open_connections": c.max_open_connections,
            "max_in_flight": c.max_in_flight,
            "mean_in_flight": self.mean_in_flight,
            "client_disconnects": c.client_disconnects,
            "statuses": {str(k): v for k, v in sorted(c.statuses.items())},
            "faults": dict(c.faults),
        }

    def reset_counters(self) -> None:
        open_now, in_flight = self._c.open_connections, self._c.in_flight
        self._c = _Counters(open_connections=open_now, in_flight=in_flight)
        self.log.clear()

    # -- faults -----------------------------------------------------------------------

    def push_faults(self, *faults: Fault | FaultKind) -> None:
        """Queue faults for the next requests, in order (one per request)."""
        for f in faults:
            self._faults.append(f if isinstance(f, Fault) else Fault(f))

    def _next_fault(self) -> Fault | None:
        if self._faults:
            return self._faults.popleft()
        for kind, p in self.fault_rates.items():
            if p > 0 and self._rng.random() < p:
                return Fault(kind, retry_after=self.retry_after if kind == "429" else None)
        return None

    # -- lifecycle --------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def __aenter__(self) -> FakeLLMServer:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Connection(self), self.host, self.port, backlog=4096
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for conn in list(self._conns):
            if conn.task is not None:
                conn.task.cancel()
            conn.close(abort=True)
        await asyncio.sleep(0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5.0)

    async def wait_for_connections(self, count: int = 0, within: float = 5.0) -> bool:
        """Wait until at most ``count`` connections are open; False if not ``within`` s."""
        with anyio.move_on_after(within):
            while self._c.open_connections > count:  # noqa: ASYNC110 (polling a counter)
                await anyio.sleep(0.005)
            return True
        return False

    # -- HTTP ----------------------------------------------------------------------------

    def _connection_opened(self, conn: _Connection) -> None:
        c = self._c
        self._conns.add(conn)
        c.connections_opened += 1
        c.open_connections += 1
        c.max_open_connections = max(c.max_open_connections, c.open_connections)

    def _connection_closed(self, conn: _Connection) -> None:
        if conn in self._conns:
            self._conns.discard(conn)
            self._c.open_connections -= 1

    async def _respond(self, conn: _Connection, request: _HTTPRequest) -> bool:
        c = self._c
        number = c.requests
        c.requests += 1
        self._in_flight_changes(c, +1)
        c.max_in_flight = max(c.max_in_flight, c.in_flight)
        try:
            return await self._respond_inner(conn, request, number)
        finally:
            self._in_flight_changes(c, -1)

    @staticmethod
    def _in_flight_changes(c: _Counters, by: int) -> None:
        now = time.monotonic()
        if c.first_request_at is None:
            c.first_request_at = now
        if c.changed_at is not None:
            c.in_flight_seconds += c.in_flight * (now - c.changed_at)
        c.changed_at = now
        c.in_flight += by

    async def _respond_inner(self, conn: _Connection, request: _HTTPRequest, number: int) -> bool:
        path = request.target.split("?", 1)[0].rstrip("/")
        if request.method != "POST" or not path.endswith("/chat/completions"):
            conn.send(404, _error_body("not found", "not_found"))
            return True
        try:
            payload = json.loads(request.body or b"{}")
            if not isinstance(payload, dict):
                raise ValueError("body is not an object")
        except ValueError as exc:
            conn.send(400, _error_body(f"bad JSON: {exc}", "invalid_request"))
            return True
        req = ChatRequest(body=payload, headers=request.headers, number=number)
        if self.record:
            self.log.append(req)

        fault = self._next_fault()
        if fault is not None:
            self._c.faults[fault.kind] += 1
            return await self._serve_fault(conn, fault)

        if not await conn.wait(self.latency):
            self._c.client_disconnects += 1
            return False
        result = self.responder(req)
        if inspect.isawaitable(result):
            result = await result
        n = max(1, req.n) if self.supports_n else 1
        contents = [result] * n if isinstance(result, str) else list(result)[:n]
        prompt_tokens = sum(_count_tokens(str(m.get("content", ""))) for m in req.messages)
        completion_tokens = sum(_count_tokens(t) for t in contents)
        response = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(payload.get("model", "default")),
            "choices": [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
                for i, text in enumerate(contents)
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        conn.send(200, json.dumps(response).encode())
        self._c.completions += 1
        return True

    async def _serve_fault(self, conn: _Connection, fault: Fault) -> bool:
        kind = fault.kind
        if kind == "429":
            extra = [] if fault.retry_after is None else [("retry-after", f"{fault.retry_after:g}")]
            conn.send(429, _error_body("rate limited", "rate_limit"), extra)
            return True
        if kind in ("500", "400", "401"):
            code = int(kind)
            conn.send(code, _error_body(f"injected {code}", "injected"))
            return True
        if kind == "malformed":
            conn.send(200, b'{"id": "chatcmpl-x", "choices": [{"ind')
            return True
        if kind == "hang":
            if not await conn.wait(fault.hang_s):
                self._c.client_disconnects += 1
            return False
        # reset: abort the connection with a TCP RST, no response
        assert conn.transport is not None
        sock = conn.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close(abort=True)
        return False


def _error_body(message: str, kind: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind, "code": None}}).encode()


# -- command line (benchmark server in its own process) ----------------------------------


async def _serve_forever(args: argparse.Namespace) -> None:
    rates: dict[FaultKind, float] = {}
    if args.rate_429:
        rates["429"] = args.rate_429
    if args.rate_500:
        rates["500"] = args.rate_500
    server = FakeLLMServer(
        latency=args.latency,
        port=args.port,
        fault_rates=rates,
        retry_after=args.retry_after,
        seed=args.seed,
        record=False,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if args.exit_on_eof:  # the parent holds our stdin: stop when it goes away
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

        async def watch_stdin() -> None:
            await reader.read()
            stop.set()

        watcher = asyncio.ensure_future(watch_stdin())
    async with server:
        print(f"READY {server.base_url}", flush=True)
        cpu0 = time.process_time()
        await stop.wait()
        stats = server.stats()
        stats["cpu_s"] = time.process_time() - cpu0  # serving only, not start-up
        print(f"STATS {json.dumps(stats)}", flush=True)
    if args.exit_on_eof:
        watcher.cancel()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--rate-429", type=float, default=0.0, help="fraction answered 429")
    parser.add_argument("--rate-500", type=float, default=0.0, help="fraction answered 500")
    parser.add_argument("--retry-after", type=float, default=0.1, help="Retry-After for 429s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--exit-on-eof", action="store_true", help="stop when standard input closes"
    )
    args = parser.parse_args(argv)
    asyncio.run(_serve_forever(args))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
