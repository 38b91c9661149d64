"""A suggestion still valid after keystrokes is answered from it, over stdio, no new request."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import until
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(60)

SOURCE = "def total(items):\n    \n"
SUGGESTION = "result = 0\n    for item in items:\n        result += item\n    return result"


def edit(session: Session, uri: str, version: int, line: int, start: int, end: int, text: str):
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    types.Range(types.Position(line, start), types.Position(line, end)), text
                )
            ],
        )
    )


async def test_typing_accepting_a_line_and_backspacing_reuse_the_suggestion(
    session: Session,
) -> None:
    await session.initialize({"completion": {"debounceMs": 0}})
    # The prompt ends before the blank line (held back): the model writes it first.
    session.engine.default = Reply(chunks=["\n    " + SUGGESTION + "\n\nprint(1)\n"])
    uri = session.open(SOURCE)
    items = await session.complete(uri, 1, 4, automatic=True)
    assert [item.insert_text for item in items] == [SUGGESTION], await session.stats()
    # Typed "res": the rest.
    edit(session, uri, 2, 1, 4, 4, "res")
    items = await session.complete(uri, 1, 7, automatic=True)
    assert [item.insert_text for item in items] == [SUGGESTION[3:]]
    # Two backspaces: the rest from there.
    edit(session, uri, 3, 1, 5, 7, "")
    items = await session.complete(uri, 1, 5, automatic=True)
    assert [item.insert_text for item in items] == [SUGGESTION[1:]]
    # Partial accept of the first line (the editor inserts it, with the next line's indent).
    edit(session, uri, 4, 1, 5, 5, "esult = 0\n    ")
    items = await session.complete(uri, 2, 4, automatic=True)
    assert [item.insert_text for item in items] == [SUGGESTION[len("result = 0\n    ") :]]
    assert len(session.engine.requests) == 1
    modes = [record["mode"] for record in (await session.stats())["recent"]]
    assert modes[-3:] == ["type-through"] * 3
    # Backspaced back to where it was shown (the accepted line deleted again): all of it.
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=5, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(SOURCE)],
        )
    )
    items = await session.complete(uri, 1, 4, automatic=True)
    assert [item.insert_text for item in items] == [SUGGESTION]
    assert len(session.engine.requests) == 1
    # Something else typed: a fresh request.
    edit(session, uri, 6, 1, 4, 4, "z")
    await session.complete(uri, 1, 5, automatic=True)
    assert len(session.engine.requests) == 2


async def test_typing_along_with_a_stream_after_the_editors_cancel_takes_it_over(
    session: Session,
) -> None:
    await session.initialize({"completion": {"debounceMs": 0}})
    words = ("\n    " + SUGGESTION + "\n\nprint(1)\n").split(" ")
    chunks = [word + " " for word in words[:-1]] + [words[-1]]
    session.engine.default = Reply(chunks=chunks, delay_s=0.1)
    uri = session.open(SOURCE)
    first = session.request(uri, 1, 4, automatic=True, msg_id="first")
    await until(lambda: session.engine.requests and session.engine.requests[0].chunks_sent >= 6)
    # As editors do on a keystroke: the change, the cancel of the open request, a new request.
    edit(session, uri, 2, 1, 4, 4, "res")
    session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="first"))
    items = await session.complete(uri, 1, 7, automatic=True)
    with pytest.raises(JsonRpcException):
        await first
    assert [item.insert_text for item in items] == [SUGGESTION[3:]]
    assert len(session.engine.requests) == 1
    assert session.engine.requests[0].chunks_sent > 6  # the stream went on after the cancel
    recent = (await session.stats())["recent"]
    assert [(r["mode"], r["outcome"]) for r in recent][-1] == ("adopted", "shown")
