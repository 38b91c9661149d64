"""Open documents as the client last described them, updated from full or incremental edits."""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot_lsp.context.syntax import SyntaxTree
from copilot_lsp.errors import DocumentError
from copilot_lsp.positions import (
    Encoding,
    Position,
    edited_line_starts,
    line_content,
    line_starts,
    offset_at,
)


@dataclass(slots=True)
class Document:
    """One open text document; `text` is exactly what the client holds."""

    uri: str
    language_id: str
    version: int
    text: str
    syntax: SyntaxTree | None = field(default=None, repr=False)
    """None for languages without a grammar: callers fall back to line heuristics."""
    in_sync: bool = True
    """False once an edit could not be applied: `text` may differ from the client's, so no
    completion is built from it until the client sends the whole text again."""
    _starts: list[int] | None = field(default=None, repr=False)

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            self._starts = line_starts(self.text)
        return self._starts

    def offset(self, position: Position, encoding: Encoding) -> int:
        return offset_at(self.text, position, encoding, self.starts)

    def line(self, index: int) -> str:
        return line_content(self.text, self.starts, index)

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def set_text(self, text: str, starts: list[int] | None) -> None:
        """Take `text`, whose line starts are `starts` when the caller kept them up."""
        self.text = text
        self._starts = starts


@dataclass(frozen=True, slots=True)
class Edit:
    """One content change: `start`/`end` None means the whole document is replaced."""

    new_text: str
    start: Position | None = None
    end: Position | None = None


class DocumentStore:
    """The open documents, keyed by URI."""

    def __init__(self) -> None:
        self._documents: dict[str, Document] = {}

    def open(self, uri: str, language_id: str, version: int, text: str) -> Document:
        document = Document(uri, language_id, version, text)
        document.syntax = SyntaxTree.for_language(language_id, text)
        self._documents[uri] = document
        return document

    def get(self, uri: str) -> Document:
        try:
            return self._documents[uri]
        except KeyError:
            raise DocumentError(f"document {uri} is not open") from None

    def all(self) -> list[Document]:
        return list(self._documents.values())

    def __contains__(self, uri: object) -> bool:
        return uri in self._documents

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def change(self, uri: str, version: int, edits: list[Edit], encoding: Encoding) -> Document:
        """Apply `edits` in order, as the LSP specification asks; all or nothing.

        Positions past the end of a line or of the document are clamped, as the specification
        asks. A range whose end comes before its start is rejected instead of being guessed at:
        the stored text stays as it was, the document is marked out of sync and DocumentError
        is raised. An out-of-sync document ignores edits until one replaces the whole text.
        """
        document = self.get(uri)
        if not document.in_sync:
            full = [i for i, edit in enumerate(edits) if edit.start is None or edit.end is None]
            if not full:
                document.version = version
                return document
            edits = edits[full[-1] :]
            document.in_sync = True  # the full text is the client's again
        text = document.text
        # (text before, start, end, new text) per edit, or None for a full replacement;
        # the tree hears of them only once every edit has proven valid.
        applied: list[tuple[str, int, int, str] | None] = []
        # Line starts follow the edits, recomputed around each edit only (a keystroke in a
        # large file must not rescan it); None after a whole-text replacement (lazily).
        starts: list[int] | None = document.starts
        for edit in edits:
            if edit.start is None or edit.end is None:
                text = edit.new_text
                starts = None
                applied.append(None)
                continue
            if starts is None:
                starts = line_starts(text)
            start = offset_at(text, edit.start, encoding, starts)
            end = offset_at(text, edit.end, encoding, starts)
            if end < start:
                document.in_sync = False
                raise DocumentError(
                    f"edit range ends before it starts ({edit.start} > {edit.end}) in {uri}"
                )
            applied.append((text, start, end, edit.new_text))
            text = text[:start] + edit.new_text + text[end:]
            starts = edited_line_starts(starts, text, start, end, len(edit.new_text))
        if document.syntax is not None:
            for change in applied:
                if change is None:
                    document.syntax.replace_all(text)
                else:
                    document.syntax.edit(*change)
        document.set_text(text, starts)
        document.version = version
        return document

    def mark_out_of_sync(self, uri: str) -> bool:
        """Stop trusting `uri`'s text (an edit for it was lost); True if it was trusted."""
        document = self._documents.get(uri)
        if document is None or not document.in_sync:
            return False
        document.in_sync = False
        return True
