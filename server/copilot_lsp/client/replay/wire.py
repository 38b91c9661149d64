"""The replay's stdio connection to the server: this installation's or another checkout's,
its engine and state folder its own (client/connection.py starts and stops it)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.client.connection import Connection
from copilot_lsp.client.driver import plain
from copilot_lsp.lsp.methods import STATS_REQUEST


async def start_server(
    scratch: Path, options: dict[str, Any], checkout: Path | None = None
) -> Connection:
    """The server of this installation, or of another `checkout` (absolute; its `server/` first
    on the import path, this virtualenv's packages): before/after comparisons in one run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPILOT_LSP_ENGINE")}
    # The arm's own state folder, passed to the server process as the variable it reads.
    env["COPILOT_LSP_STATE_DIR"] = str(scratch / "state")
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout / "server")
    where = f" of {checkout}" if checkout is not None else ""
    return await Connection.start(
        LanguageClient("copilot-lsp-replay", "1"),
        scratch / "workspace",
        options,
        env=env,
        label=f"the server{where}",
    )


def param(params: Any, name: str) -> Any:
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def replaced(item: types.InlineCompletionItem) -> int:
    """Characters right of the cursor that the item's range covers (closing brackets)."""
    if item.range is None or item.range.start.line != item.range.end.line:
        return 0
    return max(0, item.range.end.character - item.range.start.character)


async def server_stats(client: LanguageClient) -> dict[str, Any]:
    """The server's `copilot/stats`, as plain JSON values."""
    return plain(await client.protocol.send_request_async(STATS_REQUEST, {}))  # type: ignore[no-any-return]


async def index_ready(client: LanguageClient, timeout_s: float = 120.0) -> dict[str, Any]:
    """Once the workspace index's first pass is over (or `timeout_s` has passed): its stats."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        index: dict[str, Any] = (await server_stats(client)).get("index") or {}
        if index.get("first_pass_files") is not None or loop.time() > deadline:
            return index
        await asyncio.sleep(0.25)
