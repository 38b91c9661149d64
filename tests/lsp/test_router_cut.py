"""A replica killed behind a router mid-stream: vllm-router closes the client's connection
cleanly, with no error event and no `[DONE]` (measured: tests/cluster, docs/serving.md). The
server must count that stream as failed — no half-written block shown as the suggestion — and
recover at once."""

from __future__ import annotations

import pytest
from lsprotocol import types

from copilot_lsp.testing.fake_engine import Reply
from tests.lsp.conftest import FakeSession as Session
from tests.lspclient import collect_partials

pytestmark = pytest.mark.timeout(60)

SOURCE = "def total(items):\n    \n"
# The prompt ends before the cursor line's indentation; the output is re-aligned to the cursor.
BLOCK = ["\n    result = 0\n", "    for item in items:\n", "        result += item\n"]
BLOCK += ["    return result\n"]
WHOLE = "result = 0\n    for item in items:\n        result += item\n    return result"


async def test_a_stream_cut_without_done_is_a_failure_not_a_short_completion(
    session: Session,
) -> None:
    partials = collect_partials(session)

    await session.initialize({"editor": {"streaming": True, "partialIntervalMs": 0}})
    session.engine.replies = [
        Reply(chunks=BLOCK, cut_after=2),  # two lines written, then the replica is gone
        Reply(chunks=BLOCK),
    ]
    uri = session.open(SOURCE)
    assert await session.complete(uri, 1, 4) == []
    assert session.engine.requests[0].chunks_sent == 2
    stats = await session.stats()
    assert stats["outcomes"] == {"error": 1}
    # whatever ghost text the editor drew from the stream is withdrawn by the final notification
    assert partials and partials[-1]["done"] and partials[-1]["text"] == ""
    errors = [m for m in session.client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1
    # the next completion (the router's retry lands on a live replica) is whole
    items = await session.complete(uri, 1, 4)
    assert [item.insert_text for item in items] == [WHOLE]


async def test_a_stream_cut_after_its_finish_reason_keeps_the_completion(
    session: Session,
) -> None:
    """The text is whole once the engine said why it stopped; only `[DONE]` was lost."""
    await session.initialize()
    session.engine.replies = [Reply(chunks=BLOCK, cut_after=len(BLOCK) + 1)]
    uri = session.open(SOURCE)
    items = await session.complete(uri, 1, 4)
    assert [item.insert_text for item in items] == [WHOLE]
    assert session.engine.requests[0].chunks_sent == len(BLOCK) + 1  # [DONE] never sent
