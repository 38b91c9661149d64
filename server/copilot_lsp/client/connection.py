"""The server as every in-package client runs it: a subprocess over stdio, initialized as an
editor initializes it, its stderr read while it runs, shut down politely or killed.

pygls pipes the server's stderr and never reads it: a chatty server would block on the full
pipe, so it is drained here, the last lines kept (to explain a server that did not start,
or for a benchmark to count its warnings).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.errors import CopilotLspError

SERVER = (sys.executable, "-m", "copilot_lsp", "--stdio")
"""This installation's server."""
STDERR_TAIL = 20
"""Lines of stderr kept unless a client asks for more."""


class Connection:
    """One server process and the pygls client that speaks to it."""

    def __init__(self, client: LanguageClient, keep: int) -> None:
        self.client = client
        self.stderr: deque[str] = deque(maxlen=keep)
        """The last lines the server wrote on stderr."""
        self._process: Any = getattr(client, "_server", None)  # pygls keeps it private
        self.pid = int(getattr(self._process, "pid", 0) or 0)
        self._draining = asyncio.ensure_future(
            _drain(getattr(self._process, "stderr", None), self.stderr)
        )

    @classmethod
    async def start(
        cls,
        client: LanguageClient,
        root: Path,
        options: dict[str, Any],
        *,
        command: Sequence[str] = SERVER,
        env: Mapping[str, str] | None = None,
        keep: int = STDERR_TAIL,
        label: str = "the server",
    ) -> Connection:
        """Start `command` (with `env`, default this process's environment), then `initialize`
        with `options` and the workspace `root`, and `initialized`. A server that exits
        before it answers is a CopilotLspError naming `label` and quoting its stderr."""
        environment = dict(os.environ if env is None else env)
        await client.start_io(command[0], *command[1:], env=environment)
        connection = cls(client, keep)
        try:
            await client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    process_id=os.getpid(),
                    root_uri=root.as_uri(),
                    initialization_options=options,
                )
            )
        except RuntimeError as error:  # pygls: the server process exited
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(connection._draining), 5.0)
            said = "\n".join(connection.stderr) or "(nothing on stderr)"
            await connection.close()
            raise CopilotLspError(f"{label} did not start ({error}); it said:\n{said}") from None
        except BaseException:
            await connection.close()
            raise
        client.initialized(types.InitializedParams())
        return connection

    async def close(self) -> None:
        """Shut the server down politely; kill it if it does not go."""
        client, process = self.client, self._process
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_async(None), 10.0)
            client.exit(None)
            await asyncio.wait_for(client.stop(), 10.0)  # type: ignore[no-untyped-call]
        if process is not None and process.returncode is None:
            process.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._draining, 5.0)


async def _drain(stream: asyncio.StreamReader | None, tail: deque[str]) -> None:
    if stream is None:
        return
    while line := await stream.readline():
        tail.append(line.decode("utf-8", "replace").rstrip())
