"""Snippets from the syntax tree: imports, enclosing headers, definitions, names."""

from __future__ import annotations

import time

from copilot_lsp.context import snippets
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


def test_incremental_definitions_match_a_fresh_search_after_every_edit() -> None:
    # A real, large file (argparse has classes far over CHUNK_BYTES) edited the way users
    # edit: characters typed into names, lines inserted and deleted, a new function added,
    # brackets left open for a while. After each edit the incremental index must equal a
    # search of a fresh parse, line numbers included.
    import random
    import sysconfig
    from pathlib import Path

    text = (Path(sysconfig.get_paths()["stdlib"]) / "argparse.py").read_text(encoding="utf-8")
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    cache = snippets.DefinitionCache()
    rng = random.Random(3)
    edits = ["x", "\n", "(", "", "\ndef added_here(a):\n    return a\n", "    ", "class"]
    reused = 0
    for _ in range(80):
        start = rng.randrange(len(text))
        end = start + rng.choice([0, 0, 1, 5, 200])
        new = rng.choice(edits)
        syntax.edit(text, start, min(end, len(text)), new)
        text = text[:start] + new + text[min(end, len(text)) :]
        chunks_before = dict(cache.chunks)
        incremental = snippets.definitions_incremental(syntax.tree(text), "python", FAR, cache)
        reused += sum(1 for key in cache.chunks if key in chunks_before)
        fresh = snippets.definitions(syntax.parse_other(text), "python", FAR)
        assert incremental == fresh
    assert reused > 1000, "unchanged subtrees are reused, not searched again"


def test_incremental_definitions_under_an_expired_deadline_keep_the_cache() -> None:
    cache = snippets.DefinitionCache()
    parsed = tree("python", PY)
    assert snippets.definitions_incremental(parsed, "python", time.perf_counter() - 1, cache) == {}
    assert not cache.chunks
    assert set(snippets.definitions_incremental(parsed, "python", FAR, cache)) == {
        "Store",
        "add",
        "helper",
    }
