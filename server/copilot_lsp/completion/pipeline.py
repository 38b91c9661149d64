"""From a cursor to a suggestion: debounce, cancel superseded work, prompt, stream, cut.

One request per document is in flight at a time: a newer request for the same document
cancels the older one wherever it is (waiting out the debounce, or streaming from the
engine, whose HTTP stream is then closed so the engine stops generating).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from copilot_lsp.completion.alignment import WhitespaceAligner, split_trailing_whitespace
from copilot_lsp.completion.cutting import BlockCutter
from copilot_lsp.completion.mode import Mode, choose_mode, only_closers
from copilot_lsp.completion.prompt import CursorContext, cursor_context, render_prompt
from copilot_lsp.engine.types import CompletionEngine, CompletionRequest
from copilot_lsp.errors import EngineError
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.timeline import Timeline

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Suggestion:
    """Text to insert at the cursor (code-point offset into the document as it was)."""

    id: str
    text: str
    offset: int
    end_offset: int
    """Equal to `offset` for an insertion; past it when closers right of the cursor are
    replaced by the same closers at the end of the completion."""
    timeline: Timeline


EngineStateListener = Callable[[bool, str], None]
TimelineSink = Callable[[Timeline], None]


class CompletionService:
    """Serves completion requests; owns the per-document in-flight bookkeeping."""

    def __init__(
        self,
        engine: Callable[[], CompletionEngine],
        settings: Callable[[], Settings],
        *,
        on_timeline: TimelineSink = lambda timeline: None,
        on_engine_state: EngineStateListener = lambda healthy, message: None,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._engine = engine
        self._settings = settings
        self._on_timeline = on_timeline
        self._on_engine_state = on_engine_state
        self._clock = clock
        self._sleep = sleep
        self._inflight: dict[str, asyncio.Task[Suggestion | None]] = {}
        self.engine_healthy: bool | None = None

    @property
    def inflight(self) -> int:
        return sum(1 for task in self._inflight.values() if not task.done())

    async def complete(
        self,
        uri: str,
        language: str,
        text: str,
        offset: int,
        *,
        automatic: bool,
        line_starts: list[int] | None = None,
    ) -> Suggestion | None:
        """A suggestion for the cursor at `offset` in `text`, or None.

        `line_starts` are the document's cached line offsets, if the caller has them.

        Returns None when superseded by a newer request for `uri`; raises CancelledError
        when the caller itself is cancelled (`$/cancelRequest`).
        """
        settings = self._settings()
        timeline = Timeline.start(
            uri, language, "automatic" if automatic else "invoked", self._clock
        )
        context = cursor_context(
            text,
            offset,
            settings.completion.prefix_lines,
            settings.completion.suffix_lines,
            line_starts,
        )
        previous = self._inflight.get(uri)
        if previous is not None and not previous.done():
            previous.cancel()
        task = asyncio.ensure_future(self._run(timeline, context, offset, settings, automatic))
        self._inflight[uri] = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                timeline.outcome = "cancelled"
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise
            return None  # superseded: the newer request answers
        finally:
            if self._inflight.get(uri) is task:
                del self._inflight[uri]

    async def _run(
        self,
        timeline: Timeline,
        context: CursorContext,
        offset: int,
        settings: Settings,
        automatic: bool,
    ) -> Suggestion | None:
        try:
            suggestion = await self._produce(timeline, context, offset, settings, automatic)
        except asyncio.CancelledError:
            timeline.finish("cancelled" if timeline.outcome == "cancelled" else "superseded")
            self._on_timeline(timeline)
            raise
        except EngineError as error:
            timeline.finish("error", str(error))
            self._on_timeline(timeline)
            self._set_engine_state(False, str(error))
            return None
        self._on_timeline(timeline)
        return suggestion

    async def _produce(
        self,
        timeline: Timeline,
        context: CursorContext,
        offset: int,
        settings: Settings,
        automatic: bool,
    ) -> Suggestion | None:
        options = settings.completion
        mode = choose_mode(
            context.line_before_cursor,
            context.line_after_cursor,
            automatic=automatic,
            multiline=options.multiline == "auto",
        )
        timeline.mode = mode.value
        if mode is Mode.SKIP or not options.enable:
            timeline.finish("skipped")
            return None
        if automatic and options.debounce_ms:
            await self._sleep(options.debounce_ms / 1000.0)
        timeline.mark("debounced")
        prompt_prefix, held_back = split_trailing_whitespace(context.prefix)
        request = CompletionRequest(
            prompt=render_prompt(
                dataclasses.replace(context, prefix=prompt_prefix), settings.prompt
            ),
            max_tokens=options.max_tokens
            if mode is Mode.MULTI_LINE
            else options.single_line_max_tokens,
            temperature=options.temperature,
            stop=tuple(settings.prompt.stop),
            extra=dict(options.extra_body),
        )
        timeline.mark("prompt_built")
        aligner = WhitespaceAligner(held_back)
        cutter = BlockCutter(
            mode,
            context.line_before_cursor,
            context.next_lines,
            max_lines=options.max_lines,
        )
        engine = self._engine()
        timeline.mark("request_sent")
        stream = engine.stream(request)
        try:
            async for chunk in stream:
                if chunk.text:
                    timeline.mark("first_token")
                if chunk.completion_tokens is not None:
                    timeline.tokens = chunk.completion_tokens
                elif chunk.text:
                    timeline.tokens += 1
                if cutter.feed(aligner.feed(chunk.text)) or aligner.misaligned:
                    break
                if cutter.first_line_complete:
                    timeline.mark("first_line")
        finally:
            # Closing the stream closes the HTTP response: the engine aborts the request.
            await stream.aclose()
        cutter.feed(aligner.flush())
        cutter.end_of_stream()
        timeline.mark("first_line")
        self._set_engine_state(True, f"engine at {engine.base_url} is answering")
        completion = cutter.text
        if settings.telemetry.log_source:
            timeline.text = completion
        if not completion.strip():
            timeline.finish("empty")
            return None
        timeline.chars_shown = len(completion)
        timeline.finish("shown")
        return Suggestion(
            timeline.id,
            completion,
            offset,
            offset + replaced_closers(context, completion),
            timeline,
        )

    def _set_engine_state(self, healthy: bool, message: str) -> None:
        if healthy != self.engine_healthy:
            previous = self.engine_healthy
            self.engine_healthy = healthy
            if healthy and previous is None:
                return  # the first success is not news
            self._on_engine_state(healthy, message)


def replaced_closers(context: CursorContext, completion: str) -> int:
    """How many characters right of the cursor the completion replaces.

    When only closing brackets/quotes follow the cursor (often typed by the editor's
    auto-pairing) and the completion ends with the same closers, the item replaces them
    rather than duplicating them: `foo(|)` + `x)` gives `foo(x)`, not `foo(x))`.
    """
    rest = context.line_after_cursor
    closers = rest.strip()
    if closers and only_closers(rest) and completion.rstrip().endswith(closers):
        return len(rest)
    return 0
