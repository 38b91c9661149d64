"""Recently edited and viewed places, offered to the prompt as chunks of surrounding code.

Where the user just worked is often what the next line needs (the function just renamed,
the field just added). Chunks too similar to the code already in the prompt's window are
skipped: they would spend the budget on what the model already sees.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Place:
    uri: str
    line: int


class RecentPlaces:
    """The last places touched, newest first, one per (document, neighbourhood)."""

    def __init__(self, size: int = 16, radius: int = 6) -> None:
        self._places: deque[Place] = deque(maxlen=size)
        self.radius = radius

    def touch(self, uri: str, line: int) -> None:
        for place in list(self._places):
            if place.uri == uri and abs(place.line - line) <= self.radius:
                self._places.remove(place)
        self._places.appendleft(Place(uri, line))

    def forget(self, uri: str) -> None:
        for place in [p for p in self._places if p.uri == uri]:
            self._places.remove(place)

    def places(self) -> list[Place]:
        return list(self._places)


def words(text: str) -> frozenset[str]:
    """The set of words `similarity` compares."""
    return frozenset(_WORD.findall(text))


def similarity(a: str | frozenset[str], b: str | frozenset[str]) -> float:
    """Jaccard similarity of the two texts' word sets (or of the sets, from `words`: a text
    compared many times is split once)."""
    left = words(a) if isinstance(a, str) else a
    right = words(b) if isinstance(b, str) else b
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)
