"""Nothing is kept per keystroke: pygls filed the future of every generator/async notification
handler in its request table under a made-up id that no reply ever removes, so each didChange
(one keystroke) held ~3 KiB for the life of the server (the 30-minute soak: +184 MiB, linear).

The real handlers of lsp/server.py on a fresh server, fed the messages an editor sends while
someone types; the table and the live futures must stay bounded however long they type.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
from typing import Any

from lsprotocol import types

from copilot_lsp.lsp import server as lsp_server
from copilot_lsp.lsp.server import CopilotServer

URI = "file:///work/typing.py"
KEYSTROKES = 1500


class Sink:
    def write(self, data: Any) -> None:
        pass

    def close(self) -> None:
        pass


def live_futures() -> int:
    gc.collect()
    return sum(type(o) is concurrent.futures.Future for o in gc.get_objects())


def serve() -> CopilotServer:
    ls = CopilotServer()
    for method, handler in (
        (types.TEXT_DOCUMENT_DID_OPEN, lsp_server.did_open),
        (types.TEXT_DOCUMENT_DID_CHANGE, lsp_server.did_change),
        (types.WORKSPACE_DID_CHANGE_CONFIGURATION, lsp_server.did_change_configuration),
    ):
        ls.feature(method)(handler)
    ls.protocol.set_writer(Sink())
    return ls


def send(ls: CopilotServer, message: dict[str, Any]) -> None:
    protocol = ls.protocol
    protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))


async def test_typing_leaves_nothing_behind_in_the_request_table() -> None:
    ls = serve()
    send(ls, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    send(ls, {"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": ""}}})  # fmt: skip
    before = live_futures()
    typed = ""
    for version in range(2, KEYSTROKES + 2):
        character = "abcdefghij\n"[version % 11]
        line, column = typed.count("\n"), len(typed.rsplit("\n", 1)[-1])
        at = {"line": line, "character": column}
        send(ls, {"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": URI, "version": version},
            "contentChanges": [{"range": {"start": at, "end": at}, "text": character}],
        }})  # fmt: skip
        typed += character
        if version % 100 == 0:  # an async notification handler now and then
            send(ls, {"method": "workspace/didChangeConfiguration", "params": {
                "settings": {"copilotLsp": {"completion": {"debounceMs": 30}}}}})  # fmt: skip
            await asyncio.sleep(0)
    await asyncio.sleep(0.05)
    assert ls.service.workspace.documents.get(URI).text == typed  # every edit was applied
    assert len(ls.protocol._request_futures) == 0
    assert live_futures() - before < 20  # was one per keystroke


class Replies:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


async def test_shutdown_with_a_notification_still_running_is_answered() -> None:
    """pygls' `shutdown` cancels what is in the table while iterating over it; taking a
    cancelled entry out from its done-callback changed the table under that loop."""
    ls = CopilotServer()
    release = asyncio.Event()

    async def slow_change(params: types.DidChangeTextDocumentParams) -> None:
        await release.wait()

    ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)(slow_change)
    replies = Replies()
    ls.protocol.set_writer(replies)
    send(ls, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    at = {"line": 0, "character": 0}
    send(ls, {"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": URI, "version": 2},
        "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}],
    }})  # fmt: skip
    await asyncio.sleep(0.01)
    send(ls, {"id": 2, "method": "shutdown", "params": None})
    await asyncio.sleep(0.05)
    release.set()
    answer = [m for m in replies.sent if b'"id": 2' in m or b'"id":2' in m]
    assert answer and b'"error"' not in answer[0], replies.sent[-1]
