"""`copilot-lsp engine …`: prepare the embedded model, start, stop and inspect vLLM
(`engine status`: cli/engine_status.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from copilot_lsp.cli.output import HelpFormatter, say
from copilot_lsp.serving.profiles import port_number

DEFAULT_PROFILE = "local-cpu-suffix"
"""The embedded default: suffix decoding won both the replayed editing sessions and the
single-stream decoding benchmark on the 2-core development machine (docs/benchmarks/replay/)."""
FALLBACK_PROFILE = "local-cpu"
"""The default where suffix decoding's extension is not built: EAGLE with the shipped head."""


def add_parser(commands: Any) -> None:
    engine = commands.add_parser(
        "engine", help="manage the embedded vLLM engine", formatter_class=HelpFormatter
    )
    actions = engine.add_subparsers(dest="action", metavar="ACTION", required=True)
    prepare = actions.add_parser(
        "prepare", help="write the embedded model into the cache", formatter_class=HelpFormatter
    )
    prepare.add_argument(
        "--dtype",
        choices=["auto", "bfloat16", "float32"],
        default="auto",
        help="auto: bfloat16 where this CPU computes in it natively, else float32 "
        "(what the local-cpu profiles serve)",
    )
    prepare.add_argument("--force", action="store_true", help="rebuild even if present")
    up = actions.add_parser(
        "up", help="start the engine and wait until it is healthy", formatter_class=HelpFormatter
    )
    up.add_argument(
        "--profile",
        help=f"name in configs/profiles or a path (default: {DEFAULT_PROFILE}; "
        f"{FALLBACK_PROFILE} where suffix decoding is not installed)",
    )
    up.add_argument("--port", type=port_number, help="override the profile's port (1-65535)")
    up.add_argument(
        "--allow-draft-mismatch",
        action="store_true",
        help="serve a draft head even if it was trained for another target",
    )
    actions.add_parser(
        "down", help="stop the engine started by `engine up`", formatter_class=HelpFormatter
    )
    status = actions.add_parser(
        "status",
        help="the engine the server would use: where from, health, model, prompt family, "
        "speculative counters",
        description="The engine the server would complete with (engine.url from the settings "
        "file or COPILOT_LSP_ENGINE_URL, else the one `engine up` started, else the default), "
        "whether `engine up` started it, whether it answers, what it serves, the prompt "
        "family the server would use for it and its speculative-decoding counters. Exit "
        "status 0 when it answers, 3 when not.",
        formatter_class=HelpFormatter,
    )
    status.add_argument("--json", action="store_true", help="print JSON on stdout")
    status.add_argument(
        "--window",
        type=float,
        default=0.0,
        metavar="S",
        help="also sample /metrics S seconds apart: windowed acceptance and per position",
    )
    command = actions.add_parser(
        "command",
        help="print the vLLM command of a profile (`vllm serve …` for a GPU box)",
        formatter_class=HelpFormatter,
    )
    command.add_argument("--profile", help=f"default: {DEFAULT_PROFILE}")
    actions.add_parser(
        "profiles", help="list the profiles in configs/profiles", formatter_class=HelpFormatter
    )


def run(args: argparse.Namespace) -> int:
    from copilot_lsp.serving import launcher
    from copilot_lsp.serving.profiles import available_profiles, load_profile

    if args.action == "prepare":
        from copilot_lsp.serving.host import this_machine_embedded_dtype
        from copilot_lsp.serving.prepare import prepare_embedded_model

        dtype = this_machine_embedded_dtype() if args.dtype == "auto" else args.dtype
        print(prepare_embedded_model(dtype, force=args.force, log=say))
    elif args.action == "up":
        state = launcher.engine_up(
            load_profile(args.profile or default_profile()),
            port=args.port,
            log=say,
            allow_draft_mismatch=args.allow_draft_mismatch,
        )
        print(state.url)
    elif args.action == "down":
        stopped = launcher.engine_down()
        say(f"stopped engine pid {stopped.pid}" if stopped else "no engine was running")
    elif args.action == "status":
        from copilot_lsp.cli.engine_status import print_status, status_report

        report = status_report(window_s=args.window)
        for message in report["messages"]:
            say(f"copilot-lsp: invalid settings: {message}")
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print_status(report)
        return 0 if report["healthy"] else 3
    elif args.action == "command":
        from copilot_lsp.serving.vllm_command import command_line

        print(command_line(load_profile(args.profile or DEFAULT_PROFILE)))
    elif args.action == "profiles":
        print("\n".join(available_profiles()))
    return 0


def default_profile() -> str:
    """DEFAULT_PROFILE, or FALLBACK_PROFILE (saying why) where suffix decoding is missing."""
    from copilot_lsp.serving.suffix import suffix_decoding_installed

    if suffix_decoding_installed():
        return DEFAULT_PROFILE
    say(
        f"suffix decoding is not installed here (`make setup` builds it; "
        f"`copilot-lsp engine up --profile {DEFAULT_PROFILE}` says how): "
        f"starting {FALLBACK_PROFILE} (EAGLE) instead"
    )
    return FALLBACK_PROFILE
