"""The overhead benchmark's table and its Markdown page (written beside the JSON report).

A row per class of edit and server. Reports from before the classes (one round trip per
server, a one-character edit) render as one `char` row per server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from copilot_lsp.bench.overhead.edits import DESCRIPTIONS
from copilot_lsp.telemetry.stats import format_table

TARGET_P50_MS = 10.0
TARGET_P99_MS = 25.0
TARGET = f"p50 <= {TARGET_P50_MS:g} ms, p99 <= {TARGET_P99_MS:g} ms round trip, each class"
EDIT = max(13, max(map(len, DESCRIPTIONS)) + 2)
"""The edit column's width: the longest class name and a gap (`typing_unpaired` had none)."""


def render(report: dict[str, Any]) -> str:
    lines = [
        f"server overhead: {_rounds(report)}, each an edit then a completion, on a "
        f"{report['file_lines']}-line Python file, scripted engine answering at once"
        + _distance(report),
        f"{'edit':<{EDIT}}{'server':<9}{'n':>5}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}"
        f"{'mean ms':>9}{'built p50':>11}{'shown':>7}{'target':>8}",
    ]
    for kind, name, data in rows(report):
        row = data["round_trip_ms"]
        if not row.get("n"):
            lines.append(f"{kind:<{EDIT}}{name:<9}{0:>5}  (no rounds)")
            continue
        lines.append(
            f"{kind:<{EDIT}}{name:<9}{int(row['n']):>5}{row['p50']:>9.2f}{row['p90']:>9.2f}"
            f"{row['p99']:>9.2f}{row['mean']:>9.2f}{_built(data):>11}{_shown(data):>7}"
            f"{_target(row):>8}"
        )
    lines.append(
        "completions sent first on their engine connection / connections opened: "
        + ", ".join(f"{name} {_connections(data)}" for name, data in report["servers"].items())
    )
    for name, data in report["servers"].items():
        lines += ["", f"{name}: the server's own stages (from copilot/stats, every class)"]
        lines.append(format_table(data["stages"]))
    lines += ["", "the first completion after start (right after the document opened):"]
    for name, data in report["servers"].items():
        lines.append(f"{name:<10}{_first(data)}")
    profile = report.get("profile")
    if profile:
        lines.append(
            f"in process under cProfile, {profile['steps']} steps: {profile['file']} "
            f"(python -m pstats {profile['file']})"
        )
    lines.append(f"target: {TARGET}")
    return "\n".join(lines)


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Server overhead per completion",
        "",
        f"{_rounds(report)}: an edit (didChange) then an inline completion at the cursor, on a "
        f"{report['file_lines']}-line Python file, through the real server over stdio; the "
        f"engine is the scripted one and answers at once{_distance(report)}. Host "
        f"`{report['host']}` (shared, noisy: medians).",
        "",
        "| edit | server | n | p50 ms | p90 ms | p99 ms | prompt built p50 ms | shown | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, name, data in rows(report):
        row = data["round_trip_ms"]
        lines.append(
            f"| {kind} | {name} | {row.get('n', 0)} | {row.get('p50', '-')} "
            f"| {row.get('p90', '-')} | {row.get('p99', '-')} | {_built(data)} "
            f"| {_shown(data)} | {_target(row)} |"
        )
    lines += [
        "",
        "Completions sent first on their engine connection / connections opened: "
        + "; ".join(f"{name} {_connections(data)}" for name, data in report["servers"].items())
        + " (a completion cut before the engine's end closes its connection, which is how vLLM "
        "learns to stop; the client opens the next one in advance: engine/client.py). "
        "Shown: measured rounds whose completion showed a suggestion (the "
        "scripted engine answers the same text everywhere; where the server's cut and filters "
        "leave nothing of it, the completion comes back empty after the engine answered).",
        "",
        "The edits:",
        "",
    ]
    kinds = dict.fromkeys(kind for kind, _, _ in rows(report))
    lines += [f"- {kind}: {DESCRIPTIONS.get(kind, '')}" for kind in kinds]
    lines += ["", "The first completion after start, right after the document opened:", ""]
    lines += [f"- {name}: {_first(data)}" for name, data in report["servers"].items()]
    lines += ["", f"Target: {TARGET}.", ""]
    return "\n".join(lines)


def rows(report: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(class of edit, server, its figures) by class, then server; a report from before the
    classes has one `char` row per server."""
    servers: dict[str, dict[str, Any]] = report["servers"]
    kinds = report.get("edits") or ["char"]
    for kind in kinds:
        for name, data in servers.items():
            if "edits" in data:
                yield kind, name, data["edits"][kind]
            else:
                yield kind, name, {"round_trip_ms": data["round_trip_ms"]}


def _rounds(report: dict[str, Any]) -> str:
    if "edits" not in report:
        return f"{report['count']} rounds after {report['warmup']} warm-up ones"
    return f"{report['count']} rounds of each class of edit after {report['warmup']} warm-up ones"


def _built(data: dict[str, Any]) -> str:
    """The server's prompt_built mark, p50 (a report from before the classes has none)."""
    built = data.get("prompt_built_ms") or {}
    return f"{built['p50']:.2f}" if built.get("n") else "-"


def _shown(data: dict[str, Any]) -> str:
    """Measured rounds whose completion showed a suggestion (the others' came back empty
    after the engine answered, or were cut; a report from before the classes has none)."""
    outcomes = data.get("outcomes")
    return "-" if outcomes is None else str(outcomes.get("shown", 0))


def _target(row: dict[str, Any]) -> str:
    if not row.get("n"):
        return "-"
    return "met" if row["p50"] <= TARGET_P50_MS and row["p99"] <= TARGET_P99_MS else "missed"


def _first(data: dict[str, Any]) -> str:
    """The first request's round trip and stage marks (reports from before have neither)."""
    first = data.get("first_request")
    if not first:
        return "-"
    marks = ", ".join(f"{stage} {ms:.1f}" for stage, ms in first.get("ms", {}).items())
    return f"round trip {first['round_trip_ms']:.1f} ms ({marks} ms)"


def _distance(report: dict[str, Any]) -> str:
    """How far the engine was, how far apart the rounds and the workspace index, if any
    (reports from before say none of it)."""
    rtt, gap = report.get("engine_rtt_ms", 0), report.get("gap_ms", 0)
    workspace = report.get("workspace") or {}
    index = workspace.get("index") or {}
    indexed = (
        f"; workspace index on: {index.get('files')} files of {workspace.get('source')}, "
        f"{index.get('definitions')} definitions"
        if workspace
        else ""
    )
    return (
        (f", {rtt} ms round trip away" if rtt else "")
        + (f", rounds {gap} ms apart" if gap else "")
        + indexed
    )


def _connections(data: dict[str, Any]) -> str:
    """Completions sent first on a connection (opened for them or in advance) / connections
    opened, over all rounds, warm-up ones too (a report from before they were counted has
    neither)."""
    if "engine_connections" not in data:
        return "-"
    return f"{data['completions_on_new_connections']} / {data['engine_connections']}"


def write_markdown(report: dict[str, Any], out: Path) -> None:
    """The Markdown table beside the JSON report written to `out`."""
    out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
