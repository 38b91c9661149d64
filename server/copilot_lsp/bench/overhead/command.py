"""`copilot-lsp bench overhead`: its options, and the run from options to report."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from copilot_lsp.bench.overhead.edits import CLASSES, EXTRA_CLASSES
from copilot_lsp.errors import CopilotLspError


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    overhead: argparse.ArgumentParser = benches.add_parser(
        "overhead",
        help="the server's own cost per completion (scripted engine, 5,000-line file, edits)",
        formatter_class=formatter_class,
    )
    overhead.add_argument(
        "-n", "--count", type=int, default=400, help="measured rounds of each class of edit"
    )
    overhead.add_argument(
        "--edits",
        type=edit_classes,
        default=",".join(CLASSES),
        metavar="CLASS,…",
        help="the classes of edit before each completion, comma-separated, run in this order "
        "(by default every class): char (a character typed into a comment on one line: the only "
        "class before, comparable with older reports), typing (a statement typed on a new "
        "line), enter, delete_line, paste (20-odd lines), undo_range and undo_full (200-odd "
        "lines cut and put back, as range edits or as whole texts); typing_unpaired (brackets "
        "not paired) only on request",
    )
    overhead.add_argument(
        "--warmup", type=int, default=20, help="unmeasured rounds before each class's rounds"
    )
    overhead.add_argument("--seed", type=int, default=1, help="where the edits go")
    overhead.add_argument(
        "--base-checkout", type=Path, help="also run this checkout's server, alternating"
    )
    overhead.add_argument(
        "--rtt-ms",
        type=float,
        default=0.0,
        help="put the engine this round trip away (a latency proxy): what connections cost",
    )
    overhead.add_argument(
        "--gap-ms", type=float, default=0.0, help="pause before each round, as between keystrokes"
    )
    overhead.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="with the workspace index on, over a copy of this folder's code (the edited file "
        "inside it), measured once the index's first pass is done",
    )
    overhead.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="after the servers, run the same edits in this process (workspace and prompt "
        "builder, no protocol) under cProfile and write its stats here",
    )
    return overhead


def edit_classes(value: str) -> list[str]:
    """`--edits`: known classes, each once, in the order given."""
    kinds = [kind.strip() for kind in value.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in CLASSES + EXTRA_CLASSES]
    known = ", ".join(CLASSES + EXTRA_CLASSES)
    if unknown or not kinds:
        said = f"unknown: {', '.join(unknown)}" if unknown else "no class given"
        raise argparse.ArgumentTypeError(f"{said} (the classes: {known})")
    return list(dict.fromkeys(kinds))


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The report and its table."""
    from copilot_lsp.bench.overhead.report import render
    from copilot_lsp.bench.overhead.run import run_overhead

    if args.count < 1 or args.warmup < 0:
        raise CopilotLspError("--count must be positive, --warmup not negative")
    if args.rtt_ms < 0 or args.gap_ms < 0:
        raise CopilotLspError("--rtt-ms and --gap-ms cannot be negative")
    if args.workspace is not None and not args.workspace.is_dir():
        raise CopilotLspError(f"--workspace: not a folder: {args.workspace}")
    base = args.base_checkout
    if base is not None and not (base / "server" / "copilot_lsp").is_dir():
        raise CopilotLspError(f"not a checkout with server/copilot_lsp: {base}")
    with tempfile.TemporaryDirectory(prefix="copilot-lsp-overhead-") as folder:
        report = asyncio.run(
            run_overhead(
                args.count,
                Path(folder),
                base,
                args.warmup,
                edits=args.edits,
                seed=args.seed,
                rtt_s=args.rtt_ms / 1000,
                gap_s=args.gap_ms / 1000,
                workspace=args.workspace,
            )
        )
    if args.profile is not None:
        from copilot_lsp.bench.overhead.inprocess import profile_edits

        steps = profile_edits(args.edits, args.count, args.warmup, args.seed, args.profile)
        report["profile"] = {"file": str(args.profile), "steps": steps}
    return report, render(report)
