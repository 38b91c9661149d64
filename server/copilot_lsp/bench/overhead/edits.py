"""The document `bench overhead` edits and the edits it sends, one class of edit at a time.

Each class starts from the file `large_file` builds; the same seeded sequence of edits goes to
every server. A step is one didChange (a range of the text before it replaced, or the whole
text) and the cursor of the completion asked for right after it. Classes:

* char         one character typed per round into a comment that grows on one line (the one
               class `bench overhead` had before: its rows compare with older reports)
* typing       `value = compute(items, 3)` typed a character per round on a new line after a
               random statement, brackets paired as editors pair them (opening the new line
               and taking the statement out again afterwards are steps not measured)
* enter        a line break with the line's indentation at the end of a random line; the
               completion is on the new line
* delete_line  a blank line or a statement (not a block's first) deleted; the completion at the
               end of the line above
* paste        a block of whole definitions (20 lines or a few more) pasted before a top-level
               statement, the completion after it (the block is taken out again, not measured,
               so the file keeps its size)
* undo_range   a large change and its undo as range edits: 200 lines of whole definitions cut,
               then put back (both measured)
* undo_full    the same as whole-document replacements (an editor that sends the full text)

After each measured step the file has no syntax error but in two rounds of each statement of
`typing` (`value =` and `value = ` before the right-hand side); `typing_unpaired` (on request
only) types without paired brackets, so that from `(` to `)` the line has an error.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

LINES = 5_000
CLASSES = ("char", "typing", "enter", "delete_line", "paste", "undo_range", "undo_full")
"""Every class, in the order a run takes them (the default: all)."""
EXTRA_CLASSES = ("typing_unpaired",)
DESCRIPTIONS = {
    "char": "a character typed into a comment on one line",
    "typing": "a statement typed a character at a time on a new line, brackets paired",
    "typing_unpaired": "a statement typed a character at a time on a new line",
    "enter": "a line break at the end of a line, the completion on the new line",
    "delete_line": "a line deleted, the completion at the end of the line above",
    "paste": "20-odd lines of whole definitions pasted, the completion after them",
    "undo_range": "200-odd lines cut, then put back (range edits)",
    "undo_full": "200-odd lines cut, then put back (the whole text sent each time)",
}
"""A line for each class, for the report."""
TYPED = "value = compute(items, 3)"
"""What `typing` writes, one character per round, on a new line at a random place."""
CLOSERS = {"(": ")", "[": "]", "{": "}"}
BLOCK = 20
"""Lines `paste` pastes, at least (whole definitions)."""
LARGE = 200
"""Lines the undo classes cut and put back, at least (whole definitions)."""
CHAR_ANCHOR = "    records = build_0(sys.argv[1:])"
"""`char` types on the (blank) line after this one, in main(), near the end of the file."""


def large_file(lines: int = LINES) -> str:
    """A plausible Python module of about `lines` lines: classes with methods, functions that
    call each other, imports on top (deterministic)."""
    out = ["import os", "import sys", "from dataclasses import dataclass", ""]
    index = 0
    while len(out) < lines - 12:
        out += [
            "",
            "@dataclass",
            f"class Record{index}:",
            f'    """Record number {index}."""',
            "",
            "    name: str",
            "    count: int = 0",
            "",
            "    def total(self, factor: int) -> int:",
            f"        value = self.count * factor + {index}",
            "        if value > 100:",
            "            return value - 100",
            "        return value",
            "",
            "",
            f"def build_{index}(items: list[str]) -> list[Record{index}]:",
            f"    records = [Record{index}(name, len(name)) for name in items]",
            "    records.sort(key=lambda record: record.count)",
            f"    return records  # built by build_{index}",
        ]
        index += 1
    out += ["", "", "def main() -> None:", CHAR_ANCHOR, "    "]
    out += ["    print(records)", "", "", 'if __name__ == "__main__":', "    main()", ""]
    return "\n".join(out)


@dataclass(frozen=True)
class Step:
    """One edit (the range `start`-`end` of the text before it replaced by `text`, or the
    whole text when `start` is None) and the cursor of the completion after it; positions are
    (line, character), zero-based (the file is ASCII: characters are UTF-16 units too)."""

    text: str
    start: tuple[int, int] | None
    end: tuple[int, int] | None
    cursor: tuple[int, int]
    measured: bool = True


class Shadow:
    """The document's text as the editor holds it, to place each step's edit."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def apply(self, step: Step) -> None:
        if step.start is None or step.end is None:
            self.lines = step.text.split("\n")
            return
        (l0, c0), (l1, c1) = step.start, step.end
        head, tail = self.lines[l0][:c0], self.lines[l1][c1:]
        self.lines[l0 : l1 + 1] = (head + step.text + tail).split("\n")


def content_change(step: Step) -> dict[str, Any]:
    """The step as an LSP content change (JSON)."""
    if step.start is None or step.end is None:
        return {"text": step.text}
    (l0, c0), (l1, c1) = step.start, step.end
    return {
        "range": {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}},
        "text": step.text,
    }


def plan(kind: str, count: int, warmup: int, seed: int) -> list[Step]:
    """The steps of `kind`: `warmup` measured-class steps marked unmeasured, then `count`
    measured ones, with the unmeasured steps between them."""
    if kind not in CLASSES + EXTRA_CLASSES:
        raise ValueError(f"unknown class of edit: {kind}")
    shadow = Shadow(large_file())
    out: list[Step] = []
    seen = 0
    for step in steps(kind, shadow, random.Random(f"{seed}-{kind}")):
        if seen >= warmup + count:
            break
        shadow.apply(step)
        out.append(replace(step, measured=step.measured and seen >= warmup))
        seen += step.measured
    return out


def steps(kind: str, shadow: Shadow, rng: random.Random) -> Iterator[Step]:
    """The edits of one class, forever; each is applied to `shadow` before the next is made."""
    if kind == "char":
        yield from _char(shadow)
    while True:
        lines = shadow.lines
        line = rng.randrange(20, len(lines) - LARGE - 20)
        if kind in ("typing", "typing_unpaired"):
            yield from _typing(shadow, line, paired=kind == "typing")
        elif kind == "enter":
            end, indent = len(lines[line]), _indent(lines[line])
            yield Step("\n" + indent, (line, end), (line, end), (line + 1, len(indent)))
        elif kind == "delete_line":
            while not _deletable(lines, line):
                line += 1
            above = len(lines[line - 1])
            yield Step("", (line, 0), (line + 1, 0), (line - 1, above))
        elif kind == "paste":
            yield from _paste(shadow, line, rng.randrange(20, len(lines) - LARGE - 20))
        elif kind in ("undo_range", "undo_full"):
            yield from _cut_and_undo(shadow, line, whole=kind == "undo_full")


def _char(shadow: Shadow) -> Iterator[Step]:
    """`# ` (not measured), then an `x` a round after it, on the blank line in main()."""
    line = shadow.lines.index(CHAR_ANCHOR) + 1
    yield Step("# ", (line, 4), (line, 4), (line, 6), measured=False)
    column = 6
    while True:
        yield Step("x", (line, column), (line, column), (line, column + 1))
        column += 1


def _typing(shadow: Shadow, line: int, paired: bool) -> Iterator[Step]:
    """A new line after the first statement from `line` on (not a decorator: nothing may come
    between it and its definition), `TYPED` typed into it a character per step (with `paired`,
    an opening bracket brings its closer and typing the closer only moves the cursor), then
    the line taken out again."""
    lines = shadow.lines
    while not lines[line].strip() or lines[line].startswith("@"):
        line += 1
    end, indent = len(lines[line]), _indent(lines[line])
    yield Step("\n" + indent, (line, end), (line, end), (line + 1, len(indent)), False)
    written = ""
    for char in TYPED:
        column = len(indent) + len(written)
        written += char
        if paired and char in CLOSERS.values():
            continue  # typed over the closer the editor inserted
        text = char + CLOSERS[char] if paired and char in CLOSERS else char
        at = (line + 1, column)
        yield Step(text, at, at, (line + 1, column + 1))
    typed_end = (line + 1, len(indent) + len(TYPED))
    yield Step("", (line, end), typed_end, (line, end), False)


def _paste(shadow: Shadow, line: int, source: int) -> Iterator[Step]:
    """The whole definitions from the first top-level line at `source` on (`BLOCK` lines or a
    few more) pasted before the first top-level line at `line` on; then taken out again (an
    undo, not measured)."""
    lines = shadow.lines
    top = _next_top_level(lines, line)
    source = _next_top_level(lines, source)
    block = "\n".join(lines[source : _units(lines, source, BLOCK)]) + "\n"
    pasted = block.count("\n")
    yield Step(block, (top, 0), (top, 0), (top + pasted, 0))
    above = len(lines[top - 1])
    yield Step("", (top, 0), (top + pasted, 0), (top - 1, above), False)


def _cut_and_undo(shadow: Shadow, line: int, whole: bool) -> Iterator[Step]:
    """The whole definitions from the first top-level line at `line` on (`LARGE` lines or a
    few more) cut, then put back: as range edits, or with `whole` as whole-text replacements."""
    lines = shadow.lines
    top = _next_top_level(lines, line)
    end = _units(lines, top, LARGE)
    above = len(lines[top - 1])
    if whole:
        before = shadow.text
        yield Step("\n".join(lines[:top] + lines[end:]), None, None, (top - 1, above))
        yield Step(before, None, None, (end, 0))
    else:
        block = "\n".join(lines[top:end]) + "\n"
        yield Step("", (top, 0), (end, 0), (top - 1, above))
        yield Step(block, (top, 0), (top, 0), (end, 0))


def _indent(line: str) -> str:
    """The indentation of a line typed after `line`."""
    indent = line[: len(line) - len(line.lstrip())]
    return indent + "    " if line.rstrip().endswith(":") else indent


def _top_level(line: str) -> bool:
    """A line that starts a top-level statement (this file has no top-level comments)."""
    return bool(line) and not line[0].isspace()


def _next_top_level(lines: list[str], line: int) -> int:
    while not _top_level(lines[line]):
        line += 1
    return line


def _deletable(lines: list[str], index: int) -> bool:
    """Deleting the line leaves valid code: a blank line, or a statement that neither opens a
    block nor is the first of one."""
    line, above = lines[index], lines[index - 1]
    if not line.strip():
        return True
    indent = len(line) - len(line.lstrip())
    return (
        indent > 0
        and not line.rstrip().endswith(":")
        and not above.rstrip().endswith(":")
        and len(above) - len(above.lstrip()) == indent
    )


def _units(lines: list[str], start: int, at_least: int) -> int:
    """The first top-level line at least `at_least` lines after `start` (or the end)."""
    end = start + at_least
    while end < len(lines) and not _top_level(lines[end]):
        end += 1
    return end
