"""The latency benchmark's table: the cold first completion, then the warm ones by stage."""

from __future__ import annotations

from typing import Any

from copilot_lsp.telemetry.stats import format_table


def render(report: dict[str, Any]) -> str:
    first = report.get("first") or {}
    ms = first.get("ms", {})
    lines = [
        f"{report['count']} completions at {report['file']}:{report['cursor'][0] + 1}:"
        f"{report['cursor'][1] + 1} via {(report.get('engine') or {}).get('url')}",
        f"cold first completion: first token {ms.get('first_token', '-')} ms, "
        f"finished {ms.get('finished', '-')} ms, outcome {first.get('outcome')}",
        "warm completions (the rest):",
        format_table(report["stages"]),
    ]
    return "\n".join(lines)
