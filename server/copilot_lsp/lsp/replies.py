"""The client's replies to the server's own requests, read without trusting their shape.

pygls structures a reply with the result type of the request it answers and raises when the
shape is wrong (`null` instead of a list for `workspace/configuration`), from inside the JSON
decoder and outside the reader loop's error handling: one odd reply from a minimal client or
a plugin ended the server. Here a reply is read by `structure_reply`, which never raises:

* a reply to a request we sent becomes pygls' response message, or `BadReply` when its shape
  is wrong; the request waiting for it then fails with `InvalidParams`, which it handles;
* a reply whose id we never sent (or already had an answer for) is `BadReply` without a
  waiting request. pygls keeps the client's in-flight request ids and ours in one table, so
  such a reply must not reach it: it would "answer" one of the client's own requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cattrs import Converter
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.protocol.json_rpc import JsonRPCResponseMessage

MsgId = int | str

_LIST_RESULTS = frozenset({types.WORKSPACE_CONFIGURATION, types.WORKSPACE_WORKSPACE_FOLDERS})
"""Requests answered with a JSON array (or null where allowed), which cattrs would otherwise
also build from a string or an object (`"abc"` -> `("a", "b", "c")`)."""
_NULLABLE_RESULTS = frozenset({types.WORKSPACE_WORKSPACE_FOLDERS})


@dataclass(frozen=True, slots=True)
class BadReply:
    """A reply that cannot be handed to the request waiting for it (if any is)."""

    msg_id: MsgId | None
    """The id of our request it answers; None when it answers no request of ours."""
    method: str | None
    kind: str
    """What was wrong, without values (they may hold source code): one log line per kind."""


class PendingReplies:
    """The ids of the requests we sent and still wait for, with their methods."""

    def __init__(self) -> None:
        self._methods: dict[MsgId, str] = {}

    def sent(self, msg_id: MsgId, method: str) -> None:
        self._methods[msg_id] = method

    def structure_reply(
        self, data: dict[str, Any], converter: Converter, result_types: dict[Any, Any]
    ) -> Any:
        """pygls' response message for `data`, or `BadReply`; never raises."""
        msg_id = data.get("id")
        if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
            kind = "an error reply without an id" if "error" in data else "a reply without an id"
            return BadReply(None, None, kind)
        method = self._methods.pop(msg_id, None)
        result_type = result_types.pop(msg_id, None)
        if method is None:
            return BadReply(None, None, "a reply to an unknown request id")
        # The reply answers a request of ours, so it is delivered as JSON-RPC 2.0 whatever its
        # `jsonrpc` says: pygls drops other versions, and the request would wait forever.
        error = data.get("error")
        if error is not None:
            if not _is_response_error(error):
                return BadReply(msg_id, method, f"an unreadable error reply to {method}")
            message = {"jsonrpc": "2.0", "id": msg_id, "error": error}
            message_type: Any = types.ResponseErrorMessage
        else:
            result = data.get("result")
            if method in _LIST_RESULTS and not (
                isinstance(result, list) or (result is None and method in _NULLABLE_RESULTS)
            ):
                return BadReply(msg_id, method, f"a reply to {method} that is not a list")
            message = {"jsonrpc": "2.0", "id": msg_id, "result": result}
            message_type = result_type or JsonRPCResponseMessage
        try:
            return converter.structure(message, message_type)
        except (ClassValidationError, ValueError, TypeError, AttributeError):
            return BadReply(msg_id, method, f"a reply to {method} of the wrong shape")


def _is_response_error(error: Any) -> bool:
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and not isinstance(error.get("code"), bool)
        and isinstance(error.get("message"), str)
    )
