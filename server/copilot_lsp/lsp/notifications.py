"""Streaming and accept-tracking notifications (see docs/protocol.md).

Server → client: `copilot/partialCompletion` carries the growing text of the current
completion, when the client turned on `editor.streaming`.

Client → server: what the user did with a suggestion, recorded per completion id in the log
and in `copilot/stats`. Our own names (`copilot/didShowCompletion`,
`copilot/didPartiallyAccept`, `copilot/didDismissCompletion`) take `{completionId, …}`;
GitHub Copilot's (`textDocument/didShowCompletion`, `textDocument/didPartiallyAcceptCompletion`)
take `{item, …}` and find the id in the item's accept command, so clients written for
Copilot's server report here too. A full accept is the item's command
(`copilot.acceptCompletion`), registered in server.py.

`PartialPublisher` is handed to the service when the server is built; the handlers are
registered in server.py, which reads the notifications with the helpers here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from copilot_lsp.completion.live import PartialUpdate
from copilot_lsp.lsp.methods import PARTIAL_COMPLETION
from copilot_lsp.positions import Encoding, Position, position_at


def field(params: Any, name: str) -> Any:
    """`params[name]` whether pygls hands the params over as a dict or a namedtuple."""
    if isinstance(params, Mapping):
        return params.get(name)
    return getattr(params, name, None)


def completion_id(params: Any) -> str | None:
    """`completionId`, or the id in `item.command.arguments[0]` (Copilot's shape)."""
    direct = field(params, "completionId")
    if isinstance(direct, str):
        return direct
    arguments = field(field(field(params, "item"), "command"), "arguments")
    if isinstance(arguments, list | tuple) and arguments and isinstance(arguments[0], str):
        return arguments[0]
    return None


def accepted_length(params: Any) -> int | None:
    value = field(params, "acceptedLength")
    return value if isinstance(value, int) and value >= 0 else None


class PartialPublisher:
    """Turns `PartialUpdate`s into `copilot/partialCompletion` notifications, sent with
    `notify(method, params)` in the client's position encoding (`encoding()`: negotiated at
    `initialize`, so asked each time)."""

    def __init__(
        self, notify: Callable[[str, Any], None], encoding: Callable[[], Encoding]
    ) -> None:
        self._notify = notify
        self._encoding = encoding
        self._placed: tuple[str, int, Position] | None = None

    def __call__(self, update: PartialUpdate) -> None:
        start = self._position(update.completion_id, update.document_text, update.offset)
        end = start
        if update.end_offset != update.offset:
            end = position_at(update.document_text, update.end_offset, self._encoding())
        self._notify(
            PARTIAL_COMPLETION,
            {
                "uri": update.uri,
                "completionId": update.completion_id,
                "version": update.version,
                "text": update.text,
                "done": update.done,
                "range": {
                    "start": {"line": start.line, "character": start.character},
                    "end": {"line": end.line, "character": end.character},
                },
            },
        )

    def _position(self, completion: str, text: str, offset: int) -> Position:
        # Converting an offset walks the document; do it once per completion, not per token.
        placed = self._placed
        if placed is not None and placed[0] == completion and placed[1] == offset:
            return placed[2]
        position = position_at(text, offset, self._encoding())
        self._placed = (completion, offset, position)
        return position
