"""The context benchmark's table: each stage's percentiles in milliseconds."""

from __future__ import annotations

from typing import Any


def render(report: dict[str, Any]) -> str:
    lines = [
        "files: " + ", ".join(f"{name} ({count} lines)" for name, count in report["files"].items()),
        "full parse (ms): "
        + ", ".join(f"{name} {ms}" for name, ms in report["full_parse_ms"].items()),
        f"{'stage (ms)':<34}{'n':>6}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}",
    ]
    for key, label in (
        ("incremental_parse_ms", "incremental parse, 1-char edit"),
        ("syntax_breaking_edit_ms", "same, edit that breaks syntax"),
        ("context_build_ms", "context build (prompt + snippets)"),
    ):
        row = report[key]
        lines.append(
            f"{label:<34}{row['n']:>6}{row['p50']:>9.2f}{row['p90']:>9.2f}"
            f"{row['p99']:>9.2f}{row['max']:>9.2f}"
        )
    lines.append(f"token counts: {report['tokenizer']}")
    return "\n".join(lines)
