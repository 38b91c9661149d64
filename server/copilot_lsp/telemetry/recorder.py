"""Collects finished timelines and user feedback into the log and the rolling window."""

from __future__ import annotations

import logging
from typing import Any

from copilot_lsp.settings import TelemetrySettings
from copilot_lsp.telemetry.log import CompletionLog, default_log_path
from copilot_lsp.telemetry.stats import RollingStats
from copilot_lsp.telemetry.timeline import Feedback, Timeline

logger = logging.getLogger(__name__)


class Recorder:
    """Where every completion's timeline ends up."""

    def __init__(self, settings: TelemetrySettings) -> None:
        self.rolling = RollingStats(settings.window)
        self.log: CompletionLog | None = None
        self.configure(settings)
        self._by_id: dict[str, dict[str, Any]] = {}

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

    def feedback(self, completion_id: str, kind: Feedback, chars_accepted: int | None) -> bool:
        """Note what the user did with a shown completion; False for an unknown id."""
        record = self._by_id.get(completion_id)
        if record is None:
            return False
        record["feedback"] = kind
        record["chars_accepted"] = (
            chars_accepted if chars_accepted is not None else record.get("chars_shown", 0)
        )
        if self.log is not None:
            self.log.append(
                {
                    "id": completion_id,
                    "feedback": kind,
                    "chars_accepted": record["chars_accepted"],
                }
            )
        return True
