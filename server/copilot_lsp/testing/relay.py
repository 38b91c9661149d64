"""A loopback TCP relay: listens on a free port and copies each connection's bytes to a target
server and back. Subclasses say how one direction's bytes go (`_pump`): late, as over a network
(latency_proxy.py), or read on the way (bench/crossfile/tap.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Self
from urllib.parse import urlsplit, urlunsplit

CHUNK = 65536


class LoopbackRelay:
    """Relays each connection made to `port` (127.0.0.1, free, known once started) to
    `target_host`:`target_port`."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.port = 0
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def relay_url(self, url: str) -> str:
        """`url` (a server on the target port) as reached through this relay."""
        parts = urlsplit(url)
        if parts.port != self.target_port:
            raise ValueError(f"{url} is not on port {self.target_port}, which this relay serves")
        return urlunsplit(parts._replace(netloc=f"127.0.0.1:{self.port}"))

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        *,
        to_target: bool,
        opened_at: float,
    ) -> None:
        """Copy `source` to `sink` (towards the target when `to_target`); the connection was
        accepted at `opened_at` (the loop's clock)."""
        raise NotImplementedError

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(self._relay(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        opened_at = asyncio.get_running_loop().time()
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                self.target_host, self.target_port
            )
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(
                self._pump(reader, upstream_writer, to_target=True, opened_at=opened_at),
                self._pump(upstream_reader, writer, to_target=False, opened_at=opened_at),
            )
        finally:
            for side in (writer, upstream_writer):
                side.close()
