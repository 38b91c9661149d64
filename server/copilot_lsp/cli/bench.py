"""`copilot-lsp bench …`: the benchmarks; each prints a table (or with `--json` its JSON report)
and can write the JSON report (`--out PATH`)."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from copilot_lsp.bench.engine import command as engine_bench
from copilot_lsp.bench.replay import command as replay
from copilot_lsp.cli.output import HelpFormatter, add_report_options, emit_report
from copilot_lsp.errors import CopilotLspError


def add_parser(commands: Any) -> None:
    bench = commands.add_parser(
        "bench", help="benchmarks (tables + JSON)", formatter_class=HelpFormatter
    )
    benches = bench.add_subparsers(dest="bench", metavar="BENCH", required=True)
    latency = benches.add_parser(
        "latency",
        help="N completions at one cursor through the real server",
        formatter_class=HelpFormatter,
    )
    latency.add_argument("file", type=Path)
    latency.add_argument("--line", type=int, required=True, help="1-based line")
    latency.add_argument("--col", type=int, required=True, help="1-based column (UTF-16)")
    latency.add_argument("-n", "--count", type=int, default=20)
    add_report_options(latency)
    engine_bench.add_parser(benches, HelpFormatter)
    replay.add_parser(benches)

    context = benches.add_parser(
        "context",
        help="parse and context-build latency on large real files",
        formatter_class=HelpFormatter,
    )
    context.add_argument("files", type=Path, nargs="*", help="default: large stdlib modules")
    context.add_argument("-n", "--samples", type=int, default=300)
    add_report_options(context)
    quality = benches.add_parser(
        "quality",
        help="SAFIM Python subsets through the real server, with and without filters",
        formatter_class=HelpFormatter,
    )
    quality.add_argument("--data", type=Path, help="folder with SAFIM's *.jsonl.gz")
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
    add_report_options(quality)

    overhead = benches.add_parser(
        "overhead",
        help="the server's own cost per completion (scripted engine, 5,000-line file, edits)",
        formatter_class=HelpFormatter,
    )
    overhead.add_argument("-n", "--count", type=int, default=400, help="measured rounds")
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
    add_report_options(overhead)

    load = benches.add_parser(
        "load",
        help="replayed typing over stdio: engine requests, in-flight, latency, RSS",
        formatter_class=HelpFormatter,
    )
    load.add_argument("--duration", type=float, default=60.0, help="seconds of typing")
    load.add_argument("--rate", type=float, default=50.0, help="keystrokes per second")
    load.add_argument("--documents", type=int, default=10, help="open documents")
    load.add_argument("--max-inflight", type=int, help="completion.max_inflight for the run")
    load.add_argument("--debounce-ms", type=int, help="completion.debounce_ms for the run")
    load.add_argument("--engine-url", help="a real engine (default: the scripted one, loopback)")
    load.add_argument("--quick", action="store_true", help="10 s instead of --duration")
    add_report_options(load)


def run(args: argparse.Namespace) -> int:
    if args.bench in ("engine", "replay"):
        from copilot_lsp.bench.harness import state_folder

        command = engine_bench if args.bench == "engine" else replay
        # The engines these benchmarks start are recorded here, never in the user's state.
        with state_folder() as state_dir:
            print(command.run(args, state_dir))
        return 0
    if args.bench == "context":
        return _context(args)
    if args.bench == "quality":
        return _quality(args)
    if args.bench == "load":
        return _load(args)
    if args.bench == "overhead":
        return _overhead(args)
    return _latency(args)


def _latency(args: argparse.Namespace) -> int:
    from copilot_lsp.bench.latency import render, run_latency_bench

    if args.line < 1 or args.col < 1 or args.count < 1:
        raise CopilotLspError("--line, --col and --count must be positive")
    if not args.file.is_file():
        raise CopilotLspError(f"no such file: {args.file}")
    report = asyncio.run(
        run_latency_bench(
            args.file.absolute(),
            args.file.read_text(encoding="utf-8"),
            args.line - 1,
            args.col - 1,
            args.count,
        )
    )
    emit_report(args, report, render(report))
    return 0


def _load(args: argparse.Namespace) -> int:
    from copilot_lsp.bench.load import render, run_load

    if args.duration <= 0 or args.rate <= 0 or args.documents < 1:
        raise CopilotLspError("--duration, --rate and --documents must be positive")
    completion: dict[str, Any] = {}
    if args.max_inflight is not None:
        completion["maxInflight"] = args.max_inflight
    if args.debounce_ms is not None:
        completion["debounceMs"] = args.debounce_ms
    options: dict[str, Any] = {"telemetry": {"enableLog": False}}
    if completion:
        options["completion"] = completion
    result = asyncio.run(
        run_load(
            duration_s=10.0 if args.quick else args.duration,
            rate=args.rate,
            documents=args.documents,
            engine_url=args.engine_url,
            options=options,
        )
    )
    emit_report(args, result, render(result))
    return 0


def _overhead(args: argparse.Namespace) -> int:
    from copilot_lsp.bench import overhead

    if args.count < 1:
        raise CopilotLspError("--count must be positive")
    if args.rtt_ms < 0 or args.gap_ms < 0:
        raise CopilotLspError("--rtt-ms and --gap-ms cannot be negative")
    base = args.base_checkout
    if base is not None and not (base / "server" / "copilot_lsp").is_dir():
        raise CopilotLspError(f"not a checkout with server/copilot_lsp: {base}")
    with tempfile.TemporaryDirectory(prefix="copilot-lsp-overhead-") as folder:
        report = asyncio.run(
            overhead.run_overhead(
                args.count, Path(folder), base, rtt_s=args.rtt_ms / 1000, gap_s=args.gap_ms / 1000
            )
        )
    emit_report(args, report, overhead.render(report))
    written = args.out or (Path(args.json) if isinstance(args.json, str) else None)
    if written is not None:
        overhead.write_markdown(report, written)
    return 0


def _context(args: argparse.Namespace) -> int:
    from copilot_lsp.bench import context

    files = args.files or context.default_files()
    missing = [str(path) for path in files if not path.is_file()]
    if missing or not files:
        raise CopilotLspError(f"no such file: {', '.join(missing) or 'no files given'}")
    report = context.run_context_bench(files, args.samples)
    emit_report(args, report, context.render(report))
    return 0


def _quality(args: argparse.Namespace) -> int:
    from copilot_lsp.bench import quality
    from copilot_lsp.bench.safim import DERIVED, SUBSETS, find_data_dir

    data = args.data or find_data_dir(Path.cwd())
    if data is None or not data.is_dir():
        raise CopilotLspError("SAFIM data not found: pass --data DIR (shared/eval/safim)")
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
    emit_report(args, report, quality.render(report))
    return 0
