"""From a cursor to a suggestion: one request at a time per document, through named stages.

A request first meets its document's session (completion/session.py). Typing along with
the open engine stream takes that stream over; typing the start of the suggestion on screen
is answered from it (type-through); otherwise a newer request supersedes the older one
(whose HTTP stream is closed, so the engine stops generating) and opens an engine stream of
its own, which runs the stages of completion/stages.py: plan → prepare → stream and cut →
finish. The request waits for its answer as the stream's follower; streaming previews and
early answers are a live view composed onto that wait (completion/live.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import tree_sitter

from copilot_lsp.completion.assembly import OtherDocument, RecentChunk
from copilot_lsp.completion.live import LiveView, Publisher
from copilot_lsp.completion.mode import Mode
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.request import DefinitionSource, InlineRequest, inline_request
from copilot_lsp.completion.session import DocumentSession, Sessions
from copilot_lsp.completion.stages import InlineStages
from copilot_lsp.completion.stream import (
    ADOPTION_GRACE_S,
    EngineStream,
    Follower,
)
from copilot_lsp.completion.suggestion import (
    EngineStateListener,
    PartialSink,
    Suggestion,
    TimelineSink,
)
from copilot_lsp.completion.takeover import take_over
from copilot_lsp.engine.types import CompletionEngine
from copilot_lsp.errors import EngineError
from copilot_lsp.models import embedded_tokenizer
from copilot_lsp.settings import EditorSettings, Settings
from copilot_lsp.telemetry.timeline import Outcome, Timeline

logger = logging.getLogger(__name__)


class CompletionService:
    """Serves inline completion requests over one engine; keeps each document's session."""

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
        formats = formats or PromptFormats(embedded_tokenizer=embedded_tokenizer)
        self.stages = InlineStages(engine, formats, clock=clock, sleep=sleep)
        self.sessions = Sessions()
        self._engine = engine
        self._settings = settings
        self._publisher = publisher
        """Where partial updates go (the LSP layer's notifications); None: nobody listens."""
        self._record = on_timeline
        self._on_engine_state = on_engine_state
        self._clock = clock
        self.engine_healthy: bool | None = None

    @property
    def formats(self) -> PromptFormats:
        """The prompt format for the engine in use (family, template, token counter)."""
        return self.stages.formats

    @property
    def inflight(self) -> int:
        return self.sessions.streaming

    def state(self) -> dict[str, Any]:
        """Engine health, requests in flight, engine requests open now, at most so far and
        waiting for a slot (completion.max_inflight), failures in a row behind the current
        backoff, and what the prefix warm-ups did (completion/prefix_warmup.py)."""
        return {
            "healthy": self.engine_healthy,
            "inflight": self.inflight,
            "requests_open": self.stages.slots.active,
            "requests_open_peak": self.stages.slots.peak,
            "requests_waiting": self.stages.slots.waiting,
            "failures_in_a_row": self.stages.backoff.failures,
            "prefix_warm_ups": self.stages.warmer.counts.as_dict(),
        }

    async def complete(
        self,
        uri: str,
        language: str,
        text: str,
        offset: int,
        *,
        automatic: bool,
        line_starts: list[int] | None = None,
        on_partial: PartialSink | None = None,
        path: str | None = None,
        tree: tree_sitter.Tree | None = None,
        own_definitions: DefinitionSource | None = None,
        others: Sequence[OtherDocument] = (),
        recent: Sequence[RecentChunk] = (),
    ) -> Suggestion | None:
        """`serve` the request for the cursor at `offset` in `text` (see `inline_request`)."""
        request = inline_request(
            uri,
            language,
            text,
            offset,
            automatic=automatic,
            options=self._settings().completion,
            line_starts=line_starts,
            path=path,
            tree=tree,
            own_definitions=own_definitions,
            others=others,
            recent=recent,
        )
        return await self.serve(request, on_partial)

    def forget(self, uri: str) -> None:
        """Drop what is kept for a closed document."""
        self.sessions.close(uri)

    async def serve(
        self, request: InlineRequest, on_partial: PartialSink | None = None
    ) -> Suggestion | None:
        """A suggestion for `request`, or None.

        `on_partial` hears the suggestion as it grows while tokens arrive (live display).
        Returns None when superseded by a newer request for the same document; raises
        CancelledError when the caller itself is cancelled (`$/cancelRequest`).
        """
        settings = self._settings()
        session = self.sessions.of(request.uri)
        session.begin(request.version)
        live = self._live_view(session, request, settings.editor)
        if live is not None and live.answered_early and live.final is not None:
            # Asked again where the early answer was shown: the client wants the rest.
            return await self._wait(session, live, None)
        timeline = Timeline.start(
            request.uri,
            request.language_id,
            "automatic" if request.automatic else "invoked",
            self._clock,
        )
        sink = _both(live.grow, on_partial) if live is not None else on_partial
        follower = self._follower(session, request, settings, timeline, sink)
        if live is None:
            return await self._follow(session, follower)
        live.attach(follower.answer)
        return await self._wait(session, live, settings.editor.early_answer_ms, follower)

    def _live_view(
        self, session: DocumentSession, request: InlineRequest, options: EditorSettings
    ) -> LiveView | None:
        """The request's live view, when the editor wants previews or early answers: the one
        answered early at this very place, else a new one."""
        publisher = self._publisher if options.streaming else None
        if publisher is None and options.early_answer_ms is None:
            session.live = None
            return None
        live = session.live
        if live is not None and live.at(request.text, request.offset) and live.has_rest:
            return live
        session.live = LiveView(
            request.uri,
            request.text,
            request.offset,
            request.version,
            publisher,
            options.partial_interval_ms / 1000.0,
        )
        return session.live

    def _follower(
        self,
        session: DocumentSession,
        request: InlineRequest,
        settings: Settings,
        timeline: Timeline,
        on_partial: PartialSink | None,
    ) -> Follower:
        """How `request` gets its answer: typing along with the open stream, typing through
        the suggestion on screen, or a stream of its own."""
        typed_along = session.supersede(request, settings.completion.adopt_typed_streams)
        if typed_along is not None:
            stream, typed = typed_along
            return take_over(
                stream, typed, timeline, request, session.shown, on_partial, self._conclude
            )
        remaining = session.shown.lookup(request.text, request.offset, unchanged=request.automatic)
        if remaining is not None:
            timeline.mode = "type-through"
            timeline.chars_shown = len(remaining.completion)
            self._conclude(timeline, "shown")
            # The engine's suggestion stays the reference (a backspace may come back into it).
            return Follower.answered(
                timeline,
                Suggestion(
                    timeline.id,
                    remaining.completion,
                    request.offset,
                    remaining.end_offset,
                    timeline,
                ),
            )
        stream = EngineStream(
            request.uri, request.text, request.offset, timeline, request.automatic
        )
        follower = Follower(timeline, on_partial)
        stream.follow(follower)
        session.stream = stream
        stream.task = asyncio.ensure_future(self._run(session, stream, request, settings))
        # A task cancelled before its first step never runs `_run`'s own ending.
        stream.task.add_done_callback(lambda _: self._stopped_unstarted(session, stream))
        return follower

    async def _follow(self, session: DocumentSession, follower: Follower) -> Suggestion | None:
        """`follower`'s answer; cancelled (`$/cancelRequest`), its stream stays open a moment
        for the next keystroke's request when it is automatic and has produced text."""
        try:
            await asyncio.wait({follower.answer})
        except asyncio.CancelledError:
            await self._abandon(session, follower)
            raise
        return follower.answer.result()

    async def _wait(
        self,
        session: DocumentSession,
        live: LiveView,
        budget_ms: int | None,
        follower: Follower | None = None,
    ) -> Suggestion | None:
        """The live view's answer: whole, or early once `budget_ms` has passed."""
        try:
            answer = await live.answer(budget_ms)
        except asyncio.CancelledError:
            # Unless an earlier request was answered from this stream and may still come back
            # for the rest, the client's giving up stops it.
            if follower is not None and not live.answered_early:
                await self._abandon(session, follower)
            raise
        if session.live is live and live.final is not None and live.final.done():
            session.live = None  # served in full: a new request regenerates
        return answer

    async def _abandon(self, session: DocumentSession, follower: Follower) -> None:
        """`follower`'s request was cancelled: park or stop the stream it was following."""
        stream = session.stream
        if stream is None or stream.follower is not follower:
            follower.settle(None, "cancelled")  # its stream answers another request by now
            return
        if not stream.park(ADOPTION_GRACE_S, lambda: session.expire(stream)):
            stream.stop("cancelled")
            if stream.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await stream.task
        follower.settle(None, "cancelled")

    async def _run(
        self,
        session: DocumentSession,
        stream: EngineStream,
        request: InlineRequest,
        settings: Settings,
    ) -> Suggestion | None:
        """The engine stream's life: the stages, then how it ended, recorded once."""
        try:
            suggestion, produced, detail = await self._stages(request, settings, stream)
        except asyncio.CancelledError:
            stream.conclude(None, None, self._record)
            session.release(stream)
            raise
        except EngineError as error:
            stream.conclude("error", None, self._record, str(error))
            session.release(stream)
            self._engine_failed(error, settings)
            return None
        except Exception as error:  # not the engine's (a broken model family file): the
            # request fails with it, and the server tells the user
            stream.conclude("error", None, self._record, str(error), failure=error)
            session.release(stream)
            return None
        if suggestion is not None:
            session.remember(stream, suggestion.text, suggestion.offset, suggestion.end_offset)
        stream.conclude(produced, suggestion, self._record, detail)
        session.release(stream)
        return suggestion

    def _stopped_unstarted(self, session: DocumentSession, stream: EngineStream) -> None:
        if not stream.concluded:
            stream.conclude(None, None, self._record)
            session.release(stream)

    async def _stages(
        self, request: InlineRequest, settings: Settings, stream: EngineStream
    ) -> tuple[Suggestion | None, Outcome, str | None]:
        """plan → admit → prepare → stream and cut → finish: the suggestion, the outcome it
        stands for and, when the engine was not asked, why."""
        stages, timeline = self.stages, stream.timeline
        mode = stages.plan(request, settings.completion)
        timeline.mode = mode.value
        if mode is Mode.SKIP:
            return None, "skipped", None
        refused = await stages.admit(settings, request.automatic, timeline)
        if refused is not None:
            return None, "backoff", refused
        prepared = await stages.prepare(request, mode, settings)
        timeline.mark("prompt_built")
        streamed = await stages.stream_and_cut(
            prepared, settings.completion, request.automatic, timeline, stream.relay
        )
        stages.backoff.succeeded()
        self._set_engine_state(True, f"engine at {self._engine.base_url} is answering")
        suggestion, outcome = await stages.finish(streamed, request, prepared, settings, timeline)
        return suggestion, outcome, None

    def _conclude(self, timeline: Timeline, outcome: Outcome) -> None:
        """A request answered without an engine stream of its own has ended."""
        timeline.finish(outcome)
        self._record(timeline)

    def _engine_failed(self, error: EngineError, settings: Settings) -> None:
        self._set_engine_state(False, str(error))
        cap = settings.engine.backoff_max_s
        if cap > 0:
            pause = self.stages.backoff.failed(cap, error.retry_after_s)
            logger.info(
                "engine failure %d in a row: automatic completions pause %.2f s",
                self.stages.backoff.failures,
                pause,
            )

    def _set_engine_state(self, healthy: bool, message: str) -> None:
        if healthy != self.engine_healthy:
            previous = self.engine_healthy
            self.engine_healthy = healthy
            if healthy and previous is None:
                return  # the first success is not news
            self._on_engine_state(healthy, message)


def _both(first: PartialSink, second: PartialSink | None) -> PartialSink:
    if second is None:
        return first

    def both(suggestion: Suggestion) -> None:
        first(suggestion)
        second(suggestion)

    return both
