"""Snippets from the syntax tree: imports, enclosing headers, definitions, names."""

from __future__ import annotations

import random
import sysconfig
import time
from pathlib import Path

import pytest
from tree_sitter import Node

from copilot_lsp.context import definition_cache, snippets
from copilot_lsp.context.definition_cache import DefinitionCache, definitions_incremental
from copilot_lsp.context.outline import Block
from copilot_lsp.context.syntax import SyntaxTree

FAR = time.perf_counter() + 3600

PY = '''import os
from typing import Any


class Store:
    """Keeps items."""

    def add(self, item: Any,
            count: int = 1) -> None:
        total = count
        return None


def helper(a, b):
    return a + b
'''

RS = """use std::collections::HashMap;

struct Point { x: i32, y: i32 }

impl Point {
    fn norm(&self) -> i32 {
        self.x * self.x
    }
}
"""

GO = (
    'package main\n\nimport "fmt"\n\ntype Pair struct{ A int }\n\n'
    "func (p Pair) Sum() int {\n\treturn p.A\n}\n"
)

TS = (
    "import { a } from './a';\n\ninterface Shape { area(): number }\n\n"
    "class Sq implements Shape {\n  area(): number {\n    return 1;\n  }\n}\n"
)


def tree(language: str, text: str):  # type: ignore[no-untyped-def]
    syntax = SyntaxTree.for_language(language, text)
    assert syntax is not None
    return syntax.tree(text)


def test_python_imports_and_headers() -> None:
    parsed = tree("python", PY)
    assert snippets.imports(parsed, "python", FAR) == ["import os", "from typing import Any"]
    cursor = PY.index("total = count").__index__()
    cursor_byte = len(PY[:cursor].encode())
    headers = snippets.enclosing_headers(parsed, "python", cursor_byte, FAR)
    assert [line for line, _ in headers] == [4, 7]
    assert headers[0][1] == "class Store:"
    # Headers keep their indentation: they are pasted above the window as real code.
    assert headers[1][1] == "    def add(self, item: Any,\n            count: int = 1) -> None:"


def test_definitions_index_by_name() -> None:
    index = snippets.definitions(tree("python", PY), "python", FAR)
    assert set(index) == {"Store", "add", "helper"}
    assert index["helper"][0].header == "def helper(a, b):"
    assert index["helper"][0].start_line == 13


def test_rust_go_typescript_definitions() -> None:
    rust = snippets.definitions(tree("rust", RS), "rust", FAR)
    assert {"Point", "norm"} <= set(rust)
    assert rust["norm"][0].header == "fn norm(&self) -> i32"
    assert snippets.imports(tree("rust", RS), "rust", FAR) == ["use std::collections::HashMap;"]
    go = snippets.definitions(tree("go", GO), "go", FAR)
    assert {"Pair", "Sum"} <= set(go)
    ts = snippets.definitions(tree("typescript", TS), "typescript", FAR)
    assert {"Shape", "Sq", "area"} <= set(ts)


def test_an_expired_deadline_yields_nothing_rather_than_waiting() -> None:
    past = time.perf_counter() - 1
    assert snippets.definitions(tree("python", PY), "python", past) == {}
    assert snippets.imports(tree("python", PY), "python", past) == []


def test_names_near_skip_keywords_and_short_words_nearest_first() -> None:
    names = snippets.names_near("for item in items:\n    total = helper(item, x)\n")
    assert names[:3] == ["item", "helper", "total"]
    assert "for" not in names and "x" not in names
    assert names.count("item") == 1


def test_lookup_takes_the_first_index_holding_a_name() -> None:
    first = {"helper": [snippets.Definition("helper", "def helper(a):", 0)]}
    second = {"helper": [snippets.Definition("helper", "def helper(b):", 0)]}
    found = list(snippets.lookup(["helper", "missing"], [("a.py", first), ("b.py", second)]))
    assert [(path, d.header) for path, d in found] == [("a.py", "def helper(a):")]


@pytest.mark.parametrize("with_log", [False, True], ids=["searching every subtree", "around edits"])
def test_incremental_definitions_match_a_fresh_search_after_every_edit(
    with_log: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real, large file (argparse has classes far over CHUNK_BYTES) edited the way users
    # edit: characters typed into names, lines inserted and deleted, a new function added,
    # brackets and strings left open for a while, several edits between two calls. After
    # each call the incremental index must equal a search of a fresh parse, line numbers
    # included.
    text = (Path(sysconfig.get_paths()["stdlib"]) / "argparse.py").read_text(encoding="utf-8")
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    cache = DefinitionCache()
    rng = random.Random(3)
    edits = ["x", "\n", "(", "", "\ndef added_here(a):\n    return a\n", "    ", "class", '"""']
    reused = 0
    complete_passes = 0
    original = definition_cache._complete

    def counting(search: definition_cache._Search, root: Node) -> None:
        nonlocal complete_passes
        complete_passes += 1
        original(search, root)

    monkeypatch.setattr(definition_cache, "_complete", counting)
    for _ in range(120):
        for _ in range(rng.choice([1, 1, 1, 2, 5])):
            start = rng.randrange(len(text))
            end = min(len(text), start + rng.choice([0, 0, 1, 5, 200]))
            new = rng.choice(edits)
            syntax.edit(text, start, end, new)
            text = text[:start] + new + text[end:]
        chunks_before = dict(cache.chunks)
        incremental = definitions_incremental(
            syntax.tree(text), "python", FAR, cache, syntax.changes if with_log else None
        )
        reused += sum(1 for key in cache.chunks if key in chunks_before)
        fresh = snippets.definitions(syntax.parse_other(text), "python", FAR)
        assert dict(incremental) == fresh
    assert reused > 1000, "unchanged subtrees are reused, not searched again"
    # Around edits, a complete pass is the exception (the tree changed shape: a string
    # opened, a class split): most calls visit the edited subtrees only.
    assert complete_passes < 10 if with_log else complete_passes == 120, complete_passes


def test_a_keystroke_searches_the_subtree_it_is_in_only() -> None:
    lines = [f"def function_{i}(a):\n    return a + {i}\n\n" for i in range(400)]
    text = "".join(lines)
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    cache = DefinitionCache()
    definitions_incremental(syntax.tree(text), "python", FAR, cache, syntax.changes)
    at = text.index("return a + 200")
    syntax.edit(text, at, at, "\n    ")
    text = text[:at] + "\n    " + text[at:]
    searched: list[int] = []
    original = definition_cache._Search.top

    def counting(self: definition_cache._Search, node: Node, block: Block) -> definition_cache._Top:
        searched.append(node.start_point[0] + block.row)
        return original(self, node, block)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(definition_cache._Search, "top", counting)
        found = definitions_incremental(syntax.tree(text), "python", FAR, cache, syntax.changes)
    assert searched == [600]  # function_200's row; the 399 others were not visited
    assert found["function_201"][0].start_line == 604  # moved down by the new line
    assert found["function_199"][0].start_line == 597
    syntax.edit(text, 0, 0, "#\n")
    text = "#\n" + text
    definitions_incremental(syntax.tree(text), "python", FAR, cache, syntax.changes)
    with pytest.raises(RuntimeError, match="out of date"):
        found["function_1"]  # a view of the version before: its rows are wrong now


def test_incremental_definitions_under_an_expired_deadline_keep_the_cache() -> None:
    cache = DefinitionCache()
    parsed = tree("python", PY)
    assert definitions_incremental(parsed, "python", time.perf_counter() - 1, cache) == {}
    assert not cache.chunks
    assert set(definitions_incremental(parsed, "python", FAR, cache)) == {
        "Store",
        "add",
        "helper",
    }


def test_the_skeletons_imports_survive_an_open_bracket_at_the_cursor() -> None:
    from copilot_lsp.context.syntax import SyntaxTree
    from tests.unit.context.test_retrieval import BROKEN

    syntax = SyntaxTree.for_language("python", BROKEN)
    assert syntax is not None
    found = snippets.imports(syntax.outline(BROKEN), "python", time.perf_counter() + 1)
    assert found == ["from pkg.x import format_report", "import pkg.mod as m"]
