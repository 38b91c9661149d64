"""Snippets for the prompt: the file's imports, the enclosing definitions' headers, and the
definitions of names used near the cursor that other open documents hold.

Each source runs under its own deadline; a slow or failing source costs its snippets,
never the completion.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import tree_sitter

from copilot_lsp.context.languages import FAMILY
from copilot_lsp.context.outline import Block, Outline, tree_source, whole
from copilot_lsp.context.queries import BODY_FIELDS, DEFINITIONS, IMPORTS, KEYWORDS

logger = logging.getLogger(__name__)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    header: str
    """The definition's first lines: its signature (and docstring, when short)."""
    start_line: int


Definitions = Mapping[str, list[Definition]]
"""A document's definitions by name, each name's in file order."""


MAX_HEADER_BYTES = 2000
MAX_ERROR_DEPTH = 2
"""ERROR nodes entered, one inside the other, looking for the statements they hold."""


def header_of(node: tree_sitter.Node, source: bytes | None = None, max_lines: int = 8) -> str:
    """A definition's text up to its body (its signature), at most `max_lines` lines.

    A longer signature (a parameter per line, as formatters write them) keeps its first
    lines, an elision line (`...`) and its last line, the one that closes it (`) -> T:`), so
    that it still reads as one signature. `source` (the whole file's bytes) saves copying the
    node's full text, which for a large class is most of the file.
    """
    body = None
    for field in BODY_FIELDS:
        body = node.child_by_field_name(field)
        if body is not None:
            break
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else None
    stop = end if end is not None else node.end_byte
    if source is None:
        raw = node.text or b""
        raw = raw[: end - node.start_byte] if end is not None else raw
    else:
        raw = source[node.start_byte : min(stop, node.start_byte + MAX_HEADER_BYTES)]
    lines = [line.rstrip() for line in raw.decode("utf-8", "replace").rstrip().split("\n")]
    whole = end is not None and stop - node.start_byte <= MAX_HEADER_BYTES
    if len(lines) > max_lines >= 3 and whole:
        dropped = lines[max_lines - 2]
        indent = dropped[: len(dropped) - len(dropped.lstrip())]
        return "\n".join([*lines[: max_lines - 2], f"{indent}...", lines[-1]])
    return "\n".join(lines[:max_lines])


def imports(syntax: tree_sitter.Tree | Outline, language_id: str, deadline: float) -> list[str]:
    """The import statements at the top level of the file, in order."""
    wanted = IMPORTS.get(FAMILY.get(language_id, ""), frozenset())
    found: list[str] = []
    for block in outline_of(syntax).blocks:
        for kind, node in top_statements(block):
            if time.perf_counter() > deadline:
                return found
            if kind in wanted:
                text = block.source[node.start_byte : node.end_byte]
                found.append(text.decode("utf-8", "replace"))
    return found


def top_statements(block: Block) -> Iterator[tuple[str, tree_sitter.Node]]:
    """(type, node) of the block's top-level statements, in order. Code being typed often
    leaves a bracket open (`def visit(self, node: nodes.`), and the parser may then wrap
    everything before it in one ERROR node: the statements inside one (MAX_ERROR_DEPTH deep)
    come as if they stood at the top."""
    yield from _flattened(zip(block.kinds, block.nodes, strict=True), MAX_ERROR_DEPTH)


def _flattened(
    statements: Iterable[tuple[str, tree_sitter.Node]], depth: int
) -> Iterator[tuple[str, tree_sitter.Node]]:
    for kind, node in statements:
        if kind == "ERROR" and depth > 0:
            yield from _flattened(((child.type, child) for child in node.named_children), depth - 1)
        else:
            yield kind, node


def enclosing_headers(
    syntax: tree_sitter.Tree | Outline, language_id: str, cursor_byte: int, deadline: float
) -> list[tuple[int, str]]:
    """(start line, header) of each definition around the cursor, outermost first."""
    kinds = DEFINITIONS.get(FAMILY.get(language_id, ""), {})
    found = outline_of(syntax).descendant_at(cursor_byte)
    if found is None:
        return []
    node: tree_sitter.Node | None = found[0]
    source, row = found[1].source, found[1].row
    headers: list[tuple[int, str]] = []
    while node is not None and time.perf_counter() <= deadline:
        if node.type in kinds:
            line_start = node.start_byte - node.start_point[1]
            indent = source[line_start : node.start_byte].decode("utf-8", "replace")
            indent = indent if not indent.strip() else ""
            headers.append((node.start_point[0] + row, indent + header_of(node, source)))
        node = node.parent
    return list(reversed(headers))


def outline_of(syntax: tree_sitter.Tree | Outline) -> Outline:
    """`syntax` as an outline (a tree is one parse of a whole text)."""
    return syntax if isinstance(syntax, Outline) else whole(syntax)


def prepare(language_id: str) -> None:
    """Compile the language's queries now (when a document opens) rather than inside the
    first completion's snippet deadline, which a cold compile on a busy machine outlasts."""
    definition_query(language_id)


@functools.cache
def definition_query(language_id: str) -> tree_sitter.Query | None:
    from copilot_lsp.context.languages import grammar

    kinds = DEFINITIONS.get(FAMILY.get(language_id, ""), {})
    language = grammar(language_id)
    if not kinds or language is None:
        return None
    patterns = " ".join(f"({kind} {field}: (_) @name) @definition" for kind, field in kinds.items())
    return tree_sitter.Query(language, patterns)


def describe(
    definition: tree_sitter.Node, name: tree_sitter.Node, source: bytes
) -> tuple[str, str]:
    """(name, header) of a definition the query matched."""
    text = source[name.start_byte : name.end_byte].decode("utf-8", "replace")
    return text, header_of(definition, source)


def definitions(
    tree: tree_sitter.Tree, language_id: str, deadline: float
) -> dict[str, list[Definition]]:
    """Every named definition in a tree, by name (a tree-sitter query, run in C)."""
    query = definition_query(language_id)
    index: dict[str, list[Definition]] = {}
    if query is None or time.perf_counter() > deadline:
        return index
    source = tree_source(tree)
    for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        if time.perf_counter() > deadline:
            break
        node = captures["definition"][0]
        name, header = describe(node, captures["name"][0], source)
        index.setdefault(name, []).append(Definition(name, header, node.start_point[0]))
    return index


def names_near(text: str) -> list[str]:
    """Identifiers in `text` worth looking up, nearest to its end first."""
    seen: dict[str, None] = {}
    for match in reversed(list(_IDENTIFIER.finditer(text))):
        word = match.group(0)
        if word.lower() not in KEYWORDS:
            seen.setdefault(word, None)
    return list(seen)


def lookup(
    names: Iterable[str], indexes: Iterable[tuple[str, Definitions]]
) -> Iterator[tuple[str, Definition]]:
    """(path, definition) for each name, first match per name."""
    indexes = list(indexes)
    for name in names:
        for path, index in indexes:
            found = index.get(name)
            if found:
                yield path, found[0]
                break
