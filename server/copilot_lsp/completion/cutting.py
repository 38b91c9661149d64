"""Deciding, while tokens arrive, where a completion ends.

Single-line completions end at the first line break, except in a hole between statements
(a blank cursor line, completion/mode.py) where the one statement written opens a block that
has no body below yet (`for x in xs:`, `if (x) {`): the statement is then its whole block, cut
by the block rules below with that line as the opener. Multi-line completions end where the
indented block that the cursor is in (or opens) ends: at the first non-blank line indented
less than the block body, keeping the block's closing line (`}`) only when the code below
the cursor does not already hold it. At top level a blank line ends the completion. The
decision is made as early as possible so that the engine stream can be closed.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from copilot_lsp.completion.mode import Mode, indentation, only_closers, opens_block


@dataclass(slots=True)
class BlockCutter:
    """Feed streamed text; once `done`, `text` is the final completion."""

    mode: Mode
    line_before_cursor: str
    next_lines: tuple[str, ...] = ()
    max_lines: int = 16
    filters: bool = True
    """Reject lines that repeat the code below the cursor or the line before."""
    done: bool = False
    _received: str = ""
    _cut: int | None = None
    _compound: bool = False
    """A single-line hole whose statement opened a block: cut as a block after its line."""

    def feed(self, text: str) -> bool:
        """Add streamed `text`; returns True once no more text is needed."""
        if not self.done:
            self._received += text
            self._decide(stream_ended=False)
        return self.done

    def end_of_stream(self) -> None:
        """The engine finished: the last line is complete, whatever it holds."""
        if not self.done:
            self._decide(stream_ended=True)
            self.done = True

    @property
    def text(self) -> str:
        """The completion as far as it is known to belong to the suggestion."""
        kept = self._received if self._cut is None else self._received[: self._cut]
        if not self.done and self._as_block and "\n" in kept:
            kept = kept[: kept.rfind("\n")]
        elif not self.done and self.mode is Mode.SINGLE_LINE:
            kept = kept.split("\n", 1)[0]
        return _trim(kept)

    @property
    def preview(self) -> str:
        """The text so far, unfinished last line included, for live display while streaming.

        `text` holds back an unfinished line (it may still turn out to end the block); a
        preview shows it anyway so that the first characters appear at first-token time.
        """
        if self.done:
            return self.text
        kept = self._received
        if not self._as_block:
            kept = kept.split("\n", 1)[0]
        return _trim(kept)

    @property
    def _as_block(self) -> bool:
        return self.mode is Mode.MULTI_LINE or self._compound

    @property
    def first_line_complete(self) -> bool:
        return self.done or "\n" in self._received

    def _stop(self, cut: int) -> None:
        self._cut = cut
        self.done = True

    def _decide(self, stream_ended: bool) -> None:
        lines = (self.line_before_cursor + self._received).split("\n")
        if self.filters and (stream_ended or len(lines) > 1) and self._repeats_code_below(lines[0]):
            self._stop(0)  # the cursor line, completed, is the line below: nothing to add
            return
        if self.mode is Mode.SINGLE_LINE:
            newline = self._received.find("\n")
            if newline == -1:
                return
            if not self._compound and not self._opens_empty_block(lines[0]):
                self._stop(newline)
                return
            self._compound = True
            self._decide_block(lines, lines[0], stream_ended)
            return
        self._decide_block(lines, self.line_before_cursor, stream_ended)

    def _opens_empty_block(self, statement: str) -> bool:
        """In a hole (blank cursor line), `statement` opens a block and the code below does
        not already hold a body for it (a line indented deeper)."""
        if self.line_before_cursor.strip() or not opens_block(statement):
            return False
        below = next((line for line in self.next_lines if line.strip()), None)
        return below is None or indentation(below) <= indentation(statement)

    def _decide_block(self, lines: list[str], head: str, stream_ended: bool) -> None:
        """Cut at the end of the block that `head` (the cursor's line, or in a hole the
        statement written there) opens or sits in; `lines` are the cursor line completed and
        the lines streamed after it."""
        opener = opens_block(head)
        block_indent = indentation(head)
        # Body lines of an opened block sit deeper than the opener; on an empty line the
        # cursor's column is the block's own indentation.
        minimum = block_indent + 1 if opener else len(self.line_before_cursor)
        top_level = not opener and minimum == 0
        seen_content = bool(lines[0].strip())
        previous = lines[0].strip()
        # An opener's completion starts with a line break: that empty rest of the cursor
        # line is not one of the lines the user sees.
        blank_first = 0 if self._received.split("\n", 1)[0].strip() else 1
        start = len(lines[0]) - len(self.line_before_cursor) + 1
        for index in range(1, len(lines)):
            line = lines[index]
            complete = stream_ended or index < len(lines) - 1
            if index >= self.max_lines + blank_first:
                self._stop(start - 1)
                return
            if self.filters and complete and line.strip() and self._redundant(line, previous):
                self._stop(start - 1)
                return
            if not line.strip():
                if top_level and seen_content and complete:
                    self._stop(start - 1)
                    return
            elif indentation(line) < minimum:
                closer = (
                    opener
                    and indentation(line) == block_indent
                    and only_closers(line)
                    and not self._below_cursor_starts_with(line)
                )
                if not closer:
                    self._stop(start - 1)
                elif complete:
                    self._stop(start + len(line))
                return
            else:
                seen_content = True
                previous = line.strip()
            start += len(line) + 1

    def _redundant(self, line: str, previous: str) -> bool:
        """A line the suggestion should not contain: the code below the cursor already has
        it, or the model is looping on the line it just wrote."""
        stripped = line.strip()
        if self._repeats_code_below(line):
            return True
        return stripped == previous and len(stripped) > 3 and not only_closers(stripped)

    def _repeats_code_below(self, line: str) -> bool:
        """`line` is (nearly) the first non-blank line below the cursor.

        Closing brackets are judged by the block rules instead: `}` below the cursor may
        close an outer block.
        """
        stripped = line.strip()
        if not stripped or only_closers(stripped):
            return False
        below = next((following.strip() for following in self.next_lines if following.strip()), "")
        if not below:
            return False
        if stripped == below:
            return True
        return (
            len(stripped) >= 12 and difflib.SequenceMatcher(None, stripped, below).ratio() >= 0.92
        )

    def _below_cursor_starts_with(self, line: str) -> bool:
        for following in self.next_lines:
            if following.strip():
                return following.strip() == line.strip()
        return False


def _trim(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    return "\n".join(lines)
