"""Recently edited places: newest first, one per neighbourhood, forgotten on close."""

from __future__ import annotations

from copilot_lsp.context.recent import RecentPlaces, similarity


def test_places_are_newest_first_and_merged_by_neighbourhood() -> None:
    places = RecentPlaces(size=3, radius=5)
    places.touch("a", 10)
    places.touch("b", 1)
    places.touch("a", 12)  # same neighbourhood as line 10: moves to the front
    assert [(p.uri, p.line) for p in places.places()] == [("a", 12), ("b", 1)]
    places.touch("c", 0)
    places.touch("d", 0)
    assert [p.uri for p in places.places()] == ["d", "c", "a"]
    places.forget("c")
    assert [p.uri for p in places.places()] == ["d", "a"]


def test_similarity() -> None:
    assert similarity("a b c", "a b c") == 1.0
    assert similarity("a b", "c d") == 0.0
    assert similarity("", "x") == 0.0
