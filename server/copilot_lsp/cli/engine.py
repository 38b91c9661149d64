"""`copilot-lsp engine …`: prepare the embedded model, start, stop and inspect vLLM."""

from __future__ import annotations

import argparse
import json
import shlex
from typing import Any

from copilot_lsp.cli.output import HelpFormatter, say

DEFAULT_PROFILE = "local-cpu"


def add_parser(commands: Any) -> None:
    engine = commands.add_parser(
        "engine", help="manage the embedded vLLM engine", formatter_class=HelpFormatter
    )
    actions = engine.add_subparsers(dest="action", metavar="ACTION", required=True)
    prepare = actions.add_parser(
        "prepare", help="write the embedded model into the cache", formatter_class=HelpFormatter
    )
    prepare.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    prepare.add_argument("--force", action="store_true", help="rebuild even if present")
    up = actions.add_parser(
        "up", help="start the engine and wait until it is healthy", formatter_class=HelpFormatter
    )
    up.add_argument("--profile", default=DEFAULT_PROFILE, help="name in configs/profiles or a path")
    up.add_argument("--port", type=int, help="override the profile's port")
    up.add_argument(
        "--allow-draft-mismatch",
        action="store_true",
        help="serve a draft head even if it was trained for another target",
    )
    actions.add_parser(
        "down", help="stop the engine started by `engine up`", formatter_class=HelpFormatter
    )
    status = actions.add_parser(
        "status", help="health, URL, model, speculative counters", formatter_class=HelpFormatter
    )
    status.add_argument("--json", action="store_true")
    status.add_argument(
        "--window",
        type=float,
        default=0.0,
        metavar="S",
        help="also sample /metrics S seconds apart: windowed acceptance and per position",
    )
    command = actions.add_parser(
        "command", help="print the vLLM command of a profile", formatter_class=HelpFormatter
    )
    command.add_argument("--profile", default=DEFAULT_PROFILE)
    actions.add_parser(
        "profiles", help="list the profiles in configs/profiles", formatter_class=HelpFormatter
    )


def run(args: argparse.Namespace) -> int:
    from copilot_lsp.serving import launcher
    from copilot_lsp.serving.profiles import available_profiles, load_profile

    if args.action == "prepare":
        from copilot_lsp.serving.prepare import prepare_embedded_model

        print(prepare_embedded_model(args.dtype, force=args.force, log=say))
    elif args.action == "up":
        state = launcher.engine_up(
            load_profile(args.profile),
            port=args.port,
            log=say,
            allow_draft_mismatch=args.allow_draft_mismatch,
        )
        print(state.url)
    elif args.action == "down":
        stopped = launcher.engine_down()
        say(f"stopped engine pid {stopped.pid}" if stopped else "no engine was running")
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
            from copilot_lsp.models import model_dir

            model = str(model_dir(profile.embedded_dtype))  # type: ignore[arg-type]
        from copilot_lsp.serving.drafts import draft_path_for

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


def _shell_join(argv: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in argv)
