"""The language server: pygls glue that decodes requests and calls the pipeline.

Handlers stay short: look up the document, call a plain function, encode the result.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from copilot_lsp import __version__
from copilot_lsp.completion.pipeline import CompletionService, Suggestion
from copilot_lsp.documents import DocumentStore, Edit
from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.endpoint import resolve_engine_url
from copilot_lsp.errors import ConfigError, DocumentError
from copilot_lsp.positions import Encoding, Position, position_at
from copilot_lsp.settings import Settings, apply_layer_leniently, base_settings
from copilot_lsp.telemetry.recorder import Recorder

logger = logging.getLogger(__name__)

ACCEPT_COMMAND = "copilot.acceptCompletion"
STATS_REQUEST = "copilot/stats"
CONFIGURATION_SECTION = "copilot"


class CopilotServer(LanguageServer):
    """Holds the open documents, the layered settings and the completion service."""

    def __init__(self) -> None:
        super().__init__("copilot-lsp", __version__)
        self.documents = DocumentStore()
        self._base = Settings()
        self._layers: dict[str, dict[str, Any]] = {}
        self.settings = Settings()
        self.recorder = Recorder(self.settings.telemetry)
        self._engine: EngineClient | None = None
        self._engine_key: tuple[Any, ...] | None = None
        self.service = CompletionService(
            self.engine,
            lambda: self.settings,
            on_timeline=self.recorder.record,
            on_engine_state=self._engine_state_changed,
        )

    @property
    def encoding(self) -> Encoding:
        chosen = str(self.server_capabilities.position_encoding or "utf-16")
        return chosen if chosen in ("utf-8", "utf-16", "utf-32") else "utf-16"  # type: ignore[return-value]

    def load_base_settings(self) -> None:
        try:
            self._base = base_settings()
        except ConfigError as error:
            self._warn(f"copilot-lsp: {error}; using defaults")
            self._base = Settings()
        self._rebuild_settings()

    def set_layer(self, source: str, layer: Any) -> None:
        """Replace one settings layer; invalid fields in it are reported and ignored."""
        self._layers[source] = layer
        self._rebuild_settings()

    def _rebuild_settings(self) -> None:
        settings = self._base
        problems: list[str] = []
        for source in ("initializationOptions", "workspace/configuration"):
            settings, dropped = apply_layer_leniently(settings, self._layers.get(source), source)
            problems += dropped
        if problems:
            self._warn("copilot-lsp: invalid settings: " + "; ".join(problems))
        self.settings = settings
        self.recorder.configure(settings.telemetry)

    def engine(self) -> EngineClient:
        """The engine client for the current settings, rebuilt when they change."""
        options = self.settings.engine
        url = resolve_engine_url(options.url)
        key = options.api_key.get_secret_value() if options.api_key else None
        identity = (url, key, options.model, options.connect_timeout_s, options.read_timeout_s)
        if self._engine is None or identity != self._engine_key:
            self._engine = EngineClient(
                url,
                api_key=key,
                model=options.model,
                connect_timeout_s=options.connect_timeout_s,
                read_timeout_s=options.read_timeout_s,
            )
            self._engine_key = identity
        return self._engine

    def _engine_state_changed(self, healthy: bool, message: str) -> None:
        if healthy:
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Info, f"copilot-lsp: {message}")
            )
            return
        self._warn(
            f"copilot-lsp: completions are paused: {message}. Start the embedded engine with "
            "`copilot-lsp engine up`, or set engine.url (COPILOT_LSP_ENGINE_URL)."
        )

    def _warn(self, message: str) -> None:
        logger.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))

    def stats(self) -> dict[str, Any]:
        engine = self._engine
        return {
            **self.recorder.rolling.snapshot(),
            "engine": {
                "url": engine.base_url if engine else resolve_engine_url(self.settings.engine.url),
                "healthy": self.service.engine_healthy,
                "inflight": self.service.inflight,
            },
        }


server = CopilotServer()


@server.feature(types.INITIALIZE)
def initialize(ls: CopilotServer, params: types.InitializeParams) -> None:
    ls.load_base_settings()
    ls.set_layer("initializationOptions", params.initialization_options)


@server.feature(types.INITIALIZED)
async def initialized(ls: CopilotServer, params: types.InitializedParams) -> None:
    await _pull_configuration(ls)
    ls.engine()  # build the HTTP client now, not on the first keystroke


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: CopilotServer, params: types.DidChangeConfigurationParams
) -> None:
    pushed = params.settings
    if isinstance(pushed, dict) and isinstance(pushed.get(CONFIGURATION_SECTION), dict):
        ls.set_layer("workspace/configuration", pushed[CONFIGURATION_SECTION])
    else:
        await _pull_configuration(ls)


async def _pull_configuration(ls: CopilotServer) -> None:
    capable = ls.client_capabilities.workspace and ls.client_capabilities.workspace.configuration
    if not capable:
        return
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams([types.ConfigurationItem(section=CONFIGURATION_SECTION)])
        )
    except Exception as error:  # the client may not answer; its settings are optional
        logger.warning("workspace/configuration failed: %s", error)
        return
    if answer and isinstance(answer[0], dict):
        ls.set_layer("workspace/configuration", answer[0])


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: CopilotServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    ls.documents.open(item.uri, item.language_id, item.version, item.text)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: CopilotServer, params: types.DidChangeTextDocumentParams) -> None:
    edits = []
    for change in params.content_changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start = Position(change.range.start.line, change.range.start.character)
            end = Position(change.range.end.line, change.range.end.character)
            edits.append(Edit(change.text, start, end))
        else:
            edits.append(Edit(change.text))
    try:
        ls.documents.change(
            params.text_document.uri, params.text_document.version, edits, ls.encoding
        )
    except DocumentError as error:
        logger.warning("ignored didChange: %s", error)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CopilotServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.documents.close(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
async def inline_completion(
    ls: CopilotServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    try:
        document = ls.documents.get(params.text_document.uri)
    except DocumentError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    text = document.text
    encoding = ls.encoding
    cursor = Position(params.position.line, params.position.character)
    offset = document.offset(cursor, encoding)
    automatic = params.context.trigger_kind == types.InlineCompletionTriggerKind.Automatic
    suggestion = await ls.service.complete(
        document.uri,
        document.language_id,
        text,
        offset,
        automatic=automatic,
        line_starts=document.starts,
    )
    if suggestion is None:
        return types.InlineCompletionList(items=[])
    return types.InlineCompletionList(items=[_item(suggestion, text, encoding)])


def _item(suggestion: Suggestion, text: str, encoding: Encoding) -> types.InlineCompletionItem:
    start = position_at(text, suggestion.offset, encoding)
    end = position_at(text, suggestion.end_offset, encoding)
    return types.InlineCompletionItem(
        insert_text=suggestion.text,
        range=types.Range(
            types.Position(start.line, start.character), types.Position(end.line, end.character)
        ),
        command=types.Command(
            title="Accept completion", command=ACCEPT_COMMAND, arguments=[suggestion.id]
        ),
    )


@server.command(ACCEPT_COMMAND)
def accept_completion(ls: CopilotServer, *args: Any) -> bool:
    """Item command run by the editor on accept: `[id]`, or `[id, acceptedChars]` if partial."""
    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(f"{ACCEPT_COMMAND} expects [completionId, acceptedChars?]")
    chars = args[1] if len(args) > 1 and isinstance(args[1], int) else None
    if chars is None:
        return ls.recorder.feedback(args[0], "accepted", None)
    return ls.recorder.feedback(args[0], "partially_accepted", chars)


@server.feature(STATS_REQUEST)
def copilot_stats(ls: CopilotServer, params: Any) -> dict[str, Any]:
    """Rolling p50/p90/p99 per stage, outcome counts, recent timelines and engine state."""
    return ls.stats()
