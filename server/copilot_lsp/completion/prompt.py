"""Prompt assembly: a window of whole lines around the cursor, in the configured format.

The window is anchored at line boundaries so that consecutive keystrokes share a long,
unchanged prompt prefix, which vLLM's prefix cache then serves without recomputation.
"""

from __future__ import annotations

from dataclasses import dataclass

from copilot_lsp.settings import PromptSettings


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
    """The lines below the cursor's line inside the window."""


def cursor_context(text: str, offset: int, prefix_lines: int, suffix_lines: int) -> CursorContext:
    """Cut the line window around `offset` (a code-point offset into `text`)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end == -1 else line_end
    window_start = line_start
    for _ in range(prefix_lines):
        if window_start == 0:
            break
        window_start = text.rfind("\n", 0, window_start - 1) + 1
    window_end = line_end
    for _ in range(suffix_lines):
        if window_end >= len(text):
            break
        following = text.find("\n", window_end + 1)
        window_end = len(text) if following == -1 else following
    after = text[line_end:window_end]
    next_lines = tuple(line.rstrip("\r") for line in after.split("\n")[1:]) if after else ()
    return CursorContext(
        prefix=text[window_start:offset],
        suffix=text[offset:window_end],
        line_before_cursor=text[line_start:offset].rstrip("\r"),
        line_after_cursor=text[offset:line_end].rstrip("\r"),
        next_lines=next_lines,
    )


def render_prompt(context: CursorContext, settings: PromptSettings) -> str:
    """The text sent to `/v1/completions` for `context`."""
    if settings.format == "prefix-only":
        return context.prefix
    if settings.format == "fim":
        return (
            f"{settings.fim_prefix}{context.prefix}"
            f"{settings.fim_suffix}{context.suffix}{settings.fim_middle}"
        )
    raise ValueError(f"unknown prompt format {settings.format!r}")
