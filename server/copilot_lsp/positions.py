"""Every conversion between LSP positions and string offsets lives here.

LSP columns count UTF-16 code units by default (UTF-8 bytes or code points when negotiated);
Python strings index code points. An emoji is 1 code point, 2 UTF-16 units and 4 UTF-8 bytes,
so mixing these up corrupts buffers as soon as a line holds non-ASCII text.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from dataclasses import dataclass
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Position:
    """A zero-based line and a column counted in the negotiated encoding's units."""

    line: int
    character: int


def char_width(char: str, encoding: Encoding) -> int:
    """How many units of `encoding` one code point takes."""
    if encoding == "utf-32":
        return 1
    point = ord(char)
    if encoding == "utf-16":
        return 2 if point > 0xFFFF else 1
    if point < 0x80:
        return 1
    if point < 0x800:
        return 2
    if point < 0x10000:
        return 3
    return 4


def units_to_codepoints(line: str, units: int, encoding: Encoding) -> int:
    """Code-point column for a column in `encoding` units, clamped to the line.

    A column that falls inside a character (half a surrogate pair, the middle of a UTF-8
    sequence) snaps to the start of that character rather than splitting it.
    """
    if units <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))  # one unit per character (most code): no scan
    seen = 0
    for index, char in enumerate(line):
        width = char_width(char, encoding)
        if seen + width > units:
            return index
        seen += width
    return len(line)


def codepoints_to_units(line: str, column: int, encoding: Encoding) -> int:
    """Column in `encoding` units for a code-point column."""
    prefix = line[: max(column, 0)]
    if encoding == "utf-32":
        return len(prefix)
    if encoding == "utf-16":
        return len(prefix) + sum(1 for char in prefix if ord(char) > 0xFFFF)
    return len(prefix.encode("utf-8", errors="surrogatepass"))


def line_starts(text: str) -> list[int]:
    """Offsets at which each line of `text` starts (LSP counts \\n, \\r\\n and \\r)."""
    if "\r" not in text:
        # The common case, in C: a 5,000-line file in well under a millisecond.
        lines = text.split("\n")
        lengths = itertools.accumulate(map(len, lines[:-1]), initial=0)
        return list(map(operator.add, lengths, range(len(lines))))
    return [0, *(match.end() for match in _LINE_BREAK.finditer(text))]


def edited_line_starts(
    starts: list[int], text: str, start: int, end: int, inserted: int
) -> list[int]:
    """The line starts of `text`, which is the text `starts` describes with its code points
    `start:end` replaced by `inserted` new ones, computed around the edit only.

    Breaks are searched again from the line holding the code point before the edit (a \\r
    there may join an inserted \\n) to the first line starting two past the edit's old end;
    every line after that only moves.
    """
    delta = inserted - (end - start)
    first = max(0, bisect.bisect_right(starts, start - 1) - 1)
    after = bisect.bisect_right(starts, end + 1)
    region_start = starts[first]
    tail = after < len(starts)
    region_end = starts[after] + delta if tail else len(text)
    # A break ending at region_end is the moved line's own start (or the last, empty line).
    found = [
        match.end()
        for match in _LINE_BREAK.finditer(text, region_start, region_end)
        if not tail or match.end() < region_end
    ]
    return [*starts[: first + 1], *found, *(offset + delta for offset in starts[after:])]


def line_content(text: str, starts: list[int], line: int) -> str:
    """Text of `line` without its line break."""
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    return text[start:end].rstrip("\r\n")


def offset_at(
    text: str, position: Position, encoding: Encoding, starts: list[int] | None = None
) -> int:
    """Code-point offset in `text` of an LSP position, clamped to the document.

    A line past the end maps to the end of the text, as the LSP specification asks.
    """
    starts = starts if starts is not None else line_starts(text)
    if position.line < 0:
        return 0
    if position.line >= len(starts):
        return len(text)
    content = line_content(text, starts, position.line)
    return starts[position.line] + units_to_codepoints(content, position.character, encoding)


def position_at(
    text: str, offset: int, encoding: Encoding, starts: list[int] | None = None
) -> Position:
    """LSP position of a code-point offset in `text`."""
    starts = starts if starts is not None else line_starts(text)
    offset = min(max(offset, 0), len(text))
    line = bisect.bisect_right(starts, offset) - 1
    content = line_content(text, starts, line)
    column = min(offset - starts[line], len(content))
    return Position(line, codepoints_to_units(content, column, encoding))
