"""Typing the start of a shown suggestion is answered from it, without the engine."""

from __future__ import annotations

from copilot_lsp.completion.typethrough import Shown, TypeThrough

TEXT = "def f(x):\n    \nprint(f(1))\n"
CURSOR = TEXT.index("    \n") + 4


def cache() -> TypeThrough:
    typethrough = TypeThrough()
    typethrough.remember(Shown(TEXT, CURSOR, CURSOR, "return x + 1"))
    return typethrough


def typed(chars: str) -> str:
    return TEXT[:CURSOR] + chars + TEXT[CURSOR:]


def test_matching_characters_leave_the_rest() -> None:
    remaining = cache().lookup(typed("ret"), CURSOR + 3)
    assert remaining is not None
    assert remaining.completion == "urn x + 1"
    assert remaining.end_offset == CURSOR + 3


def test_mismatch_or_other_edit_misses() -> None:
    typethrough = cache()
    assert typethrough.lookup(typed("rex"), CURSOR + 3) is None
    edited_elsewhere = "#" + typed("ret")
    assert typethrough.lookup(edited_elsewhere, CURSOR + 4) is None
    assert typethrough.lookup(typed("return x + 1"), CURSOR + 12) is None  # all typed


def test_forget() -> None:
    typethrough = cache()
    typethrough.forget()
    assert typethrough.lookup(typed("r"), CURSOR + 1) is None


def test_backspaced_back_where_it_was_shown_the_whole_suggestion_again() -> None:
    typethrough = cache()
    # Asked again at the same place without typing: a fresh request (the engine may have
    # changed; the user may want another suggestion).
    assert typethrough.lookup(TEXT, CURSOR, unchanged=True) is None
    assert typethrough.lookup(typed("r"), CURSOR + 1, unchanged=True) is not None
    remaining = typethrough.lookup(TEXT, CURSOR, unchanged=True)  # one backspace
    assert remaining is not None and remaining.completion == "return x + 1"
    assert typethrough.lookup(TEXT, CURSOR) is None  # asked for explicitly: a fresh one
    typethrough.remember(Shown(TEXT, CURSOR, CURSOR, "pass"))
    assert typethrough.lookup(TEXT, CURSOR, unchanged=True) is None


def test_backspace_into_the_typed_part_gives_the_rest_from_there() -> None:
    typethrough = cache()
    assert typethrough.lookup(typed("retu"), CURSOR + 4) is not None
    remaining = typethrough.lookup(typed("re"), CURSOR + 2)  # two backspaces
    assert remaining is not None and remaining.completion == "turn x + 1"
    assert typethrough.lookup(typed(""), CURSOR - 1) is None  # before where it was shown


MULTI = "if x:\n        return 1\n    return 0"


def multi() -> TypeThrough:
    typethrough = TypeThrough()
    typethrough.remember(Shown(TEXT, CURSOR, CURSOR, MULTI))
    return typethrough


def test_typing_through_a_line_break_and_its_indentation() -> None:
    for chars in ["if x:\n", "if x:\n    ", "if x:\n        ", "if x:\n        ret"]:
        remaining = multi().lookup(typed(chars), CURSOR + len(chars))
        assert remaining is not None, chars
        assert chars + remaining.completion == MULTI


def test_a_line_break_indented_by_the_editor_its_own_way() -> None:
    chars = "if x:\n\t"  # the editor indents with a tab; the suggestion with spaces
    remaining = multi().lookup(typed(chars), CURSOR + len(chars))
    assert remaining is not None
    assert remaining.completion == "return 1\n    return 0"
    wrong = "if y:\n"
    assert multi().lookup(typed(wrong), CURSOR + len(wrong)) is None


def test_accepting_a_word_or_a_line_leaves_the_rest() -> None:
    word, line = "if ", "if x:\n        return 1\n"
    assert multi().lookup(typed(word), CURSOR + 3).completion == MULTI[3:]  # type: ignore[union-attr]
    remaining = multi().lookup(typed(line), CURSOR + len(line))
    assert remaining is not None and remaining.completion == "    return 0"


def test_all_typed_or_only_blanks_left_asks_again() -> None:
    typethrough = TypeThrough()
    typethrough.remember(Shown(TEXT, CURSOR, CURSOR, "x = 1\n"))
    assert typethrough.lookup(typed("x = 1"), CURSOR + 5) is None
