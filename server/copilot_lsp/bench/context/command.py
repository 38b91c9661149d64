"""`copilot-lsp bench context`: its options, and the run from options to report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from copilot_lsp.errors import CopilotLspError


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    context: argparse.ArgumentParser = benches.add_parser(
        "context",
        help="parse and context-build latency on large real files",
        formatter_class=formatter_class,
    )
    context.add_argument("files", type=Path, nargs="*", help="default: large stdlib modules")
    context.add_argument("-n", "--samples", type=int, default=300)
    return context


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The report and its table."""
    from copilot_lsp.bench.context.report import render
    from copilot_lsp.bench.context.run import default_files, run_context_bench

    files = args.files or default_files()
    missing = [str(path) for path in files if not path.is_file()]
    if missing or not files:
        raise CopilotLspError(f"no such file: {', '.join(missing) or 'no files given'}")
    report = run_context_bench(files, args.samples)
    return report, render(report)
