"""Alternatives: more than one suggestion when the user asks for one explicitly.

Automatic requests (typing) get one greedy suggestion: latency matters most there. An
explicit request (the editor's invoke, or cycling through suggestions) may return up to
`completion.alternatives`: the greedy one first, streamed and previewed as always, and beside
it one more engine request sampling the others (`n` = alternatives - 1 at
`completion.alternativesTemperature`). That request goes out when the greedy one's first
token arrives: the engine has the prompt in its prefix cache by then, so the alternatives
cost no second prefill, and they never delay the greedy suggestion's first token; the rest
of their generation runs beside it.

Each sampled choice is aligned to the cursor and cut by its own BlockCutter, like the greedy
one; its engine stream is closed as soon as every choice is final, or when the request is
cancelled or superseded. The results are fitted to the file, empty ones dropped and
duplicates (texts that differ in whitespace only) kept once, the greedy one first. The
sampled request only runs while an engine slot (`completion.maxInflight`) is free: it never
makes the greedy one wait, and an engine failure there costs the alternatives only. Once the
greedy suggestion is complete the answer waits at most `completion.alternativesWaitMs` for
them: choices still generating then are dropped, the finished ones kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from copilot_lsp.completion.admission import InflightLimiter
from copilot_lsp.completion.alignment import WhitespaceAligner
from copilot_lsp.completion.cutting import BlockCutter
from copilot_lsp.engine.types import CompletionEngine, CompletionRequest
from copilot_lsp.errors import EngineError
from copilot_lsp.settings import CompletionSettings
from copilot_lsp.telemetry.timeline import alternative_id

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Alternative:
    """A suggestion after the first: its own accept id (`<completion id>#<rank>`), text and
    end offset (past the cursor when it replaces closers there)."""

    id: str
    text: str
    end_offset: int


def wanted(options: CompletionSettings, *, automatic: bool) -> int:
    """How many sampled alternatives a request asks for beside the greedy one."""
    return 0 if automatic else max(options.alternatives - 1, 0)


def distinct(texts: Iterable[str]) -> list[str]:
    """`texts` in order without empty ones and without repeats; texts that differ only in
    whitespace count as one (the first is kept)."""
    seen: set[str] = set()
    kept = []
    for text in texts:
        key = " ".join(text.split())
        if not key or key in seen:
            continue
        seen.add(key)
        kept.append(text)
    return kept


def placed(
    completion_id: str, texts: Iterable[str], offset: int, replaced: Callable[[str], int]
) -> list[Alternative]:
    """The distinct non-empty `texts` as suggestions at `offset`, the first under
    `completion_id` itself, the others `#2`, `#3`, … (`replaced`: characters right of the
    cursor a text replaces)."""
    return [
        Alternative(
            completion_id if rank == 1 else alternative_id(completion_id, rank),
            text,
            offset + replaced(text),
        )
        for rank, text in enumerate(distinct(texts), start=1)
    ]


@dataclass(slots=True)
class ChoiceCut:
    """One sampled choice: aligned to the cursor, then cut where the suggestion ends."""

    aligner: WhitespaceAligner
    cutter: BlockCutter
    finished: bool = False
    """No more text wanted: cut, misaligned, or the engine finished this choice."""

    def feed(self, text: str) -> None:
        if self.finished:
            return
        if self.cutter.feed(self.aligner.feed(text)) or self.aligner.misaligned:
            self.finished = True

    def text(self) -> str:
        """The cut text (ends the choice: what is held back is flushed)."""
        self.cutter.feed(self.aligner.flush())
        self.cutter.end_of_stream()
        self.finished = True
        return self.cutter.text


class SampledChoices:
    """The alternatives' engine request, run as a task beside the greedy stream."""

    def __init__(
        self,
        engine: CompletionEngine,
        request: CompletionRequest,
        make_cut: Callable[[], ChoiceCut],
        slots: InflightLimiter,
        max_inflight: int,
    ) -> None:
        self.request = request
        self.choices = [make_cut() for _ in range(request.choices)]
        self.tokens = 0
        """Tokens the engine generated for the alternatives (all choices)."""
        self.ran = False
        """False when no engine slot was free (or it failed before answering)."""
        self._engine = engine
        self._slots = slots
        self._cap = max_inflight
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Send the request (once; later calls do nothing)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        if self._slots.active >= max(self._cap, 1):
            logger.debug("no engine slot free: no alternatives this time")
            return
        async with self._slots.slot(self._cap):  # free, checked above: no wait
            stream = self._engine.stream(self.request)
            counts: dict[int, int] = {}
            engine_done: set[int] = set()
            try:
                async for chunk in stream:
                    self.ran = True
                    if len(engine_done) == len(self.choices):
                        # After every choice's end: vLLM's usage event, all choices counted.
                        if chunk.completion_tokens is not None:
                            self.tokens = chunk.completion_tokens
                        continue
                    index = chunk.index
                    if not 0 <= index < len(self.choices):
                        continue
                    if chunk.completion_tokens is not None:
                        counts[index] = chunk.completion_tokens
                    elif chunk.text:
                        counts[index] = counts.get(index, 0) + 1
                    self.tokens = sum(counts.values())
                    self.choices[index].feed(chunk.text)
                    if chunk.finish_reason is not None:
                        engine_done.add(index)
                        self.choices[index].finished = True
                    if all(choice.finished for choice in self.choices):
                        break
            finally:
                # Closing the stream closes the HTTP response: the engine aborts every choice.
                await stream.aclose()

    async def texts(self, wait: float | None = None) -> list[str]:
        """The choices' cut texts, in choice order. When the engine failed midway, or `wait`
        seconds passed first, only the choices that were complete by then (the request is
        closed); none when the request did not run (the greedy suggestion stands alone then)."""
        if self._task is None:
            return []
        try:
            done, _ = await asyncio.wait({self._task}, timeout=wait)
        except asyncio.CancelledError:
            await self.cancel()  # asyncio.wait leaves the task running when its caller goes
            raise
        if not done:
            logger.debug("alternatives still generating after %.2f s: the finished ones only", wait)
            await self.cancel()
            return [choice.text() for choice in self.choices if choice.finished]
        try:
            await self._task
        except EngineError as error:
            logger.info("alternatives cut short: %s", error)
            return [choice.text() for choice in self.choices if choice.finished]
        if not self.ran:
            return []
        return [choice.text() for choice in self.choices]

    async def cancel(self) -> None:
        """Stop sampling (the request failed, or was cancelled or superseded)."""
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, EngineError):
            await self._task
