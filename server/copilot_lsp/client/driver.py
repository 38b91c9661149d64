"""Drive the real server over stdio the way an editor does (for `complete` and benchmarks)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.client.connection import SERVER, Connection
from copilot_lsp.lsp.methods import STATS_REQUEST

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


class EditorSession:
    """A server subprocess with an initialized LSP session.

    What the server shows the user (`window/showMessage`: settings mistakes, an unreachable
    engine, an unknown model) is kept in `messages`, its log panel lines
    (`window/logMessage`) in `log_messages`, as an editor would show them.
    """

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.client = connection.client
        self.messages: list[str] = []
        self.log_messages: list[str] = []

    @classmethod
    async def start(
        cls,
        root: Path,
        *,
        server_command: list[str] | None = None,
        initialization_options: dict[str, Any] | None = None,
        alternatives: int = 1,
    ) -> EditorSession:
        """`alternatives`: items an invoked request may return (`completion.alternatives`,
        unless the options set it). One by default: the tools built on this session (the
        `complete` command, the latency and quality benchmarks) read the first item only,
        and sampled alternatives would cost engine time beside it."""
        options = dict(initialization_options or {})
        completion = options.get("completion")
        completion = dict(completion) if isinstance(completion, dict) else {}
        completion.setdefault("alternatives", alternatives)
        options["completion"] = completion
        client = LanguageClient("copilot-lsp-driver", "1")
        messages: list[str] = []
        log_messages: list[str] = []

        def show_message(params: types.ShowMessageParams) -> None:
            messages.append(params.message)

        def log_message(params: types.LogMessageParams) -> None:
            log_messages.append(params.message)

        client.feature(types.WINDOW_SHOW_MESSAGE)(show_message)
        client.feature(types.WINDOW_LOG_MESSAGE)(log_message)
        connection = await Connection.start(client, root, options, command=server_command or SERVER)
        session = cls(connection)
        session.messages, session.log_messages = messages, log_messages
        return session

    def open(self, path: Path, text: str) -> str:
        """Open `text` as the absolute `path`; returns its URI."""
        uri = path.as_uri()
        language = LANGUAGE_IDS.get(path.suffix, "plaintext")
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, text))
        )
        return uri

    def insert(self, uri: str, version: int, line: int, column: int, text: str) -> None:
        """Type `text` at (line, column) (zero-based, UTF-16): an incremental didChange."""
        at = types.Position(line, column)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangePartial(types.Range(at, at), text)],
            )
        )

    def replace(
        self, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str
    ) -> None:
        """Replace the range from `start` to `end` ((line, column), zero-based, UTF-16) with
        `text`: an incremental didChange."""
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [
                    types.TextDocumentContentChangePartial(
                        types.Range(types.Position(*start), types.Position(*end)), text
                    )
                ],
            )
        )

    def close_document(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
        )

    async def complete(
        self,
        uri: str,
        line: int,
        column: int,
        *,
        timeout_s: float = 120.0,
        automatic: bool = False,
    ) -> list[types.InlineCompletionItem]:
        """An inline completion at (line, column): asked for by hand (alternatives with it),
        or `automatic`ally, as an editor asks while the user types."""
        trigger = (
            types.InlineCompletionTriggerKind.Automatic
            if automatic
            else types.InlineCompletionTriggerKind.Invoked
        )
        result = await asyncio.wait_for(
            self.client.text_document_inline_completion_async(
                types.InlineCompletionParams(
                    context=types.InlineCompletionContext(trigger_kind=trigger),
                    text_document=types.TextDocumentIdentifier(uri),
                    position=types.Position(line, column),
                )
            ),
            timeout_s,
        )
        return answer_items(result)

    async def stats(self) -> dict[str, Any]:
        return plain(await self.client.protocol.send_request_async(STATS_REQUEST, {}))  # type: ignore[no-any-return]

    async def close(self) -> None:
        await self.connection.close()


def item_id(item: types.InlineCompletionItem) -> str | None:
    """The completion id the server put in the item's accept command."""
    command = item.command
    if command is None or not command.arguments:
        return None
    return str(command.arguments[0])


def item_range(item: types.InlineCompletionItem) -> dict[str, Any] | None:
    if item.range is None:
        return None
    start, end = item.range.start, item.range.end
    return {"start": [start.line, start.character], "end": [end.line, end.character]}


def answer_items(result: Any) -> list[types.InlineCompletionItem]:
    """The items of an inline-completion answer: a list, an InlineCompletionList, None, or
    what pygls hands over for a result it could not type (a dict or namedtuple with items)."""
    if result is None:
        return []
    if isinstance(result, types.InlineCompletionList):
        return list(result.items)
    if isinstance(result, list):
        return result
    items = result.get("items") if isinstance(result, dict) else getattr(result, "items", None)
    return list(items) if items else []
