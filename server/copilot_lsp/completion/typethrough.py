"""Type-through: a suggestion still valid after a keystroke is answered from it, no request.

When the user types the first characters of a shown suggestion, the rest of it is still
the best answer, and asking the engine again would only cost time. Each document's session
(completion/session.py) keeps the last suggestion the engine made for it, with the text it
was made for, and answers against that one (not against what was served from it since), so
that:

* typing a prefix of it, line breaks included, or accepting a word or a line of it (the
  editor inserts that text) leaves the rest;
* a line break the editor indented differently from the suggestion still matches: the
  whitespace it put on the new line stands for the suggestion's indentation there;
* backspacing over typed characters gets the rest from there again, and an automatic
  request back where it was shown, after typing into it, gets the whole of it (asked again
  at the same place without typing in between, or explicitly by the user, is a fresh
  request: they want another suggestion, or the engine's state may have changed).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Shown:
    text: str
    """The document's text when the suggestion was made."""
    offset: int
    end_offset: int
    completion: str


@dataclass(frozen=True, slots=True)
class Remaining:
    completion: str
    end_offset: int


class TypeThrough:
    """One document's last engine suggestion, and whether it has been typed into since."""

    def __init__(self) -> None:
        self._shown: Shown | None = None
        self._typed_into = False

    def remember(self, shown: Shown) -> None:
        self._shown = shown
        self._typed_into = False

    def forget(self) -> None:
        self._shown = None
        self._typed_into = False

    def lookup(self, text: str, offset: int, *, unchanged: bool = False) -> Remaining | None:
        """The rest of the suggestion if `text` is the text it was made for plus characters
        typed at its place that follow it; with `unchanged` (an automatic request), also the
        whole of it when the typed characters were all deleted again. None otherwise."""
        shown = self._shown
        if shown is None:
            return None
        typed = typed_at(shown.text, shown.offset, text, offset)
        back = unchanged and self._typed_into
        if typed is None or not (typed or back):
            return None
        rest = rest_after(shown.completion, typed)
        if not rest or not rest.strip():
            return None  # all of it typed (or only blanks left): a fresh request is due
        if typed:
            self._typed_into = True
        return Remaining(rest, offset + (shown.end_offset - shown.offset))


def typed_at(before: str, at: int, text: str, offset: int) -> str | None:
    """The characters typed at offset `at` of `before` that make it `text` with the cursor at
    `offset` ("" when nothing was), if that is the whole edit; None otherwise."""
    if offset < at or len(text) - len(before) != offset - at:
        return None
    # Same text before the old cursor and after the new one: nothing else was edited.
    if text[offset:] != before[at:] or text[:at] != before[:at]:
        return None
    return text[at:offset]


def rest_after(completion: str, typed: str) -> str | None:
    """What is left of `completion` once `typed` is in the document, or None if `typed`
    does not follow it."""
    if completion.startswith(typed):
        return completion[len(typed) :]
    done, newline, indent = typed.rpartition("\n")
    if not newline or indent.strip() or not completion.startswith(done + "\n"):
        return None
    # The editor indented the new line itself: the suggestion's line goes on from its code.
    line = completion[len(done) + 1 :]
    return line[len(line) - len(line.lstrip(" \t")) :]
