"""The workspace's recent edits, coalesced into meaningful steps, newest first.

The server sees every didChange. Each change becomes the lines it touched, before and after;
a change next to (or inside) the lines of the newest step of the same document, soon after
it, joins that step, so a burst of typing on a line is one step and not one per keystroke.
An edit that applied a suggestion the server offered stays a step of its own, marked
accepted. Steps render as unified diffs (or original/updated blocks) under a character budget.
"""

from __future__ import annotations

import bisect
import difflib
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from copilot_lsp.context.documents import differing_range
from copilot_lsp.nextedit.window import Window
from copilot_lsp.positions import line_content

MAX_STEPS = 32
"""Steps kept, over all documents."""
MERGE_GAP_S = 3.0
"""A change joins the newest step when it comes within this many seconds of its last edit."""
MAX_STEP_LINES = 30
"""A step that has grown to this many lines takes no more changes."""


@dataclass(slots=True)
class EditStep:
    uri: str
    path: str
    """The document's path as prompts show it."""
    first: int
    """The document line the step's lines start at (after its last change)."""
    before: list[str]
    """The lines as they were before the step."""
    after: list[str]
    """The same lines now."""
    accepted: bool
    at: float
    """When the step last changed."""

    def unified(self) -> str:
        """The step as a unified diff (`--- a/path`, `+++ b/path`, one hunk)."""
        lines = difflib.unified_diff(
            self.before,
            self.after,
            f"a/{self.path}",
            f"b/{self.path}",
            lineterm="",
            n=1,
        )
        return "\n".join(_renumbered(lines, self.first))

    def change(self) -> tuple[str, str]:
        """(removed, inserted): the step's characters that differ, without what both share."""
        old, new = "\n".join(self.before), "\n".join(self.after)
        start, end, inserted = differing_range(old, new)
        return old[start:end], inserted

    def typed(self) -> tuple[int, int]:
        """Where the step's inserted characters lie in its lines now (`\n`-joined)."""
        start, _, inserted = differing_range("\n".join(self.before), "\n".join(self.after))
        return start, start + len(inserted)


def _renumbered(lines: Iterator[str], first: int) -> Iterator[str]:
    """difflib numbers the hunk from the snippet's first line: shift it to the document's."""
    for line in lines:
        if line.startswith("@@ "):
            parts = line.split(" ")
            for index in (1, 2):
                sign, numbers = parts[index][0], parts[index][1:]
                start, comma, count = numbers.partition(",")
                parts[index] = f"{sign}{int(start) + first}{comma}{count}"
            line = " ".join(parts)
        yield line


class EditHistory:
    """Recent steps over all documents of the workspace, newest first."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._steps: deque[EditStep] = deque(maxlen=MAX_STEPS)
        self._clock = clock

    def __iter__(self) -> Iterator[EditStep]:
        return iter(self._steps)

    def __len__(self) -> int:
        return len(self._steps)

    def of(self, uri: str) -> list[EditStep]:
        """The document's steps, newest first."""
        return [step for step in self._steps if step.uri == uri]

    def record(
        self,
        uri: str,
        path: str,
        old: tuple[str, list[int]],
        new: tuple[str, list[int]],
        *,
        accepted: bool = False,
    ) -> EditStep | None:
        """A change of `uri` from `old` to `new` (each its text and line starts); the step it
        made or joined, None when nothing changed."""
        (old_text, old_starts), (new_text, new_starts) = old, new
        if old_text == new_text:
            return None
        start, end, inserted = differing_range(old_text, new_text)
        # Whole lines: from the change's first line to the line it ends on, each side.
        first = bisect.bisect_right(old_starts, start) - 1
        old_last = bisect.bisect_right(old_starts, end) - 1
        new_last = bisect.bisect_right(new_starts, start + len(inserted)) - 1
        now = self._clock()
        newest = self._steps[0] if self._steps else None
        if (
            not accepted
            and newest is not None
            and newest.uri == uri
            and not newest.accepted
            and now - newest.at <= MERGE_GAP_S
            and newest.first - 1 <= first
            and old_last <= newest.first + len(newest.after)
            and len(newest.after) < MAX_STEP_LINES
        ):
            _join(newest, first, old_last, new_last, (old_text, old_starts), new)
            newest.at = now
            return newest
        step = EditStep(
            uri,
            path,
            first,
            _lines(old_text, old_starts, first, old_last),
            _lines(new_text, new_starts, first, new_last),
            accepted,
            now,
        )
        self._steps.appendleft(step)
        return step

    def forget(self, uri: str) -> None:
        """Drop a closed document's steps."""
        kept = [step for step in self._steps if step.uri != uri]
        self._steps.clear()
        self._steps.extend(kept)

    def render(self, budget: int, event: Callable[[EditStep], str]) -> str:
        """The newest steps, each rendered by `event`, while they fit in `budget` characters;
        oldest first, as they happened, so the prompt ends with the newest."""
        chosen: list[str] = []
        used = 0
        for step in self._steps:
            text = event(step)
            if used + len(text) > budget:
                break
            chosen.append(text)
            used += len(text)
        return "".join(reversed(chosen))


def _join(
    step: EditStep,
    first: int,
    old_last: int,
    new_last: int,
    old: tuple[str, list[int]],
    new: tuple[str, list[int]],
) -> None:
    """Widen `step` to take in a change of lines `first:old_last` (now `first:new_last`)."""
    step_last = step.first + len(step.after) - 1
    union_first = min(first, step.first)
    union_last = max(old_last, step_last)
    # Lines of the union outside the step were not changed since it began: original too.
    above = _lines(*old, union_first, step.first - 1)
    below = _lines(*old, step_last + 1, union_last)
    step.before = above + step.before + below
    step.first = union_first
    step.after = _lines(*new, union_first, union_last + (new_last - old_last))


def _lines(text: str, starts: list[int], first: int, last: int) -> list[str]:
    return [line_content(text, starts, index) for index in range(first, last + 1)]


def as_before(window: Window, steps: list[EditStep]) -> list[str]:
    """The window's lines as they were before the document's recent `steps` (newest first):
    each step inside the window is undone, one above it moves it; one that straddles the
    window's edge, or whose lines are no longer where it left them, ends the walk there."""
    lines = list(window.lines)
    first = window.first
    for step in steps:
        if step.first + len(step.after) - 1 < first:  # above the window: it moves
            first += len(step.before) - len(step.after)
            continue
        if step.first > first + len(lines) - 1:  # below it
            continue
        at, size = step.first - first, len(step.after)
        if at < 0 or at + size > len(lines) or lines[at : at + size] != step.after:
            break
        lines[at : at + size] = step.before
    return lines
