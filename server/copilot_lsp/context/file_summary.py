"""What the workspace index keeps of one file: its definitions with their headers, its module
name, and windows of lines as identifier sets for similarity.

`summarize` parses with tree-sitter (the definition queries of context/queries.py); it runs
in the indexing process (context/indexer.py), never on the event loop, and what it returns is
plain data that pickles.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import tree_sitter

from copilot_lsp.context.bindings import python_bindings
from copilot_lsp.context.exports import ReExport, extra_symbols, reexports, refine
from copilot_lsp.context.languages import FAMILY, grammar
from copilot_lsp.context.outline import tree_source
from copilot_lsp.context.queries import DEFINITIONS, KEYWORDS
from copilot_lsp.context.snippets import definition_query, describe
from copilot_lsp.context.workspace_files import Limits, admitted, readable_size

logger = logging.getLogger(__name__)

WINDOW_LINES = 20
WINDOW_STRIDE = 10
MAX_WINDOWS = 400
"""Windows kept per file (the first 4,000 lines): similarity needs no more of one file."""
MIN_WINDOW_TOKENS = 4
MAX_WINDOW_CHARS = 4000
"""A longer window (20 lines of 200 characters on average: minified or generated code) is no
similar code worth a prompt, and would cost its keystroke a redaction and a token count."""
MAX_ASSIGNMENT_CHARS = 120

CONTAINERS = frozenset(
    {
        "class_definition",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "impl_item",
        "trait_item",
        "mod_item",
    }
)
"""Definitions whose members are part of what a file offers (a function's locals are not)."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    header: str
    """Its signature lines (context/snippets.py `header_of`)."""
    line: int
    top_level: bool
    """Defined at the top of the file (what `import m; m.name` reaches)."""
    container: str = ""
    """The class (impl, trait) it is a member of; "" at the top level."""


@dataclass(frozen=True, slots=True)
class Window:
    start: int
    """First line (0-based); the window is `WINDOW_LINES` lines from here."""
    begin: int
    end: int
    """Its text: `FileSummary.text[begin:end]`. Windows overlap by half, so each keeping its
    own text would keep every line twice (a fifth of the index's memory)."""
    tokens: tuple[str, ...]
    """Its identifiers, each once. A tuple, not a set: the index holds hundreds of thousands
    of windows (a frozenset of ~36 strings costs ~2 KiB, the tuple ~350 bytes), and a batch
    from the indexing process unpickles without hashing them."""


@dataclass(frozen=True, slots=True)
class FileSummary:
    relative: str
    """The path under its workspace folder (posix)."""
    language_id: str
    module: str | None
    """Python: the dotted module name; other languages: the path without its extension."""
    symbols: tuple[Symbol, ...]
    windows: tuple[Window, ...]
    reexports: tuple[ReExport, ...] = ()
    """JavaScript/TypeScript: the modules it re-exports from (context/exports.py)."""
    text: str = ""
    """The file's text as far as its windows reach."""
    bindings: tuple[str, ...] | None = None
    """Python: every name the module binds at its top (context/bindings.py); None where they
    cannot be known (or another language)."""

    def window_text(self, window: Window) -> str:
        return self.text[window.begin : window.end]


def tokens(text: str) -> frozenset[str]:
    """The identifiers of `text` similarity compares (three characters or more, no keyword),
    interned: one string per identifier however many windows hold it (a quarter of the
    index's memory on site-packages)."""
    return frozenset(
        sys.intern(word) for word in _IDENTIFIER.findall(text) if word.lower() not in KEYWORDS
    )


@functools.lru_cache(maxsize=4096)
def module_name(relative: str, language_id: str) -> str | None:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`, `pkg/__init__.py` -> `pkg`; for other languages the
    path without its extension, a folder's own module file standing for the folder
    (`src/util/index.ts` -> `src/util`, `src/a/mod.rs` -> `src/a`)."""
    path = PurePosixPath(relative)
    parts = list(path.with_suffix("").parts)
    if language_id != "python":
        own = "mod" if language_id == "rust" else "index"
        if parts and parts[-1] == own and len(parts) > 1:
            parts.pop()
        return "/".join(parts) or None
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def summarize(relative: str, language_id: str, text: str) -> FileSummary:
    """What the index keeps of `text`, the content of `relative` (a `language_id` file)."""
    symbols: list[Symbol] = []
    offered: tuple[ReExport, ...] = ()
    bound: tuple[str, ...] | None = None
    language = grammar(language_id)
    if language is not None:
        tree = tree_sitter.Parser(language).parse(text.encode("utf-8", "surrogatepass"))
        symbols = _symbols(tree, language_id)
        offered = reexports(tree.root_node, tree_source(tree), FAMILY.get(language_id, ""))
        if language_id == "python":
            names = python_bindings(tree.root_node, tree_source(tree))
            bound = tuple(map(sys.intern, names)) if names is not None else None
    module = module_name(relative, language_id)
    windows = _windows(text)
    kept = text[: max((window.end for window in windows), default=0)]
    return FileSummary(relative, language_id, module, tuple(symbols), windows, offered, kept, bound)


def summarize_file(
    root: Path, relative: str, language_id: str, text: str | None, check: bool, limits: Limits
) -> FileSummary | None:
    """`summarize` of a file: of `text` when the editor has it open, else read from disk.
    With `check`, only when the file passes discovery's rules (it was not discovered: it was
    created, saved or opened since). None: the file is gone, unreadable or not admitted."""
    if check and not admitted(root, relative, limits):
        return None
    if text is None:
        size = readable_size(root / relative)
        if size is None or size > limits.max_file_bytes:
            return None
        try:
            text = (root / relative).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    elif len(text) > limits.max_file_bytes:
        return None
    return summarize(relative, language_id, text)


def _symbols(tree: tree_sitter.Tree, language_id: str) -> list[Symbol]:
    query = definition_query(language_id)
    found: list[Symbol] = []
    if query is None:
        return found
    family = FAMILY.get(language_id, "")
    kinds = DEFINITIONS.get(family, {})
    source = tree_source(tree)
    for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        node = captures["definition"][0]
        container = _container(node, kinds, source)
        if container is None:
            continue  # local to a function
        name, header = describe(node, captures["name"][0], source)
        header, container = refine(node, header, container, source, family)
        found.append(Symbol(name, header, node.start_point[0], not container, container))
    if language_id == "python":
        found += _assignments(tree.root_node, source)
    for name, header, line in extra_symbols(tree.root_node, source, family):
        found.append(Symbol(name, header, line, True))
    found.sort(key=lambda symbol: symbol.line)
    return found


def _container(node: tree_sitter.Node, kinds: dict[str, str], source: bytes) -> str | None:
    """The name of the class (impl, trait) `node` is a member of, "" at the top level, None
    inside a function."""
    names: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in kinds:
            if parent.type not in CONTAINERS:
                return None
            field = parent.child_by_field_name(kinds[parent.type])
            if field is not None:
                names.append(source[field.start_byte : field.end_byte].decode("utf-8", "replace"))
        parent = parent.parent
    return ".".join(reversed(names))


def _assignments(root: tree_sitter.Node, source: bytes) -> list[Symbol]:
    """Top-level `NAME = …` of a Python module: its first line, as part of the module's API."""
    found: list[Symbol] = []
    for statement in root.children:
        if statement.type != "expression_statement" or not statement.named_children:
            continue
        assignment = statement.named_children[0]
        left = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
        if left is None or left.type != "identifier":
            continue
        name = source[left.start_byte : left.end_byte].decode("utf-8", "replace")
        line = source[statement.start_byte : statement.end_byte].split(b"\n", 1)[0]
        header = line.decode("utf-8", "replace").rstrip()[:MAX_ASSIGNMENT_CHARS]
        found.append(Symbol(name, header, statement.start_point[0], True))
    return found


def _windows(text: str) -> tuple[Window, ...]:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    windows: list[Window] = []
    last_start = max(0, len(lines) - WINDOW_LINES)
    starts = list(range(0, last_start + 1, WINDOW_STRIDE))
    if starts[-1] != last_start:
        starts.append(last_start)  # the file's last lines too
    for start in starts[:MAX_WINDOWS]:
        begin = offsets[start]
        end = min(offsets[min(start + WINDOW_LINES, len(lines))] - 1, len(text))
        body = text[begin:end]
        if len(body) > MAX_WINDOW_CHARS:
            continue
        found = tokens(body)
        if len(found) >= MIN_WINDOW_TOKENS:
            stripped = body.strip("\n")  # its blank first and last lines are not its text
            begin += len(body) - len(body.lstrip("\n"))
            windows.append(Window(start, begin, begin + len(stripped), tuple(found)))
    return tuple(windows)


Item = tuple[str, str, str, "str | None", bool]
"""(folder, relative path, language id, the open text or None, check): one file to summarize
(`summarize_file`'s arguments but the limits), as it crosses to the indexing process."""


def summarize_batch(items: list[Item], limits: Limits) -> list[FileSummary | None]:
    """`summarize_file` of each item; a file that fails is None (left out of the index)."""
    found: list[FileSummary | None] = []
    for folder, relative, language_id, text, check in items:
        try:
            found.append(summarize_file(Path(folder), relative, language_id, text, check, limits))
        except Exception:  # one odd file costs itself, never the batch
            logger.debug("could not index %s", relative, exc_info=True)
            found.append(None)
    return found
