"""The quality benchmark's figures per mode and subset, and its table."""

from __future__ import annotations

import statistics
from typing import Any


def summarise(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for subset in sorted({r["subset"] for r in results}):
        rows = [r for r in results if r["subset"] == subset]
        key = "exact_match" if subset == "api" else "passed"
        first_tokens = [r["first_token_ms"] for r in rows if r["first_token_ms"] is not None]
        tokens = [r["tokens"] for r in rows if r.get("tokens") is not None]
        table[subset] = {
            "n": len(rows),
            "score": round(sum(1 for r in rows if r.get(key)) / len(rows), 4),
            "edit_similarity": round(statistics.mean(r["edit_similarity"] for r in rows), 4),
            "shown": round(sum(1 for r in rows if r["shown"]) / len(rows), 4),
            "p50_first_token_ms": round(statistics.median(first_tokens), 1) if first_tokens else 0,
            "p50_round_trip_ms": round(statistics.median(r["round_trip_ms"] for r in rows), 1),
            "p50_first_answer_ms": round(
                statistics.median(r.get("first_answer_ms", r["round_trip_ms"]) for r in rows), 1
            ),
            "p50_tokens": statistics.median(tokens) if tokens else 0,
            "max_tokens": max(tokens) if tokens else 0,
        }
    return table


def render(report: dict[str, Any]) -> str:
    lines = [
        f"SAFIM Python, {report['limit_per_subset']} tasks per subset (seeded sample), greedy",
        f"{'mode':<15}{'subset':<9}{'n':>4}{'score':>8}{'edit sim':>10}{'shown':>8}"
        f"{'p50 1st tok':>13}{'p50 answer':>12}{'p50 total':>11}{'p50 tok':>9}{'max tok':>9}",
    ]
    for mode, data in report["modes"].items():
        for subset, row in data["summary"].items():
            lines.append(
                f"{mode:<15}{subset:<9}{int(row['n']):>4}{row['score']:>8.3f}"
                f"{row['edit_similarity']:>10.3f}{row['shown']:>8.2f}"
                f"{row['p50_first_token_ms']:>13.0f}{row.get('p50_first_answer_ms', 0):>12.0f}"
                f"{row['p50_round_trip_ms']:>11.0f}"
                f"{row.get('p50_tokens', 0):>9.0f}{row.get('max_tokens', 0):>9.0f}"
            )
    lines.append(
        "score: pass@1 on the unit tests (block, control, holes), exact match (api); "
        "times in ms (answer: the first reply; total: the whole suggestion, for early a second "
        "request at the same place); naive: prefix-only straight to the engine, cut at the "
        "line break"
    )
    return "\n".join(lines)
