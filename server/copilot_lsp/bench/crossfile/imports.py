"""What a module of a package takes from its other modules, read statically (ast).

A package is a folder of `.py` files under one top-level name. Every module's imports that
name another module of the same package are resolved (`import pkg.b as x`, `from pkg import
b`, `from . import b`, `from .b import name`, `from pkg.b import name as other`), and a name
taken from a module is followed through re-exports (`from ._models import Request` in an
`__init__.py`) to the module that defines it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

SKIPPED_FOLDERS = frozenset({"tests", "test", "testing", "vendor", "_vendor", "__pycache__"})
"""Folders of a package whose modules are not the package's own code."""
MAX_FILE_BYTES = 200_000
"""Larger modules (generated tables) are left out."""
REEXPORT_HOPS = 4


@dataclass(slots=True)
class Module:
    name: str
    """Dotted name: `httpx._client`, `httpx` for the package's `__init__.py`."""
    path: Path
    """Relative to the package's folder."""
    text: str
    tree: ast.Module
    is_package: bool
    defined: set[str] = field(default_factory=set)
    """Names bound at the top level by def, class or assignment (also inside top-level if/try)."""
    reexported: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Name -> (module, name there) for names imported from another module of the package."""


def package_modules(root: Path, package: str) -> dict[str, Module]:
    """Every module of the package in `root` (its folder) that parses, by dotted name."""
    modules: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if SKIPPED_FOLDERS & set(relative.parts[:-1]) or path.stat().st_size > MAX_FILE_BYTES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        parts = [package, *relative.with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        modules[name] = Module(name, relative, text, tree, is_package)
    for module in modules.values():
        module.defined = _top_level_names(module.tree)
        module.reexported = {
            local: target
            for local, target in imported_names(module, modules).items()
            if local not in module.defined
        }
    return modules


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(_bound(target))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                names.update(_bound(node.target))
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
                for handler in node.handlers:
                    visit(handler.body)

    visit(tree.body)
    return names


def _bound(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple | ast.List):
        return {name for element in target.elts for name in _bound(element)}
    return set()


def _base(node: ast.ImportFrom, module: Module) -> str | None:
    """The absolute module an ImportFrom names (relative imports resolved)."""
    if node.level == 0:
        return node.module
    parts = module.name.split(".")
    if not module.is_package:
        parts.pop()
    if node.level - 1 > len(parts) - 1:
        return None
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def module_aliases(module: Module, modules: dict[str, Module]) -> dict[str, str]:
    """Local name -> another module of the package bound to it in `module`."""
    aliases: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules and alias.name != module.name:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _base(node, module)
            for alias in node.names:
                target = f"{base}.{alias.name}" if base else alias.name
                if target in modules and target != module.name:
                    aliases[alias.asname or alias.name] = target
    return aliases


def imported_names(module: Module, modules: dict[str, Module]) -> dict[str, tuple[str, str]]:
    """Local name -> (module, name) for names (not modules) imported from another module of
    the package."""
    names: dict[str, tuple[str, str]] = {}
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = _base(node, module)
        if base is None or base not in modules or base == module.name:
            continue
        for alias in node.names:
            if alias.name != "*" and f"{base}.{alias.name}" not in modules:
                names[alias.asname or alias.name] = (base, alias.name)
    return names


def definer(modules: dict[str, Module], module: str, name: str) -> str | None:
    """The module of the package that defines `name` as `module` offers it (re-exports
    followed), or None when it is defined nowhere in the package."""
    for _ in range(REEXPORT_HOPS):
        found = modules.get(module)
        if found is None:
            return None
        if name in found.defined:
            return module
        if name not in found.reexported:
            return None
        module, name = found.reexported[name]
    return None


def import_spans(module: Module) -> list[tuple[int, int]]:
    """(first line, last line), 1-based, of every import statement of the module."""
    return [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
