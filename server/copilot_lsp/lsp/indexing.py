"""The workspace index over LSP: the folders `initialize` names, file watchers registered
with the client, and its passes reported as work-done progress."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from copilot_lsp.context.project_files import PROJECT_FILES
from copilot_lsp.context.workspace_files import EXTENSIONS

logger = logging.getLogger(__name__)

WATCHER_ID = "copilot-lsp/workspace-index"
WATCHED = "**/*.{" + ",".join(sorted(suffix[1:] for suffix in EXTENSIONS)) + "}"
WATCHED_PROJECT = "**/{" + ",".join(sorted(PROJECT_FILES)) + "}"
"""The files that decide where imports lead (context/project_files.py)."""
IGNORE_FILES = "**/.gitignore"
PROGRESS_TOKEN = "copilot-lsp/indexing"


def folders(params: types.InitializeParams) -> list[str]:
    """The workspace folders' URIs: `workspaceFolders`, else `rootUri`, else `rootPath`."""
    if params.workspace_folders:
        return [folder.uri for folder in params.workspace_folders]
    if params.root_uri:
        return [params.root_uri]
    if params.root_path:
        from pathlib import Path

        return [Path(params.root_path).resolve().as_uri()]
    return []


def folders_after(current: list[str], event: types.WorkspaceFoldersChangeEvent) -> list[str]:
    """The workspace folders once `event` (`workspace/didChangeWorkspaceFolders`) applies:
    the removed ones out, the added ones after the rest, each once."""

    def key(uri: str) -> str:
        return uri.rstrip("/")

    removed = {key(folder.uri) for folder in event.removed}
    after = [uri for uri in current if key(uri) not in removed]
    present = {key(uri) for uri in after}
    for folder in event.added:
        if key(folder.uri) not in present:
            present.add(key(folder.uri))
            after.append(folder.uri)
    return after


def can_watch(capabilities: types.ClientCapabilities) -> bool:
    watched = capabilities.workspace and capabilities.workspace.did_change_watched_files
    return bool(watched and watched.dynamic_registration)


async def register_watchers(server: Any) -> None:
    """Ask the client to tell `workspace/didChangeWatchedFiles` for the indexed languages, the
    `.gitignore` files (their rules decide what is indexed) and deleted folders (a client
    reports a folder's deletion once, not each file in it)."""
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[
            types.FileSystemWatcher(glob_pattern=WATCHED),
            types.FileSystemWatcher(glob_pattern=WATCHED_PROJECT),
            types.FileSystemWatcher(glob_pattern=IGNORE_FILES),
            types.FileSystemWatcher(glob_pattern="**/*", kind=types.WatchKind.Delete),
        ]
    )
    registration = types.Registration(
        id=WATCHER_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await server.client_register_capability_async(types.RegistrationParams([registration]))
    except Exception as error:  # the index then follows saves and open documents only
        logger.warning("the client did not register the file watchers: %s", error)


def changes(params: types.DidChangeWatchedFilesParams) -> list[tuple[str, bool]]:
    """(uri, deleted) per event."""
    return [(event.uri, event.type == types.FileChangeType.Deleted) for event in params.changes]


class IndexProgress:
    """Each pass of the index as `$/progress` begin, report… end, when the client supports
    `window.workDoneProgress` (else nothing is sent). A pass whose progress the client
    declines (an error answering `window/workDoneProgress/create`) is not asked again."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self._latest: tuple[int, int, bool] | None = None
        self._task: asyncio.Task[None] | None = None
        self._token = ""
        self._passes = 0
        self._declined = False

    def __call__(self, done: int, total: int, finished: bool) -> None:
        window = self._server.client_capabilities.window
        if not (window and window.work_done_progress):
            return
        if self._declined:
            self._declined = not finished  # the next pass asks again
            return
        self._latest = (done, total, finished)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        progress = self._server.work_done_progress
        while self._latest is not None:
            done, total, finished = self._latest
            self._latest = None
            message = f"indexing {done:,} of {total:,} files"
            if not self._token:
                self._passes += 1
                token = f"{PROGRESS_TOKEN}/{self._passes}"
                try:
                    await progress.create_async(token)
                except Exception as error:
                    logger.warning("no indexing progress: %s", error)
                    pending, self._latest = self._latest, None
                    # Declined until this pass ends (it may have ended while we asked).
                    self._declined = not (finished or (pending is not None and pending[2]))
                    return
                self._token = token
                begin = types.WorkDoneProgressBegin(
                    title="copilot-lsp", message=message, percentage=_percent(done, total)
                )
                progress.begin(token, begin)
            if finished:
                end = types.WorkDoneProgressEnd(message=f"indexed {total:,} files")
                progress.end(self._token, end)
                progress.tokens.pop(self._token, None)
                self._token = ""
            elif done:
                report = types.WorkDoneProgressReport(
                    message=message, percentage=_percent(done, total)
                )
                progress.report(self._token, report)


def _percent(done: int, total: int) -> int:
    return round(100 * done / total) if total else 100
