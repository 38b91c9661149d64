"""A document's top-level syntax nodes, as the prompt reads them.

An `Outline` is a document's top-level nodes in order, each with the bytes it was parsed from
and where that parse sits in the document. It is either one parse of the whole text (`root`
set: every node as tree-sitter gives it, errors included) or, for a Python text without
syntax errors, assembled from parses of its parts, which `forest.py` keeps current edit by
edit. Either way it is what a parse of the whole text gives.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

Top = tuple[tree_sitter.Node, "Block"]
"""A top-level node and the block it is in (which places it in the document)."""


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
    tree: tree_sitter.Tree | None = None
    """The parse the nodes are all the top-level nodes of (of `source` whole), which an edit
    inside the block may re-parse incrementally; None once the block is cut."""

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
        return Block(
            self.source, self.nodes, self.byte + delta, self.row + rows, self.kinds, self.tree
        )

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
    blocks = (Block(source, nodes, tree=tree),) if nodes else ()
    split = split and not root.has_error
    return Outline(blocks, len(source), root=root, source=source, split=split)


def tree_source(tree: tree_sitter.Tree) -> bytes:
    """Bytes that node positions of `tree` index into, as far as its root reaches.

    Not the root's text: that starts at the first token, after any leading blank lines, so
    that slicing it at a node's `start_byte` would be off by as many bytes."""
    root = tree.root_node
    return b"\0" * root.start_byte + (root.text or b"")
