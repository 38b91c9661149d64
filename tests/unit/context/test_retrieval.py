"""Retrieval for a cursor: imports followed to their modules, definitions, similar code."""

from __future__ import annotations

import time
from pathlib import Path

from copilot_lsp.context import imports
from copilot_lsp.context.imports import Imported
from copilot_lsp.context.repo_index import RepoIndex
from copilot_lsp.context.retrieval import PROVISIONAL_S, Cursor, Retriever, gather
from copilot_lsp.context.syntax import SyntaxTree
from tests.unit.context.workspace_fixtures import indexed

FAR = 3600.0


def cursor(text: str, relative: str = "app/main.py") -> Cursor:
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    line = text.count("\n")
    above = text[: len(text) - len(text.split("\n")[-1])]
    return Cursor(f"file:///ws/{relative}", relative, "python", above, line, syntax.outline(text))


def found_for(text: str, relative: str = "app/main.py") -> list[tuple[str, str, str]]:
    items, complete = gather(indexed(), cursor(text, relative), time.perf_counter() + FAR)
    assert complete
    return [(item.kind, item.path, item.text) for item in items]


def test_import_parsing_binds_aliases_names_and_relative_modules() -> None:
    assert imports.parse("import pkg.mod as m", "python", "a.py") == [Imported("pkg.mod", "m")]
    assert imports.parse("from pkg.x import (f,\n  g as h)", "python", "a.py") == [
        Imported("pkg.x", "f", "f", "pkg.x.f"),
        Imported("pkg.x", "h", "g", "pkg.x.g"),
    ]
    assert imports.parse("from ..mod import f", "python", "pkg/sub/deep.py") == [
        Imported("pkg.mod", "f", "f", "pkg.mod.f")
    ]
    assert imports.parse("from . import sibling", "python", "pkg/sub/__init__.py") == [
        Imported("pkg.sub", "sibling", "sibling", "pkg.sub.sibling")
    ]
    assert imports.parse(
        "import { a, b as c } from '../lib/util'", "typescript", "src/app/x.ts"
    ) == [
        Imported("src/lib/util", "a", "a"),
        Imported("src/lib/util", "c", "b"),
    ]


def test_an_aliased_module_brings_its_public_api() -> None:
    found = found_for("import pkg.mod as m\n\ntotal = 3\nm.")
    kind, path, text = found[0]
    assert (kind, path) == ("imported module", "pkg/mod.py")
    assert "def compute_total(items: list[int], tax: float = RATE) -> float: ..." in text


def test_a_name_imported_from_a_module_brings_its_header() -> None:
    found = found_for("from pkg.x import format_report\n\nvalue = 1\n")
    assert (
        "definition",
        "pkg/x.py",
        "def format_report(total: float, currency: str) -> str: ...",
    ) in found


def test_imports_under_type_checking_and_try_are_followed() -> None:
    text = (
        "from __future__ import annotations\n"
        "import typing as t\n\n"
        "if t.TYPE_CHECKING:\n"
        "    from pkg.x import format_report\n"
        "    from pkg.mod import (\n        Ledger,\n    )\n"
        "try:\n    import pkg.sub.sibling as sib\n"
        "except ImportError:\n    sib = None\n"
        "else:\n    if True:\n        from pkg.sub.deep import deep_value\n\n"
        "def summary(book: Ledger) -> str:\n"
        "    x = sib.\n"
    )
    found = found_for(text)
    assert ("imported module", "pkg/sub/sibling.py") in [(k, p) for k, p, _ in found]
    headers = [code for kind, _, code in found if kind == "definition"]
    assert "def format_report(total: float, currency: str) -> str: ..." in headers
    assert "def deep_value() -> int: ..." in headers
    assert any(code.startswith("class Ledger:") for code in headers)
    # A guarded block below the cursor's line is not read.
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    above_the_guard = imports.statements_above(syntax.outline(text), "python", 3)
    assert above_the_guard == ["from __future__ import annotations", "import typing as t"]


def test_relative_imports_resolve_against_the_file() -> None:
    found = found_for(
        "from ..mod import compute_total\nfrom . import sibling\n\nx = 1\n", "pkg/sub/new.py"
    )
    paths = [(kind, path) for kind, path, _ in found]
    assert ("definition", "pkg/mod.py") in paths
    assert ("imported module", "pkg/sub/sibling.py") in paths


def test_from_dot_import_in_a_module_at_the_top_of_the_workspace() -> None:
    # The workspace folder is the package itself (`jinja2/` opened as the workspace):
    # `from . import nodes` in `parser.py` binds the module `nodes.py` beside it.
    assert imports.parse("from . import nodes as n, util", "python", "parser.py") == [
        Imported("", "n", "nodes", "nodes"),
        Imported("", "util", "util", "util"),
    ]
    assert imports.parse("from . import sibling", "python", "__init__.py") == [
        Imported("", "sibling", "sibling", "sibling")
    ]
    assert imports.parse("from .. import x", "python", "parser.py") == []
    assert imports.parse("from . import *", "python", "parser.py") == []
    files = {"nodes.py": "class Pow(Node):\n    pass\n", "parser.py": ""}
    text = "from . import nodes\n\nleft = 1\nnodes."
    items, _ = gather(indexed(files), cursor(text, "parser.py"), time.perf_counter() + FAR)
    assert [(item.kind, item.path) for item in items][:1] == [("imported module", "nodes.py")]
    assert "class Pow(Node): ..." in items[0].text


def test_the_import_used_nearest_the_cursor_comes_first() -> None:
    text = (
        "import pkg.mod as m\nimport pkg.x as x\n\nm.compute_total([])\nx.format_report(1.0, 'e')\n"
    )
    paths = [path for kind, path, _ in found_for(text) if kind == "imported module"]
    assert paths == ["pkg/x.py", "pkg/mod.py"]


def test_names_used_near_the_cursor_are_found_in_files_not_imported() -> None:
    found = found_for("value = sibling_function(True)\n")
    assert (
        "definition",
        "pkg/sub/sibling.py",
        "def sibling_function(flag: bool) -> str: ...",
    ) in found


def test_the_cursor_line_never_changes_what_is_retrieved() -> None:
    index = indexed()
    retriever = Retriever(index)
    head = "import pkg.mod as m\n\nvalue = sibling_function(True)\n"
    first = retriever.lazy(cursor(head + "m"))(time.perf_counter() + FAR)
    index.remove("file:///ws/pkg/mod.py")  # the index changes between the keystrokes
    second = retriever.lazy(cursor(head + "m.compute_"))(time.perf_counter() + FAR)
    assert first and second is first
    moved = retriever.lazy(cursor(head + "m.compute_total()\n"))(time.perf_counter() + FAR)
    assert moved != first  # a new line: retrieved again, without the removed module


def test_a_line_retrieved_while_the_index_was_building_is_retrieved_again() -> None:
    full = indexed()
    partial = RepoIndex()
    building = True
    retriever = Retriever(partial, settled=lambda: not building)
    head = "import pkg.mod as m\n\nvalue = m.compute_total()\n"
    assert retriever.lazy(cursor(head + "m"))(time.perf_counter() + FAR) == []
    for uri, file in full.files.items():  # the first pass goes on while the user types
        partial.put(uri, file.path, file.summary)
    building = False
    found = retriever.lazy(cursor(head + "m."))(time.perf_counter() + FAR)
    assert [item.path for item in found if item.kind == "imported module"] == ["pkg/mod.py"]
    # Found on a settled index: kept for the line whatever changes next.
    partial.remove("file:///ws/pkg/mod.py")
    assert retriever.lazy(cursor(head + "m.c"))(time.perf_counter() + FAR) is found


def test_while_the_index_builds_a_line_is_gathered_again_at_most_once_a_second() -> None:
    """The first pass changes the index with every batch: gathering again on each keystroke
    cost every keystroke a retrieval while a large workspace was indexed."""
    full = indexed()
    partial = RepoIndex()
    now = 100.0
    retriever = Retriever(partial, settled=lambda: False, clock=lambda: now)
    head = "import pkg.mod as m\n\nvalue = m.compute_total()\n"
    first = retriever.lazy(cursor(head + "m"))(time.perf_counter() + FAR)
    assert first == []
    for uri, file in full.files.items():  # the index moves on, the first pass goes on
        partial.put(uri, file.path, file.summary)
    now += PROVISIONAL_S / 2
    assert retriever.lazy(cursor(head + "m."))(time.perf_counter() + FAR) is first
    now += PROVISIONAL_S / 2
    found = retriever.lazy(cursor(head + "m.c"))(time.perf_counter() + FAR)
    assert [item.path for item in found if item.kind == "imported module"] == ["pkg/mod.py"]


def test_a_passed_deadline_leaves_the_rest_out_and_is_not_kept() -> None:
    index = indexed()
    items, complete = gather(index, cursor("import pkg.mod as m\n"), time.perf_counter() - 1)
    assert items == [] and not complete


def test_a_changed_project_file_drops_what_was_kept(tmp_path: Path) -> None:
    from copilot_lsp.completion.workspace import Workspace
    from tests.unit.context.test_imports_go import FILES as GO_FILES
    from tests.unit.context.workspace_fixtures import index_workspace, write_package

    root = write_package(tmp_path, GO_FILES)
    workspace = Workspace()
    retriever = workspace.retriever
    for uri, file in index_workspace(root).files.items():
        retriever.index.put(uri, file.path, file.summary)
    text = 'package main\n\nimport "example.com/m/pkg/util"\n\nfunc main() {\n\tutil.\n'
    syntax = SyntaxTree.for_language("go", text)
    assert syntax is not None
    above = text[: text.rindex("\n\tutil.") + 1]
    go_cursor = Cursor(
        (root / "main.go").as_uri(), "main.go", "go", above, 5, syntax.outline(text), root
    )
    first = retriever.lazy(go_cursor)(time.perf_counter() + FAR)
    assert [item.path for item in first if item.kind == "imported module"] == ["pkg/util"]
    (root / "go.mod").write_text("module example.com/other\n")
    workspace.disk_changed((root / "pkg" / "util" / "util.go").as_uri())  # not a project file
    assert retriever.lazy(go_cursor)(time.perf_counter() + FAR) is first
    workspace.disk_changed((root / "go.mod").as_uri())
    again = retriever.lazy(go_cursor)(time.perf_counter() + FAR)
    assert [item for item in again if item.kind == "imported module"] == []


BROKEN = (
    "from pkg.x import format_report\n"
    "import pkg.mod as m\n"
    "if TYPE_CHECKING:\n"
    "    from pkg.sub import sibling\n"
    "    def visit(self, node: m.\n"
    "            if self.ready:\n"
    "        if node.end is not None:\n"
    "            self.emit(node.end)\n"
    "        if node.step is not None:\n"
    '            self.write(f"{self.names[node.name]}(")\n'
    "        else:\n"
)
"""A bracket left open at the cursor (line 4) among odd indentation, as in jinja2's
compiler.py while `visit_Getitem(self, node: nodes.` is typed: the parser wraps the whole
file in one ERROR node."""


def test_imports_are_found_when_an_open_bracket_breaks_the_whole_parse() -> None:
    """22 of the 300 dev tasks of bench crossfile had no import found for this."""
    syntax = SyntaxTree.for_language("python", BROKEN)
    assert syntax is not None
    outline = syntax.outline(BROKEN)
    assert outline.blocks[0].kinds[0] == "ERROR"
    assert imports.statements_above(outline, "python", 4) == [
        "from pkg.x import format_report",
        "import pkg.mod as m",
        "from pkg.sub import sibling",
    ]
    above = BROKEN[: BROKEN.index("    def visit")]
    here = Cursor("file:///ws/app/main.py", "app/main.py", "python", above, 4, outline)
    items, _ = gather(indexed(), here, time.perf_counter() + FAR)
    assert [item.kind for item in items][:1] == ["imported module"]


def test_imports_inside_the_functions_around_the_cursor_are_followed() -> None:
    """typer imports `rich_utils` where it uses it, inside functions."""
    from copilot_lsp.context.shadowing import local_imports

    above = (
        "import os\n\n\ndef run():\n"
        "    from pkg import mod\n"
        "    def inner():\n        from pkg.x import format_report\n"
        "    if os.environ:\n"
        "        from pkg.sub.deep import (\n            deep_value,\n        )\n"
        "\n\ndef other():\n    import pkg.sub.sibling as sib\n\n\ndef last():\n"
        "    from pkg import mod as m2\n"
    )
    assert local_imports(above, 4) == ["from pkg import mod as m2"]
    in_run = above[: above.index("\n\ndef other")] + "\n"
    assert local_imports(in_run, 4) == [
        "from pkg import mod",
        "from pkg.sub.deep import (\ndeep_value,\n)",
    ]
    assert local_imports(in_run, 0) == []  # the top level: its own imports are read already
    text = in_run + "    total = mod."
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    here = Cursor(
        "file:///ws/app/main.py",
        "app/main.py",
        "python",
        in_run,
        in_run.count("\n"),
        syntax.outline(text),
        indent=4,
    )
    items, _ = gather(indexed(), here, time.perf_counter() + FAR)
    assert ("imported module", "pkg/mod.py") in [(item.kind, item.path) for item in items]
