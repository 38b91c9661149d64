"""A TCP proxy that puts a network between a client and a loopback server: every byte arrives
half a round trip after it was sent, and a new connection carries nothing until its handshake
would have finished. What an engine across the network costs a completion (connection set-up,
the request, the stream) can then be measured on one machine.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit, urlunsplit

_CHUNK = 65536


class LatencyProxy:
    """Listens on a free loopback port and relays each connection to `port` on 127.0.0.1."""

    def __init__(self, port: int, rtt_s: float) -> None:
        if rtt_s < 0:
            raise ValueError("a round trip cannot take negative time")
        self.target_port = port
        self.one_way_s = rtt_s / 2
        self.port = 0
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> LatencyProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def relay_url(self, url: str) -> str:
        """`url` (a server on the target port) as reached through this proxy."""
        parts = urlsplit(url)
        if parts.port != self.target_port:
            raise ValueError(f"{url} is not on port {self.target_port}, which this proxy relays")
        return urlunsplit(parts._replace(netloc=f"127.0.0.1:{self.port}"))

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(self._relay(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        loop = asyncio.get_running_loop()
        # On loopback the client's connect returned at once; on a network its first bytes
        # reach the server one and a half round trips after it began (SYN, SYN-ACK, data).
        not_before = loop.time() + 3 * self.one_way_s
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", self.target_port
            )
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(
                self._pump(reader, upstream_writer, not_before),
                self._pump(upstream_reader, writer, 0.0),
            )
        finally:
            for side in (writer, upstream_writer):
                side.close()

    async def _pump(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, not_before: float
    ) -> None:
        """Copy `source` to `sink`, each chunk delivered `one_way_s` after it was read (and
        none before `not_before`); the end of `source` ends `sink` the same way."""
        loop = asyncio.get_running_loop()
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
                    data = await source.read(_CHUNK)
                except ConnectionError:
                    data = b""
                queue.put_nowait((loop.time() + self.one_way_s, data))
                if not data:
                    break
            await delivering
        finally:
            delivering.cancel()
