"""One tree-sitter tree per document, kept current by incremental edits.

`edit()` is told about every change as it is applied (in code points, on the text before
the change); the tree is re-parsed lazily, reusing the old tree, the next time it is
needed. Tree-sitter works on UTF-8 bytes and counts rows by \\n only.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass

import tree_sitter

from copilot_lsp.context.languages import grammar

ENCODING = "utf-8"
ERRORS = "surrogatepass"  # lone surrogates from a client must not crash a parse


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


def _byte_len(text: str) -> int:
    return len(text.encode(ENCODING, ERRORS))


def _point(text: str, offset: int) -> tuple[int, int]:
    row = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return row, _byte_len(text[line_start:offset])


@dataclass(frozen=True, slots=True)
class Span:
    """Where a text differs from an earlier version of it: bytes [start, end) now, which were
    [start, end - delta) then; everything else is the same, moved by `delta` after the span."""

    start: int
    end: int
    delta: int


class EditLog:
    """The byte ranges a document's text and tree changed in, numbered by generation, so that
    what is kept per subtree (definitions) is brought up to date around the edits only."""

    KEEP = 512
    """Changes remembered; a reader further behind starts over."""

    def __init__(self) -> None:
        self.generation = 0
        self._changes: deque[tuple[int, int, int]] = deque(maxlen=self.KEEP)
        self._oldest = 1
        """The generation of `_changes[0]`."""

    def record(self, start: int, old_end: int, new_end: int) -> None:
        """Bytes [start, old_end) became [start, new_end)."""
        self.generation += 1
        if len(self._changes) == self.KEEP:
            self._oldest += 1
        self._changes.append((start, old_end, new_end))

    def reset(self) -> None:
        """The whole text was replaced: nothing before now can be brought up to date."""
        self.generation += 1
        self._changes.clear()
        self._oldest = self.generation + 1

    def since(self, generation: int) -> Span | None:
        """One span covering every change after `generation` (None: not known any more).

        No change at all is the empty span at 0."""
        if generation < self._oldest - 1 or generation > self.generation:
            return None
        covering: tuple[int, int] | None = None
        delta = 0
        for lo, old_end, new_end in itertools.islice(
            self._changes, generation - self._oldest + 1, None
        ):
            if covering is None:
                covering = lo, new_end
            else:
                start, end = covering
                # Where the covering span's end lands once this change is applied.
                if end > lo:
                    end = end + new_end - old_end if end >= old_end else new_end
                covering = min(start, lo), max(end, new_end)
            delta += new_end - old_end
        start, end = covering or (0, 0)
        return Span(start, end, delta)


class SyntaxTree:
    """The parse tree of one document in one language."""

    def __init__(self, language: tree_sitter.Language, text: str) -> None:
        self._parser = tree_sitter.Parser(language)
        self.language = language
        self._tree = self._parser.parse(encode(text))
        self._dirty = False
        self.changes = EditLog()
        """Every text edit, and every range whose structure a re-parse changed."""

    @classmethod
    def for_language(cls, language_id: str, text: str) -> SyntaxTree | None:
        language = grammar(language_id)
        return cls(language, text) if language is not None else None

    def edit(self, before: str, start: int, end: int, new_text: str) -> None:
        """Record that `before[start:end]` became `new_text` (code-point offsets)."""
        start_byte = _byte_len(before[:start])
        old_end_byte = start_byte + _byte_len(before[start:end])
        new_end_byte = start_byte + _byte_len(new_text)
        start_point = _point(before, start)
        old_end_point = _point(before, end)
        if "\n" in new_text:
            tail = new_text[new_text.rfind("\n") + 1 :]
            new_end_point = (start_point[0] + new_text.count("\n"), _byte_len(tail))
        else:
            new_end_point = (start_point[0], start_point[1] + _byte_len(new_text))
        self._tree.edit(
            start_byte=start_byte,
            old_end_byte=old_end_byte,
            new_end_byte=new_end_byte,
            start_point=start_point,
            old_end_point=old_end_point,
            new_end_point=new_end_point,
        )
        self.changes.record(start_byte, old_end_byte, new_end_byte)
        self._dirty = True

    def replace_all(self, text: str) -> None:
        self._tree = self._parser.parse(encode(text))
        self._dirty = False
        self.changes.reset()

    def tree(self, text: str) -> tree_sitter.Tree:
        """The tree for `text` (the document's current text), re-parsed if edits came in."""
        if self._dirty:
            old = self._tree
            self._tree = self._parser.parse(encode(text), old)
            self._dirty = False
            # An edit can change the structure outside its own bytes (a quote opened turns
            # the rest of the file into a string): those ranges count as changed too.
            for changed in old.changed_ranges(self._tree):
                self.changes.record(changed.start_byte, changed.end_byte, changed.end_byte)
        return self._tree

    def parse_other(self, text: str) -> tree_sitter.Tree:
        """A fresh tree of some other text in the same language (for trial completions)."""
        return self._parser.parse(encode(text))


def error_count(node: tree_sitter.Node) -> int:
    """ERROR and MISSING nodes under `node` (0 for a tree without syntax errors)."""
    if not node.has_error:
        return 0
    count = 1 if node.is_error or node.is_missing else 0
    for child in node.children:
        count += error_count(child)
    return count
