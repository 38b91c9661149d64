"""`copilot-lsp`: the language server (`--stdio`) and the commands around it.

Nothing but JSON-RPC goes to stdout while serving; logs go to stderr or `--log-file`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from copilot_lsp import __version__
from copilot_lsp.errors import CopilotLspError

logger = logging.getLogger("copilot_lsp")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="copilot-lsp",
        description="Self-hosted inline code completions over LSP, served by vLLM.",
    )
    parser.add_argument("--version", action="version", version=f"copilot-lsp {__version__}")
    parser.add_argument("--stdio", action="store_true", help="serve LSP over stdin/stdout")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="-v info, -vv debug")
    parser.add_argument("--log-file", type=Path, help="write logs here instead of stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    engine = commands.add_parser("engine", help="manage the embedded vLLM engine")
    actions = engine.add_subparsers(dest="action", metavar="ACTION", required=True)
    prepare = actions.add_parser("prepare", help="write the embedded model into the cache")
    prepare.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    prepare.add_argument("--force", action="store_true", help="rebuild even if present")
    up = actions.add_parser("up", help="start the engine and wait until it is healthy")
    up.add_argument("--profile", default="local-cpu", help="name in configs/profiles or a path")
    up.add_argument("--port", type=int, help="override the profile's port")
    actions.add_parser("down", help="stop the engine started by `engine up`")
    status = actions.add_parser("status", help="health, URL, model, speculative counters")
    status.add_argument("--json", action="store_true")
    command = actions.add_parser("command", help="print the vLLM command of a profile")
    command.add_argument("--profile", default="local-cpu")
    actions.add_parser("profiles", help="list the profiles in configs/profiles")

    complete = commands.add_parser(
        "complete", help="one inline completion through the real server over stdio"
    )
    complete.add_argument("file", type=Path)
    complete.add_argument("--line", type=int, required=True, help="1-based line")
    complete.add_argument("--col", type=int, required=True, help="1-based column (UTF-16)")
    complete.add_argument("--json", action="store_true")
    complete.add_argument("--timeout", type=float, default=300.0, help="seconds")

    bench = commands.add_parser("bench", help="benchmarks (tables + JSON)")
    benches = bench.add_subparsers(dest="bench", metavar="BENCH", required=True)
    latency = benches.add_parser(
        "latency", help="N completions at one cursor through the real server"
    )
    latency.add_argument("file", type=Path)
    latency.add_argument("--line", type=int, required=True, help="1-based line")
    latency.add_argument("--col", type=int, required=True, help="1-based column (UTF-16)")
    latency.add_argument("-n", "--count", type=int, default=20)
    latency.add_argument("--json", type=Path, help="write the full report here")

    stats = commands.add_parser("stats", help="latency percentiles from the completion log")
    stats.add_argument("--log", type=Path, help="log file (default: the user's state dir)")
    stats.add_argument("--json", action="store_true")
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
        if args.command == "engine":
            return _engine(args)
        if args.command == "complete":
            return _complete(args)
        if args.command == "stats":
            return _stats(args)
        if args.command == "bench":
            return _bench(args)
    except CopilotLspError as error:
        print(f"copilot-lsp: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    raise AssertionError(f"unhandled command {args.command}")


def _serve() -> int:
    from copilot_lsp.lsp.server import server

    server.start_io()
    return 0


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _engine(args: argparse.Namespace) -> int:
    from copilot_lsp.engine import launcher
    from copilot_lsp.engine.profiles import available_profiles, load_profile

    if args.action == "prepare":
        from copilot_lsp.engine.prepare import prepare_embedded_model

        print(prepare_embedded_model(args.dtype, force=args.force, log=_say))
    elif args.action == "up":
        state = launcher.engine_up(load_profile(args.profile), port=args.port, log=_say)
        print(state.url)
    elif args.action == "down":
        stopped = launcher.engine_down()
        _say(f"stopped engine pid {stopped.pid}" if stopped else "no engine was running")
    elif args.action == "status":
        report = launcher.engine_status()
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            _print_status(report)
        return 0 if report["healthy"] else 3
    elif args.action == "command":
        profile = load_profile(args.profile)
        model = profile.model.source
        if profile.embedded_dtype is not None:
            from copilot_lsp.engine.prepare import model_dir

            model = str(model_dir(profile.embedded_dtype))  # type: ignore[arg-type]
        print(_shell_join(profile.command(model)))
    elif args.action == "profiles":
        print("\n".join(available_profiles()))
    return 0


def _print_status(report: dict[str, Any]) -> None:
    if report["url"] is None:
        print("engine: not started (run `copilot-lsp engine up`)")
        return
    print(f"engine:  {'healthy' if report['healthy'] else 'NOT healthy'} at {report['url']}")
    print(
        f"profile: {report.get('profile')}  model: {report.get('model')}  pid: {report.get('pid')}"
    )
    if "spec_decode" in report:
        print(
            f"running requests: {report['requests_running']}  generated tokens: "
            f"{report['generation_tokens']}"
        )
        spec = report["spec_decode"]
        if spec["drafts"]:
            print(
                f"speculative: acceptance {spec['acceptance_rate']}, mean accepted length "
                f"{spec['mean_accepted_length']}, per position {spec['accepted_per_position']}"
            )
        else:
            print("speculative: no drafts (plain decoding)")


def _shell_join(argv: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(part) for part in argv)


def _complete(args: argparse.Namespace) -> int:
    from copilot_lsp.lsp.oneshot import complete_once
    from copilot_lsp.telemetry.timeline import STAGES

    if args.line < 1 or args.col < 1:
        raise CopilotLspError("--line and --col are 1-based")
    if not args.file.is_file():
        raise CopilotLspError(f"no such file: {args.file}")
    text = args.file.read_text(encoding="utf-8")
    result = asyncio.run(
        complete_once(
            args.file.absolute(), text, args.line - 1, args.col - 1, timeout_s=args.timeout
        )
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0 if result["text"] else 2
    print(f"--- suggestion at {args.file}:{args.line}:{args.col} ---")
    print(result["text"] if result["text"] else "(no suggestion)")
    print("---")
    timeline = result.get("timeline") or {}
    ms = timeline.get("ms", {})
    print(
        f"completion {timeline.get('id')}  mode {timeline.get('mode')}  outcome "
        f"{timeline.get('outcome')}  tokens {timeline.get('tokens')}"
    )
    for stage in STAGES:
        if stage in ms:
            print(f"  {stage:<14}{ms[stage]:>10.1f} ms")
    print(f"  {'round trip':<14}{result['round_trip_ms']:>10.1f} ms (client side)")
    if timeline.get("error"):
        print(f"error: {timeline['error']}")
    return 0 if result["text"] else 2


def _stats(args: argparse.Namespace) -> int:
    from copilot_lsp.telemetry.log import default_log_path, read_log
    from copilot_lsp.telemetry.stats import format_table, outcome_counts, stage_table

    path = args.log or default_log_path()
    records = list(read_log(path))
    table = stage_table(records)
    if args.json:
        print(json.dumps({"log": str(path), "stages": table, "outcomes": outcome_counts(records)}))
        return 0
    print(f"{len(records)} completions in {path}")
    print(format_table(table))
    counts = outcome_counts(records)
    if counts:
        print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from copilot_lsp.bench.latency import render, run_latency_bench, write_report

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
    print(render(report))
    if args.json:
        write_report(report, args.json)
        print(f"report written to {args.json}")
    return 0
