"""`copilot-lsp bench overhead`: its options, and the run from options to report."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from copilot_lsp.errors import CopilotLspError


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    overhead: argparse.ArgumentParser = benches.add_parser(
        "overhead",
        help="the server's own cost per completion (scripted engine, 5,000-line file, edits)",
        formatter_class=formatter_class,
    )
    overhead.add_argument("-n", "--count", type=int, default=400, help="measured rounds")
    overhead.add_argument(
        "--base-checkout", type=Path, help="also run this checkout's server, alternating"
    )
    overhead.add_argument(
        "--rtt-ms",
        type=float,
        default=0.0,
        help="put the engine this round trip away (a latency proxy): what connections cost",
    )
    overhead.add_argument(
        "--gap-ms", type=float, default=0.0, help="pause before each round, as between keystrokes"
    )
    return overhead


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The report and its table."""
    from copilot_lsp.bench.overhead.report import render
    from copilot_lsp.bench.overhead.run import run_overhead

    if args.count < 1:
        raise CopilotLspError("--count must be positive")
    if args.rtt_ms < 0 or args.gap_ms < 0:
        raise CopilotLspError("--rtt-ms and --gap-ms cannot be negative")
    base = args.base_checkout
    if base is not None and not (base / "server" / "copilot_lsp").is_dir():
        raise CopilotLspError(f"not a checkout with server/copilot_lsp: {base}")
    with tempfile.TemporaryDirectory(prefix="copilot-lsp-overhead-") as folder:
        report = asyncio.run(
            run_overhead(
                args.count, Path(folder), base, rtt_s=args.rtt_ms / 1000, gap_s=args.gap_ms / 1000
            )
        )
    return report, render(report)
