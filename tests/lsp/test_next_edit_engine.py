"""Next edits sent to a second engine (`nextEditSuggestions.engine`), over stdio, with two
scripted engines: A (the main one, `engine.url`) and B (a dedicated next-edit model)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.lsp.conftest import FakeSession as Session
from tests.lsp.test_next_edit import TEXT, URI, ask, edits, rewritten

pytestmark = pytest.mark.timeout(60)

KEY = "sk-next-edit-secret"
COMPLETION = "x + 1"
DEMO = "file:///work/demo.py"


@pytest_asyncio.fixture
async def engine_b() -> AsyncIterator[FakeEngine]:
    engine = await FakeEngine().start()
    engine.models = ["sweep-next-edit-1.5b"]
    try:
        yield engine
    finally:
        await engine.stop()


def options(url: str) -> dict[str, Any]:
    return {"nextEditSuggestions": {"enabled": True, "engine": {"url": url, "apiKey": KEY}}}


def completions(engine: FakeEngine) -> list[dict[str, Any]]:
    return [received.body for received in engine.requests]


def warnings(session: Session) -> list[str]:
    return [m.message for m in session.client.messages if m.type == types.MessageType.Warning]


async def test_completions_go_to_the_main_engine_and_next_edits_to_the_second(
    session: Session, engine_b: FakeEngine
) -> None:
    await session.initialize(options(engine_b.url))
    session.engine.default = Reply(chunks=[COMPLETION, "\n"])
    engine_b.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    session.open("x = 1\nresult = \n", DEMO)

    [item] = await session.complete(DEMO, 1, 9)
    assert COMPLETION in item.insert_text
    (edit,) = await edits(ask(session, 1))
    assert edit["text"] == "        self.z = z\n"

    [completion] = completions(session.engine)  # A: the completion only
    assert "<|file_sep|>" not in completion["prompt"]
    [next_edit] = engine_b.requests  # B: the next edit only
    assert next_edit.headers["authorization"] == f"Bearer {KEY}"
    assert all("authorization" not in r.headers for r in session.engine.requests)
    # B serves `sweep-next-edit-1.5b`: the qwen-repo format, whatever A serves.
    prompt = next_edit.body["prompt"]
    assert "<|file_sep|>original/" in prompt and "<|file_sep|>current/" in prompt
    assert "<|cursor|>" in prompt
    assert prompt.endswith("\n") and prompt.rsplit("<|file_sep|>", 1)[1].startswith("updated/")
    assert "<|file_sep|>" in next_edit.body["stop"]
    assert next_edit.body["temperature"] == 0.0
    stats = await session.stats()
    assert stats["next_edit_engine"] == {"url": engine_b.url, "failures_in_a_row": 0}
    assert KEY not in str(stats)


async def test_without_a_second_engine_next_edits_go_to_the_main_one(
    session: Session, engine_b: FakeEngine
) -> None:
    await session.initialize({"nextEditSuggestions": {"enabled": True}})
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    session.open("x = 1\nresult = \n", DEMO)
    assert len(await edits(ask(session, 1))) == 1
    [request] = completions(session.engine)
    assert "before the next edit:" in request["prompt"]  # the fake model: the plain format
    assert engine_b.requests == []
    assert (await session.stats())["next_edit_engine"]["url"] is None


async def test_the_second_engine_down_quiets_next_edits_and_spares_completions(
    session: Session, engine_b: FakeEngine
) -> None:
    down = engine_b.url
    await engine_b.stop()  # nothing listens there any more
    # No backoff: every next edit asks the dead engine (tests/unit/nextedit covers the pause).
    await session.initialize({**options(down), "engine": {"backoffMaxS": 0}})
    session.engine.default = Reply(chunks=[COMPLETION, "\n"])
    session.open(TEXT, URI)
    session.open("x = 1\nresult = \n", DEMO)

    assert await edits(ask(session, 1)) == []
    [item] = await session.complete(DEMO, 1, 9)
    assert COMPLETION in item.insert_text
    for _ in range(2):
        assert await edits(ask(session, 1)) == []
        [item] = await session.complete(DEMO, 1, 9)
        assert COMPLETION in item.insert_text

    told = [m for m in warnings(session) if "next-edit engine" in m]
    assert len(told) == 1, told  # one message per outage
    assert down in told[0] and "Inline completions are not affected" in told[0]
    assert not [m for m in warnings(session) if "completions are paused" in m]
    assert all(KEY not in m.message for m in session.client.messages)
    assert all(KEY not in m.message for m in session.client.log_messages)
    assert all("<|file_sep|>" not in body["prompt"] for body in completions(session.engine))
    stats = await session.stats()
    assert stats["next_edits"]["outcomes"] == {"error": 3}
    assert stats["outcomes"].get("shown") == 3  # the completions
