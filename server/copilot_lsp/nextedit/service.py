"""Next-edit suggestions: from a cursor to the edit the user is likely to make next.

A request meets its document's session (completion/session.py) like an inline completion:
it is the newest request of the document, a newer one or a change of the document cancels
it, and it answers nothing for a version the server no longer holds. Its task cuts the
window around the cursor (nextedit/window.py), renders the served model's next-edit format
with the recent edits (nextedit/prompt.py, nextedit/history.py), asks the engine greedily for
the rewritten window (read as it streams, and left as soon as it cannot be one:
nextedit/answer.py), diffs the answer against the window (nextedit/diff.py) and drops what
the rules of nextedit/gate.py do not trust. The engine is the completion engine, or the one
`nextEditSuggestions.engine` names (nextedit/engine.py), whose failures only quiet next
edits. What the server saw change is recorded as history
here too (`changed`), each change marked when it applied the edit offered last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from copilot_lsp.completion.session import OfferedEdit, Sessions
from copilot_lsp.completion.suggestion import TimelineSink
from copilot_lsp.completion.workspace import Workspace
from copilot_lsp.context.documents import Document
from copilot_lsp.context.secrets import redact
from copilot_lsp.context.workspace_files import secret_file
from copilot_lsp.engine.types import CompletionRequest
from copilot_lsp.errors import DocumentError, EngineError
from copilot_lsp.nextedit import gate
from copilot_lsp.nextedit.answer import AnswerWatch
from copilot_lsp.nextedit.diff import PlacedEdit, hunks, line_ending, merged, place
from copilot_lsp.nextedit.engine import NextEditEngines, Target
from copilot_lsp.nextedit.history import EditHistory, as_before
from copilot_lsp.nextedit.prompt import NextEditFormat, PromptParts, choose_format
from copilot_lsp.nextedit.window import Window, context_lines, file_excerpt, window_at
from copilot_lsp.positions import Encoding, Position
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.stats import NEXT_EDIT_MODE
from copilot_lsp.telemetry.timeline import Outcome, Timeline

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 2
"""A generous estimate of the window's tokens from its characters (code runs 3 to 4): the
answer may not be cut short."""
TOKEN_MARGIN = 64
"""Tokens the answer may take beyond the window's own: the lines an edit adds."""


@dataclass(frozen=True, slots=True)
class NextEdit:
    """An edit offered for a document version; `id` is its accept command's argument."""

    id: str
    uri: str
    version: int
    edit: PlacedEdit


@dataclass(frozen=True, slots=True)
class _Asked:
    """What one request works on: the document as it was when the request came."""

    document: Document
    text: str
    starts: list[int]
    version: int
    offset: int
    encoding: Encoding


class NextEditService:
    def __init__(
        self,
        workspace: Workspace,
        sessions: Sessions,
        engines: NextEditEngines,
        settings: Callable[[], Settings],
        *,
        on_timeline: TimelineSink = lambda timeline: None,
        on_applied: Callable[[str], object] = lambda identifier: None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """`on_applied(id)`: a change applied the edit offered last (the accept of a client
        that applies the edit without running its command, as copilotlsp-nvim does)."""
        self.history = EditHistory()
        self._applied = on_applied
        self._workspace = workspace
        self._sessions = sessions
        self.engines = engines
        self._settings = settings
        self._record = on_timeline
        self._clock = clock

    def changed(self, uri: str, old: tuple[str, list[int]] | None) -> None:
        """`uri` changed from `old` (its text and line starts; None: unknown): the running
        request is cancelled, and with next edits on the change joins the history."""
        session = self._sessions.get(uri)
        try:
            document = self._workspace.documents.get(uri)
        except DocumentError:
            return
        offered = session.edited(document.text) if session is not None else None
        if offered is not None:
            self._applied(offered.id)
        if old is None or not self._settings().next_edit_suggestions.enabled:
            return
        new = (document.text, document.starts)
        path = self._workspace.display_path(uri)
        if not secret_file(path):  # an open .env's edits never reach a prompt
            self.history.record(uri, path, old, new, accepted=offered is not None)

    def forget(self, uri: str) -> None:
        self.history.forget(uri)

    async def suggest(
        self, uri: str, version: int, cursor: Position, encoding: Encoding
    ) -> list[NextEdit]:
        """The edits offered at `cursor` in version `version` of `uri`: none when next edits
        are off, the document is not open (or not in step with the editor), the version is
        not the one the server holds, a newer request or keystroke came meanwhile, or no
        edit was found worth showing."""
        settings = self._settings()
        if not settings.next_edit_suggestions.enabled or uri not in self._workspace:
            return []
        document = self._workspace.documents.get(uri)
        session = self._sessions.of(uri)
        if document.version != version or not document.in_sync or session.stale(version):
            return []
        asked = _Asked(
            document,
            document.text,
            document.starts,
            version,
            document.offset(cursor, encoding),
            encoding,
        )
        task = asyncio.ensure_future(self._run(asked, settings))
        session.begin_next_edit(version, task)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the client cancelled the request itself
            return []  # a newer request or keystroke, or the document closed
        finally:
            if session.next_edit is task:
                session.next_edit = None

    async def _run(self, asked: _Asked, settings: Settings) -> list[NextEdit]:
        document = asked.document
        timeline = Timeline.start(document.uri, document.language_id, "automatic", self._clock)
        timeline.mode = NEXT_EDIT_MODE
        target = self.engines.target(settings)
        paused = self.engines.paused(target)
        if paused > 0:
            self._finish(timeline, "empty", f"the next-edit engine is left alone {paused:.1f} s")
            return []
        try:
            found = await self._find(asked, settings, timeline, target)
        except asyncio.CancelledError:
            self._finish(timeline, "cancelled")
            raise
        except EngineError as error:
            logger.info("next edit: the engine failed: %s", error)
            self.engines.failed(target, error, settings.engine.backoff_max_s)
            self._finish(timeline, "error", str(error))
            return []
        self.engines.answered(target)
        if isinstance(found, str):
            logger.debug("next edit: none offered: %s", found)
            self._finish(timeline, "empty", found)
            return []
        timeline.chars_shown = len(found.text)
        self._finish(timeline, "shown")
        session = self._sessions.of(document.uri)
        result = asked.text[: found.start_offset] + found.text + asked.text[found.end_offset :]
        session.offered = OfferedEdit(timeline.id, result)
        return [NextEdit(timeline.id, document.uri, asked.version, found)]

    def _finish(self, timeline: Timeline, outcome: Outcome, detail: str | None = None) -> None:
        timeline.finish(outcome, detail if outcome == "error" else None)
        self._record(timeline)

    async def _find(
        self, asked: _Asked, settings: Settings, timeline: Timeline, target: Target
    ) -> PlacedEdit | str:
        """The edit to offer, or why there is none."""
        options = settings.next_edit_suggestions
        document = asked.document
        names, family = await self.engines.model(target, settings)
        form = choose_format(options.format, names, family)
        window = window_at(
            asked.text, asked.starts, asked.offset, options.lines_above, options.lines_below
        )
        request = self._request(asked, form, window, settings, target)
        timeline.mark("prompt_built")
        watch = AnswerWatch(
            form,
            window.lines,
            document.language_id,
            options.max_changed_lines,
            prefill=form.prefill(window),
        )
        finish, tokens = await self._generate(request, settings, timeline, watch, target)
        timeline.tokens = tokens
        if finish != "stop":
            return f"the answer did not end where the window does ({finish})"
        answer = watch.text  # with the start the prompt gave, if the format gives one
        if document.version != asked.version or asked.document.uri not in self._workspace:
            return "the document changed meanwhile"
        old, new = list(window.lines), form.answer(answer).split("\n")
        found = hunks(old, new)
        edit = merged(found, old, new)
        if edit is None:
            return "no change"
        doubt = gate.doubtful(edit, old, new, options.max_changed_lines)
        if doubt is not None:
            return doubt
        blocked = gate.blocks(found, edit, window, self.history.of(document.uri))
        if blocked is not None:
            return blocked
        sure = watch.confidence(found)
        if sure is not None and sure < options.min_confidence:
            return f"the model is not sure of it ({sure:.2f} < {options.min_confidence})"
        return place(edit, window, asked.starts, asked.encoding, line_ending(asked.text))

    def _request(
        self,
        asked: _Asked,
        form: NextEditFormat,
        window: Window,
        settings: Settings,
        target: Target,
    ) -> CompletionRequest:
        options = settings.next_edit_suggestions
        document = asked.document
        language = document.language_id
        context = form.context_lines
        parts = PromptParts(
            path=self._workspace.display_path(document.uri),
            language_id=language,
            window=window,
            original="\n".join(as_before(window, self.history.of(document.uri))),
            history=self.history.render(
                options.history_chars, lambda step: redact(form.event_text(step, language))
            ),
            file=file_excerpt(asked.text, asked.starts, window, form.file_chars)
            if form.file_chars
            else "",
            before=context_lines(asked.text, asked.starts, window.first - context, window.first - 1)
            if context
            else "",
            after=context_lines(asked.text, asked.starts, window.last + 1, window.last + context)
            if context
            else "",
        )
        size = sum(len(line) + 1 for line in window.lines)
        return CompletionRequest(
            prompt=form.render(parts),
            max_tokens=size // CHARS_PER_TOKEN + TOKEN_MARGIN,
            temperature=0.0,
            stop=(*form.stops(language), *target.stop),
            extra=dict(settings.completion.extra_body),
            logprobs=0 if options.min_confidence > 0 else None,
        )

    async def _generate(
        self,
        request: CompletionRequest,
        settings: Settings,
        timeline: Timeline,
        watch: AnswerWatch,
        target: Target,
    ) -> tuple[str | None, int]:
        """Why the answer ended (its text is the watch's), and its tokens. An answer that ran
        away is left there: leaving the stream closes it, and the engine stops generating."""
        finish: str | None = None
        tokens = 0
        async with target.slots.slot(settings.completion.max_inflight):
            timeline.mark("request_sent")
            async with contextlib.aclosing(target.engine.stream(request)) as chunks:
                async for chunk in chunks:
                    if chunk.index:
                        continue
                    if chunk.text:
                        timeline.mark("first_token")
                    tokens = chunk.completion_tokens or tokens + bool(chunk.text)
                    finish = chunk.finish_reason or finish
                    runaway = watch.feed(chunk.text, chunk.logprobs)
                    if runaway is not None:
                        return f"ran away: {runaway}", tokens
        return finish, tokens
