"""A file's import statements read as what they bind: which module, under which name.

Python here (`import a.b as m`, `from .x import f as g`, relative levels resolved against
the importing module; module names match context/file_summary.py's `module_name`); the
other languages in their own modules: context/imports_script.py (JavaScript/TypeScript),
imports_go.py, imports_rust.py.
"""

from __future__ import annotations

import posixpath
import re

import tree_sitter

from copilot_lsp.context import imports_go, imports_rust, imports_script
from copilot_lsp.context.file_summary import module_name
from copilot_lsp.context.imported import Imported, Place
from copilot_lsp.context.languages import FAMILY
from copilot_lsp.context.outline import Outline
from copilot_lsp.context.queries import IMPORTS
from copilot_lsp.context.snippets import outline_of, top_statements

__all__ = ["Imported", "Place", "parse", "statements_above"]

_COMMENT = re.compile(r"#[^\n]*")
_PY_IMPORT = re.compile(r"^import\s+(.+)$")
_PY_FROM = re.compile(r"^from\s+(\.*)\s*([\w.]*)\s+import\s+(.+)$")
_AS = re.compile(r"^([\w.*]+)(?:\s+as\s+(\w+))?$")
MAX_DECLARATION_BYTES = 600
"""A top-level declaration longer than this is no `require` import (not decoded)."""
_MORE: dict[str, frozenset[str]] = {
    "javascript": frozenset({"lexical_declaration", "variable_declaration"}),
    "typescript": frozenset({"lexical_declaration", "variable_declaration"}),
    "rust": frozenset({"mod_item"}),
}
"""Top-level statements that import in some forms only: `const x = require("./y")`,
Rust's `mod x;` (a body-less module declaration)."""
_GUARDS = frozenset({"if_statement", "try_statement"})
"""Python statements whose blocks may import: `if TYPE_CHECKING:` (how typed code names
other modules' classes in its annotations), `try: import x` / `except ImportError:`."""
_CLAUSES = frozenset(
    {"block", "elif_clause", "else_clause", "except_clause", "finally_clause", *_GUARDS}
)
MAX_GUARD_DEPTH = 4


def statements_above(syntax: tree_sitter.Tree | Outline, language_id: str, line: int) -> list[str]:
    """The top-level import statements that start above `line`, in order (those in an
    ERROR node the parser wrapped them in too: `top_statements`)."""
    family = FAMILY.get(language_id, "")
    wanted = IMPORTS.get(family, frozenset())
    more = _MORE.get(family, frozenset())
    found: list[str] = []
    for block in outline_of(syntax).blocks:
        for kind, node in top_statements(block):
            if node.start_point[0] + block.row >= line:
                return found
            if family == "python" and kind in _GUARDS:
                found += _guarded(node, block.source, wanted, MAX_GUARD_DEPTH)
            elif kind in wanted or (kind in more and _may_import(kind, node)):
                text = block.source[node.start_byte : node.end_byte].decode("utf-8", "replace")
                if kind in wanted or kind == "mod_item" or "require(" in text:
                    found.append(text)
    return found


def _guarded(
    node: tree_sitter.Node, source: bytes, wanted: frozenset[str], depth: int
) -> list[str]:
    """The import statements in the blocks of a top-level `if` or `try` (nested ones too,
    `depth` levels at most), in order; other statements are not entered."""
    found: list[str] = []
    for child in node.named_children:
        if child.type in wanted:
            found.append(source[child.start_byte : child.end_byte].decode("utf-8", "replace"))
        elif child.type in _CLAUSES and depth > 0:
            found += _guarded(child, source, wanted, depth - 1)
    return found


def _may_import(kind: str, node: tree_sitter.Node) -> bool:
    """Whether a statement of `kind` is worth decoding to see if it imports."""
    if kind == "mod_item":
        return node.child_by_field_name("body") is None
    return node.end_byte - node.start_byte <= MAX_DECLARATION_BYTES


def parse(
    statement: str, language_id: str, relative: str | None, place: Place | None = None
) -> list[Imported]:
    """What `statement` binds in the file at `relative` (its path under the workspace folder;
    None: outside every folder, where only absolute Python imports resolve). `place` (the
    file with its workspace folder) lets Go, Rust and tsconfig paths resolve through the
    project files."""
    family = FAMILY.get(language_id, "")
    if family == "python":
        module = module_name(relative, language_id) if relative else None
        package = bool(relative) and posixpath.basename(relative or "") == "__init__.py"
        if relative == "__init__.py":
            module = ""  # the workspace folder's own package
        return _python(statement, module, package)
    if family in ("javascript", "typescript") and relative:
        paths = place.files.script_paths(place.root, relative) if place is not None else None
        return imports_script.parse(statement, relative, paths)
    if family == "go" and place is not None:
        return imports_go.parse(statement, place)
    if family == "rust" and place is not None:
        return imports_rust.parse(statement, place)
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
    if base is None or not (base or dots):
        return found
    for part in names.split(","):
        named = _AS.match(part.strip())
        if named:
            member = named.group(1)
            binding = named.group(2) or member
            if member != "*":
                submodule = f"{base}.{member}" if base else member
                found.append(Imported(base, binding, member, submodule=submodule))
            elif base:  # `from . import *` at the top: the folder's package is not indexed
                found.append(Imported(base, binding))
    return found


def _relative(level: int, name: str, module: str | None, package: bool) -> str | None:
    """The absolute name of `from <level dots><name> import …` in `module` ("" the top
    package itself; None when it climbs above the workspace folder). The top matters when
    the workspace folder is a package (`from . import nodes` in `jinja2/parser.py` opened as
    `parser.py`): the names it imports are modules of the folder."""
    if module is None:
        return None
    parts = module.split(".") if module else []
    if not package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    if name:
        parts.append(name)
    return ".".join(parts)
