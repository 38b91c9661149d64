"""An in-memory engine for pipeline tests: streams scripted chunks, records requests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from copilot_lsp.engine.types import CompletionRequest, ServedModel, StreamChunk
from copilot_lsp.errors import EngineError, EngineStreamError, EngineUnavailable


class ScriptedEngine:
    """Streams `chunks` with a pause between them; records requests and closed streams.

    Sampled requests (the alternatives beside an explicit request: they name `n`) are kept
    apart, in `sampled_requests`: each of their choices streams its list in
    `choices` (none scripted: every choice ends empty), interleaved one chunk per choice in
    turn, `sampled_pause` apart (default: `pause`); `cut_sampled_after` ends that stream with
    an error after so many chunks.
    """

    base_url = "http://engine.test/v1"
    samples_exactly = True

    def __init__(self, chunks: list[str], pause: float = 0.0, fail: bool = False) -> None:
        self.chunks = chunks
        self.pause = pause
        self.fail = fail
        self.requests: list[CompletionRequest] = []
        self.closed = 0
        self.sent = 0
        self.choices: list[list[str]] = []
        self.cut_sampled_after: int | None = None
        self.sampled_pause: float | None = None
        self.sampled_requests: list[CompletionRequest] = []
        self.sampled_closed = 0
        self.sampled_sent = 0

    async def served_model(self) -> ServedModel | None:
        return None  # says nothing: the prompt format is the default one

    async def count_tokens(self, text: str) -> int:
        raise EngineError("the scripted engine has no tokenizer")

    def model_source(self) -> object:
        return self

    def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        if request.n is not None:
            return self._sampled(request)
        return self._greedy(request)

    async def _greedy(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
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

    async def _sampled(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        self.sampled_requests.append(request)
        scripts = (self.choices + [[]] * request.choices)[: request.choices]
        per_choice = [
            [StreamChunk(text, step + 1, index=index) for step, text in enumerate(chunks)]
            + [StreamChunk("", len(chunks), "stop", index)]
            for index, chunks in enumerate(scripts)
        ]
        events = [
            choice[step]
            for step in range(max(map(len, per_choice), default=0))
            for choice in per_choice
            if step < len(choice)
        ]
        try:
            for number, chunk in enumerate(events):
                if self.cut_sampled_after is not None and number >= self.cut_sampled_after:
                    raise EngineStreamError("the engine's stream was cut: scripted")
                pause = self.pause if self.sampled_pause is None else self.sampled_pause
                await asyncio.sleep(pause)
                self.sampled_sent += 1
                yield chunk
        finally:
            self.sampled_closed += 1
