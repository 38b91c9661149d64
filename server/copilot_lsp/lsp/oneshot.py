"""One completion through the real server over stdio, driven the way an editor drives it."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.lsp.server import STATS_REQUEST

LANGUAGE_IDS = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".go": "go",
    ".rs": "rust",
    ".lua": "lua",
    ".c": "c",
    ".cpp": "cpp",
    ".java": "java",
}


def plain(value: Any) -> Any:
    """pygls hands custom results over as namedtuples; turn them back into JSON values."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


async def complete_once(
    path: Path,
    text: str,
    line: int,
    column: int,
    *,
    server_command: list[str] | None = None,
    initialization_options: dict[str, Any] | None = None,
    timeout_s: float = 120.0,
) -> dict[str, Any]:
    """Open `text` as `path` in a fresh server; request a completion at (line, column).

    `line` and `column` are zero-based, the column in UTF-16 units as LSP counts by default.
    Returns the suggestion and its timeline as the server recorded it.
    """
    command = server_command or [sys.executable, "-m", "copilot_lsp", "--stdio"]
    uri = path.as_uri()
    client = LanguageClient("copilot-lsp-complete", "1")
    await client.start_io(command[0], *command[1:], env=dict(os.environ))
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                process_id=os.getpid(),
                root_uri=path.parent.as_uri(),  # `path` is absolute
                initialization_options=initialization_options or {},
            )
        )
        client.initialized(types.InitializedParams())
        language = LANGUAGE_IDS.get(path.suffix, "plaintext")
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, text))
        )
        started = time.perf_counter()
        result = await asyncio.wait_for(
            client.text_document_inline_completion_async(
                types.InlineCompletionParams(
                    context=types.InlineCompletionContext(
                        trigger_kind=types.InlineCompletionTriggerKind.Invoked
                    ),
                    text_document=types.TextDocumentIdentifier(uri),
                    position=types.Position(line, column),
                )
            ),
            timeout_s,
        )
        round_trip_ms = (time.perf_counter() - started) * 1000.0
        items = _items(result)
        stats = plain(await client.protocol.send_request_async(STATS_REQUEST, {}))
        recent = stats.get("recent") or []
        item_command = items[0].command if items else None
        completion_id = (
            item_command.arguments[0] if item_command and item_command.arguments else None
        )
        timeline = next((r for r in recent if r.get("id") == completion_id), None)
        if timeline is None and recent:
            timeline = recent[-1]
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await _stop(client)
    return {
        "file": str(path),
        "line": line,
        "column": column,
        "text": items[0].insert_text if items else "",
        "range": _range(items[0]) if items else None,
        "round_trip_ms": round(round_trip_ms, 1),
        "timeline": timeline,
        "engine": stats.get("engine"),
    }


def _items(
    result: types.InlineCompletionList | Sequence[types.InlineCompletionItem] | None,
) -> list[types.InlineCompletionItem]:
    if result is None:
        return []
    if isinstance(result, types.InlineCompletionList):
        return list(result.items)
    return list(result)


def _range(item: types.InlineCompletionItem) -> dict[str, Any] | None:
    if item.range is None:
        return None
    start, end = item.range.start, item.range.end
    return {"start": [start.line, start.character], "end": [end.line, end.character]}


async def _stop(client: LanguageClient) -> None:
    server = getattr(client, "_server", None)
    try:
        await asyncio.wait_for(client.stop(), 10.0)  # type: ignore[no-untyped-call]
    except (TimeoutError, Exception):
        if server is not None and server.returncode is None:
            server.kill()
