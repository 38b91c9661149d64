"""One completion through the real server over stdio, driven the way an editor drives it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from copilot_lsp.client.driver import EditorSession, item_id, item_range


async def complete_once(
    path: Path, text: str, line: int, column: int, *, timeout_s: float = 120.0
) -> dict[str, Any]:
    """Open `text` as the absolute `path` in a fresh server; complete at (line, column).

    `line` and `column` are zero-based, the column in UTF-16 units as LSP counts by default.
    Returns the suggestion and its timeline as the server recorded it.
    """
    session = await EditorSession.start(path.parent)
    try:
        uri = session.open(path, text)
        started = time.perf_counter()
        items = await session.complete(uri, line, column, timeout_s=timeout_s)
        round_trip_ms = (time.perf_counter() - started) * 1000.0
        stats = await session.stats()
    finally:
        await session.close()
    wanted = item_id(items[0]) if items else None
    recent = stats.get("recent") or []
    timeline = next((r for r in recent if r.get("id") == wanted), recent[-1] if recent else None)
    return {
        "file": str(path),
        "line": line,
        "column": column,
        "text": items[0].insert_text if items else "",
        "range": item_range(items[0]) if items else None,
        "round_trip_ms": round(round_trip_ms, 1),
        "timeline": timeline,
        "engine": stats.get("engine"),
        "prompt": stats.get("prompt"),
        "messages": list(session.messages),
    }
