"""`python -m copilot_lsp.bench.alternatives --engine-url URL FILE LINE COLUMN`: its options,
and the run from options to report."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from copilot_lsp.bench.alternatives.report import render
from copilot_lsp.bench.alternatives.run import run as compare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m copilot_lsp.bench.alternatives",
        description="What alternatives cost: invoked completions with 1 suggestion vs N, side "
        "by side.",
    )
    parser.add_argument("--engine-url", required=True)
    parser.add_argument("file", type=Path)
    parser.add_argument("line", type=int, help="zero-based")
    parser.add_argument("column", type=int, help="zero-based")
    parser.add_argument("--alternatives", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", type=Path, help="write the JSON report here")
    args = parser.parse_args(argv)
    if args.alternatives < 2:
        parser.error("--alternatives: at least 2 (1 is the baseline arm)")
    report = asyncio.run(
        compare(
            args.engine_url,
            args.file.resolve(),
            args.file.read_text(encoding="utf-8"),
            args.line,
            args.column,
            args.alternatives,
            args.rounds,
        )
    )
    sys.stdout.write(render(report) + "\n")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0
