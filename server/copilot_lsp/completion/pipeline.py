"""From a cursor to a suggestion: debounce, cancel superseded work, prompt, stream, cut.

One request per document is in flight at a time: a newer request for the same document
cancels the older one wherever it is (waiting out the debounce, or streaming from the
engine, whose HTTP stream is then closed so the engine stops generating).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import tree_sitter

from copilot_lsp.completion import alternatives
from copilot_lsp.completion.admission import Backoff, InflightLimiter
from copilot_lsp.completion.alignment import WhitespaceAligner
from copilot_lsp.completion.assembly import (
    ANCHOR,
    Limits,
    OtherDocument,
    PromptRequest,
    RecentChunk,
    build_prompt,
)
from copilot_lsp.completion.budget import EngineTokenCounter
from copilot_lsp.completion.cutting import BlockCutter
from copilot_lsp.completion.inflight import InFlight, OpenStreams
from copilot_lsp.completion.mode import Mode, choose_mode
from copilot_lsp.completion.pacing import EnginePace
from copilot_lsp.completion.postprocess import fit_to_file, replaced_closers
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.request import DefinitionSource, InlineRequest, inline_request
from copilot_lsp.completion.templates import PromptTemplate
from copilot_lsp.completion.typethrough import TypeThroughCache
from copilot_lsp.completion.window import CursorContext
from copilot_lsp.engine.types import CompletionEngine, CompletionRequest
from copilot_lsp.errors import EngineError
from copilot_lsp.models import embedded_tokenizer
from copilot_lsp.positions import line_content
from copilot_lsp.settings import CompletionSettings, Settings
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
    alternatives: tuple[alternatives.Alternative, ...] = ()
    """Further suggestions after this one (explicit requests; completion/alternatives.py)."""


EngineStateListener = Callable[[bool, str], None]
TimelineSink = Callable[[Timeline], None]
PartialSink = Callable[[Suggestion], None]
"""Hears a streaming suggestion's text so far (an insertion at the cursor, not yet final)."""


class CompletionService:
    """Serves completion requests; owns the per-document in-flight bookkeeping."""

    def __init__(
        self,
        engine: CompletionEngine,
        settings: Callable[[], Settings],
        *,
        on_timeline: TimelineSink = lambda timeline: None,
        on_engine_state: EngineStateListener = lambda healthy, message: None,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        formats: PromptFormats | None = None,
    ) -> None:
        self.formats = formats or PromptFormats(embedded_tokenizer=embedded_tokenizer)
        """The prompt format for the engine in use (family, template, token counter)."""
        self.typethrough = TypeThroughCache()
        self._engine = engine
        self._settings = settings
        self._on_timeline = on_timeline
        self._on_engine_state = on_engine_state
        self._clock = clock
        self._sleep = sleep
        self.streams = OpenStreams(self.typethrough, on_timeline)
        """Each document's open engine request (completion/inflight.py)."""
        self.engine_healthy: bool | None = None
        self.backoff = Backoff(clock)
        self.slots = InflightLimiter()
        """Engine requests open now, over all documents (`completion.max_inflight`)."""
        self.pace = EnginePace()
        """The engine's recent time to first token, which the debounce follows."""
        self._greedy_only: set[str] = set()
        """Engines told (in the log) that their completions stay greedy."""

    @property
    def _samples_exactly(self) -> bool:
        """False for an engine whose speculative decoding samples wrongly: vLLM's CPU build
        returns word salad at any temperature above 0 there (engine/state.py), while its greedy
        output is exact. Engines that do not say are taken to sample right."""
        return bool(getattr(self._engine, "samples_exactly", True))

    def _temperature(self, wanted: float) -> float:
        """`wanted`, or greedy for an engine that samples wrongly."""
        if wanted == 0 or self._samples_exactly:
            return wanted
        url = self._engine.base_url
        if url not in self._greedy_only:
            self._greedy_only.add(url)
            logger.warning(
                "completion.temperature %.2f ignored for %s: its speculative decoding samples "
                "wrongly (vLLM's CPU build); completions there are greedy",
                wanted,
                url,
            )
        return 0.0

    @property
    def inflight(self) -> int:
        return self.streams.running

    def state(self) -> dict[str, Any]:
        """Engine health, requests in flight, engine requests open now and at most so far
        (completion.max_inflight), failures in a row behind the current backoff."""
        return {
            "healthy": self.engine_healthy,
            "inflight": self.inflight,
            "requests_open": self.slots.active,
            "requests_open_peak": self.slots.peak,
            "failures_in_a_row": self.backoff.failures,
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

    async def serve(
        self, request: InlineRequest, on_partial: PartialSink | None = None
    ) -> Suggestion | None:
        """A suggestion for `request`, or None.

        `on_partial` hears the suggestion as it grows while tokens arrive (live display).
        Returns None when superseded by a newer request for the same document; raises
        CancelledError when the caller itself is cancelled (`$/cancelRequest`).
        """
        settings = self._settings()
        uri, text, offset = request.uri, request.text, request.offset
        timeline = Timeline.start(
            uri,
            request.language_id,
            "automatic" if request.automatic else "invoked",
            self._clock,
        )
        typed_along = self.streams.supersede(request, settings.completion.adopt_typed_streams)
        if typed_along is not None:
            return await self.streams.adopt(*typed_along, timeline, request, on_partial)
        remaining = self.typethrough.lookup(uri, text, offset, unchanged=request.automatic)
        if remaining is not None:
            return self._typed_through(timeline, offset, remaining.completion, remaining.end_offset)
        flight = InFlight(uri, text, offset, timeline, request.automatic, listener=on_partial)
        flight.task = asyncio.ensure_future(
            self._run(timeline, request.window, request.prompt, settings, request.automatic, flight)
        )
        self.streams.open(uri, flight)
        suggestion = await self.streams.follow(uri, flight, timeline)
        if suggestion is not None:
            self.streams.remember(flight, suggestion)
        return suggestion

    def _typed_through(
        self, timeline: Timeline, offset: int, completion: str, end: int
    ) -> Suggestion:
        timeline.mode = "type-through"
        timeline.chars_shown = len(completion)
        timeline.finish("shown")
        self._on_timeline(timeline)
        # The engine's suggestion stays the reference (a backspace may come back into it).
        return Suggestion(timeline.id, completion, offset, end, timeline)

    def forget(self, uri: str) -> None:
        """Drop what is kept for a closed document."""
        self.typethrough.forget(uri)
        self.streams.forget(uri)

    async def _run(
        self,
        timeline: Timeline,
        context: CursorContext,
        prompt_request: PromptRequest,
        settings: Settings,
        automatic: bool,
        flight: InFlight,
    ) -> Suggestion | None:
        try:
            suggestion = await self._produce(
                timeline, context, prompt_request, settings, automatic, flight.relay
            )
        except asyncio.CancelledError:
            timeline.finish("cancelled" if timeline.outcome == "cancelled" else "superseded")
            self._on_timeline(timeline)
            raise
        except EngineError as error:
            timeline.finish("error", str(error))
            self._on_timeline(timeline)
            self._set_engine_state(False, str(error))
            cap = settings.engine.backoff_max_s
            if cap > 0:
                pause = self.backoff.failed(cap, getattr(error, "retry_after_s", None))
                logger.info(
                    "engine failure %d in a row: automatic completions pause %.2f s",
                    self.backoff.failures,
                    pause,
                )
            return None
        self.streams.settle(flight, suggestion)
        self._on_timeline(timeline)
        return suggestion

    async def _produce(
        self,
        timeline: Timeline,
        context: CursorContext,
        prompt_request: PromptRequest,
        settings: Settings,
        automatic: bool,
        on_partial: PartialSink | None = None,
    ) -> Suggestion | None:
        options = settings.completion
        mode = choose_mode(
            context.line_before_cursor,
            context.line_after_cursor,
            automatic=automatic,
            multiline=options.multiline == "auto",
            next_lines=context.next_lines,
        )
        timeline.mode = mode.value
        if mode is Mode.SKIP or not options.enable:
            timeline.finish("skipped")
            return None
        debounce = self.pace.debounce_s(options.debounce_ms, options.adaptive_debounce_max_ms)
        if automatic and debounce > 0:
            await self._sleep(debounce)
        timeline.mark("debounced")
        pause = self.backoff.wait_s(automatic=automatic) if settings.engine.backoff_max_s else 0
        if pause > 0:
            timeline.finish("backoff", f"the engine failed just before; next try in {pause:.2f} s")
            return None
        offset = prompt_request.offset
        prompt_format = await self.formats.resolve(settings.prompt, self._engine)
        template = prompt_format.template_for(other_files=bool(prompt_request.others))
        counter = prompt_format.counter
        if isinstance(counter, EngineTokenCounter):
            await counter.prefetch_lines(
                window_lines(prompt_request, settings.completion),
                settings.prompt.tokenize_deadline_ms / 1000.0,
            )
        built = build_prompt(prompt_request, template, counter, _limits(settings, template))
        context = built.context
        request = CompletionRequest(
            prompt=built.prompt,
            # A hole's one statement may open a block and bring its body (cutting.py); the
            # stream is closed at its end either way, so the cap costs nothing when it is
            # a simple statement.
            max_tokens=options.max_tokens
            if mode is Mode.MULTI_LINE or not context.line_before_cursor.strip()
            else options.single_line_max_tokens,
            temperature=self._temperature(options.temperature),
            stop=tuple(dict.fromkeys([*template.stop, *settings.prompt.stop])),
            extra=dict(options.extra_body),
        )
        timeline.mark("prompt_built")
        aligner = WhitespaceAligner(built.held_back)
        cutter = BlockCutter(
            mode,
            context.line_before_cursor,
            context.next_lines,
            max_lines=options.max_lines,
            filters=options.filters,
        )
        engine = self._engine
        sampled: alternatives.SampledChoices | None = None
        async with self.slots.slot(options.max_inflight):
            timeline.mark("request_sent")
            count = alternatives.wanted(options, automatic=automatic)
            if count and not self._samples_exactly:
                logger.info(
                    "no alternatives from %s: its speculative decoding samples wrongly "
                    "(vLLM's CPU build); greedy suggestions only",
                    engine.base_url,
                )
                count = 0
            if count:
                sampled = alternatives.SampledChoices(
                    engine,
                    dataclasses.replace(
                        request, temperature=options.alternatives_temperature, n=count
                    ),
                    lambda: alternatives.ChoiceCut(
                        WhitespaceAligner(built.held_back), dataclasses.replace(cutter)
                    ),
                    self.slots,
                    options.max_inflight,
                )
            sent = self._clock()
            answered = False
            stream = engine.stream(request)
            try:
                async for chunk in stream:
                    if not answered:
                        answered = True
                        self.pace.answered(self._clock() - sent)
                    if sampled is not None:
                        sampled.start()  # the prompt is in the engine's prefix cache now
                    if chunk.index:
                        continue  # another choice (an `n` in completion.extraBody)
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
                    if on_partial is not None:
                        on_partial(
                            Suggestion(timeline.id, cutter.preview, offset, offset, timeline)
                        )
            except BaseException:
                if sampled is not None:
                    await sampled.cancel()
                raise
            finally:
                if not answered:
                    self.pace.unanswered(self._clock() - sent)
                # Closing the stream closes the HTTP response: the engine aborts the request.
                await stream.aclose()
        cutter.feed(aligner.flush())
        cutter.end_of_stream()
        timeline.mark("first_line")
        self.backoff.succeeded()
        self._set_engine_state(True, f"engine at {engine.base_url} is answering")
        texts = [cutter.text]
        if sampled is not None:
            texts += await sampled.texts(options.alternatives_wait_ms / 1000)
            timeline.alternative_tokens = sampled.tokens
        fitted = [fit_to_file(t, prompt_request, context, mode, options.filters) for t in texts]
        shown = alternatives.placed(
            timeline.id, fitted, offset, lambda text: replaced_closers(context, text)
        )
        if sampled is not None:
            timeline.alternatives = len(shown)
            timeline.alternative_chars = [len(other.text) for other in shown[1:]]
        if settings.telemetry.log_source:
            timeline.text = shown[0].text if shown else fitted[0]
        if not shown:
            timeline.finish("empty")
            return None
        timeline.chars_shown = len(shown[0].text)
        timeline.finish("shown")
        return Suggestion(
            timeline.id,
            shown[0].text,
            offset,
            shown[0].end_offset,
            timeline,
            tuple(shown[1:]),
        )

    def _set_engine_state(self, healthy: bool, message: str) -> None:
        if healthy != self.engine_healthy:
            previous = self.engine_healthy
            self.engine_healthy = healthy
            if healthy and previous is None:
                return  # the first success is not news
            self._on_engine_state(healthy, message)


def window_lines(request: PromptRequest, options: CompletionSettings) -> list[str]:
    """The lines the prompt's window may take around the cursor (for token counting)."""
    line = bisect.bisect_right(request.starts, request.offset) - 1
    first = max(0, line - options.prefix_lines - ANCHOR)
    last = min(len(request.starts) - 1, line + options.suffix_lines + 1)
    return [line_content(request.text, request.starts, i) for i in range(first, last + 1)]


def _limits(settings: Settings, template: PromptTemplate) -> Limits:
    return Limits(
        max_tokens=template.budget(settings.prompt.max_tokens),
        prefix_lines=settings.completion.prefix_lines,
        suffix_lines=settings.completion.suffix_lines,
        snippets=settings.prompt.snippets,
        snippet_deadline_ms=settings.prompt.snippet_deadline_ms,
        repo=settings.prompt.repo_name,
    )
