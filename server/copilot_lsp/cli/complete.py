"""`copilot-lsp complete FILE --line L --col C`: one completion through the real server."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from copilot_lsp.cli.output import HelpFormatter
from copilot_lsp.errors import CopilotLspError


def add_parser(commands: Any) -> None:
    complete = commands.add_parser(
        "complete",
        help="one inline completion through the real server over stdio",
        formatter_class=HelpFormatter,
    )
    complete.add_argument("file", type=Path)
    complete.add_argument("--line", type=int, required=True, help="1-based line")
    complete.add_argument("--col", type=int, required=True, help="1-based column (UTF-16)")
    complete.add_argument("--json", action="store_true")
    complete.add_argument("--timeout", type=float, default=300.0, help="seconds")


def run(args: argparse.Namespace) -> int:
    from copilot_lsp.client.oneshot import complete_once
    from copilot_lsp.telemetry.timeline import STAGES

    if args.line < 1 or args.col < 1:
        raise CopilotLspError("--line and --col are 1-based")
    if not args.file.is_file():
        raise CopilotLspError(f"no such file: {args.file}")
    text = args.file.read_text(encoding="utf-8")
    result = asyncio.run(
        complete_once(
            args.file.absolute(), text, args.line - 1, args.col - 1, timeout_s=args.timeout
        )
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0 if result["text"] else 2
    print(f"--- suggestion at {args.file}:{args.line}:{args.col} ---")
    print(result["text"] if result["text"] else "(no suggestion)")
    print("---")
    timeline = result.get("timeline") or {}
    ms = timeline.get("ms", {})
    print(
        f"completion {timeline.get('id')}  mode {timeline.get('mode')}  outcome "
        f"{timeline.get('outcome')}  tokens {timeline.get('tokens')}"
    )
    for stage in STAGES:
        if stage in ms:
            print(f"  {stage:<14}{ms[stage]:>10.1f} ms")
    print(f"  {'round trip':<14}{result['round_trip_ms']:>10.1f} ms (client side)")
    if timeline.get("error"):
        print(f"error: {timeline['error']}")
    return 0 if result["text"] else 2
