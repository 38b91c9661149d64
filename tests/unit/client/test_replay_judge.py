"""What the replay's scripted user does with a suggestion, and the accepted-characters proxy."""

from __future__ import annotations

from copilot_lsp.client.replay.judge import (
    MIN_ACCEPT,
    Decision,
    Shown,
    common_prefix,
    decide,
    matched_chars,
)


def test_a_suggestion_that_is_what_the_user_types_next_is_taken_whole() -> None:
    decision = decide(Shown("id", "x = 1"), "x = 1\n    y = 2", "\nrest")
    assert decision == Decision("full", 5, "x = 1", 0)


def test_closing_brackets_the_item_replaces_count_as_the_documents_own() -> None:
    # foo(|) with the item "a, b)" over the ")" right of the cursor.
    assert decide(Shown("id", "a, b)", replaces=1), "a, b", ")\n") == Decision(
        "full", 4, "a, b)", 1
    )
    # Without the replaced range it would double the bracket: only its words are taken.
    assert decide(Shown("id", "a, b)"), "a, b", ")\n") == Decision("partial", 4, "a, b", 0)


def test_matching_first_lines_are_taken_as_a_partial_accept() -> None:
    shown = Shown("id", "total = 0\n    for x in xs:\n        total += y")
    remaining = "total = 0\n    for x in xs:\n        total += x\n    return total"
    decision = decide(shown, remaining, "")
    assert decision is not None and decision.kind == "partial"
    assert decision.inserted == "total = 0\n    for x in xs:"
    assert decision.typed == len(decision.inserted)


def test_a_first_line_that_differs_gives_its_whole_matching_words_only() -> None:
    decision = decide(Shown("id", "result = compute(alpha)"), "result = compute(beta)", "")
    assert decision == Decision("partial", len("result = compute("), "result = compute(", 0)
    # Cut in the middle of an identifier: back to the word's start.
    decision = decide(Shown("id", "values.append(item)"), "values.extend(items)", "")
    assert decision is not None and decision.inserted == "values."


def test_short_or_wrong_suggestions_are_typed_over() -> None:
    assert decide(Shown("id", "x)"), "x)", "") is None  # shorter than MIN_ACCEPT
    assert MIN_ACCEPT == 3
    assert decide(Shown("id", "print(x)"), "return y", "") is None
    assert decide(Shown("id", ""), "abc", "") is None


def test_the_proxy_counts_matching_characters_into_the_text_after_the_target() -> None:
    assert common_prefix("abcd", "abxy") == 2
    assert matched_chars(Shown("id", "x = 1\nfoo()"), "x = 1", "\nfoo()\n") == 11
    assert matched_chars(Shown("id", "y = 2"), "x = 1", "") == 0
