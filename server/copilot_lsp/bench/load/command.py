"""`copilot-lsp bench load`: its options, and the run from options to report."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from copilot_lsp.errors import CopilotLspError


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    load: argparse.ArgumentParser = benches.add_parser(
        "load",
        help="replayed typing over stdio: engine requests, in-flight, latency, RSS",
        formatter_class=formatter_class,
    )
    load.add_argument("--duration", type=float, default=60.0, help="seconds of typing")
    load.add_argument("--rate", type=float, default=50.0, help="keystrokes per second")
    load.add_argument("--documents", type=int, default=10, help="open documents")
    load.add_argument("--max-inflight", type=int, help="completion.max_inflight for the run")
    load.add_argument("--debounce-ms", type=int, help="completion.debounce_ms for the run")
    load.add_argument("--engine-url", help="a real engine (default: the scripted one, loopback)")
    load.add_argument("--quick", action="store_true", help="10 s instead of --duration")
    return load


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The report and its table."""
    from copilot_lsp.bench.load.report import render
    from copilot_lsp.bench.load.run import run_load

    if args.duration <= 0 or args.rate <= 0 or args.documents < 1:
        raise CopilotLspError("--duration, --rate and --documents must be positive")
    completion: dict[str, Any] = {}
    if args.max_inflight is not None:
        completion["maxInflight"] = args.max_inflight
    if args.debounce_ms is not None:
        completion["debounceMs"] = args.debounce_ms
    options: dict[str, Any] = {"telemetry": {"enableLog": False}}
    if completion:
        options["completion"] = completion
    result = asyncio.run(
        run_load(
            duration_s=10.0 if args.quick else args.duration,
            rate=args.rate,
            documents=args.documents,
            engine_url=args.engine_url,
            options=options,
        )
    )
    return result, render(result)
