"""Python's top-level statements kept current part by part, for the outline (outline.py).

Tree-sitter re-parses incrementally, but with the Python grammar an edit that re-lexes the
end of an indented top-level block (a line added at the end of a function, or between two
functions) makes it re-lex the rest of the file, edit after edit: the reusable subtree after
the block is refused (its last external token, the block's zero-width dedent, is not lexed
yet when the parser reaches it) and skipped whole. On a 5,000-line file that is 20-40 ms per
keystroke. A `Forest` re-parses only the top-level statements an edit touched, as a text of
their own (incrementally, from their own last parse, when the edit stayed inside them), and
keeps every other one as it was, moved.

That is the same tree a parse of the whole text gives when the text has no syntax error: a
Python top-level statement that starts at column 0 after a complete one is parsed from the
same state (no open bracket or string, no indentation), and parses the same, with or without
the text around it. The forest holds on to that case only: the part re-parsed must have no
error, begin at column 0 after whole lines and end before a statement at column 0; otherwise
it takes in the statement next to it and tries again, and a part with an error gives up (the
caller parses the whole text, as before: where errors recover depends on what follows).
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter

from copilot_lsp.context.outline import Block, Outline

WIDEN_LIMIT = 64
"""Neighbouring statements a part may take in before the whole text is parsed instead."""

Point = tuple[int, int]
_Edit = tuple[int, int, int, Point, Point, Point]
"""Bytes [start, old end) became [start, new end), with their (row, column) points."""


@dataclass(slots=True)
class _Origin:
    """The parse of a block that a hole replaced, and the edits made inside it since, in its
    own coordinates: the hole's text is parsed again reusing it."""

    tree: tree_sitter.Tree
    length: int
    """The length of its text, edits included."""
    byte: int
    row: int
    edits: list[_Edit]

    def add(
        self, start: int, old_end: int, new_end: int, points: tuple[Point, Point, Point]
    ) -> None:
        row, byte = self.row, self.byte
        start_point, old_end_point, new_end_point = ((point[0] - row, point[1]) for point in points)
        self.edits.append(
            (
                start - byte,
                old_end - byte,
                new_end - byte,
                start_point,
                old_end_point,
                new_end_point,
            )
        )
        self.length += new_end - old_end


@dataclass(slots=True)
class _Hole:
    """Bytes [start, end] of the current text whose top-level nodes must be parsed again."""

    start: int
    end: int
    origin: _Origin | None = None

    def moved(self, delta: int, rows: int) -> _Hole:
        if self.origin is not None:
            self.origin.byte += delta
            self.origin.row += rows
        return _Hole(self.start + delta, self.end + delta, self.origin)


class Forest:
    """An error-free Python document's top-level nodes, as blocks of parses and the holes
    that edits left in them until the next `resolve`."""

    def __init__(self, outline: Outline) -> None:
        assert outline.split, "an outline that may be parsed in parts"
        self._items: list[Block | _Hole] = list(outline.blocks)
        self._length = outline.length

    def edit(
        self, start: int, old_end: int, new_end: int, points: tuple[Point, Point, Point]
    ) -> None:
        """Bytes [start, old_end) became [start, new_end), with these (row, column) points:
        the nodes touching them leave a hole, the ones after move."""
        delta = new_end - old_end
        rows = points[2][0] - points[1][0]
        before: list[Block | _Hole] = []
        after: list[Block | _Hole] = []
        low, high = start, old_end
        touched: list[Block | _Hole] = []
        for item in self._items:
            if isinstance(item, _Hole):
                if item.end < start:
                    before.append(item)
                elif item.start > old_end:
                    after.append(item.moved(delta, rows))
                else:
                    low, high = min(low, item.start), max(high, item.end)
                    touched.append(item)
                continue
            if item.end < start or item.start > old_end:
                if (
                    item.tree is not None
                    and start <= item.byte + len(item.source)
                    and (old_end >= item.byte)
                ):
                    item = item.part(0)  # the lines around its nodes changed: not its parse
                if item.end < start:
                    before.append(item)
                else:
                    after.append(item.moved(delta, rows))
                continue
            first = item.first_ending_at_or_after(start)
            last = item.first_starting_after(old_end)
            touched.append(item if first == 0 and last == len(item.nodes) else item.part(0))
            if first > 0:
                before.append(item.part(0, first))
            if first < last:
                low = min(low, item.nodes[first].start_byte + item.byte)
                high = max(high, item.nodes[last - 1].end_byte + item.byte)
            if last < len(item.nodes):
                after.append(item.part(last).moved(delta, rows))
        self._items = [*before, _Hole(low, high + delta, _origin(touched)), *after]
        self._length += delta
        hole = self._items[len(before)]
        assert isinstance(hole, _Hole)
        if hole.origin is not None:
            hole.origin.add(start, old_end, new_end, points)

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
            old = _edited(hole.origin, start, end)
            tree = parser.parse(region) if old is None else parser.parse(region, old)
            if tree.root_node.has_error:
                return None
            nodes = tuple(tree.root_node.children)
            if previous is not None and not _starts_at_column_0(nodes):
                # Indented lines first: in the whole text they continue the statement above.
                index, low = self._take_last(index)
                continue
            if nodes:
                items[index] = Block(region, nodes, start, row, tree=tree)
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


def _origin(touched: list[Block | _Hole]) -> _Origin | None:
    """What an edit that touched these can be parsed again from: the parse of the one block
    it took all of (or of the hole such a block left), if it touched nothing else."""
    if len(touched) != 1:
        return None
    item = touched[0]
    if isinstance(item, _Hole):
        return item.origin
    if item.tree is None:
        return None
    return _Origin(item.tree, len(item.source), item.byte, item.row, [])


def _edited(origin: _Origin | None, start: int, end: int) -> tree_sitter.Tree | None:
    """The origin's parse edited as its text was, when [start, end) is all of that text
    (the hole took in no neighbour): the old tree to re-parse the hole's text with."""
    if origin is None or start != origin.byte or end - start != origin.length:
        return None
    tree = origin.tree.copy()
    for edit in origin.edits:
        tree.edit(*edit)
    return tree


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
    nowhere = (0, 0)  # positions do not matter to the verdict
    forest.edit(start, end, new_end, (nowhere, nowhere, nowhere))
    return forest.resolve(parser, source) is not None


def _starts_at_column_0(nodes: tuple[tree_sitter.Node, ...]) -> bool:
    """The leading comments and the first statement start at column 0."""
    for node in nodes:
        if node.start_point[1] != 0:
            return False
        if not node.is_extra:
            return True
    return True
