"""Trailing whitespace is held back from the prompt and the output is re-aligned to the cursor."""

from __future__ import annotations

import pytest

from copilot_lsp.completion.alignment import WhitespaceAligner, split_trailing_whitespace


def aligned(held: str, output: str, step: int) -> tuple[str, bool]:
    aligner = WhitespaceAligner(held)
    text = "".join(aligner.feed(output[i : i + step]) for i in range(0, len(output), step))
    return text + aligner.flush(), aligner.misaligned


def test_split_trailing_whitespace() -> None:
    assert split_trailing_whitespace('x = 1\n    """Doc."""\n    ') == (
        'x = 1\n    """Doc."""',
        "\n    ",
    )
    assert split_trailing_whitespace("y = ") == ("y =", " ")
    assert split_trailing_whitespace("z") == ("z", "")


@pytest.mark.parametrize("step", [1, 2, 3, 100])
@pytest.mark.parametrize(
    ("held", "output", "expected"),
    [
        # The model re-types the newline and the cursor's indentation: both are dropped.
        ("\n    ", "\n    if n < 0:\n        raise", "if n < 0:\n        raise"),
        # A blank line the user left is not required from the model.
        ("\n\n    ", "\n    return 1", "return 1"),
        # Deeper indentation than the cursor's keeps the difference.
        ("\n    ", "\n        deeper", "    deeper"),
        # Code placed below a blank line keeps its layout relative to the cursor.
        ("\n    ", "\n\n    x = 1", "\n    x = 1"),
        # A dedent stays visible, so the block cutter can reject it.
        ("\n    ", "\ndef other():", "\ndef other():"),
        # A held-back space is dropped whether or not the model repeats it.
        (" ", " foo(1)", "foo(1)"),
        (" ", "foo(1)", "foo(1)"),
        ("", "\nfoo", "\nfoo"),
        ("\r\n    ", "\r\n    crlf", "crlf"),
    ],
)
def test_output_is_positioned_at_the_cursor(
    held: str, output: str, expected: str, step: int
) -> None:
    assert aligned(held, output, step) == (expected, False)


def test_text_continuing_the_prompt_line_is_dropped() -> None:
    text, misaligned = aligned("\n    ", " # comment on the docstring line\n    x = 1", 1)
    assert (text, misaligned) == ("", True)


def test_whitespace_only_output_gives_nothing() -> None:
    assert aligned("\n    ", "\n\n   \n", 1) == ("", False)
