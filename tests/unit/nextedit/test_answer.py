"""The streamed answer's watch: it stops reading once the answer cannot be a rewrite."""

from __future__ import annotations

import math
import re

import pytest

from copilot_lsp.nextedit.answer import AnswerWatch
from copilot_lsp.nextedit.diff import Hunk, hunks
from copilot_lsp.nextedit.prompt import load_format

WINDOW = ["def f(a):", "    return a", ""]


def fed(watch: AnswerWatch, pieces: list[str]) -> tuple[int, str | None]:
    """How many pieces the watch took before it said stop, and why (None: read to the end)."""
    for count, piece in enumerate(pieces, 1):
        reason = watch.feed(piece)
        if reason is not None:
            return count, reason
    return len(pieces), None


def test_a_rewrite_of_the_window_with_a_few_more_lines_is_read_to_its_end() -> None:
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 2)
    answer = ["def f(a, b):\n", "    c = a\n", "    d = b\n", "    return a + b\n", "\n"]
    assert fed(watch, answer) == (5, None)
    assert watch.text == "".join(answer)


def test_more_lines_than_the_window_and_the_changed_lines_allowed_stops_at_once() -> None:
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 2)
    count, reason = fed(watch, ["    pass\n"] * 100)
    assert count == 6 and reason is not None and "more than 5 lines" in reason
    # A sixth line begun is a sixth line: the answer would have at least 6.
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 2)
    assert fed(watch, ["a\nb\nc\nd\ne\n", "f"])[1] is not None


def test_the_prompts_own_headers_at_a_line_start_stop_it() -> None:
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 8)
    answer = ["def f(a):\n    return a\n", "\n# Li", "nes 1-3, after\n", "# Lines 1-3\n"]
    count, reason = fed(watch, answer)
    assert count == 3 and reason is not None and "'# Lines'" in reason
    # a diff's added or removed line, as the history writes them
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 8)
    assert fed(watch, ["def f(a):\n", "# +def f(a):\n", "# +def f(a):\n"])[0] == 2
    # the comment leader follows the language
    watch = AnswerWatch(load_format("plain"), WINDOW, "go", 8)
    assert fed(watch, ["x := 1\n// Lines 1-3, after the next edit:\n"])[1] is not None
    assert AnswerWatch(load_format("plain"), WINDOW, "go", 8).feed("x := 1 // Lines\n") is None


def test_a_header_the_window_itself_holds_is_no_sign() -> None:
    window = ["# Lines of the report", "x = 1"]
    watch = AnswerWatch(load_format("plain"), window, "python", 8)
    assert fed(watch, ["# Lines of the report\n", "x = 2\n"]) == (2, None)


def test_zeta_counts_lines_after_the_region_start_and_knows_its_headers() -> None:
    zeta = load_format("zeta")
    watch = AnswerWatch(zeta, WINDOW, "python", 1)
    answer = ["<|editable_region_start|>\n", "def f(a):\n", "    return a\n", "\n", "x\n"]
    assert fed(watch, answer) == (5, None)
    watch = AnswerWatch(zeta, WINDOW, "python", 8)
    assert fed(watch, ["def f(a):\n", "### Instruction:\n"])[0] == 2


def tokens(text: str, logprob: float = -0.01, **unsure: float) -> list[tuple[str, float]]:
    """`text` as one token per word, per blank run and per run of punctuation, each with
    `logprob` or, for the words named, their own."""
    parts = re.findall(r"\w+|\s+|[^\w\s]+", text)
    return [(part, unsure.get(part, logprob)) for part in parts]


def watched(answer: list[list[tuple[str, float]]]) -> tuple[AnswerWatch, list[Hunk]]:
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 8)
    for pieces in answer:
        assert watch.feed("".join(token for token, _ in pieces), pieces) is None
    new = load_format("plain").answer(watch.text).split("\n")
    return watch, hunks(WINDOW, new)


def test_confidence_is_read_from_the_tokens_that_write_the_change() -> None:
    # the copy is sure, the changed name is not: the score is the change's
    watch, found = watched([tokens("def f(a):\n    return b\n\n", b=math.log(0.2))])
    assert [hunk.text for hunk in found] == ["b"]
    assert watch.confidence(found) == pytest.approx(0.2)
    # several tokens in one event (speculation), two changes: the geometric mean of both
    watch, found = watched(
        [tokens("def g(a):\n", g=math.log(0.9)), tokens("    return b\n\n", b=math.log(0.4))]
    )
    assert watch.confidence(found) == pytest.approx(0.6)


def test_a_deletion_is_judged_by_the_token_written_in_its_place() -> None:
    watch, found = watched([tokens("def f(a):\n", f=math.log(0.99)), [("\n", math.log(0.3))]])
    assert [hunk.removed for hunk in found] == ["    return a\n"]
    assert watch.confidence(found) == pytest.approx(0.3)


def test_without_logprobs_there_is_nothing_to_judge_and_uneven_tokens_share_their_text() -> None:
    watch, found = watched([[("def f(a):\n    return b\n\n", -0.01)]])
    assert watch.confidence(found) == pytest.approx(math.exp(-0.01))
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 8)
    watch.feed("def f(a):\n    return b\n")
    assert watch.confidence(hunks(WINDOW, ["def f(a):", "    return b", ""])) is None
    # tokens that do not spell their text (a stop string cut short): each covers all of it
    watch = AnswerWatch(load_format("plain"), WINDOW, "python", 8)
    watch.feed("def f(a):\n    return b\n", [("def f(a):\n    return ", -0.01), ("b", -2.0)])
    watch.feed("\n", [("\n", -0.01), ("# end", -0.5)])
    assert watch.confidence(hunks(WINDOW, ["def f(a):", "    return b", ""])) == pytest.approx(
        math.exp(-1.005)
    )


def test_a_start_the_prompt_gave_is_the_answers_first_text_and_lines() -> None:
    fenced = load_format("fenced")
    watch = AnswerWatch(fenced, WINDOW, "python", 0, prefill="def f(a):")
    assert watch.text == "def f(a):"
    # the prefilled line and two more are the window's three: a fourth is one too many
    assert fed(watch, ["\n    return b\n", "\n"]) == (2, None)
    assert watch.feed("x") is not None
    # the change's tokens are found past the start: offsets count the prefilled text
    watch = AnswerWatch(fenced, WINDOW, "python", 8, prefill="def f(a):")
    watch.feed("\n    return b\n\n", tokens("\n    return b\n\n", b=math.log(0.2)))
    new = fenced.answer(watch.text).split("\n")
    assert new == ["def f(a):", "    return b", ""]
    assert watch.confidence(hunks(WINDOW, new)) == pytest.approx(0.2)
