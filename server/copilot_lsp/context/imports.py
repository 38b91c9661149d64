"""A file's import statements read as what they bind: which module, under which name.

Python (`import a.b as m`, `from .x import f as g`, relative levels resolved against the
importing module) and JavaScript/TypeScript (`import { f } from "./x"`, relative paths
resolved against the importing file). Module names match context/file_summary.py's
`module_name`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

import tree_sitter

from copilot_lsp.context.file_summary import module_name
from copilot_lsp.context.languages import FAMILY
from copilot_lsp.context.outline import Outline
from copilot_lsp.context.queries import IMPORTS
from copilot_lsp.context.snippets import outline_of

_COMMENT = re.compile(r"#[^\n]*")
_PY_IMPORT = re.compile(r"^import\s+(.+)$")
_PY_FROM = re.compile(r"^from\s+(\.*)\s*([\w.]*)\s+import\s+(.+)$")
_AS = re.compile(r"^([\w.*]+)(?:\s+as\s+(\w+))?$")
_JS_FROM = re.compile(r"""^(?:import|export)\s+(?:type\s+)?(.+?)\s+from\s+['"]([^'"]+)['"]""")
_JS_NAMED = re.compile(r"\{([^}]*)\}")


@dataclass(frozen=True, slots=True)
class Imported:
    module: str
    """The module's name (dotted for Python, a path without extension for JS/TS)."""
    binding: str
    """The name the importing file uses: an alias, a dotted path, or "*" (every name)."""
    name: str | None = None
    """The module's member imported (`from m import name`); None: the module itself."""


def statements_above(syntax: tree_sitter.Tree | Outline, language_id: str, line: int) -> list[str]:
    """The top-level import statements that start above `line`, in order."""
    wanted = IMPORTS.get(FAMILY.get(language_id, ""), frozenset())
    found: list[str] = []
    for block in outline_of(syntax).blocks:
        for kind, node in zip(block.kinds, block.nodes, strict=True):
            if node.start_point[0] + block.row >= line:
                return found
            if kind in wanted:
                text = block.source[node.start_byte : node.end_byte]
                found.append(text.decode("utf-8", "replace"))
    return found


def parse(statement: str, language_id: str, relative: str | None) -> list[Imported]:
    """What `statement` binds in the file at `relative` (its path under the workspace folder;
    None: outside every folder, where only absolute Python imports resolve)."""
    family = FAMILY.get(language_id, "")
    if family == "python":
        module = module_name(relative, language_id) if relative else None
        package = bool(relative) and posixpath.basename(relative or "") == "__init__.py"
        return _python(statement, module, package)
    if family in ("javascript", "typescript") and relative:
        return _script(statement, relative)
    return []


def _python(statement: str, module: str | None, package: bool) -> list[Imported]:
    flat = " ".join(_COMMENT.sub("", statement).replace("\\\n", " ").split())
    flat = flat.replace("(", " ").replace(")", " ").strip()
    found: list[Imported] = []
    if match := _PY_IMPORT.match(flat):
        for part in match.group(1).split(","):
            named = _AS.match(part.strip())
            if named:
                found.append(Imported(named.group(1), named.group(2) or named.group(1)))
        return found
    match = _PY_FROM.match(flat)
    if match is None:
        return found
    dots, name, names = match.groups()
    base = _relative(len(dots), name, module, package) if dots else name
    if not base:
        return found
    for part in names.split(","):
        named = _AS.match(part.strip())
        if named:
            member = named.group(1)
            binding = named.group(2) or member
            found.append(Imported(base, binding, None if member == "*" else member))
    return found


def _relative(level: int, name: str, module: str | None, package: bool) -> str | None:
    """The absolute name of `from <level dots><name> import …` in `module`."""
    if module is None:
        return None
    parts = module.split(".")
    if not package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    if name:
        parts.append(name)
    return ".".join(parts) or None


def _script(statement: str, relative: str) -> list[Imported]:
    flat = " ".join(statement.split())
    match = _JS_FROM.match(flat)
    if match is None:
        return []
    clause, specifier = match.groups()
    if not specifier.startswith("."):
        return []  # a package from node_modules: not in the index
    folder = posixpath.dirname(relative)
    target = posixpath.normpath(posixpath.join(folder, specifier))
    target = re.sub(r"\.(?:[cm]?[jt]sx?)$", "", target)
    target = target[: -len("/index")] if target.endswith("/index") else target
    found: list[Imported] = []
    named = _JS_NAMED.search(clause)
    if named:
        for part in named.group(1).split(","):
            pieces = part.strip().removeprefix("type ").split(" as ")
            if pieces[0]:
                found.append(Imported(target, pieces[-1].strip(), pieces[0].strip()))
        clause = _JS_NAMED.sub("", clause)
    for part in clause.split(","):
        part = part.strip()
        if part.startswith("* as "):
            found.append(Imported(target, part[5:].strip()))
        elif part and part.isidentifier():
            found.append(Imported(target, part))
    return found
