"""A loopback relay between the benchmark's servers and the engine that keeps the prompts.

What a completion's prompt carried from other files tells whether a miss is the retrieval's
(the API was never in the prompt) or the model's (it was, and the model wrote something
else). The server does not log prompts (they are the user's code), so the benchmark reads them
on their way to the engine: each HTTP/1.1 request's JSON body (`Content-Length`; the servers'
httpx sends no chunked bodies) whose `prompt` is a string is recorded with its `max_tokens`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from copilot_lsp.testing.relay import CHUNK, LoopbackRelay

_HEAD_END = b"\r\n\r\n"


@dataclass(frozen=True, slots=True)
class Sent:
    """A completion request as the engine received it."""

    prompt: str
    max_tokens: int | None


class PromptTap(LoopbackRelay):
    """Listens on a free loopback port and relays each connection to the engine at `url`."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.hostname is None or parts.port is None:
            raise ValueError(f"{url}: the engine's URL needs a host and a port to relay to")
        super().__init__(parts.hostname, parts.port)
        self._engine_url = url
        self.sent: list[Sent] = []

    @property
    def url(self) -> str:
        """The engine's URL through this relay."""
        return self.relay_url(self._engine_url)

    def completion_since(self, mark: int) -> str | None:
        """The prompt of the last request since `len(sent)` was `mark` that asked for more
        than one token (a prefix warm-up asks for one)."""
        for sent in reversed(self.sent[mark:]):
            if sent.max_tokens is None or sent.max_tokens > 1:
                return sent.prompt
        return None

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        *,
        to_target: bool,
        opened_at: float,
    ) -> None:
        pending = b""
        # A side may close first (the server cancels a request): nothing left to relay.
        with contextlib.suppress(OSError):
            while data := await source.read(CHUNK):
                if to_target:
                    pending = self._requests(pending + data)
                sink.write(data)
                await sink.drain()
            if sink.can_write_eof():
                sink.write_eof()

    def _requests(self, buffer: bytes) -> bytes:
        """Record the whole requests at the start of `buffer`; returns what is left."""
        while (head_end := buffer.find(_HEAD_END)) >= 0:
            length = _content_length(buffer[:head_end])
            end = head_end + len(_HEAD_END) + length
            if len(buffer) < end:
                break
            self._record(buffer[head_end + len(_HEAD_END) : end])
            buffer = buffer[end:]
        return buffer

    def _record(self, body: bytes) -> None:
        try:
            request = json.loads(body)
        except ValueError:
            return
        if isinstance(request, dict) and isinstance(request.get("prompt"), str):
            wanted = request.get("max_tokens")
            self.sent.append(Sent(request["prompt"], wanted if isinstance(wanted, int) else None))


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            with contextlib.suppress(ValueError):
                return int(value.strip())
    return 0


_COMMENT_LEADERS = ("#", "//", "--")


def cross_file_part(prompt: str, path: str) -> str:
    """The prompt before the current file's code: up to the last mention of its path (its
    `# path` header, its `<|file_sep|>path`); with neither (snippets as comments, the
    prefix-only family) the comment lines the prompt starts with; "" when it has no code from
    other files."""
    at = prompt.rfind(path)
    if at >= 0:
        return prompt[:at]
    lines = prompt.split("\n")
    count = next(
        (i for i, line in enumerate(lines) if not line.lstrip().startswith(_COMMENT_LEADERS)),
        len(lines),
    )
    return "\n".join(lines[:count])
