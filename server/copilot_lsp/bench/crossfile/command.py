"""`copilot-lsp bench crossfile`: its options, and the run from options to report folder."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from copilot_lsp.errors import CopilotLspError

SUMMARY = "summary.json"
REPORT = "report.md"
SPLITS = ("dev", "heldout", "all")
DEFAULT_PROFILE = "local-cpu-suffix"
"""The embedded default, as `engine up` starts it."""


def add_parser(
    benches: Any, formatter_class: type[argparse.HelpFormatter]
) -> argparse.ArgumentParser:
    crossfile: argparse.ArgumentParser = benches.add_parser(
        "crossfile",
        help="completions that need another file of the repository (CrossCodeEval-style)",
        formatter_class=formatter_class,
    )
    crossfile.add_argument(
        "--engine-url", help="a running engine (default: start the embedded one for the run)"
    )
    crossfile.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="the engine profile started for the run without --engine-url",
    )
    crossfile.add_argument("--tasks", type=int, default=120, help="tasks per split")
    crossfile.add_argument(
        "--split",
        choices=SPLITS,
        default="dev",
        help="dev or heldout packages (fixed lists), or both reported side by side",
    )
    crossfile.add_argument(
        "--arms",
        default="naive,current-file,open-tabs,workspace",
        help="naive (prefix-only to the engine), current-file, open-tabs (defining modules "
        "open), workspace (context.workspace.enabled)",
    )
    crossfile.add_argument("--seed", type=int, default=None, help="task selection seed")
    crossfile.add_argument(
        "--report-only",
        action="store_true",
        help="redraw the report from the raw results saved in OUT without running anything",
    )
    crossfile.add_argument(
        "--similarity",
        action="store_true",
        help="no engine: compare Jaccard and BM25 rankings of similar code on the tasks "
        "(whether a window of the defining module comes up); writes similarity.md/.json",
    )
    crossfile.add_argument("--out", type=Path, required=True, help="folder for the report")
    return crossfile


def run(args: argparse.Namespace, state_dir: Path) -> str:
    """Measure (or reload), then write the report folder; returns the table."""
    from copilot_lsp.bench.harness import measured_or_reloaded

    out: Path = args.out
    if args.similarity:
        return _similarity(args, out)
    data = measured_or_reloaded(out, args.report_only, lambda: measure(args, state_dir))
    return write_report(data, out) + f"\nreport written to {out / REPORT}"


def write_report(data: dict[str, Any], out: Path) -> str:
    """report.md, summary.json and the plot into `out`; returns the table."""
    from copilot_lsp.bench.crossfile import report

    summary = report.summarise(data)
    out.mkdir(parents=True, exist_ok=True)
    report.draw(summary, out)
    (out / REPORT).write_text(report.markdown(data, summary), encoding="utf-8")
    (out / SUMMARY).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return report.table(summary)


def _similarity(args: argparse.Namespace, out: Path) -> str:
    from copilot_lsp.bench.crossfile import similarity

    seed, tasks, _, split_of = _tasks(args)
    result = {"seed": seed, "limit": args.tasks, **similarity.compare(tasks, split_of)}
    table = similarity.table(result)
    out.mkdir(parents=True, exist_ok=True)
    (out / "similarity.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (out / "similarity.md").write_text(
        "# Similar code: Jaccard against BM25 (`bench crossfile --similarity`)\n\n"
        + (similarity.__doc__ or "").split("\n\n", 1)[1]
        + f"\nSeed {seed}, up to {args.tasks} tasks per split.\n\n{table}\n",
        encoding="utf-8",
    )
    return table + f"\nreport written to {out / 'similarity.md'}"


def _tasks(args: argparse.Namespace) -> tuple[int, list[Any], dict[str, Any], dict[str, str]]:
    """(seed, tasks, packages per split, split per package) of the options."""
    from copilot_lsp.bench.crossfile.tasks import SEED, build_split

    if args.tasks < 1:
        raise CopilotLspError("--tasks must be positive")
    seed = SEED if args.seed is None else args.seed
    splits = ["dev", "heldout"] if args.split == "all" else [args.split]
    tasks, packages, split_of = [], {}, {}
    for split in splits:
        chosen, infos = build_split(split, args.tasks, seed)
        tasks.extend(chosen)
        packages[split] = [info.as_dict() for info in infos]
        split_of.update({info.name: split for info in infos})
    if not tasks:
        raise CopilotLspError(f"no tasks: none of the {args.split} packages is installed here")
    return seed, tasks, packages, split_of


def measure(args: argparse.Namespace, state_dir: Path) -> dict[str, Any]:
    from copilot_lsp.bench.crossfile.run import ARMS, NAIVE_PREFIX_CHARS

    arms = [arm.strip() for arm in args.arms.split(",") if arm.strip()]
    unknown = sorted(set(arms) - set(ARMS))
    if unknown or not arms:
        raise CopilotLspError(f"unknown arm(s) {unknown}; known: {', '.join(ARMS)}")
    seed, tasks, packages, split_of = _tasks(args)
    started = time.time()
    with _engine(args, state_dir) as (url, engine):
        records, said = asyncio.run(_run(tasks, arms, url, split_of))
    return {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 1),
        "engine": engine,
        "server_commit": _commit(),
        "seed": seed,
        "limit": args.tasks,
        "arms": arms,
        "naive_prefix_chars": NAIVE_PREFIX_CHARS,
        "features": features(),
        "server_messages": said,
        "packages": packages,
        "tasks": [task.as_dict() for task in tasks],
        "records": records,
    }


async def _run(
    tasks: list[Any], arms: list[str], url: str, split_of: dict[str, str]
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    from copilot_lsp.bench.crossfile.run import run_tasks

    return await run_tasks(tasks, arms, url, split_of, _say)


def _say(line: str) -> None:
    """Progress on stderr: stdout is the table."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@contextmanager
def _engine(args: argparse.Namespace, state_dir: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The engine's URL and what the report says of it: --engine-url, or the profile's engine
    started for the run and stopped after it (also on Ctrl-C, SIGTERM or an error)."""
    if args.engine_url:
        url = args.engine_url.rstrip("/")
        yield url, {"url": url, "model": _model(url)}
        return
    from copilot_lsp.bench.harness import started_engine
    from copilot_lsp.serving.profiles import load_profile, profile_label

    name = args.profile
    began = time.perf_counter()
    with started_engine(load_profile(name), state_dir=state_dir, log=_say) as state:
        info = {
            "profile": profile_label(name),
            "model": _model(state.url),
            "start_s": round(time.perf_counter() - began, 1),
        }
        yield state.url, info


def _model(url: str) -> str | None:
    import httpx

    try:
        return str(httpx.get(f"{url}/models", timeout=30.0).json()["data"][0]["id"])
    except (httpx.HTTPError, ValueError, KeyError, IndexError):
        return None


def features() -> dict[str, Any]:
    """Which of the server features the arms compare this installation's server has."""
    from copilot_lsp.settings import Settings

    settings = Settings.model_validate({"context": {"workspace": {"enabled": True}}})
    workspace = getattr(getattr(settings, "context", None), "workspace", None)
    known = workspace is not None
    note = (
        "the server's settings have `context.workspace.enabled`"
        if known
        else "the server has no `context.workspace` setting and ignores it: the `workspace` "
        "arm runs as `current-file` does"
    )
    return {"workspace_index": known, "workspace_note": note}


def _commit() -> str | None:
    folder = Path(__file__).resolve().parents[3]
    try:
        found = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip() or None
