"""`copilot-lsp`: the language server (`--stdio`) and the commands around it.

Nothing but JSON-RPC goes to stdout while serving; logs go to stderr or `--log-file`. Each
command group is a module with `add_parser` and `run`; their imports of the heavier parts
(vLLM launching, torch, benchmarks) wait until that command runs.

With no command the server speaks LSP on stdin/stdout, as editors start it; on a terminal
(someone typed `copilot-lsp`) it prints the help instead of waiting silently for JSON-RPC.
`-v` and `--log-file` are accepted before or after the command. Exit status: 0 success,
1 an error (its message on stderr), 2 bad arguments; `complete` and `engine status` add
their own (see their `--help`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
from pathlib import Path
from typing import Any, Protocol

from copilot_lsp import __version__
from copilot_lsp.cli import bench, complete, draft, engine, stats
from copilot_lsp.cli.output import HelpFormatter, walk_commands
from copilot_lsp.errors import CopilotLspError, UsageError

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
    _add_logging_options(parser, default=0)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(commands)
    for path, subparser in list(walk_commands(parser, [])):
        if path:  # the main parser has its own, with real defaults
            _add_logging_options(subparser, default=argparse.SUPPRESS)
    return parser


def _add_logging_options(parser: argparse.ArgumentParser, default: object) -> None:
    """`-v`/`--log-file` on the main parser, and again on every command's parser with
    SUPPRESS defaults, so a value given after the command adds to (or replaces) the one
    given before it instead of being refused."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default,
        dest="verbose" if default == 0 else "verbose_after",
        help="-v info, -vv debug",
    )
    parser.add_argument(
        "--log-file",
        type=Path,
        metavar="PATH",
        default=None if default == 0 else default,
        dest="log_file" if default == 0 else "log_file_after",
        help="write logs here instead of stderr",
    )


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
    parser = build_parser()
    args = parser.parse_args(argv)
    args.verbose += getattr(args, "verbose_after", 0)
    args.log_file = getattr(args, "log_file_after", None) or args.log_file
    configure_logging(args.verbose, args.log_file)
    if args.command is None:
        return _run(parser, args)
    previous = _exit_cleanly_on_sigterm()
    try:
        return _run(parser, args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        if args.command is None:
            if not args.stdio and _stdin_is_terminal():
                parser.print_help()
                print(
                    "\nEditors start the server as `copilot-lsp --stdio` (LSP on stdin/stdout). "
                    "To try it: `copilot-lsp engine up`, then "
                    "`copilot-lsp complete FILE --line L --col C`."
                )
                return 0
            return _serve()
        return COMMANDS[args.command].run(args)
    except UsageError as error:
        print(f"copilot-lsp: {error}", file=sys.stderr)
        return 2
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


def _exit_cleanly_on_sigterm() -> Any:
    """SIGTERM ends a command the way Ctrl-C does, through its `finally` blocks: the engines a
    benchmark starts run in their own sessions and would otherwise outlive it. Returns the
    handler it replaced (None when signals cannot be set here: not the main thread)."""

    def terminate(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    with contextlib.suppress(ValueError):
        return signal.signal(signal.SIGTERM, terminate)
    return None


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # closed
        return False


def _serve() -> int:
    from copilot_lsp.lsp.server import server

    server.start_io()
    return 0
