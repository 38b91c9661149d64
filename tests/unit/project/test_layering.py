"""The package layering holds: read every module's imports (ast) and check the rules.

- pygls and lsprotocol are imported only under `lsp/` (the server) and `client/` (what drives
  the server from outside);
- no two packages import each other (imports under `if TYPE_CHECKING:` do not count);
- no module imports itself through others: no import circle between modules, imports under
  `if TYPE_CHECKING:` included;
- `completion/` imports nothing from the LSP layer, the client, the command line, serving or
  draft training, and from `engine/` only the interface it codes against (`engine/types.py`);
- no module in `server/copilot_lsp` is over 450 lines.

A "package" is the first name under `copilot_lsp`: `lsp`, `completion`, `engine`, … and each
top-level module (`settings`, `errors`, …) on its own.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import copilot_lsp

ROOT = Path(copilot_lsp.__file__).resolve().parent
PACKAGE = "copilot_lsp"
MAX_LINES = 450
PROTOCOL_LIBRARIES = ("pygls", "lsprotocol")
MAY_IMPORT_PROTOCOL = ("lsp", "client")
NOT_FOR_COMPLETION = ("lsp", "client", "cli", "serving", "draft", "bench")
ENGINE_INTERFACE = f"{PACKAGE}.engine.types"
PENDING_SPLITS: dict[str, str] = {}
"""Modules known to be over the limit, each with the change that splits it. The test fails
once one of them fits (or is gone), so the exemption is dropped with the split."""


@dataclass(frozen=True)
class Import:
    importer: str
    """Dotted name of the importing module."""
    imported: str
    """Dotted name of the module (or package) imported."""
    line: int


def module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for branch in node.orelse:
                visit(branch)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _every_import(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def imports(known: dict[str, Path], *, type_checking: bool = False) -> list[Import]:
    """Each module's runtime imports (with `type_checking`, those for the type checker too),
    `from X import name` resolved to X.name when that is a module of ours, relative imports
    resolved against the importer."""
    result: list[Import] = []
    read = _every_import if type_checking else _runtime_imports
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        for node in read(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                result += [Import(name, alias.name, node.lineno) for alias in node.names]
                continue
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                result.append(Import(name, candidate if candidate in known else base, node.lineno))
    return result


def package_of(module: str) -> str | None:
    """`lsp` for copilot_lsp.lsp.server, `settings` for copilot_lsp.settings; None for the
    root package itself (it only holds the version) and for other libraries."""
    parts = module.split(".")
    if parts[0] != PACKAGE or len(parts) == 1:
        return None
    return parts[1]


def where(item: Import, known: dict[str, Path]) -> str:
    return f"{known[item.importer].relative_to(ROOT)}:{item.line} imports {item.imported}"


def test_only_the_lsp_and_client_packages_import_pygls() -> None:
    known = modules()
    offenders = [
        where(item, known)
        for item in imports(known)
        if item.imported.split(".")[0] in PROTOCOL_LIBRARIES
        and package_of(item.importer) not in MAY_IMPORT_PROTOCOL
    ]
    assert offenders == []


def test_no_two_packages_import_each_other() -> None:
    known = modules()
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in imports(known):
        source, target = package_of(item.importer), package_of(item.imported)
        if source is not None and target is not None and source != target:
            edges[(source, target)].append(where(item, known))
    mutual = sorted(
        f"{a} <-> {b}: {edges[(a, b)][0]}; {edges[(b, a)][0]}"
        for a, b in edges
        if a < b and (b, a) in edges
    )
    assert mutual == []


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other through any path (Tarjan's strongly
    connected components of more than one module)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            group = []
            while (member := stack.pop()) != node:
                group.append(member)
            if group:
                found.append(sorted([node, *group]))

    for node in sorted(edges):
        if node not in order:
            visit(node)
    return found


def test_no_import_circle_between_modules() -> None:
    known = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for item in imports(known, type_checking=True):
        if item.imported in known and item.imported != item.importer:
            edges[item.importer].add(item.imported)
    assert circles(edges) == []


def test_the_circle_finder_finds_a_circle_through_three_modules() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_completion_imports_nothing_from_the_layers_around_it() -> None:
    known = modules()
    offenders = [
        where(item, known)
        for item in imports(known)
        if package_of(item.importer) == "completion"
        and (
            package_of(item.imported) in NOT_FOR_COMPLETION
            or (package_of(item.imported) == "engine" and item.imported != ENGINE_INTERFACE)
        )
    ]
    assert offenders == []


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in modules().values()
    }
    too_long = {name: size for name, size in sizes.items() if size > MAX_LINES}
    assert {name: size for name, size in too_long.items() if name not in PENDING_SPLITS} == {}
    stale = [name for name in PENDING_SPLITS if name not in too_long]
    assert stale == [], f"split already: drop {stale} from PENDING_SPLITS"


def test_the_import_reader_sees_what_it_must() -> None:
    """The rules above are only as good as the reader: check it on a known module."""
    known = modules()
    found = {
        item.imported for item in imports(known) if item.importer == f"{PACKAGE}.context.syntax"
    }
    assert {"tree_sitter", f"{PACKAGE}.context.languages"} <= found
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pygls\n"
        "else:\n    import json\ndef f():\n    import lsprotocol\n"
    )
    names = [alias.name for node in _runtime_imports(tree) for alias in node.names]
    assert names == ["TYPE_CHECKING", "json", "lsprotocol"]
