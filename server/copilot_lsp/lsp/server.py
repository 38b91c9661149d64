"""The language server: pygls glue that decodes requests and calls the pipeline.

Handlers stay short: look up the document, call a plain function, encode the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from copilot_lsp import __version__, settings_layers
from copilot_lsp.completion.assembly import OtherDocument, RecentChunk
from copilot_lsp.completion.pipeline import Suggestion
from copilot_lsp.completion.streaming import StreamingCompletionService
from copilot_lsp.context.index import DefinitionIndex
from copilot_lsp.context.recent import RecentPlaces
from copilot_lsp.documents import Document, DocumentStore, Edit
from copilot_lsp.engine.endpoint import resolve_engine_url
from copilot_lsp.engine.router import Router, router_from_settings
from copilot_lsp.errors import ConfigError, DocumentError
from copilot_lsp.lsp import notifications
from copilot_lsp.lsp.protocol import CopilotProtocol, serve_stdio
from copilot_lsp.positions import Encoding, Position, position_at
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.recorder import Recorder

logger = logging.getLogger(__name__)

ACCEPT_COMMAND = "copilot.acceptCompletion"
STATS_REQUEST = "copilot/stats"
CONFIGURATION_SECTION = "copilot"


class CopilotServer(LanguageServer):
    """Holds the open documents, the layered settings and the completion service."""

    def __init__(self) -> None:
        super().__init__("copilot-lsp", __version__, protocol_cls=CopilotProtocol)
        self.documents = DocumentStore()
        self.definitions = DefinitionIndex()
        self.recent = RecentPlaces()
        self._base = Settings()
        self._layers: dict[str, dict[str, Any]] = {}
        self.settings = Settings()
        self.recorder = Recorder(self.settings.telemetry)
        self._engine: Router | None = None
        self._engine_key: tuple[Any, ...] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._said: set[str] = set()
        self.service = StreamingCompletionService(
            self.engine,
            lambda: self.settings,
            on_timeline=self.recorder.record,
            on_engine_state=self._engine_state_changed,
        )

    def _start_io_async(self, stdin: Any = None, stdout: Any = None) -> None:
        # pygls' own loop drops requests with bad params unanswered (lsp/protocol.py).
        serve_stdio(self, stdin, stdout)

    def lost_edit(self, uri: str, reason: str) -> None:
        """A didChange for `uri` could not be applied: say so once, stop completing there.

        The document's text may now differ from the editor's; building a completion from it
        could insert text in the wrong place, so completions for it pause until the editor
        sends the whole text (a full-document change, or closing and reopening the file).
        """
        if uri not in self.documents:
            logger.warning("ignored didChange for a document that is not open: %s", reason)
            self._log(types.MessageType.Warning, f"ignored didChange: {reason}")
            return
        self.documents.mark_out_of_sync(uri)
        logger.warning("lost an edit of an open document: %s", reason)
        self._log(
            types.MessageType.Error,
            f"lost track of {uri}: {reason}. Completions for it are paused until the "
            "editor sends its whole text again (close and reopen the file).",
        )

    def _log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(kind, f"copilot-lsp: {message}"))

    @property
    def encoding(self) -> Encoding:
        chosen = str(self.server_capabilities.position_encoding or "utf-16")
        return chosen if chosen in ("utf-8", "utf-16", "utf-32") else "utf-16"  # type: ignore[return-value]

    def load_base_settings(self) -> None:
        """The settings file and the environment, merged field by field (settings_layers)."""
        loaded = settings_layers.load_base()
        self._base = loaded.settings
        self.warn_once(loaded.messages)
        self._rebuild_settings()

    def set_layer(self, source: str, layer: Any) -> None:
        """Replace one settings layer; invalid fields in it are reported and ignored."""
        self._layers[source] = layer
        self._rebuild_settings()

    def _rebuild_settings(self) -> None:
        merged = settings_layers.Layered(self._base)
        for source in ("initializationOptions", "workspace/configuration"):
            settings_layers.apply(merged, self._layers.get(source), source)
        self.warn_once(merged.messages)
        self.settings = merged.settings
        self.recorder.configure(merged.settings.telemetry)

    def warn_once(self, messages: list[str]) -> None:
        """Show each settings message once per session: layers are merged again on every
        configuration change, and the same mistake should not pop up each time."""
        for message in messages:
            if message not in self._said:
                self._said.add(message)
                self._warn(f"copilot-lsp: invalid settings: {message}")

    def engine(self) -> Router:
        """The engine router for the current settings, rebuilt when they change.

        One primary (engine.url or the embedded engine) unless engine.endpoints lists a pool;
        engine.fallback_url takes over when speculative acceptance stays too low.
        """
        options = self.settings.engine
        url = resolve_engine_url(options.url)
        identity = (url, options.model_copy())
        if self._engine is None or identity != self._engine_key:
            previous = self._engine
            self._engine = router_from_settings(options, url)
            self._engine_key = identity
            if previous is not None:
                with contextlib.suppress(RuntimeError):  # no running loop: nothing to close
                    task = asyncio.get_running_loop().create_task(previous.aclose())
                    self._closing.add(task)  # keep a reference until it is done
                    task.add_done_callback(self._closing.discard)
        return self._engine

    def prompt_context(self, document: Document) -> dict[str, Any]:
        """What the prompt assembly may use beyond the document's text: its tree, the
        definitions in it and in the other open documents (parsed lazily, once per version)."""
        others = [
            OtherDocument(self.display_path(other.uri), self.definitions.lazy(other))
            for other in self.documents.all()
            if other.uri != document.uri and other.syntax is not None
        ]
        recent = []
        for place in self.recent.places()[:6]:
            if place.uri not in self.documents:
                continue
            source = self.documents.get(place.uri)
            first = max(0, place.line - self.recent.radius)
            last = min(source.line_count - 1, place.line + self.recent.radius)
            text = "\n".join(source.line(i) for i in range(first, last + 1)).strip("\n")
            if text.strip():
                recent.append(
                    RecentChunk(
                        self.display_path(place.uri), text, place.uri == document.uri, first
                    )
                )
        return {
            "recent": recent,
            "path": self.display_path(document.uri),
            "tree": document.syntax.tree(document.text) if document.syntax else None,
            "own_definitions": self.definitions.lazy(document) if document.syntax else None,
            "others": others,
        }

    def display_path(self, uri: str) -> str:
        """The document's path relative to the workspace root, as the model should see it."""
        root = self.workspace.root_uri if self.protocol.workspace is not None else None
        if root and uri.startswith(root.rstrip("/") + "/"):
            return uri[len(root.rstrip("/")) + 1 :]
        return uri.rsplit("/", 1)[-1]

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
                # Engine requests open now and at most so far (completion.max_inflight), and
                # failures in a row behind the current backoff (completion/admission.py).
                "requests_open": self.service.slots.active,
                "requests_open_peak": self.service.slots.peak,
                "failures_in_a_row": self.service.backoff.failures,
                # Pool, per-endpoint windowed speculative acceptance and failover state.
                "routing": engine.snapshot() if engine else None,
            },
        }


server = CopilotServer()
notifications.register(server)  # streaming + accept tracking (docs/protocol.md)
if isinstance(server.protocol, CopilotProtocol):
    server.protocol.on_bad_change = server.lost_edit


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
    if answer:  # null: the client has no such section; anything but an object: a message
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
        ls.lost_edit(params.text_document.uri, str(error))
        return
    for edit in edits:
        if edit.start is not None:
            ls.recent.touch(params.text_document.uri, edit.start.line)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CopilotServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.documents.close(params.text_document.uri)
    ls.definitions.forget(params.text_document.uri)
    ls.recent.forget(params.text_document.uri)
    ls.service.forget(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
async def inline_completion(
    ls: CopilotServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    try:
        document = ls.documents.get(params.text_document.uri)
    except DocumentError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    if not document.in_sync:
        return types.InlineCompletionList(items=[])  # see CopilotServer.lost_edit
    text = document.text
    encoding = ls.encoding
    cursor = Position(params.position.line, params.position.character)
    offset = document.offset(cursor, encoding)
    automatic = params.context.trigger_kind == types.InlineCompletionTriggerKind.Automatic
    try:
        suggestion = await ls.service.complete(
            document.uri,
            document.language_id,
            text,
            offset,
            automatic=automatic,
            line_starts=document.starts,
            **ls.prompt_context(document),
        )
    except ConfigError as error:  # e.g. a broken model family file: one message, no traceback
        ls.warn_once([str(error)])
        return types.InlineCompletionList(items=[])
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
