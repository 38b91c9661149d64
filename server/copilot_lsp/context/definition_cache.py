"""A document's definitions, kept current keystroke by keystroke.

Two levels of reuse. Subtrees are known by their type and text (tree-sitter's node ids do
not survive a re-parse): what a subtree defines is found once and looked up afterwards,
wherever the subtree moved. And the top-level subtrees outside the span the edits since the
last call touched (the document's `EditLog`) are not visited at all: a keystroke in a
5,000-line file re-searches the one function it is in and shifts the rest, instead of
hashing and re-indexing hundreds of top-level definitions.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import tree_sitter

from copilot_lsp.context.languages import FAMILY
from copilot_lsp.context.outline import Block, Outline, Top
from copilot_lsp.context.queries import DEFINITIONS
from copilot_lsp.context.snippets import Definition, definition_query, describe, outline_of
from copilot_lsp.context.syntax import EditLog

CHUNK_BYTES = 4096
"""Subtrees at most this large are searched with the query in one go; larger changed ones
are opened up so that an edit inside a 3,000-line class re-searches one method, not the class."""

FULL_PASS_EVERY = 256
"""Incremental updates between complete passes, which drop subtrees no longer in the text."""


@dataclass(frozen=True, slots=True)
class _Found:
    name: str
    header: str
    row: int
    """Relative to the first row of the subtree it was found in."""


_Key = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class _Chunk:
    found: list[_Found]
    parts: tuple[_Key, ...]
    """The keys of the children a large subtree was opened into: kept when it is kept."""


@dataclass(slots=True, eq=False)
class _Top:
    """A top-level subtree: where it is now and what it defines (equal only to itself)."""

    key: _Key
    start: int
    end: int
    row: int
    found: list[_Found]


class DefinitionCache:
    """What one document's definitions were built from, kept between calls."""

    __slots__ = ("by_name", "chunks", "generation", "tops", "unsorted", "updates")

    def __init__(self) -> None:
        self.chunks: dict[_Key, _Chunk] = {}
        self.tops: list[_Top] = []
        self.by_name: dict[str, list[tuple[_Top, int]]] = {}
        """(subtree, index in its `found`) per name, in file order unless in `unsorted`."""
        self.unsorted: set[str] = set()
        self.generation: int | None = None
        """The edit log's generation `tops` describe; None: no complete pass yet."""
        self.updates = 0
        """Incremental updates since the last complete pass."""


class FileDefinitions(Mapping[str, list[Definition]]):
    """A document's definitions by name, in file order: a view on its cache, valid until
    the cache changes (the next call for a newer version of the document)."""

    __slots__ = ("_cache", "_tops")

    def __init__(self, cache: DefinitionCache) -> None:
        self._cache = cache
        self._tops = cache.tops

    def _by_name(self) -> dict[str, list[tuple[_Top, int]]]:
        if self._cache.tops is not self._tops:
            raise RuntimeError("these definitions are out of date: the document changed since")
        return self._cache.by_name

    def __getitem__(self, name: str) -> list[Definition]:
        pairs = self._sorted(self._by_name()[name], name)
        return [
            Definition(name, top.found[at].header, top.row + top.found[at].row) for top, at in pairs
        ]

    def first_outside(self, name: str, first: int, last: int) -> Definition | None:
        """`self[name]`'s first definition not starting on lines `first`..`last` (None: no
        such one), without building the others (a name like `run` may have hundreds)."""
        pairs = self._by_name().get(name)
        for top, at in self._sorted(pairs, name) if pairs else ():
            found = top.found[at]
            line = top.row + found.row
            if not first <= line <= last:
                return Definition(name, found.header, line)
        return None

    def _sorted(self, pairs: list[tuple[_Top, int]], name: str) -> list[tuple[_Top, int]]:
        if name in self._cache.unsorted:
            # In place: edits move subtrees but never reorder them, so it stays sorted.
            pairs.sort(key=lambda pair: (pair[0].start, pair[1]))
            self._cache.unsorted.discard(name)
        return pairs

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name())

    def __len__(self) -> int:
        return len(self._by_name())

    def __contains__(self, name: object) -> bool:
        return name in self._by_name()


EMPTY: Mapping[str, list[Definition]] = {}


class _DeadlinePassed(Exception):
    pass


class _Restructured(Exception):
    """The tree around the edits is not shaped as expected: do a complete pass."""


class _Search:
    """One call's search of subtrees, through the content-keyed chunks."""

    def __init__(self, language_id: str, deadline: float, cache: DefinitionCache) -> None:
        query = definition_query(language_id)
        assert query is not None
        self.query = query
        self.kinds = DEFINITIONS.get(FAMILY.get(language_id, ""), {})
        self.deadline = deadline
        self.cache = cache
        self.fresh: dict[_Key, _Chunk] = {}

    def keep(self, key: _Key, chunk: _Chunk) -> None:
        self.fresh[key] = chunk
        for part in chunk.parts:
            if part not in self.fresh:
                self.keep(part, self.cache.chunks[part])

    @staticmethod
    def _named(
        definition: tree_sitter.Node, name: tree_sitter.Node, row: int, source: bytes
    ) -> _Found:
        return _Found(*describe(definition, name, source), definition.start_point[0] - row)

    def collect(self, node: tree_sitter.Node, source: bytes) -> tuple[_Key, _Chunk]:
        """What `node` defines (`source`: the bytes its positions index into)."""
        size = node.end_byte - node.start_byte
        key = (node.type, size, hash(source[node.start_byte : node.end_byte]))
        chunk = self.cache.chunks.get(key) or self.fresh.get(key)
        if chunk is not None:
            self.keep(key, chunk)
            return key, chunk
        if time.perf_counter() > self.deadline:
            raise _DeadlinePassed
        first_row = node.start_point[0]
        found: list[_Found] = []
        parts: list[_Key] = []
        if size <= CHUNK_BYTES or node.child_count == 0:
            for _, captures in tree_sitter.QueryCursor(self.query).matches(node):
                definition, named = captures["definition"][0], captures["name"][0]
                found.append(self._named(definition, named, first_row, source))
        else:
            field = self.kinds.get(node.type)
            name = node.child_by_field_name(field) if field is not None else None
            if name is not None:
                found.append(self._named(node, name, first_row, source))
            for child in node.children:
                part, inner = self.collect(child, source)
                parts.append(part)
                shift = child.start_point[0] - first_row
                found.extend(_Found(f.name, f.header, f.row + shift) for f in inner.found)
        self.fresh[key] = chunk = _Chunk(found, tuple(parts))
        return key, chunk

    def top(self, node: tree_sitter.Node, block: Block) -> _Top:
        key, chunk = self.collect(node, block.source)
        return _Top(
            key,
            node.start_byte + block.byte,
            node.end_byte + block.byte,
            node.start_point[0] + block.row,
            chunk.found,
        )


def definitions_incremental(
    syntax: tree_sitter.Tree | Outline,
    language_id: str,
    deadline: float,
    cache: DefinitionCache,
    changes: EditLog | None = None,
) -> Mapping[str, list[Definition]]:
    """Every named definition in `syntax` (a document's tree or outline), by name, reusing
    what `cache` holds.

    With `changes` (the log of the document `syntax` is the parse of), only the top-level
    subtrees around the edits since the last call are visited. A pass cut short by the
    deadline returns nothing but keeps the subtrees it searched, so that the next call goes
    on from there: under load, each call finishes a part of the work instead of redoing the
    same part and giving up every time.
    """
    if definition_query(language_id) is None or time.perf_counter() > deadline:
        return EMPTY
    search = _Search(language_id, deadline, cache)
    outline = outline_of(syntax)
    root = outline.root
    try:
        if root is not None and (
            root.end_byte - root.start_byte <= CHUNK_BYTES or search.kinds.get(root.type)
        ):
            _whole(search, root, outline.source)
        elif (
            changes is None
            or cache.generation is None
            or cache.updates >= FULL_PASS_EVERY
            or not _update(search, outline, changes)
        ):
            _complete(search, outline)
    except _DeadlinePassed:
        # Keys are content: anything found stays true for the next call.
        cache.chunks.update(search.fresh)
        return EMPTY
    if changes is not None:
        cache.generation = changes.generation
    return FileDefinitions(cache)


def _index(cache: DefinitionCache, tops: list[_Top]) -> None:
    for top in tops:
        for at, found in enumerate(top.found):
            cache.by_name.setdefault(found.name, []).append((top, at))
            cache.unsorted.add(found.name)


def _whole(search: _Search, root: tree_sitter.Node, source: bytes) -> None:
    """A small document (or one whose root is a definition): one subtree."""
    _replace(search, [search.top(root, Block(source, ()))])


def _complete(search: _Search, outline: Outline) -> None:
    _replace(search, [search.top(node, block) for node, block in outline])


def _replace(search: _Search, tops: list[_Top]) -> None:
    cache = search.cache
    cache.chunks = search.fresh  # what the text no longer holds is dropped
    cache.tops = tops
    cache.by_name = {}
    cache.unsorted = set()
    cache.updates = 0
    _index(cache, tops)


def _update(search: _Search, outline: Outline, changes: EditLog) -> bool:
    """Bring the cache up to date around the span changed since its generation; False
    when that is not possible (the log moved on, or the tree changed shape elsewhere)."""
    cache = search.cache
    assert cache.generation is not None
    span = changes.since(cache.generation)
    if span is None:
        return False
    if cache.generation == changes.generation:
        return True  # no edit since
    tops = cache.tops
    # Kept as they are: the subtrees ending before the span; kept but moved: those
    # starting after it (in the old text, it ended at span.end - span.delta).
    first = bisect.bisect_left(tops, span.start, key=lambda top: top.end)
    after = bisect.bisect_right(tops, span.end - span.delta, key=lambda top: top.start)
    after = max(after, first)
    try:
        middle, rows = _middle(search, outline, tops, first, after, span.delta)
    except _Restructured:
        return False
    for top in tops[first:after]:
        for at, found in enumerate(top.found):
            pairs = cache.by_name[found.name]
            pairs.remove((top, at))
            if not pairs:
                del cache.by_name[found.name]
    for top in tops[after:]:
        top.start += span.delta
        top.end += span.delta
        top.row += rows
    cache.tops = [*tops[:first], *middle, *tops[after:]]
    _index(cache, middle)
    cache.chunks.update(search.fresh)
    cache.updates += 1
    return True


def _same(found: Top | None, top: _Top, delta: int = 0) -> bool:
    if found is None:
        return False
    node, block = found
    return (
        node.type == top.key[0]
        and node.start_byte + block.byte == top.start + delta
        and node.end_byte + block.byte == top.end + delta
    )


def _middle(
    search: _Search,
    outline: Outline,
    tops: list[_Top],
    first: int,
    after: int,
    delta: int,
) -> tuple[list[_Top], int]:
    """The top-level subtrees between the kept ones, searched; and how many rows the ones
    after moved. Raises _Restructured unless the kept ones are where they should be."""
    count = len(outline)
    if first > 0 and (first > count or not _same(outline.at(first - 1), tops[first - 1])):
        raise _Restructured
    stop = tops[after].start + delta if after < len(tops) else None
    low = tops[first - 1].end if first > 0 else 0
    middle: list[_Top] = []
    index = outline.first_ending_after(low)
    found: Top | None = None
    if index is not None:
        if index != first:
            raise _Restructured
        while index < count:
            node, block = found = outline.at(index)
            start = node.start_byte + block.byte
            if stop is not None and start >= stop:
                break
            if start < low or (stop is not None and node.end_byte + block.byte > stop):
                raise _Restructured
            middle.append(search.top(node, block))
            index += 1
        else:
            found = None
    if count != first + len(middle) + len(tops) - after:
        raise _Restructured
    if stop is None:
        return middle, 0
    if found is None or not _same(found, tops[after], delta):
        raise _Restructured
    node, block = found
    return middle, node.start_point[0] + block.row - tops[after].row
