"""Whether to complete at a cursor, and whether to offer one line or a block."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

_OPENERS = (":", "{", "(", "[", "=>", "->", " do", " then")
_CLOSERS = frozenset(")]}>\"'`;,")


class Mode(Enum):
    SKIP = "skip"
    SINGLE_LINE = "single-line"
    MULTI_LINE = "multi-line"


def is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def indentation(line: str) -> int:
    """Width of the leading whitespace in characters (a tab counts as one)."""
    return len(line) - len(line.lstrip(" \t"))


def opens_block(line_before_cursor: str) -> bool:
    """The code left of the cursor ends with something that opens an indented block."""
    stripped = line_before_cursor.rstrip()
    return bool(stripped) and stripped.endswith(_OPENERS)


def only_closers(text: str) -> bool:
    """Nothing but closing brackets, quotes, separators and spaces."""
    return all(char in _CLOSERS or char.isspace() for char in text)


def statement_below(line_before_cursor: str, next_lines: Sequence[str]) -> bool:
    """The line right below a blank cursor line is code at the cursor's indentation or
    deeper: the cursor sits in a hole between existing statements, which one statement fills.

    A blank line below (a paragraph break), a line indented less (the block ends here), a
    closing bracket (an empty `{ }` block) or the end of the file leave room for a block.
    """
    if not next_lines:
        return False
    below = next_lines[0]
    if not below.strip() or only_closers(below):
        return False
    return indentation(below) >= len(line_before_cursor)


def choose_mode(
    line_before_cursor: str,
    line_after_cursor: str,
    *,
    automatic: bool,
    multiline: bool,
    next_lines: Sequence[str] = (),
) -> Mode:
    """Decide how much to complete from the cursor's line and the lines below it.

    Typing in the middle of a word gets nothing when the request is automatic (the user is
    editing, not writing); an explicit request always gets a suggestion. A block is offered
    after a line that opens one, and on a blank line at the end of a block or of the file;
    a blank line with a statement right below it gets one line (see `statement_below`).
    """
    if automatic and line_after_cursor[:1] and is_word_char(line_after_cursor[0]):
        return Mode.SKIP
    if not multiline or not only_closers(line_after_cursor):
        return Mode.SINGLE_LINE
    if opens_block(line_before_cursor):
        return Mode.MULTI_LINE
    if line_before_cursor.strip() or statement_below(line_before_cursor, next_lines):
        return Mode.SINGLE_LINE
    return Mode.MULTI_LINE
