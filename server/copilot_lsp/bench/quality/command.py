"""`copilot-lsp bench quality`: its options, and the run from options to report."""

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
    quality: argparse.ArgumentParser = benches.add_parser(
        "quality",
        help="SAFIM Python subsets through the real server, with and without filters",
        formatter_class=formatter_class,
    )
    quality.add_argument(
        "--data",
        type=Path,
        help="a folder with SAFIM's *_completion.jsonl.gz as published (default: its Python "
        "tasks vendored in the package, the same tasks)",
    )
    quality.add_argument(
        "--subsets", default="block,control,api", help="SAFIM subsets, and holes (made from block)"
    )
    quality.add_argument("--limit", type=int, default=30, help="tasks per subset")
    quality.add_argument(
        "--modes",
        default="pipeline,plain",
        help="pipeline, plain, naive (prefix-only straight to the engine), MODE@base",
    )
    quality.add_argument("--engine-url", help="default: the settings' engine")
    quality.add_argument(
        "--base-checkout", type=Path, help="another checkout whose server runs the MODE@base modes"
    )
    return quality


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The report and its table."""
    from copilot_lsp.bench.quality import run as quality
    from copilot_lsp.bench.quality.report import render
    from copilot_lsp.bench.quality.safim import DATA, DERIVED, SUBSETS

    data: Path = args.data or DATA
    if not data.is_dir():
        raise CopilotLspError(f"--data {data}: not a folder")
    subsets = [s for s in args.subsets.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    unknown = [s for s in subsets if s not in SUBSETS and s not in DERIVED] + [
        m for m in modes if not quality.known_mode(m)
    ]
    if unknown:
        raise CopilotLspError(f"unknown subset or mode: {', '.join(unknown)}")
    if quality.NAIVE in modes and not args.engine_url:
        raise CopilotLspError("the naive mode needs --engine-url")
    base = args.base_checkout
    if any(m.endswith(quality.BASE) for m in modes) and (
        base is None or not (base / "server" / "copilot_lsp").is_dir()
    ):
        raise CopilotLspError("MODE@base needs --base-checkout DIR (a checkout with server/)")
    with tempfile.TemporaryDirectory(prefix="copilot-lsp-safim-") as folder:
        report = asyncio.run(
            quality.run_quality_bench(
                data, subsets, args.limit, modes, args.engine_url, Path(folder), base
            )
        )
    return report, render(report)
