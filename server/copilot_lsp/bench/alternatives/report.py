"""The alternatives benchmark's medians over the warm rounds, and its table."""

from __future__ import annotations

import statistics
from typing import Any


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    warm = [row for row in rows if not row["warm_up"]]
    engine = [row["engine"] for row in warm if "engine" in row]
    return {
        "round_trip_ms": _median([row["round_trip_ms"] for row in warm]),
        "items": _median([row["items"] for row in warm]),
        "greedy_tokens": _median([row["greedy_tokens"] for row in warm]),
        "alternative_tokens": _median([row["alternative_tokens"] for row in warm]),
        "engine_generation_tokens": _median([e["vllm:generation_tokens_total"] for e in engine]),
        "engine_prompt_tokens": _median([e["vllm:prompt_tokens_total"] for e in engine]),
    }


def render(report: dict[str, Any]) -> str:
    header = (
        f"{'suggestions asked':<18}{'round trip ms':>14}{'items':>7}{'greedy tok':>11}"
        f"{'alt tok':>9}{'engine gen tok':>15}{'engine prompt tok':>18}"
    )
    lines = [f"medians over {report['rounds']} warm rounds (alternating)", header]
    for arm, data in report["arms"].items():
        s = data["summary"]
        lines.append(
            f"{arm:<18}{s['round_trip_ms']!s:>14}{s['items']!s:>7}{s['greedy_tokens']!s:>11}"
            f"{s['alternative_tokens']!s:>9}{s['engine_generation_tokens']!s:>15}"
            f"{s['engine_prompt_tokens']!s:>18}"
        )
    return "\n".join(lines)
