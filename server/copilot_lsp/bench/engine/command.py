"""`copilot-lsp bench engine`: its options, and the run from options to report folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from copilot_lsp.errors import CopilotLspError
from copilot_lsp.serving.profiles import port_number, profile_labels

DEFAULT_PROFILES = "local-cpu-baseline,local-cpu,local-cpu-medusa,local-cpu-ngram"
REPORT = "report.md"
ROOFLINE = "roofline.md"
SUMMARY = "summary.json"


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    engine: argparse.ArgumentParser = benches.add_parser(
        "engine",
        help="EAGLE vs Medusa vs n-gram vs plain: tokens/s, latency, acceptance; report + plots",
        formatter_class=formatter_class,
    )
    engine.add_argument(
        "--profiles", default=DEFAULT_PROFILES, help="comma-separated; plain decoding among them"
    )
    engine.add_argument("--concurrency", default="1,4,16,64", help="comma-separated levels")
    engine.add_argument("--temperature", default="0,0.7,1.3", help="comma-separated (at conc. 1)")
    engine.add_argument(
        "--prompts",
        default="flat,nested,longform",
        help="prompt sets: flat, nested, longform, nextedit (the next-edit suite's rewrites)",
    )
    engine.add_argument("--per-set", type=int, default=4, help="prompts per set")
    engine.add_argument("--repeats", type=int, default=3)
    engine.add_argument("--max-tokens", type=int, default=64)
    engine.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="PROFILE=URL",
        help="use this running engine for PROFILE instead of starting one (repeatable)",
    )
    engine.add_argument(
        "--port", type=port_number, default=8260, help="port for the engines started (1-65535)"
    )
    engine.add_argument(
        "--dtype",
        choices=["bfloat16", "float32"],
        help="serve the embedded model in this dtype (float32: greedy outputs compare exactly)",
    )
    engine.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run (< 5 min here): conc. 1,4, temperature 0, 2 prompts per set, 1 repeat",
    )
    engine.add_argument(
        "--report-only",
        action="store_true",
        help="regenerate the report and plots from the raw results saved in OUT "
        "(results.json.gz, or the results.json of an older run) without running anything",
    )
    engine.add_argument("--out", type=Path, required=True, help="folder for the report")
    return engine


def _floats(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CopilotLspError(f"not a comma-separated list of numbers: {text!r}") from None


def _ints(text: str) -> list[int]:
    values = _floats(text)
    if any(v < 1 or v != int(v) for v in values):
        raise CopilotLspError(f"concurrency levels must be positive integers: {text!r}")
    return sorted({int(v) for v in values})


def run(args: argparse.Namespace, state_dir: Path) -> str:
    """Measure (or reload), then write the report folder; returns the report's text. The
    engines started record their state in `state_dir`."""
    from copilot_lsp.bench.engine import claims, markdown, plots, report, roofline
    from copilot_lsp.bench.harness import measured_or_reloaded

    out: Path = args.out
    data = measured_or_reloaded(out, args.report_only, lambda: _measure(args, state_dir))
    if args.report_only:  # saved under the labels of its day
        data = report.relabel(data, profile_labels(list(data["profiles"])))
    summary = report.summarise(data)
    answers = claims.answer_all(summary)
    names = plots.draw(data, summary, out)
    text = markdown.render(data, summary, answers, names)
    (out / REPORT).write_text(text, encoding="utf-8")
    (out / ROOFLINE).write_text(roofline.render(summary), encoding="utf-8")
    (out / SUMMARY).write_text(
        json.dumps({**summary, "claims": [a.as_dict() for a in answers]}, indent=1) + "\n",
        encoding="utf-8",
    )
    return f"{text}\nreport written to {out / REPORT}"


def _measure(args: argparse.Namespace, state_dir: Path) -> dict[str, Any]:
    from copilot_lsp.bench.engine.prompts import SETS, prompt_sets
    from copilot_lsp.bench.engine.run import run_benchmark
    from copilot_lsp.bench.engine.runner import Plan

    profiles = [name.strip() for name in args.profiles.split(",") if name.strip()]
    sets = [name.strip() for name in args.prompts.split(",") if name.strip()]
    unknown = sorted(set(sets) - set(SETS))
    if unknown or not sets:
        raise CopilotLspError(f"unknown prompt set(s) {unknown}; known: {', '.join(SETS)}")
    endpoints = {}
    for item in args.endpoint:
        name, _, url = item.partition("=")
        if not url:
            raise CopilotLspError(f"--endpoint wants PROFILE=URL, got {item!r}")
        endpoints[name] = url
    if args.quick:
        plan = Plan(sets, [1, 4], [0.0], repeats=1, max_tokens=32)
        per_set = 2
    else:
        if args.repeats < 1 or args.max_tokens < 1 or args.per_set < 1:
            raise CopilotLspError("--repeats, --max-tokens and --per-set must be positive")
        temperatures = _floats(args.temperature)
        if any(t < 0 or t > 2 for t in temperatures):
            raise CopilotLspError("temperatures must lie in [0, 2]")
        plan = Plan(sets, _ints(args.concurrency), temperatures, args.repeats, args.max_tokens)
        per_set = args.per_set
    prompts = [p for p in prompt_sets(per_set) if p.set in sets]
    if not prompts:
        raise CopilotLspError("no prompts found for the chosen sets")
    return run_benchmark(
        profiles,
        plan,
        prompts,
        endpoints=endpoints,
        port=args.port,
        state_dir=state_dir,
        dtype=args.dtype,
    )
