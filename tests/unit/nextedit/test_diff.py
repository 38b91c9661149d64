"""The model's rewrite diffed into the smallest edits, placed in the document."""

from __future__ import annotations

from copilot_lsp.nextedit.diff import hunks, line_ending, lines_touched, merged, place
from copilot_lsp.nextedit.window import window_at
from copilot_lsp.positions import Position, line_starts


def apply(old: list[str], new: list[str]) -> str:
    """The window's text with the merged edit applied, through the hunk's offsets."""
    text = "\n".join(old)
    edit = merged(hunks(old, new), old, new)
    assert edit is not None
    return text[: edit.old_start] + edit.text + text[edit.old_end :]


def test_a_change_inside_a_line_is_only_the_characters_that_differ() -> None:
    found = hunks(["x = compute(a)", "y = 2"], ["x = compute(a, b)", "y = 2"])
    assert [(h.removed, h.text) for h in found] == [("", ", b")]
    assert found[0].old_start == len("x = compute(a")


def test_a_line_inserted_between_two_is_a_whole_line_with_its_break() -> None:
    old, new = ["a", "c"], ["a", "b", "c"]
    (hunk,) = hunks(old, new)
    assert (hunk.old_start, hunk.old_end, hunk.text) == (2, 2, "b\n")
    assert apply(old, new) == "a\nb\nc"


def test_a_line_added_after_the_last_takes_the_break_before_it() -> None:
    old, new = ["a", "b"], ["a", "b", "c"]
    (hunk,) = hunks(old, new)
    assert (hunk.old_start, hunk.text) == (3, "\nc")
    assert apply(old, new) == "a\nb\nc"


def test_a_deleted_line_takes_its_line_break_with_it() -> None:
    old, new = ["a", "gone", "c"], ["a", "c"]
    (hunk,) = hunks(old, new)
    assert (hunk.removed, hunk.text) == ("gone\n", "")
    assert apply(old, new) == "a\nc"
    (last,) = hunks(["a", "gone"], ["a"])
    assert (last.removed, last.text) == ("\ngone", "")


def test_no_change_is_no_hunk() -> None:
    assert hunks(["a", "b"], ["a", "b"]) == []
    assert merged([], ["a"], ["a"]) is None


def test_separate_changes_merge_into_one_edit_from_the_first_to_the_last() -> None:
    old = ["def f(a):", "    return a", "", "f(1)"]
    new = ["def f(a, b):", "    return a", "", "f(1, 2)"]
    found = hunks(old, new)
    assert len(found) == 2
    edit = merged(found, old, new)
    assert edit is not None
    assert edit.removed.startswith("):") and edit.text.startswith(", b):")
    assert apply(old, new) == "\n".join(new)
    assert lines_touched(edit, old, new) == 4


def test_placed_edit_counts_utf16_units_on_a_line_with_an_emoji() -> None:
    text = 'print("😀", x)\ny = 1\n'
    starts = line_starts(text)
    window = window_at(text, starts, 0, 10, 10)
    new = ['print("😀", x, end="")', "y = 1", ""]
    (hunk,) = hunks(window.lines, new)
    for encoding, column in (("utf-16", 13), ("utf-8", 15), ("utf-32", 12)):
        placed = place(hunk, window, starts, encoding, "\n")  # type: ignore[arg-type]
        assert placed.start == Position(0, column) == placed.end
        assert placed.text == ', end=""'
        assert placed.start_offset == text.index(")")


def test_placed_edit_in_a_crlf_document_uses_its_line_endings() -> None:
    text = "a = 1\r\nb = 2\r\nc = 3\r\n"
    starts = line_starts(text)
    window = window_at(text, starts, 0, 10, 10)
    assert window.lines == ("a = 1", "b = 2", "c = 3", "")
    (hunk,) = hunks(window.lines, ["a = 1", "b = 2", "b2 = 4", "c = 3", ""])
    placed = place(hunk, window, starts, "utf-16", line_ending(text))
    assert placed.start == Position(2, 0) == placed.end
    assert placed.text == "b2 = 4\r\n"
    result = text[: placed.start_offset] + placed.text + text[placed.end_offset :]
    assert result == "a = 1\r\nb = 2\r\nb2 = 4\r\nc = 3\r\n"


def test_a_deletion_in_a_crlf_document_removes_the_whole_line_break() -> None:
    text = "a\r\nb\r\nc"
    starts = line_starts(text)
    window = window_at(text, starts, 0, 10, 10)
    (hunk,) = hunks(window.lines, ["a", "c"])
    placed = place(hunk, window, starts, "utf-16", "\r\n")
    assert (placed.start, placed.end) == (Position(1, 0), Position(2, 0))
    assert text[: placed.start_offset] + placed.text + text[placed.end_offset :] == "a\r\nc"


def test_line_ending_follows_the_first_line_break() -> None:
    assert line_ending("a\r\nb\n") == "\r\n"
    assert line_ending("a\nb\r\n") == "\n"
    assert line_ending("no break") == "\n"
