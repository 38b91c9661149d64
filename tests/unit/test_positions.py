"""Unit tests for copilot_lsp.positions: LSP positions <-> code-point offsets."""

from __future__ import annotations

import random

import pytest

from copilot_lsp.positions import (
    Position,
    char_width,
    codepoints_to_units,
    edited_line_starts,
    line_content,
    line_starts,
    offset_at,
    position_at,
    units_to_codepoints,
)

GRIN = "😀"  # U+1F600: 1 code point, 2 UTF-16 units, 4 UTF-8 bytes
FLAG = "🇫🇷"  # two regional indicators: 2 code points, 4 UTF-16 units, 8 UTF-8 bytes
CJK = "漢字"  # 2 code points, 2 UTF-16 units, 6 UTF-8 bytes
ACCENT = "é"  # U+00E9: 1 code point, 1 UTF-16 unit, 2 UTF-8 bytes


def reference_units(line: str, column: int, encoding: str) -> int:
    """Column in encoding units computed by actually encoding the prefix."""
    prefix = line[:column]
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le")) // 2
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    return len(prefix)


def test_flag_is_two_code_points() -> None:
    assert len(FLAG) == 2


@pytest.mark.parametrize(
    ("char", "utf8", "utf16", "utf32"),
    [
        ("a", 1, 1, 1),
        (ACCENT, 2, 1, 1),
        ("漢", 3, 1, 1),
        (GRIN, 4, 2, 1),
        ("\u07ff", 2, 1, 1),
        ("\u0800", 3, 1, 1),
        ("\uffff", 3, 1, 1),
        ("\U00010000", 4, 2, 1),
    ],
)
def test_char_width(char: str, utf8: int, utf16: int, utf32: int) -> None:
    assert char_width(char, "utf-8") == utf8
    assert char_width(char, "utf-16") == utf16
    assert char_width(char, "utf-32") == utf32


LINES = [
    f"x = '{GRIN}' + y",
    f"flag = {FLAG}{FLAG}!",
    f"name = '{CJK}' # {ACCENT}t{ACCENT}",
    f"{GRIN}{CJK}{ACCENT}{FLAG}a",
    "plain ascii",
    "",
]


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_codepoints_to_units_matches_real_encoding(line: str, encoding: str) -> None:
    for column in range(len(line) + 1):
        assert codepoints_to_units(line, column, encoding) == reference_units(  # type: ignore[arg-type]
            line, column, encoding
        )


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_units_to_codepoints_inverts_on_char_boundaries(line: str, encoding: str) -> None:
    for column in range(len(line) + 1):
        units = reference_units(line, column, encoding)
        assert units_to_codepoints(line, units, encoding) == column  # type: ignore[arg-type]


def test_utf16_examples_by_hand() -> None:
    line = f"a{GRIN}b{FLAG}c{CJK}"
    # a=1, 😀=2, b=1, 🇫=2, 🇷=2, c=1, 漢=1, 字=1
    assert units_to_codepoints(line, 1, "utf-16") == 1
    assert units_to_codepoints(line, 3, "utf-16") == 2  # after the emoji
    assert units_to_codepoints(line, 4, "utf-16") == 3  # after b
    assert units_to_codepoints(line, 8, "utf-16") == 5  # after the flag
    assert units_to_codepoints(line, 9, "utf-16") == 6  # after c
    assert units_to_codepoints(line, 11, "utf-16") == 8  # end
    assert codepoints_to_units(line, 5, "utf-16") == 8
    assert codepoints_to_units(line, 8, "utf-16") == 11


def test_utf8_examples_by_hand() -> None:
    line = f"{ACCENT}{CJK}{GRIN}z"
    # é=2, 漢=3, 字=3, 😀=4, z=1
    assert codepoints_to_units(line, 1, "utf-8") == 2
    assert codepoints_to_units(line, 3, "utf-8") == 8
    assert codepoints_to_units(line, 4, "utf-8") == 12
    assert codepoints_to_units(line, 5, "utf-8") == 13
    assert units_to_codepoints(line, 8, "utf-8") == 3
    assert units_to_codepoints(line, 12, "utf-8") == 4


def test_utf32_counts_code_points() -> None:
    line = f"{FLAG}{GRIN}"
    assert codepoints_to_units(line, 3, "utf-32") == 3
    assert units_to_codepoints(line, 2, "utf-32") == 2


def test_utf16_column_inside_surrogate_pair_snaps_to_char_start() -> None:
    line = f"ab{GRIN}cd"
    # 😀 occupies UTF-16 units 2..3; unit 3 is between its two surrogates
    assert units_to_codepoints(line, 3, "utf-16") == 2
    assert units_to_codepoints(line, 4, "utf-16") == 3


def test_utf16_inside_each_flag_half_snaps() -> None:
    line = f"{FLAG}x"
    assert units_to_codepoints(line, 1, "utf-16") == 0
    assert units_to_codepoints(line, 2, "utf-16") == 1
    assert units_to_codepoints(line, 3, "utf-16") == 1
    assert units_to_codepoints(line, 4, "utf-16") == 2


def test_utf8_column_inside_multibyte_sequence_snaps() -> None:
    line = f"a{CJK}"
    # 漢 is bytes 1..3, 字 is bytes 4..6
    assert units_to_codepoints(line, 2, "utf-8") == 1
    assert units_to_codepoints(line, 3, "utf-8") == 1
    assert units_to_codepoints(line, 4, "utf-8") == 2
    assert units_to_codepoints(line, 6, "utf-8") == 2
    assert units_to_codepoints(line, 7, "utf-8") == 3


def test_offset_at_inside_surrogate_pair_snaps() -> None:
    text = f"first\nx{GRIN}y\n"
    assert offset_at(text, Position(1, 2), "utf-16") == 7  # start of the emoji
    assert offset_at(text, Position(1, 3), "utf-16") == 8


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_column_past_line_end_clamps(encoding: str) -> None:
    line = f"a{GRIN}{CJK}"
    assert units_to_codepoints(line, 10_000, encoding) == len(line)  # type: ignore[arg-type]
    text = f"{line}\r\nnext"
    assert offset_at(text, Position(0, 10_000), encoding) == len(line)  # type: ignore[arg-type]
    assert offset_at(text, Position(1, 10_000), encoding) == len(text)  # type: ignore[arg-type]


def test_negative_column_and_line_clamp_to_zero() -> None:
    text = "abc\ndef"
    assert units_to_codepoints("abc", -5, "utf-16") == 0
    assert offset_at(text, Position(-1, 2), "utf-16") == 0
    assert offset_at(text, Position(1, -3), "utf-16") == 4


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_line_past_end_maps_to_len_text(encoding: str) -> None:
    text = f"one\n{GRIN}two\n"
    assert offset_at(text, Position(3, 0), encoding) == len(text)  # type: ignore[arg-type]
    assert offset_at(text, Position(99, 5), encoding) == len(text)  # type: ignore[arg-type]
    # line 2 exists (empty, after the final newline)
    assert offset_at(text, Position(2, 0), encoding) == len(text)  # type: ignore[arg-type]
    assert offset_at("", Position(1, 0), encoding) == 0  # type: ignore[arg-type]


def test_line_starts_counts_all_three_line_breaks() -> None:
    text = "a\nb\r\nc\rd\r\n\re"
    assert line_starts(text) == [0, 2, 5, 7, 10, 11]
    assert [line_content(text, line_starts(text), i) for i in range(6)] == [
        "a",
        "b",
        "c",
        "d",
        "",
        "e",
    ]


def test_position_at_clamps_offsets() -> None:
    text = f"ab\n{GRIN}"
    assert position_at(text, -4, "utf-16") == Position(0, 0)
    assert position_at(text, 999, "utf-16") == Position(1, 2)
    assert position_at(text, 999, "utf-8") == Position(1, 4)


def test_position_at_inside_crlf_maps_to_line_end() -> None:
    text = f"{GRIN}\r\nb"
    # offset 2 lies between \r and \n: still line 0, at its end
    assert position_at(text, 2, "utf-16") == Position(0, 2)
    assert position_at(text, 1, "utf-16") == Position(0, 2)
    assert position_at(text, 3, "utf-16") == Position(1, 0)


MULTILINE = (
    f"def f():\n    return '{GRIN}'\r\n"
    f"# {CJK} {ACCENT}\r"
    f"flag = '{FLAG}'\n"
    "\n"
    "\r\n"
    f"{GRIN}{FLAG}{CJK}\r"
    "end"
)


def _inside_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("text", [MULTILINE, MULTILINE + "\n", "\r\n\r\n", f"{GRIN}"])
def test_round_trip_every_offset(encoding: str, text: str) -> None:
    starts = line_starts(text)
    seen: set[Position] = set()
    for offset in range(len(text) + 1):
        if _inside_crlf(text, offset):
            continue  # not addressable: the position of the \r is the line end
        position = position_at(text, offset, encoding, starts)  # type: ignore[arg-type]
        assert position not in seen
        seen.add(position)
        assert offset_at(text, position, encoding, starts) == offset  # type: ignore[arg-type]
        assert offset_at(text, position, encoding) == offset  # type: ignore[arg-type]
    # every line got positions, and the line numbers are those line_starts gives
    assert {p.line for p in seen} == set(range(len(starts)))


def test_round_trip_positions_are_utf16_columns() -> None:
    text = f"a{GRIN}\r\n{FLAG}b"
    offsets = range(len(text) + 1)
    positions = [position_at(text, o, "utf-16") for o in offsets if not _inside_crlf(text, o)]
    assert positions == [
        Position(0, 0),
        Position(0, 1),
        Position(0, 3),  # offset 2 is the \r: end of line 0
        Position(1, 0),
        Position(1, 2),
        Position(1, 4),
        Position(1, 5),
    ]


def _reference_starts(text: str) -> list[int]:
    starts = [0]
    index = 0
    while index < len(text):
        if text[index] == "\r" and text[index + 1 : index + 2] == "\n":
            index += 2
            starts.append(index)
        elif text[index] in "\r\n":
            index += 1
            starts.append(index)
        else:
            index += 1
    return starts


def test_line_starts_and_edited_line_starts_match_a_rescan() -> None:
    """Random edits, \\r\\n pairs made and broken at the edit's edges included."""
    rng = random.Random(7)
    pieces = ["a", "b", " ", "\n", "\r", "\r\n"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        assert line_starts(text) == _reference_starts(text)
        start = rng.randint(0, len(text))
        end = rng.randint(start, len(text))
        inserted = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
        after = text[:start] + inserted + text[end:]
        updated = edited_line_starts(line_starts(text), after, start, end, len(inserted))
        assert updated == _reference_starts(after), (text, start, end, inserted)
