"""The engine request a document has open, which the next keystroke's request may take over.

A keystroke normally cancels the request before it. When what was typed is what the open
stream has already produced (the user types along with a suggestion before it is shown, or
while it is still growing), the stream goes on for the newer request instead: that request's
answer is the suggestion minus the typed characters, and the engine is spared a new prompt
to prefill. Editors cancel the older request before they send the newer one, so a cancelled
automatic request whose stream has produced text stays open for `ADOPTION_GRACE_S`; if no
request takes it over by then it is cancelled after all.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from copilot_lsp.completion.typethrough import Shown, TypeThroughCache, rest_after, typed_at
from copilot_lsp.telemetry.timeline import Timeline

if TYPE_CHECKING:
    from copilot_lsp.completion.pipeline import PartialSink, Suggestion
    from copilot_lsp.completion.request import InlineRequest

ADOPTION_GRACE_S = 0.15
"""How long a cancelled request's stream waits for the next keystroke's request. Editors
send that request right after the cancel; this only bounds what an unneeded stream costs."""


@dataclass(eq=False)
class InFlight:
    """One engine request, the document text and cursor it was made for, and who waits on it."""

    uri: str
    text: str
    offset: int
    timeline: Timeline
    """The engine request's own timeline (its tokens, its outcome)."""
    automatic: bool
    listener: PartialSink | None = None
    """Hears the stream's growth on behalf of the request that owns it now."""
    task: asyncio.Task[Suggestion | None] | None = None
    latest: Suggestion | None = None
    """What the stream has produced so far (the cutter's preview), at `offset`."""
    owner: Timeline | None = None
    """The request whose answer this stream is now; `timeline` until another takes it over."""
    dropped: bool = False
    _handover: asyncio.Future[None] | None = None
    _expiry: asyncio.TimerHandle | None = field(default=None, repr=False)

    def relay(self, suggestion: Suggestion) -> None:
        """The pipeline's `on_partial` for this stream."""
        self.latest = suggestion
        if self.listener is not None:
            self.listener(suggestion)

    @property
    def preview(self) -> str:
        return self.latest.text if self.latest is not None else ""

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done() and not self.dropped

    def typed_since(self, text: str, offset: int) -> str | None:
        """The characters typed at the stream's cursor since it started, when that is the only
        change to the document and the stream so far goes on from them; None otherwise."""
        if not self.preview:
            return None
        chars = typed_at(self.text, self.offset, text, offset)
        if not chars or rest_after(self.preview, chars) is None:
            return None
        return chars

    def claim(self, owner: Timeline) -> asyncio.Future[None]:
        """Make `owner` the request this stream answers; the future resolves when another
        request takes it over."""
        self.unpark()
        if self._handover is not None and not self._handover.done():
            self._handover.set_result(None)
        self.owner = owner
        self._handover = asyncio.get_running_loop().create_future()
        return self._handover

    @property
    def parked(self) -> bool:
        return self._expiry is not None

    def park(self, grace_s: float, expire: Callable[[], None]) -> bool:
        """Keep the stream open for `grace_s` after its owner was cancelled, if it has
        produced anything another request could take over; False when it should stop now."""
        if not self.automatic or not self.preview or not self.running:
            return False
        self.listener = None
        self._expiry = asyncio.get_running_loop().call_later(grace_s, expire)
        return True

    def unpark(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None

    def drop(self) -> None:
        """Stop the engine request (no request will take it over)."""
        self.unpark()
        self.dropped = True
        self.listener = None
        if self.task is not None:
            self.task.cancel()


class OpenStreams:
    """Each document's open engine request, and its handover from keystroke to keystroke."""

    def __init__(self, typethrough: TypeThroughCache, on_timeline: Callable[[Timeline], None]):
        self._typethrough = typethrough
        self._on_timeline = on_timeline
        self._by_uri: dict[str, InFlight] = {}

    def supersede(self, request: InlineRequest, adopt: bool) -> tuple[InFlight, str] | None:
        """A newer request for the document: its open stream and the characters typed since,
        when `adopt` allows and the newer (automatic) request may take the stream over;
        otherwise the stream is stopped and None returned."""
        previous = self._by_uri.get(request.uri)
        if previous is None or not previous.running:
            return None
        typed = previous.typed_since(request.text, request.offset)
        if adopt and request.automatic and typed is not None:
            return previous, typed
        previous.drop()
        return None

    def open(self, uri: str, flight: InFlight) -> None:
        self._by_uri[uri] = flight

    @property
    def running(self) -> int:
        return sum(1 for flight in self._by_uri.values() if flight.running)

    def settle(self, flight: InFlight, suggestion: Suggestion | None) -> None:
        """`flight`'s stream has ended with `suggestion`: its timeline says for whom."""
        timeline, owner = flight.timeline, flight.owner
        if owner is not None and owner is not timeline:
            # A newer keystroke's request took the stream over: its answer holds these tokens.
            owner.tokens += timeline.tokens
            timeline.tokens = 0
            timeline.outcome = "adopted"
        elif flight.parked:
            # Its request was cancelled; what it made still answers typing that follows it.
            timeline.outcome = "cancelled"
            if suggestion is not None:
                self.remember(flight, suggestion)

    def remember(self, flight: InFlight, suggestion: Suggestion) -> None:
        """`flight`'s suggestion is what typing at its cursor is answered from next."""
        shown = Shown(flight.text, suggestion.offset, suggestion.end_offset, suggestion.text)
        self._typethrough.remember(flight.uri, shown)

    def forget(self, uri: str) -> None:
        """A closed document: a stream kept for its next keystroke stops."""
        flight = self._by_uri.get(uri)
        if flight is not None and flight.parked:
            self._expire(uri, flight)

    async def follow(self, uri: str, flight: InFlight, me: Timeline) -> Suggestion | None:
        """`flight`'s suggestion, awaited on behalf of the request `me`; None once another
        request supersedes it or takes the stream over. Cancelled (`$/cancelRequest`), an
        automatic request's stream stays open a moment for the next keystroke's request."""
        task = flight.task
        assert task is not None
        handover = flight.claim(me)
        try:
            waited: set[asyncio.Future[Any]] = {task, handover}
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if flight.owner is me and not flight.park(
                ADOPTION_GRACE_S, lambda: self._expire(uri, flight)
            ):
                flight.timeline.outcome = "cancelled"
                flight.drop()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            raise
        finally:
            if self._by_uri.get(uri) is flight and flight.owner is me and not flight.parked:
                del self._by_uri[uri]
        if flight.owner is not me or task.cancelled():
            return None  # superseded: the newer request answers
        return task.result()

    def _expire(self, uri: str, flight: InFlight) -> None:
        """No request took the cancelled request's stream over: stop it."""
        flight.unpark()
        if flight.running:
            flight.timeline.outcome = "cancelled"
            flight.drop()
        if self._by_uri.get(uri) is flight:
            del self._by_uri[uri]

    async def adopt(
        self,
        flight: InFlight,
        typed: str,
        timeline: Timeline,
        request: InlineRequest,
        on_partial: PartialSink | None,
    ) -> Suggestion | None:
        """The answer for `request` (followed by `timeline`) from the open stream that `typed`
        follows: the stream's suggestion minus `typed`."""
        uri, text, offset = request.uri, request.text, request.offset
        timeline.mode = "adopted"

        def grown(suggestion: Suggestion) -> None:
            rest = rest_after(suggestion.text, typed)
            if not rest:
                return
            timeline.mark("first_token")
            if "\n" in rest:
                timeline.mark("first_line")
            if on_partial is not None:
                on_partial(_moved(suggestion, timeline, rest, offset, offset))

        flight.listener = grown
        if flight.latest is not None:
            grown(flight.latest)  # the rest of what has come so far shows at once
        try:
            suggestion = await self.follow(uri, flight, timeline)
        except asyncio.CancelledError:
            timeline.finish("cancelled")
            self._on_timeline(timeline)
            raise
        remaining = None
        if suggestion is not None:
            self.remember(flight, suggestion)
            remaining = self._typethrough.lookup(uri, text, offset)
        if suggestion is None or remaining is None:
            taken = flight.owner is not timeline or flight.task is None or flight.task.cancelled()
            timeline.finish("superseded" if taken else "empty")
            self._on_timeline(timeline)
            return None
        timeline.mark("first_token")
        timeline.mark("first_line")
        timeline.chars_shown = len(remaining.completion)
        timeline.finish("shown")
        self._on_timeline(timeline)
        return _moved(suggestion, timeline, remaining.completion, offset, remaining.end_offset)


def _moved(
    suggestion: Suggestion, timeline: Timeline, text: str, offset: int, end_offset: int
) -> Suggestion:
    """`suggestion`'s rest as the answer of the request that `timeline` follows."""
    return dataclasses.replace(
        suggestion,
        id=timeline.id,
        text=text,
        offset=offset,
        end_offset=end_offset,
        timeline=timeline,
        alternatives=(),
    )
