"""Unit tests for copilot_lsp.completion.window: the line window and prompt rendering."""

from __future__ import annotations

import itertools

import pytest

from copilot_lsp.completion.window import cursor_context

LINES = [f"line{i} = {i}" for i in range(10)]
TEXT = "\n".join(LINES)


def offset_of(line: int, column: int, text: str = TEXT, sep: str = "\n") -> int:
    return sum(len(item) + len(sep) for item in text.split(sep)[:line]) + column


def test_window_counts_prefix_and_suffix_lines() -> None:
    offset = offset_of(5, 4)
    context = cursor_context(TEXT, offset, prefix_lines=2, suffix_lines=3)
    assert context.prefix == "line3 = 3\nline4 = 4\nline"
    assert context.suffix == "5 = 5\nline6 = 6\nline7 = 7\nline8 = 8"
    assert context.line_before_cursor == "line"
    assert context.line_after_cursor == "5 = 5"
    assert context.next_lines == ("line6 = 6", "line7 = 7", "line8 = 8")


@pytest.mark.parametrize("prefix_lines", [0, 1, 3, 5])
@pytest.mark.parametrize("suffix_lines", [0, 1, 2, 4])
def test_window_sizes(prefix_lines: int, suffix_lines: int) -> None:
    context = cursor_context(TEXT, offset_of(5, 2), prefix_lines, suffix_lines)
    assert context.prefix.count("\n") == prefix_lines
    assert context.suffix.count("\n") == suffix_lines
    assert len(context.next_lines) == max(suffix_lines, 1)  # the line below decides the mode
    assert context.prefix == "\n".join([*LINES[5 - prefix_lines : 5], "li"])
    assert context.prefix + context.suffix == "\n".join(LINES[5 - prefix_lines : 6 + suffix_lines])


def test_start_of_file() -> None:
    context = cursor_context(TEXT, 0, prefix_lines=40, suffix_lines=1)
    assert context.prefix == ""
    assert context.line_before_cursor == ""
    assert context.line_after_cursor == LINES[0]
    assert context.suffix == f"{LINES[0]}\n{LINES[1]}"
    assert context.next_lines == (LINES[1],)


def test_prefix_lines_beyond_start_stop_at_start() -> None:
    context = cursor_context(TEXT, offset_of(2, 3), prefix_lines=40, suffix_lines=0)
    assert context.prefix == f"{LINES[0]}\n{LINES[1]}\nlin"


def test_end_of_file() -> None:
    context = cursor_context(TEXT, len(TEXT), prefix_lines=1, suffix_lines=10)
    assert context.prefix == f"{LINES[8]}\n{LINES[9]}"
    assert context.suffix == ""
    assert context.line_before_cursor == LINES[9]
    assert context.line_after_cursor == ""
    assert context.next_lines == ()


def test_trailing_newline_gives_empty_last_line() -> None:
    text = "a = 1\nb = 2\n"
    context = cursor_context(text, 0, prefix_lines=5, suffix_lines=5)
    assert context.next_lines == ("b = 2", "")
    context = cursor_context(text, len(text), prefix_lines=1, suffix_lines=5)
    assert context.prefix == "b = 2\n"
    assert context.line_before_cursor == ""
    assert context.next_lines == ()


def test_cursor_mid_line() -> None:
    text = "def f(x):\n    return x + 1\n"
    offset = text.index("x + 1")
    context = cursor_context(text, offset, prefix_lines=10, suffix_lines=10)
    assert context.line_before_cursor == "    return "
    assert context.line_after_cursor == "x + 1"
    assert context.prefix == "def f(x):\n    return "
    assert context.suffix == "x + 1\n"
    assert context.next_lines == ("",)


def test_crlf_text() -> None:
    lines = ["def f():", "    a = 1", "    b = 2", "    return a"]
    text = "\r\n".join(lines) + "\r\n"
    # the end of line 1, as offset_at gives it: before the \r
    offset = offset_of(1, len(lines[1]), text, "\r\n")
    assert text[offset] == "\r"
    context = cursor_context(text, offset, prefix_lines=1, suffix_lines=2)
    assert context.line_before_cursor == "    a = 1"
    assert context.line_after_cursor == ""
    assert context.next_lines == ("    b = 2", "    return a")
    assert context.prefix == "def f():\r\n    a = 1"
    # mid-line on a CRLF line
    offset = offset_of(2, 4, text, "\r\n")
    context = cursor_context(text, offset, prefix_lines=0, suffix_lines=0)
    assert context.line_before_cursor == "    "
    assert context.line_after_cursor == "b = 2"
    assert context.next_lines == ("    return a",)


def test_prefix_is_stable_for_cursors_on_the_same_line() -> None:
    line = 7
    window_start_text = "\n".join(LINES[line - 3 : line]) + "\n"
    contexts = [
        cursor_context(TEXT, offset_of(line, column), 3, 2)
        for column in range(len(LINES[line]) + 1)
    ]
    for context in contexts:
        assert context.prefix.startswith(window_start_text)
    for earlier, later in itertools.pairwise(contexts):
        assert later.prefix.startswith(earlier.prefix)
        assert len(later.prefix) == len(earlier.prefix) + 1


def test_prefix_moves_when_the_cursor_moves_down_a_line() -> None:
    upper = cursor_context(TEXT, offset_of(6, 0), 2, 0)
    lower = cursor_context(TEXT, offset_of(7, 0), 2, 0)
    assert upper.prefix.startswith(LINES[4])
    assert lower.prefix.startswith(LINES[5])


def test_lone_cr_line_breaks_are_lines() -> None:
    text = "a = 1\rb = 2\rdef f():\r    "
    context = cursor_context(text, len(text), prefix_lines=1, suffix_lines=0)
    assert context.line_before_cursor == "    "
    assert context.prefix == "def f():\r    "
