"""A scripted editor that types into the real server over stdio, as VS Code does.

Every keystroke is a `didChange` (one character inserted at the cursor) followed by an
automatic `textDocument/inlineCompletion` at the new cursor, and the previous completion
request of that document is cancelled (`$/cancelRequest`). The text typed comes from `LINES`,
one document per file `module_<i>.py` in the workspace root. Used by `bench load`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.client.connection import Connection
from copilot_lsp.client.driver import plain
from copilot_lsp.lsp.methods import STATS_REQUEST

LINES = [
    "def total_price(items, tax_rate):",
    "    subtotal = sum(item.price * item.quantity for item in items)",
    "    return round(subtotal * (1 + tax_rate), 2)",
    "class Inventory:",
    "    def __init__(self):",
    "        self.items = {}",
    "    def add(self, name, count=1):",
    "        self.items[name] = self.items.get(name, 0) + count",
    "for index, value in enumerate(values):",
    "    print(index, value)",
]


@dataclass
class _Doc:
    uri: str
    text: str
    line: int = 0
    column: int = 0
    source_line: int = 0
    source_column: int = 0
    version: int = 1
    pending: str | None = None


@dataclass
class Counts:
    """What the editor saw of its completion requests."""

    keystrokes: int = 0
    answered: int = 0
    with_items: int = 0
    failed: int = 0
    """Answered with an error: -32800 for the requests the editor cancelled."""


class TypingEditor:
    """The server in a subprocess and the documents being typed into."""

    STDERR_LINES = 1000
    """The server's stderr lines kept (the load benchmark counts its warnings)."""

    def __init__(self, connection: Connection, root: Path, documents: int) -> None:
        self.connection = connection
        self.client = connection.client
        self.docs = [_Doc((root / f"module_{i}.py").as_uri(), "") for i in range(documents)]
        self.counts = Counts()
        self.stderr_lines = connection.stderr
        self.pid = connection.pid
        self._ids = 0
        self._waiting: set[asyncio.Future[Any]] = set()

    @classmethod
    async def start(
        cls, root: Path, documents: int, initialization: dict[str, Any], env: dict[str, str]
    ) -> TypingEditor:
        """Start `python -m copilot_lsp --stdio` with `env`; initialize; open the documents."""
        client = LanguageClient("copilot-lsp-load", "1")
        connection = await Connection.start(
            client, root, initialization, env=env, keep=cls.STDERR_LINES
        )
        editor = cls(connection, root, documents)
        try:
            for doc in editor.docs:
                client.text_document_did_open(
                    types.DidOpenTextDocumentParams(
                        types.TextDocumentItem(doc.uri, "python", doc.version, doc.text)
                    )
                )
        except BaseException:
            await editor.close()
            raise
        return editor

    def keystroke(self, index: int) -> None:
        """Type the next character into document `index` and ask for a completion there."""
        doc = self.docs[index]
        source = LINES[doc.source_line % len(LINES)]
        if doc.source_column < len(source):
            typed = source[doc.source_column]
            doc.source_column += 1
        else:
            typed = "\n"
            doc.source_line += 1
            doc.source_column = 0
        position = types.Position(doc.line, doc.column)
        doc.version += 1
        doc.text += typed
        if typed == "\n":
            doc.line, doc.column = doc.line + 1, 0
        else:
            doc.column += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=doc.version, uri=doc.uri),
                [
                    types.TextDocumentContentChangePartial(
                        range=types.Range(position, position), text=typed
                    )
                ],
            )
        )
        if doc.pending is not None:  # the editor drops the stale request, as VS Code does
            self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=doc.pending))
        self._ids += 1
        msg_id = f"load-{self._ids}"
        doc.pending = msg_id
        params = types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Automatic
            ),
            text_document=types.TextDocumentIdentifier(doc.uri),
            position=types.Position(doc.line, doc.column),
        )
        future = asyncio.wrap_future(
            self.client.protocol.send_request(
                types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id
            )
        )
        self._waiting.add(future)
        future.add_done_callback(lambda done: self._answered(doc, msg_id, done))
        self.counts.keystrokes += 1

    def _answered(self, doc: _Doc, msg_id: str, future: asyncio.Future[Any]) -> None:
        self._waiting.discard(future)
        if doc.pending == msg_id:
            doc.pending = None
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self.counts.failed += 1  # -32800 for the cancelled ones
            return
        self.counts.answered += 1
        result = future.result()
        if result is not None and getattr(result, "items", None):
            self.counts.with_items += 1

    async def drain(self, timeout_s: float) -> None:
        """Wait for the completion requests still open."""
        if self._waiting:
            await asyncio.wait(set(self._waiting), timeout=timeout_s)

    async def stats(self) -> dict[str, Any]:
        return plain(await self.client.protocol.send_request_async(STATS_REQUEST, {}))  # type: ignore[no-any-return]

    async def timed_stats(self) -> float:
        """Milliseconds one `copilot/stats` round trip takes (a cheap request)."""
        started = time.perf_counter()
        await self.client.protocol.send_request_async(STATS_REQUEST, {})
        return (time.perf_counter() - started) * 1000.0

    async def close(self) -> None:
        """Shut the server down (killed if it does not go)."""
        await self.connection.close()
