"""The timeline of one completion: when each stage was reached, and how it ended."""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

# In the order a completion passes them; every mark is milliseconds since `received`.
STAGES = (
    "debounced",
    "prompt_built",
    "request_sent",
    "first_token",
    "first_line",
    "finished",
)

Outcome = Literal[
    "shown",
    "empty",
    "skipped",
    "superseded",
    "cancelled",
    "error",
    "backoff",
    "adopted",
    "pending",
]
"""`backoff`: not sent, the engine failed just before (completion/admission.py). `adopted`: a
newer keystroke's request took the engine stream over, and its tokens with it
(completion/stream.py)."""
Feedback = Literal["accepted", "partially_accepted", "dismissed"]


def alternative_id(completion_id: str, rank: int) -> str:
    """The accept id of a completion's `rank`-th suggestion (2, 3, …; the first suggestion
    is the completion's own id): feedback on it is counted against the completion."""
    return f"{completion_id}#{rank}"


def split_id(identifier: str) -> tuple[str, int]:
    """The completion id and the rank (1: the first suggestion) that an accept id names."""
    base, sep, rank = identifier.rpartition("#")
    if sep and base and rank.isdigit() and int(rank) >= 2:
        return base, int(rank)
    return identifier, 1


@dataclass(slots=True)
class Timeline:
    """Stage marks and counters for one completion; no source code unless asked for."""

    id: str
    uri_hash: str
    language: str
    mode: str
    trigger: str
    started_at: float
    marks: dict[str, float] = field(default_factory=dict)
    outcome: Outcome = "pending"
    tokens: int = 0
    chars_shown: int = 0
    error: str | None = None
    feedback: Feedback | None = None
    chars_accepted: int = 0
    text: str | None = None
    alternatives: int | None = None
    """Suggestions shown when alternatives were asked for (explicit requests), the first
    included; None when they were not."""
    alternative_tokens: int = 0
    """Tokens the engine generated for the alternatives."""
    alternative_chars: list[int] = field(default_factory=list)
    """Characters of each alternative shown after the first (`chars_shown` is the first's)."""
    _clock: Callable[[], float] = field(default=time.perf_counter, repr=False)
    _t0: float = field(default=0.0, repr=False)

    @classmethod
    def start(
        cls,
        uri: str,
        language: str,
        trigger: str,
        clock: Callable[[], float] = time.perf_counter,
    ) -> Timeline:
        return cls(
            id=uuid.uuid4().hex[:12],
            uri_hash=hashlib.sha256(uri.encode()).hexdigest()[:12],
            language=language,
            mode="",
            trigger=trigger,
            started_at=time.time(),
            _clock=clock,
            _t0=clock(),
        )

    def mark(self, stage: str) -> None:
        """Record that `stage` was reached now; the first mark of a stage wins."""
        self.marks.setdefault(stage, round((self._clock() - self._t0) * 1000.0, 3))

    def finish(self, outcome: Outcome, error: str | None = None) -> None:
        self.mark("finished")
        self.outcome = outcome
        self.error = error

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "id": self.id,
            "started_at": round(self.started_at, 3),
            "uri_hash": self.uri_hash,
            "language": self.language,
            "mode": self.mode,
            "trigger": self.trigger,
            "outcome": self.outcome,
            "ms": dict(self.marks),
            "tokens": self.tokens,
            "chars_shown": self.chars_shown,
        }
        if self.error is not None:
            record["error"] = self.error
        if self.feedback is not None:
            record["feedback"] = self.feedback
            record["chars_accepted"] = self.chars_accepted
        if self.text is not None:
            record["text"] = self.text
        if self.alternatives is not None:
            record["alternatives"] = self.alternatives
            record["alternative_tokens"] = self.alternative_tokens
            record["alternative_chars"] = list(self.alternative_chars)
        return record
