"""The guard over pygls' internals: bad input gets a clear error, never silence or a crash.

pygls 2.1 (pinned) leaves three holes that a confused or hostile client can hit:

* a request whose params do not deserialize (wrong types, negative positions) gets no response
  at all, so the client waits forever; here it gets `InvalidParams` (-32602) with its id;
* a request or notification without `params` (allowed by JSON-RPC) cannot be structured;
  here `params` defaults to null;
* the stdio reader only recognises a header line that is exactly `Content-Length: N\\r\\n`, so a
  body without a trailing newline followed by garbage swallows every later message; here the
  header is found anywhere in the line, absurd lengths are refused, and a body that is not
  UTF-8 is decoded with replacement characters instead of being dropped.

Errors that have no request id to answer (unparseable JSON, a notification with bad params,
a reply of the wrong shape to one of our requests, see lsp/replies.py) go to the log and to the
client as `window/logMessage`, once per kind (later ones of a kind to the debug log), without
payloads: they may hold source code. A `textDocument/didChange` that cannot be applied is handed to
`on_bad_change`, so the server can stop trusting that document (see docs/reliability.md).

This module (with lsp/replies.py and lsp/server.py's `_start_io_async`) is the only code that
reaches into pygls below its public API; `RELIES_ON` lists every private member it uses, and
tests/unit/lsp/test_pygls_guard.py fails when a pygls upgrade moves one:

* `LanguageServerProtocol._execute_handler(msg_id, handler, callback, args, kwargs)`,
  overridden to drop the futures of notifications; `_send_handler_result` (how a request's
  reply callback is told apart), `_request_futures` (the table of running handlers),
  `_send_response` (answering a rejected request), `_converter` and `_result_types` (reading
  replies, lsp/replies.py), `fm.features` (the registered handlers);
* the built-in document handlers `lsp_text_document__did_open`, `__did_change`,
  `__did_close`, replaced (by name, with `lsp_method`) so that pygls keeps no second copy;
* `LanguageServer._stop_event` (set by our stdio loop) and `_start_io_async` (replaced by
  `serve_stdio`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from cattrs import Converter
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method

from copilot_lsp.lsp.replies import BadReply, MsgId, PendingReplies
from copilot_lsp.lsp.stdin import MessageReader, open_reader

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""A Content-Length above this is treated as a corrupt header, not as a 40 GB allocation."""
UINTEGER_MAX = 2**31 - 1
_HEADER = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n?$", re.IGNORECASE)

_KEY_FIELDS = {
    types.CANCEL_REQUEST: "id",
    types.PROGRESS: "token",
    types.WINDOW_WORK_DONE_PROGRESS_CANCEL: "token",
}
"""Params pygls uses as dict keys: lsprotocol lets any JSON value through as an id or a
progress token, and a list there raised `unhashable type` in pygls' handler."""

RELIES_ON: dict[str, tuple[str, ...]] = {
    "LanguageServerProtocol": (
        "_execute_handler",
        "_send_handler_result",
        "_request_futures",
        "_send_response",
        "_converter",
        "_result_types",
        "fm",
        "lsp_text_document__did_open",
        "lsp_text_document__did_change",
        "lsp_text_document__did_close",
    ),
    "LanguageServer": ("_stop_event", "_start_io_async"),
}
"""The private members of pygls this package relies on, by the class that has them (on an
instance: some are set in `__init__`)."""

BadChangeListener = Callable[[str, str], None]
"""Hears `(uri, reason)` when a didChange for `uri` could not be applied."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message that could not be structured; answered (requests) or reported (the rest)."""

    msg_id: int | str | None
    method: str | None
    error: JsonRpcException
    uri: str | None = None


class CopilotProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers malformed requests instead of dropping them."""

    def __init__(
        self,
        server: LanguageServer,
        converter: Converter,
        on_bad_change: BadChangeListener | None = None,
    ) -> None:
        super().__init__(server, converter)
        self.on_bad_change = on_bad_change
        self.replies = PendingReplies()
        self._reported: set[str] = set()

    def send_request(
        self,
        method: str,
        params: Any | None = None,
        callback: Callable[[Any], None] | None = None,
        msg_id: MsgId | None = None,
    ) -> Any:
        msg_id = msg_id if msg_id is not None else str(uuid.uuid4())
        self.replies.sent(msg_id, method)  # before sending: the reply may come at once
        return super().send_request(method, params, callback, msg_id)

    # pygls keeps its own copy of every open document besides ours (DocumentStore): twice the
    # memory for a 10 MB file, and an edit its copy cannot take (an unknown document, a range
    # it rejects) raises before our handler runs, so our copy silently falls behind. These
    # three skip that copy; nothing here uses `workspace.get_text_document`.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Iterator[Any]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Iterator[Any]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(
        self, params: types.DidCloseTextDocumentParams
    ) -> Iterator[Any]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _execute_handler(
        self,
        msg_id: MsgId,
        handler: Callable[..., Any],
        callback: Callable[[Any], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """pygls files the future of every generator, async or threaded handler under
        `msg_id` in `_request_futures`, and only a request's reply removes it again: for a
        notification, or a step of a generator handler (made-up ids nobody can cancel), the
        entry stayed forever. Every didChange is one (a generator, above): ~3 KiB held per
        keystroke, 184 MiB over a 30-minute soak. Such an entry now goes when it is done."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        replies = isinstance(callback, functools.partial) and (
            callback.func == self._send_handler_result
        )
        if replies:  # a client's request: sending its reply removes the entry
            return
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(functools.partial(self._forget_handler, msg_id))

    def _forget_handler(self, msg_id: MsgId, future: Any) -> None:
        # A cancelled one was already taken out ($/cancelRequest pops before it cancels), or
        # is being cancelled by pygls' `shutdown` while it iterates over the table: removing
        # it here would change the table under that loop.
        if not future.cancelled():
            self._request_futures.pop(msg_id, None)

    def _user_handler(self, method: str, params: Any) -> Iterator[Any]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data:
            return data  # a nested object: structured with its parent
        method = data.get("method")
        if "id" in data and "method" not in data:  # a reply to one of our requests
            return self.replies.structure_reply(data, self._converter, self._result_types)
        if not isinstance(method, str):
            return Rejected(data.get("id"), None, JsonRpcInvalidRequest("no method name"))
        data.setdefault("params", None)
        if method == types.TEXT_DOCUMENT_DID_CHANGE:
            _clamp_huge_numbers(data["params"])
        key = _KEY_FIELDS.get(method)
        if key is not None and not _is_id(_field(data["params"], key)):
            reason = f"invalid params for {method}: {key} must be an integer or a string"
            return Rejected(data.get("id"), method, JsonRpcInvalidParams(reason))
        default = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
        message_type = self.get_message_type(method) or default
        try:
            return self._converter.structure(data, message_type)
        except ClassValidationError as error:
            reason = _summary(error)
            return Rejected(
                data.get("id"),
                method,
                JsonRpcInvalidParams(f"invalid params for {method}: {reason}"),
                _uri(data["params"]),
            )
        except Exception as error:
            logger.warning("cannot read a %s message: %s", method, type(error).__name__)
            return Rejected(
                data.get("id"), method, JsonRpcInternalError(f"cannot read {method}: {error}")
            )

    def handle_message(self, message: Any) -> None:
        if isinstance(message, Rejected):
            self._reject(message)
            return
        if isinstance(message, BadReply):
            self._bad_reply(message)
            return
        if not hasattr(message, "jsonrpc"):
            self.report_unreadable(
                f"not a JSON-RPC object (a JSON {type(message).__name__})",
                kind="not a JSON-RPC object",
            )
            return
        super().handle_message(message)

    def _reject(self, rejected: Rejected) -> None:
        if rejected.msg_id is not None:
            logger.warning("answered request %s with an error: %s", rejected.msg_id, rejected.error)
            self._send_response(rejected.msg_id, error=rejected.error.to_response_error())
            return
        self.report_unreadable(rejected.error.message, kind=f"bad params of {rejected.method}")
        if rejected.method == types.TEXT_DOCUMENT_DID_CHANGE and rejected.uri is not None:
            listener = self.on_bad_change
            if listener is not None:
                listener(rejected.uri, rejected.error.message)

    def _bad_reply(self, bad: BadReply) -> None:
        """Fail the request waiting for this reply (it handles that), and say so once."""
        self.report_unreadable(bad.kind, kind=bad.kind)
        waiting = self._request_futures.pop(bad.msg_id, None) if bad.msg_id is not None else None
        if waiting is not None and not waiting.done():
            waiting.set_exception(JsonRpcInvalidParams(f"the client sent {bad.kind}"))

    def report_unreadable(self, reason: str, kind: str | None = None) -> None:
        """Tell the client (log panel, not a popup) and our log about a message we dropped.

        Once per `kind` (default: the reason itself): a client that sends one odd message
        usually sends it on every occasion, and the log should not fill with it.
        """
        kind = kind or reason
        if kind in self._reported:
            logger.debug("dropped a message: %s", reason)
            return
        self._reported.add(kind)
        logger.warning("dropped a message: %s", reason)
        self.notify(
            types.WINDOW_LOG_MESSAGE,
            types.LogMessageParams(
                types.MessageType.Error, f"copilot-lsp: dropped a message: {reason}"
            ),
        )


def _summary(error: ClassValidationError) -> str:
    """Which fields were wrong, without their values (they may be source code)."""
    notes: list[str] = []
    for sub in error.exceptions:
        for note in getattr(sub, "__notes__", []) or []:
            notes.append(str(note).replace("Structuring class ", ""))
        if isinstance(sub, ClassValidationError):
            notes.append(_summary(sub))
        elif not getattr(sub, "__notes__", None):
            notes.append(type(sub).__name__)
    return "; ".join(dict.fromkeys(n for n in notes if n)) or "wrong types"


def _field(params: Any, name: str) -> Any:
    return params.get(name) if isinstance(params, dict) else None


def _is_id(value: Any) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def _uri(params: Any) -> str | None:
    document = params.get("textDocument") if isinstance(params, dict) else None
    uri = document.get("uri") if isinstance(document, dict) else None
    return uri if isinstance(uri, str) else None


def _clamp_huge_numbers(params: Any) -> None:
    """Positions above uinteger's range mean "past the end", which the spec clamps anyway."""
    changes = params.get("contentChanges") if isinstance(params, dict) else None
    for change in changes if isinstance(changes, list) else []:
        span = change.get("range") if isinstance(change, dict) else None
        for end in ("start", "end"):
            point = span.get(end) if isinstance(span, dict) else None
            if not isinstance(point, dict):
                continue
            for key in ("line", "character"):
                value = point.get(key)
                if isinstance(value, int) and value > UINTEGER_MAX:
                    point[key] = UINTEGER_MAX


async def read_messages(
    stop_event: threading.Event, reader: MessageReader, protocol: CopilotProtocol
) -> None:
    """pygls' stdio loop with tolerant framing (see the module docstring)."""
    length: int | None = None
    while not stop_event.is_set():
        header = await reader.readline()
        if not header:
            break
        match = _HEADER.search(header)
        if match is not None:
            value = int(match.group(1))
            if value > MAX_MESSAGE_BYTES:
                protocol.report_unreadable(
                    f"absurd Content-Length {value}", kind="absurd Content-Length"
                )
                length = None
            else:
                length = value
            continue
        if header.strip():
            continue  # another header (Content-Type) or garbage between messages
        if length is None:
            continue  # a blank line without a length before it: keep looking
        body = await reader.readexactly(length) if length else b""
        length = None
        if not body:
            protocol.report_unreadable("empty body")
            continue
        try:
            data = json.loads(body.decode("utf-8", errors="replace"))
        except ValueError as error:
            protocol.report_unreadable(f"not JSON ({error})", kind="not JSON")
            continue
        try:
            # Only the top-level object is a message: a nested object that happens to hold a
            # `jsonrpc` key is data (pygls' object_hook would structure it as a message).
            message = protocol.structure_message(data) if isinstance(data, dict) else data
            protocol.handle_message(message)
        except Exception as error:
            logger.warning("failed to handle a message: %s", type(error).__name__, exc_info=True)


def serve_stdio(
    server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """Serve over stdio like pygls' `start_io`, with `read_messages` as the reader loop."""
    protocol = server.protocol
    assert isinstance(protocol, CopilotProtocol)
    stop = threading.Event()
    server._stop_event = stop
    sink = stdout or sys.stdout.buffer
    protocol.set_writer(StdoutWriter(sink))
    source = stdin or sys.stdin.buffer

    async def serve() -> None:
        reader = await open_reader(source, sink, server.thread_pool)
        await read_messages(stop, reader, protocol)

    try:
        asyncio.run(serve())
    except BrokenPipeError:
        logger.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
