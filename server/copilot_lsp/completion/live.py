"""Streaming to editors: live partial text for our extensions, early answers for the rest.

LSP 3.18 `textDocument/inlineCompletion` has no partial results, so two things may be
composed onto a request's wait for its suggestion, each switched on by the client (settings
section `editor`):

* `streaming`: every time the suggestion grows, a `PartialUpdate` goes to the publisher
  (the LSP layer turns it into a `copilot/partialCompletion` notification), coalesced to at
  most one per `partial_interval_ms`; the final state (`done`) is always sent.
* `early_answer_ms`: the request is answered with the complete lines streamed so far once
  that much time has passed, while generation goes on. The next request at the same
  position (same document text, same cursor) gets the whole suggestion from that stream (at
  once if it has finished) instead of starting another.

A `LiveView` belongs to the document's session (completion/session.py): it hears the
request's follower grow and end; it never owns a task of its own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from copilot_lsp.completion.suggestion import Suggestion

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


class LiveView:
    """One request's suggestion as it grows: published (coalesced) and kept for an early
    answer; `answer` is the request's wait for it."""

    def __init__(
        self,
        uri: str,
        text: str,
        offset: int,
        version: int | None,
        publisher: Publisher | None,
        interval_s: float,
    ) -> None:
        self.uri = uri
        self.text = text
        self.offset = offset
        self.version = version
        self.latest: Suggestion | None = None
        self.answered_early = False
        self.final: asyncio.Future[Suggestion | None] | None = None
        """The request's answer, once it has one (the follower's)."""
        self._publisher = publisher
        self._interval_s = interval_s
        self._changed = asyncio.Event()
        self._sent = ""
        self._sent_at: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    def at(self, text: str, offset: int) -> bool:
        return self.offset == offset and self.text == text

    @property
    def has_rest(self) -> bool:
        """Answered early, and the rest is still coming or has come (not superseded)."""
        final = self.final
        if not self.answered_early or final is None:
            return False
        if not final.done():
            return True
        return not final.cancelled() and not final.exception() and final.result() is not None

    def attach(self, answer: asyncio.Future[Suggestion | None]) -> None:
        """Follow the request whose answer is `answer`: its end is published when it comes."""
        self.final = answer
        answer.add_done_callback(self._finished)

    def grow(self, suggestion: Suggestion) -> None:
        """The request's `on_partial`: remember, wake the early answer, publish (coalesced)."""
        if self.latest is not None and self.latest.text == suggestion.text:
            return
        self.latest = suggestion
        self._changed.set()
        if self._publisher is None or self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = 0.0 if self._sent_at is None else self._sent_at + self._interval_s - loop.time()
        if wait <= 0:
            self._flush()
        else:
            self._timer = loop.call_later(wait, self._flush)

    async def answer(self, budget_ms: int | None) -> Suggestion | None:
        """The whole suggestion, or its complete lines once `budget_ms` has passed."""
        final = self.final
        assert final is not None
        loop = asyncio.get_running_loop()
        deadline = None if budget_ms is None else loop.time() + budget_ms / 1000.0
        while not final.done():
            now = loop.time()
            if deadline is not None and now >= deadline:
                early = self.early_answer()
                if early is not None:
                    self.answered_early = True
                    early.timeline.mark("early_answer")
                    return early
            self._changed.clear()
            waiter = asyncio.ensure_future(self._changed.wait())
            timeout = None if deadline is None or now >= deadline else deadline - now
            waited: set[asyncio.Future[Any]] = {final, waiter}
            try:
                await asyncio.wait(waited, timeout=timeout, return_when="FIRST_COMPLETED")
            finally:
                waiter.cancel()
        return final.result()

    def early_answer(self) -> Suggestion | None:
        """The complete lines streamed so far, if there is at least one non-blank."""
        latest = self.latest
        if latest is None or "\n" not in latest.text:
            return None
        lines = latest.text[: latest.text.rfind("\n")].rstrip()
        if not lines.strip():
            return None
        return dataclasses.replace(latest, text=lines, end_offset=latest.offset)

    def _flush(self) -> None:
        self._timer = None
        latest = self.latest
        if latest is None or (self.final is not None and self.final.done()):
            return  # the final update goes out from `_finished`
        if latest.text == self._sent:
            return
        self._sent, self._sent_at = latest.text, asyncio.get_running_loop().time()
        self._publish(latest, done=False)

    def _finished(self, final: asyncio.Future[Suggestion | None]) -> None:
        self._changed.set()
        result = None if final.cancelled() or final.exception() else final.result()
        if result is not None:
            self._publish(result, done=True)
        elif self.latest is not None:
            # Superseded, cancelled or empty: tell the editor to drop what it shows.
            self._publish(dataclasses.replace(self.latest, text=""), done=True)

    def _publish(self, suggestion: Suggestion, *, done: bool) -> None:
        publisher = self._publisher
        if publisher is None:
            return
        try:
            publisher(
                PartialUpdate(
                    uri=self.uri,
                    completion_id=suggestion.id,
                    version=self.version,
                    document_text=self.text,
                    offset=suggestion.offset,
                    end_offset=suggestion.end_offset,
                    text=suggestion.text,
                    done=done,
                )
            )
        except Exception:  # a failing editor pipe costs the live preview, not the completion
            logger.exception("cannot publish the partial completion %s", suggestion.id)
