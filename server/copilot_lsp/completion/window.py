"""The cursor's surroundings: the line it is on and a window of whole lines around it.

The window is anchored at line boundaries so that consecutive keystrokes share a long,
unchanged prompt prefix, which vLLM's prefix cache then serves without recomputation.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from copilot_lsp.positions import line_content, line_starts


@dataclass(frozen=True, slots=True)
class CursorContext:
    """The text around the cursor that a completion needs, captured when the request arrived."""

    prefix: str
    """From the first window line up to the cursor."""
    suffix: str
    """From the cursor to the end of the last window line."""
    line_before_cursor: str
    line_after_cursor: str
    next_lines: tuple[str, ...]
    """The lines below the cursor's line inside the window, and at least the one right below
    (it decides between one line and a block: completion/mode.py)."""


def cursor_context(
    text: str,
    offset: int,
    prefix_lines: int,
    suffix_lines: int,
    starts: list[int] | None = None,
) -> CursorContext:
    """Cut the line window around `offset` (a code-point offset into `text`).

    Lines break at \n, \r\n and \r, as LSP counts them; `starts` (the document's cached
    line starts) saves rescanning a large text on every keystroke.
    """
    starts = starts if starts is not None else line_starts(text)
    line = bisect.bisect_right(starts, offset) - 1
    first = max(0, line - prefix_lines)
    last = min(len(starts) - 1, line + suffix_lines)
    end_of_line = starts[line] + len(line_content(text, starts, line))
    window_end = starts[last] + len(line_content(text, starts, last))
    next_last = max(last, min(len(starts) - 1, line + 1))
    return CursorContext(
        prefix=text[starts[first] : offset],
        suffix=text[offset:window_end],
        line_before_cursor=text[starts[line] : offset],
        line_after_cursor=text[offset:end_of_line],
        next_lines=tuple(line_content(text, starts, i) for i in range(line + 1, next_last + 1)),
    )
