"""What the completion package hands out: a suggestion, and the callables that hear about one.

Every module of the package may import this one; it imports none of them, so the stages,
the engine stream and the document session never import each other in a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from copilot_lsp.completion.alternatives import Alternative
from copilot_lsp.telemetry.timeline import Timeline


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
    alternatives: tuple[Alternative, ...] = ()
    """Further suggestions after this one (explicit requests; completion/alternatives.py)."""


EngineStateListener = Callable[[bool, str], None]
"""Hears the engine become healthy or not, with a message for the user."""
TimelineSink = Callable[[Timeline], None]
"""Hears each completion's timeline once, when it has ended (telemetry/recorder.py)."""
PartialSink = Callable[[Suggestion], None]
"""Hears a streaming suggestion's text so far (an insertion at the cursor, not yet final)."""
