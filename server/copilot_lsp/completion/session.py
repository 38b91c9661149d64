"""One session per open document: everything the server keeps for it between requests.

A document's session holds its open engine stream (completion/stream.py), the live view of
the request streaming now or answered early (completion/live.py) and the suggestion on
screen that typing is answered from (completion/typethrough.py). It is also where requests
for the document meet: each new request is the newest (its document version recorded), a
newer one supersedes the older one's stream unless it types along with it, and closing the
document ends all of it. Any request kind that works on a document lives here: next-edit
requests (nextedit/service.py) share the request count and version, a newer one or a change
of the document cancels the one running, and the edit offered last is kept to tell whether
the next change applied it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from copilot_lsp.completion.live import LiveView
from copilot_lsp.completion.request import InlineRequest
from copilot_lsp.completion.stream import EngineStream
from copilot_lsp.completion.typethrough import Shown, TypeThrough


@dataclass(frozen=True, slots=True)
class OfferedEdit:
    """A next edit offered for the document: its id, and the document's text once applied."""

    id: str
    result: str


class DocumentSession:
    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.stream: EngineStream | None = None
        """The engine request open for the document, if any."""
        self.live: LiveView | None = None
        """The request whose suggestion the editor sees grow, or that was answered early."""
        self.shown = TypeThrough()
        """The last suggestion the engine made here, which typing is answered from."""
        self.version: int | None = None
        """The document version of the newest request."""
        self.requests = 0
        """Requests seen for the document; the newest one's number is this."""
        self.next_edit: asyncio.Future[Any] | None = None
        """The next-edit request running for the document, if any."""
        self.offered: OfferedEdit | None = None
        """The next edit offered last, until the document changes."""

    def begin(self, version: int | None) -> int:
        """A new request for the document: it is the newest now. Returns its number."""
        self.requests += 1
        if version is not None:
            self.version = version
        return self.requests

    def is_newest(self, number: int) -> bool:
        return number == self.requests

    def stale(self, version: int) -> bool:
        """A request for `version` came after one for a newer version of the document."""
        return self.version is not None and version < self.version

    def begin_next_edit(self, version: int, task: asyncio.Future[Any]) -> None:
        """A next-edit request for `version`, run by `task`: the newest request of the
        document; the next-edit request running before it is cancelled."""
        self.begin(version)
        self.cancel_next_edit()
        self.next_edit = task

    def cancel_next_edit(self) -> None:
        task, self.next_edit = self.next_edit, None
        if task is not None and not task.done():
            task.cancel()

    def edited(self, text: str) -> OfferedEdit | None:
        """The document changed to `text` (a newer keystroke): the next-edit request running
        is cancelled; the edit offered last is returned when the change applied it."""
        self.cancel_next_edit()
        offered, self.offered = self.offered, None
        return offered if offered is not None and offered.result == text else None

    def supersede(self, request: InlineRequest, adopt: bool) -> tuple[EngineStream, str] | None:
        """A newer request for the document: the open stream and the characters typed since,
        when `adopt` allows and the newer (automatic) request may take the stream over;
        otherwise the stream is stopped and None returned."""
        previous = self.stream
        if previous is None or not previous.running:
            return None
        typed = previous.typed_since(request.text, request.offset)
        if adopt and request.automatic and typed is not None:
            return previous, typed
        previous.stop("superseded")
        return None

    def remember(self, stream: EngineStream, text: str, offset: int, end: int) -> None:
        """`stream`'s suggestion is what typing at its cursor is answered from next."""
        self.shown.remember(Shown(stream.text, offset, end, text))

    def release(self, stream: EngineStream) -> None:
        """`stream` is over: the document has no open engine request."""
        if self.stream is stream:
            self.stream = None

    def expire(self, stream: EngineStream) -> None:
        """No request took the parked `stream` over in time: stop it."""
        stream.unpark()
        if stream.running:
            stream.stop("cancelled")
        self.release(stream)

    def close(self) -> None:
        """The document was closed: a stream kept for its next keystroke stops, the
        suggestion on screen is forgotten."""
        stream = self.stream
        if stream is not None and stream.parked:
            self.expire(stream)
        self.shown.forget()
        self.live = None
        self.cancel_next_edit()
        self.offered = None


class Sessions:
    """The open documents' sessions, made on a document's first request."""

    def __init__(self) -> None:
        self._by_uri: dict[str, DocumentSession] = {}

    def of(self, uri: str) -> DocumentSession:
        session = self._by_uri.get(uri)
        if session is None:
            session = self._by_uri[uri] = DocumentSession(uri)
        return session

    def get(self, uri: str) -> DocumentSession | None:
        return self._by_uri.get(uri)

    def close(self, uri: str) -> None:
        session = self._by_uri.pop(uri, None)
        if session is not None:
            session.close()

    def __iter__(self) -> Iterator[DocumentSession]:
        return iter(self._by_uri.values())

    @property
    def streaming(self) -> int:
        """Documents with an engine request running now."""
        return sum(1 for session in self if session.stream is not None and session.stream.running)
