"""What may follow `module.`: a module's bindings, resolved only when certain."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter

from copilot_lsp.context import imports
from copilot_lsp.context.bindings import MODULE_ATTRIBUTES, python_bindings
from copilot_lsp.context.file_summary import summarize
from copilot_lsp.context.languages import grammar
from copilot_lsp.context.members import Members, members_at
from copilot_lsp.context.repo_index import RepoIndex
from tests.unit.context.workspace_fixtures import FILES, indexed, write_package


def bindings(source: str) -> tuple[str, ...] | None:
    encoded = source.encode()
    tree = tree_sitter.Parser(grammar("python")).parse(encoded)
    return python_bindings(tree.root_node, encoded)


def test_bindings_are_every_name_the_module_may_bind_at_its_top() -> None:
    source = (
        "from __future__ import annotations\n"
        "import os.path, sys as system\n"
        "from .x import (a, b as bee)\n"
        "if TYPE_CHECKING:\n    from q import Tee\n"
        "try:\n    import ujson as json\nexcept ImportError as err:\n    json = None\n"
        "X: int = 1\nY, (Z, W) = 1, (2, 3)\n"
        "for i in range(3):\n    k += 1\n"
        "with open(f) as fh:\n    pass\n"
        "def f(p, q=1):\n    local = 1\n    global G\n    G = 2\n"
        "class C:\n    inner = 1\n    def m(self):\n        pass\n"
        "@dec\ndef g():\n    pass\n"
        "[y for y in range(3) if (w2 := y)]\n"
        "lam = lambda zz: zz\n"
    )
    found = bindings(source)
    assert found is not None
    expected = {"annotations", "os", "system", "a", "bee", "Tee", "json", "err", "X", "Y"}
    expected |= {"Z", "W", "i", "k", "fh", "f", "G", "C", "g", "w2", "lam"}
    assert expected <= set(found)
    assert not {"p", "q", "local", "inner", "m", "zz", "y", "path", "sys"} & set(found)


@pytest.mark.parametrize(
    "source",
    [
        "from x import *\n",
        "def __getattr__(name):\n    return 1\n",
        "__getattr__ = lazy_loader.attach(__name__)\n",
        "globals()['late'] = 1\n",
        "setattr(sys.modules[__name__], 'late', 1)\n",
        "exec('late = 1')\n",
    ],
)
def test_a_module_whose_names_its_text_does_not_show_has_none(source: str) -> None:
    assert bindings(source) is None


def members(
    text: str,
    index: RepoIndex | None = None,
    relative: str = "app/main.py",
    folder: Path | None = None,
) -> Members | None:
    """The members at the end of `text` (the cursor), with the package's index."""
    lines = text.split("\n")
    bound = []
    for line in lines[:-1]:
        if line.startswith(("import ", "from ")):
            bound += imports.parse(line, "python", relative)
    last = len(lines) - 1
    return members_at(
        index or indexed(), bound, "python", lines[-1], text, last, "file:///ws", folder
    )


def test_after_an_alias_dot_the_names_are_the_modules_bindings() -> None:
    found = members("import pkg.mod as m\n\n\ndef f():\n    return m.")
    assert found is not None
    assert found.module == "pkg.mod"
    assert {"RATE", "compute_total", "_private_helper", "Ledger"} <= set(found.names)
    assert set(found.names) >= MODULE_ATTRIBUTES
    assert "add_entry" not in found.names  # a member of a class, not of the module


def test_what_is_typed_after_the_dot_narrows_the_names() -> None:
    found = members("import pkg.mod as m\nx = m.comp")
    assert found is not None
    assert (found.typed, found.names) == ("comp", ("compute_total",))
    assert members("import pkg.mod as m\nx = m.nothing_like_it") is None


@pytest.mark.parametrize(
    "text",
    [
        "import pkg.mod\nx = pkg.mod.",
        "from pkg import mod\nx = mod.",
        "from . import mod\nx = mod.",
    ],
)
def test_dotted_imports_and_submodules_lead_to_the_module(text: str) -> None:
    found = members(text, relative="pkg/other.py")
    assert found is not None and found.module == "pkg.mod"


@pytest.mark.parametrize(
    "text",
    [
        "import pkg.mod as m\nm = 3\nx = m.",  # rebound
        "import pkg.mod as m\ndef f(a, m):\n    return m.",  # a parameter
        "import pkg.mod as m\ndef f(\n    a,\n    m: int,\n):\n    return m.",
        "import pkg.mod as m\nfor m in range(3):\n    m.",
        "import pkg.mod as m\nwith open(p) as m:\n    m.",
        "import pkg.mod as m\nf = lambda m: m.",
        "import pkg.mod as m\nx = [m.real for m in values]\ny = m.",
        "import pkg.mod as m\nx = m.attr.",  # an attribute of a member
        "from pkg.mod import Ledger\nx = Ledger.",  # a class, not a module
        "import pkg.unknown as u\nx = u.",  # not indexed
        "x = m.",  # not imported
        "import pkg.mod as m\nx = m.__",  # a dunder
        "import pkg.mod as m\nx = (m).",
        "import pkg.mod as m\nx = 1  # see m.",  # a comment's text
        "import pkg.mod as m\nx = 'use m.",  # a string's
        'import pkg.mod as m\nx = f"{m.',
    ],
)
def test_no_names_unless_certain(text: str) -> None:
    assert members(text) is None


def test_a_lone_name_is_not_resolved_by_its_ending() -> None:
    """`import json` is the standard library's even with a json.py in the workspace."""
    files = {**FILES, "pkg/json.py": "def mine() -> None:\n    pass\n"}
    assert indexed(files).module("json") is not None  # retrieval would take it
    assert members("import json\nx = json.", indexed(files)) is None
    found = members("from pkg import json\nx = json.", indexed(files))
    assert found is not None and "mine" in found.names


def test_a_module_with_unknowable_names_offers_none() -> None:
    files = {**FILES, "pkg/lazy.py": "from os.path import *\n"}
    assert members("import pkg.lazy as lazy\nx = lazy.", indexed(files)) is None


def test_a_package_offers_its_folders_modules_on_disk(tmp_path: Path) -> None:
    root = write_package(tmp_path)
    (root / "pkg" / "_speedups.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (root / "pkg" / "data").mkdir()
    (root / "pkg" / "not-a-module.txt").write_text("")
    index = RepoIndex()
    uri = root.as_uri()
    for relative, text in FILES.items():
        index.put(f"{uri}/{relative}", relative, summarize(relative, "python", text))
    found = members_at(
        index,
        imports.parse("import pkg", "python", "app.py"),
        "python",
        "x = pkg.",
        "import pkg\nx = pkg.",
        1,
        uri,
        root,
    )
    assert found is not None
    assert {"mod", "x", "sub", "_speedups", "data"} <= set(found.names)
    assert "not-a-module" not in found.names


def test_a_packages_own_folder_name_stands_for_its_top_package() -> None:
    """The workspace folder is the package itself (`rich/`): `rich.errors` is `errors`."""
    files = {"errors.py": "class StyleError(Exception):\n    pass\n"}
    index = RepoIndex()
    for relative, text in files.items():
        index.put(f"file:///ws/{relative}", relative, summarize(relative, "python", text))
    text = "from rich import errors\nraise errors."
    bound = imports.parse("from rich import errors", "python", "console.py")
    here = members_at(
        index, bound, "python", "raise errors.", text, 1, "file:///ws", Path("/x/rich")
    )
    assert here is not None and "StyleError" in here.names
    other = members_at(
        index, bound, "python", "raise errors.", text, 1, "file:///ws", Path("/x/ws")
    )
    assert other is None


@pytest.mark.parametrize(
    ("text", "line", "shadowed"),
    [
        # jinja2's idtracking.py: `nodes` is a parameter of another function only
        (
            "import nodes\n\n"
            "def find_symbols(\n    nodes: t.Iterable[nodes.Node], parent=None\n) -> None:\n"
            "    return nodes\n\n"
            "class V:\n    def visit(self, node: nodes.",
            8,
            False,
        ),
        ("import m\n\ndef f(a, m=None):\n    return m.", 3, True),
        ("import m\n\nasync def f(\n    a,\n    *m,\n):\n    return m.", 6, True),
        ("import m\n\ndef f():\n    x = m.\n    m = 3\n", 3, True),  # local below the cursor
        ("import m\n\ndef g():\n    m = 3\n\ndef f():\n    x = m.", 6, False),
        ("import m\n\ndef f():\n    def g(m):\n        pass\n    x = m.", 5, False),
        (
            "import m\n\ndef f():\n    def g():\n        x = m.\n    for m in y:\n        pass",
            4,
            True,
        ),
        ("import m\nif X:\n    m = None\n\ndef f():\n    x = m.", 5, True),  # module level
        ("import m\n\ndef f():\n    x = m.\n    return f(key=m.a) == m.b", 3, False),
        ("import m\n\ndef f():\n    y = [m.a for m in z]\n    x = m.", 4, True),
        ("import m\n\ndef f():\n    g = lambda m: m\n    x = m.", 4, True),
        ("import m\n\ndef f():\n    g = lambda k: m.a\n    x = m.", 4, False),
    ],
)
def test_a_name_is_shadowed_only_where_the_cursor_sees_the_binding(
    text: str, line: int, shadowed: bool
) -> None:
    from copilot_lsp.context.shadowing import rebound

    name = "nodes" if "nodes" in text else "m"
    assert rebound(name, text, line) is shadowed


def test_the_retriever_reads_bindings_once_while_the_user_types_after_the_dot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from copilot_lsp.context import retrieval
    from copilot_lsp.context.retrieval import Cursor, Retriever
    from copilot_lsp.context.shadowing import rebound
    from copilot_lsp.context.syntax import SyntaxTree

    calls: list[str] = []
    real = rebound

    def counted(name: str, text: str, line: int) -> bool:
        calls.append(name)
        return real(name, text, line)

    monkeypatch.setattr(retrieval, "rebound", counted)
    retriever = Retriever(indexed())
    head = "import pkg.mod as m\n\n\ndef f():\n"

    def at(typed: str, below: str = "") -> Members | None:
        text = head + "    x = m." + typed + "\n" + below
        syntax = SyntaxTree.for_language("python", text)
        assert syntax is not None
        here = Cursor(
            "file:///ws/app/main.py", "app/main.py", "python", head, 4, syntax.outline(text)
        )
        return retriever.members(here, "    x = m." + typed, text)

    assert at("") is not None and at("co") is not None and at("com") is not None
    assert calls == ["m"]
    assert at("com", below="    m = 3\n") is None  # a line below changed: read again
    assert calls == ["m", "m"]
