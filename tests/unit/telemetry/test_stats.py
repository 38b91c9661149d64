"""Unit tests for copilot_lsp.telemetry.stats: percentiles and stage tables."""

from __future__ import annotations

from typing import Any

import pytest

from copilot_lsp.telemetry.stats import (
    RollingStats,
    format_table,
    outcome_counts,
    percentile,
    stage_table,
)
from copilot_lsp.telemetry.timeline import STAGES


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1, 2, 3, 4], 50, 2.5),
        ([1, 2, 3, 4], 90, 3.7),
        ([1, 2, 3, 4], 99, 3.97),
        ([1, 2, 3, 4], 0, 1.0),
        ([1, 2, 3, 4], 100, 4.0),
        ([4, 1, 3, 2], 25, 1.75),  # unsorted input
        ([10], 50, 10.0),
        ([10], 99, 10.0),
        ([1, 3], 50, 2.0),
        ([0, 10, 20, 30, 40], 90, 36.0),
        ([5, 5, 5, 100], 50, 5.0),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9.1),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99, 9.91),
    ],
)
def test_percentile_linear_interpolation(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_does_not_sort_in_place() -> None:
    values = [3.0, 1.0, 2.0]
    percentile(values, 50)
    assert values == [3.0, 1.0, 2.0]


def test_percentile_of_nothing_raises() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)


def record(outcome: str, **ms: float) -> dict[str, Any]:
    return {"id": str(id(ms)), "outcome": outcome, "ms": ms}


def test_stage_table_counts_only_shown() -> None:
    records = [
        record("shown", first_token=10, finished=20),
        record("shown", first_token=20, finished=40),
        record("shown", first_token=30, finished=60),
        record("shown", first_token=40),
        record("superseded", first_token=1000, finished=5000),
        record("error", first_token=1000),
        record("empty", finished=1),
    ]
    table = stage_table(records)
    assert set(table) == {"first_token", "finished"}
    assert table["first_token"]["n"] == 4
    assert table["first_token"]["p50"] == 25.0
    assert table["first_token"]["p90"] == 37.0
    assert table["first_token"]["p99"] == 39.7
    assert table["finished"]["n"] == 3
    assert table["finished"]["p50"] == 40.0


def test_stage_table_ignores_unknown_stages_and_rounds() -> None:
    table = stage_table([record("shown", bogus=5, debounced=1.234), record("shown", debounced=2)])
    assert set(table) == {"debounced"}
    assert table["debounced"]["p50"] == 1.6  # 1.617 rounded to one decimal


def test_stage_table_empty() -> None:
    assert stage_table([]) == {}
    assert stage_table([record("cancelled", finished=3)]) == {}


def test_format_table_lists_stages_in_order() -> None:
    records = [record("shown", **{stage: float(i + 1) for i, stage in enumerate(STAGES)})]
    # build the mapping in reverse to be sure the output order comes from STAGES
    table = dict(reversed(list(stage_table(records).items())))
    text = format_table(table)
    lines = text.splitlines()
    assert lines[0].startswith("stage (ms since request)")
    assert set(lines[1]) == {"-"}
    assert [line.split()[0] for line in lines[2:]] == list(STAGES)
    first_token = next(line for line in lines if line.startswith("first_token"))
    assert first_token.split() == ["first_token", "1", "4.0", "4.0", "4.0"]


def test_format_table_skips_missing_stages_and_empty_message() -> None:
    table = stage_table([record("shown", finished=12.5, debounced=3)])
    lines = format_table(table).splitlines()
    assert [line.split()[0] for line in lines[2:]] == ["debounced", "finished"]
    assert "no completions shown yet" in format_table({})


def test_outcome_counts_includes_feedback() -> None:
    records = [
        {"outcome": "shown", "feedback": "accepted"},
        {"outcome": "shown"},
        {"outcome": "superseded"},
        {"outcome": "shown", "feedback": "dismissed"},
    ]
    assert outcome_counts(records) == {
        "shown": 3,
        "superseded": 1,
        "accepted": 1,
        "dismissed": 1,
    }


def test_rolling_stats_keeps_only_window() -> None:
    rolling = RollingStats(window=10)
    for i in range(25):
        rolling.add(record("shown", finished=float(i)) | {"id": str(i)})
    snapshot = rolling.snapshot(recent=100)
    assert [r["id"] for r in snapshot["recent"]] == [str(i) for i in range(15, 25)]
    assert snapshot["stages"]["finished"]["n"] == 10
    assert snapshot["stages"]["finished"]["p50"] == 19.5
    assert snapshot["outcomes"] == {"shown": 10}
    assert [r["id"] for r in rolling.snapshot(recent=3)["recent"]] == ["22", "23", "24"]


def test_next_edits_are_counted_apart_from_inline_completions() -> None:
    def record(mode: str, outcome: str, finished: float, **more: Any) -> dict[str, Any]:
        return {"mode": mode, "outcome": outcome, "ms": {"finished": finished}, **more}

    rolling = RollingStats(window=50)
    for ms in (100.0, 200.0, 300.0):
        rolling.add(record("full", "shown", ms, chars_shown=3))
    rolling.add(record("next-edit", "shown", 2000.0, displayed=True, feedback="accepted"))
    rolling.add(record("next-edit", "empty", 1000.0))
    rolling.add(record("next-edit", "empty", 3000.0))
    rolling.add(record("next-edit", "cancelled", 50.0))
    snapshot = rolling.snapshot()
    # inline completion's figures hold no next edit
    assert snapshot["stages"]["finished"]["n"] == 3 and snapshot["stages"]["finished"]["p50"] == 200
    assert snapshot["outcomes"] == {"shown": 3}
    assert snapshot["acceptance"]["offered"] == 3
    edits = snapshot["next_edits"]
    assert (edits["requests"], edits["shown"], edits["quiet"]) == (4, 1, 2)
    assert (edits["displayed"], edits["accepted"]) == (1, 1)
    assert edits["outcomes"]["cancelled"] == 1
    # answered requests, quiet ones included, the cancelled one not
    assert edits["latency_ms"] == {"n": 3.0, "p50": 2000.0, "p90": 2800.0, "p99": 2980.0}
    assert edits["acceptance"]["rate"] == 1.0
    assert len(snapshot["recent"]) == 7
    assert RollingStats(window=5).snapshot()["next_edits"]["latency_ms"] == {"n": 0.0}
