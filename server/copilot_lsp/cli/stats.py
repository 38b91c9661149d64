"""`copilot-lsp stats`: latency percentiles per stage from the completion log, inline
completions and next edits apart."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from copilot_lsp.cli.output import HelpFormatter, say
from copilot_lsp.errors import CopilotLspError, UsageError


def add_parser(commands: Any) -> None:
    stats = commands.add_parser(
        "stats", help="latency percentiles from the completion log", formatter_class=HelpFormatter
    )
    stats.add_argument(
        "--log",
        type=Path,
        help="log file (default: telemetry.logPath of the settings file / environment, else "
        "completions.jsonl in the user's state dir)",
    )
    stats.add_argument("--json", action="store_true", help="print JSON on stdout")


def run(args: argparse.Namespace) -> int:
    from copilot_lsp.telemetry.stats import (
        NEXT_EDIT_MODE,
        format_table,
        next_edit_table,
        outcome_counts,
        stage_table,
    )

    path = args.log or _configured_log()
    if args.log is not None and not path.is_file():
        raise UsageError(f"no such log file: {path}")
    if not path.is_file():
        raise CopilotLspError(
            f"no completion log at {path} (telemetry.logPath, else the default): nothing to "
            "report yet. The server writes it once it has completed something "
            "(telemetry.enableLog)."
        )
    from copilot_lsp.telemetry.log import read_log

    records = list(read_log(path))
    completions = [r for r in records if r.get("mode") != NEXT_EDIT_MODE]
    edits = next_edit_table(r for r in records if r.get("mode") == NEXT_EDIT_MODE)
    table = stage_table(completions)
    counts = outcome_counts(completions)
    if args.json:
        print(
            json.dumps({"log": str(path), "stages": table, "outcomes": counts, "next_edits": edits})
        )
        return 0
    print(f"{len(completions)} completions in {path}")
    print(format_table(table))
    if counts:
        print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if edits["requests"]:
        print(_next_edit_line(edits))
    return 0


def _next_edit_line(edits: dict[str, Any]) -> str:
    latency = edits["latency_ms"]
    timing = (
        f", answered p50 {latency['p50']:.0f} / p90 {latency['p90']:.0f} ms"
        if latency.get("n")
        else ""
    )
    return (
        f"next edits: {edits['requests']} requests, {edits['shown']} offered an edit, "
        f"{edits['quiet']} quiet, {edits['accepted']} accepted{timing}"
    )


def _configured_log() -> Path:
    """The log the server writes with the settings file and the environment."""
    from copilot_lsp.settings_layers import load_base
    from copilot_lsp.telemetry.log import default_log_path

    loaded = load_base()
    for message in loaded.messages:
        say(f"copilot-lsp: invalid settings: {message}")
    return loaded.settings.telemetry.log_path or default_log_path()
