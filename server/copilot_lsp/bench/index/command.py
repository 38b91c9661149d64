"""`copilot-lsp bench index`: its options, and the run from options to report."""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from copilot_lsp.bench.overhead.edits import CLASSES
from copilot_lsp.errors import CopilotLspError

SITE_PACKAGES = "the site-packages of the Python running it"
CEILING = "GIT_CEILING_DIRECTORIES"


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    index: argparse.ArgumentParser = benches.add_parser(
        "index",
        help="the workspace index on a large folder: files and lines per second, memory, "
        "retrieval per request, keystrokes while it is built",
        formatter_class=formatter_class,
    )
    index.add_argument("--root", type=Path, help=f"the folder to index (default: {SITE_PACKAGES})")
    index.add_argument("--max-files", type=int, default=20_000, help="`context.workspace.maxFiles`")
    index.add_argument(
        "--walk",
        action="store_true",
        help="list the folder by walking it even inside a git repository (sets "
        "GIT_CEILING_DIRECTORIES to its parent): a folder git ignores, such as a virtual "
        "environment's, is otherwise empty to the index",
    )
    index.add_argument(
        "-n",
        "--count",
        type=int,
        default=300,
        help="measured rounds without the index and on the built index",
    )
    index.add_argument("--warmup", type=int, default=20, help="unmeasured rounds before those")
    index.add_argument(
        "--edit", choices=CLASSES, default="typing", help="the class of edit of each round"
    )
    index.add_argument(
        "--gap-ms", type=float, default=25.0, help="pause before each round, as between keystrokes"
    )
    index.add_argument(
        "--cursors", type=int, default=500, help="sampled cursors retrieval is timed at"
    )
    index.add_argument("--seed", type=int, default=1, help="which cursors and edits")
    index.add_argument(
        "--timeout-s", type=float, default=3600.0, help="give up when the index takes longer"
    )
    index.add_argument(
        "--no-server", action="store_true", help="only the in-process index and retrieval"
    )
    return index


def default_root() -> Path:
    import sysconfig

    return Path(sysconfig.get_paths()["purelib"])


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The report and its table."""
    from copilot_lsp.bench.index.report import render
    from copilot_lsp.bench.index.run import run_index

    root = (args.root or default_root()).resolve()
    if not root.is_dir():
        raise CopilotLspError(f"not a folder: {root}")
    if args.count < 1 or args.warmup < 0 or args.cursors < 0 or args.max_files < 0:
        raise CopilotLspError(
            "--count must be positive, --warmup, --cursors, --max-files not negative"
        )
    if args.gap_ms < 0:
        raise CopilotLspError("--gap-ms cannot be negative")
    saved = os.environ.get(CEILING)
    if args.walk:  # the server inherits it
        os.environ[CEILING] = str(root.parent)
    try:
        with tempfile.TemporaryDirectory(prefix="copilot-lsp-index-") as folder:
            report = asyncio.run(
                run_index(
                    root,
                    args.max_files,
                    Path(folder),
                    count=args.count,
                    warmup=args.warmup,
                    seed=args.seed,
                    gap_s=args.gap_ms / 1000,
                    kind=args.edit,
                    cursors=args.cursors,
                    timeout_s=args.timeout_s,
                    servers=not args.no_server,
                )
            )
    finally:
        if saved is None:
            os.environ.pop(CEILING, None)
        else:
            os.environ[CEILING] = saved
    return report, render(report)
