"""Incremental parsing: the tree after edits equals a fresh parse of the edited text."""

from __future__ import annotations

import random

import pytest

from copilot_lsp.context.documents import DocumentStore, Edit
from copilot_lsp.context.languages import grammar, supported_languages
from copilot_lsp.context.syntax import EditLog, Span, SyntaxTree, error_count
from copilot_lsp.positions import position_at

SOURCES = {
    "python": "import os\n\ndef f(x):\n    s = 'é😀'\n    return x + 1\n\nclass A:\n    pass\n",
    "javascript": "import x from 'y';\nfunction f(a) {\n  return a + '漢';\n}\n",
    "typescript": "interface P { x: number }\nfunction f(p: P): number {\n  return p.x;\n}\n",
    "typescriptreact": "const A = () => <div>{'😀'}</div>;\nexport default A;\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("é")\n}\n',
    "rust": 'use std::io;\n\nfn main() {\n    let s = "😀";\n    println!("{}", s);\n}\n',
}


def test_every_language_has_its_grammar() -> None:
    assert set(SOURCES) <= set(supported_languages())
    for language in SOURCES:
        assert grammar(language) is not None, language


def test_unknown_language_has_no_tree() -> None:
    assert grammar("cobol") is None
    assert SyntaxTree.for_language("cobol", "IDENTIFICATION DIVISION.") is None


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_random_edits_keep_the_tree_equal_to_a_fresh_parse(language: str) -> None:
    rng = random.Random(language)
    store = DocumentStore()
    document = store.open("file:///x", language, 1, SOURCES[language])
    assert document.syntax is not None
    pieces = ["x", "\n", "😀", "(", ")", "{", "}", "  ", "漢字", "return 1;", ""]
    for version in range(2, 60):
        text = document.text
        start = rng.randint(0, len(text))
        end = min(len(text), start + rng.randint(0, 6))
        begin, finish = position_at(text, start, "utf-16"), position_at(text, end, "utf-16")
        store.change("file:///x", version, [Edit(rng.choice(pieces), begin, finish)], "utf-16")
        incremental = document.syntax.tree(document.text)
        fresh = document.syntax.parse_other(document.text)
        assert str(incremental.root_node) == str(fresh.root_node)
        assert incremental.root_node.end_byte == len(document.text.encode("utf-8"))


def test_full_replacement_reparses() -> None:
    store = DocumentStore()
    document = store.open("file:///a.py", "python", 1, "x = 1\n")
    store.change("file:///a.py", 2, [Edit("def g(:\n")], "utf-16")
    assert document.syntax is not None
    assert error_count(document.syntax.tree(document.text).root_node) > 0


def test_a_rejected_change_leaves_the_tree_alone() -> None:
    store = DocumentStore()
    document = store.open("file:///a.py", "python", 1, "x = 1\ny = 2\n")
    assert document.syntax is not None
    before = str(document.syntax.tree(document.text).root_node)
    from copilot_lsp.errors import DocumentError
    from copilot_lsp.positions import Position

    with pytest.raises(DocumentError):
        store.change(
            "file:///a.py",
            2,
            [Edit("z", Position(0, 0), Position(0, 1)), Edit("w", Position(1, 3), Position(1, 1))],
            "utf-16",
        )
    assert str(document.syntax.tree(document.text).root_node) == before


def test_lone_surrogates_do_not_crash_parsing() -> None:
    tree = SyntaxTree.for_language("python", "s = '\ud800'\n")
    assert tree is not None
    assert tree.tree("s = '\ud800'\n").root_node.type == "module"


def test_the_edit_log_covers_every_edit_since_a_generation() -> None:
    log = EditLog()
    log.record(100, 100, 101)  # one byte typed at 100
    mark = log.generation
    log.record(50, 60, 50)  # ten bytes deleted before it
    log.record(200, 200, 205)  # five typed after it
    span = log.since(mark)
    assert span == Span(50, 205, -5)  # [50, 210) of the text at `mark`
    assert log.since(log.generation) == Span(0, 0, 0)
    assert log.since(0) == Span(50, 205, -4)


def test_an_edit_inside_the_span_does_not_widen_it() -> None:
    log = EditLog()
    log.record(10, 20, 30)
    log.record(12, 14, 12)
    assert log.since(0) == Span(10, 28, 8)


def test_the_edit_log_forgets_what_it_cannot_cover() -> None:
    log = EditLog()
    log.record(0, 0, 1)
    log.reset()  # the whole text replaced
    assert log.since(0) is None
    assert log.since(log.generation) == Span(0, 0, 0)
    mark = log.generation
    for _ in range(EditLog.KEEP + 1):
        log.record(5, 5, 6)
    assert log.since(mark) is None  # the first edit after it is no longer kept
    assert log.since(mark + 1) == Span(5, 5 + EditLog.KEEP, EditLog.KEEP)
    assert log.since(log.generation + 1) is None


def test_a_reparse_logs_structure_changed_outside_the_edit() -> None:
    text = "x = (1,\n2)\ny = 3\n"
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    mark = syntax.changes.generation
    syntax.edit(text, 4, 4, "b")  # the tuple after it becomes a call's arguments
    text = text[:4] + "b" + text[4:]
    syntax.tree(text)
    assert syntax.changes.since(mark) == Span(4, text.index("\ny"), 1)
