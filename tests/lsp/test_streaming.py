"""Streaming to editors and accept tracking, over stdio against the scripted engine."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from lsprotocol import types

from copilot_lsp.lsp import methods
from copilot_lsp.testing.fake_engine import Reply
from tests.lsp.conftest import FakeSession as Session
from tests.lspclient import collect_partials

pytestmark = pytest.mark.timeout(60)

SOURCE = "def total(items):\n    \n\nprint(total([1]))\n"
# One indentation level, so that only streaming is under test here, not re-indentation.
CHUNKS = ["\n    result", " = 0\n", "    result +=", " len(items)\n", "    result *= 2\n"]
CHUNKS += ["    return result\n", "\n", "def other():\n", "    pass\n"]
FULL = "result = 0\n    result += len(items)\n    result *= 2\n    return result"


async def settle(condition: Any, within: float = 30.0) -> None:
    """Wait for something the server sends after its answer (notifications, log lines)."""
    for _ in range(int(within / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def test_streaming_client_sees_the_text_grow_before_the_answer(session: Session) -> None:
    partials = collect_partials(session)
    await session.initialize({"editor": {"streaming": True, "partialIntervalMs": 0}})

    async def one_by_one(index: int) -> None:
        # Each of the first five chunks goes out once the editor has seen the one before.
        if 1 <= index <= 4:
            await settle(lambda: len(partials) >= index)

    session.engine.default = Reply(chunks=CHUNKS, gate=one_by_one)
    uri = session.open(SOURCE)
    items = await session.complete(uri, 1, 4)
    assert [item.insert_text for item in items] == [FULL]
    await settle(lambda: partials and partials[-1]["done"])
    completion_id = items[0].command.arguments[0]
    assert {p["completionId"] for p in partials} == {completion_id}
    assert all(p["uri"] == uri and p["version"] == 1 for p in partials)
    assert partials[-1]["text"] == FULL
    assert partials[-1]["range"] == {
        "start": {"line": 1, "character": 4},
        "end": {"line": 1, "character": 4},
    }
    growing = [p["text"] for p in partials if not p["done"]]
    # Token by token, the unfinished line included: "result" shows before "result = 0".
    assert growing[:4] == [
        "result",
        "result = 0",
        "result = 0\n    result +=",
        "result = 0\n    result += len(items)",
    ]
    assert all(FULL.startswith(text) for text in growing)
    assert all(len(after) > len(before) for before, after in itertools.pairwise(growing))


async def test_plain_clients_get_no_notifications_and_one_full_answer(session: Session) -> None:
    partials = collect_partials(session)
    await session.initialize()
    session.engine.default = Reply(chunks=CHUNKS, delay_s=0.01)
    uri = session.open(SOURCE)
    assert [item.insert_text for item in await session.complete(uri, 1, 4)] == [FULL]
    await session.stats()  # a round trip: whatever the server sent before has arrived
    assert partials == []


async def test_early_answer_then_the_rest_from_the_same_stream(session: Session) -> None:
    await session.initialize({"editor": {"earlyAnswerMs": 0}})
    answered = asyncio.Event()

    async def after_the_first_line(index: int) -> None:
        # The first line is complete once the second one starts (chunk 2): the rest of the
        # stream waits until the early answer has arrived.
        if index == 3:
            await answered.wait()

    session.engine.default = Reply(chunks=CHUNKS, gate=after_the_first_line)
    uri = session.open(SOURCE)
    first = await session.complete(uri, 1, 4)
    answered.set()
    # Whole lines only: the first line, without the unfinished one the engine holds back.
    assert [item.insert_text for item in first] == ["result = 0"]
    second = await session.complete(uri, 1, 4)
    assert [item.insert_text for item in second] == [FULL]
    assert first[0].command.arguments == second[0].command.arguments
    assert len(session.engine.requests) == 1
    # Served in full: asking again at the same place is a fresh request.
    await session.complete(uri, 1, 4)
    assert len(session.engine.requests) == 2


async def test_accept_tracking_reaches_stats_and_log(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["value_1"])
    uri = session.open("x = \n")
    ids = []
    for _ in range(4):
        items = await session.complete(uri, 0, 4)
        ids.append(items[0].command.arguments[0])
    notify = session.client.protocol.notify
    for completion_id in ids:
        notify(methods.DID_SHOW, {"completionId": completion_id})
    notify(methods.DID_SHOW, {"completionId": ids[0]})  # a redraw: still one
    notify(methods.DID_PARTIALLY_ACCEPT, {"completionId": ids[1], "acceptedLength": 3})
    notify(methods.DID_PARTIALLY_ACCEPT, {"completionId": ids[1], "acceptedLength": 5})
    notify(methods.DID_DISMISS, {"completionId": ids[2]})
    # GitHub Copilot's shape: the id is the accept command's argument.
    command = {"title": "a", "command": methods.ACCEPT_COMMAND, "arguments": [ids[3]]}
    item = {"insertText": "value_1", "command": command}
    notify(methods.COPILOT_DID_PARTIALLY_ACCEPT, {"item": item, "acceptedLength": 2})
    await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=methods.ACCEPT_COMMAND, arguments=[ids[0]])
    )
    stats = await session.stats()
    assert stats["outcomes"]["displayed"] == 4
    assert stats["outcomes"]["accepted"] == 1
    assert stats["outcomes"]["partially_accepted"] == 2
    assert stats["outcomes"]["dismissed"] == 1
    assert stats["acceptance"]["offered"] == 4
    assert stats["acceptance"]["rate"] == 0.75
    assert stats["acceptance"]["chars_rate"] == round((7 + 5 + 2) / 28, 4)
    records = [
        json.loads(line)
        for line in (session.state_dir / "completions.jsonl").read_text().splitlines()
    ]
    assert {"id": ids[0], "displayed": True} in records
    assert {"id": ids[1], "feedback": "partially_accepted", "chars_accepted": 5} in records
    assert {"id": ids[2], "feedback": "dismissed", "chars_accepted": 0} in records
    assert {"id": ids[3], "feedback": "partially_accepted", "chars_accepted": 2} in records
    assert sum(1 for r in records if r.get("displayed")) == 4
