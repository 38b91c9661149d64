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


def test_packaged_sessions_come_from_small_packages_and_name_them(tmp_path: Path) -> None:
    """`--workspace package`: files outside a package, or in one too big to copy, are passed
    over; a session's path is relative to its package's parent, where the replay copies it."""
    from copilot_lsp.bench.replay.run import fill_workspace
    from copilot_lsp.bench.replay.sessions import MAX_PACKAGE_FILES, package_of

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    inside = _file(tmp_path, "pkg/sub/box.py", SOURCE)
    loose = _file(tmp_path, "loose.py", SOURCE + "\n# another file\n")
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "__init__.py").write_text("")
    for index in range(MAX_PACKAGE_FILES):
        (tmp_path / "big" / f"m{index}.py").write_text("")
    big = _file(tmp_path, "big/box.py", SOURCE + "\n# a third file\n")
    assert package_of(inside.path) == tmp_path / "pkg"
    assert package_of(loose.path) is None and package_of(big.path) is None

    sessions = pick_sessions([loose, big, inside], 1, 17, packaged=True)
    assert {s.path for s in sessions} == {"pkg/sub/box.py"}
    assert {s.package for s in sessions} == {str(tmp_path / "pkg")}
    assert sessions[0].summary()["package"] == "pkg"
    assert {s.package for s in pick_sessions([loose], 1, 17)} == {None}
    with pytest.raises(ConfigError, match="too few"):
        pick_sessions([loose, big], 1, 17, packaged=True)

    workspace = tmp_path / "workspace"
    fill_workspace(workspace, sessions)
    assert (workspace / sessions[0].path).read_text() == SOURCE
    assert (workspace / "pkg" / "__init__.py").is_file()
