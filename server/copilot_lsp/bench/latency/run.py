"""Completion latency through the real server: N completions at one cursor, per-stage table.

The first completion pays for a cold prefix cache and is reported on its own; the
percentiles cover the rest, the steady state a user typing in one file sees.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import Any

from copilot_lsp.client.driver import EditorSession, item_id
from copilot_lsp.telemetry.stats import stage_table


async def run_latency_bench(
    path: Path, text: str, line: int, column: int, count: int, *, timeout_s: float = 300.0
) -> dict[str, Any]:
    """Complete `count` times at (line, column) (zero-based) of `text`, opened as `path`."""
    session = await EditorSession.start(path.parent)
    timelines: list[dict[str, Any]] = []
    round_trips: list[float] = []
    texts: list[str] = []
    try:
        uri = session.open(path, text)
        for _ in range(count):
            started = time.perf_counter()
            items = await session.complete(uri, line, column, timeout_s=timeout_s)
            round_trips.append(round((time.perf_counter() - started) * 1000.0, 1))
            texts.append(items[0].insert_text if items else "")  # type: ignore[arg-type]
            wanted = item_id(items[0]) if items else None
            recent = (await session.stats()).get("recent") or []
            timelines.append(
                next((r for r in recent if r.get("id") == wanted), recent[-1] if recent else {})
            )
        engine = (await session.stats()).get("engine")
    finally:
        await session.close()
    warm = timelines[1:] if len(timelines) > 1 else timelines
    return {
        "file": str(path),
        "cursor": [line, column],
        "count": count,
        "host": platform.node(),
        "engine": engine,
        "first": timelines[0] if timelines else None,
        "stages": stage_table(warm),
        "round_trip_ms": round_trips,
        "distinct_texts": len(set(texts)),
        "timelines": timelines,
    }
