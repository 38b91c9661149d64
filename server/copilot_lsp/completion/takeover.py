"""A keystroke that types along with the open engine stream takes it over (completion/stream.py).

The newer request follows the stream instead of opening its own: it shows the rest of what
the stream has produced beyond the typed characters at once, hears the rest grow under its
own id and cursor, and its answer is the stream's final suggestion minus what was typed
(looked up in the document's type-through state, where the stream's suggestion is kept).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from copilot_lsp.completion.request import InlineRequest
from copilot_lsp.completion.stream import Ending, EngineStream, Follower
from copilot_lsp.completion.suggestion import PartialSink, Suggestion
from copilot_lsp.completion.typethrough import TypeThrough, rest_after
from copilot_lsp.telemetry.timeline import Outcome, Timeline

Conclude = Callable[[Timeline, Outcome], None]
"""Finishes and records a request's timeline with its outcome."""


def take_over(
    stream: EngineStream,
    typed: str,
    timeline: Timeline,
    request: InlineRequest,
    shown: TypeThrough,
    on_partial: PartialSink | None,
    conclude: Conclude,
) -> Follower:
    """`request` (followed by `timeline`) follows `stream`, which `typed` goes along with."""
    offset = request.offset
    timeline.mode = "adopted"

    def grown(suggestion: Suggestion) -> None:
        rest = rest_after(suggestion.text, typed)
        if not rest:
            return
        timeline.mark("first_token")
        if "\n" in rest:
            timeline.mark("first_line")
        if on_partial is not None:
            on_partial(moved(suggestion, timeline, rest, offset, offset))

    def finalize(raw: Suggestion | None, ending: Ending) -> Suggestion | None:
        if ending == "cancelled":
            conclude(timeline, "cancelled")
            return None
        remaining = shown.lookup(request.text, offset) if raw is not None else None
        if raw is None or remaining is None:
            conclude(timeline, "empty" if ending == "done" else "superseded")
            return None
        timeline.mark("first_token")
        timeline.mark("first_line")
        timeline.chars_shown = len(remaining.completion)
        conclude(timeline, "shown")
        return moved(raw, timeline, remaining.completion, offset, remaining.end_offset)

    follower = Follower(timeline, grown, finalize)
    stream.follow(follower)
    if stream.latest is not None:
        grown(stream.latest)  # the rest of what has come so far shows at once
    return follower


def moved(
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
