"""`copilot-lsp complete FILE --line L --col C`: one completion through the real server."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from copilot_lsp.cli.output import HelpFormatter, say
from copilot_lsp.errors import CopilotLspError, UsageError

SUGGESTION = 0
NO_SUGGESTION = 1
BAD_INPUT = 2
ENGINE_UNREACHABLE = 3
NO_ANSWER = 4
EXIT_STATUS = f"""exit status:
  {SUGGESTION}  a suggestion was printed
  {NO_SUGGESTION}  the engine answered, but there is nothing to suggest here
  {BAD_INPUT}  bad input: no such file, a line or column outside it, a bad option
  {ENGINE_UNREACHABLE}  the engine could not be reached or failed (the server's hint is printed)
  {NO_ANSWER}  the server gave no answer within --timeout, or could not be started
"""


def add_parser(commands: Any) -> None:
    complete = commands.add_parser(
        "complete",
        help="one inline completion through the real server over stdio",
        description="Start the server as an editor would, open FILE, ask for one inline "
        "completion at the cursor and print it with its latency per stage. What the server "
        "shows the user (settings mistakes, an unreachable engine) goes to stderr.",
        epilog=EXIT_STATUS,
        formatter_class=_Formatter,
    )
    complete.add_argument("file", type=Path)
    complete.add_argument("--line", type=int, required=True, help="1-based line")
    complete.add_argument("--col", type=int, required=True, help="1-based column (UTF-16)")
    complete.add_argument("--json", action="store_true", help="print JSON on stdout")
    complete.add_argument("--timeout", type=float, default=300.0, help="seconds")


class _Formatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown, and the exit-status table kept as written."""


def run(args: argparse.Namespace) -> int:
    from copilot_lsp.client.oneshot import complete_once

    text = _checked_text(args.file, args.line, args.col)
    try:
        result = asyncio.run(
            complete_once(
                args.file.absolute(), text, args.line - 1, args.col - 1, timeout_s=args.timeout
            )
        )
    except TimeoutError:
        say(f"copilot-lsp: the server gave no answer within {args.timeout:g} s (--timeout)")
        return NO_ANSWER
    except (OSError, ConnectionError, CopilotLspError) as error:
        say(f"copilot-lsp: the server could not be started or stopped answering: {error}")
        return NO_ANSWER
    for message in result.get("messages") or []:
        say(message)  # the server's own words: what the editor would pop up
    status = exit_status(result)
    if args.json:
        print(json.dumps({**result, "exit_status": status}, indent=2))
        return status
    _print_result(args, result)
    return status


def exit_status(result: dict[str, Any]) -> int:
    """Suggestion, no suggestion, or an engine that could not serve (see EXIT_STATUS)."""
    if result.get("text"):
        return SUGGESTION
    timeline = result.get("timeline") or {}
    engine = result.get("engine") or {}
    if timeline.get("outcome") in ("error", "backoff") or engine.get("healthy") is False:
        return ENGINE_UNREACHABLE
    return NO_SUGGESTION


def _checked_text(file: Path, line: int, col: int) -> str:
    """The file's text, or UsageError naming what is wrong with the arguments."""
    if line < 1 or col < 1:
        raise UsageError("--line and --col are 1-based")
    if not file.is_file():
        raise UsageError(f"no such file: {file}")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {file} as UTF-8 text: {error}") from None
    lines = text.split("\n")
    if line > len(lines):
        raise UsageError(f"--line {line} is past the end of {file} ({len(lines)} lines)")
    width = len(lines[line - 1].removesuffix("\r").encode("utf-16-le")) // 2
    if col > width + 1:
        raise UsageError(
            f"--col {col} is past the end of line {line} ({width} UTF-16 units; the last "
            f"column is {width + 1})"
        )
    return text


def _print_result(args: argparse.Namespace, result: dict[str, Any]) -> None:
    from copilot_lsp.telemetry.timeline import STAGES

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
