"""A small multi-module Python package on disk, shared by the workspace index tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

from copilot_lsp.context.file_summary import summarize
from copilot_lsp.context.repo_index import RepoIndex

SECRET = "HUNTER2_SECRET_VALUE"

FILES = {
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/mod.py": (
        "RATE = 0.2\n\n\n"
        "def compute_total(items: list[int], tax: float = RATE) -> float:\n"
        "    return sum(items) * (1 + tax)\n\n\n"
        "def _private_helper() -> None:\n    pass\n\n\n"
        "class Ledger:\n"
        "    def __init__(self, owner: str) -> None:\n        self.owner = owner\n\n"
        "    def add_entry(self, amount: int) -> None:\n"
        "        def local_only() -> None:\n            pass\n"
    ),
    "pkg/x.py": "def format_report(total: float, currency: str) -> str:\n    return ''\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": (
        "from ..mod import compute_total\nfrom . import sibling\n\n\n"
        "def deep_value() -> int:\n    return 1\n"
    ),
    "pkg/sub/sibling.py": "def sibling_function(flag: bool) -> str:\n    return ''\n",
}


def write_package(root: Path, files: dict[str, str] | None = None) -> Path:
    for relative, text in (files or FILES).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def indexed(files: dict[str, str] | None = None) -> RepoIndex:
    """The index of `files` (the package by default) as if under file:///ws."""
    index = RepoIndex()
    for relative, text in (files or FILES).items():
        index.put(f"file:///ws/{relative}", relative, summarize(relative, "python", text))
    return index


def index_workspace(root: Path) -> RepoIndex:
    """The index of the files under `root` as the indexer builds it: discovery's rules, then
    `summarize_batch` (what the indexing process runs) per file."""
    from copilot_lsp.context.file_summary import Item, summarize_batch
    from copilot_lsp.context.workspace_files import Limits, discover, language_of

    limits = Limits()
    found = discover(root, limits)
    items: list[Item] = [(str(root), rel, language_of(rel) or "", None, False) for rel in found]
    index = RepoIndex()
    for relative, summary in zip(found, summarize_batch(items, limits), strict=True):
        if summary is not None:
            index.put((root / relative).as_uri(), relative, summary)
    return index


def retrieve(
    root: Path, relative: str, text: str, index: RepoIndex | None = None
) -> list[tuple[str, str, str]]:
    """(kind, path, text) of what retrieval brings for a cursor at the end of `text`, the
    content of `relative` under the workspace folder `root` (indexed from disk)."""
    import time

    from copilot_lsp.context.project_files import ProjectFiles
    from copilot_lsp.context.retrieval import Cursor, gather
    from copilot_lsp.context.syntax import SyntaxTree
    from copilot_lsp.context.workspace_files import language_of

    language = language_of(relative)
    assert language is not None
    syntax = SyntaxTree.for_language(language, text)
    assert syntax is not None
    line = text.count("\n")
    above = text[: len(text) - len(text.split("\n")[-1])]
    cursor = Cursor(
        (root / relative).as_uri(),
        relative,
        language,
        above,
        line,
        syntax.outline(text),
        root,
    )
    index = index if index is not None else index_workspace(root)
    items, complete = gather(index, cursor, time.perf_counter() + 3600, ProjectFiles())
    assert complete
    return [(item.kind, item.path, item.text) for item in items]
