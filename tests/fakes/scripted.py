"""An in-memory engine for pipeline tests: streams scripted chunks, records requests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from copilot_lsp.engine.types import CompletionRequest, StreamChunk
from copilot_lsp.errors import EngineUnavailable


class ScriptedEngine:
    """Streams `chunks` with a pause between them; records requests and closed streams."""

    base_url = "http://engine.test/v1"

    def __init__(self, chunks: list[str], pause: float = 0.0, fail: bool = False) -> None:
        self.chunks = chunks
        self.pause = pause
        self.fail = fail
        self.requests: list[CompletionRequest] = []
        self.closed = 0
        self.sent = 0

    async def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        self.requests.append(request)
        if self.fail:
            raise EngineUnavailable("cannot reach the engine at http://engine.test/v1")
        try:
            for index, text in enumerate(self.chunks):
                await asyncio.sleep(self.pause)
                self.sent += 1
                yield StreamChunk(text, index + 1)
            yield StreamChunk("", len(self.chunks), "stop")
        finally:
            self.closed += 1
