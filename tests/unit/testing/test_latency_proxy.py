"""The latency proxy the benchmarks put between the server and an engine "across the network":
bytes arrive half a round trip late, a new connection carries nothing for its handshake, and
either side's close reaches the other."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from copilot_lsp.testing.latency_proxy import LatencyProxy

RTT_S = 0.5


@pytest.fixture
async def echo_port() -> AsyncIterator[int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> float:
    started = time.monotonic()
    writer.write(b"ping")
    await writer.drain()
    assert await reader.readexactly(4) == b"ping"
    return time.monotonic() - started


async def test_a_new_connection_pays_its_handshake_then_one_round_trip_per_exchange(
    echo_port: int,
) -> None:
    proxy = await LatencyProxy(echo_port, RTT_S).start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        first = await exchange(reader, writer)
        second = await exchange(reader, writer)
        writer.close()
        # The first: the handshake's round trip, then the request's; the second: one only.
        assert first >= 2 * RTT_S * 0.95
        assert RTT_S * 0.95 <= second < 2 * RTT_S
        assert proxy.connections == 1
    finally:
        await proxy.stop()


async def test_closing_reaches_the_other_side(echo_port: int) -> None:
    proxy = await LatencyProxy(echo_port, 0.02).start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        await exchange(reader, writer)
        writer.write_eof()  # the echo server closes when its reader ends
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
    finally:
        await proxy.stop()


def test_a_negative_round_trip_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        LatencyProxy(1, -0.1)


async def test_a_url_of_the_relayed_server_becomes_the_proxys(echo_port: int) -> None:
    proxy = await LatencyProxy(echo_port, 0.0).start()
    try:
        relayed = proxy.relay_url(f"https://127.0.0.1:{echo_port}/v1")
        assert relayed == f"https://127.0.0.1:{proxy.port}/v1"
        with pytest.raises(ValueError, match="not on port"):
            proxy.relay_url(f"http://127.0.0.1:{echo_port + 1}/v1")
    finally:
        await proxy.stop()
