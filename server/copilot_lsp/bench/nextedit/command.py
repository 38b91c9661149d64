"""`copilot-lsp bench nextedit`: its options, and the run from options to report folder."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from copilot_lsp.errors import CopilotLspError

DEFAULT_PROFILE = "local-cpu-suffix"
SUMMARY = "summary.json"
REPORT = "report.md"


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    nextedit: argparse.ArgumentParser = benches.add_parser(
        "nextedit",
        help="the next-edit quality suite through the real server (exact, delta chrF, quiet)",
        formatter_class=formatter_class,
    )
    nextedit.add_argument(
        "--engine-url", help="a running engine (default: start --profile's for the run)"
    )
    nextedit.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="the engine profile started for the run when no --engine-url is given",
    )
    nextedit.add_argument(
        "--format",
        help="next-edit prompt format (configs/nextedit: fenced, plain, zeta, qwen-repo); "
        "default: the one the server picks for the served model (--diagnose: fenced, the "
        "embedded model's)",
    )
    nextedit.add_argument(
        "--window",
        type=window_lines,
        metavar="ABOVE,BELOW",
        help="lines above and below the cursor's line that the model rewrites (the server's "
        "nextEditSuggestions.linesAbove, linesBelow; default: its defaults, 10,10)",
    )
    nextedit.add_argument("--limit", type=int, help="the first N scenarios only")
    nextedit.add_argument("--kinds", help="comma-separated scenario kinds (default: all)")
    nextedit.add_argument(
        "--scenarios", type=Path, help="a scenarios.json.gz (default: the suite in the package)"
    )
    nextedit.add_argument(
        "--timeout-s", type=float, default=300.0, help="longest wait for one answer"
    )
    nextedit.add_argument(
        "--diagnose",
        action="store_true",
        help="after the suite, send each scenario's rewrite request straight to the engine and "
        "record the model's answer and what the server's gates make of it",
    )
    nextedit.add_argument(
        "--report-only",
        action="store_true",
        help="redraw the report from the raw results saved in OUT without running anything",
    )
    nextedit.add_argument("--out", type=Path, required=True, help="folder for the report")
    return nextedit


def window_lines(value: str) -> tuple[int, int]:
    """`ABOVE,BELOW` as two line counts within the bounds of the settings they set
    (nextEditSuggestions.linesAbove, linesBelow)."""
    from pydantic import ValidationError

    from copilot_lsp.settings_features import NextEditSettings

    try:
        above, below = (int(part) for part in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected ABOVE,BELOW (two line counts), got {value!r}"
        ) from None
    try:
        settings = NextEditSettings(lines_above=above, lines_below=below)
    except ValidationError as error:
        bounds = "; ".join(str(e["msg"]) for e in error.errors())
        raise argparse.ArgumentTypeError(f"{value!r}: {bounds}") from None
    return settings.lines_above, settings.lines_below


def run(args: argparse.Namespace, state_dir: Path) -> str:
    """Measure (or reload), then write the report folder; returns the report's text."""
    from copilot_lsp.bench.harness import measured_or_reloaded
    from copilot_lsp.bench.nextedit.report import diagnosis_table, render
    from copilot_lsp.bench.nextedit.run import summarise

    out: Path = args.out
    data = measured_or_reloaded(out, args.report_only, lambda: _measure(args, state_dir))
    summary = summarise(data["results"])
    text = render(data, summary, diagnosis_table(data))
    (out / REPORT).write_text(text, encoding="utf-8")
    (out / SUMMARY).write_text(
        json.dumps({"run": data["run"], **summary}, indent=1) + "\n", encoding="utf-8"
    )
    return f"{text}\nreport written to {out / REPORT}"


def chosen(args: argparse.Namespace) -> tuple[list[Any], int]:
    """The scenarios asked for, and the suite's size."""
    from copilot_lsp.bench.nextedit.suite import DATA, load

    suite = load(args.scenarios or DATA)
    picked = suite
    if args.kinds:
        kinds = {k.strip() for k in args.kinds.split(",") if k.strip()}
        unknown = kinds - {s.kind for s in suite}
        if unknown:
            raise CopilotLspError(f"unknown scenario kind(s): {', '.join(sorted(unknown))}")
        picked = [s for s in picked if s.kind in kinds]
    if args.limit is not None:
        if args.limit < 1:
            raise CopilotLspError("--limit must be positive")
        picked = picked[: args.limit]
    return picked, len(suite)


def _measure(args: argparse.Namespace, state_dir: Path) -> dict[str, Any]:
    from copilot_lsp.bench.harness import started_engine
    from copilot_lsp.bench.nextedit.prompts import EMBEDDED_FORMAT
    from copilot_lsp.bench.nextedit.run import diagnose, run_suite
    from copilot_lsp.serving.profiles import load_profile

    scenarios, size = chosen(args)

    def log(message: str) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    diagnosis: list[dict[str, Any]] = []
    server_stats: dict[str, Any] = {}

    def measure(url: str | None) -> list[dict[str, Any]]:
        with tempfile.TemporaryDirectory(prefix="copilot-lsp-nextedit-") as folder:
            results = asyncio.run(
                run_suite(
                    scenarios,
                    url,
                    Path(folder),
                    prompt_format=args.format,
                    timeout_s=args.timeout_s,
                    log=log,
                    server_stats=server_stats,
                    window=args.window,
                )
            )
        if args.diagnose and url is not None:
            log("diagnosis: the rewrite requests straight to the engine")
            form = args.format or EMBEDDED_FORMAT
            diagnosis.extend(asyncio.run(diagnose(scenarios, url, form, args.window)))
        return results

    started = time.perf_counter()
    if args.engine_url:
        engine = args.engine_url
        results = measure(args.engine_url)
    else:
        engine = f"profile {args.profile}"
        with started_engine(load_profile(args.profile), state_dir=state_dir, log=log) as state:
            started = time.perf_counter()  # the engine's start is not the suite's time
            results = measure(state.url)
    command = "copilot-lsp bench nextedit" + "".join(
        f" {flag} {value}".rstrip()
        for flag, value in (
            ("--engine-url", args.engine_url),
            ("--profile", None if args.engine_url else args.profile),
            ("--format", args.format),
            ("--window", ",".join(map(str, args.window)) if args.window else None),
            ("--kinds", args.kinds),
            ("--limit", args.limit),
            ("--diagnose", "" if args.diagnose else None),
        )
        if value is not None
    )
    return {
        "run": {
            "command": command,
            "host": platform.node(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "engine": engine,
            "format": args.format,
            "window": list(args.window) if args.window else None,
            "scenarios": len(scenarios),
            "suite_size": size,
            "seconds": round(time.perf_counter() - started, 1),
        },
        "results": results,
        "diagnosis": diagnosis,
        "server_stats": server_stats,
    }
