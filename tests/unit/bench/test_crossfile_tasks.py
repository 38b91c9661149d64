"""The cross-file tasks: found by static analysis, scored against the rest of the line."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from types import SimpleNamespace

from copilot_lsp.bench.crossfile.run import _applied, naive_prompt
from copilot_lsp.bench.crossfile.score import score
from copilot_lsp.bench.crossfile.tasks import SPLITS, build_split, find_tasks, locate, select
from tests.fakes.crossfile_package import write_package


def test_tasks_are_uses_of_other_modules_that_the_file_does_not_give_away(
    tmp_path: Path,
) -> None:
    root = write_package(tmp_path)
    tasks = find_tasks(root, "pkg")
    assert [(t.path, t.line, t.kind, t.name, t.answer) for t in tasks] == [
        ("app.py", 7, "import", "make_client", "make_client(value)"),
        ("app.py", 9, "attribute", "DEFAULT_TIMEOUT", "DEFAULT_TIMEOUT + u.shared(doubled)"),
        ("app.py", 10, "import", "Client", "Client(1)"),
    ]
    make, timeout, client = tasks
    assert make.module == "pkg.models" and make.defining == ("models.py",)
    # The re-export in __init__.py is followed to the module that defines the class.
    assert client.module == "pkg" and client.defining == ("__init__.py", "models.py")
    # What the rest of the line uses from another module is defined there too.
    assert timeout.defining == ("models.py", "util.py")
    assert timeout.task_id == "pkg/app.py:10:20"


def test_the_cursor_sits_before_the_name_and_the_rest_of_the_line_is_gone(
    tmp_path: Path,
) -> None:
    root = write_package(tmp_path)
    make, timeout, _ = find_tasks(root, "pkg")
    text, offset = timeout.editor_text()
    original = (root / "app.py").read_text(encoding="utf-8")
    assert text[:offset].endswith("    result = models.")
    assert text[offset:].startswith("\n    other = Client(1)\n")
    assert text == original.replace("models.DEFAULT_TIMEOUT + u.shared(doubled)", "models.")
    text, offset = make.editor_text()
    assert text[:offset].endswith("\n    client = ") and text[offset] == "\n"
    assert "DEFAULT_TIMEOUT" not in text.replace("models.DEFAULT_TIMEOUT", "")


def test_the_selection_is_seeded_capped_per_file_and_the_splits_are_disjoint(
    tmp_path: Path,
) -> None:
    packages = {name: write_package(tmp_path / name, name) for name in ("pkg", "other")}
    first, infos = build_split("dev", 4, seed=3, packages=packages)
    again, _ = build_split("dev", 4, seed=3, packages=packages)
    assert first == again and len(first) == 4
    assert [t.package for t in first] == ["other", "pkg", "other", "pkg"]  # taken in turn
    # `import pkg.util` and `from pkg import` name another package when copied as `other`.
    assert [(i.name, i.found) for i in infos] == [("other", 2), ("pkg", 3)]
    assert len(select(find_tasks(packages["pkg"], "pkg"), seed=3, per_file=1)) == 1
    assert not set(SPLITS["dev"]) & set(SPLITS["heldout"])
    assert first[0].as_dict()["defining"] and "root" not in first[0].as_dict()


def test_scoring_the_rest_of_the_line() -> None:
    right = score("make_client(value)  \nmore", "make_client(value)", "make_client")
    assert right["exact_match"] and right["identifier_match"] and right["edit_similarity"] == 1
    near = score("make_client(timeout)", "make_client(value)", "make_client")
    assert not near["exact_match"] and near["identifier_match"]
    assert 0 < near["edit_similarity"] < 1
    assert not score("make_clients()", "make_client(value)", "make_client")["identifier_match"]
    empty = score("", "make_client(value)", "make_client")
    assert not empty["shown"] and not empty["identifier_match"]


def test_an_item_range_that_starts_before_the_cursor_or_replaces_right_of_it() -> None:
    text, offset = "a = 1\nx = mod.\ny = 2\n", len("a = 1\nx = mod.")

    def item(start: int, end: int, insert: str) -> SimpleNamespace:
        position = SimpleNamespace
        return SimpleNamespace(
            insert_text=insert,
            range=SimpleNamespace(
                start=position(line=1, character=start), end=position(line=1, character=end)
            ),
        )

    assert _applied(text, offset, SimpleNamespace(insert_text="name()", range=None)) == "name()"
    assert _applied(text, offset, item(4, 8, "mod.name()")) == "name()"
    assert _applied(text, offset, item(8, 8, "name()\nz = 3")) == "name()"


def test_the_naive_prompt_is_the_end_of_the_text_before_the_cursor_from_a_line_start() -> None:
    short = "import os\nx = os."
    assert naive_prompt(short + "\nrest", len(short)) == short
    long = "".join(f"line_{i} = {i}\n" for i in range(400)) + "x = os."
    prompt = naive_prompt(long, len(long))
    assert prompt.endswith("x = os.") and len(prompt) <= 2000 and prompt.startswith("line_")


def test_an_installed_package_is_found_with_its_version_without_importing_it() -> None:
    found = locate("httpx")
    assert found.root is not None and (found.root / "_client.py").is_file()
    assert found.version == importlib.metadata.version("httpx")
    assert locate("no_such_package_here").root is None
