"""`copilot-lsp stats`: latency percentiles per stage from the completion log."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from copilot_lsp.cli.output import HelpFormatter


def add_parser(commands: Any) -> None:
    stats = commands.add_parser(
        "stats", help="latency percentiles from the completion log", formatter_class=HelpFormatter
    )
    stats.add_argument("--log", type=Path, help="log file (default: the user's state dir)")
    stats.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from copilot_lsp.telemetry.log import default_log_path, read_log
    from copilot_lsp.telemetry.stats import format_table, outcome_counts, stage_table

    path = args.log or default_log_path()
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
