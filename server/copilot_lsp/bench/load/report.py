"""The load benchmark's table: one row per figure, the soak's RSS series when it has one."""

from __future__ import annotations

import json
from typing import Any


def render(result: dict[str, Any]) -> str:
    cheap = result["cheap_request"]
    rss = result["rss_kib"]
    rows = [
        (
            "keystrokes",
            f"{result['keystrokes']} in {result['duration_s']} s "
            f"({result['keystrokes_per_s']}/s over {result['documents']} documents)",
        ),
        (
            "engine requests",
            f"{result['engine_requests']} "
            f"({result['engine_requests_per_keystroke']} per keystroke)",
        ),
        (
            "peak in flight",
            f"engine saw {result['peak_inflight_engine_side']}, "
            f"server counted {result['peak_inflight_server_side']} "
            f"(cap {_cap(result)})",
        ),
        ("streams aborted", f"{result['engine_streams_aborted']} (closed by the server early)"),
        (
            "completions",
            f"{result['completions_answered']} answered, "
            f"{result['completions_with_items']} with a suggestion, "
            f"{result['completion_requests_cancelled_or_failed']} cancelled by the editor",
        ),
        (
            "copilot/stats latency",
            f"p50 {cheap['p50_ms']} ms, p99 {cheap['p99_ms']} ms, "
            f"max {cheap['max_ms']} ms (n={cheap['n']})",
        ),
        (
            "server RSS",
            f"{rss['start']} KiB at start, {rss['after_warmup']} KiB after warm-up, "
            f"{rss['end']} KiB at the end (growth after warm-up "
            f"{rss['growth_after_warmup']} KiB, peak {rss['peak']} KiB)",
        ),
        ("outcomes", json.dumps(result.get("outcomes"))),
    ]
    slope = rss.get("slope_after_warmup") or {}
    if slope.get("kib_per_1000_keystrokes") is not None:
        rows.insert(
            -1,
            (
                "RSS slope",
                f"{slope['kib_per_1000_keystrokes']} KiB per 1,000 keystrokes "
                f"({slope['kib_per_minute']} KiB a minute) after {slope['warmup_s']:.0f} s, "
                "least squares",
            ),
        )
    if len(rss.get("by_minute") or []) > 1:
        rows.insert(
            -1,
            (
                "RSS each minute",
                " ".join(str(value) for value in rss["by_minute"])
                + f" KiB (growth after the first minute {rss['growth_after_first_minute']} KiB)",
            ),
        )
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name.ljust(width)}  {value}" for name, value in rows)


def _cap(result: dict[str, Any]) -> Any:
    completion = (result.get("settings") or {}).get("completion") or {}
    return completion.get("maxInflight", "default")
