"""The language server: pygls glue that decodes requests and calls the service.

Handlers stay short: translate the LSP types, call `CopilotService` (service.py), encode
the result. Settings layers and the section name live in configuration.py, the streaming and
accept-tracking notifications in notifications.py, the method names in methods.py.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from copilot_lsp import __version__
from copilot_lsp.context.documents import Edit
from copilot_lsp.errors import ConfigError, DocumentError
from copilot_lsp.lsp import indexing, methods, notifications
from copilot_lsp.lsp.configuration import SECTIONS, SettingsLayers
from copilot_lsp.lsp.methods import ACCEPT_COMMAND, ACCEPT_NEXT_EDIT_COMMAND, STATS_REQUEST
from copilot_lsp.lsp.pygls_guard import CopilotProtocol, serve_stdio
from copilot_lsp.nextedit.service import NextEdit
from copilot_lsp.positions import Encoding, Position
from copilot_lsp.service import CopilotService, PlacedSuggestion

logger = logging.getLogger(__name__)


class CopilotServer(LanguageServer):
    """The LSP endpoint of one `CopilotService`, and the messages it shows the user."""

    def __init__(self) -> None:
        protocol = functools.partial(CopilotProtocol, on_bad_change=self.lost_edit)
        super().__init__(
            "copilot-lsp", __version__, protocol_cls=cast("type[CopilotProtocol]", protocol)
        )
        self.service = CopilotService(
            publisher=notifications.PartialPublisher(
                lambda method, params: self.protocol.notify(method, params), lambda: self.encoding
            ),
            on_engine_state=self._engine_state_changed,
            notify=self._tell,
            on_index_progress=indexing.IndexProgress(self),
        )
        self.folders: list[str] = []
        """The workspace folders `initialize` named (indexed once settings are known), as
        `workspace/didChangeWorkspaceFolders` changes them."""
        self.watching = False
        """Whether the file watchers were registered with the client."""
        self.layers = SettingsLayers(
            self.service.configure, warn=self._warn, deprecated=self._deprecated
        )

    def _start_io_async(self, stdin: Any = None, stdout: Any = None) -> None:
        # pygls' own loop drops requests with bad params unanswered (lsp/pygls_guard.py).
        serve_stdio(self, stdin, stdout)

    @property
    def encoding(self) -> Encoding:
        chosen = str(self.server_capabilities.position_encoding or "utf-16")
        return chosen if chosen in ("utf-8", "utf-16", "utf-32") else "utf-16"  # type: ignore[return-value]

    def lost_edit(self, uri: str, reason: str) -> None:
        """A didChange for `uri` could not be applied: say so once, stop completing there.

        The document's text may now differ from the editor's; building a completion from it
        could insert text in the wrong place, so completions for it pause until the editor
        sends the whole text (a full-document change, or closing and reopening the file).
        """
        if not self.service.lost_edit(uri):
            logger.warning("ignored didChange for a document that is not open: %s", reason)
            self._log(types.MessageType.Warning, f"ignored didChange: {reason}")
            return
        logger.warning("lost an edit of an open document: %s", reason)
        self._log(
            types.MessageType.Error,
            f"lost track of {uri}: {reason}. Completions for it are paused until the "
            "editor sends its whole text again (close and reopen the file).",
        )

    def _log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(kind, f"copilot-lsp: {message}"))

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

    def _tell(self, message: str) -> None:
        logger.warning("%s", message)
        self.window_show_message(
            types.ShowMessageParams(types.MessageType.Warning, f"copilot-lsp: {message}")
        )

    def _deprecated(self, message: str) -> None:
        logger.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))


server = CopilotServer()


@server.feature(types.INITIALIZE)
def initialize(ls: CopilotServer, params: types.InitializeParams) -> None:
    ls.service.set_root(ls.workspace.root_uri)
    ls.folders = indexing.folders(params)
    ls.layers.load_base()
    ls.layers.set_layer("initializationOptions", params.initialization_options)


@server.feature(types.INITIALIZED)
async def initialized(ls: CopilotServer, params: types.InitializedParams) -> None:
    await _pull_configuration(ls)
    ls.service.index_workspace(ls.folders)  # in the background, with the settings known
    _watch(ls)
    await ls.service.warm_up()  # the HTTP client and the prompt format, before the first key


def _watch(ls: CopilotServer) -> None:
    """Register the file watchers once there is a folder to watch (their globs match in
    every workspace folder, added ones too)."""
    if ls.folders and not ls.watching and indexing.can_watch(ls.client_capabilities):
        ls.watching = True
        asyncio.get_running_loop().create_task(indexing.register_watchers(ls))


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def did_change_workspace_folders(
    ls: CopilotServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    ls.folders = indexing.folders_after(ls.folders, params.event)
    ls.service.folders_changed(ls.folders)
    _watch(ls)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: CopilotServer, params: types.DidChangeConfigurationParams
) -> None:
    if not ls.layers.pushed(params.settings):
        await _pull_configuration(ls)


async def _pull_configuration(ls: CopilotServer) -> None:
    capable = ls.client_capabilities.workspace and ls.client_capabilities.workspace.configuration
    if not capable:
        return
    items = [types.ConfigurationItem(section=section) for section in SECTIONS]
    try:
        answer = await ls.workspace_configuration_async(types.ConfigurationParams(items))
    except Exception as error:  # the client may not answer; its settings are optional
        logger.warning("workspace/configuration failed: %s", error)
        return
    ls.layers.pulled(answer)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: CopilotServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    ls.service.open(item.uri, item.language_id, item.version, item.text)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: CopilotServer, params: types.DidChangeTextDocumentParams) -> None:
    document = params.text_document
    try:
        ls.service.change(document.uri, document.version, _edits(params), ls.encoding)
    except DocumentError as error:
        ls.lost_edit(document.uri, str(error))


def _edits(params: types.DidChangeTextDocumentParams) -> list[Edit]:
    edits = []
    for change in params.content_changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start = Position(change.range.start.line, change.range.start.character)
            end = Position(change.range.end.line, change.range.end.character)
            edits.append(Edit(change.text, start, end))
        else:
            edits.append(Edit(change.text))
    return edits


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: CopilotServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.service.saved(params.text_document.uri)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: CopilotServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.service.files_changed(indexing.changes(params))


@server.feature(types.SHUTDOWN)
def shutdown(ls: CopilotServer, params: Any) -> None:
    ls.service.shutdown()


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CopilotServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.service.close(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
async def inline_completion(
    ls: CopilotServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    cursor = Position(params.position.line, params.position.character)
    automatic = params.context.trigger_kind == types.InlineCompletionTriggerKind.Automatic
    try:
        found = await ls.service.complete(
            params.text_document.uri, cursor, ls.encoding, automatic=automatic
        )
    except DocumentError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    except ConfigError as error:  # e.g. a broken model family file: one message, no traceback
        ls.layers.warn_once([str(error)])
        return types.InlineCompletionList(items=[])
    if found is None:
        return types.InlineCompletionList(items=[])
    return types.InlineCompletionList(items=[_item(found), *map(_item, found.alternatives)])


def _item(suggestion: PlacedSuggestion) -> types.InlineCompletionItem:
    start, end = suggestion.start, suggestion.end
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
        return ls.service.feedback(args[0], "accepted")
    return ls.service.feedback(args[0], "partially_accepted", chars)


@server.feature(methods.DID_SHOW)
@server.feature(methods.COPILOT_DID_SHOW)
def did_show(ls: CopilotServer, params: Any) -> None:
    if (identifier := _feedback_id(params, "displayed")) is not None:
        ls.service.displayed(identifier)


@server.feature(methods.DID_PARTIALLY_ACCEPT)
@server.feature(methods.COPILOT_DID_PARTIALLY_ACCEPT)
def did_partially_accept(ls: CopilotServer, params: Any) -> None:
    if (identifier := _feedback_id(params, "partially_accepted")) is not None:
        chars = notifications.accepted_length(params)
        ls.service.feedback(identifier, "partially_accepted", chars)


@server.feature(methods.DID_DISMISS)
def did_dismiss(ls: CopilotServer, params: Any) -> None:
    if (identifier := _feedback_id(params, "dismissed")) is not None:
        ls.service.feedback(identifier, "dismissed")


def _feedback_id(params: Any, kind: str) -> str | None:
    identifier = notifications.completion_id(params)
    if identifier is None:
        logger.warning("ignored %s feedback without a completion id", kind)
    return identifier


@server.feature(methods.INLINE_EDIT)
async def copilot_inline_edit(ls: CopilotServer, params: Any) -> dict[str, Any]:
    """Copilot's next-edit request: `{textDocument: {uri, version}, position}`."""
    document = notifications.field(params, "textDocument")
    uri, version = notifications.field(document, "uri"), notifications.field(document, "version")
    position = notifications.field(params, "position")
    line = notifications.field(position, "line")
    character = notifications.field(position, "character")
    if not (isinstance(uri, str) and _integer(version) and _integer(line) and _integer(character)):
        raise JsonRpcInvalidParams(
            f"{methods.INLINE_EDIT} expects {{textDocument: {{uri, version}}, position}}"
        )
    try:
        edits = await ls.service.next_edit(uri, version, Position(line, character), ls.encoding)
    except ConfigError as error:  # a broken next-edit format file: one message
        ls.layers.warn_once([str(error)])
        edits = []
    return {"edits": [_inline_edit(edit) for edit in edits]}


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _inline_edit(found: NextEdit) -> dict[str, Any]:
    start, end = found.edit.start, found.edit.end
    return {
        "text": found.edit.text,
        "textDocument": {"uri": found.uri, "version": found.version},
        "range": {
            "start": {"line": start.line, "character": start.character},
            "end": {"line": end.line, "character": end.character},
        },
        "command": {
            "title": "Accept next edit",
            "command": ACCEPT_NEXT_EDIT_COMMAND,
            "arguments": [found.id],
        },
    }


@server.feature(methods.DID_SHOW_INLINE_EDIT)
def did_show_inline_edit(ls: CopilotServer, params: Any) -> None:
    if (identifier := _feedback_id(params, "displayed")) is not None:
        ls.service.displayed(identifier)


@server.feature(methods.DID_FOCUS)
def did_focus(ls: CopilotServer, params: Any) -> None:
    """Copilot's clients say which document has the focus; nothing uses it yet."""


@server.command(ACCEPT_NEXT_EDIT_COMMAND)
def accept_next_edit(ls: CopilotServer, *args: Any) -> bool:
    """The next edit's command, run by the editor on accept: `[id]`."""
    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(f"{ACCEPT_NEXT_EDIT_COMMAND} expects [id]")
    return ls.service.feedback(args[0], "accepted")


@server.feature(STATS_REQUEST)
def copilot_stats(ls: CopilotServer, params: Any) -> dict[str, Any]:
    """Rolling p50/p90/p99 per stage, outcome counts, recent timelines and engine state."""
    return ls.service.stats()
