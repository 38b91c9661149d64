"""The window of whole lines around the cursor that the model is asked to rewrite.

Lines are kept without their line breaks, so the window, the prompt and the diff of the
model's answer see `\\n` only; the document's own line ending (CRLF) comes back when the edit
is placed (nextedit/diff.py).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from copilot_lsp.positions import line_content


@dataclass(frozen=True, slots=True)
class Window:
    first: int
    """The document line the window starts at (0-based)."""
    lines: tuple[str, ...]
    """The window's lines, without line breaks."""
    cursor_line: int
    """The cursor's line, counted from `first`."""
    cursor_column: int
    """The cursor's column in code points."""

    @property
    def last(self) -> int:
        """The document line the window ends at (included)."""
        return self.first + len(self.lines) - 1

    def text(self, cursor_marker: str | None = None) -> str:
        """The window's lines joined with `\\n`; `cursor_marker` inserted at the cursor."""
        if cursor_marker is None:
            return "\n".join(self.lines)
        lines = list(self.lines)
        line = lines[self.cursor_line]
        lines[self.cursor_line] = (
            line[: self.cursor_column] + cursor_marker + line[self.cursor_column :]
        )
        return "\n".join(lines)


def window_at(text: str, starts: list[int], offset: int, above: int, below: int) -> Window:
    """The lines from `above` lines above the cursor's (at code-point `offset`) to `below`
    lines below it, clamped to the start and the end of the document."""
    line = max(0, bisect.bisect_right(starts, offset) - 1)
    first = max(0, line - above)
    last = min(len(starts) - 1, line + below)
    lines = tuple(line_content(text, starts, index) for index in range(first, last + 1))
    column = min(offset - starts[line], len(lines[line - first]))
    return Window(first, lines, line - first, column)


def context_lines(text: str, starts: list[int], first: int, last: int) -> str:
    """Document lines `first` to `last` (included, clamped), joined with `\\n`."""
    first, last = max(0, first), min(len(starts) - 1, last)
    return "\n".join(line_content(text, starts, index) for index in range(first, last + 1))


EXCERPT_STEP = 16
"""The file excerpt follows the cursor in steps of this many lines. A next edit's prompt
starts with it: while the cursor moves within a step the excerpt's first lines stay put, and
the engine's prefix cache serves that head instead of computing it again on every line."""


def file_excerpt(text: str, starts: list[int], window: Window, budget: int) -> str:
    """The whole document when it fits in `budget` characters, else the lines around the
    window that do (as many above as below), with `\\n` line breaks. The lines grow from
    every window the cursor can have within its step of EXCERPT_STEP lines, when those fit."""
    normalized = text.replace("\r\n", "\n") if "\r" in text else text
    if len(normalized) <= budget:
        return normalized
    first, last = _anchor(starts, window)
    used = sum(len(line_content(text, starts, index)) + 1 for index in range(first, last + 1))
    if used > budget:
        first, last = window.first, window.last
        used = sum(len(line) + 1 for line in window.lines)
    while used < budget and (first > 0 or last < len(starts) - 1):
        grown = False
        for side in (-1, 1):
            index = first - 1 if side < 0 else last + 1
            if not 0 <= index < len(starts):
                continue
            size = len(line_content(text, starts, index)) + 1
            if used + size > budget:
                continue
            used += size
            grown = True
            first, last = (index, last) if side < 0 else (first, index)
        if not grown:
            break
    return context_lines(text, starts, first, last)


def _anchor(starts: list[int], window: Window) -> tuple[int, int]:
    """The lines of every window around a cursor in the same step as this one's (the window
    grows at most as far above and below it as this one does)."""
    cursor = window.first + window.cursor_line
    step_first = cursor - cursor % EXCERPT_STEP
    above, below = window.cursor_line, len(window.lines) - 1 - window.cursor_line
    first = min(window.first, max(0, step_first - above))
    last = max(window.last, min(len(starts) - 1, step_first + EXCERPT_STEP - 1 + below))
    return first, last
