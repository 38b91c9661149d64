"""`copilot-lsp bench latency`: its options, and the run from options to report."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from copilot_lsp.errors import CopilotLspError


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    latency: argparse.ArgumentParser = benches.add_parser(
        "latency",
        help="N completions at one cursor through the real server",
        formatter_class=formatter_class,
    )
    latency.add_argument("file", type=Path)
    latency.add_argument("--line", type=int, required=True, help="1-based line")
    latency.add_argument("--col", type=int, required=True, help="1-based column (UTF-16)")
    latency.add_argument("-n", "--count", type=int, default=20)
    return latency


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The report and its table."""
    from copilot_lsp.bench.latency.report import render
    from copilot_lsp.bench.latency.run import run_latency_bench

    if args.line < 1 or args.col < 1 or args.count < 1:
        raise CopilotLspError("--line, --col and --count must be positive")
    if not args.file.is_file():
        raise CopilotLspError(f"no such file: {args.file}")
    report = asyncio.run(
        run_latency_bench(
            args.file.absolute(),
            args.file.read_text(encoding="utf-8"),
            args.line - 1,
            args.col - 1,
            args.count,
        )
    )
    return report, render(report)
