"""Whether an edit the model proposed is worth showing: two named rules.

- `reverses`, `swallows` (both in `blocks`): never suggest undoing what the user just did.
  An edit that puts back what a recent step of the same document removed, or takes out
  (deletes or overwrites, in whole or in part) what it typed, is dropped (Zed's "reversal
  ratio" counts exactly these).
- `doubtful`: the fixed rules beside the confidence gate (nextedit/answer.py, from the
  tokens' log-probabilities): an answer whose line count strays from the window's, or that
  changes more lines than `max_changed_lines`, is a model that lost its way or rewrote
  instead of editing; so is one that replaces more than half the window's characters
  (besides blanks). Nothing is shown then.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from copilot_lsp.nextedit.diff import Hunk, lines_touched
from copilot_lsp.nextedit.history import EditStep
from copilot_lsp.nextedit.window import Window

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


def blocks(
    found: Sequence[Hunk], edit: Hunk, window: Window, steps: Sequence[EditStep]
) -> str | None:
    """Why the answer's edit undoes what the user just did, or None: the hunks (and the one
    edit covering them) against the document's newest steps, by `reverses` and `swallows`."""
    if any(reverses(hunk, steps) for hunk in [*found, edit]):
        return "it undoes a recent edit"
    # Each hunk alone: the edit covering them puts back, as they are, the lines between.
    if any(swallows(hunk, window, steps) for hunk in found):
        return "it takes out what was just typed"
    return None


def swallows(hunk: Hunk, window: Window, steps: Sequence[EditStep]) -> bool:
    """Whether `hunk` takes out (deletes or overwrites), wholly or in part, text one of the
    document's newest steps typed, without putting it back. Where a step's lines are still
    in the window as it left them, by position: the hunk's range overlaps the typed
    characters. Where they are not (changed since, unseen), by text: the hunk's removed text
    holds all of the typed text."""
    text = "\n".join(window.lines)
    located, lost = typed_spans(window, steps)
    for start, end in located:
        low, high = max(start, hunk.old_start), min(end, hunk.old_end)
        if low < high and text[low:high].strip() and text[low:high] not in hunk.text:
            return True
    for step in lost:
        typed = step.change()[1].strip()
        if typed and typed in hunk.removed and typed not in hunk.text:
            return True
    return False


def typed_spans(
    window: Window, steps: Sequence[EditStep]
) -> tuple[list[tuple[int, int]], list[EditStep]]:
    """Where the text the newest steps typed lies in the window's text (`\n`-joined offsets),
    and the steps whose lines may lie in the window but are not there as they left them.

    A step's `first` line is where it left its lines; a newer step wholly above them moved
    them by the lines it added or took."""
    at = [0]
    for line in window.lines:
        at.append(at[-1] + len(line) + 1)
    located: list[tuple[int, int]] = []
    lost: list[EditStep] = []
    newer: list[EditStep] = []
    for step in list(steps)[:RECENT_STEPS]:
        first = step.first
        for later in reversed(newer):  # oldest first, as they happened
            if later.first + len(later.before) <= first:
                first += len(later.after) - len(later.before)
        newer.append(step)
        index, size = first - window.first, len(step.after)
        if index + size <= 0 or index >= len(window.lines):
            continue  # outside the window: no hunk reaches it
        if index < 0 or index + size > len(window.lines):
            lost.append(step)  # across the window's edge: its typed text may be in it
            continue
        if list(window.lines[index : index + size]) != step.after:
            lost.append(step)
            continue
        start, end = step.typed()
        if start < end:
            located.append((at[index] + start, at[index] + end))
    return located, lost
