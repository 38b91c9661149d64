"""Editing sessions cut from real code: the held-out side of the draft-training corpus.

The files are those `draft train` keeps out of training (draft/corpus.py: the SHA-256 of the
content decides, `heldout_percent` 5 as in training), so no draft head has seen them. Each
session removes a span from one file and has the user type it back:

* `write`: a whole function (3-12 lines), typed top to bottom on the empty line where it
  was; the code below it stays.
* `hole`: one simple statement between two statements of the same block at the same
  indentation, typed on its emptied (indented) line.
* `edit`: the right-hand part of a statement inside a nested block (after ` = `, the first
  `(` or `return `), typed with the bracket that closes that `(` already right of the cursor
  (the editor's auto-pairing put it there).

Choice and order are decided by the seed alone, so every arm of a run (and every run with
the same seed on the same Python) replays the same sessions.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from copilot_lsp.client.replay.session import KINDS, Kind, Session
from copilot_lsp.draft import corpus
from copilot_lsp.errors import ConfigError

HELDOUT_PERCENT = 5
"""The split `draft train` uses (TrainOptions.heldout_percent)."""

_WRITE_LINES = (3, 12)
_WRITE_MAX_CHARS = 260
_HOLE_CHARS = (8, 90)
_EDIT_CHARS = (6, 80)
MAX_PACKAGE_FILES = 120
"""Larger packages are not copied into a replay's workspace (its index would take long)."""


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int


class _Lines:
    """Offsets of the lines of `text` (split on `\\n` only, like ast and the LSP for these
    files: files with `\\r` are skipped)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.starts.append(index + 1)

    def line(self, number: int) -> str:
        """1-based line `number` without its newline."""
        start = self.starts[number - 1]
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else len(self.text)]

    def offset(self, number: int, column: int) -> int:
        return self.starts[number - 1] + column

    def end_of(self, number: int) -> int:
        return self.starts[number - 1] + len(self.line(number))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _bodies(node: ast.AST, depth: int = 0) -> Iterator[tuple[list[ast.stmt], int]]:
    """Every statement list under `node` with its nesting depth (a function's body is 0)."""
    for name in ("body", "orelse", "finalbody"):
        body = getattr(node, name, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            yield body, depth
            for child in body:
                if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    yield from _bodies(child, depth + 1)
    for handler in getattr(node, "handlers", []) or []:
        yield from _bodies(handler, depth + 1)


def _simple(statement: ast.stmt) -> bool:
    return not hasattr(statement, "body") and statement.lineno == statement.end_lineno


def _whole_line(lines: _Lines, statement: ast.stmt) -> bool:
    """The statement is all its line holds (no `;`, no trailing comment)."""
    line = lines.line(statement.lineno)
    return statement.col_offset == _indent(line) and statement.end_col_offset == len(line.rstrip())


def write_spans(tree: ast.AST, lines: _Lines) -> Iterator[_Span]:
    for function in _functions(tree):
        end = function.end_lineno or function.lineno
        if not _WRITE_LINES[0] <= end - function.lineno + 1 <= _WRITE_LINES[1]:
            continue
        start = lines.offset(function.lineno, function.col_offset)
        span = _Span(start, lines.end_of(end))
        if span.end - span.start <= _WRITE_MAX_CHARS:
            yield span


def hole_spans(tree: ast.AST, lines: _Lines) -> Iterator[_Span]:
    for function in _functions(tree):
        for body, _ in _bodies(function):
            for before, statement, after in zip(body, body[1:], body[2:], strict=False):
                if not (_simple(statement) and _whole_line(lines, statement)):
                    continue
                if after.lineno != statement.lineno + 1 or before.col_offset != after.col_offset:
                    continue  # "code right below at the same indentation"
                start = lines.offset(statement.lineno, statement.col_offset)
                span = _Span(start, lines.end_of(statement.lineno))
                if _HOLE_CHARS[0] <= span.end - span.start <= _HOLE_CHARS[1]:
                    yield span


def edit_spans(tree: ast.AST, lines: _Lines) -> Iterator[_Span]:
    for function in _functions(tree):
        for body, depth in _bodies(function):
            if depth < 1:
                continue
            for statement in body:
                if not (_simple(statement) and _whole_line(lines, statement)):
                    continue
                line = lines.line(statement.lineno)
                code = line[statement.col_offset :]
                cut = _cut(code)
                if cut is None:
                    continue
                typed = _typed_part(code, cut)
                if typed is None:
                    continue
                if not _EDIT_CHARS[0] <= len(typed) <= _EDIT_CHARS[1]:
                    continue
                start = lines.offset(statement.lineno, statement.col_offset + cut)
                yield _Span(start, start + len(typed))


def _cut(code: str) -> int | None:
    """Where the user starts retyping: after ` = `, the first `(`, or `return `."""
    for marker in (" = ", "("):
        at = code.find(marker)
        if at > 0:
            return at + len(marker)
    if code.startswith("return "):
        return len("return ")
    return None


def _typed_part(code: str, cut: int) -> str | None:
    """What the user types from `cut`: after an opening bracket, everything up to the bracket
    that closes it (the editor's auto-pairing put that one there already)."""
    typed = code[cut:]
    if code[cut - 1] != "(":
        return typed
    if not typed.endswith(")") or not _balanced(typed[:-1]):
        return None
    return typed[:-1]


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth < 0:
            return False
    return depth == 0


_FINDERS = {"write": write_spans, "hole": hole_spans, "edit": edit_spans}


def _usable(text: str, span: _Span) -> bool:
    """The typed text and the cursor's line are ASCII: LSP columns equal string columns."""
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    return text[line_start : line_end if line_end >= 0 else len(text)].isascii() and bool(
        text[span.start : span.end].strip()
    )


def candidates(text: str, kind: Kind) -> list[_Span]:
    """Spans of `kind` in the Python source `text` (none if it does not parse)."""
    if "\r" in text or "\t" in text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = _Lines(text)
    return [span for span in _FINDERS[kind](tree, lines) if _usable(text, span)]


def heldout_files(roots: Sequence[str]) -> list[corpus.SourceFile]:
    """The corpus files `draft train` holds out, in content-hash order."""
    return split_files(corpus.collect(corpus.resolve_roots(list(roots))), "heldout")


def split_files(files: Iterable[corpus.SourceFile], split: corpus.Split) -> list[corpus.SourceFile]:
    """The files of one side of `draft train`'s split, in their order."""
    return [source for source in files if source.split(HELDOUT_PERCENT) == split]


def package_of(path: Path) -> Path | None:
    """The outermost package folder holding `path` (folders with `__init__.py` up from its
    own), when it has at most `MAX_PACKAGE_FILES` Python files; else None."""
    found = None
    folder = path.parent
    while (folder / "__init__.py").is_file():
        found = folder
        folder = folder.parent
    if found is None:
        return None
    for count, _ in enumerate(found.rglob("*.py"), 1):
        if count > MAX_PACKAGE_FILES:
            return None
    return found


def pick_sessions(
    files: Iterable[corpus.SourceFile],
    per_kind: int,
    seed: int,
    kinds: Sequence[Kind] = KINDS,
    *,
    packaged: bool = False,
) -> list[Session]:
    """`per_kind` sessions of each kind, at most one per file and kind, chosen by `seed`;
    ordered kind by kind, interleaved (write, hole, edit, write, …). `packaged`: only files
    of a package (`package_of`), which the replay copies into the workspace."""
    pool = list(files)
    random.Random(f"replay-files:{seed}").shuffle(pool)
    chosen: dict[Kind, list[Session]] = {kind: [] for kind in kinds}
    for source in pool:
        if all(len(found) >= per_kind for found in chosen.values()):
            break
        package = package_of(source.path) if packaged else None
        if packaged and package is None:
            continue
        text = corpus.read_text(source)
        if text is None:
            continue
        for kind in kinds:
            if len(chosen[kind]) >= per_kind:
                continue
            spans = candidates(text, kind)
            if not spans:
                continue
            span = random.Random(f"replay-span:{seed}:{source.digest}:{kind}").choice(spans)
            chosen[kind].append(_session(kind, source, text, span, package))
    short = [kind for kind in kinds if len(chosen[kind]) < per_kind]
    if short:
        raise ConfigError(
            f"these corpus files have too few places for {', '.join(short)} sessions "
            f"({per_kind} each wanted); add corpus roots"
        )
    return [chosen[kind][index] for index in range(per_kind) for kind in kinds]


def _session(
    kind: Kind, source: corpus.SourceFile, text: str, span: _Span, package: Path | None = None
) -> Session:
    line = text.count("\n", 0, span.start) + 1
    return Session(
        id=f"{kind}-{source.digest[:8]}-{line}",
        kind=kind,
        path=_display(source)
        if package is None
        else source.path.relative_to(package.parent).as_posix(),
        before=text[: span.start],
        target=text[span.start : span.end],
        after=text[span.end :],
        package=str(package) if package is not None else None,
    )


def _display(source: corpus.SourceFile) -> str:
    parts = source.path.parts
    for anchor in ("site-packages", "dist-packages"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor) + 1 :])
    for index in range(len(parts) - 1, -1, -1):
        if parts[index].startswith("python3"):
            return "/".join(parts[index + 1 :])
    return source.path.name
