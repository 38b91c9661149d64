"""Typing the start of a shown suggestion is answered from it, without the engine."""

from __future__ import annotations

from copilot_lsp.completion.typethrough import Shown, TypeThroughCache

TEXT = "def f(x):\n    \nprint(f(1))\n"
CURSOR = TEXT.index("    \n") + 4


def cache() -> TypeThroughCache:
    typethrough = TypeThroughCache()
    typethrough.remember("u", Shown(TEXT, CURSOR, CURSOR, "return x + 1"))
    return typethrough


def typed(chars: str) -> str:
    return TEXT[:CURSOR] + chars + TEXT[CURSOR:]


def test_matching_characters_leave_the_rest() -> None:
    remaining = cache().lookup("u", typed("ret"), CURSOR + 3)
    assert remaining is not None
    assert remaining.completion == "urn x + 1"
    assert remaining.end_offset == CURSOR + 3


def test_mismatch_other_edit_or_other_document_misses() -> None:
    typethrough = cache()
    assert typethrough.lookup("u", typed("rex"), CURSOR + 3) is None
    assert typethrough.lookup("other", typed("ret"), CURSOR + 3) is None
    edited_elsewhere = "#" + typed("ret")
    assert typethrough.lookup("u", edited_elsewhere, CURSOR + 4) is None
    assert typethrough.lookup("u", typed("return x + 1"), CURSOR + 12) is None  # all typed
    assert typethrough.lookup("u", TEXT, CURSOR) is None  # nothing typed


def test_forget() -> None:
    typethrough = cache()
    typethrough.forget("u")
    assert typethrough.lookup("u", typed("r"), CURSOR + 1) is None
