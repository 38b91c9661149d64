"""What the LSP layer calls, in plain types: the copilot behind the protocol.

One object holds the open documents (completion/workspace.py), the completion pipeline, the
engine it streams from and the telemetry recorder; the LSP layer hands it decoded requests
and encodes what it returns. Settings reach every part through `configure`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from copilot_lsp.completion.pipeline import EngineStateListener
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.streaming import Publisher, StreamingCompletionService
from copilot_lsp.completion.workspace import Workspace
from copilot_lsp.context.documents import Edit
from copilot_lsp.engine.provider import EngineProvider
from copilot_lsp.errors import CopilotLspError
from copilot_lsp.positions import Encoding, Position, position_at
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.recorder import Recorder


@dataclass(frozen=True, slots=True)
class PlacedSuggestion:
    """A suggestion with its range in the document as the client counts positions."""

    id: str
    text: str
    start: Position
    end: Position
    """Past `start` when closers right of the cursor are replaced."""
    alternatives: tuple[PlacedSuggestion, ...] = ()
    """Further suggestions after this one (an explicit request; completion/alternatives.py)."""


class CopilotService:
    def __init__(
        self,
        engines: EngineProvider,
        recorder: Recorder,
        *,
        publisher: Publisher | None = None,
        on_engine_state: EngineStateListener = lambda healthy, message: None,
        formats: PromptFormats | None = None,
    ) -> None:
        self.settings = Settings()
        self.engines = engines
        self.recorder = recorder
        self.workspace = Workspace()
        self.pipeline = StreamingCompletionService(
            engines,
            lambda: self.settings,
            publisher=publisher,
            on_timeline=recorder.record,
            on_engine_state=on_engine_state,
            formats=formats,
        )

    def configure(self, settings: Settings) -> None:
        """Use `settings` from the next request on."""
        self.settings = settings
        self.recorder.configure(settings.telemetry)
        self.engines.configure(settings.engine)

    def open(self, uri: str, language_id: str, version: int, text: str) -> None:
        self.workspace.open(uri, language_id, version, text)

    def change(self, uri: str, version: int, edits: list[Edit], encoding: Encoding) -> None:
        """Apply the edits; DocumentError when they cannot be (see Workspace.change)."""
        self.workspace.change(uri, version, edits, encoding)

    def close(self, uri: str) -> None:
        self.workspace.close(uri)
        self.pipeline.forget(uri)

    async def complete(
        self, uri: str, cursor: Position, encoding: Encoding, *, automatic: bool
    ) -> PlacedSuggestion | None:
        """A suggestion at `cursor` in `uri`, or None. DocumentError when `uri` is not open;
        None while the document is out of sync with the editor."""
        request = self.workspace.request(
            uri, cursor, encoding, automatic=automatic, options=self.settings.completion
        )
        if request is None:
            return None
        suggestion = await self.pipeline.serve(request)
        if suggestion is None:
            return None
        starts = request.prompt.starts
        start = position_at(request.text, suggestion.offset, encoding, starts)

        def end(offset: int) -> Position:
            return (
                start
                if offset == suggestion.offset
                else position_at(request.text, offset, encoding, starts)
            )

        return PlacedSuggestion(
            suggestion.id,
            suggestion.text,
            start,
            end(suggestion.end_offset),
            tuple(
                PlacedSuggestion(other.id, other.text, start, end(other.end_offset))
                for other in suggestion.alternatives
            ),
        )

    async def warm_up(self) -> None:
        """Build the engine's HTTP client and learn its prompt format before the first
        keystroke; a failure here is reported by the first completion instead."""
        self.engines.current()
        with contextlib.suppress(CopilotLspError):
            await self.pipeline.formats.resolve(self.settings.prompt, self.engines)

    def stats(self) -> dict[str, Any]:
        """Rolling p50/p90/p99 per stage, outcome counts, recent timelines and engine state."""
        router = self.engines.built
        return {
            **self.recorder.rolling.snapshot(),
            "engine": {
                "url": router.base_url if router is not None else self.engines.url,
                **self.pipeline.state(),
                # Pool, per-endpoint windowed speculative acceptance and failover state.
                "routing": router.snapshot() if router is not None else None,
            },
            # The prompt family in use and where it came from (setting or served model).
            "prompt": chosen.describe() if (chosen := self.pipeline.formats.current) else None,
        }
