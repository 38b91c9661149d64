"""Open documents as the client last described them, updated from full or incremental edits."""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot_lsp.errors import DocumentError
from copilot_lsp.positions import Encoding, Position, line_content, line_starts, offset_at


@dataclass(slots=True)
class Document:
    """One open text document; `text` is exactly what the client holds."""

    uri: str
    language_id: str
    version: int
    text: str
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

    def replace(self, start: int, end: int, new_text: str) -> None:
        self.text = self.text[:start] + new_text + self.text[end:]
        self._starts = None


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
        self._documents[uri] = document
        return document

    def get(self, uri: str) -> Document:
        try:
            return self._documents[uri]
        except KeyError:
            raise DocumentError(f"document {uri} is not open") from None

    def __contains__(self, uri: object) -> bool:
        return uri in self._documents

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def change(self, uri: str, version: int, edits: list[Edit], encoding: Encoding) -> Document:
        """Apply `edits` in order, as the LSP specification asks; all or nothing.

        A range whose end comes before its start is rejected instead of being guessed at,
        so a confused client gets an error and the stored text stays as it was.
        """
        document = self.get(uri)
        text = document.text
        for edit in edits:
            if edit.start is None or edit.end is None:
                text = edit.new_text
                continue
            starts = line_starts(text)
            start = offset_at(text, edit.start, encoding, starts)
            end = offset_at(text, edit.end, encoding, starts)
            if end < start:
                raise DocumentError(
                    f"edit range ends before it starts ({edit.start} > {edit.end}) in {uri}"
                )
            text = text[:start] + edit.new_text + text[end:]
        document.replace(0, len(document.text), text)
        document.version = version
        return document
