"""A TCP proxy that puts a network between a client and a loopback server: every byte arrives
half a round trip after it was sent, and a new connection carries nothing until its handshake
would have finished. What an engine across the network costs a completion (connection set-up,
the request, the stream) can then be measured on one machine.
"""

from __future__ import annotations

import asyncio
import contextlib

from copilot_lsp.testing.relay import CHUNK, LoopbackRelay


class LatencyProxy(LoopbackRelay):
    """Listens on a free loopback port and relays each connection to `port` on 127.0.0.1."""

    def __init__(self, port: int, rtt_s: float) -> None:
        if rtt_s < 0:
            raise ValueError("a round trip cannot take negative time")
        super().__init__("127.0.0.1", port)
        self.one_way_s = rtt_s / 2

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        *,
        to_target: bool,
        opened_at: float,
    ) -> None:
        """Copy `source` to `sink`, each chunk delivered `one_way_s` after it was read; the end
        of `source` ends `sink` the same way."""
        loop = asyncio.get_running_loop()
        # On loopback the client's connect returned at once; on a network its first bytes
        # reach the server one and a half round trips after it began (SYN, SYN-ACK, data).
        not_before = opened_at + 3 * self.one_way_s if to_target else 0.0
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                wait = max(due, not_before) - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    with contextlib.suppress(OSError):
                        sink.close()
                    return
                sink.write(data)
                with contextlib.suppress(ConnectionError):
                    await sink.drain()

        delivering = loop.create_task(deliver())
        try:
            while True:
                try:
                    data = await source.read(CHUNK)
                except ConnectionError:
                    data = b""
                queue.put_nowait((loop.time() + self.one_way_s, data))
                if not data:
                    break
            await delivering
        finally:
            delivering.cancel()
