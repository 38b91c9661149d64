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

    def set_text(self, text: str, starts: list[int] | None = None) -> None:
        """Take `text`, whose line starts are `starts` when the caller kept them up."""
        self.text = text
        self._starts = starts


def differing_range(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, replacement): `old[start:end]` replaced by `replacement` gives `new`,
    with the longest common head and tail kept out of the range."""
    limit = min(len(old), len(new))
    # A block at a time (memcmp), then a character at a time inside the block that differs.
    head = 0
    while head + _BLOCK <= limit and old[head : head + _BLOCK] == new[head : head + _BLOCK]:
        head += _BLOCK
    while head < limit and old[head] == new[head]:
        head += 1
    room = limit - head  # the tail must not overlap the head
    old_end, new_end = len(old), len(new)
    while room >= _BLOCK and old[old_end - _BLOCK : old_end] == new[new_end - _BLOCK : new_end]:
        old_end, new_end, room = old_end - _BLOCK, new_end - _BLOCK, room - _BLOCK
    while room > 0 and old[old_end - 1] == new[new_end - 1]:
        old_end, new_end, room = old_end - 1, new_end - 1, room - 1
    return head, old_end, new[head:new_end]


_BLOCK = 512


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

    def find(self, uri: str) -> Document | None:
        return self._documents.get(uri)

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
        # (text before, its line starts, start, end, new text) per edit; the tree hears of
        # them only once every edit has proven valid.
        applied: list[tuple[str, list[int], int, int, str]] = []
        # Line starts follow the edits, recomputed around each edit only (a keystroke in a
        # large file must not rescan it).
        starts = document.starts
        for edit in edits:
            if edit.start is None or edit.end is None:
                # The whole text replaced (an editor's undo or format may send it so): applied
                # as the range that differs, so that what is kept per line and per subtree
                # carries over as after any other edit.
                start, end, new_text = differing_range(text, edit.new_text)
            else:
                start = offset_at(text, edit.start, encoding, starts)
                end = offset_at(text, edit.end, encoding, starts)
                new_text = edit.new_text
                if end < start:
                    document.in_sync = False
                    raise DocumentError(
                        f"edit range ends before it starts ({edit.start} > {edit.end}) in {uri}"
                    )
            applied.append((text, starts, start, end, new_text))
            text = text[:start] + new_text + text[end:]
            starts = edited_line_starts(starts, text, start, end, len(new_text))
        if document.syntax is not None:
            for before, before_starts, start, end, new_text in applied:
                document.syntax.edit(before, start, end, new_text, before_starts)
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
