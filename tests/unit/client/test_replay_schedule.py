"""The replay's seeded typing schedule: keys, gaps, pauses, reactions."""

from __future__ import annotations

import itertools
import statistics

from copilot_lsp.client.replay.schedule import TypingModel, draw, key_at, keys

CODE = (
    "def total(items, tax):\n"
    "    subtotal = sum(item.price for item in items)\n"
    "    if tax:\n"
    "        subtotal *= 1 + tax\n"
    "\n"
    "    return round(subtotal, 2)"
)


def test_enter_types_the_newline_and_the_next_lines_indentation_at_once() -> None:
    typed = keys(CODE)
    assert "".join(key for _, key in typed) == CODE
    assert ("\n    ") in [key for _, key in typed]
    assert ("\n        ") in [key for _, key in typed]
    # A blank line: Enter twice, the second one indents the line after it.
    blank = CODE.index("\n\n")
    assert key_at(CODE, blank) == "\n"
    assert key_at(CODE, blank + 1) == "\n    "
    assert all(len(key) == 1 or key.startswith("\n") for _, key in typed)
    # Positions chain: each key starts where the previous one ended.
    for (position, key), (following, _) in itertools.pairwise(typed):
        assert position + len(key) == following
    assert keys(CODE, CODE.index("return"))[0] == (CODE.index("return"), "r")


def test_the_same_seed_and_session_give_the_same_schedule_others_differ() -> None:
    model = TypingModel()
    first = draw(CODE, 17, "write-abc-1", model)
    assert first == draw(CODE, 17, "write-abc-1", model)
    assert first != draw(CODE, 18, "write-abc-1", model)
    assert first != draw(CODE, 17, "hole-abc-1", model)
    assert len(first.delays_s) == len(first.reactions_s) == len(first.type_ahead) == len(CODE)


def test_bursts_around_the_key_gap_pauses_after_line_ends() -> None:
    text = CODE * 40
    model = TypingModel()
    typing = draw(text, 3, "long", model)
    assert typing.delays_s[0] == model.first_pause_s and typing.pauses[0]
    bursts = [gap for gap, pause in zip(typing.delays_s, typing.pauses, strict=True) if not pause]
    assert abs(statistics.median(bursts) - model.key_s) < 0.02
    assert all(0.04 <= gap <= 0.6 for gap in bursts)
    pauses = [gap for gap, pause in zip(typing.delays_s, typing.pauses, strict=True) if pause]
    assert all(0.3 <= gap <= 4.0 for gap in pauses[1:])
    starts = [
        position
        for position, key in keys(text)
        if position and text[position - 1] in "\n " and text[:position].rstrip(" ").endswith("\n")
    ]
    line_pause_rate = sum(typing.pauses[p] for p in starts) / len(starts)
    others = [p for p, _ in keys(text) if p and p not in set(starts)]
    other_rate = sum(typing.pauses[p] for p in others) / len(others)
    assert line_pause_rate > 0.4 > 0.1 > other_rate
    assert set(typing.type_ahead) <= {0, 1, 2, 3} and min(typing.reactions_s) >= 0.15
