"""One tree-sitter tree per document, kept current by incremental edits.

`edit()` is told about every change as it is applied (in code points, on the text before
the change); the tree is re-parsed lazily, reusing the old tree, the next time it is
needed. Tree-sitter works on UTF-8 bytes and counts rows by \\n only.
"""

from __future__ import annotations

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


class SyntaxTree:
    """The parse tree of one document in one language."""

    def __init__(self, language: tree_sitter.Language, text: str) -> None:
        self._parser = tree_sitter.Parser(language)
        self.language = language
        self._tree = self._parser.parse(encode(text))
        self._dirty = False

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
        self._dirty = True

    def replace_all(self, text: str) -> None:
        self._tree = self._parser.parse(encode(text))
        self._dirty = False

    def tree(self, text: str) -> tree_sitter.Tree:
        """The tree for `text` (the document's current text), re-parsed if edits came in."""
        if self._dirty:
            self._tree = self._parser.parse(encode(text), self._tree)
            self._dirty = False
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
