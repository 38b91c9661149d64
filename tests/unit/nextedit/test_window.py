"""The window of lines around the cursor, clamped to the document."""

from __future__ import annotations

from copilot_lsp.nextedit.window import context_lines, file_excerpt, window_at
from copilot_lsp.positions import line_starts

TEXT = "".join(f"line {n}\n" for n in range(30))


def test_window_is_lines_above_and_below_the_cursor() -> None:
    starts = line_starts(TEXT)
    window = window_at(TEXT, starts, starts[15] + 3, 10, 10)
    assert (window.first, window.last) == (5, 25)
    assert window.lines[window.cursor_line] == "line 15"
    assert window.text("<|cursor|>").split("\n")[10] == "lin<|cursor|>e 15"


def test_window_is_clamped_at_the_start_and_the_end_of_the_file() -> None:
    starts = line_starts(TEXT)
    top = window_at(TEXT, starts, 2, 10, 10)
    assert (top.first, top.last, top.cursor_line) == (0, 10, 0)
    bottom = window_at(TEXT, starts, len(TEXT), 10, 10)
    assert (bottom.first, bottom.last) == (20, 30)
    assert bottom.lines[-1] == ""  # the empty line after the last line break


def test_window_of_a_crlf_document_has_no_carriage_returns() -> None:
    text = "a\r\nb\r\n"
    window = window_at(text, line_starts(text), 0, 1, 1)
    assert window.lines == ("a", "b")


def test_context_lines_are_clamped() -> None:
    starts = line_starts(TEXT)
    assert context_lines(TEXT, starts, -3, 1) == "line 0\nline 1"
    assert context_lines(TEXT, starts, 5, 4) == ""


def test_file_excerpt_is_the_whole_file_or_lines_around_the_window() -> None:
    starts = line_starts(TEXT)
    window = window_at(TEXT, starts, starts[15], 1, 1)
    assert file_excerpt(TEXT, starts, window, 10_000) == TEXT
    excerpt = file_excerpt(TEXT, starts, window, 40)
    assert "line 15" in excerpt and "line 0\n" not in excerpt
    assert len(excerpt) <= 40
