"""Whether an edit the model proposed is worth showing: two named rules.

- `reverses`: never suggest undoing what the user just did. An edit that puts back what a
  recent step of the same document removed, or takes out what it typed, is dropped (Zed's
  "reversal ratio" counts exactly these).
- `doubtful`: the confidence rule, explicit until the engine's token log-probabilities are
  read (the engine client does not parse them yet): an answer whose line count strays from
  the window's, or that changes more lines than `max_changed_lines`, is a model that lost its
  way or rewrote instead of editing; so is one that replaces more than half the window's
  characters (besides blanks). Nothing is shown then.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from copilot_lsp.nextedit.diff import Hunk, lines_touched
from copilot_lsp.nextedit.history import EditStep

RECENT_STEPS = 3
"""The document's newest steps an edit is checked against."""
MIN_WINDOW_CHARS = 20
"""A window with fewer characters (besides blanks) may be rewritten whole."""


def reverses(hunk: Hunk, steps: Iterable[EditStep]) -> bool:
    """Whether `hunk` undoes, wholly or in part, one of the document's newest steps."""
    removed, inserted = hunk.removed.strip(), hunk.text.strip()
    if not removed and not inserted:
        return False
    for count, step in enumerate(steps):
        if count >= RECENT_STEPS:
            break
        step_removed, step_inserted = (part.strip() for part in step.change())
        if removed == step_inserted and inserted == step_removed:
            return True  # the exact undo: back to what it was
        if removed and removed in step_inserted and (not inserted or inserted in step_removed):
            return True  # takes out (part of) what was just typed, maybe for what was there
    return False


def doubtful(
    hunk: Hunk, old: Sequence[str], new: Sequence[str], max_changed_lines: int
) -> str | None:
    """Why the answer is not trusted, or None when it may be shown."""
    if abs(len(new) - len(old)) > max_changed_lines:
        return f"the answer has {len(new)} lines for a window of {len(old)}"
    touched = lines_touched(hunk, old, new)
    if touched > max_changed_lines:
        return f"the edit changes {touched} lines (most {max_changed_lines})"
    kept = sum(len(line.strip()) for line in old)
    removed = len("".join(hunk.removed.split()))
    if kept >= MIN_WINDOW_CHARS and removed * 2 > kept:
        return f"the edit replaces {removed} of the window's {kept} characters"
    return None
