"""The live preview of a streaming completion (BlockCutter.preview)."""

from __future__ import annotations

from copilot_lsp.completion.cutting import BlockCutter
from copilot_lsp.completion.mode import Mode


def test_preview_shows_the_unfinished_line_that_text_holds_back() -> None:
    cutter = BlockCutter(Mode.MULTI_LINE, "def f(x):", ())
    cutter.feed("\n    if x")
    assert cutter.text == ""
    assert cutter.preview == "\n    if x"
    cutter.feed(":\n        return 1\n   ")
    assert cutter.preview == "\n    if x:\n        return 1"  # trailing blanks never flash
    cutter.feed(" \ndef g():\n")
    assert cutter.done
    assert cutter.preview == cutter.text == "\n    if x:\n        return 1"


def test_single_line_preview_stops_at_the_line_break() -> None:
    cutter = BlockCutter(Mode.SINGLE_LINE, "x = ", ())
    cutter.feed("compute(")
    assert cutter.preview == "compute("
    cutter.feed("1)\nmore")
    assert cutter.preview == "compute(1)"
