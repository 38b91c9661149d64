"""What the scripted user does with a shown suggestion, and how good it was.

The user knows what they are about to type (the rest of the session's target). A suggestion
is taken with Tab when all of it is exactly that, closing brackets it replaces included; when
only its first lines (or the start of its first line) are, those are taken as a partial
accept (accept line/word), as editors offer. Anything shorter than `MIN_ACCEPT` characters is
not worth a Tab: the user just types on.

The accepted-characters proxy does not depend on what the user decided: for every suggestion
shown, how many of its characters match what the buffer reads after the cursor once the
user has finished (their common prefix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MIN_ACCEPT = 3
"""Fewer characters than this are typed, not accepted."""


@dataclass(frozen=True, slots=True)
class Shown:
    """A suggestion as the editor shows it at the cursor."""

    completion_id: str | None
    text: str
    """The item's insertText."""
    replaces: int = 0
    """Characters right of the cursor that the item's range covers (closing brackets)."""


@dataclass(frozen=True, slots=True)
class Decision:
    kind: Literal["full", "partial"]
    typed: int
    """Target characters the accept puts in the buffer."""
    inserted: str
    """The text the edit inserts at the cursor."""
    replaces: int
    """Characters right of the cursor the edit replaces."""


def common_prefix(left: str, right: str) -> int:
    size = min(len(left), len(right))
    for index in range(size):
        if left[index] != right[index]:
            return index
    return size


def matched_chars(shown: Shown, remaining: str, after: str) -> int:
    """The proxy: characters of the suggestion that match the finished buffer after the cursor
    (`remaining` target text, then the document's text after it)."""
    return common_prefix(shown.text, remaining + after)


def decide(shown: Shown, remaining: str, after: str) -> Decision | None:
    """Tab (all of it), a partial accept (whole lines, or the start of the first line), or None.

    `remaining` is what the user still has to type; `after` is the document after the cursor.
    """
    text = shown.text
    own = len(text) - shown.replaces
    if (
        own >= MIN_ACCEPT
        and remaining.startswith(text[:own])
        and text[own:] == after[: shown.replaces]
    ):
        return Decision("full", own, text, shown.replaces)
    longest = 0
    for end in [index for index, char in enumerate(text) if char == "\n"] + [len(text)]:
        if end <= own and remaining.startswith(text[:end]):
            longest = end
    if longest < MIN_ACCEPT:
        word = _words(text, remaining)
        if word < MIN_ACCEPT:
            return None
        longest = word
    return Decision("partial", longest, text[:longest], 0)


def _words(text: str, remaining: str) -> int:
    """The longest run of whole words of the first line that the user is about to type."""
    shared = common_prefix(text.split("\n", 1)[0], remaining)
    if shared == len(remaining) or shared == 0:
        return shared
    cut = shared
    while cut > 0 and (text[cut - 1].isalnum() or text[cut - 1] == "_"):
        cut -= 1  # do not stop in the middle of a word
    return cut
