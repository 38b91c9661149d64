"""Fitting completions to the file: indentation style, line endings, syntax trimming."""

from __future__ import annotations

import pytest

from copilot_lsp.completion.postprocess import (
    FileStyle,
    apply_line_endings,
    detect_style,
    normalize_indentation,
)
from copilot_lsp.context.languages import grammar
from copilot_lsp.context.validate import trim_to_valid_syntax

NO_DEADLINE = 600_000.0


@pytest.mark.parametrize(
    ("text", "style"),
    [
        ("def f():\n    if x:\n        y\n", FileStyle("    ", "\n")),
        ("function f() {\n  if (x) {\n    y();\n  }\n}\n", FileStyle("  ", "\n")),
        ("func f() {\n\tif x {\n\t\ty()\n\t}\n}\n", FileStyle("\t", "\n")),
        ("def f():\r\n    return 1\r\n", FileStyle("    ", "\r\n")),
        ("x = 1\n", FileStyle(None, "\n")),
    ],
)
def test_detect_style(text: str, style: FileStyle) -> None:
    assert detect_style(text) == style


def test_four_space_completion_in_a_two_space_file() -> None:
    completion = "if (x) {\n      y();\n      if (z) {\n          w();\n      }\n  }"
    fitted = normalize_indentation(completion, FileStyle("  "), base_indent="  ")
    assert fitted == "if (x) {\n    y();\n    if (z) {\n      w();\n    }\n  }"


def test_spaces_become_tabs_in_a_tab_file() -> None:
    completion = "if x {\n\t    y()\n\t}"
    fitted = normalize_indentation(completion, FileStyle("\t"), base_indent="\t")
    assert fitted == "if x {\n\t\ty()\n\t}"


def test_matching_style_is_left_alone() -> None:
    completion = "if x:\n        return 1\n    return 2"
    assert normalize_indentation(completion, FileStyle("    "), base_indent="    ") == completion


def test_line_endings_follow_the_file() -> None:
    assert apply_line_endings("a\nb", FileStyle(eol="\r\n")) == "a\r\nb"
    assert apply_line_endings("a\r\nb", FileStyle(eol="\n")) == "a\nb"


def test_syntax_trim_drops_broken_trailing_lines() -> None:
    language = grammar("python")
    assert language is not None
    before = "def f(x):\n    "
    completion = "if x:\n        return 1\n    return 2\n  oops = ("
    after = "\n\n\nprint(f(1))\n"
    # A deadline no host misses: the trimming is under test here, not the time budget.
    assert trim_to_valid_syntax(language, before, completion, after, deadline_ms=NO_DEADLINE) == (
        "if x:\n        return 1\n    return 2"
    )


def test_syntax_trim_keeps_valid_completions_whole() -> None:
    language = grammar("rust")
    assert language is not None
    before = "fn f(x: i32) -> i32 {\n    "
    completion = "let y = x + 1;\n    y * 2"
    assert (
        trim_to_valid_syntax(language, before, completion, "\n}\n", deadline_ms=NO_DEADLINE)
        == completion
    )


def test_syntax_trim_keeps_everything_when_the_file_was_broken_anyway() -> None:
    language = grammar("python")
    assert language is not None
    completion = "a = 1\n    b = 2"
    # Dropping "b = 2" leaves the file just as broken (the error is before the cursor).
    before = "def f(:\n    "
    assert trim_to_valid_syntax(language, before, completion, "\n", deadline_ms=NO_DEADLINE) == (
        completion
    )
