"""A pytest-lsp client session with the real server over stdio, and helpers to drive it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from copilot_lsp.client.driver import plain
from copilot_lsp.lsp import methods

SERVER = [sys.executable, "-m", "copilot_lsp", "--stdio"]


@dataclass
class Session:
    client: LanguageClient
    engine_url: str
    state_dir: Path

    async def initialize(
        self,
        options: dict[str, Any] | None = None,
        capabilities: types.ClientCapabilities | None = None,
        *,
        engine_url: str | None = None,
    ) -> types.InitializeResult:
        merged: dict[str, Any] = {"engine": {"url": engine_url or self.engine_url}}
        merged["completion"] = {"debounceMs": 0}
        for key, value in (options or {}).items():
            merged[key] = {**merged.get(key, {}), **value}
        return await self.client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or types.ClientCapabilities(),
                initialization_options=merged,
            )
        )

    def open(self, text: str, uri: str = "file:///work/demo.py", language: str = "python") -> str:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, text))
        )
        return uri

    def request(
        self,
        uri: str,
        line: int,
        character: int,
        *,
        automatic: bool = False,
        msg_id: str | None = None,
    ) -> asyncio.Future[Any]:
        kind = (
            types.InlineCompletionTriggerKind.Automatic
            if automatic
            else types.InlineCompletionTriggerKind.Invoked
        )
        params = types.InlineCompletionParams(
            context=types.InlineCompletionContext(trigger_kind=kind),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(line, character),
        )
        # pytest-lsp's send_request_async is a coroutine: wrap it so the request goes out now.
        return asyncio.ensure_future(
            self.client.protocol.send_request_async(
                types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id
            )
        )

    async def complete(self, uri: str, line: int, character: int, **kwargs: Any) -> list[Any]:
        result = await asyncio.wait_for(self.request(uri, line, character, **kwargs), 20)
        return list(result.items) if result is not None else []

    async def stats(self) -> dict[str, Any]:
        result = await self.client.protocol.send_request_async(methods.STATS_REQUEST, {})
        return plain(result)


@asynccontextmanager
async def server_session(
    env: dict[str, str], engine_url: str, state_dir: Path, args: Sequence[str] = ()
) -> AsyncIterator[Session]:
    """Start the server (with extra command-line `args`) in a subprocess; shut it down
    cleanly afterwards."""
    config = ClientServerConfig(server_command=[*SERVER, *args], server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    try:
        yield Session(client, engine_url, state_dir)
    finally:
        try:
            await asyncio.wait_for(client.shutdown_session(), 10)
        finally:
            await client.stop()


def collect_partials(session: Session) -> list[dict[str, Any]]:
    """Every `copilot/partialCompletion` the server sends from now on, in arrival order."""
    received: list[dict[str, Any]] = []

    @session.client.feature(methods.PARTIAL_COMPLETION)
    def on_partial(params: Any) -> None:
        received.append(plain(params))

    return received
