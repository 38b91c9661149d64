"""What the workspace index offers one cursor: code from other files, most useful first.

1. the file's imports followed to the indexed modules: a module's public API (names and
   signatures) for `import pkg.mod as m`, the definition's header for `from pkg.x import f`;
2. definitions of names used near the cursor, wherever the index found them;
3. windows of other files most like the lines above the cursor (Jaccard of identifiers).

Everything is chosen from the text above the cursor's line and kept for that line
(`Retriever`): typing on one line never changes what the prompt's head carries from other
files, so vLLM's prefix cache keeps serving it. Each source stops at the deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import tree_sitter

from copilot_lsp.context import imports as importing
from copilot_lsp.context.file_summary import Symbol, tokens
from copilot_lsp.context.outline import Outline
from copilot_lsp.context.repo_index import IndexedFile, RepoIndex
from copilot_lsp.context.snippets import names_near

API_LINES = 40
"""Lines of one module's API at most."""
NAMES_CHARS = 1500
"""Characters above the cursor's line whose names are looked up."""
USE_CHARS = 3000
"""Characters above the cursor's line searched for uses of the imported names."""
QUERY_LINES = 20
"""Lines above the cursor's line that similar windows are ranked against."""
MAX_DEFINITIONS = 8
AMBIGUOUS = 3
"""A name defined in more files than this is looked up only in the imported modules."""
SIMILAR = 3
MIN_SIMILARITY = 0.12


@dataclass(frozen=True, slots=True)
class CrossFile:
    """Code from another file for the prompt."""

    path: str
    text: str
    kind: str


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the completion is, as far as retrieval reads it."""

    uri: str
    relative: str | None
    """The file's path under its workspace folder; None outside every folder."""
    language_id: str
    above: str
    """The text before the cursor's line."""
    line: int
    syntax: tree_sitter.Tree | Outline | None = None


Retrieve = Callable[[float], list[CrossFile]]
"""The cross-file code for one request, given the deadline (`time.perf_counter()` seconds)."""


class Retriever:
    """Cross-file code per cursor line, computed once per line of each document."""

    def __init__(self, index: RepoIndex) -> None:
        self.index = index
        self._kept: dict[str, tuple[tuple[int, int], list[CrossFile]]] = {}

    def forget(self, uri: str) -> None:
        self._kept.pop(uri, None)

    def lazy(self, cursor: Cursor) -> Retrieve:
        key = (cursor.line, hash(cursor.above))

        def get(deadline: float) -> list[CrossFile]:
            kept = self._kept.get(cursor.uri)
            if kept is not None and kept[0] == key:
                return kept[1]
            found, complete = gather(self.index, cursor, deadline)
            if complete:  # a list cut short is not kept: the next keystroke tries again
                self._kept[cursor.uri] = (key, found)
            return found

        return get


def gather(index: RepoIndex, cursor: Cursor, deadline: float) -> tuple[list[CrossFile], bool]:
    """(the cross-file code for `cursor`, in order of usefulness; whether every source ran to
    its end before `deadline`)."""
    found: list[CrossFile] = []
    if not len(index):
        return found, True
    bound = _imported(cursor)
    sources: tuple[Callable[[], list[CrossFile]], ...] = (
        lambda: _from_imports(index, cursor, bound),
        lambda: _definitions(index, cursor, bound, deadline),
        lambda: _similar(index, cursor),
    )
    for source in sources:
        if time.perf_counter() > deadline:
            return found, False
        for item in source():
            if item not in found:
                found.append(item)
    return found, time.perf_counter() <= deadline


def _imported(cursor: Cursor) -> list[importing.Imported]:
    if cursor.syntax is None:
        return []
    statements = importing.statements_above(cursor.syntax, cursor.language_id, cursor.line)
    found: list[importing.Imported] = []
    for statement in statements:
        found += importing.parse(statement, cursor.language_id, cursor.relative)
    return found


def _from_imports(
    index: RepoIndex, cursor: Cursor, bound: list[importing.Imported]
) -> list[CrossFile]:
    """Each import that reaches an indexed file, the one used nearest above first."""
    near = cursor.above[-USE_CHARS:]

    def last_use(imported: importing.Imported) -> int:
        return _last_use(near, imported.binding.split(".", 1)[0])

    ranked = sorted(enumerate(bound), key=lambda pair: (-last_use(pair[1]), pair[0]))
    found: list[CrossFile] = []
    for _, imported in ranked:
        item = _follow(index, cursor, imported)
        if item is not None and item not in found:
            found.append(item)
    return found


def _last_use(text: str, name: str) -> int:
    """Where `text` last uses `name` as a whole name (-1: nowhere)."""
    at = text.rfind(name)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(name)] if at + len(name) < len(text) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return at
        at = text.rfind(name, 0, at)
    return -1


def _follow(index: RepoIndex, cursor: Cursor, imported: importing.Imported) -> CrossFile | None:
    module = index.module(imported.module)
    if imported.name is not None:
        submodule = index.module(f"{imported.module}.{imported.name}")
        if submodule is not None and submodule.uri != cursor.uri:
            return CrossFile(submodule.path, module_api(submodule), "imported module")
        if module is None or module.uri == cursor.uri:
            return None
        symbol = index.definitions(imported.name).get(module.uri)
        if symbol is None:
            return None
        return CrossFile(module.path, _stub(symbol.header, module), "definition")
    if module is None or module.uri == cursor.uri:
        return None
    return CrossFile(module.path, module_api(module), "imported module")


def module_api(file: IndexedFile, max_lines: int = API_LINES) -> str:
    """The public names of a module with their signatures, members under their class."""
    symbols = file.summary.symbols
    public_classes = {s.name for s in symbols if s.top_level and _public(s.name)}
    lines: list[str] = []
    for symbol in symbols:
        if symbol.top_level and _public(symbol.name):
            lines += _stub(symbol.header, file, members=_has_members(symbol, symbols)).split("\n")
        elif symbol.container in public_classes and _public(symbol.name, member=True):
            lines += ["    " + line for line in _stub(symbol.header, file).split("\n")]
        if len(lines) >= max_lines:
            break
    return "\n".join(lines[:max_lines])


def _has_members(symbol: Symbol, symbols: tuple[Symbol, ...]) -> bool:
    return any(other.container == symbol.name for other in symbols)


def _public(name: str, member: bool = False) -> bool:
    return not name.startswith("_") or (member and name == "__init__")


def _stub(header: str, file: IndexedFile, members: bool = False) -> str:
    """A Python header as a stub line (`def f(x): ...`), so that it reads as valid code."""
    if file.language_id == "python" and header.endswith(":") and not members:
        return header + " ..."
    return header


def _definitions(
    index: RepoIndex, cursor: Cursor, bound: list[importing.Imported], deadline: float
) -> list[CrossFile]:
    """Definitions of the names used near the cursor, from the imported modules first."""
    imported_uris = {file.uri for item in bound if (file := index.module(item.module)) is not None}
    found: list[CrossFile] = []
    for name in names_near(cursor.above[-NAMES_CHARS:]):
        if len(found) >= MAX_DEFINITIONS or time.perf_counter() > deadline:
            break
        owners = {uri: s for uri, s in index.definitions(name).items() if uri != cursor.uri}
        if not owners or cursor.uri in index.definitions(name):
            continue  # defined in this file: the prompt has it already
        preferred = sorted(uri for uri in owners if uri in imported_uris)
        if not preferred and len(owners) > AMBIGUOUS:
            continue
        candidates = preferred or sorted(owners, key=lambda uri: (len(index.files[uri].path), uri))
        file = index.files[candidates[0]]
        found.append(CrossFile(file.path, _stub(owners[file.uri].header, file), "definition"))
    return found


def _similar(index: RepoIndex, cursor: Cursor) -> list[CrossFile]:
    lines = cursor.above.rstrip("\n").split("\n")[-QUERY_LINES:]
    query = tokens("\n".join(lines))
    if len(query) < 4:
        return []
    return [
        CrossFile(found.file.path, found.window.text, "similar code")
        for found in index.similar(query, exclude=(cursor.uri,), limit=SIMILAR)
        if found.score >= MIN_SIMILARITY
    ]
