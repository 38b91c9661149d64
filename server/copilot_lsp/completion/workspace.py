"""The open documents and what completing in them draws on: each document's definitions, the
places recently edited, paths as the model should see them. Builds the typed request for a
cursor (completion/request.py) from all of that, in one place."""

from __future__ import annotations

from copilot_lsp.completion.assembly import OtherDocument, RecentChunk
from copilot_lsp.completion.request import InlineRequest, inline_request
from copilot_lsp.context import snippets
from copilot_lsp.context.documents import Document, DocumentStore, Edit
from copilot_lsp.context.index import DefinitionIndex
from copilot_lsp.context.recent import RecentPlaces
from copilot_lsp.errors import DocumentError
from copilot_lsp.positions import Encoding, Position
from copilot_lsp.settings import CompletionSettings

RECENT_CHUNKS = 6
"""Recently edited places offered to the prompt, newest first."""


class Workspace:
    def __init__(self) -> None:
        self.documents = DocumentStore()
        self.definitions = DefinitionIndex()
        self.recent = RecentPlaces()
        self._root_uri: str | None = None

    def set_root(self, uri: str | None) -> None:
        """The workspace folder (from `initialize`): paths in prompts are relative to it."""
        self._root_uri = uri

    def open(self, uri: str, language_id: str, version: int, text: str) -> None:
        self.documents.open(uri, language_id, version, text)
        snippets.prepare(language_id)

    def change(self, uri: str, version: int, edits: list[Edit], encoding: Encoding) -> None:
        """Apply the client's edits (DocumentStore.change) and remember where they were."""
        self.documents.change(uri, version, edits, encoding)
        for edit in edits:
            if edit.start is not None:
                self.recent.touch(uri, edit.start.line)

    def close(self, uri: str) -> None:
        self.documents.close(uri)
        self.definitions.forget(uri)
        self.recent.forget(uri)

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
        return inline_request(
            document.uri,
            document.language_id,
            document.text,
            document.offset(cursor, encoding),
            automatic=automatic,
            options=options,
            version=document.version,
            line_starts=document.starts,
            path=self.display_path(document.uri),
            tree=document.syntax.outline(document.text) if document.syntax else None,
            own_definitions=self.definitions.lazy(document) if document.syntax else None,
            others=self._others(document),
            recent=self._recent(document),
        )

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
            if place.uri not in self.documents:
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
        root = self._root_uri
        if root and uri.startswith(root.rstrip("/") + "/"):
            return uri[len(root.rstrip("/")) + 1 :]
        return uri.rsplit("/", 1)[-1]
