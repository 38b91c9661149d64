"""`bench overhead`'s edits (bench/overhead/edits.py): each class sends the edits it claims, and
the text after each one, placed by the server's own document store, is the text the plan
built the next edit on."""

from __future__ import annotations

import ast
import itertools
import random

import pytest

from copilot_lsp.bench.overhead import edits
from copilot_lsp.bench.overhead.edits import (
    BLOCK,
    CHAR_ANCHOR,
    CLASSES,
    EXTRA_CLASSES,
    LARGE,
    TYPED,
    Shadow,
    Step,
    content_change,
    large_file,
    plan,
)
from copilot_lsp.context.documents import DocumentStore, Edit
from copilot_lsp.positions import Position

ORIGINAL = large_file()
URI = "file:///work/large.py"


def texts(steps: list[Step]) -> list[str]:
    """The text before the first step, then after each (the plan's own view)."""
    shadow = Shadow(ORIGINAL)
    out = [shadow.text]
    for step in steps:
        shadow.apply(step)
        out.append(shadow.text)
    return out


def generated(kind: str, count: int, seed: int = 1) -> tuple[list[Step], list[str]]:
    """The first `count` steps the class makes, whole rounds (`plan` stops at its count), and
    the texts before and after each."""
    shadow = Shadow(ORIGINAL)
    made, out = [], [shadow.text]
    for step in itertools.islice(edits.steps(kind, shadow, random.Random(seed)), count):
        shadow.apply(step)
        made.append(step)
        out.append(shadow.text)
    return made, out


def lines_of(text: str) -> list[str]:
    return text.split("\n")


@pytest.mark.parametrize("kind", CLASSES + EXTRA_CLASSES)
def test_the_server_holds_the_text_each_edit_was_planned_on(kind: str) -> None:
    planned = plan(kind, 6, 2, seed=3)
    store = DocumentStore()
    # plaintext: the text alone, no tree (tests/unit/context/test_edit_classes.py covers the
    # tree and the prompt after the same classes of edit).
    store.open(URI, "plaintext", 1, ORIGINAL)
    before = ORIGINAL
    for version, (step, after) in enumerate(zip(planned, texts(planned)[1:], strict=True), 2):
        old = lines_of(before)
        if step.start is not None and step.end is not None:
            # In range: the store would clamp a column past a line's end and hide the mistake.
            (l0, c0), (l1, c1) = step.start, step.end
            assert (l0, c0) <= (l1, c1) and l1 < len(old)
            assert c0 <= len(old[l0]) and c1 <= len(old[l1])
            edit = Edit(step.text, Position(l0, c0), Position(l1, c1))
        else:
            edit = Edit(step.text)
        held = store.change(URI, version, [edit], "utf-16").text
        assert held == after
        new = lines_of(after)
        line, column = step.cursor
        assert line < len(new) and column <= len(new[line])
        before = after


def test_the_steps_are_seeded_and_count_measured_rounds_after_the_warm_up() -> None:
    steps = plan("enter", 5, 3, seed=1)
    assert [step.measured for step in steps] == [False] * 3 + [True] * 5
    assert plan("enter", 5, 3, seed=1) == steps
    assert plan("enter", 5, 3, seed=2) != steps
    typing = plan("typing", 30, 4, seed=1)
    assert sum(step.measured for step in typing) == 30
    with pytest.raises(ValueError, match="unknown class"):
        plan("rename", 1, 0, seed=1)


def test_char_types_one_character_into_a_comment_on_one_line() -> None:
    steps = plan("char", 5, 0, seed=1)
    line = lines_of(ORIGINAL).index(CHAR_ANCHOR) + 1
    assert not steps[0].measured and steps[0].text == "# "
    after = texts(steps)
    assert lines_of(after[-1])[line] == "    # xxxxx"
    for step, text in zip(steps[1:], after[2:], strict=True):
        assert step.text == "x" and step.cursor[0] == line
        assert lines_of(text)[line][: step.cursor[1]].endswith("x")
        assert len(lines_of(text)) == len(lines_of(ORIGINAL))


def test_enter_adds_a_line_with_the_indentation_and_asks_on_it() -> None:
    steps = plan("enter", 6, 0, seed=1)
    after = texts(steps)
    for step, before, text in zip(steps, after[:-1], after[1:], strict=True):
        old, new = lines_of(before), lines_of(text)
        assert len(new) == len(old) + 1
        line, column = step.cursor
        assert new[line].strip() == "" and len(new[line]) == column  # only its indentation
        assert new[:line] == old[:line] and new[line + 1 :] == old[line:]
        assert column >= len(old[line - 1]) - len(old[line - 1].lstrip())


def test_delete_line_removes_one_line_and_asks_at_the_end_of_the_one_above() -> None:
    steps = plan("delete_line", 6, 0, seed=1)
    after = texts(steps)
    for step, before, text in zip(steps, after[:-1], after[1:], strict=True):
        old, new = lines_of(before), lines_of(text)
        assert step.start is not None
        gone = step.start[0]
        assert new == old[:gone] + old[gone + 1 :]
        assert step.cursor == (gone - 1, len(new[gone - 1]))


def test_paste_inserts_20_odd_lines_of_whole_definitions_then_takes_them_out() -> None:
    steps, after = generated("paste", 8)
    measured = [i for i, step in enumerate(steps) if step.measured]
    assert measured == [0, 2, 4, 6]
    for i in measured:
        step, old, new = steps[i], lines_of(after[i]), lines_of(after[i + 1])
        pasted = len(new) - len(old)
        assert BLOCK <= pasted <= BLOCK + 20
        assert step.start is not None
        at = step.start[0]
        block = new[at : at + pasted]
        assert step.text == "\n".join(block) + "\n"
        assert block[0] and not block[0][0].isspace()  # a definition's first line
        assert "\n".join(block) in ORIGINAL  # lines that were in the file
        assert new[:at] == old[:at] and new[at + pasted :] == old[at:]
        assert not steps[i + 1].measured and after[i + 2] == after[i]  # taken out again


@pytest.mark.parametrize("kind", ["undo_range", "undo_full"])
def test_undo_puts_back_the_text_a_large_cut_took_out(kind: str) -> None:
    steps = plan(kind, 6, 0, seed=1)
    after = texts(steps)
    assert all(step.measured for step in steps)
    for i in range(0, len(steps), 2):
        cut, undo = steps[i], steps[i + 1]
        assert len(lines_of(after[i])) - len(lines_of(after[i + 1])) >= LARGE
        assert after[i + 2] == after[i]  # the undo restores the text
        whole = kind == "undo_full"
        assert (cut.start is None) is whole and (undo.start is None) is whole
        if whole:
            assert undo.text == after[i]


@pytest.mark.parametrize(("kind", "rounds"), [("typing", 24), ("typing_unpaired", 25)])
def test_typing_writes_a_statement_on_a_new_line_then_takes_it_out(kind: str, rounds: int) -> None:
    steps, after = generated(kind, rounds + 2)
    # Opening the line, the statement a character a round, taking the line out again.
    assert [step.measured for step in steps] == [False] + [True] * rounds + [False]
    assert after[-1] == ORIGINAL
    opened = lines_of(after[1])
    line = steps[0].cursor[0]
    above = opened[line - 1]
    assert above.strip() and not above.startswith("@")  # nothing between decorator and def
    typed = lines_of(after[-2])[line]
    assert typed.strip() == TYPED and len(typed) - len(TYPED) == steps[0].cursor[1]
    invalid = []
    for step, text in zip(steps[1:-1], after[2:-1], strict=True):
        current = lines_of(text)[line]
        typed_end = len(current.rstrip(")")) if kind == "typing" else len(current)
        assert step.cursor == (line, typed_end)  # just after what was typed
        try:
            ast.parse(current.strip())
        except SyntaxError:
            invalid.append(current.strip())
    if kind == "typing":
        assert invalid == ["value =", "value ="]  # `value =`, then `value = `
    else:
        assert len(invalid) == 11  # `(` open until `)`, and the two before


@pytest.mark.parametrize("kind", ["char", "enter", "delete_line", "paste", "undo_range"])
def test_the_file_stays_valid_python_after_each_measured_edit(kind: str) -> None:
    steps = plan(kind, 2, 0, seed=5)
    parsed = [
        ast.parse(text) for step, text in zip(steps, texts(steps)[1:], strict=True) if step.measured
    ]
    assert len(parsed) == 2 and all(tree.body for tree in parsed)  # raises if one is not Python


def test_a_step_is_sent_as_a_range_or_as_the_whole_text() -> None:
    assert content_change(Step("ab", (1, 2), (3, 4), (1, 4))) == {
        "range": {"start": {"line": 1, "character": 2}, "end": {"line": 3, "character": 4}},
        "text": "ab",
    }
    assert content_change(Step("whole", None, None, (0, 0))) == {"text": "whole"}
