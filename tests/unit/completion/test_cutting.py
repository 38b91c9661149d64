"""Unit tests for copilot_lsp.completion.cutting: where a streamed completion ends."""

from __future__ import annotations

import random

import pytest

from copilot_lsp.completion.cutting import BlockCutter
from copilot_lsp.completion.mode import Mode, indentation

MULTI = Mode.MULTI_LINE
SINGLE = Mode.SINGLE_LINE


def run(
    stream: str,
    before: str,
    mode: Mode = MULTI,
    next_lines: tuple[str, ...] = (),
    max_lines: int = 16,
    chunks: list[str] | None = None,
) -> tuple[BlockCutter, int]:
    """Feed `stream` (in `chunks` if given); returns the cutter and how many chars were fed."""
    cutter = BlockCutter(mode, before, next_lines, max_lines)
    pieces = chunks if chunks is not None else [stream]
    assert "".join(pieces) == stream
    fed = 0
    for piece in pieces:
        fed += len(piece)
        if cutter.feed(piece):
            break
    cutter.end_of_stream()
    return cutter, fed


def test_indentation_counts_spaces_and_tabs() -> None:
    assert indentation("    x") == 4
    assert indentation("\t\tx") == 2
    assert indentation("x") == 0
    assert indentation("   ") == 3


# --- single line ------------------------------------------------------------------------


def test_single_line_stops_at_first_newline() -> None:
    cutter = BlockCutter(SINGLE, "x = ")
    assert cutter.feed("compute(") is False
    assert not cutter.done
    assert cutter.text == "compute("
    assert cutter.feed("a, b)") is False
    assert cutter.feed(")\nprint(x)\n") is True
    assert cutter.done
    assert cutter.text == "compute(a, b))"
    assert "\n" not in cutter.text


def test_single_line_done_as_soon_as_newline_is_fed() -> None:
    cutter = BlockCutter(SINGLE, "x = ")
    for char in "value  ":
        assert cutter.feed(char) is False
    assert cutter.feed("\n") is True
    assert cutter.done
    assert cutter.text == "value"  # trailing spaces trimmed
    # more text after done is ignored
    assert cutter.feed("more") is True
    assert cutter.text == "value"


def test_single_line_end_of_stream_without_newline() -> None:
    cutter = BlockCutter(SINGLE, "return ")
    cutter.feed("a + b")
    cutter.end_of_stream()
    assert cutter.done
    assert cutter.text == "a + b"


def test_single_line_first_line_complete() -> None:
    cutter = BlockCutter(SINGLE, "x = ")
    cutter.feed("1")
    assert not cutter.first_line_complete
    cutter.feed("\n")
    assert cutter.first_line_complete


# --- Python blocks ----------------------------------------------------------------------

PY_STREAM = "\n    y = x + 1\n\n    return y\n\nprint(f(2))\nprint('more')\n"
PY_EXPECTED = "\n    y = x + 1\n\n    return y"


def test_python_function_body_ends_at_dedent() -> None:
    cutter, _ = run(PY_STREAM, "def f(x):")
    assert cutter.text == PY_EXPECTED


def test_python_feed_returns_true_at_the_dedented_line() -> None:
    cutter = BlockCutter(MULTI, "def f(x):")
    dedent_at = PY_STREAM.index("print")
    for index, char in enumerate(PY_STREAM):
        stop = cutter.feed(char)
        if index < dedent_at:
            assert stop is False, f"stopped early at {index}: {PY_STREAM[: index + 1]!r}"
        else:
            assert stop is True
            break
    assert index == dedent_at
    assert cutter.done
    assert cutter.text == PY_EXPECTED
    # end_of_stream after done changes nothing
    cutter.end_of_stream()
    assert cutter.text == PY_EXPECTED


def test_python_nested_method_ends_at_same_indentation_def() -> None:
    stream = "\n        return self.x\n\n    def other(self):\n        pass\n"
    cutter, _ = run(stream, "    def get(self):")
    assert cutter.text == "\n        return self.x"


def test_python_nested_blocks_inside_body_are_kept() -> None:
    stream = "\n    for i in x:\n        if i:\n            yield i\n    return\nz = 1\n"
    cutter, _ = run(stream, "def f(x):")
    assert cutter.text == "\n    for i in x:\n        if i:\n            yield i\n    return"


# --- brace languages --------------------------------------------------------------------

C_STREAM = "\n    int y = x + 1;\n    return y;\n}\n\nint g(void) {\n"


def test_brace_closer_kept_when_not_below_cursor() -> None:
    cutter, _ = run(C_STREAM, "int f(int x) {", next_lines=("", "int main(void) {"))
    assert cutter.text == "\n    int y = x + 1;\n    return y;\n}"


def test_brace_closer_dropped_when_below_cursor() -> None:
    cutter, _ = run(C_STREAM, "int f(int x) {", next_lines=("}", "", "int main(void) {"))
    assert cutter.text == "\n    int y = x + 1;\n    return y;"


def test_brace_closer_dropped_when_below_cursor_after_blank_lines() -> None:
    cutter, _ = run(C_STREAM, "int f(int x) {", next_lines=("", "   ", "}"))
    assert cutter.text == "\n    int y = x + 1;\n    return y;"


def test_brace_closer_kept_when_different_closer_below() -> None:
    stream = "\n    a();\n});\n"
    cutter, _ = run(stream, "run(function () {", next_lines=("}",))
    assert cutter.text == "\n    a();\n});"


def test_brace_closer_waits_for_its_line_to_complete() -> None:
    cutter = BlockCutter(MULTI, "if (x) {")
    assert cutter.feed("\n    go();\n}") is False
    assert not cutter.done
    assert cutter.feed("\n") is True
    assert cutter.text == "\n    go();\n}"


def test_brace_else_after_closer_is_not_a_closer() -> None:
    cutter, _ = run("\n    a();\n} else {\n    b();\n}\n", "if (x) {")
    assert cutter.text == "\n    a();"


def test_brace_closer_at_end_of_stream_is_kept() -> None:
    cutter, _ = run("\n    a();\n}", "if (x) {")
    assert cutter.text == "\n    a();\n}"


# --- cursor on an empty line ------------------------------------------------------------


def test_indented_empty_line_stops_at_first_line_indented_less() -> None:
    stream = "x = 1\n    if x:\n        y = 2\n    z = 3\n  w\nq = 4\n"
    cutter, _ = run(stream, "    ")
    assert cutter.text == "x = 1\n    if x:\n        y = 2\n    z = 3"


def test_indented_empty_line_in_brace_block_drops_closer() -> None:
    cutter, _ = run("a();\n    b();\n}\n", "    ", next_lines=())
    assert cutter.text == "a();\n    b();"


# --- top level --------------------------------------------------------------------------


def test_top_level_stops_at_blank_line_after_content() -> None:
    cutter, _ = run("import os\nimport sys\n\ndef main():\n    pass\n", "")
    assert cutter.text == "import os\nimport sys"


def test_top_level_stops_as_soon_as_the_blank_line_is_complete() -> None:
    cutter = BlockCutter(MULTI, "")
    assert cutter.feed("import os\n") is False
    assert cutter.feed("\n") is True
    assert cutter.text == "import os"


def test_top_level_leading_blank_lines_do_not_stop() -> None:
    cutter, _ = run("\n\nimport os\nx = 1\n\ny = 2", "")
    assert cutter.text == "\n\nimport os\nx = 1"


def test_top_level_keeps_indented_lines() -> None:
    cutter, _ = run("def f():\n    return 1\n\ndef g():\n", "")
    assert cutter.text == "def f():\n    return 1"


# --- max_lines --------------------------------------------------------------------------


@pytest.mark.parametrize("max_lines", [1, 2, 3, 5])
def test_max_lines_caps_line_count(max_lines: int) -> None:
    stream = "".join(f"\n    a{i} = {i}" for i in range(20))
    cutter, _ = run(stream, "def f():", max_lines=max_lines)
    # the cursor line's remainder is empty here: it is not a line the user sees
    expected = ["", *(f"    a{i} = {i}" for i in range(20))][: max_lines + 1]
    assert cutter.text == "\n".join(expected)
    assert len(cutter.text.split("\n")) == max_lines + 1


def test_max_lines_stops_the_stream_early() -> None:
    cutter = BlockCutter(MULTI, "", max_lines=2)
    assert cutter.feed("a = 1\n") is False
    assert cutter.feed("b = 2\n") is True
    assert cutter.text == "a = 1\nb = 2"


# --- streaming equivalence --------------------------------------------------------------

CASES = [
    (PY_STREAM, "def f(x):", (), MULTI),
    (C_STREAM, "int f(int x) {", (), MULTI),
    (C_STREAM, "int f(int x) {", ("}",), MULTI),
    ("\n    a();\n} else {\n    b();\n}\n", "if (x) {", (), MULTI),
    ("x = 1\n    if x:\n        y = 2\n    z = 3\n  w\nq = 4\n", "    ", (), MULTI),
    ("import os\nimport sys\n\ndef main():\n    pass\n", "", (), MULTI),
    ("\n    a();\n}", "if (x) {", (), MULTI),
    ("compute(a, b)\nnext line\n", "x = ", (), SINGLE),
    ("".join(f"\n    a{i} = {i}" for i in range(20)), "def f():", (), MULTI),
]


@pytest.mark.parametrize(("stream", "before", "below", "mode"), CASES)
def test_char_by_char_equals_whole(
    stream: str, before: str, below: tuple[str, ...], mode: Mode
) -> None:
    whole, _ = run(stream, before, mode, below)
    by_char, _ = run(stream, before, mode, below, chunks=list(stream))
    assert by_char.text == whole.text


@pytest.mark.parametrize(("stream", "before", "below", "mode"), CASES)
def test_every_two_way_split_equals_whole(
    stream: str, before: str, below: tuple[str, ...], mode: Mode
) -> None:
    whole, _ = run(stream, before, mode, below)
    for split in range(len(stream) + 1):
        cutter, _ = run(stream, before, mode, below, chunks=[stream[:split], stream[split:]])
        assert cutter.text == whole.text, f"split at {split}"


@pytest.mark.parametrize(("stream", "before", "below", "mode"), CASES)
def test_random_chunkings_equal_whole(
    stream: str, before: str, below: tuple[str, ...], mode: Mode
) -> None:
    whole, _ = run(stream, before, mode, below, max_lines=6)
    rng = random.Random(1234)
    for _ in range(40):
        cuts = sorted(rng.sample(range(1, len(stream)), k=min(6, len(stream) - 1)))
        chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
        cutter, _ = run(stream, before, mode, below, max_lines=6, chunks=chunks)
        assert cutter.text == whole.text, chunks


def test_char_by_char_stops_at_the_same_char_as_decided() -> None:
    # the brace closer is decided at the newline after it, not before
    stream = "\n    a();\n}\nint g;"
    _, fed = run(stream, "if (x) {", chunks=list(stream))
    assert fed == stream.index("}") + 2


# --- text before done, end of stream ----------------------------------------------------


def test_multi_line_text_before_done_shows_only_complete_lines() -> None:
    cutter = BlockCutter(MULTI, "def f():")
    cutter.feed("\n    x = compute(")
    assert not cutter.done
    assert cutter.text == ""  # only the (empty) rest of the cursor line is complete
    cutter.feed("1)\n    return x")
    assert not cutter.done
    assert cutter.text == "\n    x = compute(1)"
    cutter.feed(" + 1\n")
    assert cutter.text == "\n    x = compute(1)\n    return x + 1"


def test_multi_line_text_before_first_newline_is_the_partial_first_line() -> None:
    # The cursor line's remainder always belongs to the completion.
    cutter = BlockCutter(MULTI, "    ")
    cutter.feed("result = ")
    assert cutter.text == "result ="


def test_end_of_stream_on_unfinished_block_returns_everything_trimmed() -> None:
    cutter = BlockCutter(MULTI, "def f():")
    assert cutter.feed("\n    a = 1   \n\n    return a  \n   \n\n") is False
    assert cutter.text == "\n    a = 1\n\n    return a"
    cutter.end_of_stream()
    assert cutter.done
    assert cutter.text == "\n    a = 1\n\n    return a"


def test_end_of_stream_completes_a_partial_last_line() -> None:
    cutter = BlockCutter(MULTI, "def f():")
    cutter.feed("\n    return 4")
    assert cutter.text == ""
    cutter.end_of_stream()
    assert cutter.text == "\n    return 4"


def test_empty_stream_gives_empty_text() -> None:
    cutter = BlockCutter(MULTI, "def f():")
    cutter.end_of_stream()
    assert cutter.done
    assert cutter.text == ""


HOLE_BELOW = ("    return total",)


def test_hole_simple_statement_ends_at_its_line_break() -> None:
    cutter, fed = run("total = sum(items)\n    return total\n", "    ", SINGLE, HOLE_BELOW)
    assert cutter.text == "total = sum(items)"
    assert fed == len("total = sum(items)\n    return total\n")  # one chunk
    cutter, _ = run("x = 1\nmore", "    ", SINGLE, HOLE_BELOW, chunks=["x = 1\n", "more"])
    assert cutter.text == "x = 1"


def test_hole_statement_that_opens_a_block_brings_its_body() -> None:
    stream = "for item in items:\n        total += item\n    return total\n"
    cutter, _ = run(stream, "    ", SINGLE, HOLE_BELOW, chunks=list(stream))
    assert cutter.text == "for item in items:\n        total += item"
    # Stopped at the dedent, before the rest of the stream arrived.
    partial = BlockCutter(SINGLE, "    ", HOLE_BELOW)
    assert partial.feed("for item in items:\n") is False
    assert partial.text == "for item in items:"
    assert partial.preview == "for item in items:"
    assert partial.feed("        total += item\n") is False
    assert partial.preview == "for item in items:\n        total += item"
    assert partial.feed("    return") is True


def test_hole_brace_statement_keeps_its_closer() -> None:
    below = ("  return x;", "}")
    stream = "if (a) {\n    x = 1;\n  }\n  return x;\n"
    cutter, _ = run(stream, "  ", SINGLE, below, chunks=list(stream))
    assert cutter.text == "if (a) {\n    x = 1;\n  }"


def test_hole_block_opener_with_a_body_below_stays_one_line() -> None:
    cutter, _ = run("if x:\n        y()\n", "    ", SINGLE, ("        y()",))
    assert cutter.text == "if x:"


def test_code_before_the_cursor_keeps_a_single_line() -> None:
    cutter, _ = run("foo(\n        a,\n    )\n", "    x = ", SINGLE, HOLE_BELOW)
    assert cutter.text == "foo("
