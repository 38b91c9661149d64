"""A document's open engine request, and the requests that wait on it (its followers).

A keystroke normally cancels the request before it. When what was typed is what the open
stream has already produced (the user types along with a suggestion before it is shown, or
while it is still growing), the stream goes on for the newer request instead: that request
follows it, its answer is the suggestion minus the typed characters, and the engine is spared
a new prompt to prefill. Editors cancel the older request before they send the newer one, so
a cancelled automatic request whose stream has produced text stays open (parked) for
`ADOPTION_GRACE_S`; if no request takes it over by then it is stopped after all.

How the engine request ended is decided here, in `EngineStream.outcome`, and nowhere else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from copilot_lsp.completion.suggestion import PartialSink, Suggestion
from copilot_lsp.completion.typethrough import rest_after, typed_at
from copilot_lsp.telemetry.timeline import Outcome, Timeline

ADOPTION_GRACE_S = 0.15
"""How long a cancelled request's stream waits for the next keystroke's request. Editors
send that request right after the cancel; this only bounds what an unneeded stream costs."""

Ending = Literal["done", "taken over", "superseded", "cancelled"]
"""Why a follower stopped waiting: the stream ended, a newer request took the stream over, a
newer request stopped it, or the follower's own request was cancelled."""
StopReason = Literal["superseded", "cancelled"]


def _pending() -> asyncio.Future[Suggestion | None]:
    return asyncio.get_running_loop().create_future()


def _as_is(raw: Suggestion | None, ending: Ending) -> Suggestion | None:
    return raw


@dataclass(eq=False)
class Follower:
    """One request waiting for a suggestion. It hears the stream grow (`on_partial`) and,
    once, how the wait ended (`settle`), which `finalize` turns into the request's answer."""

    timeline: Timeline
    on_partial: PartialSink | None = None
    finalize: Callable[[Suggestion | None, Ending], Suggestion | None] = _as_is
    """The request's answer from the stream's suggestion (None when there was none) and the
    ending; where a request taken over records its own timeline."""
    answer: asyncio.Future[Suggestion | None] = field(default_factory=_pending)

    def hear(self, suggestion: Suggestion) -> None:
        if self.on_partial is not None and not self.answer.done():
            self.on_partial(suggestion)

    def settle(self, raw: Suggestion | None, ending: Ending) -> None:
        if not self.answer.done():
            self.answer.set_result(self.finalize(raw, ending))

    def fail(self, error: Exception) -> None:
        """The request fails with `error` (not the engine's: a broken model family file)."""
        if not self.answer.done():
            self.answer.set_exception(error)

    @classmethod
    def answered(cls, timeline: Timeline, suggestion: Suggestion) -> Follower:
        """A request answered without the engine (type-through)."""
        follower = cls(timeline)
        follower.answer.set_result(suggestion)
        return follower


@dataclass(eq=False)
class EngineStream:
    """One engine request, the document text and cursor it was made for, what it has
    produced so far and the request it answers now."""

    uri: str
    text: str
    offset: int
    timeline: Timeline
    """The engine request's own timeline (its tokens, its outcome)."""
    automatic: bool
    task: asyncio.Task[Suggestion | None] | None = None
    latest: Suggestion | None = None
    """What the stream has produced so far (the cutter's preview), at `offset`."""
    follower: Follower | None = None
    """The request this stream answers now; None while parked."""
    stopped: StopReason | None = None
    """Why it was stopped before its end, if it was."""
    taken_over: bool = False
    """A newer keystroke's request follows it instead of the one that opened it."""
    concluded: bool = False
    """Its timeline is recorded and its follower answered (`conclude` ran)."""
    _expiry: asyncio.TimerHandle | None = field(default=None, repr=False)

    def relay(self, suggestion: Suggestion) -> None:
        """The preview grew (the stages' `on_partial`)."""
        self.latest = suggestion
        if self.follower is not None:
            self.follower.hear(suggestion)

    @property
    def preview(self) -> str:
        return self.latest.text if self.latest is not None else ""

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done() and self.stopped is None

    def typed_since(self, text: str, offset: int) -> str | None:
        """The characters typed at the stream's cursor since it started, when that is the only
        change to the document and the stream so far goes on from them; None otherwise."""
        if not self.preview:
            return None
        chars = typed_at(self.text, self.offset, text, offset)
        if not chars or rest_after(self.preview, chars) is None:
            return None
        return chars

    def follow(self, follower: Follower) -> None:
        """Make `follower` the request this stream answers; the one before it is taken over."""
        self.unpark()
        previous, self.follower = self.follower, follower
        if previous is not None:
            self.taken_over = True
            previous.settle(None, "taken over")
        elif follower.timeline is not self.timeline:
            self.taken_over = True  # after a park: the request that opened it is gone

    @property
    def parked(self) -> bool:
        return self._expiry is not None

    def park(self, grace_s: float, expire: Callable[[], None]) -> bool:
        """Keep the stream open for `grace_s` after its follower was cancelled, if it has
        produced anything another request could take over; False when it should stop now."""
        if not self.automatic or not self.preview or not self.running:
            return False
        self.follower = None
        self._expiry = asyncio.get_running_loop().call_later(grace_s, expire)
        return True

    def unpark(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None

    def stop(self, reason: StopReason) -> None:
        """Stop the engine request (no request will take it over)."""
        self.unpark()
        self.stopped = reason
        if self.task is not None:
            self.task.cancel()

    def outcome(self, produced: Outcome | None) -> Outcome:
        """How the engine request ended: `produced` is what its stages made of it (None when
        it was stopped before they were done)."""
        if produced is None:
            return self.stopped or "superseded"
        if produced == "error":
            return produced
        if self.taken_over:
            return "adopted"  # a newer keystroke's answer holds its tokens
        if self.parked:
            return "cancelled"  # its request was cancelled; what it made still answers typing
        return produced

    def conclude(
        self,
        produced: Outcome | None,
        suggestion: Suggestion | None,
        record: Callable[[Timeline], None],
        error: str | None = None,
        failure: Exception | None = None,
    ) -> None:
        """The engine request is over: its timeline is finished and recorded, then its
        follower gets `suggestion` (or fails with `failure`). A taken-over stream's tokens
        count for the request that took it over."""
        if self.concluded:
            return
        self.concluded = True
        outcome = self.outcome(produced)
        self.unpark()
        follower, self.follower = self.follower, None
        if outcome == "adopted" and follower is not None:
            follower.timeline.tokens += self.timeline.tokens
            self.timeline.tokens = 0
        self.timeline.finish(outcome, error)
        record(self.timeline)
        if follower is not None and failure is not None:
            follower.fail(failure)
        elif follower is not None:
            follower.settle(suggestion, "done" if produced is not None else outcome_ending(outcome))


def outcome_ending(outcome: Outcome) -> Ending:
    return "cancelled" if outcome == "cancelled" else "superseded"
