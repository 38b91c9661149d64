"""Unit tests for copilot_lsp.completion.mode: skip, single-line or multi-line."""

from __future__ import annotations

import pytest

from copilot_lsp.completion.mode import Mode, choose_mode, only_closers, opens_block


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
