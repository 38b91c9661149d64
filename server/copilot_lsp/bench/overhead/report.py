"""The overhead benchmark's table and its Markdown page (written beside the JSON report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copilot_lsp.telemetry.stats import format_table


def render(report: dict[str, Any]) -> str:
    lines = [
        f"server overhead: {report['count']} rounds (edit + completion) on a "
        f"{report['file_lines']}-line Python file, scripted engine answering at once"
        + _distance(report),
        f"{'server':<10}{'n':>5}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'mean ms':>9}"
        f"{'waited / connections':>22}",
    ]
    for name, data in report["servers"].items():
        row = data["round_trip_ms"]
        lines.append(
            f"{name:<10}{int(row['n']):>5}{row['p50']:>9.2f}{row['p90']:>9.2f}"
            f"{row['p99']:>9.2f}{row['mean']:>9.2f}{_connections(data):>22}"
        )
    for name, data in report["servers"].items():
        lines += ["", f"{name}: the server's own stages (from copilot/stats)"]
        lines.append(format_table(data["stages"]))
    lines += ["", "the first completion after start (right after the document opened):"]
    for name, data in report["servers"].items():
        lines.append(f"{name:<10}{_first(data)}")
    lines.append("target: p50 <= 10 ms, p99 <= 25 ms round trip")
    return "\n".join(lines)


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Server overhead per completion",
        "",
        f"{report['count']} rounds after {report['warmup']} warm-up ones: a one-character edit "
        f"(didChange) then an inline completion at the cursor, on a {report['file_lines']}-line "
        "Python file, through the real server over stdio; the engine is the scripted one "
        f"and answers at once{_distance(report)}. Host `{report['host']}` (shared, noisy: "
        "medians).",
        "",
        "| server | n | p50 ms | p90 ms | p99 ms | completions on a new connection / connections |",
        "|---|---|---|---|---|---|",
    ]
    for name, data in report["servers"].items():
        row = data["round_trip_ms"]
        lines.append(
            f"| {name} | {row['n']} | {row['p50']} | {row['p90']} | {row['p99']} "
            f"| {_connections(data)} |"
        )
    lines += ["", "The first completion after start, right after the document opened:", ""]
    lines += [f"- {name}: {_first(data)}" for name, data in report["servers"].items()]
    lines += ["", "Target: p50 <= 10 ms, p99 <= 25 ms.", ""]
    return "\n".join(lines)


def _first(data: dict[str, Any]) -> str:
    """The first request's round trip and stage marks (reports from before have neither)."""
    first = data.get("first_request")
    if not first:
        return "-"
    marks = ", ".join(f"{stage} {ms:.1f}" for stage, ms in first.get("ms", {}).items())
    return f"round trip {first['round_trip_ms']:.1f} ms ({marks} ms)"


def _distance(report: dict[str, Any]) -> str:
    """How far the engine was and how far apart the rounds (reports from before say neither)."""
    rtt, gap = report.get("engine_rtt_ms", 0), report.get("gap_ms", 0)
    return (f", {rtt} ms round trip away" if rtt else "") + (
        f", rounds {gap} ms apart" if gap else ""
    )


def _connections(data: dict[str, Any]) -> str:
    """Completions that waited for a new connection to the engine / connections opened, over
    all rounds, warm-up ones too (a report from before they were counted has neither)."""
    if "engine_connections" not in data:
        return "-"
    return f"{data['completions_on_new_connections']} / {data['engine_connections']}"


def write_markdown(report: dict[str, Any], out: Path) -> None:
    """The Markdown table beside the JSON report written to `out`."""
    out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
