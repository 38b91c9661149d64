"""A document's top-level syntax nodes, and how Python's are kept current part by part.

An `Outline` is what the prompt reads from a document's syntax: its top-level nodes in order,
each with the bytes it was parsed from and where that parse sits in the document. It is either
one parse of the whole text (`root` set: every node as tree-sitter gives it, errors included)
or, for a Python text without syntax errors, assembled from parses of its parts.

Why parts: tree-sitter re-parses incrementally, but with the Python grammar an edit that
re-lexes the end of an indented top-level block (a line added at the end of a function, or
between two functions) makes it re-lex the rest of the file, edit after edit: the reusable
subtree after the block is refused (its last external token, the block's zero-width dedent,
is not lexed yet when the parser reaches it) and skipped whole. On a 5,000-line file that is
20-30 ms per keystroke. A `Forest` re-parses only the top-level statements an edit touched,
as a text of their own, and keeps every other one as it was, moved.

That is the same tree a parse of the whole text gives when the text has no syntax error: a
Python top-level statement that starts at column 0 after a complete one is parsed from the
same state (no open bracket or string, no indentation), and parses the same, with or without
the text around it. The forest holds on to that case only: the part re-parsed must have no
error, begin at column 0 after whole lines and end before a statement at column 0; otherwise
it takes in the statement next to it and tries again, and a part with an error gives up (the
caller parses the whole text, as before: where errors recover depends on what follows).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

Top = tuple[tree_sitter.Node, "Block"]
"""A top-level node and the block it is in (which places it in the document)."""

WIDEN_LIMIT = 64
"""Neighbouring statements a part may take in before the whole text is parsed instead."""


@dataclass(frozen=True, slots=True)
class Block:
    """Consecutive top-level nodes of one parse, placed in the document: a node's document
    byte is its `start_byte` + `byte`, its document row its row + `row`."""

    source: bytes
    """The bytes the nodes were parsed from: their positions index into them."""
    nodes: tuple[tree_sitter.Node, ...]
    byte: int = 0
    row: int = 0
    kinds: tuple[str, ...] = ()
    """The nodes' types (read once: each `Node.type` makes a new string)."""

    def __post_init__(self) -> None:
        if len(self.kinds) != len(self.nodes):
            object.__setattr__(self, "kinds", tuple(node.type for node in self.nodes))

    @property
    def start(self) -> int:
        return self.nodes[0].start_byte + self.byte

    @property
    def end(self) -> int:
        return self.nodes[-1].end_byte + self.byte

    def moved(self, delta: int, rows: int) -> Block:
        if not delta and not rows:
            return self
        return Block(self.source, self.nodes, self.byte + delta, self.row + rows, self.kinds)

    def part(self, start: int, stop: int | None = None) -> Block:
        """The block of `nodes[start:stop]`."""
        return Block(
            self.source, self.nodes[start:stop], self.byte, self.row, self.kinds[start:stop]
        )

    def first_ending_at_or_after(self, byte: int) -> int:
        return bisect.bisect_left(self.nodes, byte - self.byte, key=_end)

    def first_starting_after(self, byte: int) -> int:
        return bisect.bisect_right(self.nodes, byte - self.byte, key=_start)


def _start(node: tree_sitter.Node) -> int:
    return node.start_byte


def _end(node: tree_sitter.Node) -> int:
    return node.end_byte


class Outline:
    """A document's top-level nodes, in order, as of one version of its text."""

    __slots__ = ("_counts", "blocks", "length", "root", "source", "split")

    def __init__(
        self,
        blocks: tuple[Block, ...],
        length: int,
        *,
        root: tree_sitter.Node | None = None,
        source: bytes = b"",
        split: bool = False,
    ) -> None:
        self.blocks = blocks
        self.length = length
        """The text's length in bytes."""
        self.root = root
        """The root node when the outline is one parse of the whole text; None otherwise."""
        self.source = source
        """The bytes `root` was parsed from."""
        self.split = split
        """Whether the text may be parsed in parts (a Python text without syntax errors): a
        `Forest` may start from this outline."""
        counts = [0]
        for block in blocks:
            counts.append(counts[-1] + len(block.nodes))
        self._counts = counts

    def __len__(self) -> int:
        return self._counts[-1]

    def __iter__(self) -> Iterator[Top]:
        for block in self.blocks:
            for node in block.nodes:
                yield node, block

    def at(self, index: int) -> Top:
        position = bisect.bisect_right(self._counts, index) - 1
        block = self.blocks[position]
        return block.nodes[index - self._counts[position]], block

    def first_ending_after(self, byte: int) -> int | None:
        """The index of the first node ending after `byte` (None: none does)."""
        position = bisect.bisect_right(self.blocks, byte, key=lambda block: block.end)
        if position == len(self.blocks):
            return None
        block = self.blocks[position]
        inner = bisect.bisect_right(block.nodes, byte - block.byte, key=_end)
        return self._counts[position] + inner

    def descendant_at(self, byte: int) -> tuple[tree_sitter.Node, Block] | None:
        """The smallest node around `byte`, as tree-sitter's `descendant_for_byte_range` finds
        it from the root (None: between top-level nodes, where it finds the root itself)."""
        if self.root is not None:
            found = self.root.descendant_for_byte_range(byte, byte)
            return None if found is None else (found, Block(self.source, ()))
        position = bisect.bisect_right(self.blocks, byte, key=lambda block: block.end)
        if position == len(self.blocks) or self.blocks[position].start > byte:
            return None
        block = self.blocks[position]
        inner = bisect.bisect_right(block.nodes, byte - block.byte, key=_end)
        node = block.nodes[inner]
        if node.start_byte + block.byte > byte:
            return None
        relative = byte - block.byte
        found = node.descendant_for_byte_range(relative, relative)
        return None if found is None else (found, block)


def whole(tree: tree_sitter.Tree, source: bytes | None = None, *, split: bool = False) -> Outline:
    """The outline of one parse of a whole text (`source`: the bytes parsed, when known;
    `split`: the language's texts may be parsed in parts, which this one may be if it has no
    syntax error)."""
    root = tree.root_node
    nodes = tuple(root.children)
    source = tree_source(tree) if source is None else source
    blocks = (Block(source, nodes),) if nodes else ()
    split = split and not root.has_error
    return Outline(blocks, len(source), root=root, source=source, split=split)


def tree_source(tree: tree_sitter.Tree) -> bytes:
    """Bytes that node positions of `tree` index into, as far as its root reaches.

    Not the root's text: that starts at the first token, after any leading blank lines, so
    that slicing it at a node's `start_byte` would be off by as many bytes."""
    root = tree.root_node
    return b"\0" * root.start_byte + (root.text or b"")


@dataclass(frozen=True, slots=True)
class _Hole:
    """Bytes [start, end] of the current text whose top-level nodes must be parsed again."""

    start: int
    end: int


class Forest:
    """An error-free Python document's top-level nodes, as blocks of parses and the holes
    that edits left in them until the next `resolve`."""

    def __init__(self, outline: Outline) -> None:
        assert outline.split, "an outline that may be parsed in parts"
        self._items: list[Block | _Hole] = list(outline.blocks)
        self._length = outline.length

    def edit(self, start: int, old_end: int, new_end: int, rows: int) -> None:
        """Bytes [start, old_end) became [start, new_end), with `rows` more line breaks: the
        nodes touching them leave a hole, the ones after move."""
        delta = new_end - old_end
        before: list[Block | _Hole] = []
        after: list[Block | _Hole] = []
        low, high = start, old_end
        for item in self._items:
            if isinstance(item, _Hole):
                if item.end < start:
                    before.append(item)
                elif item.start > old_end:
                    after.append(_Hole(item.start + delta, item.end + delta))
                else:
                    low, high = min(low, item.start), max(high, item.end)
                continue
            if item.end < start:
                before.append(item)
                continue
            if item.start > old_end:
                after.append(item.moved(delta, rows))
                continue
            first = item.first_ending_at_or_after(start)
            last = item.first_starting_after(old_end)
            if first > 0:
                before.append(item.part(0, first))
            if first < last:
                low = min(low, item.nodes[first].start_byte + item.byte)
                high = max(high, item.nodes[last - 1].end_byte + item.byte)
            if last < len(item.nodes):
                after.append(item.part(last).moved(delta, rows))
        self._items = [*before, _Hole(low, high + delta), *after]
        self._length += delta

    def resolve(self, parser: tree_sitter.Parser, source: bytes) -> list[tuple[int, int]] | None:
        """Parse again what the holes cover (`source`: the current text); the byte ranges
        parsed, or None when a part has a syntax error (the forest is then of no use)."""
        parsed: list[tuple[int, int]] = []
        while True:
            holes = [i for i, item in enumerate(self._items) if isinstance(item, _Hole)]
            if not holes:
                return parsed
            region = self._fill(holes[-1], parser, source)
            if region is None:
                return None
            parsed.append(region)

    def outline(self) -> Outline:
        blocks = tuple(item for item in self._items if isinstance(item, Block))
        assert len(blocks) == len(self._items), "resolve first"
        return Outline(blocks, self._length, split=True)

    def _fill(
        self, index: int, parser: tree_sitter.Parser, source: bytes
    ) -> tuple[int, int] | None:
        """Parse the hole at `index` with as many neighbours as it takes to start after whole
        lines and end before a statement at column 0; replace it with the parse."""
        items = self._items
        hole = items[index]
        assert isinstance(hole, _Hole)
        low = hole.start
        for _ in range(WIDEN_LIMIT):
            index, low = self._merge_holes(index, low)
            previous = items[index - 1] if index > 0 else None
            following = items[index + 1] if index + 1 < len(items) else None
            assert not isinstance(previous, _Hole) and not isinstance(following, _Hole)
            start = row = 0
            if previous is not None:
                line_break = source.find(b"\n", previous.end)
                if line_break < 0 or line_break >= low:
                    # The hole begins on the line the node before it ends on.
                    index, low = self._take_last(index)
                    continue
                start = line_break + 1
                row = previous.nodes[-1].end_point[0] + previous.row + 1
            end = len(source)
            if following is not None:
                first = following.nodes[0]
                end = first.start_byte + following.byte
                if first.is_extra or source.rfind(b"\n", 0, end) + 1 != end:
                    # A comment, or a statement not at the start of its line, is no boundary.
                    self._take_first(index)
                    continue
            region = source[start:end]
            tree = parser.parse(region)
            if tree.root_node.has_error:
                return None
            nodes = tuple(tree.root_node.children)
            if previous is not None and not _starts_at_column_0(nodes):
                # Indented lines first: in the whole text they continue the statement above.
                index, low = self._take_last(index)
                continue
            if nodes:
                items[index] = Block(region, nodes, start, row)
            else:
                del items[index]
            return start, end
        return None

    def _merge_holes(self, index: int, low: int) -> tuple[int, int]:
        """Holes next to the one at `index` (a block between them taken in) join it."""
        items = self._items
        while index > 0 and isinstance(before := items[index - 1], _Hole):
            low = min(low, before.start)
            del items[index - 1]
            index -= 1
        while index + 1 < len(items) and isinstance(items[index + 1], _Hole):
            del items[index + 1]
        return index, low

    def _take_last(self, index: int) -> tuple[int, int]:
        """The hole at `index` takes in the last node of the block before it: its new index
        and start."""
        previous = self._items[index - 1]
        assert isinstance(previous, Block)
        low = previous.nodes[-1].start_byte + previous.byte
        if len(previous.nodes) == 1:
            del self._items[index - 1]
            return index - 1, low
        self._items[index - 1] = previous.part(0, -1)
        return index, low

    def _take_first(self, index: int) -> None:
        """The hole at `index` takes in the first node of the block after it."""
        following = self._items[index + 1]
        assert isinstance(following, Block)
        if len(following.nodes) == 1:
            del self._items[index + 1]
        else:
            self._items[index + 1] = following.part(1)


def parses_cleanly(
    outline: Outline, parser: tree_sitter.Parser, source: bytes, start: int, end: int, new_end: int
) -> bool:
    """Whether `source` (the text of `outline` with bytes [start, end) become [start, new_end))
    has no syntax error, found by parsing the edited statements only; False also when that
    cannot tell (`outline` may not be parsed in parts, or they have an error: whether the
    whole text has one then depends on the rest of it)."""
    if not outline.split:
        return False
    forest = Forest(outline)
    forest.edit(start, end, new_end, 0)  # rows do not matter to the verdict
    return forest.resolve(parser, source) is not None


def _starts_at_column_0(nodes: tuple[tree_sitter.Node, ...]) -> bool:
    """The leading comments and the first statement start at column 0."""
    for node in nodes:
        if node.start_point[1] != 0:
            return False
        if not node.is_extra:
            return True
    return True
