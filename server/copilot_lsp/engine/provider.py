"""The engine the server completes with: one router for the current engine settings.

The server builds one provider and hands it to the completion pipeline, for which it is the
`CompletionEngine`; settings changes reach it through `configure`. The router behind it is
built on first use and rebuilt only when the engine settings or the resolved URL change, so
the endpoints' acceptance monitors and HTTP connections live across requests.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from copilot_lsp.engine.endpoint import EngineUrl
from copilot_lsp.engine.router import Router, router_from_settings
from copilot_lsp.engine.types import CompletionRequest, ServedModel, StreamChunk
from copilot_lsp.settings import EngineSettings


class EngineProvider:
    """One primary (engine.url or the embedded engine) unless engine.endpoints lists a pool;
    engine.fallback_url takes over when speculative acceptance stays too low."""

    def __init__(
        self, options: EngineSettings | None = None, *, state_file: Path | None = None
    ) -> None:
        self._options = options if options is not None else EngineSettings()
        self._url = EngineUrl(state_file)
        self._router: Router | None = None
        self._key: tuple[Any, ...] | None = None
        self._closing: set[asyncio.Task[None]] = set()

    def configure(self, options: EngineSettings) -> None:
        """Use these engine settings from the next request on."""
        self._options = options

    @property
    def url(self) -> str:
        """The base URL the settings resolve to now (built or not)."""
        return self._url.resolve(self._options.url)

    @property
    def samples_exactly(self) -> bool:
        """Whether sampled requests (alternatives) get correct outputs from this engine."""
        return self._url.samples_exactly(self._options.url)

    @property
    def built(self) -> Router | None:
        """The router in use, or None before the first request."""
        return self._router

    def current(self) -> Router:
        """The router for the current settings, rebuilt when they changed."""
        options = self._options
        url = self._url.resolve(options.url)
        embedded = self._url.recorded()
        key = (url, options.model_copy(), embedded)
        if self._router is None or key != self._key:
            previous = self._router
            self._router = router_from_settings(options, url, embedded)
            self._key = key
            if previous is not None:
                with contextlib.suppress(RuntimeError):  # no running loop: nothing to close
                    task = asyncio.get_running_loop().create_task(previous.aclose())
                    self._closing.add(task)  # keep a reference until it is done
                    task.add_done_callback(self._closing.discard)
        return self._router

    @property
    def base_url(self) -> str:
        return self.current().base_url

    def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        return self.current().stream(request)

    async def served_model(self) -> ServedModel:
        return await self.current().served_model()

    async def count_tokens(self, text: str) -> int:
        return await self.current().count_tokens(text)

    def model_source(self) -> object:
        """Changes when the engine behind may serve another model (the router was rebuilt)."""
        return self.current()
