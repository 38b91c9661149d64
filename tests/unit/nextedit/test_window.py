"""The window of lines around the cursor, clamped to the document."""

from __future__ import annotations

from copilot_lsp.nextedit.window import EXCERPT_STEP, context_lines, file_excerpt, window_at
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


def test_file_excerpt_stays_put_while_the_cursor_moves_within_a_step() -> None:
    """The excerpt opens the next-edit prompt: the same first line for every cursor line of
    a step keeps that head in the engine's prefix cache; it moves once per step."""
    text = "".join(f"value_{n} = compute({'x' * (n * 7 % 40)})\n" for n in range(600))
    starts = line_starts(text)
    firsts: dict[int, set[str]] = {}
    for line in range(256, 320):
        window = window_at(text, starts, starts[line] + 3, 10, 10)
        excerpt = file_excerpt(text, starts, window, 6000)
        assert len(excerpt) <= 6000 and window.text() in excerpt
        # Lines above the window as well as below it (about 40 characters a line).
        lines_above = excerpt[: excerpt.index(window.text())].count("\n")
        lines_below = excerpt[excerpt.index(window.text()) :].count("\n") - 20
        assert min(lines_above, lines_below) >= 40
        firsts.setdefault(line // EXCERPT_STEP, set()).add(excerpt.split("\n", 1)[0])
    assert len(firsts) == 4
    assert all(len(first) == 1 for first in firsts.values())
    assert len(set.union(*firsts.values())) == 4


def test_file_excerpt_falls_back_to_the_window_when_the_step_does_not_fit() -> None:
    starts = line_starts(TEXT)
    window = window_at(TEXT, starts, starts[15], 1, 1)
    # The step's windows (lines 0-16) are over 40 characters: grown from the window alone.
    assert file_excerpt(TEXT, starts, window, 40) == context_lines(TEXT, starts, 13, 17)
