"""`copilot-lsp stats`: latency percentiles per stage from the completion log."""

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
    from copilot_lsp.telemetry.stats import format_table, outcome_counts, stage_table

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
    table = stage_table(records)
    if args.json:
        print(json.dumps({"log": str(path), "stages": table, "outcomes": outcome_counts(records)}))
        return 0
    print(f"{len(records)} completions in {path}")
    print(format_table(table))
    counts = outcome_counts(records)
    if counts:
        print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


def _configured_log() -> Path:
    """The log the server writes with the settings file and the environment."""
    from copilot_lsp.settings_layers import load_base
    from copilot_lsp.telemetry.log import default_log_path

    loaded = load_base()
    for message in loaded.messages:
        say(f"copilot-lsp: invalid settings: {message}")
    return loaded.settings.telemetry.log_path or default_log_path()
