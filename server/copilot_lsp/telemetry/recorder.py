"""Collects finished timelines and user feedback into the log and the rolling window."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from copilot_lsp.settings import TelemetrySettings
from copilot_lsp.telemetry.log import CompletionLog, default_log_path
from copilot_lsp.telemetry.stats import RollingStats
from copilot_lsp.telemetry.timeline import Feedback, Timeline, split_id

logger = logging.getLogger(__name__)

# Feedback for ids whose timeline is not recorded yet: an early answer is shown (and may be
# accepted) while its stream still runs. Bounded, since a bogus id never gets a timeline.
_PENDING_LIMIT = 64

_Event = tuple[str, int | None, str]  # ("displayed" | a Feedback, chars accepted, the id)


class Recorder:
    """Where every completion's timeline ends up."""

    def __init__(self, settings: TelemetrySettings) -> None:
        self.rolling = RollingStats(settings.window)
        self.log: CompletionLog | None = None
        self.configure(settings)
        self._by_id: dict[str, dict[str, Any]] = {}
        self._pending: OrderedDict[str, list[_Event]] = OrderedDict()

    def configure(self, settings: TelemetrySettings) -> None:
        path = settings.log_path or default_log_path()
        self.log = CompletionLog(path) if settings.enable_log else None

    def record(self, timeline: Timeline) -> None:
        record = timeline.to_json()
        ms = record["ms"]
        logger.info(
            "completion %s %s %s: first token %s ms, total %s ms, %d tokens",
            timeline.id,
            timeline.mode,
            timeline.outcome,
            ms.get("first_token", "-"),
            ms.get("finished", "-"),
            timeline.tokens,
        )
        self.rolling.add(record)
        self._by_id[timeline.id] = record
        if len(self._by_id) > 4 * self.rolling.window:
            for stale in list(self._by_id)[: self.rolling.window]:
                del self._by_id[stale]
        if self.log is not None:
            self.log.append(record)
        for kind, chars, identifier in self._pending.pop(timeline.id, []):
            if kind == "displayed":
                self.displayed(identifier)
            else:
                self.feedback(identifier, kind, chars)  # type: ignore[arg-type]

    def displayed(self, completion_id: str) -> bool:
        """The editor showed the completion (`copilot/didShowCompletion`); False if unknown.
        An alternative's id (`<id>#2`) counts for its completion."""
        base, _ = split_id(completion_id)
        record = self._by_id.get(base)
        if record is None:
            self._defer(base, ("displayed", None, completion_id))
            return False
        if record.get("displayed"):
            return True  # shown again after a redraw: one completion, one display
        record["displayed"] = True
        if self.log is not None:
            self.log.append({"id": base, "displayed": True})
        return True

    def feedback(self, completion_id: str, kind: Feedback, chars_accepted: int | None) -> bool:
        """Note what the user did with a shown completion; False for an unknown id.

        Partial accepts report the total accepted so far (Copilot's `acceptedLength`), so
        the largest one counts. An id whose timeline is still running keeps its feedback
        until the timeline arrives. Feedback on an alternative (`<id>#2`) is recorded for its
        completion with the alternative's rank (`accepted_rank`).
        """
        base, rank = split_id(completion_id)
        record = self._by_id.get(base)
        if record is None:
            self._defer(base, (kind, chars_accepted, completion_id))
            return False
        earlier = record.get("feedback")
        if earlier == "accepted" and (kind != "accepted" or rank == record.get("accepted_rank", 1)):
            # The whole suggestion was taken already (a next edit: its change, then its command).
            return True
        if kind == "dismissed" and earlier == "partially_accepted":
            return True  # the rest was dismissed: it stays a partial accept
        if chars_accepted is not None:
            chars = chars_accepted
        else:
            chars = _chars_shown(record, rank) if kind != "dismissed" else 0
        if kind == "partially_accepted" and record.get("accepted_rank", 1) == rank:
            chars = max(chars, record.get("chars_accepted", 0))
        record["feedback"] = kind
        record["chars_accepted"] = chars
        event: dict[str, Any] = {"id": base, "feedback": kind, "chars_accepted": chars}
        if kind != "dismissed" and (rank > 1 or "accepted_rank" in record):
            record["accepted_rank"] = event["accepted_rank"] = rank
        if self.log is not None:
            self.log.append(event)
        return True

    def _defer(self, completion_id: str, event: _Event) -> None:
        self._pending.setdefault(completion_id, []).append(event)
        self._pending.move_to_end(completion_id)
        while len(self._pending) > _PENDING_LIMIT:
            self._pending.popitem(last=False)


def _chars_shown(record: dict[str, Any], rank: int) -> int:
    """Characters of the record's `rank`-th suggestion (1: the first)."""
    if rank == 1:
        return int(record.get("chars_shown", 0))
    others = record.get("alternative_chars") or []
    return int(others[rank - 2]) if rank - 2 < len(others) else 0
