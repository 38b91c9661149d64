"""Streaming to editors: live partial text for our extensions, early answers for the rest.

LSP 3.18 `textDocument/inlineCompletion` has no partial results, so two things happen on top
of the plain pipeline, each switched on by the client (settings section `editor`):

* `streaming`: every time the suggestion grows, a `PartialUpdate` goes to the publisher
  (the LSP layer turns it into a `copilot/partialCompletion` notification), coalesced to at
  most one per `partial_interval_ms`; the final state (`done`) is always sent.
* `early_answer_ms`: the request is answered with the complete lines streamed so far once
  that much time has passed, while generation goes on in the background. The next request
  at the same position (same document text, same cursor) gets the whole suggestion from
  that stream (at once if it has finished) instead of starting another.

With both off, `complete` is the pipeline's own, unchanged.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from copilot_lsp.completion.pipeline import (
    CompletionService,
    EngineStateListener,
    PartialSink,
    Suggestion,
    TimelineSink,
)
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.request import InlineRequest
from copilot_lsp.engine.types import CompletionEngine
from copilot_lsp.settings import EditorSettings, Settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PartialUpdate:
    """The growing text of one completion, as the editor should show it now."""

    uri: str
    completion_id: str
    version: int | None
    """The document version the completion was requested for."""
    document_text: str
    """The document as it was at the request (to place `offset` in it)."""
    offset: int
    end_offset: int
    text: str
    done: bool


Publisher = Callable[[PartialUpdate], None]


@dataclass(eq=False)
class _Live:
    """One completion that the streaming layer follows, for fan-out and the cache."""

    uri: str
    text: str
    offset: int
    version: int | None
    notify: bool
    task: asyncio.Task[Suggestion | None] | None = None
    latest: Suggestion | None = None
    answered_early: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def at(self, text: str, offset: int) -> bool:
        return self.offset == offset and self.text == text

    def early_answer(self) -> Suggestion | None:
        """The complete lines streamed so far, if there is at least one non-blank."""
        latest = self.latest
        if latest is None or "\n" not in latest.text:
            return None
        lines = latest.text[: latest.text.rfind("\n")].rstrip()
        if not lines.strip():
            return None
        return dataclasses.replace(latest, text=lines, end_offset=latest.offset)


class StreamingCompletionService(CompletionService):
    """The pipeline plus partial-text fan-out and early answers (see the module docstring)."""

    def __init__(
        self,
        engine: CompletionEngine,
        settings: Callable[[], Settings],
        *,
        publisher: Publisher | None = None,
        on_timeline: TimelineSink = lambda timeline: None,
        on_engine_state: EngineStateListener = lambda healthy, message: None,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        formats: PromptFormats | None = None,
    ) -> None:
        super().__init__(
            engine,
            settings,
            on_timeline=on_timeline,
            on_engine_state=on_engine_state,
            clock=clock,
            sleep=sleep,
            formats=formats,
        )
        self._current_settings = settings
        self._live: dict[str, _Live] = {}
        self._publisher = publisher
        """Where partial updates go (the LSP layer's notifications); None: nobody listens."""

    async def serve(
        self, request: InlineRequest, on_partial: PartialSink | None = None
    ) -> Suggestion | None:
        """As `CompletionService.serve`, with streaming and early answers when enabled."""
        options = self._current_settings().editor
        notify = options.streaming and self._publisher is not None
        budget = options.early_answer_ms
        uri, text, offset = request.uri, request.text, request.offset
        if not notify and budget is None:
            self._live.pop(uri, None)
            return await super().serve(request, on_partial)
        live = self._live.get(uri)
        if live is not None and live.at(text, offset) and live.answered_early:
            # Asked again where the early answer was shown: the client wants the rest.
            return await self._answer(live, None)
        live = _Live(uri, text, offset, request.version, notify)
        self._live[uri] = live
        grow = self._grower(live, options)
        if on_partial is not None:
            grow = _both(grow, on_partial)
        live.task = asyncio.ensure_future(super().serve(request, grow))
        live.task.add_done_callback(lambda task: self._finished(live, task))
        return await self._answer(live, budget)

    async def _answer(self, live: _Live, budget_ms: int | None) -> Suggestion | None:
        """Wait for the whole suggestion, or for complete lines once the budget is spent."""
        task = live.task
        assert task is not None
        loop = asyncio.get_running_loop()
        deadline = None if budget_ms is None else loop.time() + budget_ms / 1000.0
        try:
            while not task.done():
                now = loop.time()
                if deadline is not None and now >= deadline:
                    early = live.early_answer()
                    if early is not None:
                        live.answered_early = True
                        early.timeline.mark("early_answer")
                        return early
                live.changed.clear()
                waiter = asyncio.ensure_future(live.changed.wait())
                timeout = None if deadline is None or now >= deadline else deadline - now
                try:
                    await asyncio.wait(
                        {task, waiter}, timeout=timeout, return_when="FIRST_COMPLETED"
                    )
                finally:
                    waiter.cancel()
        except asyncio.CancelledError:
            # The client gave up on this request: stop generating unless an earlier request
            # was already answered from this stream and may still come back for the rest.
            if not live.answered_early:
                task.cancel()
            raise
        if self._live.get(live.uri) is live:
            del self._live[live.uri]  # served in full: a new request regenerates
        if task.cancelled():
            return None
        return task.result()

    def _grower(self, live: _Live, options: EditorSettings) -> Callable[[Suggestion], None]:
        """The pipeline's `on_partial` for `live`: remember, wake waiters, publish (coalesced)."""
        interval = options.partial_interval_ms / 1000.0
        state: dict[str, Any] = {"sent_at": None, "timer": None, "sent": ""}
        loop = asyncio.get_running_loop()

        def flush() -> None:
            state["timer"] = None
            latest = live.latest
            task = live.task
            if latest is None or (task is not None and task.done()):
                return  # the final update goes out from `_finished`
            if latest.text == state["sent"]:
                return
            state["sent"], state["sent_at"] = latest.text, loop.time()
            self._publish(live, latest, done=False)

        def grow(suggestion: Suggestion) -> None:
            if live.latest is not None and live.latest.text == suggestion.text:
                return
            live.latest = suggestion
            live.changed.set()
            if not live.notify or state["timer"] is not None:
                return
            sent_at = state["sent_at"]
            wait = 0.0 if sent_at is None else sent_at + interval - loop.time()
            if wait <= 0:
                flush()
            else:
                state["timer"] = loop.call_later(wait, flush)

        live.changed.clear()
        return grow

    def _finished(self, live: _Live, task: asyncio.Task[Suggestion | None]) -> None:
        live.changed.set()
        if not live.notify:
            return
        final: Suggestion | None = None
        if not task.cancelled() and task.exception() is None:
            final = task.result()
        if final is not None:
            self._publish(live, final, done=True)
        elif live.latest is not None:
            # Superseded, cancelled or empty: tell the editor to drop what it shows.
            self._publish(live, dataclasses.replace(live.latest, text=""), done=True)
        if self._live.get(live.uri) is live and final is None:
            del self._live[live.uri]

    def _publish(self, live: _Live, suggestion: Suggestion, *, done: bool) -> None:
        publisher = self._publisher
        if publisher is None:
            return
        try:
            publisher(
                PartialUpdate(
                    uri=live.uri,
                    completion_id=suggestion.id,
                    version=live.version,
                    document_text=live.text,
                    offset=suggestion.offset,
                    end_offset=suggestion.end_offset,
                    text=suggestion.text,
                    done=done,
                )
            )
        except Exception:  # a failing editor pipe costs the live preview, not the completion
            logger.exception("cannot publish the partial completion %s", suggestion.id)


def _both(first: PartialSink, second: PartialSink) -> PartialSink:
    def both(suggestion: Suggestion) -> None:
        first(suggestion)
        second(suggestion)

    return both
