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
