"""The replay's stdio connection to the server: start, initialize, shut down, and the
fields of what comes back (typed results or plain dicts, as pygls hands them over)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections import deque
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.errors import CopilotLspError


async def start_server(
    scratch: Path, options: dict[str, Any], checkout: Path | None = None
) -> tuple[LanguageClient, asyncio.Future[None]]:
    """The server of this installation, or of another `checkout` (absolute; its `server/` first
    on the import path, this virtualenv's packages): before/after comparisons in one run."""
    client = LanguageClient("copilot-lsp-replay", "1")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPILOT_LSP_ENGINE")}
    env["COPILOT_LSP_STATE_DIR"] = str(scratch / "state")
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout / "server")
    await client.start_io(sys.executable, "-m", "copilot_lsp", "--stdio", env=env)
    process = getattr(client, "_server", None)
    # pygls pipes the server's stderr and never reads it: drain it, or a chatty server blocks.
    tail: deque[str] = deque(maxlen=STDERR_TAIL)
    draining = asyncio.ensure_future(_drain(getattr(process, "stderr", None), tail))
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                process_id=os.getpid(),
                root_uri=(scratch / "workspace").as_uri(),
                initialization_options=options,
            )
        )
    except RuntimeError as error:  # pygls: the server process exited
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(draining), 5.0)
        where = f" of {checkout}" if checkout is not None else ""
        said = "\n".join(tail) or "(nothing on stderr)"
        raise CopilotLspError(
            f"the server{where} did not start ({error}); it said:\n{said}"
        ) from None
    client.initialized(types.InitializedParams())
    return client, draining


STDERR_TAIL = 20
"""Lines of the server's stderr kept to explain a server that did not start."""


async def _drain(stream: asyncio.StreamReader | None, tail: deque[str]) -> None:
    if stream is None:
        return
    while line := await stream.readline():
        tail.append(line.decode("utf-8", "replace").rstrip())


async def close_client(client: LanguageClient) -> None:
    """Shut the server down politely; kill it if it does not go."""
    process = getattr(client, "_server", None)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.shutdown_async(None), 10.0)
        client.exit(None)
        await asyncio.wait_for(client.stop(), 10.0)  # type: ignore[no-untyped-call]
    if process is not None and process.returncode is None:
        process.kill()


def param(params: Any, name: str) -> Any:
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def answer_items(result: Any) -> list[types.InlineCompletionItem]:
    if result is None:
        return []
    if isinstance(result, types.InlineCompletionList):
        return list(result.items)
    if isinstance(result, list):
        return result
    items = param(result, "items")
    return list(items) if items else []


def item_id(item: types.InlineCompletionItem) -> str | None:
    command = item.command
    if command is None or not command.arguments:
        return None
    return str(command.arguments[0])


def replaced(item: types.InlineCompletionItem) -> int:
    if item.range is None or item.range.start.line != item.range.end.line:
        return 0
    return max(0, item.range.end.character - item.range.start.character)
