"""The engine client keeps its connection between completions (over real loopback HTTP to the
scripted engine): no new handshake per keystroke, yet an abandoned stream still closes its
connection (how vLLM learns to stop generating) and a connection the engine closed in the pool
costs nothing but a resend."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator

import pytest
import trustme

from copilot_lsp.engine.client import SPARE_DELAY_S, EngineClient
from copilot_lsp.engine.types import CompletionRequest
from copilot_lsp.errors import EngineUnavailable
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.conftest import until

REQUEST = CompletionRequest(prompt="def f(", max_tokens=8)


@pytest.fixture
async def engine() -> AsyncIterator[FakeEngine]:
    fake = await FakeEngine().start()
    yield fake
    await fake.stop()


@pytest.fixture
async def client(engine: FakeEngine) -> AsyncIterator[EngineClient]:
    client = EngineClient(engine.url, model="fake-model")
    yield client
    await client.aclose()


async def text_of(client: EngineClient) -> str:
    return "".join([chunk.text async for chunk in client.stream(REQUEST)])


async def test_completions_read_to_the_end_share_one_connection(
    engine: FakeEngine, client: EngineClient
) -> None:
    engine.replies = [Reply(chunks=["a", "b"]), Reply(chunks=["c"]), Reply(chunks=["d"])]
    assert [await text_of(client) for _ in range(3)] == ["ab", "c", "d"]
    assert engine.connections_opened == 1


async def test_an_abandoned_stream_closes_its_connection_and_a_spare_is_opened(
    engine: FakeEngine, client: EngineClient
) -> None:
    engine.replies = [Reply(chunks=["a"] * 50, delay_s=0.01), Reply(chunks=["c"])]
    stream = client.stream(REQUEST)
    async for chunk in stream:
        assert chunk.text == "a"
        break
    await stream.aclose()
    await until(lambda: engine.requests[0].disconnected, what="the engine saw the stream closed")
    # Before the next request is made, a new connection waits for it.
    await until(lambda: engine.connections_opened == 2, what="a spare connection")
    assert await text_of(client) == "c"
    assert engine.requests[0].chunks_sent < 50
    assert engine.connections_opened == 2


async def test_a_cancelled_request_leaves_a_spare_connection_too(
    engine: FakeEngine, client: EngineClient
) -> None:
    engine.replies = [Reply(chunks=["a"] * 50, delay_s=0.01), Reply(chunks=["c"])]
    first = asyncio.ensure_future(text_of(client))
    await until(lambda: engine.requests and engine.requests[0].chunks_sent > 0, what="a chunk")
    first.cancel()
    await until(lambda: engine.connections_opened == 2, what="a spare connection")
    assert await text_of(client) == "c"
    assert engine.connections_opened == 2


async def test_a_request_before_the_spare_connects_calls_it_off(
    engine: FakeEngine, client: EngineClient
) -> None:
    """The next keystroke's request comes within the spare's delay: it opens the connection
    itself, and no spare is opened beside it."""
    engine.replies = [Reply(chunks=["a"] * 50, delay_s=0.01), Reply(chunks=["c"])]
    first = asyncio.ensure_future(text_of(client))
    await until(lambda: engine.requests and engine.requests[0].chunks_sent > 0, what="a chunk")
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await text_of(client) == "c"
    await asyncio.sleep(SPARE_DELAY_S * 3)
    assert engine.connections_opened == 2


async def test_a_connection_closed_under_the_request_is_sent_again_once(
    engine: FakeEngine, client: EngineClient
) -> None:
    engine.replies = [Reply(chunks=["a"]), Reply(hang_up=True), Reply(chunks=["b"])]
    assert await text_of(client) == "a"
    assert await text_of(client) == "b"
    assert len(engine.requests) == 3
    assert engine.connections_opened == 2


async def test_a_second_hang_up_is_an_unavailable_engine(
    engine: FakeEngine, client: EngineClient
) -> None:
    engine.replies = [Reply(hang_up=True), Reply(hang_up=True), Reply(chunks=["never"])]
    with pytest.raises(EngineUnavailable):
        await text_of(client)
    assert len(engine.requests) == 2


async def test_an_engine_restart_between_completions_costs_nothing(engine: FakeEngine) -> None:
    client = EngineClient(engine.url, model="fake-model")
    try:
        engine.replies = [Reply(chunks=["a"])]
        assert await text_of(client) == "a"
        await engine.stop()
        await engine.start(port=engine.port)
        engine.replies = [Reply(chunks=["b"])]
        assert await text_of(client) == "b"
    finally:
        await client.aclose()


async def test_over_tls_one_handshake_serves_many_completions_and_the_spare_is_verified_too(
    tls_engine: FakeEngine, ca: trustme.CA
) -> None:
    """Over TLS a new connection costs a handshake on top of TCP's: completions read to the
    end share one, and the spare behind an abandoned stream verifies the engine's certificate
    like any other connection (the API key goes only to the engine)."""
    engine = tls_engine
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    client = EngineClient(engine.url, model="fake-model", api_key="sk-secret", verify=trusting)
    try:
        engine.replies = [Reply(chunks=["a"]), Reply(chunks=["b"]), Reply(chunks=["c"] * 50)]
        assert [await text_of(client) for _ in range(2)] == ["a", "b"]
        assert engine.connections_opened == 1
        stream = client.stream(REQUEST)
        async for _ in stream:
            break
        await stream.aclose()
        await until(lambda: engine.connections_opened == 2, what="a spare connection over TLS")
        engine.replies = [Reply(chunks=["d"])]
        assert await text_of(client) == "d"
        assert engine.connections_opened == 2
        assert all(r.headers["authorization"] == "Bearer sk-secret" for r in engine.requests)
    finally:
        await client.aclose()
