"""The stages of one inline completion's engine request: plan → prepare → stream and cut → finish.

Each stage is a method that takes what the one before produced and returns what the next
needs, so it can be driven (and tested) alone; none of them records the timeline's outcome,
which `EngineStream` decides in one place once the request is over (completion/stream.py).

* `plan`: single-line, multi-line or nothing (in the middle of a word, or switched off);
  then the debounce and, after engine failures, the backoff (`admit`).
* `prepare`: the served model's prompt format, the prompt under its token budget, the
  engine request, and the aligner and cutter its text will pass.
* `stream_and_cut`: the engine's chunks through the aligner and the cutter until the block
  ends, the preview growing on the way; closing the stream makes the engine stop.
* `finish`: the text (and the alternatives) fitted to the file and placed at the cursor.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass

from copilot_lsp.completion import alternatives
from copilot_lsp.completion.admission import Backoff, InflightLimiter
from copilot_lsp.completion.alignment import WhitespaceAligner
from copilot_lsp.completion.assembly import ANCHOR, BuiltPrompt, Limits, PromptRequest, build_prompt
from copilot_lsp.completion.budget import EngineTokenCounter
from copilot_lsp.completion.constraint import MemberConstraint, unconstrained
from copilot_lsp.completion.cutting import BlockCutter
from copilot_lsp.completion.mode import Mode, choose_mode
from copilot_lsp.completion.pacing import EnginePace
from copilot_lsp.completion.postprocess import fit_to_file, replaced_closers
from copilot_lsp.completion.prefix_warmup import PrefixWarmer
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.request import InlineRequest
from copilot_lsp.completion.suggestion import PartialSink, Suggestion
from copilot_lsp.completion.templates import PromptTemplate
from copilot_lsp.engine.types import CompletionEngine, CompletionRequest, StreamChunk
from copilot_lsp.errors import EngineHTTPError
from copilot_lsp.positions import line_content
from copilot_lsp.settings import CompletionSettings, Settings
from copilot_lsp.telemetry.timeline import Outcome, Timeline

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Prepared:
    """What the engine is asked, and how its answer will be cut."""

    mode: Mode
    offset: int
    """The cursor (code points into the document as the request saw it)."""
    built: BuiltPrompt
    request: CompletionRequest
    cutter: BlockCutter
    constrained: bool = False
    """The request holds the completion to a module's names (completion/constraint.py)."""


@dataclass(slots=True)
class Streamed:
    """The greedy text as cut, and the alternatives sampled beside it (explicit requests)."""

    text: str
    sampled: alternatives.SampledChoices | None = None


class InlineStages:
    """The stages, over the engine and what the server keeps between requests for it: its
    prompt format, its pace, its backoff and the slots of requests open at once."""

    def __init__(
        self,
        engine: CompletionEngine,
        formats: PromptFormats,
        *,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.engine = engine
        self.formats = formats
        self.backoff = Backoff(clock)
        self.slots = InflightLimiter()
        """Engine requests open now, over all documents (`completion.max_inflight`)."""
        self.warmer = PrefixWarmer(
            engine,
            lambda: self.slots.active > 0 or self.slots.waiting > 0 or self.backoff.failures > 0,
        )
        """Sends prompt heads ahead while no completion is open (`context.workspace.warmPrefix`)."""
        self.slots.on_busy = self.warmer.on_busy
        self.slots.on_idle = self.warmer.on_idle
        self.pace = EnginePace()
        """The engine's recent time to first token, which the debounce follows."""
        self._clock = clock
        self._sleep = sleep
        self._greedy_only: set[str] = set()
        """Engines told (in the log) that their completions stay greedy."""
        self.constraint = MemberConstraint()
        """Holds completions after `module.` to the module's names (where the engine can)."""

    # --- plan ------------------------------------------------------------------------------

    @staticmethod
    def plan(request: InlineRequest, options: CompletionSettings) -> Mode:
        """The request's mode; `Mode.SKIP` when there is nothing to ask the engine."""
        window = request.window
        mode = choose_mode(
            window.line_before_cursor,
            window.line_after_cursor,
            automatic=request.automatic,
            multiline=options.multiline == "auto",
            next_lines=window.next_lines,
        )
        return mode if options.enable else Mode.SKIP

    async def admit(self, settings: Settings, automatic: bool, timeline: Timeline) -> str | None:
        """Wait out the debounce (automatic requests); why the engine is not asked, if so."""
        options = settings.completion
        debounce = self.pace.debounce_s(options.debounce_ms, options.adaptive_debounce_max_ms)
        if automatic and debounce > 0:
            await self._sleep(debounce)
        timeline.mark("debounced")
        pause = self.backoff.wait_s(automatic=automatic) if settings.engine.backoff_max_s else 0
        if pause > 0:
            return f"the engine failed just before; next try in {pause:.2f} s"
        return None

    # --- prepare ---------------------------------------------------------------------------

    async def prepare(self, request: InlineRequest, mode: Mode, settings: Settings) -> Prepared:
        """The prompt in the served model's format, and the engine request for it."""
        options = settings.completion
        prompt_request = request.prompt
        prompt_format = await self.formats.resolve(settings.prompt, self.engine)
        template = prompt_format.template_for(
            other_files=bool(prompt_request.others) or prompt_request.repository is not None
        )
        counter = prompt_format.counter
        if isinstance(counter, EngineTokenCounter):
            await counter.prefetch_lines(
                window_lines(prompt_request, options), settings.prompt.tokenize_deadline_ms / 1000
            )
        built = build_prompt(prompt_request, template, counter, limits(settings, template))
        line_before = built.context.line_before_cursor
        engine_request = CompletionRequest(
            prompt=built.prompt,
            # A hole's one statement may open a block and bring its body (cutting.py); the
            # stream is closed at its end either way, so the cap costs nothing when it is
            # a simple statement.
            max_tokens=options.max_tokens
            if mode is Mode.MULTI_LINE or not line_before.strip()
            else options.single_line_max_tokens,
            temperature=self._temperature(options.temperature),
            stop=tuple(dict.fromkeys([*template.stop, *settings.prompt.stop])),
            extra=dict(options.extra_body),
        )
        index = settings.context.workspace
        if index.enabled and index.warm_prefix:
            self.warmer.offer(built.head, engine_request.extra)
        members = None
        if index.enabled and index.member_names and request.members is not None:
            members = request.members()
        held = self.constraint.apply(engine_request, members, self.engine.base_url)
        if held is not engine_request:
            assert members is not None
            logger.debug("completion held to %d names of %s", len(members.names), members.module)
        cutter = BlockCutter(
            mode,
            line_before,
            built.context.next_lines,
            max_lines=options.max_lines,
            filters=options.filters,
        )
        return Prepared(
            mode, prompt_request.offset, built, held, cutter, held is not engine_request
        )

    def _temperature(self, wanted: float) -> float:
        """`wanted`, or greedy for an engine whose sampling is known to be wrong."""
        if wanted == 0 or self.engine.samples_exactly:
            return wanted
        url = self.engine.base_url
        if url not in self._greedy_only:
            self._greedy_only.add(url)
            logger.warning(
                "completion.temperature %.2f ignored for %s: its speculative decoding samples "
                "wrongly (vLLM's CPU build); completions there are greedy",
                wanted,
                url,
            )
        return 0.0

    # --- stream and cut --------------------------------------------------------------------

    async def stream_and_cut(
        self,
        prepared: Prepared,
        options: CompletionSettings,
        automatic: bool,
        timeline: Timeline,
        on_partial: PartialSink,
    ) -> Streamed:
        """The engine's text for `prepared`, cut where the suggestion ends. `on_partial` hears
        the preview (at the cursor) each time it grows."""
        aligner = WhitespaceAligner(prepared.built.held_back)
        cutter = prepared.cutter
        offset = prepared.offset
        async with self.slots.slot(options.max_inflight):
            timeline.mark("request_sent")
            sampled = self._alternatives(prepared, options, automatic)
            sent = self._clock()
            answered = False
            stream = self._stream(prepared)
            try:
                async for chunk in stream:
                    if not answered:
                        answered = True
                        self.pace.answered(self._clock() - sent)
                        self.warmer.answered(prepared.built.head)
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
                    on_partial(Suggestion(timeline.id, cutter.preview, offset, offset, timeline))
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
        return Streamed(cutter.text, sampled)

    async def _stream(self, prepared: Prepared) -> AsyncGenerator[StreamChunk, None]:
        """The engine's chunks for `prepared`; asked again without the member constraint
        when the engine refuses it."""
        request = prepared.request
        stream = self.engine.stream(request)
        try:
            async for chunk in stream:
                yield chunk
            return
        except EngineHTTPError as error:
            if not prepared.constrained or not self.constraint.refused(error, self.engine.base_url):
                raise
        finally:
            await stream.aclose()
        retry = self.engine.stream(unconstrained(request))
        try:
            async for chunk in retry:
                yield chunk
        finally:
            await retry.aclose()

    def _alternatives(
        self, prepared: Prepared, options: CompletionSettings, automatic: bool
    ) -> alternatives.SampledChoices | None:
        """The sampled request beside the greedy one, when this request wants alternatives."""
        count = alternatives.wanted(options, automatic=automatic)
        if count and not self.engine.samples_exactly:
            logger.info(
                "no alternatives from %s: its speculative decoding samples wrongly "
                "(vLLM's CPU build); greedy suggestions only",
                self.engine.base_url,
            )
            return None
        if not count:
            return None
        held_back, cutter = prepared.built.held_back, prepared.cutter
        return alternatives.SampledChoices(
            self.engine,
            dataclasses.replace(
                prepared.request, temperature=options.alternatives_temperature, n=count
            ),
            lambda: alternatives.ChoiceCut(
                WhitespaceAligner(held_back), dataclasses.replace(cutter)
            ),
            self.slots,
            options.max_inflight,
        )

    # --- finish ----------------------------------------------------------------------------

    async def finish(
        self,
        streamed: Streamed,
        request: InlineRequest,
        prepared: Prepared,
        settings: Settings,
        timeline: Timeline,
    ) -> tuple[Suggestion | None, Outcome]:
        """The suggestion fitted to the file and placed at the cursor (None: nothing to show),
        with the outcome it stands for."""
        options = settings.completion
        sampled = streamed.sampled
        texts = [streamed.text]
        if sampled is not None:
            texts += await sampled.texts(options.alternatives_wait_ms / 1000)
            timeline.alternative_tokens = sampled.tokens
        context, mode = prepared.built.context, prepared.mode
        fitted = [fit_to_file(t, request.prompt, context, mode, options.filters) for t in texts]
        offset = request.offset
        shown = alternatives.placed(
            timeline.id, fitted, offset, lambda text: replaced_closers(context, text)
        )
        if sampled is not None:
            timeline.alternatives = len(shown)
            timeline.alternative_chars = [len(other.text) for other in shown[1:]]
        if settings.telemetry.log_source:
            timeline.text = shown[0].text if shown else fitted[0]
        if not shown:
            return None, "empty"
        timeline.chars_shown = len(shown[0].text)
        first = shown[0]
        suggestion = Suggestion(
            timeline.id, first.text, offset, first.end_offset, timeline, tuple(shown[1:])
        )
        return suggestion, "shown"


def window_lines(request: PromptRequest, options: CompletionSettings) -> list[str]:
    """The lines the prompt's window may take around the cursor (for token counting)."""
    line = bisect.bisect_right(request.starts, request.offset) - 1
    first = max(0, line - options.prefix_lines - ANCHOR)
    last = min(len(request.starts) - 1, line + options.suffix_lines + 1)
    return [line_content(request.text, request.starts, i) for i in range(first, last + 1)]


def limits(settings: Settings, template: PromptTemplate) -> Limits:
    return Limits(
        max_tokens=template.budget(settings.prompt.max_tokens),
        prefix_lines=settings.completion.prefix_lines,
        suffix_lines=settings.completion.suffix_lines,
        snippets=settings.prompt.snippets,
        snippet_deadline_ms=settings.prompt.snippet_deadline_ms,
        repo=settings.prompt.repo_name,
    )
