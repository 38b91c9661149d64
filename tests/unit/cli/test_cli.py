"""The command line: `stats` from a log, argument errors that explain themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copilot_lsp.cli import main


def write_log(path: Path) -> None:
    records: list[dict[str, Any]] = [
        {"id": f"c{i}", "outcome": "shown", "ms": {"first_token": 100.0 + i, "finished": 200.0 + i}}
        for i in range(10)
    ]
    records.append({"id": "x", "outcome": "superseded", "ms": {"finished": 5.0}})
    records.append({"id": "c0", "feedback": "accepted", "chars_accepted": 3})
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")


def test_stats_prints_the_table_from_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "completions.jsonl"
    write_log(log)
    assert main(["stats", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "11 completions" in out
    first_token = next(line for line in out.splitlines() if line.startswith("first_token"))
    assert first_token.split() == ["first_token", "10", "104.5", "108.1", "108.9"]
    assert "accepted 1" in out and "superseded 1" in out


def test_stats_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "completions.jsonl"
    write_log(log)
    assert main(["stats", "--log", str(log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stages"]["finished"]["p50"] == 204.5
    assert report["outcomes"]["shown"] == 10


def test_stats_keeps_next_edits_apart_from_completions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "completions.jsonl"
    write_log(log)
    edits: list[dict[str, Any]] = [
        {"id": "n1", "mode": "next-edit", "outcome": "shown", "ms": {"finished": 900.0}},
        {"id": "n2", "mode": "next-edit", "outcome": "empty", "ms": {"finished": 1500.0}},
        {"id": "n1", "feedback": "accepted"},  # the editor's report: no mode of its own
    ]
    with log.open("a") as handle:
        handle.write("\n".join(json.dumps(r) for r in edits) + "\n")
    assert main(["stats", "--log", str(log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stages"]["finished"]["p50"] == 204.5  # the edits' 900/1500 ms not mixed in
    assert report["outcomes"]["shown"] == 10 and report["outcomes"]["accepted"] == 1
    assert report["next_edits"]["requests"] == 2 and report["next_edits"]["accepted"] == 1
    assert report["next_edits"]["latency_ms"]["n"] == 2
    assert main(["stats", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "11 completions" in out
    assert "next edits: 2 requests, 1 offered an edit, 1 quiet, 1 accepted" in out


def test_complete_rejects_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad input exits 2 (as argparse's own errors), apart from "no suggestion" (1) and an
    unreachable engine (3), before any server is started."""
    assert main(["complete", str(tmp_path / "missing.py"), "--line", "1", "--col", "1"]) == 2
    assert "no such file" in capsys.readouterr().err
    source = tmp_path / "a.py"
    source.write_text("x = 1\n")
    assert main(["complete", str(source), "--line", "0", "--col", "1"]) == 2
    assert "1-based" in capsys.readouterr().err
    assert main(["complete", str(source), "--line", "3", "--col", "1"]) == 2
    assert "past the end of" in capsys.readouterr().err
    assert main(["complete", str(source), "--line", "1", "--col", "7"]) == 2
    assert "the last column is 6" in capsys.readouterr().err


def test_complete_help_documents_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["complete", "--help"])
    out = capsys.readouterr().out
    for line in ("0  a suggestion", "1  the engine answered", "2  bad input", "3  the engine"):
        assert line in out


def test_unknown_profile_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["engine", "command", "--profile", "no-such-profile"]) == 1
    err = capsys.readouterr().err
    assert "no-such-profile" in err and "local-cpu" in err


def test_engine_command_prints_the_vllm_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["engine", "command", "--profile", "local-cpu"]) == 0
    out = capsys.readouterr().out
    assert "-m vllm.entrypoints.openai.api_server" in out
    assert "--served-model-name smollm2-135m" in out
