"""What the LSP layer calls, in plain types: the copilot behind the protocol.

One object builds and holds the whole graph: the open documents (completion/workspace.py),
the completion pipeline with its per-document sessions, the engine provider it streams from,
the prompt formats and the telemetry recorder. The LSP layer hands it decoded requests and
encodes what it returns, and hears back only through the callables it passes in (messages
for the user, partial completions, engine state). Settings reach every part through
`configure`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from copilot_lsp.completion.live import Publisher
from copilot_lsp.completion.pipeline import CompletionService
from copilot_lsp.completion.prompt_format import Notify, PromptFormats
from copilot_lsp.completion.suggestion import EngineStateListener
from copilot_lsp.completion.warmup import WarmUp, warm_up
from copilot_lsp.completion.workspace import Workspace
from copilot_lsp.context.documents import Edit
from copilot_lsp.context.indexer import Progress
from copilot_lsp.context.workspace_files import Limits
from copilot_lsp.engine.provider import EngineProvider
from copilot_lsp.models import embedded_tokenizer
from copilot_lsp.nextedit.engine import NextEditEngines
from copilot_lsp.nextedit.service import NextEdit, NextEditService
from copilot_lsp.positions import Encoding, Position, position_at
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.recorder import Recorder
from copilot_lsp.telemetry.timeline import Feedback


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
        *,
        publisher: Publisher | None = None,
        on_engine_state: EngineStateListener = lambda healthy, message: None,
        notify: Notify = lambda message: None,
        engines: EngineProvider | None = None,
        on_index_progress: Progress = lambda done, total, finished: None,
    ) -> None:
        """`publisher` hears partial completions, `on_engine_state` the engine's health
        changing, `notify` what the user should be told about the prompt format (once) and
        `on_index_progress` how the first pass of the workspace index goes."""
        self.settings = Settings()
        self.engines = engines or EngineProvider()
        self.recorder = Recorder(self.settings.telemetry)
        self.workspace = Workspace()
        self.workspace.indexer.on_progress = on_index_progress
        self.warmed = WarmUp()
        """What the warm-up at start has done (`warm_up`), for `copilot/stats`."""
        self.pipeline = CompletionService(
            self.engines,
            lambda: self.settings,
            publisher=publisher,
            on_timeline=self.recorder.record,
            on_engine_state=on_engine_state,
            formats=PromptFormats(notify=notify, embedded_tokenizer=embedded_tokenizer),
        )
        self.next_edits = NextEditService(
            self.workspace,
            self.pipeline.sessions,
            NextEditEngines(
                self.engines, self.pipeline.formats, self.pipeline.stages.slots, notify=notify
            ),
            lambda: self.settings,
            on_timeline=self.recorder.record,
            on_applied=lambda identifier: self.recorder.feedback(identifier, "accepted", None),
        )

    def configure(self, settings: Settings) -> None:
        """Use `settings` from the next request on."""
        self.settings = settings
        self.recorder.configure(settings.telemetry)
        self.engines.configure(settings.engine)
        index = settings.context.workspace
        self.workspace.indexer.configure(
            index.enabled, Limits(index.max_file_bytes, index.max_files, tuple(index.exclude))
        )

    def set_root(self, uri: str | None) -> None:
        """The workspace folder (from `initialize`): paths in prompts are relative to it."""
        self.workspace.set_root(uri)

    def index_workspace(self, folder_uris: list[str]) -> None:
        """Index the workspace folders in the background (`context.workspace`)."""
        self.workspace.index_folders(folder_uris)

    def folders_changed(self, folder_uris: list[str]) -> None:
        """The workspace folders are now these (a folder added to or removed from the
        editor's workspace): the index follows without a restart."""
        self.workspace.folders_changed(folder_uris)
        self.workspace.retriever.project_changed()  # imports may resolve in a new folder

    def files_changed(self, changes: list[tuple[str, bool]]) -> None:
        """Files changed on disk: (uri, deleted) each; a folder deleted; a `.gitignore`
        changed (the index follows its rules without a restart)."""
        indexer = self.workspace.indexer
        if any(uri.rsplit("/", 1)[-1] == ".gitignore" for uri, _ in changes):
            indexer.rules_changed()
        for uri, deleted in changes:
            self.workspace.disk_changed(uri)
            if uri.rsplit("/", 1)[-1] == ".gitignore":
                continue
            if deleted:
                self.workspace.indexer.deleted(uri)
            elif uri not in self.workspace:  # an open document's text is the editor's
                self.workspace.indexer.changed(uri)

    def shutdown(self) -> None:
        """Stop indexing (its worker process ends with it) and any prefix warm-up."""
        self.workspace.indexer.close()
        self.pipeline.stages.warmer.on_busy()

    def open(self, uri: str, language_id: str, version: int, text: str) -> None:
        self.workspace.open(uri, language_id, version, text)

    def saved(self, uri: str) -> None:
        self.workspace.saved(uri)

    def change(self, uri: str, version: int, edits: list[Edit], encoding: Encoding) -> None:
        """Apply the edits; DocumentError when they cannot be (see Workspace.change). A
        next-edit request running for the document is cancelled; with next edits on, the
        change joins the edit history."""
        old = None
        if self.settings.next_edit_suggestions.enabled and uri in self.workspace:
            document = self.workspace.documents.get(uri)
            old = (document.text, document.starts)
        try:
            self.workspace.change(uri, version, edits, encoding)
        finally:
            self.next_edits.changed(uri, old)

    def close(self, uri: str) -> None:
        self.workspace.close(uri)
        self.pipeline.forget(uri)
        self.next_edits.forget(uri)  # its steps leave the edit history (nextedit/history.py)

    def lost_edit(self, uri: str) -> bool:
        """An edit of `uri` could not be applied: its completions pause until the editor
        sends the whole text again. False when `uri` is not open."""
        if uri not in self.workspace:
            return False
        self.workspace.mark_out_of_sync(uri)
        return True

    def displayed(self, completion_id: str) -> bool:
        """The editor showed the suggestion; False when the id is unknown."""
        return self.recorder.displayed(completion_id)

    def feedback(self, completion_id: str, kind: Feedback, chars: int | None = None) -> bool:
        """What the user did with a suggestion (`chars`: how much of it was accepted)."""
        return self.recorder.feedback(completion_id, kind, chars)

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
        with self.workspace.indexer.foreground():
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

    async def next_edit(
        self, uri: str, version: int, cursor: Position, encoding: Encoding
    ) -> list[NextEdit]:
        """The next edits offered at `cursor` in version `version` of `uri` (alternatives;
        none when next edits are off or none is worth showing)."""
        with self.workspace.indexer.foreground():
            return await self.next_edits.suggest(uri, version, cursor, encoding)

    async def warm_up(self) -> None:
        """Warm what the first completion needs (completion/warmup.py) before the first
        keystroke; a failure here is reported by the first completion instead."""
        await warm_up(self.pipeline.formats, self.engines, self.settings.prompt, self.warmed)

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
            "warm_up": self.warmed.as_dict(),
            # Where next edits go: the main engine (url None) or a second one.
            "next_edit_engine": self.next_edits.engines.describe(self.settings),
            # The workspace index: size, files waiting, the first pass's time.
            "index": self.workspace.indexer.stats(),
        }
