"""Accept tracking in the recorder: displays, partial accepts, early feedback, acceptance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from copilot_lsp.settings import TelemetrySettings
from copilot_lsp.telemetry.recorder import Recorder
from copilot_lsp.telemetry.stats import acceptance
from copilot_lsp.telemetry.timeline import Timeline


def shown(chars: int) -> Timeline:
    timeline = Timeline.start("file:///a.py", "python", "automatic")
    timeline.chars_shown = chars
    timeline.finish("shown")
    return timeline


def log_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_feedback_before_the_timeline_is_applied_when_it_arrives(tmp_path: Path) -> None:
    # An early answer is on screen (and accepted) while its stream still runs.
    path = tmp_path / "c.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path))
    timeline = shown(10)
    assert recorder.displayed(timeline.id) is False
    assert recorder.feedback(timeline.id, "partially_accepted", 4) is False
    assert not path.exists()
    recorder.record(timeline)
    lines = log_lines(path)
    assert lines[1:] == [
        {"id": timeline.id, "displayed": True},
        {"id": timeline.id, "feedback": "partially_accepted", "chars_accepted": 4},
    ]
    assert recorder.rolling.snapshot()["outcomes"]["displayed"] == 1


def test_partial_accepts_keep_the_largest_and_dismiss_keeps_the_partial(tmp_path: Path) -> None:
    recorder = Recorder(TelemetrySettings(log_path=tmp_path / "c.jsonl"))
    timeline = shown(10)
    recorder.record(timeline)
    recorder.feedback(timeline.id, "partially_accepted", 6)
    recorder.feedback(timeline.id, "partially_accepted", 3)
    recorder.feedback(timeline.id, "dismissed", None)
    record = recorder.rolling.snapshot()["recent"][-1]
    assert (record["feedback"], record["chars_accepted"]) == ("partially_accepted", 6)
    recorder.feedback(timeline.id, "accepted", None)
    recorder.feedback(timeline.id, "dismissed", None)
    assert (record["feedback"], record["chars_accepted"]) == ("accepted", 10)


def test_acceptance_counts_displayed_when_the_editor_reports_it() -> None:
    records: list[dict[str, Any]] = [
        {"outcome": "shown", "chars_shown": 10, "displayed": True, "feedback": "accepted",
         "chars_accepted": 10},
        {"outcome": "shown", "chars_shown": 10, "displayed": True},
        {"outcome": "shown", "chars_shown": 10},  # answered, never drawn (superseded on screen)
        {"outcome": "superseded"},
    ]  # fmt: skip
    assert acceptance(records) == {"offered": 2.0, "accepted": 1.0, "rate": 0.5, "chars_rate": 0.5}
    plain_client = [{k: v for k, v in r.items() if k != "displayed"} for r in records]
    assert acceptance(plain_client)["offered"] == 3.0
    assert acceptance([]) == {"offered": 0.0, "accepted": 0.0, "rate": 0.0, "chars_rate": 0.0}


def test_acceptance_counts_a_displayed_preview_whatever_its_stream_became() -> None:
    # A slow engine: the preview is drawn and Tab takes it before the stream ends; the next
    # keystroke's request adopts the stream, or a request elsewhere cancels it.
    records: list[dict[str, Any]] = [
        {"outcome": "cancelled", "chars_shown": 0, "displayed": True,
         "feedback": "partially_accepted", "chars_accepted": 60},
        {"outcome": "adopted", "chars_shown": 100, "displayed": True,
         "feedback": "partially_accepted", "chars_accepted": 50},
        {"outcome": "cancelled", "chars_shown": 0, "displayed": True},  # typed over
        {"outcome": "cancelled", "chars_shown": 0},  # never drawn
    ]  # fmt: skip
    assert acceptance(records) == {
        "offered": 3.0,
        "accepted": 2.0,
        "rate": 0.6667,
        "chars_rate": 0.6875,
    }
