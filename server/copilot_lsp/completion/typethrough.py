"""Type-through: characters typed that match the suggestion on screen are answered from it.

When the user types the first characters of a shown suggestion, the rest of it is still
the best answer, and asking the engine again would only cost time. The cache keeps the
last shown suggestion per document with the text it was made for.
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


class TypeThroughCache:
    def __init__(self) -> None:
        self._shown: dict[str, Shown] = {}

    def remember(self, uri: str, shown: Shown) -> None:
        self._shown[uri] = shown

    def forget(self, uri: str) -> None:
        self._shown.pop(uri, None)

    def lookup(self, uri: str, text: str, offset: int) -> Remaining | None:
        """The rest of the shown suggestion if `text` is the old text plus typed characters
        that match its start, inserted at the old cursor; None otherwise."""
        shown = self._shown.get(uri)
        if shown is None:
            return None
        typed = offset - shown.offset
        if typed <= 0 or typed >= len(shown.completion):
            return None
        if len(text) - len(shown.text) != typed:
            return None
        if text[shown.offset : offset] != shown.completion[:typed]:
            return None
        # Same text before the old cursor and after the new one: nothing else was edited.
        if text[: shown.offset] != shown.text[: shown.offset]:
            return None
        if text[offset:] != shown.text[shown.offset :]:
            return None
        return Remaining(shown.completion[typed:], offset + (shown.end_offset - shown.offset))
