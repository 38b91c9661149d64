"""`bench overhead`'s report (a row per class of edit and server, reports from before the
classes still rendered), its options, the server's marks read back per round, and the
in-process profile."""

from __future__ import annotations

import argparse
import asyncio
import pstats
from pathlib import Path
from typing import Any, cast

import pytest

from copilot_lsp.bench.overhead import command, report
from copilot_lsp.bench.overhead.edits import CLASSES
from copilot_lsp.bench.overhead.inprocess import profile_edits
from copilot_lsp.bench.overhead.run import _read_marks, _Samples, summary
from copilot_lsp.client.driver import EditorSession


def _row(p50: float, p99: float) -> dict[str, float]:
    return {"n": 3, "p50": p50, "p90": p99 - 1, "p99": p99, "mean": p50 + 0.5}


def _classes_report(**extra: object) -> dict[str, Any]:
    def server(enter_p50: float) -> dict[str, Any]:
        return {
            "edits": {
                "char": {
                    "round_trip_ms": _row(4.0, 6.0),
                    "prompt_built_ms": _row(0.7, 1.0),
                    "outcomes": {"shown": 3},
                },
                "enter": {
                    "round_trip_ms": _row(enter_p50, 30.0),
                    "prompt_built_ms": {"n": 0},
                    "outcomes": {"empty": 3},
                },
            },
            "stages": {},
            "engine_connections": 4,
            "completions_on_new_connections": 1,
        }

    return {
        "count": 3,
        "warmup": 1,
        "edits": ["char", "enter"],
        "file_lines": 5012,
        "host": "h",
        "servers": {"current": server(8.0), "base": server(31.5)},
        **extra,
    }


def _old_report(**extra: object) -> dict[str, Any]:
    """A report from before the classes: one round trip per server."""
    return {
        "count": 3,
        "warmup": 1,
        "file_lines": 5012,
        "host": "h",
        "servers": {"current": {"round_trip_ms": _row(1.0, 3.0), "stages": {}, **extra}},
    }


def test_a_row_per_class_and_server_with_the_prompt_mark_and_the_target() -> None:
    data = _classes_report()
    table, page = report.render(data), report.markdown(data)
    lines = table.splitlines()
    assert lines[0].startswith("server overhead: 3 rounds of each class of edit after 1 warm")
    rows = [line.split() for line in lines[2:6]]
    assert [row[:2] for row in rows] == [
        ["char", "current"],
        ["char", "base"],
        ["enter", "current"],
        ["enter", "base"],
    ]
    assert rows[0][-3:] == ["0.70", "3", "met"]
    assert rows[2][-3:] == ["-", "0", "missed"]  # p99 30 > 25; no prompt mark read
    assert "current 1 / 4, base 1 / 4" in table
    assert "| enter | base | 3 | 31.5 | 29.0 | 30.0 | - | 0 | missed |" in page
    assert "| char | current | 3 | 4.0 | 5.0 | 6.0 | 0.70 | 3 | met |" in page
    assert "- enter: a line break" in page


def test_every_class_name_fits_its_column() -> None:
    """`typing_unpaired` ran into the server's name (`typing_unpairedcurrent`)."""
    data = _classes_report()
    for server in data["servers"].values():
        server["edits"] = {"typing_unpaired": server["edits"]["char"]}
    data["edits"] = ["typing_unpaired"]
    rows = [line.split() for line in report.render(data).splitlines()[2:4]]
    assert [row[:3] for row in rows] == [
        ["typing_unpaired", "current", "3"],
        ["typing_unpaired", "base", "3"],
    ]


def test_an_older_report_renders_as_one_char_row_per_server() -> None:
    old = _old_report()
    table, page = report.render(old), report.markdown(old)
    assert table.splitlines()[0].startswith("server overhead: 3 rounds after 1 warm-up ones")
    assert table.splitlines()[2].split()[:3] == ["char", "current", "3"]
    assert "| char | current | 3 | 1.0 | 2.0 | 3.0 | - | - | met |" in page
    assert "round trip away" not in table
    assert "current -" in table  # connections were not counted then


def test_the_report_says_how_far_the_engine_was() -> None:
    data = _classes_report(engine_rtt_ms=20.0, gap_ms=100.0)
    table, page = report.render(data), report.markdown(data)
    assert "20.0 ms round trip away, rounds 100.0 ms apart" in table
    assert "20.0 ms round trip away" in page


def test_the_report_shows_the_first_completions_stages() -> None:
    first = {"round_trip_ms": 41.5, "ms": {"debounced": 0.3, "prompt_built": 12.25}}
    for data in (_old_report(first_request=first), _classes_report()):
        data["servers"]["current"]["first_request"] = first
        for text in (report.render(data), report.markdown(data)):
            assert "round trip 41.5 ms (debounced 0.3, prompt_built 12.2 ms)" in text


def test_edits_are_parsed_checked_and_all_by_default() -> None:
    assert command.edit_classes("enter, paste,enter") == ["enter", "paste"]
    assert command.edit_classes("typing_unpaired") == ["typing_unpaired"]
    for wrong in ("enter,rename", ",", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            command.edit_classes(wrong)
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers(), argparse.HelpFormatter)
    args = parser.parse_args(["overhead"])
    assert args.edits == list(CLASSES) and args.edits[0] == "char"
    assert parser.parse_args(["overhead", "--edits", "undo_full"]).edits == ["undo_full"]


class _StatsSession:
    """What `_read_marks` asks of a session: `copilot/stats` and the messages shown."""

    def __init__(self, recent: list[dict[str, Any]]) -> None:
        self.recent = recent
        self.messages = ["engine at http://x is answering"]

    async def stats(self) -> dict[str, Any]:
        return {"recent": self.recent}


def _record(built: float | None, outcome: str = "shown") -> dict[str, Any]:
    return {"outcome": outcome, "ms": {} if built is None else {"prompt_built": built}}


def test_the_marks_of_measured_rounds_are_read_from_the_last_records() -> None:
    records = [_record(9.0), _record(1.0), _record(None, "skipped"), _record(2.0, "empty")]
    session = cast(EditorSession, _StatsSession(records))
    samples = _Samples()
    # The last three completions: the first of them measured, the second not, the third too.
    asyncio.run(_read_marks(session, [True, False, True], samples, "current, enter"))
    assert samples.prompt_built_ms == [1.0, 2.0]
    assert samples.outcomes == {"shown": 1, "empty": 1}


def test_a_measured_round_without_a_prompt_or_record_fails_the_run() -> None:
    session = cast(EditorSession, _StatsSession([_record(1.0), _record(None, "skipped")]))
    with pytest.raises(RuntimeError, match=r"without a prompt \(outcome skipped"):
        asyncio.run(_read_marks(session, [True, True], _Samples(), "current, enter"))
    with pytest.raises(RuntimeError, match="2 completions recorded, 3 sent"):
        asyncio.run(_read_marks(session, [True, True, True], _Samples(), "current, enter"))


def test_summary_of_no_rounds_says_so() -> None:
    assert summary([]) == {"n": 0}
    assert summary([3.0, 1.0, 2.0])["p50"] == 2.0


def test_the_profile_covers_the_measured_edits(tmp_path: Path) -> None:
    out = tmp_path / "enter.prof"
    assert profile_edits(["enter"], 2, 1, 1, out) == 2
    functions = {name for _, _, name in pstats.Stats(str(out)).stats}  # type: ignore[attr-defined]
    assert {"change", "request", "build_prompt"} <= functions
