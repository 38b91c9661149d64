"""What every command module shares: progress on stderr, help that shows defaults, and the
`--json`/`--out` pair of the commands with a report."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def say(message: str) -> None:
    """Progress for the user: stderr, so stdout stays the command's result."""
    print(message, file=sys.stderr, flush=True)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default from its definition, shown once in its help; none shown for an
    unset option (None), a switch (False) or an empty list, whose help says what that means."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or action.default == []:
            return action.help
        return super()._get_help_string(action)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """`--json` (print the report as JSON on stdout) and `--out PATH` (write it to a file),
    as every command that has a report spells them."""
    parser.add_argument(
        "--json",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH",
        help="print the report as JSON on stdout instead of the table (`--json PATH`, the "
        "old spelling of `--out PATH`, still works in this release, with a warning)",
    )
    parser.add_argument("--out", type=Path, metavar="PATH", help="write the JSON report here")


def emit_report(args: argparse.Namespace, report: dict[str, Any], table: str) -> None:
    """The table (or with `--json` the JSON) on stdout; with `--out` the JSON into a file."""
    out: Path | None = args.out
    as_json = args.json is True
    if isinstance(args.json, str):
        say(
            f"copilot-lsp: `--json {args.json}` is deprecated: use `--out {args.json}` "
            "(`--json` alone prints the JSON on stdout)"
        )
        out = out or Path(args.json)
    print(json.dumps(report, indent=2) if as_json else table)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2), encoding="utf-8")
        say(f"report written to {out}")


def walk_commands(
    parser: argparse.ArgumentParser, path: list[str]
) -> Iterator[tuple[list[str], argparse.ArgumentParser]]:
    """`parser` and every command's and sub-command's parser below it, depth first, each with
    the words that name it (an alias of a command is not visited again)."""
    yield path, parser
    for action in parser._actions:  # argparse has no public walk over its subparsers
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, subparser in action.choices.items():
                if id(subparser) not in seen:
                    seen.add(id(subparser))
                    yield from walk_commands(subparser, [*path, name])
