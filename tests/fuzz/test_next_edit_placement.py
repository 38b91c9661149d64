"""Property tests: any rewrite of any window, diffed and placed as the server places a next
edit, applied by a client in UTF-16 units, gives the document with the window rewritten, in
the document's own line endings.

The client side is written independently of copilot_lsp.positions: it walks the text's
code points and counts UTF-16 units itself. Lines mix ASCII, accents, CJK and emoji
(surrogate pairs); documents use LF or CRLF throughout.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_lsp.nextedit.diff import hunks, line_ending, merged, place
from copilot_lsp.nextedit.window import window_at
from copilot_lsp.positions import line_starts

CHARS = ["a", "b", " ", "(", ")", "=", "é", "ñ", "漢", "😀", "𝕏", "#"]
FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

line_text = st.lists(st.sampled_from(CHARS), max_size=8).map("".join)


def utf16_offset(text: str, eol: str, line: int, character: int) -> int:
    """The client's view: the code-point offset of (line, UTF-16 character)."""
    lines = text.split(eol)
    offset = sum(len(lines[index]) + len(eol) for index in range(line))
    units = 0
    for index, char in enumerate(lines[line]):
        if units >= character:
            return offset + index
        units += 2 if ord(char) > 0xFFFF else 1
    return offset + len(lines[line])


@st.composite
def rewrites(draw: st.DrawFn) -> tuple[str, str, int, int, int, list[str]]:
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    lines = draw(st.lists(line_text, min_size=1, max_size=12))
    text = eol.join(lines) + draw(st.sampled_from(["", eol]))
    cursor_line = draw(st.integers(0, len(text.split(eol)) - 1))
    above, below = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    window_lines = text.split(eol)[
        max(0, cursor_line - above) : min(len(text.split(eol)), cursor_line + below + 1)
    ]
    # The model's rewrite: lines kept, changed, dropped or added, in order.
    new: list[str] = []
    for line in window_lines:
        action = draw(st.sampled_from(["keep", "keep", "change", "drop", "add"]))
        if action == "keep":
            new.append(line)
        elif action == "change":
            new.append(draw(line_text))
        elif action == "add":
            new.extend([line, draw(line_text)])
    if draw(st.booleans()) or not new:
        # An answer's text split at its line breaks has a line at least (maybe empty).
        new.append(draw(line_text))
    return text, eol, cursor_line, above, below, new


@FUZZ
@given(rewrites())
def test_a_placed_rewrite_applies_exactly_in_utf16(
    case: tuple[str, str, int, int, int, list[str]],
) -> None:
    text, eol, cursor_line, above, below, new = case
    starts = line_starts(text)
    window = window_at(text, starts, starts[cursor_line], above, below)
    edit = merged(hunks(window.lines, new), window.lines, new)
    # The document's line ending (a document without a line break gets LF in new lines).
    ending = line_ending(text) if eol in text else "\n"
    assert line_ending(text) == ending
    document = text.split(eol)
    expected = ending.join([*document[: window.first], *new, *document[window.last + 1 :]])
    if edit is None:
        assert list(window.lines) == new
        return
    placed = place(edit, window, starts, "utf-16", ending)
    start = utf16_offset(text, eol, placed.start.line, placed.start.character)
    end = utf16_offset(text, eol, placed.end.line, placed.end.character)
    assert (start, end) == (placed.start_offset, placed.end_offset)
    assert text[:start] + placed.text + text[end:] == expected
