"""What the workspace index offers one cursor: code from other files, most useful first.

1. the file's imports followed to the indexed modules (context/follow.py): a module's public
   API (names and signatures) for `import pkg.mod as m`, the definition for
   `from pkg.x import f`; in Python, JavaScript/TypeScript, Go and Rust (context/imports.py);
2. definitions of names used near the cursor, wherever the index found them;
3. windows of other files most like the lines above the cursor (BM25 of identifiers).

Everything is chosen from the text above the cursor's line and kept for that line
(`Retriever`): typing on one line never changes what the prompt's head carries from other
files, so vLLM's prefix cache keeps serving it. Each source stops at the deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tree_sitter

from copilot_lsp.context import imports as importing
from copilot_lsp.context.file_summary import tokens
from copilot_lsp.context.follow import CrossFile, files_of, follow
from copilot_lsp.context.members import Members, members_at
from copilot_lsp.context.module_api import module_api, stub
from copilot_lsp.context.outline import Outline
from copilot_lsp.context.project_files import ProjectFiles
from copilot_lsp.context.repo_index import RepoIndex, root_of
from copilot_lsp.context.shadowing import local_imports, rebound
from copilot_lsp.context.snippets import names_near
from copilot_lsp.context.topic import topic_of

__all__ = ["CrossFile", "Cursor", "Members", "Retrieve", "Retriever", "gather", "module_api"]
NAMES_CHARS = 1500
"""Characters above the cursor's line whose names are looked up."""
USE_CHARS = 3000
"""Characters above the cursor's line searched for uses of the imported names."""
QUERY_LINES = 20
"""Lines above the cursor's line that similar windows, and the names of an imported module
too large to list whole, are ranked against."""
MAX_DEFINITIONS = 8
AMBIGUOUS = 3
"""A name defined in more files than this is looked up only in the imported modules."""
SIMILAR = 3
MIN_SIMILARITY = 0.15
"""A window scoring less (BM25 over the score of an average window holding the whole query:
context/repo_index.py) is left out. Chosen on the dev tasks of `bench crossfile
--similarity` to keep as many windows per task as Jaccard over 0.12 did (2.0), where BM25
ties with it (a window of the defining module 0.220 against 0.217) and wins on the held-out
tasks (0.203 against 0.177; one naming the API 0.397 against 0.353)."""
JACCARD_FLOOR = 0.12
"""Jaccard's floor, when it ranked similar code (bench crossfile --similarity compares)."""


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
    folder: Path | None = None
    """Its workspace folder, where the project files that resolve imports are."""
    indent: int = 0
    """The cursor line's indentation (which functions it is in: their imports count)."""

    @property
    def root(self) -> str | None:
        """Its workspace folder's URI, as the index keys folders (`root_of`)."""
        return root_of(self.uri, self.relative) if self.relative is not None else None


Retrieve = Callable[[float], list[CrossFile]]
"""The cross-file code for one request, given the deadline (`time.perf_counter()` seconds)."""


PROVISIONAL_S = 1.0
"""While the index is being built, a line's cross-file code is gathered again at most this
often. The index changes with every batch of the first pass: gathering on each keystroke
doubled the server's cost per keystroke while a large workspace was indexed (bench index,
20,000 files: p99 34.9 ms against 24.4 before provisional results)."""


class Retriever:
    """Cross-file code per cursor line, computed once per line of each document.

    What was found while the index was still being built is provisional: once the index has
    changed since, the line is retrieved again (a line typed on during the first pass would
    otherwise keep the little, or nothing, that was indexed then until the cursor left it):
    at once when the index has settled, else after PROVISIONAL_S.
    """

    def __init__(
        self,
        index: RepoIndex,
        settled: Callable[[], bool] = lambda: True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`settled` says whether the index has everything it was asked to hold (its indexer
        is idle)."""
        self.index = index
        self.settled = settled
        self.clock = clock
        self.project = ProjectFiles()
        """go.mod, Cargo.toml, tsconfig.json: read once, until `project_changed`."""
        self._kept: dict[str, _Kept] = {}
        self._bound: dict[str, tuple[LineKey, list[importing.Imported]]] = {}
        """Per document, the imports above its cursor's line, for that line."""
        self._shadowed: dict[str, tuple[tuple[LineKey, int, str, str], bool]] = {}
        """Per document, whether the name before the dot is bound other than by its import."""

    def forget(self, uri: str) -> None:
        self._kept.pop(uri, None)
        self._bound.pop(uri, None)
        self._shadowed.pop(uri, None)

    def project_changed(self) -> None:
        """A project file changed: imports may lead elsewhere from now on."""
        self.project.forget()
        self._kept.clear()
        self._bound.clear()

    def members(self, cursor: Cursor, line_before: str, text: str) -> Members | None:
        """The names that may follow the dot the cursor's line ends with, when certain
        (context/members.py); `text` is the whole document."""
        if cursor.language_id != "python" or "." not in line_before:
            return None
        # What binds a name depends on the text but the rest of the cursor's line: the
        # answer holds while the user types on after the dot.
        after = text.find("\n", len(cursor.above))
        below = hash(text[after:]) if after >= 0 else 0

        def shadowed(name: str, before: str) -> bool:
            key = (_line_key(cursor), below, before, name)
            known = self._shadowed.get(cursor.uri)
            if known is None or known[0] != key:
                known = (key, rebound(name, text, cursor.line))
                self._shadowed[cursor.uri] = known
            return known[1]

        return members_at(
            self.index,
            self._imports(cursor),
            cursor.language_id,
            line_before,
            text,
            cursor.line,
            cursor.root,
            cursor.folder,
            shadowed,
        )

    def _imports(self, cursor: Cursor) -> list[importing.Imported]:
        """What the imports above the cursor's line bind, read once per line."""
        key = _line_key(cursor)
        kept = self._bound.get(cursor.uri)
        if kept is None or kept[0] != key:
            kept = key, _imported(cursor, _place(cursor, self.project))
            self._bound[cursor.uri] = kept
        return kept[1]

    def lazy(self, cursor: Cursor) -> Retrieve:
        key = _line_key(cursor)

        def get(deadline: float) -> list[CrossFile]:
            kept = self._kept.get(cursor.uri)
            if kept is not None and kept.key == key and not self._stale(kept):
                return kept.found
            generation, settled = self.index.generation, self.settled()
            bound = self._imports(cursor) if len(self.index) else None
            found, complete = gather(self.index, cursor, deadline, self.project, bound)
            if complete:  # a list cut short is not kept: the next keystroke tries again
                self._kept[cursor.uri] = _Kept(key, found, generation, settled, self.clock())
            return found

        return get

    def _stale(self, kept: _Kept) -> bool:
        if kept.settled or kept.generation == self.index.generation:
            return False
        return self.settled() or self.clock() - kept.at >= PROVISIONAL_S


LineKey = tuple[int, int, int]
"""A cursor's line as what is read for it depends on it: its number, the text above it and
its indentation."""


def _line_key(cursor: Cursor) -> LineKey:
    return (cursor.line, hash(cursor.above), cursor.indent)


def _place(cursor: Cursor, project: ProjectFiles | None) -> importing.Place | None:
    """The importing file as imports resolve it; None outside every workspace folder."""
    if cursor.folder is None or cursor.relative is None:
        return None
    return importing.Place(cursor.folder, cursor.relative, project or ProjectFiles())


@dataclass(frozen=True, slots=True)
class _Kept:
    key: LineKey
    found: list[CrossFile]
    generation: int
    """The index's generation when `found` was gathered."""
    settled: bool
    """Whether the index was complete then; if not, `found` holds until the index changes."""
    at: float
    """When `found` was gathered (the retriever's clock)."""


def gather(
    index: RepoIndex,
    cursor: Cursor,
    deadline: float,
    project: ProjectFiles | None = None,
    bound: list[importing.Imported] | None = None,
) -> tuple[list[CrossFile], bool]:
    """(the cross-file code for `cursor`, in order of usefulness; whether every source ran to
    its end before `deadline`). `project` keeps the project files read (None: read afresh);
    `bound`: what the imports above the cursor bind, when the caller has read them."""
    found: list[CrossFile] = []
    if not len(index):
        return found, True
    place = _place(cursor, project)
    if bound is None:
        bound = _imported(cursor, place)
    query = query_text(cursor.above)
    sources: tuple[Callable[[], list[CrossFile]], ...] = (
        lambda: _from_imports(index, cursor, bound, place, deadline, query),
        lambda: _definitions(index, cursor, bound, deadline),
        lambda: _similar(index, cursor, query),
    )
    for source in sources:
        if time.perf_counter() > deadline:
            return found, False
        for item in source():
            if not any(item.path == kept.path and item.text in kept.text for kept in found):
                found.append(item)  # a header the module's API carried already adds nothing
    return found, time.perf_counter() <= deadline


def _imported(cursor: Cursor, place: importing.Place | None) -> list[importing.Imported]:
    if cursor.syntax is None:
        return []
    statements = importing.statements_above(cursor.syntax, cursor.language_id, cursor.line)
    if cursor.language_id == "python":
        statements += local_imports(cursor.above, cursor.indent)
    found: list[importing.Imported] = []
    for statement in statements:
        found += importing.parse(statement, cursor.language_id, cursor.relative, place)
    return found


def _from_imports(
    index: RepoIndex,
    cursor: Cursor,
    bound: list[importing.Imported],
    place: importing.Place | None,
    deadline: float,
    query: str,
) -> list[CrossFile]:
    """Each import that reaches an indexed file, the one used nearest above first; a
    module's names ranked by what `query` (`query_text`) is about."""
    near = cursor.above[-USE_CHARS:]

    def last_use(imported: importing.Imported) -> int:
        return _last_use(near, imported.binding.split(".", 1)[0])

    ranked = sorted(enumerate(bound), key=lambda pair: (-last_use(pair[1]), pair[0]))
    found: list[CrossFile] = []
    root = cursor.root
    topic = topic_of(query)
    for _, imported in ranked:
        if time.perf_counter() > deadline:
            break
        for item in follow(index, imported, cursor.language_id, cursor.uri, place, root, topic):
            if item not in found:
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


def _definitions(
    index: RepoIndex, cursor: Cursor, bound: list[importing.Imported], deadline: float
) -> list[CrossFile]:
    """Definitions of the names used near the cursor, from the imported modules first."""
    root = cursor.root
    imported_uris = {
        file.uri for item in bound for file in files_of(index, item, cursor.language_id, root)
    }
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
        header = stub(owners[file.uri].header, file.language_id)
        found.append(CrossFile(file.path, header, "definition"))
    return found


def query_text(above: str) -> str:
    """The last QUERY_LINES lines of `above` (the text before the cursor's line): what the
    code being written is most likely about."""
    return "\n".join(above.rstrip("\n").rsplit("\n", QUERY_LINES)[-QUERY_LINES:])


def _similar(index: RepoIndex, cursor: Cursor, text: str) -> list[CrossFile]:
    query = tokens(text)
    if len(query) < 4:
        return []
    return [
        CrossFile(found.file.path, found.text, "similar code")
        for found in index.similar(query, exclude=(cursor.uri,), limit=SIMILAR)
        if found.score >= MIN_SIMILARITY
    ]
