"""Unit tests for copilot_lsp.context.documents: the open-document store and incremental edits."""

from __future__ import annotations

import random

import pytest

from copilot_lsp.context.documents import DocumentStore, Edit, differing_range
from copilot_lsp.errors import DocumentError
from copilot_lsp.positions import Position, line_starts

URI = "file:///tmp/example.py"
GRIN = "😀"
FLAG = "🇫🇷"
CJK = "漢字"


def reference_edit(
    text: str, start: tuple[int, int], end: tuple[int, int], new: str, enc: str
) -> str:
    """Apply an LSP edit by hand: split into lines, encode, cut by units, decode."""
    lines = text.split("\n")  # the fixtures below only use \n
    codec = "utf-16-le" if enc == "utf-16" else "utf-8"
    width = 2 if enc == "utf-16" else 1

    def to_offset(line: int, units: int) -> int:
        before = sum(len(item) + 1 for item in lines[:line])
        encoded = lines[line].encode(codec)
        return before + len(encoded[: units * width].decode(codec))

    a = to_offset(*start)
    b = to_offset(*end)
    return text[:a] + new + text[b:]


TEXT = f"x = '{GRIN}'\ns = '{CJK}' + '{FLAG}'\nlast é line\n"


@pytest.fixture
def store() -> DocumentStore:
    store = DocumentStore()
    store.open(URI, "python", 1, TEXT)
    return store


def test_open_get_contains_close(store: DocumentStore) -> None:
    document = store.get(URI)
    assert document.text == TEXT
    assert document.version == 1
    assert document.language_id == "python"
    assert URI in store
    assert document.line_count == 4
    assert document.line(1) == f"s = '{CJK}' + '{FLAG}'"
    store.close(URI)
    assert URI not in store
    with pytest.raises(DocumentError):
        store.get(URI)
    store.close(URI)  # closing twice is harmless


def test_reopen_replaces_document(store: DocumentStore) -> None:
    store.open(URI, "python", 7, "new")
    assert store.get(URI).text == "new"
    assert store.get(URI).version == 7


@pytest.mark.parametrize(
    ("start", "end", "new"),
    [
        ((0, 5), (0, 7), "🙂"),  # replace the emoji (2 units)
        ((0, 7), (0, 7), "!"),  # insert right after the emoji
        ((1, 5), (1, 7), "かな"),  # replace the CJK pair
        ((1, 12), (1, 16), "FR"),  # replace the flag (4 units)
        ((1, 7), (2, 4), "\n"),  # across lines
        ((2, 5), (2, 6), "e"),  # accented Latin
        ((3, 0), (3, 0), "tail"),  # at the very end
        ((0, 0), (3, 0), ""),  # delete everything
    ],
)
def test_incremental_edit_utf16(
    store: DocumentStore, start: tuple[int, int], end: tuple[int, int], new: str
) -> None:
    expected = reference_edit(TEXT, start, end, new, "utf-16")
    document = store.change(URI, 2, [Edit(new, Position(*start), Position(*end))], "utf-16")
    assert document.text == expected
    assert document.version == 2
    assert store.get(URI).text == expected


@pytest.mark.parametrize(
    ("start", "end", "new"),
    [
        ((0, 5), (0, 9), "🙂"),  # the emoji is 4 bytes
        ((0, 9), (0, 9), "!"),
        ((1, 5), (1, 11), "かな"),  # two CJK characters, 3 bytes each
        ((1, 8), (1, 11), "X"),  # only the second CJK character
        ((1, 16), (1, 24), "FR"),  # the flag is 8 bytes
        ((2, 5), (2, 7), "e"),  # é is 2 bytes
        ((0, 2), (2, 0), ""),
    ],
)
def test_incremental_edit_utf8(
    store: DocumentStore, start: tuple[int, int], end: tuple[int, int], new: str
) -> None:
    expected = reference_edit(TEXT, start, end, new, "utf-8")
    document = store.change(URI, 2, [Edit(new, Position(*start), Position(*end))], "utf-8")
    assert document.text == expected


def test_utf16_edit_gives_different_result_than_codepoint_counting(store: DocumentStore) -> None:
    # Columns after the emoji differ between UTF-16 units and code points by one.
    store.change(URI, 2, [Edit("Z", Position(0, 8), Position(0, 8))], "utf-16")
    assert store.get(URI).text.startswith(f"x = '{GRIN}'Z\n")


def test_several_edits_apply_in_order(store: DocumentStore) -> None:
    edits = [
        Edit("AB\n", Position(0, 0), Position(0, 0)),  # text shifts down one line
        Edit("", Position(1, 0), Position(1, 4)),  # refers to the shifted text
        Edit("!", Position(1, 3), Position(1, 3)),  # after "'😀" in UTF-16 units
    ]
    expected = TEXT
    for edit in edits:
        assert edit.start is not None and edit.end is not None
        start = (edit.start.line, edit.start.character)
        end = (edit.end.line, edit.end.character)
        expected = reference_edit(expected, start, end, edit.new_text, "utf-16")
    document = store.change(URI, 5, edits, "utf-16")
    assert document.text == expected
    assert document.text.startswith("AB\n'😀!'\n")
    assert document.version == 5


def test_full_replacement_then_incremental(store: DocumentStore) -> None:
    edits = [Edit("hello\nworld"), Edit("W", Position(1, 0), Position(1, 1))]
    document = store.change(URI, 3, edits, "utf-16")
    assert document.text == "hello\nWorld"
    assert document.line_count == 2
    assert document.line(1) == "World"


def test_line_cache_is_refreshed_after_change(store: DocumentStore) -> None:
    document = store.get(URI)
    assert document.line_count == 4
    store.change(URI, 2, [Edit("a\nb\nc\nd\ne\n", Position(0, 0), Position(0, 0))], "utf-16")
    assert document.line_count == 9
    assert document.line(0) == "a"
    assert document.offset(Position(5, 5), "utf-16") == 10 + 5


def test_backwards_edit_raises_and_leaves_text_and_version(store: DocumentStore) -> None:
    with pytest.raises(DocumentError):
        store.change(URI, 9, [Edit("x", Position(1, 3), Position(1, 1))], "utf-16")
    document = store.get(URI)
    assert document.text == TEXT
    assert document.version == 1


def test_backwards_edit_after_valid_edits_is_all_or_nothing(store: DocumentStore) -> None:
    edits = [
        Edit("PREFIX", Position(0, 0), Position(0, 0)),
        Edit("x", Position(2, 0), Position(1, 0)),
    ]
    with pytest.raises(DocumentError):
        store.change(URI, 9, edits, "utf-16")
    assert store.get(URI).text == TEXT
    assert store.get(URI).version == 1


def test_unknown_uri_raises() -> None:
    store = DocumentStore()
    with pytest.raises(DocumentError, match="not open"):
        store.get("file:///nope")
    with pytest.raises(DocumentError):
        store.change("file:///nope", 1, [Edit("x")], "utf-16")


def test_flag_replacement_by_hand(store: DocumentStore) -> None:
    store.change(URI, 2, [Edit("FR", Position(1, 12), Position(1, 16))], "utf-16")
    assert store.get(URI).line(1) == f"s = '{CJK}' + 'FR'"
    store.change(URI, 3, [Edit("", Position(1, 5), Position(1, 8))], "utf-8")
    assert store.get(URI).line(1) == "s = '字' + 'FR'"


def test_line_starts_follow_incremental_edits_without_a_rescan() -> None:
    store = DocumentStore()
    document = store.open("file:///s.py", "python", 1, "a = 1\r\nb = 2\nc = 3\n")
    assert document.starts == line_starts(document.text)
    edits = [
        Edit("x", Position(1, 5), Position(1, 5)),
        Edit("\n", Position(0, 5), Position(0, 5)),
        Edit("", Position(0, 5), Position(1, 0)),
        Edit("\r", Position(2, 0), Position(2, 0)),
    ]
    for version, edit in enumerate(edits, start=2):
        store.change("file:///s.py", version, [edit], "utf-16")
        assert document.starts == line_starts(document.text), (edit, document.text)
    full_then_edit = [Edit("z\n"), Edit("q", Position(1, 0), Position(1, 0))]
    store.change("file:///s.py", 9, full_then_edit, "utf-16")
    assert document.text == "z\nq"
    assert document.starts == [0, 2]


def test_a_whole_text_replacement_is_applied_as_the_range_that_differs() -> None:
    rng = random.Random(11)
    alphabet = "ab\r\n😀"
    for _ in range(400):
        old = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 2000)))
        start = rng.randrange(0, len(old) + 1)
        end = rng.randrange(start, len(old) + 1)
        middle = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 1200)))
        new = old[:start] + middle + old[end:]
        head, stop, replacement = differing_range(old, new)
        assert old[:head] + replacement + old[stop:] == new
        # The longest common head, then the longest common tail of what is left.
        assert head == min(len(old), len(new)) or old[head] != new[head]
        tail = len(old) - stop
        assert tail == min(len(old), len(new)) - head or old[stop - 1] != new[len(new) - tail - 1]


def test_after_a_whole_text_replacement_lines_and_tree_are_those_of_the_new_text() -> None:
    store = DocumentStore()
    text = "".join(f"def f{i}(a):\r\n    return a + {i}\r\n\r\n" for i in range(50))
    document = store.open("file:///w.py", "python", 1, text)
    replaced = text.replace("return a + 7", "x = (\r\n    1)\r\n    return x")
    store.change("file:///w.py", 2, [Edit(replaced)], "utf-16")
    assert document.text == replaced
    assert document.starts == line_starts(replaced)
    assert document.syntax is not None
    fresh = document.syntax.parse_other(replaced)
    assert str(document.syntax.tree(replaced).root_node) == str(fresh.root_node)
