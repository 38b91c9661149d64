"""`copilot-lsp bench …`: the benchmarks, one subpackage of bench/ each, its options and its
run from them in its command.py.

Most print a table (or with `--json` their JSON report) and can write the report
(`--out PATH`); `engine`, `replay`, `crossfile` and `nextedit` write a report folder instead
(`--out DIR`: Markdown, plots, summary and raw results) and start engines of their own,
recorded in a state folder made here for the run, never in the user's.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Protocol

from copilot_lsp.bench.context import command as context
from copilot_lsp.bench.crossfile import command as crossfile
from copilot_lsp.bench.engine import command as engine
from copilot_lsp.bench.index import command as index
from copilot_lsp.bench.latency import command as latency
from copilot_lsp.bench.load import command as load
from copilot_lsp.bench.nextedit import command as nextedit
from copilot_lsp.bench.overhead import command as overhead
from copilot_lsp.bench.quality import command as quality
from copilot_lsp.bench.replay import command as replay
from copilot_lsp.cli.output import HelpFormatter, add_report_options, emit_report


class _Options(Protocol):
    def add_parser(
        self, benches: Any, formatter_class: type[argparse.HelpFormatter]
    ) -> argparse.ArgumentParser: ...


class _Report(_Options, Protocol):
    def run(self, args: argparse.Namespace) -> tuple[dict[str, Any], str]: ...


class _ReportFolder(_Options, Protocol):
    def run(self, args: argparse.Namespace, state_dir: Path) -> str: ...


REPORTS: dict[str, _Report] = {
    "latency": latency,
    "context": context,
    "quality": quality,
    "overhead": overhead,
    "load": load,
    "index": index,
}
"""The benchmarks with a JSON report and a table."""
FOLDERS: dict[str, _ReportFolder] = {
    "engine": engine,
    "replay": replay,
    "crossfile": crossfile,
    "nextedit": nextedit,
}
"""The benchmarks that write a report folder and start engines."""
ORDER = (
    "latency",
    "engine",
    "replay",
    "context",
    "quality",
    "crossfile",
    "nextedit",
    "overhead",
    "load",
    "index",
)
"""As `copilot-lsp bench --help` lists them."""


def add_parser(commands: Any) -> None:
    bench = commands.add_parser(
        "bench", help="benchmarks (tables + JSON)", formatter_class=HelpFormatter
    )
    benches = bench.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for name in ORDER:
        if name in FOLDERS:
            FOLDERS[name].add_parser(benches, HelpFormatter)
        else:
            add_report_options(REPORTS[name].add_parser(benches, HelpFormatter))


def run(args: argparse.Namespace) -> int:
    if args.bench in FOLDERS:
        from copilot_lsp.bench.harness import state_folder

        with state_folder() as state_dir:
            print(FOLDERS[args.bench].run(args, state_dir))
        return 0
    report, table = REPORTS[args.bench].run(args)
    emit_report(args, report, table)
    if args.bench == "overhead":
        from copilot_lsp.bench.overhead.report import write_markdown

        # The Markdown table goes beside the JSON report, wherever that was written.
        written = args.out or (Path(args.json) if isinstance(args.json, str) else None)
        if written is not None:
            write_markdown(report, written)
    return 0
