"""`copilot-lsp`: the language server (`--stdio`) and the commands around it.

Nothing but JSON-RPC goes to stdout while serving; logs go to stderr or `--log-file`. Each
command group is a module with `add_parser` and `run`; their imports of the heavier parts
(vLLM launching, torch, benchmarks) wait until that command runs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any, Protocol

from copilot_lsp import __version__
from copilot_lsp.cli import bench, complete, draft, engine, stats
from copilot_lsp.cli.output import HelpFormatter
from copilot_lsp.errors import CopilotLspError

logger = logging.getLogger("copilot_lsp")


class CommandGroup(Protocol):
    def add_parser(self, commands: Any) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


COMMANDS: dict[str, CommandGroup] = {
    "engine": engine,
    "draft": draft,
    "complete": complete,
    "bench": bench,
    "stats": stats,
}
"""Command groups, in the order `--help` lists them."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="copilot-lsp",
        description="Self-hosted inline code completions over LSP, served by vLLM.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"copilot-lsp {__version__}")
    parser.add_argument("--stdio", action="store_true", help="serve LSP over stdin/stdout")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="-v info, -vv debug")
    parser.add_argument("--log-file", type=Path, help="write logs here instead of stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(commands)
    return parser


def configure_logging(verbose: int, log_file: Path | None) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler()
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # pygls logs every payload (source code included) at INFO: keep it quiet unless debugging.
    logging.getLogger("pygls").setLevel(logging.DEBUG if verbose >= 2 else logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.log_file)
    try:
        if args.command is None:
            return _serve()
        return COMMANDS[args.command].run(args)
    except CopilotLspError as error:
        print(f"copilot-lsp: {error}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as error:  # an optional extra (torch, vLLM…) is not installed
        from copilot_lsp.extras import missing_extra

        words = [args.command, getattr(args, "action", None) or getattr(args, "bench", None)]
        missing = missing_extra(error, " ".join(w for w in words if w))
        if missing is None:
            raise
        print(f"copilot-lsp: {missing}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _serve() -> int:
    from copilot_lsp.lsp.server import server

    server.start_io()
    return 0
