"""A scripted OpenAI-compatible engine: plain asyncio, real HTTP/SSE, loopback only.

Each request to /v1/completions takes the next `Reply` from `replies` (or `default`),
so a test says exactly what the engine does: stream text with delays, answer an error
status, send malformed events, cut the stream, or stall. Sampled requests (those that name
`n`: the server's alternatives, completion/alternatives.py) take theirs from
`sampled` (or `sampled_default`, which answers every choice empty) and are recorded in
`sampled_requests`: the greedy request beside them arrives in either order, and keeps its own
script. The load benchmark uses it as a
stand-in engine that streams a fixed answer and counts the streams open at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    chunks: list[str] = field(default_factory=lambda: ["pass"])
    status: int = 200
    delay_s: float = 0.0
    """Pause before each chunk."""
    first_delay_s: float = 0.0
    """Pause before the response headers."""
    raw_events: list[str] | None = None
    """Send these `data:` payloads verbatim instead of well-formed chunks."""
    cut_after: int | None = None
    """Close the connection after this many chunks, without finishing."""
    finish_reason: str = "stop"
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (e.g. `Retry-After` on a 429 or 503)."""
    tail: bytes = b""
    """Raw bytes written just before a `cut_after` cut (half an event, half a UTF-8 char)."""
    choices: list[list[str]] | None = None
    """Per-choice chunks for a request with `n` > 1 (choice i gets `index` i), interleaved
    one chunk of each choice in turn as vLLM does; `cut_after` counts these events. None: every
    one of the request's `n` choices streams `chunks`."""
    hang_up: bool = False
    """Close the connection on reading the request, without an answer: what a kept-alive
    connection does when the engine closes it just as a request arrives."""
    logprobs: list[list[tuple[str, float]]] | None = None
    """Per chunk of `chunks`, its tokens and their log-probabilities, sent as vLLM streams
    them (`logprobs`: `tokens`, `token_logprobs`, `top_logprobs`, `text_offset`)."""
    gate: Callable[[int], Awaitable[object]] | None = None
    """Awaited before event `index` goes out: holds the stream until the test has seen what it
    waits for (an event, not a delay that a busy host may not honour)."""


@dataclass
class Received:
    body: dict[str, Any]
    headers: dict[str, str]
    chunks_sent: int = 0
    disconnected: bool = False
    finished: bool = False
    choices: int = 1
    """The `n` the request asked for."""
    new_connection: bool = False
    """The first request on its connection (opened for it, or in advance as a spare)."""


class FakeEngine:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.default = Reply()
        self.route: Callable[[dict[str, Any]], Reply | None] | None = None
        """Chooses a greedy request's reply from its body (the prompt) before `replies` and
        `default` are consulted: one engine answering completions and next edits apart."""
        self.requests: list[Received] = []
        self.sampled: list[Reply] = []
        self.sampled_default = Reply(chunks=[])
        self.sampled_requests: list[Received] = []
        self.models = ["fake-model"]
        self.roots: dict[str, str] = {}
        """`/v1/models` roots by model id (vLLM's weights path or repository id)."""
        self.tokenize: Callable[[str], int] | None = None
        """Answers `/tokenize` with this count of the prompt; None: 404 (not vLLM)."""
        self.tokenized: list[str] = []
        self.metrics_text = ""
        """What /metrics answers (Prometheus text format)."""
        self.metrics: Callable[[], str] | None = None
        """If set, called for each /metrics request instead (counters that move)."""
        self.scrapes = 0
        """/metrics requests answered."""
        self.worker_list_probes = 0
        """`/list_workers` requests (the health monitor asks whether a router answers)."""
        self.other_paths: list[str] = []
        self.open_now = 0
        self.peak_open = 0
        """Most completion streams open at the same time."""
        self.keep_bodies = True
        """False: record requests without their bodies (long runs, many prompts)."""
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self.connections_opened = 0
        """Connections clients opened (a client that keeps them alive opens few)."""
        self.port = 0
        self.scheme = "http"

    @property
    def aborted(self) -> int:
        """Completion streams the client closed before they finished (greedy ones)."""
        return sum(r.disconnected for r in self.requests)

    @staticmethod
    def is_sampled(body: dict[str, Any]) -> bool:
        """A request for sampled alternatives (it names `n`) rather than the greedy one."""
        return "n" in body

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/v1"

    async def start(self, port: int = 0, tls: ssl.SSLContext | None = None) -> FakeEngine:
        """Listen on `port` (0: any free one; the same port again: an engine restart),
        over TLS with the server context `tls` if given."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port, ssl=tls)
        self.scheme = "https" if tls is not None else "http"
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        """Stop listening and drop every open connection, kept-alive ones too (as a real
        engine's restart does; otherwise a pooled connection would still be answered)."""
        if self._server is not None:
            self._server.close()
            for writer in list(self._connections):
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        self.connections_opened += 1
        try:
            first = True
            while await self._one_request(reader, writer, first=first):
                first = False
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._connections.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, first: bool
    ) -> bool:
        request_line = await reader.readline()
        if not request_line:
            return False
        _, path, _ = request_line.decode().split(" ", 2)
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            key, _, value = line.decode().partition(":")
            headers[key.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = json.loads(await reader.readexactly(length)) if length else {}
        if path.endswith("/models"):
            entries = [
                {"id": m, **({"root": self.roots[m]} if m in self.roots else {})}
                for m in self.models
            ]
            payload = json.dumps({"data": entries}).encode()
            writer.write(_head(200, "application/json", len(payload)) + payload)
            await writer.drain()
            return True
        if path == "/tokenize":
            prompt = str(body.get("prompt", ""))
            self.tokenized.append(prompt)
            if self.tokenize is None:
                writer.write(_head(404, "text/plain", 0))
                await writer.drain()
                return True
            count = self.tokenize(prompt)
            payload = json.dumps({"count": count, "tokens": list(range(count))}).encode()
            writer.write(_head(200, "application/json", len(payload)) + payload)
            await writer.drain()
            return True
        if path == "/health":
            writer.write(_head(200, "text/plain", 0))
            await writer.drain()
            return True
        if path == "/metrics":
            self.scrapes += 1
            payload = (self.metrics() if self.metrics else self.metrics_text).encode()
            writer.write(_head(200, "text/plain", len(payload)) + payload)
            await writer.drain()
            return True
        if path == "/list_workers":  # vLLM has no worker list: only a router answers it
            self.worker_list_probes += 1
            writer.write(_head(404, "text/plain", 0))
            await writer.drain()
            return True
        if not path.endswith("/completions"):
            self.other_paths.append(path)
            writer.write(_head(404, "text/plain", 0))
            await writer.drain()
            return True
        received = Received(body if self.keep_bodies else {}, headers, new_connection=first)
        if self.is_sampled(body):
            reply = self.sampled.pop(0) if self.sampled else self.sampled_default
            self.sampled_requests.append(received)
        else:
            routed = self.route(body) if self.route is not None else None
            reply = routed or (self.replies.pop(0) if self.replies else self.default)
            self.requests.append(received)
        n = body.get("n", 1)
        received.choices = n if isinstance(n, int) and n > 1 else 1
        self.open_now += 1
        self.peak_open = max(self.peak_open, self.open_now)
        try:
            return await self._stream(reply, received, reader, writer)
        finally:
            self.open_now -= 1

    async def _stream(
        self,
        reply: Reply,
        received: Received,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Answer one completion request; True when the connection can serve another."""
        if reply.hang_up:
            return False
        await asyncio.sleep(reply.first_delay_s)
        if reply.status != 200:
            payload = json.dumps({"error": {"message": f"scripted {reply.status}"}}).encode()
            head = _head(reply.status, "application/json", len(payload), reply.headers)
            writer.write(head + payload)
            await writer.drain()
            received.finished = True
            return False
        # A well-formed answer is chunked and keeps the connection, as vLLM's (uvicorn) does;
        # a scripted fault ends its body by closing the connection.
        chunked = reply.raw_events is None and reply.cut_after is None
        framing = b"transfer-encoding: chunked\r\n" if chunked else b"connection: close\r\n"
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\n" + framing + b"\r\n"
        )
        events = reply.raw_events
        if events is None:
            events = _events(reply, received.choices)
        try:
            for index, event in enumerate(events):
                if reply.cut_after is not None and index >= reply.cut_after:
                    writer.write(reply.tail)
                    await writer.drain()
                    return False  # connection closes without [DONE]
                if reply.gate is not None:
                    await reply.gate(index)
                await asyncio.sleep(reply.delay_s)
                if reader.at_eof():  # the client closed its side: it stopped listening
                    received.disconnected = True
                    return False
                data = f"data: {event}\n\n".encode()
                writer.write(_chunk_frame(data) if chunked else data)
                await writer.drain()
                received.chunks_sent += 1
            if chunked:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
            received.finished = True
            return chunked
        except (ConnectionError, asyncio.CancelledError):
            received.disconnected = True
            raise


def _chunk_frame(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _head(
    status: int, content_type: str, length: int, extra: dict[str, str] | None = None
) -> bytes:
    reason = {
        200: "OK",
        429: "Too Many Requests",
        500: "Internal Server Error",
        503: "Service Unavailable",
    }.get(status, "X")
    more = "".join(f"{key}: {value}\r\n" for key, value in (extra or {}).items())
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\n"
        f"content-length: {length}\r\n{more}\r\n"
    ).encode()


def _events(reply: Reply, n: int) -> list[str]:
    """The `data:` payloads of a well-formed answer: each choice's chunks in turn (one event
    per choice per step, as vLLM interleaves them), its finish after its last, then `[DONE]`."""
    scripts = reply.choices if reply.choices is not None else [reply.chunks] * n
    per_choice = [
        [
            _chunk(text, step + 1, index=index, logprobs=_logprobs(reply, step))
            for step, text in enumerate(chunks)
        ]
        + [_chunk("", len(chunks), reply.finish_reason, index=index)]
        for index, chunks in enumerate(scripts)
    ]
    events = [
        event
        for step in range(max(map(len, per_choice), default=0))
        for choice in per_choice
        if step < len(choice)
        for event in [choice[step]]
    ]
    if len(scripts) > 1:  # vLLM's closing usage-only event counts every choice
        total = sum(len(chunks) for chunks in scripts)
        events.append(json.dumps({"id": "cmpl-fake", "choices": [], "usage": _usage(total)}))
    events.append("[DONE]")
    return events


def _logprobs(reply: Reply, step: int) -> dict[str, Any] | None:
    if reply.logprobs is None or step >= len(reply.logprobs):
        return None
    pairs = reply.logprobs[step]
    return {
        "text_offset": [0] * len(pairs),
        "token_logprobs": [logprob for _, logprob in pairs],
        "tokens": [token for token, _ in pairs],
        "top_logprobs": [{token: logprob} for token, logprob in pairs],
    }


def _chunk(
    text: str,
    tokens: int,
    finish_reason: str | None = None,
    *,
    index: int = 0,
    logprobs: dict[str, Any] | None = None,
) -> str:
    choice: dict[str, Any] = {"index": index, "text": text, "finish_reason": finish_reason}
    if logprobs is not None:
        choice["logprobs"] = logprobs
    return json.dumps(
        {
            "id": "cmpl-fake",
            "object": "text_completion",
            "choices": [choice],
            "usage": _usage(tokens),
        }
    )


def _usage(tokens: int) -> dict[str, int]:
    return {"prompt_tokens": 3, "completion_tokens": tokens, "total_tokens": tokens + 3}
