"""The scripted editor: types a session into the real server over stdio, like VS Code does.

Every keystroke is a `didChange` at the cursor followed by an automatic
`textDocument/inlineCompletion`; the previous request, if unanswered, is cancelled with
`$/cancelRequest` (the server also supersedes it). With `editor.streaming` on (as our
extensions set it) `copilot/partialCompletion` notifications draw ghost text before the
answer. Ghost text belongs to one document version: any edit hides it until the next answer.

When ghost text has been visible for the user's reaction time at the moment of the next key,
the user judges it (judge.py): possibly types a few more of its characters, then takes it
with Tab (the item's text applied as an edit, then the item's accept command) or takes its
first lines/words (`copilot/didPartiallyAccept`). Times are the event loop's clock.

When each key comes is the pace's call: the benchmark's (`on_schedule`) types at the drawn
gaps whatever the server does; a test can pass one that waits for events instead (the answer
to the last request, the ghost text having been seen), so that what it asserts does not hang
on how fast a loaded host answers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.client.driver import answer_items, item_id
from copilot_lsp.client.replay.judge import MIN_ACCEPT, Decision, Shown, decide, matched_chars
from copilot_lsp.client.replay.schedule import Typing, key_at
from copilot_lsp.client.replay.session import Session
from copilot_lsp.client.replay.wire import param, replaced
from copilot_lsp.lsp.methods import (
    ACCEPT_COMMAND,
    DID_PARTIALLY_ACCEPT,
    DID_SHOW,
    PARTIAL_COMPLETION,
)

REQUEST_CANCELLED = -32800
SETTLE_S = 4.0
"""After the last key: how long to wait for the last answer."""


@dataclass(slots=True)
class RequestRecord:
    """One automatic request: what the user saw of it, and when (ms after it was sent)."""

    session: str
    kind: str
    edit: int
    """Ordinal of the edit that triggered it within the session."""
    version: int
    trigger: str
    """`start` (the session's first cursor), `key`, or `accept` (VS Code asks again after a
    Tab)."""
    sent: float
    gap_ms: float | None = None
    """Until the next edit (the time the answer had to be useful)."""
    cancelled_by_editor: bool = False
    first_ghost_ms: float | None = None
    first_line_ms: float | None = None
    answered_ms: float | None = None
    outcome: str = "unanswered"
    """`items`, `empty`, `cancelled` (-32800), `error`, or `unanswered`."""
    visible: bool = False
    """Ghost text of it appeared while its version was the buffer's."""
    shown_chars: int = 0
    matched_chars: int | None = None
    completion_ids: list[str] = field(default_factory=list)
    accepted: str | None = None
    accepted_chars: int = 0
    tab_missed: bool = False
    """The user typed ahead to take it, but at Tab no valid suggestion was on screen."""

    def as_dict(self) -> dict[str, Any]:
        record = asdict(self)
        del record["sent"]
        return record


Pace = Callable[["ScriptedEditor", float, float], Awaitable[None]]
"""`pace(editor, due, reaction_s)` returns when the user types the next key: `due` is when the
typing schedule has it (the event loop's clock), `reaction_s` the user's reaction time there."""


async def on_schedule(editor: ScriptedEditor, due: float, reaction_s: float) -> None:
    """The benchmark's pace: the key comes when the schedule says, answered or not."""
    await _sleep_until(editor.loop, due)


@dataclass(slots=True)
class _Ghost:
    shown: Shown
    at: float
    record: RequestRecord


class ScriptedEditor:
    """One server connection; sessions are replayed one after another."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.records: list[RequestRecord] = []
        self.typed_chars = 0
        self.accepted_chars = 0
        self.loop = asyncio.get_running_loop()
        self._ids = 0
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._uri = ""
        self._version = 0
        self._by_version: dict[int, RequestRecord] = {}
        self._last: RequestRecord | None = None
        self._ghost: _Ghost | None = None
        self._session: Session | None = None
        self._position = 0
        self._background: set[asyncio.Future[Any]] = set()

        def on_partial(params: Any) -> None:  # pygls tags the handler: a plain function
            self._on_partial(params)

        client.feature(PARTIAL_COMPLETION)(on_partial)

    # -- the session loop ---------------------------------------------------------------

    async def warm_up(self, timeout_s: float = 120.0) -> None:
        """One completion before the sessions, not recorded: a fresh server loads its parser,
        tokenizer and HTTP client on the first one, which an editor's user paid long ago."""
        uri = (self.root / "warm_up.py").as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri, "python", 1, "import os\n\n\ndef warm_up(path):\n    ")
            )
        )
        params = types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(4, 4),
        )
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.client.text_document_inline_completion_async(params), timeout_s
            )
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
        )

    async def replay(self, session: Session, typing: Typing, pace: Pace = on_schedule) -> None:
        self._open(session)
        # The edit that made the empty line (Enter) or cut the line's end triggered a request.
        self._request(session, "start")
        target = session.target
        next_at = self.loop.time() + typing.delays_s[0]
        ahead_left = 0
        tab_pending = False
        while self._position < len(target):
            await pace(self, next_at, typing.reactions_s[self._position])
            position = self._position
            if tab_pending and ahead_left == 0:
                tab_pending = False
                decision = self._judge(reaction_s=0.0)
                if decision is not None:
                    self._take(decision)
                else:
                    self._mark_tab_missed()
                    self._key()
            elif ahead_left > 0:
                ahead_left -= 1
                self._key()
            else:
                decision = self._judge(reaction_s=typing.reactions_s[position])
                ahead = 0 if decision is None else _type_ahead(decision, typing, position)
                if decision is not None and ahead == 0:
                    self._take(decision)
                elif decision is not None:
                    ahead_left, tab_pending = ahead - 1, True
                    self._key()
                else:
                    self._key()
            if self._position < len(target):
                next_at = self.loop.time() + typing.delays_s[self._position]
        await self._settle()
        self._close()

    def _judge(self, reaction_s: float) -> Decision | None:
        ghost, session = self._ghost, self._session
        if ghost is None or session is None:
            return None
        if self.loop.time() - ghost.at < reaction_s:
            return None  # not noticed yet: the user keeps typing
        return decide(ghost.shown, session.target[self._position :], session.after)

    def _mark_tab_missed(self) -> None:
        if self._last is not None:
            self._last.tab_missed = True

    # -- what a pace may wait for ---------------------------------------------------------

    @property
    def session(self) -> Session | None:
        """The session being typed (None between sessions)."""
        return self._session

    async def answer(self, within_s: float = 60.0) -> None:
        """Until the newest request has its answer (items, empty, an error or a cancel) and
        the editor has drawn it; AssertionError after `within_s` seconds."""
        last = self._last
        if last is None:
            return
        msg_id = _msg_id(last)
        deadline = self.loop.time() + within_s
        while (future := self._pending.get(msg_id)) is not None:  # `_answered` removes it
            left = deadline - self.loop.time()
            if left <= 0:
                raise AssertionError(f"request {msg_id} not answered within {within_s} s")
            await asyncio.wait({future}, timeout=left)
            await asyncio.sleep(0)  # its done callback (`_answered`) runs before this resumes

    def ghost_since(self) -> float | None:
        """When the ghost text on screen appeared (the event loop's clock); None: none is."""
        return self._ghost.at if self._ghost is not None else None

    # -- edits and requests -------------------------------------------------------------

    def _key(self) -> None:
        session = self._session
        assert session is not None
        key = key_at(session.target, self._position)
        self._edit(key, 0, len(key), "key")
        self.typed_chars += len(key)

    def _take(self, decision: Decision) -> None:
        ghost = self._ghost
        assert ghost is not None
        record, completion_id = ghost.record, ghost.shown.completion_id
        record.accepted = decision.kind
        record.accepted_chars = decision.typed
        self.accepted_chars += decision.typed
        self._edit(decision.inserted, decision.replaces, decision.typed, "accept")
        if completion_id is None:
            return
        if decision.kind == "full":
            self._background_request(
                types.WORKSPACE_EXECUTE_COMMAND,
                types.ExecuteCommandParams(command=ACCEPT_COMMAND, arguments=[completion_id]),
            )
        else:
            self.client.protocol.notify(
                DID_PARTIALLY_ACCEPT,
                {"completionId": completion_id, "acceptedLength": decision.typed},
            )

    def _edit(self, text: str, replaces: int, advance: int, trigger: str) -> None:
        """Insert `text` at the cursor over `replaces` characters; the target advances by
        `advance`; then the automatic request for the new cursor."""
        session = self._session
        assert session is not None
        line, column = self._cursor()
        start = types.Position(line, column)
        end = types.Position(line, column + replaces)
        self._version += 1
        self._position += advance
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=self._version, uri=self._uri),
                [types.TextDocumentContentChangePartial(range=types.Range(start, end), text=text)],
            )
        )
        now = self.loop.time()
        self._ghost = None
        previous = self._last
        if previous is not None:
            previous.gap_ms = _ms(now - previous.sent)
            msg_id = _msg_id(previous)
            future = self._pending.get(msg_id)
            if future is not None and not future.done():
                previous.cancelled_by_editor = True
                self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        self._request(session, trigger)

    def _request(self, session: Session, trigger: str) -> None:
        self._ids += 1
        line, column = self._cursor()
        record = RequestRecord(
            session.id, session.kind, self._ids, self._version, trigger, self.loop.time()
        )
        self.records.append(record)
        self._by_version[self._version] = record
        self._last = record
        msg_id = _msg_id(record)
        params = types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Automatic
            ),
            text_document=types.TextDocumentIdentifier(self._uri),
            position=types.Position(line, column),
        )
        future = asyncio.wrap_future(
            self.client.protocol.send_request(
                types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id
            )
        )
        self._pending[msg_id] = future
        remaining = session.target[self._position :]
        future.add_done_callback(lambda done: self._answered(record, msg_id, done, remaining))

    def _background_request(self, method: str, params: Any) -> None:
        future = asyncio.wrap_future(self.client.protocol.send_request(method, params))
        self._background.add(future)
        future.add_done_callback(self._background.discard)

    # -- what comes back ----------------------------------------------------------------

    def _answered(
        self, record: RequestRecord, msg_id: str, future: asyncio.Future[Any], remaining: str
    ) -> None:
        self._pending.pop(msg_id, None)
        record.answered_ms = _ms(self.loop.time() - record.sent)
        if future.cancelled():
            record.outcome = "cancelled"
            return
        error = future.exception()
        if error is not None:
            code = getattr(error, "code", None)
            record.outcome = "cancelled" if code == REQUEST_CANCELLED else "error"
            return
        found = answer_items(future.result())
        if not found:
            record.outcome = "empty"
            return
        record.outcome = "items"
        item = found[0]
        completion_id = item_id(item)
        if completion_id is not None and completion_id not in record.completion_ids:
            record.completion_ids.append(completion_id)
        text = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
        if record.version != self._version or self._session is None or not text:
            return  # the user typed on meanwhile: the answer is never drawn
        shown = Shown(completion_id, text, replaced(item))
        record.visible = True
        record.shown_chars = len(text)
        record.matched_chars = matched_chars(shown, remaining, self._session.after)
        _first(record, "first_ghost_ms", record.answered_ms)
        _first(record, "first_line_ms", record.answered_ms)
        self._ghost = _Ghost(shown, self.loop.time(), record)
        if completion_id is not None:
            self.client.protocol.notify(DID_SHOW, {"completionId": completion_id})

    def _on_partial(self, params: Any) -> None:
        uri, version = param(params, "uri"), param(params, "version")
        if uri != self._uri or version != self._version:
            return  # another document, or a version the buffer has left: not drawn
        record = self._by_version.get(version)
        text = param(params, "text")
        if record is None or not isinstance(text, str) or not text:
            return
        elapsed = _ms(self.loop.time() - record.sent)
        completion_id = param(params, "completionId")
        if isinstance(completion_id, str) and completion_id not in record.completion_ids:
            record.completion_ids.append(completion_id)
        record.visible = True
        _first(record, "first_ghost_ms", elapsed)
        if "\n" in text or param(params, "done"):
            _first(record, "first_line_ms", elapsed)

    # -- documents ----------------------------------------------------------------------

    def _open(self, session: Session) -> None:
        self._session = session
        self._position = 0
        self._version = 1
        self._by_version = {}
        self._last = None
        self._ghost = None
        self._uri = (self.root / session.path).as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(self._uri, "python", self._version, session.document)
            )
        )

    async def _settle(self) -> None:
        waiting = [future for future in self._pending.values() if not future.done()]
        if waiting:
            await asyncio.wait(waiting, timeout=SETTLE_S)
        last = self._last
        if last is not None and last.gap_ms is None:
            last.gap_ms = _ms(self.loop.time() - last.sent)
        for msg_id, future in list(self._pending.items()):
            if not future.done():
                self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    def _close(self) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(self._uri))
        )
        self._session = None
        self._ghost = None

    async def drain(self, timeout_s: float = 10.0) -> None:
        waiting = {f for f in [*self._pending.values(), *self._background] if not f.done()}
        if waiting:
            await asyncio.wait(waiting, timeout=timeout_s)

    def _cursor(self) -> tuple[int, int]:
        session = self._session
        assert session is not None
        return session.cursor_at(self._position)


def _msg_id(record: RequestRecord) -> str:
    return f"replay-{record.edit}-{record.version}"


def _type_ahead(decision: Decision, typing: Typing, position: int) -> int:
    """Characters of the suggestion the user types before Tab: the draw, within its first line
    and leaving at least MIN_ACCEPT characters to take."""
    first_line = decision.inserted.split("\n", 1)[0]
    room = min(len(first_line), decision.typed - MIN_ACCEPT)
    return max(0, min(typing.type_ahead[position], room))


def _first(record: RequestRecord, name: str, value: float | None) -> None:
    if getattr(record, name) is None:
        setattr(record, name, value)


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


async def _sleep_until(loop: asyncio.AbstractEventLoop, at: float) -> None:
    delay = at - loop.time()
    if delay > 0:
        await asyncio.sleep(delay)
