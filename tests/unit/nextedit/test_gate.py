"""The reversal check and the confidence rule."""

from __future__ import annotations

from copilot_lsp.nextedit.diff import Hunk, hunks, merged
from copilot_lsp.nextedit.gate import doubtful, reverses
from copilot_lsp.nextedit.history import EditHistory
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
