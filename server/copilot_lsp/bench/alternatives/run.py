"""What alternatives cost: invoked completions with 1 suggestion vs N, side by side.

Two servers against one engine, one with `completion.alternatives` 1 and one with N; each
round asks both for an invoked completion at the same cursor (the order alternating), and
records the round trip, the tokens generated (the timelines, and the engine's own counters
when it exposes /metrics) and how many distinct suggestions came back. The first round warms
the prefix cache and is left out of the medians.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from copilot_lsp.bench.alternatives.report import summary
from copilot_lsp.client.driver import EditorSession, item_id
from copilot_lsp.engine.metrics import parse_metrics, total

COUNTERS = ("vllm:generation_tokens_total", "vllm:prompt_tokens_total")


async def _counters(root: str) -> dict[str, float] | None:
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            text = (await http.get(f"{root}/metrics")).text
    except httpx.HTTPError:
        return None
    samples = parse_metrics(text)
    return {name: total(samples, name) for name in COUNTERS}


async def _one(
    session: EditorSession, uri: str, line: int, column: int, root: str
) -> dict[str, Any]:
    before = await _counters(root)
    started = time.perf_counter()
    items = await session.complete(uri, line, column)
    round_trip = (time.perf_counter() - started) * 1000.0
    after = await _counters(root)
    wanted = item_id(items[0]) if items else None
    recent = (await session.stats()).get("recent") or []
    timeline = next((r for r in recent if r.get("id") == wanted), recent[-1] if recent else {})
    row: dict[str, Any] = {
        "round_trip_ms": round(round_trip, 1),
        "items": len(items),
        "texts": [item.insert_text for item in items],
        "greedy_tokens": timeline.get("tokens", 0),
        "alternative_tokens": timeline.get("alternative_tokens", 0),
        "first_token_ms": timeline.get("ms", {}).get("first_token"),
    }
    if before is not None and after is not None:
        row["engine"] = {name: after[name] - before[name] for name in COUNTERS}
    return row


async def run(
    engine_url: str, path: Path, text: str, line: int, column: int, alternatives: int, rounds: int
) -> dict[str, Any]:
    """`rounds` warm rounds (plus one warm-up) of both arms at (line, column) of `text`,
    opened as `path`."""
    root = engine_url.rstrip("/").removesuffix("/v1")
    arms = [1, alternatives]
    sessions = {
        arm: await EditorSession.start(
            path.parent,
            initialization_options={"engine": {"url": engine_url}},
            alternatives=arm,
        )
        for arm in arms
    }
    rows: dict[int, list[dict[str, Any]]] = {arm: [] for arm in arms}
    try:
        uris = {arm: session.open(path, text) for arm, session in sessions.items()}
        for number in range(rounds + 1):
            order = arms if number % 2 == 0 else arms[::-1]
            for arm in order:
                row = await _one(sessions[arm], uris[arm], line, column, root)
                row["warm_up"] = number == 0
                rows[arm].append(row)
    finally:
        for session in sessions.values():
            await session.close()
    return {
        "engine_url": engine_url,
        "file": str(path),
        "cursor": [line, column],
        "rounds": rounds,
        "arms": {str(arm): {"summary": summary(rows[arm]), "rows": rows[arm]} for arm in arms},
    }
