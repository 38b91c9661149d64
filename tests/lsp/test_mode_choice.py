"""One line or a block, decided from the lines below the cursor, through the real server."""

from __future__ import annotations

import pytest

from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import until
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(60)

HOLE = "def mean(xs):\n    total = sum(xs)\n    \n    return total / count\n"
END_OF_BLOCK = "def mean(xs):\n    total = sum(xs)\n    \n\nprint(mean([1]))\n"
STREAM = ["\n    count = len(xs)\n", "    print(count)\n", "    return total / count\n"]
MORE = ["    x = 1\n"] * 30


async def test_hole_between_statements_gets_one_statement_and_the_stream_is_closed(
    session: Session,
) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=STREAM + MORE, delay_s=0.01)
    uri = session.open(HOLE)
    items = await session.complete(uri, 2, 4)
    assert [item.insert_text for item in items] == ["count = len(xs)"]
    request = session.engine.requests[0]
    await until(lambda: request.disconnected)
    assert request.chunks_sent < len(STREAM + MORE)
    stats = await session.stats()
    assert stats["recent"][-1]["mode"] == "single-line"


async def test_blank_line_at_the_end_of_a_block_gets_a_block(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=[*STREAM[:1], "    return total\n", "\n", "x = 2\n"])
    uri = session.open(END_OF_BLOCK)
    items = await session.complete(uri, 2, 4)
    assert [item.insert_text for item in items] == ["count = len(xs)\n    return total"]
    stats = await session.stats()
    assert stats["recent"][-1]["mode"] == "multi-line"
