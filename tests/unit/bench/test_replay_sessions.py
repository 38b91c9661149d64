"""Editing sessions cut from held-out corpus files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from copilot_lsp.bench.replay.sessions import (
    HELDOUT_PERCENT,
    candidates,
    heldout_files,
    pick_sessions,
)
from copilot_lsp.draft.corpus import SourceFile
from copilot_lsp.errors import ConfigError

SOURCE = """import os


def walk(root):
    found = []
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if os.path.isdir(path):
            found.extend(walk(path))
        found.append(path)
    return found


class Box:
    def __init__(self, size):
        self.size = size
        self.items = []
        self.open = False

    def add(self, item):
        if len(self.items) >= self.size:
            raise ValueError("the box is full: %d items" % len(self.items))
        self.items.append(item)
"""


def texts(kind: str) -> list[str]:
    return [SOURCE[span.start : span.end] for span in candidates(SOURCE, kind)]  # type: ignore[arg-type]


def test_write_sessions_are_whole_functions_from_their_def() -> None:
    found = texts("write")
    assert any(
        text.startswith("def walk(root):\n") and text.endswith("return found") for text in found
    )
    assert any(text.startswith("def add(self, item):") for text in found)
    assert all(text.startswith("def ") for text in found)


def test_hole_sessions_are_single_statements_between_siblings_at_the_same_indent() -> None:
    found = texts("hole")
    assert "self.items = []" in found  # between self.size = … and self.open = …
    assert "path = os.path.join(root, name)" not in found  # the first of its block
    assert "found = []" not in found  # a blank-free neighbour, but the next is a `for` block
    assert all("\n" not in text for text in found)


def test_edit_sessions_retype_the_right_side_of_a_nested_statement() -> None:
    found = texts("edit")
    assert '"the box is full: %d items" % len(self.items)' in found  # `)` stays right
    assert "walk(path)" in found  # after `found.extend(`; the closing `)` stays
    cut = candidates(SOURCE, "edit")[0]
    assert SOURCE[cut.end] in ")]}\n"


def test_files_that_do_not_parse_or_use_tabs_give_nothing() -> None:
    assert candidates("def broken(:\n    pass\n", "write") == []
    assert candidates("def f():\n\tx = 1\n\ty = 2\n\tz = 3\n", "hole") == []


def _file(tmp_path: Path, name: str, text: str) -> SourceFile:
    path = tmp_path / name
    path.write_text(text)
    return SourceFile(path, hashlib.sha256(text.encode()).hexdigest())


def test_only_held_out_files_are_used_and_the_seed_decides(tmp_path: Path) -> None:
    variants = [SOURCE + f"\n\nVERSION = {index}\n" for index in range(400)]
    files = [_file(tmp_path, f"m{index}.py", text) for index, text in enumerate(variants)]
    picked = heldout_files([str(tmp_path)])
    assert picked and all(f.split(HELDOUT_PERCENT) == "heldout" for f in picked)
    assert len(picked) < len(files) / 5  # about 5% of them
    first = pick_sessions(picked, 2, 17)
    assert [s.kind for s in first] == ["write", "hole", "edit"] * 2
    assert first == pick_sessions(picked, 2, 17)
    assert first != pick_sessions(picked, 2, 18)
    held = {f.path.name for f in picked}
    assert {s.path for s in first} <= held
    for session in first:
        assert session.before + session.target + session.after in variants
        line, column = session.cursor
        assert session.document.split("\n")[line][:column] == session.before.split("\n")[-1]
    with pytest.raises(ConfigError, match="too few"):
        pick_sessions(picked[:1], 2, 17)
