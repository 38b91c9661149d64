"""The open documents and what completing in them draws on: each document's definitions, the
places recently edited, the workspace index of the files not open (context/indexer.py keeps
it current, context/retrieval.py reads it), paths as the model should see them. Builds the
typed request for a cursor (completion/request.py) from all of that, in one place."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from concurrent.futures import Executor

from copilot_lsp.completion.assembly import OtherDocument, RecentChunk
from copilot_lsp.completion.request import InlineRequest, MemberSource, inline_request
from copilot_lsp.context import snippets
from copilot_lsp.context.documents import Document, DocumentStore, Edit
from copilot_lsp.context.index import DefinitionIndex
from copilot_lsp.context.indexer import WorkspaceIndexer, process_executor
from copilot_lsp.context.project_files import PROJECT_FILES
from copilot_lsp.context.recent import RecentPlaces
from copilot_lsp.context.repo_index import RepoIndex
from copilot_lsp.context.retrieval import Cursor, Retriever
from copilot_lsp.context.workspace_files import secret_file
from copilot_lsp.errors import DocumentError
from copilot_lsp.positions import Encoding, Position
from copilot_lsp.settings import CompletionSettings

RECENT_CHUNKS = 6
"""Recently edited places offered to the prompt, newest first."""


class Workspace:
    def __init__(self, index_executor: Callable[[], Executor] = process_executor) -> None:
        """`index_executor` makes where the workspace index reads and parses files (a process
        of its own by default); nothing is indexed until `index_folders`."""
        self.documents = DocumentStore()
        self.definitions = DefinitionIndex()
        self.recent = RecentPlaces()
        self.indexer = WorkspaceIndexer(
            RepoIndex(),
            self.open_text,
            executor=index_executor,
            freeze_heap=index_executor is process_executor,  # the server's own process
        )
        self.retriever = Retriever(self.indexer.index, settled=self.indexer.idle.is_set)
        self._root_uri: str | None = None

    def set_root(self, uri: str | None) -> None:
        """The workspace folder (from `initialize`): paths in prompts are relative to it."""
        self._root_uri = uri

    def index_folders(self, uris: list[str]) -> None:
        """Index these workspace folders in the background (the event loop must be running)."""
        self.indexer.start(uris)

    def folders_changed(self, uris: list[str]) -> None:
        """The workspace folders are now `uris`: the index follows, in the background."""
        self.indexer.set_folders(uris)

    def open_text(self, uri: str) -> str | None:
        """The text of `uri` as the editor holds it, when it is open (and in sync)."""
        document = self.documents.find(uri)
        return document.text if document is not None and document.in_sync else None

    def open(self, uri: str, language_id: str, version: int, text: str) -> None:
        self.documents.open(uri, language_id, version, text)
        snippets.prepare(language_id)
        self.indexer.changed(uri)

    def change(self, uri: str, version: int, edits: list[Edit], encoding: Encoding) -> None:
        """Apply the client's edits (DocumentStore.change) and remember where they were."""
        self.documents.change(uri, version, edits, encoding)
        for edit in edits:
            if edit.start is not None:
                self.recent.touch(uri, edit.start.line)
        self.indexer.edited(uri)

    def saved(self, uri: str) -> None:
        self.disk_changed(uri)
        self.indexer.changed(uri)

    def disk_changed(self, uri: str) -> None:
        """`uri` changed on disk: when it is a project file (go.mod, Cargo.toml, tsconfig),
        imports are resolved with its new content from the next line on."""
        if uri.rsplit("/", 1)[-1] in PROJECT_FILES:
            self.retriever.project_changed()

    def close(self, uri: str) -> None:
        self.documents.close(uri)
        self.definitions.forget(uri)
        self.recent.forget(uri)
        self.retriever.forget(uri)
        self.indexer.changed(uri)  # back to the file on disk

    def __contains__(self, uri: object) -> bool:
        return uri in self.documents

    def mark_out_of_sync(self, uri: str) -> bool:
        return self.documents.mark_out_of_sync(uri)

    def version_of(self, uri: str) -> int | None:
        try:
            return self.documents.get(uri).version
        except DocumentError:
            return None

    def request(
        self,
        uri: str,
        cursor: Position,
        encoding: Encoding,
        *,
        automatic: bool,
        options: CompletionSettings,
    ) -> InlineRequest | None:
        """The request for `cursor` in `uri`; None while the document is out of sync (its text
        may differ from the editor's). Raises DocumentError when `uri` is not open."""
        document = self.documents.get(uri)
        if not document.in_sync:
            return None
        offset = document.offset(cursor, encoding)
        here = self._cursor(document, bisect.bisect_right(document.starts, offset) - 1)
        return inline_request(
            document.uri,
            document.language_id,
            document.text,
            offset,
            automatic=automatic,
            options=options,
            version=document.version,
            line_starts=document.starts,
            path=self.display_path(document.uri),
            tree=document.syntax.outline(document.text) if document.syntax else None,
            own_definitions=self.definitions.lazy(document) if document.syntax else None,
            others=self._others(document),
            recent=self._recent(document),
            repository=self.retriever.lazy(here) if here is not None else None,
            members=self._members(here, document.text, offset),
        )

    def _cursor(self, document: Document, line: int) -> Cursor | None:
        """The cursor on `line` as retrieval reads it; None while nothing indexes."""
        if not self.indexer.folders or not self.indexer.enabled:
            return None
        located = self.indexer.locate(document.uri)
        text = document.line(line)
        return Cursor(
            document.uri,
            located[1] if located is not None else None,
            document.language_id,
            document.text[: document.starts[line]],
            line,
            document.syntax.outline(document.text) if document.syntax else None,
            located[0].path if located is not None else None,
            len(text) - len(text.lstrip(" \t")),
        )

    def _members(self, cursor: Cursor | None, text: str, offset: int) -> MemberSource | None:
        """What may follow a dot right before `offset`, when the index knows."""
        if cursor is None:
            return None
        line_before = text[text.rfind("\n", 0, offset) + 1 : offset]
        return lambda: self.retriever.members(cursor, line_before, text)

    def _others(self, document: Document) -> list[OtherDocument]:
        """The other open documents with a tree, their definitions parsed lazily, once per
        version."""
        return [
            OtherDocument(self.display_path(other.uri), self.definitions.lazy(other))
            for other in self.documents.all()
            if other.uri != document.uri and other.syntax is not None
        ]

    def _recent(self, document: Document) -> list[RecentChunk]:
        """The code around the places edited last, in this and the other open documents."""
        chunks = []
        for place in self.recent.places()[:RECENT_CHUNKS]:
            if place.uri not in self.documents or secret_file(self.display_path(place.uri)):
                continue
            source = self.documents.get(place.uri)
            first = max(0, place.line - self.recent.radius)
            last = min(source.line_count - 1, place.line + self.recent.radius)
            text = "\n".join(source.line(i) for i in range(first, last + 1)).strip("\n")
            if text.strip():
                chunks.append(
                    RecentChunk(
                        self.display_path(place.uri), text, place.uri == document.uri, first
                    )
                )
        return chunks

    def display_path(self, uri: str) -> str:
        """The document's path relative to the workspace root, as the model should see it."""
        located = self.indexer.locate(uri)
        if located is not None:
            return located[1]
        root = self._root_uri
        if root and uri.startswith(root.rstrip("/") + "/"):
            return uri[len(root.rstrip("/")) + 1 :]
        return uri.rsplit("/", 1)[-1]
