"""Unit tests for copilot_lsp.completion.mode: skip, single-line or multi-line."""

from __future__ import annotations

import pytest

from copilot_lsp.completion.mode import (
    Mode,
    choose_mode,
    only_closers,
    opens_block,
    statement_below,
)
from copilot_lsp.completion.window import cursor_context


def auto(before: str, after: str = "", multiline: bool = True) -> Mode:
    return choose_mode(before, after, automatic=True, multiline=multiline)


def invoked(before: str, after: str = "", multiline: bool = True) -> Mode:
    return choose_mode(before, after, automatic=False, multiline=multiline)


@pytest.mark.parametrize(("before", "after"), [("pri", "nt(x)"), ("x = fo", "o"), ("a", "_b")])
def test_mid_word_automatic_skips(before: str, after: str) -> None:
    assert auto(before, after) is Mode.SKIP


@pytest.mark.parametrize(("before", "after"), [("pri", "nt(x)"), ("x = fo", "o"), ("a", "_b")])
def test_mid_word_invoked_does_not_skip(before: str, after: str) -> None:
    assert invoked(before, after) is not Mode.SKIP
    assert invoked(before, after) is Mode.SINGLE_LINE


def test_mid_word_skip_wins_even_without_multiline() -> None:
    assert auto("pri", "nt", multiline=False) is Mode.SKIP


def test_text_after_cursor_not_a_word_does_not_skip() -> None:
    assert auto("x = ", " + 1") is Mode.SINGLE_LINE
    assert auto("f(", ")") is Mode.MULTI_LINE


@pytest.mark.parametrize("before", ["", "    ", "\t\t", "        "])
def test_empty_line_in_block_is_multi_line(before: str) -> None:
    assert auto(before, "") is Mode.MULTI_LINE


@pytest.mark.parametrize(
    "before",
    [
        "def f():",
        "    if x:",
        "int main() {",
        "function f() {  ",
        "const g = () =>",
        "fn h() ->",
        "items.each do",
        "if [ -f x ]; then",
        "call(",
        "xs = [",
    ],
)
def test_after_block_opener_is_multi_line(before: str) -> None:
    assert auto(before) is Mode.MULTI_LINE


@pytest.mark.parametrize("before", ["x = ", "return ", "import os", "    print(x)", "a = b;"])
def test_after_statement_start_is_single_line(before: str) -> None:
    assert auto(before) is Mode.SINGLE_LINE


@pytest.mark.parametrize(
    ("before", "after"),
    [("call(", ")"), ("if (x) {", "}"), ("xs = [", "];"), ("f({", "})"), ("const a = {", "};")],
)
def test_only_closers_right_of_cursor_still_allow_multi_line(before: str, after: str) -> None:
    assert auto(before, after) is Mode.MULTI_LINE


def test_code_right_of_cursor_forces_single_line() -> None:
    assert invoked("def f():", " pass") is Mode.SINGLE_LINE
    assert invoked("    ", "x = 1") is Mode.SINGLE_LINE
    assert invoked("call(", "a)") is Mode.SINGLE_LINE


@pytest.mark.parametrize("before", ["def f():", "", "    ", "if (x) {"])
def test_multiline_false_is_single_line(before: str) -> None:
    assert auto(before, multiline=False) is Mode.SINGLE_LINE
    assert invoked(before, multiline=False) is Mode.SINGLE_LINE


def test_opens_block_and_only_closers_helpers() -> None:
    assert opens_block("def f():   ")
    assert not opens_block("   ")
    assert not opens_block("x = 1")
    assert only_closers(" ) ] } ; , ")
    assert only_closers("")
    assert not only_closers(") x")


def at_cursor(source: str, *, automatic: bool = True) -> Mode:
    """The mode for a whole source with the cursor at `‸`, as the pipeline decides it."""
    text = source.replace("‸", "")
    context = cursor_context(text, source.index("‸"), prefix_lines=40, suffix_lines=10)
    return choose_mode(
        context.line_before_cursor,
        context.line_after_cursor,
        automatic=automatic,
        multiline=True,
        next_lines=context.next_lines,
    )


HOLES = {
    "python blank line between statements": "def f(a):\n    x = a\n    ‸\n    return x\n",
    "python first line of a body": "def f(a):\n    ‸\n    return a\n",
    "python blank line at top level before code": "import os\n‸\nprint(os.sep)\n",
    "python cursor at column 0 above indented code": "def f(a):\n‸\n    return a\n",
    "python code below is deeper (an if's body)": "def f(a):\n    ‸\n        y = 1\n",
    "javascript between statements": "function f(a) {\n  const x = a;\n  ‸\n  return x;\n}\n",
    "go between statements": "func f(a int) int {\n\tx := a\n\t‸\n\treturn x\n}\n",
    "rust between statements": "fn f(a: i32) -> i32 {\n    let x = a;\n    ‸\n    x\n}\n",
    "rust before a nested call": "fn main() {\n    ‸\n    run(|x| {\n        x\n    });\n}\n",
}

BLOCKS = {
    "python end of a function body": "def f(a):\n    x = a\n    ‸\n\ndef g():\n    pass\n",
    "python empty body, next code less indented": "def f(a):\n    ‸\nprint(1)\n",
    "python end of file": "def f(a):\n    x = a\n    ‸",
    "python end of file with a trailing newline": "def f(a):\n    ‸\n",
    "python blank line, then a blank line (a paragraph)": "x = 1\n    ‸\n\n    y = 2\n",
    "python after an opener with code below at its level": "def f(a):‸\nprint(1)\n",
    "python after an opener with its body below": "def f(a):‸\n    return a\n",
    "python top level with a blank line below": "import os\n‸\n\ndef main():\n    pass\n",
    "javascript empty block": "function f(a) {\n  ‸\n}\n",
    "javascript end of block": "function f(a) {\n  const x = a;\n  ‸\n}\n",
    "javascript after an opener": "function f(a) {‸\n}\n",
    "go empty block, cursor at column 0": "func f() {\n‸\n}\n",
    "go end of block": "func f(a int) int {\n\tx := a\n\t‸\n}\n",
    "rust end of block before a closer at the cursor's level": "fn f() {\n    ‸\n    }\n",
    "rust after an opener": "impl S {\n    fn f(&self) -> i32 {‸\n    }\n}\n",
}


@pytest.mark.parametrize("source", list(HOLES.values()), ids=list(HOLES))
def test_hole_between_statements_is_single_line(source: str) -> None:
    assert at_cursor(source) is Mode.SINGLE_LINE
    assert at_cursor(source, automatic=False) is Mode.SINGLE_LINE


@pytest.mark.parametrize("source", list(BLOCKS.values()), ids=list(BLOCKS))
def test_opened_empty_or_ending_block_is_multi_line(source: str) -> None:
    assert at_cursor(source) is Mode.MULTI_LINE


def test_end_of_a_statement_line_stays_single_line_whatever_is_below() -> None:
    assert at_cursor("def f(a):\n    x = a‸\n") is Mode.SINGLE_LINE
    assert at_cursor("def f(a):\n    x = a‸\n    return x\n") is Mode.SINGLE_LINE


def test_statement_below_needs_code_right_below() -> None:
    assert statement_below("    ", ["    return x"])
    assert statement_below("", ["x = 1"])
    assert statement_below("  ", ["    deeper()"])
    assert not statement_below("    ", [])
    assert not statement_below("    ", ["", "    return x"])
    assert not statement_below("    ", ["  less()"])
    assert not statement_below("    ", ["    });"])


def test_without_the_lines_below_a_blank_line_offers_a_block() -> None:
    assert auto("    ", "", multiline=True) is Mode.MULTI_LINE
    assert choose_mode("    ", "", automatic=True, multiline=False, next_lines=[]) is (
        Mode.SINGLE_LINE
    )
