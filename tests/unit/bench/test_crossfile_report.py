"""The cross-file report: figures per split and arm, the table, Markdown, plot and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from copilot_lsp.bench.crossfile.command import REPORT, SUMMARY, features, write_report
from copilot_lsp.bench.crossfile.report import PLOT, summarise


def _record(split: str, arm: str, exact: bool, kind: str = "import") -> dict[str, Any]:
    return {
        "split": split,
        "task_id": f"pkg/a.py:{len(split) + (kind == 'attribute')}:4",
        "package": "pkg",
        "kind": kind,
        "arm": arm,
        "completion": "name()" if exact else "other()",
        "shown": True,
        "exact_match": exact,
        "identifier_match": exact,
        "edit_similarity": 1.0 if exact else 0.5,
        "round_trip_ms": 100.0 if arm == "naive" else 200.0,
        "ms": {"first_token": 50.0} if arm == "naive" else {"prompt_built": 3.0, "finished": 190.0},
    }


def _data() -> dict[str, Any]:
    records = [
        _record("dev", "naive", False),
        _record("dev", "naive", True, "attribute"),
        _record("dev", "open-tabs", True),
        _record("dev", "open-tabs", True, "attribute"),
        _record("heldout", "naive", False),
        _record("heldout", "open-tabs", False),
    ]
    return {
        "machine": {"cpus": 2},
        "started_at": "2026-12-03T10:00:00Z",
        "duration_s": 60.0,
        "engine": {"profile": "local-cpu-suffix", "model": "smollm2-135m"},
        "server_commit": "abc1234",
        "seed": 28,
        "limit": 2,
        "arms": ["naive", "open-tabs"],
        "features": features(),
        "server_messages": {"open-tabs": ["context: ignored"]},
        "packages": {"dev": [{"name": "pkg", "version": "1.0", "found": 9}], "heldout": []},
        "tasks": [{"package": "pkg"}, {"package": "pkg"}],
        "records": records,
    }


def test_figures_per_split_arm_and_kind() -> None:
    summary = summarise(_data())
    dev = summary["by_split"]["dev"]
    assert dev["naive"]["exact_match"] == 0.5 and dev["open-tabs"]["exact_match"] == 1.0
    assert dev["naive"]["p50_first_token_ms"] == 50.0
    assert dev["open-tabs"]["p50_prompt_built_ms"] == 3.0
    assert dev["open-tabs"]["p50_first_token_ms"] is None
    assert summary["by_split"]["heldout"]["open-tabs"]["n"] == 1
    assert summary["by_kind"]["dev"]["attribute"]["naive"]["exact_match"] == 1.0
    assert summary["differ"] == {"naive / open-tabs": 1}


def test_the_report_folder(tmp_path: Path) -> None:
    table = write_report(_data(), tmp_path)
    assert "heldout" in table and "open-tabs" in table
    text = (tmp_path / REPORT).read_text(encoding="utf-8")
    assert "| `open-tabs` | 2 | 1.000 |" in text and f"({PLOT})" in text
    assert "workspace index **absent**" in text or "workspace index **present**" in text
    assert json.loads((tmp_path / SUMMARY).read_text())["by_split"]["dev"]["naive"]["n"] == 2
    assert (tmp_path / PLOT).read_bytes()[:4] == b"\x89PNG"


def test_whether_the_prompt_named_the_api_splits_the_identifier_match(tmp_path: Path) -> None:
    data = _data()
    heads = iter([True, False])
    for record in data["records"]:
        if record["split"] == "dev" and record["arm"] == "open-tabs":
            record["api_in_head"] = next(heads)
            record["identifier_match"] = record["api_in_head"]
    figures = summarise(data)["by_split"]["dev"]
    assert figures["open-tabs"]["api_in_head"] == 0.5
    assert figures["open-tabs"]["identifier_match_api_in_head"] == 1.0
    assert figures["open-tabs"]["identifier_match_api_not_in_head"] == 0.0
    assert "api_in_head" not in figures["naive"]  # no prompt seen: nothing claimed
    write_report(data, tmp_path)
    text = (tmp_path / REPORT).read_text(encoding="utf-8")
    assert "- `open-tabs`: the API's name in the prompt's head" in text
    assert "in 50% of tasks; identifier match 1.000 when it is there, 0.000 when not" in text
