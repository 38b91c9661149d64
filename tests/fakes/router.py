"""A scripted vllm-router over real HTTP, in front of scripted engines (FakeEngine).

For tests that start the real server (`--stdio`) against one URL with replicas behind it, as
`make test-cluster` does with the real router and two vLLM engines: it lists its workers at
`GET /list_workers` ({"urls": [...]}, as vllm-router 0.1.17 answers) and forwards every other
request, /metrics included (one replica per scrape, engine/replicas.py), to the next worker in
turn that answers (a stopped replica is skipped, as the router's health checks would).
Responses are relayed as they stream; the client hanging up closes the upstream request, so
the replica sees the disconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence

import httpx

from copilot_lsp.testing.fake_engine import FakeEngine

FORWARDED_HEADERS = ("content-type", "authorization", "accept")


class FakeRouter:
    def __init__(self, workers: Sequence[FakeEngine]) -> None:
        self.workers = list(workers)
        self.forwarded: list[tuple[str, str]] = []
        """(path, worker URL) of every request forwarded, in order."""
        self.port = 0
        self._turn = 0
        self._server: asyncio.Server | None = None
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=2.0))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @staticmethod
    def root(engine: FakeEngine) -> str:
        return engine.url.removesuffix("/v1")

    async def start(self) -> FakeRouter:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        await self._http.aclose()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        request_line = await reader.readline()
        if not request_line:
            return False
        method, path, _ = request_line.decode().split(" ", 2)
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            key, _, value = line.decode().partition(":")
            headers[key.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if path == "/list_workers":
            payload = json.dumps({"urls": [self.root(w) for w in self.workers]}).encode()
            writer.write(_head(200, "application/json", {"content-length": str(len(payload))}))
            writer.write(payload)
            await writer.drain()
            return True
        sent = {k: v for k, v in headers.items() if k in FORWARDED_HEADERS}
        for _ in range(len(self.workers)):
            worker = self.workers[self._turn % len(self.workers)]
            self._turn += 1
            request = self._http.build_request(
                method, self.root(worker) + path, content=body, headers=sent
            )
            try:
                response = await self._http.send(request, stream=True)
            except httpx.TransportError:
                continue  # a stopped replica (refused, or its kept-alive connection closed)
            self.forwarded.append((path, worker.url))
            try:
                content_type = response.headers.get("content-type", "text/plain")
                writer.write(
                    _head(response.status_code, content_type, {"transfer-encoding": "chunked"})
                )
                async for data in response.aiter_raw():
                    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
            except httpx.HTTPError:
                return False  # the replica went away mid-answer: cut the client's too
            finally:
                await response.aclose()
            return True
        writer.write(_head(503, "text/plain", {"content-length": "0"}))
        await writer.drain()
        return True


def _head(status: int, content_type: str, extra: dict[str, str]) -> bytes:
    more = "".join(f"{key}: {value}\r\n" for key, value in extra.items())
    return f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n{more}\r\n".encode()
