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
    up.add_argument(
        "--allow-draft-mismatch",
        action="store_true",
        help="serve a draft head even if it was trained for another target",
    )
    actions.add_parser("down", help="stop the engine started by `engine up`")
    status = actions.add_parser("status", help="health, URL, model, speculative counters")
    status.add_argument("--json", action="store_true")
    status.add_argument(
        "--window",
        type=float,
        default=0.0,
        metavar="S",
        help="also sample /metrics S seconds apart: windowed acceptance and per position",
    )
    command = actions.add_parser("command", help="print the vLLM command of a profile")
    command.add_argument("--profile", default="local-cpu")
    actions.add_parser("profiles", help="list the profiles in configs/profiles")

    _add_draft_commands(commands)

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
    from copilot_lsp.bench.engine import command as engine_bench

    engine_bench.add_parser(benches)

    context = benches.add_parser(
        "context", help="parse and context-build latency on large real files"
    )
    context.add_argument("files", type=Path, nargs="*", help="default: large stdlib modules")
    context.add_argument("-n", "--samples", type=int, default=300)
    context.add_argument("--json", type=Path, help="write the full report here")
    quality = benches.add_parser(
        "quality", help="SAFIM Python subsets through the real server, with and without filters"
    )
    quality.add_argument("--data", type=Path, help="folder with SAFIM's *.jsonl.gz")
    quality.add_argument("--subsets", default="block,control,api")
    quality.add_argument("--limit", type=int, default=30, help="tasks per subset")
    quality.add_argument("--modes", default="pipeline,plain")
    quality.add_argument("--engine-url", help="default: the settings' engine")
    quality.add_argument("--json", type=Path, help="write the full report here")

    load = benches.add_parser(
        "load", help="replayed typing over stdio: engine requests, in-flight, latency, RSS"
    )
    load.add_argument("--duration", type=float, default=60.0, help="seconds of typing")
    load.add_argument("--rate", type=float, default=50.0, help="keystrokes per second")
    load.add_argument("--documents", type=int, default=10, help="open documents")
    load.add_argument("--max-inflight", type=int, help="completion.max_inflight for the run")
    load.add_argument("--debounce-ms", type=int, help="completion.debounce_ms for the run")
    load.add_argument("--engine-url", help="a real engine (default: the scripted one, loopback)")
    load.add_argument("--quick", action="store_true", help="10 s instead of --duration")
    load.add_argument("--json", type=Path, help="write the full report here")

    stats = commands.add_parser("stats", help="latency percentiles from the completion log")
    stats.add_argument("--log", type=Path, help="log file (default: the user's state dir)")
    stats.add_argument("--json", action="store_true")
    return parser


def _add_draft_commands(commands: Any) -> None:
    draft = commands.add_parser("draft", help="train and inspect speculative draft heads")
    actions = draft.add_subparsers(dest="action", metavar="ACTION", required=True)
    train = actions.add_parser(
        "train",
        help="train an EAGLE, EAGLE-3 or Medusa head on target features (CPU, resumable)",
    )
    train.add_argument("--method", choices=["eagle", "eagle3", "medusa"], required=True)
    train.add_argument(
        "--target", required=True, help="target model folder, or `embedded` for SmolLM2"
    )
    train.add_argument(
        "--corpus",
        nargs="+",
        default=["default"],
        help="`default` (stdlib + site-packages), `stdlib`, `site-packages` or folders",
    )
    train.add_argument("--out", type=Path, required=True, help="folder for the vLLM checkpoint")
    train.add_argument("--steps", type=int, help="optimizer steps (default 2000)")
    train.add_argument("--batch-size", type=int, help="sequences per step (default 8)")
    train.add_argument("--seq-len", type=int, help="tokens per sequence (default 256)")
    train.add_argument("--train-tokens", type=int, help="corpus tokens to train on (400000)")
    train.add_argument(
        "--skip-tokens", type=int, help="start the training windows after this many tokens"
    )
    train.add_argument("--heldout-tokens", type=int, help="held-out tokens to measure (32768)")
    train.add_argument("--lr", type=float, help="peak learning rate (default 1e-3)")
    train.add_argument(
        "--draft-steps", type=int, help="EAGLE steps unrolled / Medusa heads (default 3)"
    )
    train.add_argument(
        "--token-vocab",
        type=int,
        help="token loss over the N commonest labels; 0 = all (EAGLE-3: its draft vocabulary)",
    )
    train.add_argument(
        "--token-loss",
        choices=["greedy", "distribution"],
        help="cross-entropy to the target's greedy token (default) or to its distribution",
    )
    train.add_argument("--token-weight", type=float, help="token loss weight (default 0.2)")
    train.add_argument("--seed", type=int)
    train.add_argument("--threads", type=int, help="torch threads (default: all cores)")
    train.add_argument("--device", help="cpu (default) or cuda")
    train.add_argument("--cache-dir", type=Path, help="where target features are cached")
    train.add_argument(
        "--features", type=Path, help="train on an earlier --cache-dir's shards, not the corpus"
    )
    train.add_argument(
        "--extra-features",
        type=Path,
        nargs="+",
        help="more cached folders whose train shards join --features' (held-out: --features')",
    )
    train.add_argument(
        "--generated-share",
        type=float,
        help="share of sequences the target continues itself after --generated-prompt tokens",
    )
    train.add_argument("--generated-prompt", type=int, help="corpus tokens kept (default 64)")
    train.add_argument("--init", type=Path, help="start from this exported EAGLE head folder")
    train.add_argument(
        "--layers",
        type=int,
        help="EAGLE decoder layers (default 1); with --init a head grows, new layers start as "
        "the identity",
    )
    train.add_argument("--json", action="store_true", help="print the report as JSON")
    fingerprint = actions.add_parser("fingerprint", help="print a target model's fingerprint")
    fingerprint.add_argument("model", help="model folder, or `embedded`")
    evaluate = actions.add_parser(
        "evaluate",
        help="held-out acceptance of an exported EAGLE or EAGLE-3 head on cached features",
    )
    evaluate.add_argument("head", type=Path, help="the head's folder (as `draft train` wrote)")
    evaluate.add_argument(
        "--target", default="embedded", help="target model folder, or `embedded` (default)"
    )
    evaluate.add_argument(
        "--features", type=Path, required=True, help="a `draft train --cache-dir` folder"
    )
    evaluate.add_argument("--draft-steps", type=int, default=3)


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
        if args.command == "draft":
            return _draft(args)
        if args.command == "complete":
            return _complete(args)
        if args.command == "stats":
            return _stats(args)
        if args.command == "bench":
            return _bench(args)
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
        state = launcher.engine_up(
            load_profile(args.profile),
            port=args.port,
            log=_say,
            allow_draft_mismatch=args.allow_draft_mismatch,
        )
        print(state.url)
    elif args.action == "down":
        stopped = launcher.engine_down()
        _say(f"stopped engine pid {stopped.pid}" if stopped else "no engine was running")
    elif args.action == "status":
        report = launcher.engine_status(window_s=args.window)
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
        from copilot_lsp.engine.drafts import draft_path_for

        print(_shell_join(profile.command(model, draft_path=draft_path_for(profile, model))))
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
    window = report.get("window")
    if window:
        print(
            f"last {window['window_s']:.0f} s: acceptance {window['acceptance_rate']}, mean "
            f"accepted length {window['mean_accepted_length']}, per position "
            f"{window['per_position']} over {window['drafts']} drafts"
        )


def _target_dir(spec: str) -> Path:
    if spec == "embedded":
        from copilot_lsp.engine.prepare import prepare_embedded_model

        return prepare_embedded_model("bfloat16", log=_say)
    return Path(spec)


def _draft(args: argparse.Namespace) -> int:
    if args.action == "fingerprint":
        from copilot_lsp.draft.fingerprint import target_fingerprint

        print(target_fingerprint(_target_dir(args.model)))
        return 0
    if args.action == "evaluate":
        from copilot_lsp.draft.train import evaluate_head

        result = evaluate_head(_target_dir(args.target), args.head, args.features, args.draft_steps)
        print(json.dumps(result, indent=2))
        return 0
    from copilot_lsp.draft.render import render_report
    from copilot_lsp.draft.train import TrainOptions, run, with_overrides

    options = with_overrides(
        TrainOptions(method=args.method, target=_target_dir(args.target), out=args.out),
        corpus=tuple(args.corpus),
        steps=args.steps,
        batch_size=args.batch_size,
        seq_len=args.seq_len,
        train_tokens=args.train_tokens,
        skip_tokens=args.skip_tokens,
        heldout_tokens=args.heldout_tokens,
        lr=args.lr,
        draft_steps=args.draft_steps,
        token_vocab=args.token_vocab,
        token_loss=args.token_loss,
        token_weight=args.token_weight,
        seed=args.seed,
        threads=args.threads,
        device=args.device,
        cache_dir=args.cache_dir,
        features=args.features,
        extra_features=tuple(args.extra_features or ()),
        generated_share=args.generated_share,
        generated_prompt=args.generated_prompt,
        init=args.init,
        layers=args.layers,
    )
    report = run(options, log=_say)
    print(json.dumps(report, indent=2) if args.json else render_report(report))
    return 0


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
    if args.bench == "engine":
        from copilot_lsp.bench.engine import command as engine_bench

        print(engine_bench.run(args))
        return 0
    if args.bench == "context":
        return _bench_context(args)
    if args.bench == "quality":
        return _bench_quality(args)
    if args.bench == "load":
        return _bench_load(args)
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


def _bench_load(args: argparse.Namespace) -> int:
    from copilot_lsp.bench.load import render, run_load, write_report

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
    print(render(result))
    if args.json:
        write_report(result, args.json)
        print(f"report written to {args.json}")
    return 0


def _bench_context(args: argparse.Namespace) -> int:
    from copilot_lsp.bench import context

    files = args.files or context.default_files()
    missing = [str(path) for path in files if not path.is_file()]
    if missing or not files:
        raise CopilotLspError(f"no such file: {', '.join(missing) or 'no files given'}")
    report = context.run_context_bench(files, args.samples)
    print(context.render(report))
    if args.json:
        context.write(report, args.json)
        print(f"report written to {args.json}")
    return 0


def _bench_quality(args: argparse.Namespace) -> int:
    import tempfile

    from copilot_lsp.bench import quality
    from copilot_lsp.bench.safim import SUBSETS, find_data_dir

    data = args.data or find_data_dir(Path.cwd())
    if data is None or not data.is_dir():
        raise CopilotLspError("SAFIM data not found: pass --data DIR (shared/eval/safim)")
    subsets = [s for s in args.subsets.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    unknown = [s for s in subsets if s not in SUBSETS] + [
        m for m in modes if m not in quality.MODES
    ]
    if unknown:
        raise CopilotLspError(f"unknown subset or mode: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="copilot-lsp-safim-") as folder:
        report = asyncio.run(
            quality.run_quality_bench(
                data, subsets, args.limit, modes, args.engine_url, Path(folder)
            )
        )
    print(quality.render(report))
    if args.json:
        quality.write(report, args.json)
        print(f"report written to {args.json}")
    return 0
