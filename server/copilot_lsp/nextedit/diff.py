"""The model's rewrite of the window, diffed against the window into the smallest edits.

Lines first (difflib), then characters inside each changed block: a hunk is a deletion, an
insertion or a replacement, anywhere in the window. Offsets here count code points in the
window's text joined with `\\n`; `place` turns an edit into a document range in the client's
position encoding and its text into the document's line endings.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from copilot_lsp.nextedit.window import Window
from copilot_lsp.positions import Encoding, Position, codepoints_to_units


@dataclass(frozen=True, slots=True)
class Hunk:
    """`old[old_start:old_end]` becomes `new[new_start:new_end]` (window texts, `\\n`-joined)."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int
    text: str
    """The replacement: `new[new_start:new_end]`."""
    removed: str
    """What it replaces: `old[old_start:old_end]`."""


def hunks(old: Sequence[str], new: Sequence[str]) -> list[Hunk]:
    """The smallest edits that turn the lines `old` into the lines `new`, in order."""
    old_text, new_text = "\n".join(old), "\n".join(new)
    old_at, new_at = _offsets(old), _offsets(new)
    matcher = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False)
    found = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old_span = _span(old_at, old, i1, i2, len(old_text), j1 == j2)
        new_span = _span(new_at, new, j1, j2, len(new_text), i1 == i2)
        found.append(_trimmed(old_text, new_text, old_span, new_span))
    return found


def _offsets(lines: Sequence[str]) -> list[int]:
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    return offsets


def _span(
    at: list[int], lines: Sequence[str], first: int, end: int, total: int, other_empty: bool
) -> tuple[int, int]:
    """The characters of lines `first:end`. Facing nothing (a pure insertion or deletion),
    whole lines with one line break: the one after them, or before them at the end."""
    if first == end:  # no lines: the point where the other side's lines go
        if first < len(lines):
            return at[first], at[first]
        return total, total
    start, stop = at[first], at[end - 1] + len(lines[end - 1])
    if other_empty:
        if end < len(lines):
            return start, at[end]
        if first > 0:
            return start - 1, stop
    return start, stop


def _trimmed(old: str, new: str, old_span: tuple[int, int], new_span: tuple[int, int]) -> Hunk:
    """The hunk without the characters both sides share at their start and end."""
    (o1, o2), (n1, n2) = old_span, new_span
    while o1 < o2 and n1 < n2 and old[o1] == new[n1]:
        o1, n1 = o1 + 1, n1 + 1
    while o2 > o1 and n2 > n1 and old[o2 - 1] == new[n2 - 1]:
        o2, n2 = o2 - 1, n2 - 1
    return Hunk(o1, o2, n1, n2, new[n1:n2], old[o1:o2])


def merged(found: Sequence[Hunk], old: Sequence[str], new: Sequence[str]) -> Hunk | None:
    """One edit covering every hunk (the protocol's edits are alternatives, not a sequence):
    from the first hunk's start to the last one's end; None for no hunk."""
    if not found:
        return None
    first, last = found[0], found[-1]
    old_text, new_text = "\n".join(old), "\n".join(new)
    return Hunk(
        first.old_start,
        last.old_end,
        first.new_start,
        last.new_end,
        new_text[first.new_start : last.new_end],
        old_text[first.old_start : last.old_end],
    )


def lines_touched(hunk: Hunk, old: Sequence[str], new: Sequence[str]) -> int:
    """Lines of the window the hunk changes, or of the answer it brings, whichever is more."""
    old_text, new_text = "\n".join(old), "\n".join(new)
    removed = old_text.count("\n", hunk.old_start, hunk.old_end) + 1
    added = new_text.count("\n", hunk.new_start, hunk.new_end) + 1
    return max(removed if hunk.removed else 0, added if hunk.text else 0)


@dataclass(frozen=True, slots=True)
class PlacedEdit:
    """An edit in the document: its range in the client's position encoding, its text in
    the document's line endings, and its code-point offsets in the document."""

    start: Position
    end: Position
    text: str
    start_offset: int
    end_offset: int


def place(
    hunk: Hunk,
    window: Window,
    document_starts: list[int],
    encoding: Encoding,
    eol: str,
) -> PlacedEdit:
    """`hunk` as an edit of the document the window was cut from."""
    at = _offsets(window.lines)

    def locate(offset: int) -> tuple[Position, int]:
        index = max(0, bisect.bisect_right(at, offset) - 1)
        column = offset - at[index]
        line = window.lines[index]
        document_line = window.first + index
        position = Position(document_line, codepoints_to_units(line, column, encoding))
        return position, document_starts[document_line] + column

    start, start_offset = locate(hunk.old_start)
    end, end_offset = locate(hunk.old_end)
    if end_offset < start_offset:
        end_offset = start_offset
    return PlacedEdit(start, end, hunk.text.replace("\n", eol), start_offset, end_offset)


def line_ending(text: str) -> str:
    """The document's line ending: that of its first line break (`\\n` when it has none)."""
    index = text.find("\n")
    if index > 0 and text[index - 1] == "\r":
        return "\r\n"
    if index < 0 and "\r" in text:
        return "\r"
    return "\n"
