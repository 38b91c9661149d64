"""`copilot-lsp bench replay`: its options, and the run from options to report folder."""

from __future__ import annotations

import argparse
import json
import math
import tomllib
from pathlib import Path
from typing import Any

from copilot_lsp.errors import ConfigError, CopilotLspError
from copilot_lsp.serving.profiles import profile_label, profile_labels

DEFAULT_PROFILES = (
    "local-cpu-baseline,local-cpu-ngram,local-cpu-suffix,"
    "local-cpu,local-cpu-eagle3,local-cpu-medusa"
)
BASE = "@base"
"""A profile named `NAME@base` runs with the server of --base-checkout."""
SUMMARY = "summary.json"
REPORT = "report.md"


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    replay: argparse.ArgumentParser = benches.add_parser(
        "replay",
        help="editing sessions typed into the real server, engine profiles side by side",
        formatter_class=formatter_class,
    )
    replay.add_argument(
        "--profiles",
        default=DEFAULT_PROFILES,
        help="comma-separated engine profiles (or `scripted`); the first is the reference; "
        f"NAME{BASE} runs NAME with the server of --base-checkout",
    )
    replay.add_argument(
        "--base-checkout",
        type=Path,
        help=f"another checkout (a folder with server/) whose server runs the NAME{BASE} arms",
    )
    replay.add_argument(
        "--settings",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a server-settings variant (initializationOptions on top of today's), run on "
        "every profile beside today's settings (repeatable)",
    )
    replay.add_argument(
        "--arms",
        type=Path,
        help="a TOML file of [[arm]] tables (label, profile, settings, speculative, checkout) "
        "instead of --profiles/--settings",
    )
    replay.add_argument("--sessions", type=int, default=2, help="sessions of each kind")
    replay.add_argument("--kinds", default="write,hole,edit", help="session kinds")
    replay.add_argument("--repeats", type=int, default=2)
    replay.add_argument(
        "--workspace",
        choices=("none", "package"),
        default="none",
        help="`package`: sessions from files of small packages only, each package copied into "
        "the workspace and indexed before the sessions start, so prompts carry cross-file "
        "context (with --settings, e.g. the prefix warm-up on and off side by side)",
    )
    replay.add_argument("--seed", type=int, default=17)
    replay.add_argument(
        "--pause-s",
        type=float,
        default=1.0,
        help="median thinking pause of the typist (seconds; 0.3-4 s drawn around it)",
    )
    replay.add_argument(
        "--corpus",
        action="append",
        default=[],
        help="corpus roots as `draft train --corpus` takes them (default: stdlib); only its "
        "held-out files are used",
    )
    replay.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="PROFILE=URL",
        help="use this running engine for PROFILE instead of starting one (repeatable)",
    )
    replay.add_argument(
        "--report-only",
        action="store_true",
        help="regenerate the report and plots from the raw results saved in OUT "
        "(results.json.gz, or the results.json of an older run) without running anything",
    )
    replay.add_argument("--out", type=Path, required=True, help="folder for the report")
    return replay


def arms_from_args(args: argparse.Namespace) -> list[Any]:
    from copilot_lsp.bench.replay.run import Arm

    if args.arms is not None:
        return _arms_file(args.arms)
    profiles = [name.strip() for name in args.profiles.split(",") if name.strip()]
    if not profiles:
        raise CopilotLspError("--profiles names no profile")
    variants: list[tuple[str, dict[str, Any]]] = [("", {})]
    for item in args.settings:
        name, _, text = item.partition("=")
        try:
            settings = json.loads(text)
        except json.JSONDecodeError as error:
            raise CopilotLspError(f"--settings {name}: not JSON: {error}") from None
        if not name or not isinstance(settings, dict):
            raise CopilotLspError(f"--settings wants NAME=JSON-object, got {item!r}")
        variants.append((name, settings))
    base = getattr(args, "base_checkout", None)
    checkouts = {profile: _checkout(profile, base) for profile in profiles}
    labels = profile_labels([profile.removesuffix(BASE) for profile in profiles])
    arms = []
    for profile in dict.fromkeys(profiles):
        name_of_profile = profile.removesuffix(BASE)
        label = labels[name_of_profile] + (BASE if checkouts[profile] else "")
        for name, settings in variants:
            arms.append(
                Arm(
                    f"{label}/{name}" if name else label,
                    name_of_profile,
                    settings,
                    checkout=checkouts[profile],
                )
            )
    return arms


def _checkout(profile: str, base: Path | None) -> str | None:
    if not profile.endswith(BASE):
        return None
    if base is None:
        raise CopilotLspError(f"{profile} needs --base-checkout DIR (a checkout with server/)")
    return str(_server_checkout(base))


def _server_checkout(folder: Path) -> Path:
    if not (folder / "server" / "copilot_lsp" / "__main__.py").is_file():
        raise CopilotLspError(f"{folder} is not a copilot-lsp checkout (no server/copilot_lsp)")
    return folder.resolve()


def _arms_file(path: Path) -> list[Any]:
    from copilot_lsp.bench.replay.run import Arm

    try:
        tables = tomllib.loads(path.read_text(encoding="utf-8")).get("arm", [])
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    arms = []
    for index, table in enumerate(tables):
        unknown = set(table) - {"label", "profile", "settings", "speculative", "checkout"}
        if unknown or "profile" not in table:
            raise ConfigError(
                f"{path}: arm {index + 1} needs `profile` and may have label, settings, "
                f"speculative, checkout (got {sorted(table)})"
            )
        checkout = table.get("checkout")
        if checkout is not None:
            # Relative to the arms file, like a profile path in it would be read by a person.
            checkout = str(_server_checkout(path.parent / str(checkout)))
        arms.append(
            Arm(
                str(table.get("label", profile_label(str(table["profile"])))),
                str(table["profile"]),
                dict(table.get("settings", {})),
                dict(table.get("speculative", {})),
                checkout,
            )
        )
    if not arms:
        raise ConfigError(f"{path} has no [[arm]] tables")
    return arms


def run(args: argparse.Namespace, state_dir: Path) -> str:
    """Measure (or reload), then write the report folder; returns the report's text. The
    engines started record their state in `state_dir`."""
    from copilot_lsp.bench.harness import measured_or_reloaded
    from copilot_lsp.bench.replay import figures, report

    out: Path = args.out
    data = measured_or_reloaded(out, args.report_only, lambda: _measure(args, state_dir))
    summary = figures.summarise(data)
    names = report.draw(data, summary, out)
    text = report.render(data, summary, names)
    (out / REPORT).write_text(text, encoding="utf-8")
    (out / SUMMARY).write_text(json.dumps(_finite(summary), indent=1) + "\n", encoding="utf-8")
    return f"{text}\nreport written to {out / REPORT}"


def _measure(args: argparse.Namespace, state_dir: Path) -> dict[str, Any]:
    from copilot_lsp.bench.replay.run import Plan, run_replay
    from copilot_lsp.bench.replay.sessions import heldout_files, pick_sessions
    from copilot_lsp.client.replay.schedule import TypingModel
    from copilot_lsp.client.replay.session import KINDS

    if args.sessions < 1 or args.repeats < 1:
        raise CopilotLspError("--sessions and --repeats must be positive")
    kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise CopilotLspError(f"unknown session kind(s) {unknown}; known: {', '.join(KINDS)}")
    arms = arms_from_args(args)
    endpoints = {}
    for item in args.endpoint:
        name, _, url = item.partition("=")
        if not url:
            raise CopilotLspError(f"--endpoint wants PROFILE=URL, got {item!r}")
        endpoints[name] = url
    files = heldout_files(args.corpus or ["stdlib"])
    packaged = args.workspace == "package"
    sessions = pick_sessions(files, args.sessions, args.seed, kinds, packaged=packaged)
    if not 0.3 <= args.pause_s <= 4.0:
        raise CopilotLspError("--pause-s must lie in [0.3, 4]")
    plan = Plan(
        sessions,
        repeats=args.repeats,
        seed=args.seed,
        typing=TypingModel(pause_s=args.pause_s),
        workspace=packaged,
    )
    return run_replay(arms, plan, state_dir=state_dir, endpoints=endpoints)


def _finite(value: Any) -> Any:
    """JSON has no Infinity: a ghost that never came is written as null."""
    if isinstance(value, float) and math.isinf(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value
