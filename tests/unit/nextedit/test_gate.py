"""The reversal check and the confidence rule."""

from __future__ import annotations

from copilot_lsp.nextedit.diff import Hunk, hunks, merged
from copilot_lsp.nextedit.gate import blocks, doubtful, reverses
from copilot_lsp.nextedit.history import EditHistory
from copilot_lsp.nextedit.window import window_at
from copilot_lsp.positions import line_starts


def history_of(old: str, new: str) -> EditHistory:
    history = EditHistory()
    history.record("file:///a.py", "a.py", (old, line_starts(old)), (new, line_starts(new)))
    return history


def edit(removed: str, text: str) -> Hunk:
    return Hunk(0, len(removed), 0, len(text), text, removed)


def test_putting_back_a_deleted_line_is_a_reversal() -> None:
    history = history_of("import os\nx = 1\n", "x = 1\n")
    assert reverses(edit("", "import os\n"), history)
    assert not reverses(edit("", "import sys\n"), history)


def test_renaming_back_is_a_reversal_and_so_is_taking_out_what_was_typed() -> None:
    history = history_of("total = 0\n", "count = 0\n")
    assert reverses(edit("count", "total"), history)
    assert reverses(edit("ount", ""), history)  # part of what was just typed
    assert not reverses(edit("0", "1"), history)
    assert not reverses(edit("", ""), history)


def test_going_on_with_what_was_typed_is_no_reversal() -> None:
    history = history_of("x = compute(\n", "x = compute(a\n")
    assert not reverses(edit("", ", b)"), history)


def test_confidence_rule_refuses_big_rewrites_and_wrong_line_counts() -> None:
    old = [f"value_{n} = {n}" for n in range(10)]
    small = [*old[:4], "value_4 = 40", *old[5:]]
    hunk = merged(hunks(old, small), old, small)
    assert hunk is not None and doubtful(hunk, old, small, 8) is None
    garbage = ["%%% nonsense %%%"]
    hunk = merged(hunks(old, garbage), old, garbage)
    assert hunk is not None
    assert doubtful(hunk, old, garbage, 8) is not None
    rewritten = [line.upper() for line in old]
    hunk = merged(hunks(old, rewritten), old, rewritten)
    assert hunk is not None
    assert "changes 10 lines" in (doubtful(hunk, old, rewritten, 8) or "")
    half = [line.replace("value", "v") for line in old[:3]] + old[3:]
    hunk = merged(hunks(old, half), old, half)
    assert hunk is not None and doubtful(hunk, old, half, 8) is None


BEFORE = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"
TYPED = "def area(width, height):\n    return w * h\n\n\nprint(area(2, 3))\n"


def blocked_by_reversal(answer: str, before: str = BEFORE, typed: str = TYPED) -> bool:
    """Whether the server's reversal rules drop the model's `answer` (the whole window, as the
    server diffs it) after the user changed `before` into `typed`."""
    history = history_of(before, typed)
    steps = history.of("file:///a.py")
    window = window_at(typed, line_starts(typed), 0, 10, 10)
    old, new = list(window.lines), answer.split("\n")
    found = hunks(old, new)
    edit = merged(found, old, new)
    assert edit is not None
    return blocks(found, edit, window, steps) is not None


def test_an_edit_that_deletes_what_was_just_typed_whole_is_a_reversal() -> None:
    """The gap the suite found: the answer drops the window's first lines, the `def` the user
    had just changed among them; its removed text holds the typed text, it is not inside it."""
    assert blocked_by_reversal("\n\nprint(area(2, 3))\n")
    assert blocked_by_reversal(TYPED.replace("def area(width, height):\n", ""))


def test_an_edit_that_overwrites_what_was_just_typed_is_a_reversal() -> None:
    assert blocked_by_reversal(TYPED.replace("(width, height)", "(size)"))  # wholly
    assert blocked_by_reversal(TYPED.replace("(width, height)", "(wide, height)"))  # partly
    # reaching past the typed text on one side: from its middle to the next line
    assert blocked_by_reversal(TYPED.replace("height):\n    return w", "h):\n    return w"))


def test_edits_that_keep_what_was_just_typed_pass() -> None:
    # the typed names followed through: the next edit the user wants
    assert not blocked_by_reversal(TYPED.replace("w * h", "width * height"))
    # going on from the typed text, and a change elsewhere
    assert not blocked_by_reversal(TYPED.replace("height)", "height, depth)"))
    assert not blocked_by_reversal(TYPED.replace("area(2, 3)", "area(4, 5)"))
    # two changes around the typed line: their merged edit rewrites it as it is
    assert not blocked_by_reversal(
        "# area\n" + TYPED.replace("w * h", "width * height").rstrip("\n") + "\n"
    )


def test_a_step_that_moved_since_is_still_found_and_one_not_where_it_was_falls_back() -> None:
    times = iter([0.0, 10.0])  # apart: two steps
    history = EditHistory(clock=lambda: next(times))
    text = "x = 1\n" + BEFORE
    for new in ("x = 1\n" + TYPED, "x = 1\ny = 2\n" + TYPED):  # the typing, then a line above
        history.record("file:///a.py", "a.py", (text, line_starts(text)), (new, line_starts(new)))
        text = new
    steps = history.of("file:///a.py")
    window = window_at(text, line_starts(text), 0, 10, 10)
    assert window.lines[2] == "def area(width, height):"  # the typing's line moved down one

    def blocked(new: list[str]) -> bool:
        old = list(window.lines)
        found = hunks(old, new)
        edit = merged(found, old, new)
        assert edit is not None
        return blocks(found, edit, window, steps) is not None

    lines = list(window.lines)
    assert blocked([*lines[:2], "def area(width, h):", *lines[3:]])
    assert not blocked([*lines[:3], "    return width * height", *lines[4:]])
    # the typed line changed since without the server seeing it: found by its text instead
    changed = text.replace("def area", "def  area")
    window = window_at(changed, line_starts(changed), 0, 10, 10)
    lines = list(window.lines)
    assert blocked([*lines[:2], *lines[3:]])
    assert not blocked([*lines[:3], "    return width * height", *lines[4:]])
