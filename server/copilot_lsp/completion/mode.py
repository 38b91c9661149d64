"""Whether to complete at a cursor, and whether to offer one line or a block."""

from __future__ import annotations

from enum import Enum

_OPENERS = (":", "{", "(", "[", "=>", "->", " do", " then")
_CLOSERS = frozenset(")]}>\"'`;,")


class Mode(Enum):
    SKIP = "skip"
    SINGLE_LINE = "single-line"
    MULTI_LINE = "multi-line"


def is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def opens_block(line_before_cursor: str) -> bool:
    """The code left of the cursor ends with something that opens an indented block."""
    stripped = line_before_cursor.rstrip()
    return bool(stripped) and stripped.endswith(_OPENERS)


def only_closers(text: str) -> bool:
    """Nothing but closing brackets, quotes, separators and spaces."""
    return all(char in _CLOSERS or char.isspace() for char in text)


def choose_mode(
    line_before_cursor: str, line_after_cursor: str, *, automatic: bool, multiline: bool
) -> Mode:
    """Decide how much to complete from the cursor's line.

    Typing in the middle of a word gets nothing when the request is automatic (the user is
    editing, not writing); an explicit request always gets a suggestion.
    """
    if automatic and line_after_cursor[:1] and is_word_char(line_after_cursor[0]):
        return Mode.SKIP
    if not multiline:
        return Mode.SINGLE_LINE
    rest_is_blank = only_closers(line_after_cursor)
    if rest_is_blank and (not line_before_cursor.strip() or opens_block(line_before_cursor)):
        return Mode.MULTI_LINE
    return Mode.SINGLE_LINE
