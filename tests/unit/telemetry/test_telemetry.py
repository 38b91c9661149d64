"""Unit tests for telemetry.timeline, telemetry.recorder and telemetry.log."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import pytest

from copilot_lsp.settings import TelemetrySettings
from copilot_lsp.telemetry.log import CompletionLog, read_log
from copilot_lsp.telemetry.recorder import Recorder
from copilot_lsp.telemetry.timeline import Timeline


class FakeClock:
    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance_ms(self, ms: float) -> None:
        self.now += ms / 1000.0


def make_timeline(clock: FakeClock, uri: str = "file:///secret/project/main.py") -> Timeline:
    return Timeline.start(uri, "python", "automatic", clock)


def test_marks_give_exact_milliseconds() -> None:
    clock = FakeClock(start=5000.0)
    timeline = make_timeline(clock)
    clock.advance_ms(40)
    timeline.mark("debounced")
    clock.advance_ms(2.5)
    timeline.mark("prompt_built")
    clock.advance_ms(100)
    timeline.mark("first_token")
    assert timeline.marks == {
        "debounced": pytest.approx(40.0),
        "prompt_built": pytest.approx(42.5),
        "first_token": pytest.approx(142.5),
    }
    assert list(timeline.marks) == ["debounced", "prompt_built", "first_token"]


def test_first_mark_wins() -> None:
    clock = FakeClock()
    timeline = make_timeline(clock)
    clock.advance_ms(10)
    timeline.mark("first_line")
    clock.advance_ms(90)
    timeline.mark("first_line")
    assert timeline.marks["first_line"] == pytest.approx(10.0)


def test_finish_marks_finished_and_sets_outcome() -> None:
    clock = FakeClock()
    timeline = make_timeline(clock)
    clock.advance_ms(7)
    timeline.finish("error", "boom")
    assert timeline.outcome == "error"
    assert timeline.error == "boom"
    assert timeline.marks["finished"] == pytest.approx(7.0)


def test_start_fields() -> None:
    uri = "file:///secret/project/main.py"
    timeline = make_timeline(FakeClock(), uri)
    assert len(timeline.id) == 12
    assert timeline.uri_hash == hashlib.sha256(uri.encode()).hexdigest()[:12]
    assert timeline.outcome == "pending"
    assert timeline.trigger == "automatic"
    assert make_timeline(FakeClock()).id != timeline.id


def test_to_json_has_no_text_or_uri_unless_set() -> None:
    clock = FakeClock()
    timeline = make_timeline(clock)
    timeline.mode = "multi-line"
    clock.advance_ms(3)
    timeline.finish("shown")
    record = timeline.to_json()
    assert "text" not in record
    assert "error" not in record
    assert "feedback" not in record
    assert "secret" not in json.dumps(record)
    assert record["id"] == timeline.id
    assert record["outcome"] == "shown"
    assert record["mode"] == "multi-line"
    assert record["language"] == "python"
    assert record["ms"] == {"finished": pytest.approx(3.0)}
    assert set(record) == {
        "id",
        "started_at",
        "uri_hash",
        "language",
        "mode",
        "trigger",
        "outcome",
        "ms",
        "tokens",
        "chars_shown",
    }
    timeline.text = "return 1"
    assert timeline.to_json()["text"] == "return 1"


def test_to_json_ms_is_a_copy() -> None:
    clock = FakeClock()
    timeline = make_timeline(clock)
    record = timeline.to_json()
    timeline.mark("debounced")
    assert record["ms"] == {}


def shown_timeline(clock: FakeClock, chars: int = 10) -> Timeline:
    timeline = make_timeline(clock)
    clock.advance_ms(20)
    timeline.mark("first_token")
    timeline.chars_shown = chars
    timeline.tokens = 4
    clock.advance_ms(30)
    timeline.finish("shown")
    return timeline


def read_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_recorder_writes_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "completions.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path))
    clock = FakeClock()
    first, second = shown_timeline(clock), shown_timeline(clock)
    recorder.record(first)
    recorder.record(second)
    lines = read_lines(path)
    assert [line["id"] for line in lines] == [first.id, second.id]
    assert lines[0]["ms"] == {"first_token": pytest.approx(20.0), "finished": pytest.approx(50.0)}
    assert lines[0]["tokens"] == 4
    assert "text" not in lines[0]
    assert recorder.rolling.snapshot()["stages"]["finished"]["n"] == 2


def test_recorder_disabled_log_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path, enable_log=False))
    recorder.record(shown_timeline(FakeClock()))
    assert not path.exists()
    assert recorder.log is None
    assert len(recorder.rolling.snapshot()["recent"]) == 1


def test_feedback_known_id(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path))
    timeline = shown_timeline(FakeClock(), chars=12)
    recorder.record(timeline)
    assert recorder.feedback(timeline.id, "partially_accepted", 5) is True
    lines = read_lines(path)
    assert len(lines) == 2
    assert lines[1] == {"id": timeline.id, "feedback": "partially_accepted", "chars_accepted": 5}
    # the rolling window sees the feedback too
    assert recorder.rolling.snapshot()["outcomes"]["partially_accepted"] == 1


def test_feedback_without_chars_uses_chars_shown(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path))
    timeline = shown_timeline(FakeClock(), chars=12)
    recorder.record(timeline)
    assert recorder.feedback(timeline.id, "accepted", None) is True
    assert read_lines(path)[1]["chars_accepted"] == 12


def test_feedback_unknown_id(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path))
    recorder.record(shown_timeline(FakeClock()))
    assert recorder.feedback("no-such-id", "accepted", 3) is False
    assert len(read_lines(path)) == 1


def test_recorder_forgets_old_ids(tmp_path: Path) -> None:
    recorder = Recorder(TelemetrySettings(log_path=tmp_path / "c.jsonl", window=10))
    clock = FakeClock()
    timelines = [shown_timeline(clock) for _ in range(45)]
    for timeline in timelines:
        recorder.record(timeline)
    assert recorder.feedback(timelines[0].id, "accepted", 1) is False
    assert recorder.feedback(timelines[-1].id, "accepted", 1) is True


def test_read_log_merges_feedback_and_skips_corrupt_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path))
    clock = FakeClock()
    first, second = shown_timeline(clock), shown_timeline(clock)
    recorder.record(first)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "truncated", "outcome": "sh\n')
        handle.write("not json at all\n")
        handle.write("[1, 2, 3]\n")
        handle.write('{"no_id": true}\n')
        handle.write("\n")
    recorder.record(second)
    recorder.feedback(first.id, "accepted", 7)
    records = list(read_log(path))
    assert [r["id"] for r in records] == [first.id, second.id]
    assert records[0]["feedback"] == "accepted"
    assert records[0]["chars_accepted"] == 7
    assert records[0]["outcome"] == "shown"
    assert records[0]["ms"]["finished"] == pytest.approx(50.0)
    assert "feedback" not in records[1]


def test_read_log_missing_file(tmp_path: Path) -> None:
    assert list(read_log(tmp_path / "absent.jsonl")) == []


def test_completion_log_write_failure_is_reported_once_and_costs_only_those_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    path = blocker / "sub" / "c.jsonl"
    log = CompletionLog(path)  # parent is a file: mkdir fails
    with caplog.at_level(logging.WARNING, logger="copilot_lsp.telemetry.log"):
        log.append({"id": "a"})
        log.append({"id": "b"})
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(path) in warnings[0], warnings
    assert blocker.read_text() == "x"
    blocker.unlink()  # the disk problem goes away: the log works again, with later lines
    log.append({"id": "c"})
    assert [r["id"] for r in read_log(path)] == ["c"]


def test_read_log_skips_line_with_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"id": "a", "outcome": "shown"}\n\xff\xfe garbage\n{"id": "b"}\n')
    assert [r["id"] for r in read_log(path)] == ["a", "b"]
