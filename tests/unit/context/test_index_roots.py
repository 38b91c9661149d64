"""Several workspace folders with the same relative paths: each cursor reads its own folder's
files, and another folder's only where its own has none."""

from __future__ import annotations

import time

from copilot_lsp.context.file_summary import summarize
from copilot_lsp.context.repo_index import RepoIndex, root_of
from copilot_lsp.context.retrieval import Cursor, gather
from copilot_lsp.context.syntax import SyntaxTree

FAR = 3600.0


def put(index: RepoIndex, root: str, relative: str, language_id: str, text: str) -> None:
    index.put(f"{root}/{relative}", relative, summarize(relative, language_id, text))


def found(index: RepoIndex, root: str, relative: str, language_id: str, text: str) -> str:
    syntax = SyntaxTree.for_language(language_id, text)
    assert syntax is not None
    cursor = Cursor(
        f"{root}/{relative}", relative, language_id, text, text.count("\n"), syntax.outline(text)
    )
    items, complete = gather(index, cursor, time.perf_counter() + FAR)
    assert complete
    return "\n".join(f"{item.path}: {item.text}" for item in items)


def test_root_of_drops_the_relative_path_whatever_its_encoding() -> None:
    assert root_of("file:///ws/a%20b/pkg/mod.py", "pkg/mod.py") == "file:///ws/a%20b"
    assert root_of("file:///c%3A/ws/x.py", "x.py") == "file:///c%3A/ws"


def test_a_python_module_comes_from_the_cursors_folder() -> None:
    index = RepoIndex()
    put(index, "file:///one", "pkg/mod.py", "python", "def from_one(a: int) -> int:\n    ...\n")
    put(index, "file:///two", "pkg/mod.py", "python", "def from_two(b: str) -> str:\n    ...\n")
    text = "import pkg.mod as m\n\nm.from_"
    assert "from_two" in found(index, "file:///two", "app.py", "python", text)
    assert "from_one" not in found(index, "file:///two", "app.py", "python", text)
    assert "from_one" in found(index, "file:///one", "app.py", "python", text)
    index.remove("file:///one/pkg/mod.py")  # the other folder's module stays found
    assert "from_two" in found(index, "file:///one", "app.py", "python", text)
    index.remove("file:///two/pkg/mod.py")
    assert index.module("pkg.mod") is None


def test_a_go_package_is_one_folders_files() -> None:
    index = RepoIndex()
    for root, name in (("file:///one", "One"), ("file:///two", "Two")):
        put(index, root, "go.mod", "go", "module example.com/m\n")
        put(
            index,
            root,
            "util/util.go",
            "go",
            f"package util\n\nfunc From{name}() int {{ return 1 }}\n",
        )
    folders = {file.root for file in index.folder("util", "file:///two")}
    assert folders == {"file:///two"}
    assert [f.root for f in index.folder("util")] == ["file:///one"]  # no root: one folder only
    assert index.exact("util/util", "file:///two").root == "file:///two"  # type: ignore[union-attr]
