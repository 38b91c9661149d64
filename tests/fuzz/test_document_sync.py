"""Property tests: any edit sequence leaves DocumentStore's text equal to the client's.

The reference model is written independently of copilot_lsp.positions: it works on the
encoded code units themselves (UTF-16 units or UTF-8 bytes), the way an editor holds its
buffer, and clamps positions past the end of a line or of the document as the LSP
specification says. Texts mix ASCII, emoji (surrogate pairs), CJK, CRLF/CR/LF line breaks,
NUL and, for UTF-16, lone surrogates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_lsp.context.documents import DocumentStore, Edit
from copilot_lsp.errors import DocumentError
from copilot_lsp.positions import Position
from tests.conftest import REPO

URI = "file:///fuzz/doc.py"
COMMON = ["a", "b", " ", "\t", "\n", "\r\n", "\r", "é", "漢", "字", "😀", "𝕏", "\x00", "}"]
LONE = ["\ud800", "\udbff", "\udc00", "\udfff"]  # only UTF-16 can carry these
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
RELIABILITY = REPO / "docs" / "reliability.md"


@dataclass
class Buffer:
    """The client's buffer as encoded code units."""

    units: list[int]
    encoding: str

    @classmethod
    def of(cls, text: str, encoding: str) -> Buffer:
        return cls(_encode(text, encoding), encoding)

    @property
    def text(self) -> str:
        return _decode(self.units, self.encoding)

    def lines(self) -> list[tuple[int, int]]:
        """(start, content end) in units per line; breaks are \\r\\n, \\r or \\n."""
        result, start, index, units = [], 0, 0, self.units
        while index < len(units):
            if units[index] in (0x0A, 0x0D):
                width = 2 if units[index] == 0x0D and units[index + 1 : index + 2] == [0x0A] else 1
                result.append((start, index))
                index += width
                start = index
            else:
                index += 1
        result.append((start, len(units)))
        return result

    def offset(self, line: int, character: int) -> int:
        lines = self.lines()
        if line >= len(lines):
            return len(self.units)
        start, end = lines[line]
        return start + min(character, end - start)

    def boundaries(self, line: int) -> list[int]:
        """Columns on `line` that do not split a character (what an editor sends)."""
        lines = self.lines()
        if line >= len(lines):
            return [0]
        start, end = lines[line]
        return [c for c in range(end - start + 1) if not self._inside(start + c)]

    def _inside(self, index: int) -> bool:
        if index == 0 or index >= len(self.units):
            return False
        unit, before = self.units[index], self.units[index - 1]
        if self.encoding == "utf-16":
            return 0xDC00 <= unit <= 0xDFFF and 0xD800 <= before <= 0xDBFF
        return 0x80 <= unit <= 0xBF  # a UTF-8 continuation byte

    def apply(self, start: tuple[int, int], end: tuple[int, int], new: str) -> None:
        a, b = self.offset(*start), self.offset(*end)
        self.units = self.units[:a] + _encode(new, self.encoding) + self.units[b:]


def _encode(text: str, encoding: str) -> list[int]:
    if encoding == "utf-16":
        raw = text.encode("utf-16-le", "surrogatepass")
        return [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]
    return list(text.encode("utf-8"))


def _decode(units: list[int], encoding: str) -> str:
    if encoding == "utf-16":
        return b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le", "surrogatepass")
    return bytes(units).decode("utf-8")


def texts(encoding: str, max_size: int = 30) -> st.SearchStrategy[str]:
    alphabet = COMMON + (LONE if encoding == "utf-16" else [])
    return st.lists(st.sampled_from(alphabet), max_size=max_size).map("".join)


@st.composite
def position(draw: st.DrawFn, buffer: Buffer) -> tuple[int, int]:
    line_count = len(buffer.lines())
    line = draw(st.integers(0, line_count + 1))
    if draw(st.integers(0, 9)) == 0:  # past the end of the line, sometimes absurdly far
        return line, draw(st.sampled_from([500, 2**31 - 1]))
    return line, draw(st.sampled_from(buffer.boundaries(line)))


def _same(store_text: str, buffer: Buffer) -> bool:
    # Compare code units: "\ud83d" + "\ude00" and "😀" are the same buffer to an editor.
    return _encode(store_text, buffer.encoding) == buffer.units


def test_random_edit_sequences_match_the_client() -> None:
    examples: dict[str, list[int]] = {"utf-16": [], "utf-8": []}
    for encoding, changes in examples.items():
        check_edit_sequences(encoding, changes)
        assert len(changes) >= FUZZ.max_examples and min(changes) >= 1, encoding
    # The examples are derandomized, so the count is the same on every run (of this code and
    # hypothesis version): docs/reliability.md quotes it.
    total = sum(sum(changes) for changes in examples.values())
    documented = re.search(r"([\d,]+) random `didChange` notifications", RELIABILITY.read_text())
    assert documented is not None, "docs/reliability.md no longer quotes the fuzz figure"
    assert int(documented.group(1).replace(",", "")) == total, (
        f"docs/reliability.md should say {total:,} ("
        + ", ".join(f"{e}: {sum(c)}" for e, c in examples.items())
        + ")"
    )


@FUZZ
@given(data=st.data())
def check_edit_sequences(encoding: str, examples: list[int], data: st.DataObject) -> None:
    changes = 0
    initial = data.draw(texts(encoding))
    buffer = Buffer.of(initial, encoding)
    store = DocumentStore()
    store.open(URI, "python", 1, initial)
    for version in range(2, 2 + data.draw(st.integers(1, 12))):
        edits: list[Edit] = []
        for _ in range(data.draw(st.integers(1, 3))):
            new = data.draw(texts(encoding, 6))
            if data.draw(st.integers(0, 7)) == 0:
                buffer = Buffer.of(new, encoding)
                edits.append(Edit(new))
                continue
            start, end = data.draw(position(buffer)), data.draw(position(buffer))
            if buffer.offset(*start) > buffer.offset(*end):
                start, end = end, start
            buffer.apply(start, end, new)
            edits.append(Edit(new, Position(*start), Position(*end)))
        store.change(URI, version, edits, encoding)  # type: ignore[arg-type]
        changes += 1
        document = store.get(URI)
        assert document.in_sync
        assert _same(document.text, buffer), (document.text, buffer.text)
        assert document.version == version
        assert document.line_count == len(buffer.lines())
    examples.append(changes)


@FUZZ
@given(text=texts("utf-16"), line=st.integers(-(2**40), 2**40), char=st.integers(-(2**40), 2**40))
def test_any_position_maps_inside_the_document(text: str, line: int, char: int) -> None:
    store = DocumentStore()
    document = store.open(URI, "python", 1, text)
    for encoding in ("utf-16", "utf-8", "utf-32"):
        offset = document.offset(Position(line, char), encoding)
        assert 0 <= offset <= len(text)


def test_a_column_inside_a_surrogate_pair_snaps_to_the_start_of_the_character() -> None:
    store = DocumentStore()
    store.open(URI, "python", 1, "a😀b")
    store.change(URI, 2, [Edit("X", Position(0, 2), Position(0, 2))], "utf-16")
    assert store.get(URI).text == "aX😀b"


def test_a_reversed_range_marks_the_document_out_of_sync_until_a_full_change() -> None:
    store = DocumentStore()
    store.open(URI, "python", 1, "one\ntwo\n")
    with pytest.raises(DocumentError, match="ends before it starts"):
        store.change(URI, 2, [Edit("x", Position(1, 2), Position(0, 1))], "utf-16")
    assert not store.get(URI).in_sync
    store.change(URI, 3, [Edit("y", Position(0, 0), Position(0, 0))], "utf-16")
    assert store.get(URI).text == "one\ntwo\n" and not store.get(URI).in_sync
    assert store.get(URI).version == 3
    store.change(
        URI,
        4,
        [
            Edit("x", Position(0, 0), Position(0, 0)),
            Edit("fresh\n"),
            Edit("!", Position(1, 0), Position(1, 0)),
        ],
        "utf-16",
    )
    document = store.get(URI)
    assert document.in_sync and document.text == "fresh\n!"


def test_reopening_resynchronises() -> None:
    store = DocumentStore()
    store.open(URI, "python", 1, "a")
    assert store.mark_out_of_sync(URI) and not store.mark_out_of_sync(URI)
    store.open(URI, "python", 5, "b")
    assert store.get(URI).in_sync


def test_edits_against_an_unknown_document_are_an_error() -> None:
    with pytest.raises(DocumentError, match="not open"):
        DocumentStore().change("file:///nope", 2, [Edit("x")], "utf-16")
    assert not DocumentStore().mark_out_of_sync("file:///nope")
