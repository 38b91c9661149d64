"""What a file offers other files beyond what the definition queries (context/queries.py)
capture: Go's methods as members of their receiver's type, its `type`, `const` and `var`
declarations; JavaScript/TypeScript's `export` markers, exported constants and functions
bound with `const`, and re-exports (`export * from "./x"`, `export { a } from "./x"`, Rust's
`pub use`).

Runs inside `file_summary.summarize` (the indexing process); returns plain tuples.
"""

from __future__ import annotations

import re

import tree_sitter

MAX_LINE_CHARS = 120
MAX_USE_BYTES = 2000

ReExport = tuple[str, "tuple[tuple[str, str], ...] | None"]
"""(specifier, the names it re-exports as (exported, original) pairs; None: every name);
for Rust (a `pub use` item's text, None)."""

_SPECIFIER = re.compile(r"""from\s+['"]([^'"]+)['"]""")


def refine(
    node: tree_sitter.Node, header: str, container: str, source: bytes, family: str
) -> tuple[str, str]:
    """(header, container) of a definition the query matched, as other files see it: a Go
    type spec with its `type` keyword, a Go method under its receiver's type, a Rust
    constant without its value, a JS/TS definition with its `export` keyword."""
    if family == "go":
        if node.type == "type_spec":
            return "type " + header, container
        if node.type == "method_declaration":
            return header, _receiver(node, source)
    elif family == "rust" and node.type in ("const_item", "static_item"):
        return header.rstrip(" ="), container  # cut before its value
    elif family in ("javascript", "typescript") and not container:
        marker = _export_marker(node)
        return marker + header, container
    return header, container


def extra_symbols(root: tree_sitter.Node, source: bytes, family: str) -> list[tuple[str, str, int]]:
    """(name, header, line) of the top-level bindings the definition query does not match:
    Go's `const` and `var` specs; JS/TS `const f = (…) => …` and other top-level constants."""
    found: list[tuple[str, str, int]] = []
    for statement in root.children:
        if family == "go" and statement.type in ("const_declaration", "var_declaration"):
            keyword = "const" if statement.type == "const_declaration" else "var"
            for spec in statement.named_children:
                if spec.type not in ("const_spec", "var_spec"):
                    continue
                line = _first_line(spec, source)
                for name in spec.children_by_field_name("name"):
                    found.append((_text(name, source), f"{keyword} {line}", spec.start_point[0]))
        elif family in ("javascript", "typescript"):
            declaration, marker = statement, ""
            if statement.type == "export_statement":
                inner = statement.child_by_field_name("declaration")
                if inner is None:
                    continue
                declaration, marker = inner, "export "
            if declaration.type not in ("lexical_declaration", "variable_declaration"):
                continue
            line = _first_line(declaration, source)
            if "require(" in line:
                continue  # an import, not a definition
            for declarator in declaration.named_children:
                bound = declarator.child_by_field_name("name")
                if (
                    declarator.type == "variable_declarator"
                    and bound
                    and bound.type == "identifier"
                ):
                    found.append((_text(bound, source), marker + line, declaration.start_point[0]))
    return found


def reexports(root: tree_sitter.Node, source: bytes, family: str) -> tuple[ReExport, ...]:
    """The module's `export … from "…"` statements; in Rust its `pub use` items, each as
    (its text, None) for context/imports_rust.py to read where it is followed."""
    if family == "rust":
        return tuple(
            (_text(item, source), None)
            for item in root.children
            if item.type == "use_declaration"
            and any(child.type == "visibility_modifier" for child in item.children)
            and item.end_byte - item.start_byte <= MAX_USE_BYTES
        )
    if family not in ("javascript", "typescript"):
        return ()
    found: list[ReExport] = []
    for statement in root.children:
        if statement.type != "export_statement" or statement.child_by_field_name("source") is None:
            continue
        text = " ".join(_text(statement, source).split())
        match = _SPECIFIER.search(text)
        if match is None:
            continue
        names: list[tuple[str, str]] = []
        every = False
        for child in statement.named_children:
            if child.type == "export_clause":
                for spec in child.named_children:
                    original = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias") or original
                    if original is not None and alias is not None:
                        names.append((_text(alias, source), _text(original, source)))
            elif child.type == "namespace_export":
                names += [(_text(name, source), "*") for name in child.named_children]
        if not names and "*" in text.split(" from ", 1)[0]:
            every = True
        found.append((match.group(1), None if every else tuple(names)))
    return tuple(found)


def _export_marker(node: tree_sitter.Node) -> str:
    parent = node.parent
    if parent is None or parent.type != "export_statement":
        return ""
    default = any(child.type == "default" for child in parent.children)
    return "export default " if default else "export "


def _receiver(node: tree_sitter.Node, source: bytes) -> str:
    """The name of a Go method's receiver type (`(p *Point[T])` -> `Point`)."""
    receiver = node.child_by_field_name("receiver")
    stack = [receiver] if receiver is not None else []
    while stack:
        current = stack.pop(0)
        if current.type == "type_identifier":
            return _text(current, source)
        if current.type != "identifier":  # the receiver's own name is not its type
            stack += current.named_children
    return ""


def _first_line(node: tree_sitter.Node, source: bytes) -> str:
    line = source[node.start_byte : node.end_byte].split(b"\n", 1)[0]
    return line.decode("utf-8", "replace").rstrip()[:MAX_LINE_CHARS]


def _text(node: tree_sitter.Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
