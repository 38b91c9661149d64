"""Alternatives over stdio: an explicit request gets several, typing gets one (scripted engine)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from copilot_lsp.lsp import methods
from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import until
from tests.lsp.conftest import FakeSession as Session
from tests.lspclient import collect_partials

pytestmark = pytest.mark.timeout(60)

SOURCE = "def total(items):\n    \n\nprint(total([1]))\n"
GREEDY = ["\n    return", " sum(items)\n", "\n", "def other():\n"]
SAMPLED = [
    [
        "\n    result = 0\n",
        "    for item in items:\n",
        "        result += item\n",
        "    return result\n",
        "\n",
    ],
    ["\n    return  sum(items)\n", "\n"],  # the greedy answer but for whitespace
    ["\n    return len(items)\n", "\n"],
]


def ids(items: list[Any]) -> list[str]:
    return [item.command.arguments[0] for item in items]


async def test_an_invoked_request_returns_distinct_alternatives_greedy_first(
    session: Session,
) -> None:
    partials = collect_partials(session)

    await session.initialize(
        {"completion": {"alternatives": 4}, "editor": {"streaming": True, "partialIntervalMs": 0}}
    )
    session.engine.default = Reply(chunks=GREEDY, delay_s=0.01)
    session.engine.sampled = [Reply(choices=SAMPLED, delay_s=0.01)]
    uri = session.open(SOURCE)
    items = await session.complete(uri, 1, 4)
    assert [item.insert_text for item in items] == [
        "return sum(items)",
        "result = 0\n    for item in items:\n        result += item\n    return result",
        "return len(items)",
    ]
    first = ids(items)[0]
    assert ids(items) == [first, f"{first}#2", f"{first}#3"]
    assert all(
        item.range == types.Range(types.Position(1, 4), types.Position(1, 4)) for item in items
    )
    (greedy,) = session.engine.requests
    (sampled,) = session.engine.sampled_requests
    assert "n" not in greedy.body and greedy.body["temperature"] == 0.0
    assert sampled.body["n"] == 3 and sampled.body["temperature"] == 0.4
    assert sampled.body["prompt"] == greedy.body["prompt"]
    # The streamed preview follows the greedy choice only.
    await until(lambda: partials and partials[-1]["done"])
    assert {p["completionId"] for p in partials} == {first}
    assert all("return sum(items)".startswith(p["text"]) for p in partials)
    # Accepting the second suggestion counts as an accepted alternative.
    await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=methods.ACCEPT_COMMAND, arguments=[f"{first}#2"])
    )
    stats = await session.stats()
    assert stats["outcomes"]["accepted"] == 1
    assert stats["outcomes"]["accepted_alternative"] == 1
    record = stats["recent"][-1]
    assert record["alternatives"] == 3 and record["accepted_rank"] == 2
    assert record["alternative_tokens"] > 0


async def test_an_automatic_request_returns_one_and_asks_for_one(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=GREEDY)
    session.engine.sampled = [Reply(choices=SAMPLED[:2])]
    uri = session.open(SOURCE)
    items = await session.complete(uri, 1, 4, automatic=True)
    assert [item.insert_text for item in items] == ["return sum(items)"]
    (greedy,) = session.engine.requests
    assert "n" not in greedy.body
    assert session.engine.sampled_requests == []
    assert "alternatives" not in (await session.stats())["recent"][-1]


async def test_cancelling_an_invoked_request_closes_both_engine_streams(
    session: Session,
) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["tick"] * 100, delay_s=0.05)
    session.engine.sampled = [Reply(choices=[["tock"] * 100] * 2, delay_s=0.05)]
    uri = session.open("x = \n")
    pending = session.request(uri, 0, 4, msg_id="to-cancel")
    engine = session.engine
    await until(
        lambda: (
            engine.requests
            and engine.requests[0].chunks_sent >= 2
            and engine.sampled_requests
            and engine.sampled_requests[0].chunks_sent >= 2
        )
    )
    session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="to-cancel"))
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(pending, 10)
    assert raised.value.code == -32800
    await until(lambda: engine.requests[0].disconnected and engine.sampled_requests[0].disconnected)
    assert engine.sampled_requests[0].chunks_sent < 200
    assert (await session.stats())["outcomes"].get("cancelled") == 1


async def test_a_sampled_request_that_fails_leaves_the_greedy_suggestion(
    session: Session,
) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=GREEDY)
    session.engine.sampled = [Reply(status=500)]
    uri = session.open(SOURCE)
    items = await session.complete(uri, 1, 4)
    assert [item.insert_text for item in items] == ["return sum(items)"]
    stats = await session.stats()
    assert stats["outcomes"]["shown"] == 1 and "error" not in stats["outcomes"]
