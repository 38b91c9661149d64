"""One tree-sitter tree per document, kept current by incremental edits.

`edit()` is told about every change as it is applied (in code points, on the text before
the change); the tree is re-parsed lazily, reusing the old tree, the next time it is
needed. Tree-sitter works on UTF-8 bytes and counts rows by \\n only.

What completions read is the document's `outline()`, its top-level nodes (outline.py): for
a large Python text without syntax errors, the statements edits touched are parsed again
alone (forest.py) instead of the whole tree; otherwise it is the whole tree's.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from dataclasses import dataclass

import tree_sitter

from copilot_lsp.context.forest import Forest
from copilot_lsp.context.languages import FAMILY, grammar
from copilot_lsp.context.outline import Outline, whole

SPLIT_FAMILIES = frozenset({"python"})
"""Grammars whose top-level statements parse alike alone and in the file (forest.py)."""
SPLIT_MIN_BYTES = 16_384
"""Smaller texts are parsed whole: tree-sitter's own reuse is quick enough on them."""

ENCODING = "utf-8"
ERRORS = "surrogatepass"  # lone surrogates from a client must not crash a parse


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


def _byte_len(text: str) -> int:
    return len(text.encode(ENCODING, ERRORS))


def _point(text: str, offset: int, starts: list[int] | None = None) -> tuple[int, int]:
    """Tree-sitter's (row, byte column) of a code-point offset: rows count \\n only, which the
    LSP line starts (\\r too) match when the text has no lone \\r."""
    if starts is not None and "\r" not in text:
        row = bisect.bisect_right(starts, offset) - 1
        line_start = starts[row]
    else:
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

    def __init__(self, language: tree_sitter.Language, text: str, *, split: bool = False) -> None:
        self._parser = tree_sitter.Parser(language)
        self.language = language
        source = encode(text)
        self._tree = self._parser.parse(source)
        self._dirty = False
        self.changes = EditLog()
        """Every text edit, and every range whose structure a re-parse changed."""
        self._split = split
        """Whether the language's top-level statements may be parsed apart (forest.py)."""
        self._forest: Forest | None = None
        self._outline: Outline | None = None
        self._adopt(self._tree, source)
        self.parsed_bytes = len(source)
        """Bytes handed to the parser so far (a whole text for each whole parse, even an
        incremental one: tree-sitter may re-lex all of it)."""

    @classmethod
    def for_language(cls, language_id: str, text: str) -> SyntaxTree | None:
        language = grammar(language_id)
        if language is None:
            return None
        return cls(language, text, split=FAMILY.get(language_id) in SPLIT_FAMILIES)

    def edit(
        self, before: str, start: int, end: int, new_text: str, starts: list[int] | None = None
    ) -> None:
        """Record that `before[start:end]` became `new_text` (code-point offsets); `starts`:
        the line starts of `before`, when the caller has them."""
        start_point = _point(before, start, starts)
        old_end_point = _point(before, end, starts)
        if before.isascii():  # one byte per code point: no encoding needed
            start_byte, old_end_byte = start, end
        else:
            start_byte = _byte_len(before[:start])
            old_end_byte = start_byte + _byte_len(before[start:end])
        new_end_byte = start_byte + _byte_len(new_text)
        breaks = new_text.count("\n")
        if breaks:
            tail = new_text[new_text.rfind("\n") + 1 :]
            new_end_point = (start_point[0] + breaks, _byte_len(tail))
        else:
            new_end_point = (start_point[0], start_point[1] + _byte_len(new_text))
        # A copy: the tree handed out before (in a request's outline) must keep its positions.
        self._tree = self._tree.copy()
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
        self._outline = None
        if self._forest is not None:
            points = (start_point, old_end_point, new_end_point)
            self._forest.edit(start_byte, old_end_byte, new_end_byte, points)

    def replace_all(self, text: str) -> None:
        source = encode(text)
        self._tree = self._parser.parse(source)
        self.parsed_bytes += len(source)
        self._dirty = False
        self.changes.reset()
        self._adopt(self._tree, source)

    def tree(self, text: str) -> tree_sitter.Tree:
        """The tree for `text` (the document's current text), re-parsed if edits came in."""
        return self._parse(encode(text)) if self._dirty else self._tree

    def outline(self, text: str) -> Outline:
        """The top-level nodes of `text` (the document's current text), re-parsed if edits
        came in: the edited statements only when the language and the text allow it (see
        forest.py), else the whole text."""
        if self._outline is not None:
            return self._outline
        source = encode(text)
        if self._forest is not None:
            parsed = self._forest.resolve(self._parser, source)
            if parsed is not None:
                for start, end in parsed:
                    self.parsed_bytes += end - start
                    self.changes.record(start, end, end)
                self._outline = self._forest.outline()
                return self._outline
            # A syntax error: where it ends depends on the whole text. From here the whole
            # tree is parsed again, which compares with the last whole parse only.
            self._forest = None
            self.changes.record(0, len(source), len(source))
        return self._adopt(self._parse(source) if self._dirty else self._tree, source)

    def parse_other(self, text: str) -> tree_sitter.Tree:
        """A fresh tree of some other text in the same language (for trial completions)."""
        return self._parser.parse(encode(text))

    def _parse(self, source: bytes) -> tree_sitter.Tree:
        old = self._tree
        self._tree = self._parser.parse(source, old)
        self.parsed_bytes += len(source)
        self._dirty = False
        # An edit can change the structure outside its own bytes (a quote opened turns the
        # rest of the file into a string): those ranges count as changed too.
        for changed in old.changed_ranges(self._tree):
            self.changes.record(changed.start_byte, changed.end_byte, changed.end_byte)
        return self._tree

    def _adopt(self, tree: tree_sitter.Tree, source: bytes) -> Outline:
        """`tree` is a whole parse of the current text: the outline is its, and a forest
        starts from it when the text can be split."""
        self._outline = whole(tree, source, split=self._split)
        self._forest = None
        if self._outline.split and len(source) >= SPLIT_MIN_BYTES:
            self._forest = Forest(self._outline)
        return self._outline


def error_count(node: tree_sitter.Node) -> int:
    """ERROR and MISSING nodes under `node` (0 for a tree without syntax errors)."""
    if not node.has_error:
        return 0
    count = 1 if node.is_error or node.is_missing else 0
    for child in node.children:
        count += error_count(child)
    return count
